// Registration in a worker thread (see register-worker.adapter.ts), in two requests, so no sheet is
// copied: 'levels' runs the level stages (coarse + level-1 patch rounds) on the two ink levels
// (≈ 1.9 MB each at 200 DPI, copied with the message) while the main thread packs B's masks; 'full'
// runs the full-resolution round on the small windows of both sheets it reads (extractPatchWindows,
// ≈ 0.5 MB), in this thread whose FFT code the level stages have already made hot.
// Imports only register.ts (no sharp): the worker starts fast.
import { parentPort } from 'node:worker_threads';
import {
  refineFull,
  registerLevels,
  type InkLevel,
  type LevelStage,
  type PairSize,
  type PatchWindows,
  type RegisterOptions,
  type Registration,
} from './register';

export type RegisterWorkerRequest =
  | {
      kind: 'levels';
      la: InkLevel;
      lb: InkLevel;
      size: PairSize;
      options: Omit<RegisterOptions, 'levels'>;
    }
  | {
      kind: 'full';
      stage: LevelStage;
      a: PatchWindows;
      b: PatchWindows;
      options: Omit<RegisterOptions, 'levels'>;
    };

export type RegisterWorkerResponse =
  | { kind: 'stage'; stage: LevelStage }
  | { kind: 'result'; registration: Registration }
  | { kind: 'error'; message: string };

const port = parentPort;
if (!port)
  throw new Error('register.worker.ts must run in a worker thread (register-worker.adapter.ts).');

port.on('message', (m: RegisterWorkerRequest) => {
  let res: RegisterWorkerResponse;
  try {
    res =
      m.kind === 'levels'
        ? { kind: 'stage', stage: registerLevels(m.la, m.lb, m.size, m.options) }
        : { kind: 'result', registration: refineFull(m.a, m.b, m.stage, m.options) };
  } catch (err) {
    res = { kind: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(res);
});
