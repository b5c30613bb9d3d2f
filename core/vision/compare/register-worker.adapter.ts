// Registration on the second core: a worker thread runs the level stages (coarse + level-1 patch
// rounds, register.worker.ts) while the main thread packs B's ink masks, then the full-resolution round
// on the windows of the sheets it reads (compare-pipeline.adapter.ts, `registerInWorker`). Only the
// two ink levels (≈ 1.9 MB each at 200 DPI) and those windows (≈ 0.5 MB) cross the thread boundary:
// sharp's decoded buffers cannot be transferred (measured: posting one copies it, ~19 ms for 30 MB).
// One compare's worth of parallelism: in the service the job pool already spreads jobs over the
// cores, so this is for a single interactive compare (and the bench), off by default.
import { Worker } from 'node:worker_threads';
import type {
  InkLevel,
  LevelStage,
  PairSize,
  PatchWindows,
  RegisterOptions,
  Registration,
} from './register';
import type { RegisterWorkerRequest, RegisterWorkerResponse } from './register.worker';

/** The worker entry as TypeScript source (started through a tsx trampoline). */
export const REGISTER_WORKER_URL = new URL('./register.worker.ts', import.meta.url);
const BOOTSTRAP_URL = new URL('./register.worker-bootstrap.mjs', import.meta.url);

export interface RegisterWorker {
  /**
   * Hand over A's ink level early (no answer): the worker prepares A's part of the level stages while
   * B decodes. registerLevels with the same `la` object then does not send it again.
   */
  sendLevelA(la: InkLevel, options?: Omit<RegisterOptions, 'levels'>): void;
  /** Run registerLevels in the worker; resolves with its result (timings measured in the worker). */
  registerLevels(
    la: InkLevel,
    lb: InkLevel,
    size: PairSize,
    options?: Omit<RegisterOptions, 'levels'>,
  ): Promise<LevelStage>;
  /** Run refineFull in the worker on the windows extractPatchWindows cut for `stage`. */
  refineFull(
    a: PatchWindows,
    b: PatchWindows,
    stage: LevelStage,
    options?: Omit<RegisterOptions, 'levels'>,
  ): Promise<Registration>;
  /** Stop the worker (idempotent); a pending request is rejected. */
  close(): void;
}

/**
 * Start the worker now, so its start-up overlaps the decodes. `url`: the entry to run — the .ts
 * source by default; a bundled build passes its built register.worker file.
 */
export function startRegisterWorker(url: URL = REGISTER_WORKER_URL): RegisterWorker {
  const fromSource = url.pathname.endsWith('.ts');
  const worker = new Worker(fromSource ? BOOTSTRAP_URL : url, {
    workerData: { entry: url.href },
    // Flags of the parent (e.g. --inspect with a fixed port, --cpu-prof) are not inherited.
    execArgv: [],
  });
  let closed = false;
  let failure: Error | null = null;
  // One request at a time; `settle` answers it.
  let settle: { resolve: (r: RegisterWorkerResponse) => void; reject: (e: Error) => void } | null =
    null;
  const fail = (e: Error): void => {
    failure ??= e;
    settle?.reject(e);
    settle = null;
  };
  worker.on('error', (e) => fail(e));
  worker.on('exit', (code) => {
    if (!closed) fail(new Error(`Registration worker exited with code ${code}`));
  });
  worker.on('message', (m: RegisterWorkerResponse) => {
    if (m.kind === 'error') settle?.reject(new Error(m.message));
    else settle?.resolve(m);
    settle = null;
  });
  const request = (req: RegisterWorkerRequest): Promise<RegisterWorkerResponse> => {
    if (failure) return Promise.reject(failure);
    if (closed) return Promise.reject(new Error('Registration worker closed'));
    if (settle) return Promise.reject(new Error('Registration worker is busy'));
    return new Promise((resolve, reject) => {
      settle = { resolve, reject };
      worker.postMessage(req);
    });
  };
  let sentA: InkLevel | null = null;
  return {
    sendLevelA(la, options = {}) {
      if (failure || closed) return;
      sentA = la;
      const req: RegisterWorkerRequest = { kind: 'level-a', la, options };
      worker.postMessage(req);
    },
    async registerLevels(la, lb, size, options = {}) {
      const r = await request({
        kind: 'levels',
        ...(la === sentA ? {} : { la }),
        lb,
        size,
        options,
      });
      if (r.kind !== 'stage') throw new Error(`Registration worker answered ${r.kind}`);
      return r.stage;
    },
    async refineFull(a, b, stage, options = {}) {
      const r = await request({ kind: 'full', a, b, stage, options });
      if (r.kind !== 'result') throw new Error(`Registration worker answered ${r.kind}`);
      return r.registration;
    },
    close() {
      if (closed) return;
      closed = true;
      settle?.reject(new Error('Registration worker closed'));
      settle = null;
      void worker.terminate();
    },
  };
}
