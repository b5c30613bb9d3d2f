// A pool of worker threads for CPU-heavy pure-JS work (pixel loops, matching, hashing), so the
// HTTP event loop stays responsive while a drawing set is processed (architecture.md, habit 5).
// sharp needs none of this: it already runs on libuv's threads.
//
// - Each worker runs one task at a time; extra tasks wait in FIFO order (low-priority tasks, e.g.
//   deep-zoom tiles, after every normal one: newest first, or by TaskOptions.rank).
// - Workers start lazily (first use) up to `size`, and are unref'd while idle so an idle pool
//   never keeps the process alive.
// - A worker that crashes (uncaught error, process.exit, out of memory) fails only its task with
//   WorkerCrashedError; the pool drops it and starts a fresh one on the next demand.
// - Each worker's JS heap is capped (`maxHeapMb`, Node's `resourceLimits`), so a task whose heap
//   runs away (a hostile PDF that makes pdf.js build an endless operator list, a bug in a pixel
//   loop that grows a JS array) ends that one worker with WorkerOutOfMemoryError instead of taking
//   the whole service down when V8 hits the process-wide limit. The limit covers the V8 heap only:
//   pixel buffers (ArrayBuffers, sharp's and canvas' native memory) live outside it and are bounded
//   by the input layer's pixel limits and its decompression-bomb checks instead.
// - Aborting a task's signal while it runs terminates its worker (pure JS loops cannot be
//   interrupted any other way) and rejects with the signal's reason; a fresh worker replaces it on
//   the next demand. Aborting a queued task just removes it. A task given a time limit is ended
//   the same way when it runs past it (for a blocking call that cannot watch a clock itself).
//
// Where the worker code comes from:
// - From TypeScript source (dev, tests, headless `node --import tsx`), the default `workerUrl` is
//   ./worker-entry.ts; a .ts worker is started through worker-bootstrap.mjs, which registers tsx
//   in the thread first (Node 20 does not apply `execArgv: ['--import', 'tsx']` to a worker's
//   entry module).
// - A bundled build (electron-vite) emits worker-entry.ts as its own entry, e.g. with
//   `import workerPath from '../jobs/worker-entry?modulePath'` or an extra rollup input producing
//   out/main/worker-entry.js, and passes that built .js file as `workerUrl`; a .js/.mjs worker is
//   started directly, without tsx.
import { availableParallelism } from 'node:os';
import { Worker, type TransferListItem } from 'node:worker_threads';
import { ApiError, isProblemCode } from '../domain/errors';
import { compareRanks } from '../domain/rank';
import type { WorkerTasks } from './worker-tasks';
import type {
  SerializedError,
  TaskArgs,
  TaskRequest,
  TaskProgress,
  TaskResponse,
  TaskResult,
  WorkerTaskRegistry,
} from './worker-protocol';

export interface WorkerPoolOptions {
  /** Number of worker threads. Default: the cores Node reports available (at least 1). */
  size?: number;
  /** The worker module. Default ./worker-entry.ts beside this file (see the header comment). */
  workerUrl?: URL;
  /** A module exporting WORKER_TASKS to use instead of the built-in registry (tests). */
  registryUrl?: URL;
  /**
   * Most MiB each worker's V8 old generation (its long-lived JS heap) may grow to; a task that needs
   * more fails with WorkerOutOfMemoryError and its worker is replaced. Default
   * DEFAULT_WORKER_MAX_HEAP_MB (1024). Example: `createWorkerPool({ size: 2, maxHeapMb: 1536 })`.
   */
  maxHeapMb?: number;
  /**
   * Nice value of the worker threads (Linux; see thread-priority.ts), so the HTTP thread wins the
   * CPU while workers rasterize and compare. Default DEFAULT_WORKER_NICE (10); 0 leaves them alone.
   */
  nice?: number;
  /**
   * Tasks every new worker runs to warm up (JIT and WebAssembly compiled for the real work: see
   * core/jobs/worker-warmup.ts). The first step runs before the worker's first task (tasks wait in
   * the queue meanwhile); each later step only while nothing is queued, so it delays no task that is
   * already waiting. Results are dropped. When a step fails, crashes or runs past its `timeLimitMs`
   * (default 60 s), no worker warms up any further (stats().warmupError says why), so a broken
   * warm-up never costs more than once.
   */
  warmup?: WarmupStep[];
}

export interface WarmupStep {
  task: string;
  args: unknown;
  timeLimitMs?: number;
}

/** Default time limit of a worker's warm-up task. */
export const DEFAULT_WARMUP_TIME_LIMIT_MS = 60_000;

/** Default nice value of pool workers: below the HTTP thread, still far from idle-only (19). */
export const DEFAULT_WORKER_NICE = 10;

/**
 * Default heap cap per worker, MiB. Measured (node 20, this machine): ingesting a page of the
 * heaviest fixture sheets (beam proposal S101/S102 at 200 dpi, barber house A102/A103) peaks at
 * ~125 MiB of V8 heap in the worker; pixel buffers are outside the heap (~40-80 MiB of
 * ArrayBuffers). 1024 MiB is ~8x that headroom for denser real-world sheets, yet with the default
 * pool of one worker per core (2 here) a runaway task costs at most ~1 GiB per worker instead of
 * V8's process default (~4 GiB on this machine), which the service's 2 GiB RSS budget could not absorb.
 */
export const DEFAULT_WORKER_MAX_HEAP_MB = 1024;
/** Node's error code when a worker thread hit its resourceLimits. */
const WORKER_OOM_CODE = 'ERR_WORKER_OUT_OF_MEMORY';

export interface WorkerPoolStats {
  size: number;
  /** Live workers (started, not crashed or terminated). */
  workers: number;
  busy: number;
  queued: number;
  /** Workers started so far, including replacements. */
  started: number;
  crashed: number;
  /** Of the crashes, those where a worker ran out of its heap limit. */
  outOfMemory: number;
  /** Workers terminated because their running task was aborted. */
  aborted: number;
  /** Workers terminated because their running task ran past its time limit. */
  timedOut: number;
  /** Workers that completed every warm-up step (WorkerPoolOptions.warmup). */
  warmedUp: number;
  /** Why warm-ups stopped, after one failed. */
  warmupError?: string;
}

export interface WorkerPool<R extends WorkerTaskRegistry = WorkerTasks> {
  readonly size: number;
  /**
   * Runs `task` with `args` on a worker. `transferList` moves buffers instead of copying them
   * (the caller must not use them afterwards). Rejects with the task's error (an ApiError keeps its
   * code), WorkerCrashedError, the signal's reason when aborted, or PoolClosedError.
   */
  run<K extends keyof R & string>(
    task: K,
    args: TaskArgs<R[K]>,
    transferList?: readonly TransferListItem[],
    signal?: AbortSignal,
    options?: TaskOptions,
  ): Promise<TaskResult<R[K]>>;
  stats(): WorkerPoolStats;
  /**
   * Starts every worker now instead of on demand; resolves when their warm-ups (if any) have ended,
   * whether they succeeded or not. Tasks run meanwhile are served as usual.
   */
  start(): Promise<void>;
  /** Rejects queued tasks, terminates every worker (running tasks reject with PoolClosedError). */
  close(): Promise<void>;
}

/**
 * A bound on a task's running time, counted from when a worker takes it (time in the queue does not
 * count). When it runs out the worker is ended, as on abort, and the task rejects with `error()`.
 * For work that cannot check a clock itself: one blocking call into WebAssembly, say.
 */
export interface TaskTimeLimit {
  ms: number;
  error: () => Error;
}

export interface TaskOptions {
  /** Ends the task when it runs longer (see TaskTimeLimit). */
  limit?: TaskTimeLimit;
  /**
   * 'low': the task waits while any normal task is queued (those go first, whatever their arrival),
   * and low tasks run newest first (or by `rank`): a viewer's deep-zoom tiles, where the last asked
   * for is the one on screen now, must never hold up a job. A running task is never interrupted, so a normal task
   * waits at most for the low tasks already running (keep them short). Default 'normal'.
   */
  priority?: 'normal' | 'low';
  /**
   * The signal drops the task only while it waits in the queue; once a worker runs it, it runs to
   * the end (its result still settles the promise). For work whose result is worth keeping and whose
   * worker is costly to replace: a deep-zoom tile nobody waits for any more (its request was
   * cancelled) leaves the queue, one already rendering is stored for the next view. Default false:
   * an abort also ends a running task (its worker is terminated).
   */
  abortQueuedOnly?: boolean;
  /**
   * Told each part of the result the task sends before it ends (worker-protocol.ts taskProgress),
   * in order, before the task settles. Not after the task is aborted or fails.
   */
  onProgress?: (value: unknown) => void;
  /**
   * With priority 'low': the task's place among the low tasks, compared element by element (lower
   * first; a missing element counts as lower); tasks of equal rank in arrival order. Low tasks
   * without a rank go before every ranked one, newest first. For deep-zoom tiles: the viewer's
   * urgency (view before prefetch), then the newest step, then the order the step asked for its
   * tiles (centre first) — see tiles.service.ts.
   */
  rank?: readonly number[];
  /**
   * Called when a worker takes the task, with its arguments: returns the arguments to run it with
   * (e.g. only the parts still wanted by then). Not called for a task dropped while queued.
   */
  startArgs?: (args: unknown) => unknown;
}

/** A task failed inside the worker; `name` is the original error's name. */
export class WorkerTaskError extends Error {
  constructor(
    message: string,
    readonly originalName: string,
  ) {
    super(message);
    this.name = 'WorkerTaskError';
  }
}

export class WorkerCrashedError extends Error {
  constructor(task: string, cause: string) {
    super(`The worker running task '${task}' crashed: ${cause}`);
    this.name = 'WorkerCrashedError';
  }
}

/**
 * The worker running a task exceeded its JS heap limit (`maxHeapMb`) and was ended. A
 * WorkerCrashedError, so code that handles crashes keeps working; `code` tells it apart.
 */
export class WorkerOutOfMemoryError extends WorkerCrashedError {
  readonly code = WORKER_OOM_CODE;
  constructor(
    task: string,
    readonly maxHeapMb: number,
  ) {
    super(task, `it ran out of its ${maxHeapMb} MiB JavaScript heap limit`);
    this.name = 'WorkerOutOfMemoryError';
  }
}

export class PoolClosedError extends Error {
  constructor() {
    super('The worker pool is closed.');
    this.name = 'PoolClosedError';
  }
}

interface Pending {
  id: number;
  task: string;
  args: unknown;
  transferList: readonly TransferListItem[];
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  limit: TaskTimeLimit | undefined;
  timer: NodeJS.Timeout | undefined;
  /** TaskOptions.priority 'low'. */
  low?: boolean;
  /** TaskOptions.abortQueuedOnly. */
  queuedOnly?: boolean;
  /** TaskOptions.onProgress. */
  onProgress?: (value: unknown) => void;
  /** TaskOptions.rank. */
  rank?: readonly number[];
  /** TaskOptions.startArgs. */
  startArgs?: (args: unknown) => unknown;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
  /** Warm-up steps still to run on this worker. */
  warmupLeft: WarmupStep[];
  /** Set when the pool itself ends this worker: its exit is not a crash. */
  retired: boolean;
}

const BOOTSTRAP_URL = new URL('./worker-bootstrap.mjs', import.meta.url);
const DEFAULT_WORKER_URL = new URL('./worker-entry.ts', import.meta.url);

export function defaultPoolSize(): number {
  return Math.max(1, availableParallelism());
}

export function createWorkerPool<R extends WorkerTaskRegistry = WorkerTasks>(
  options: WorkerPoolOptions = {},
): WorkerPool<R> {
  const size = options.size ?? defaultPoolSize();
  if (!Number.isInteger(size) || size < 1) {
    throw new RangeError(`Expected a positive integer for size but received ${String(size)}.`);
  }
  const maxHeapMb = options.maxHeapMb ?? DEFAULT_WORKER_MAX_HEAP_MB;
  if (!Number.isInteger(maxHeapMb) || maxHeapMb < 16) {
    throw new RangeError(
      `Expected an integer of at least 16 for maxHeapMb but received ${String(maxHeapMb)}.`,
    );
  }
  const workerUrl = options.workerUrl ?? DEFAULT_WORKER_URL;
  const fromSource = workerUrl.pathname.endsWith('.ts');

  const slots = new Set<Slot>();
  const queue: Pending[] = [];
  let nextId = 1;
  let closed = false;
  const counters = { started: 0, crashed: 0, outOfMemory: 0, aborted: 0, timedOut: 0, warmedUp: 0 };
  let warmupError: string | undefined;
  /** Workers with warm-up steps to finish, and the end of their warm-up (success or not). */
  const warming = new Map<Slot, { ended: Promise<void>; end: () => void }>();
  /** Workers running a warm-up step now. */
  let warmingNow = 0;

  function spawn(): Slot {
    const workerData = {
      entry: workerUrl.href,
      nice: options.nice ?? DEFAULT_WORKER_NICE,
      ...(options.registryUrl ? { registry: options.registryUrl.href } : {}),
    };
    // execArgv: [] so flags of the parent (e.g. --inspect with a fixed port) are not inherited.
    // resourceLimits: only the old generation is capped; the young generation and the stack keep
    // V8's defaults (they are small and fixed, not where a runaway task grows).
    const worker = new Worker(fromSource ? BOOTSTRAP_URL : workerUrl, {
      workerData,
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
    });
    worker.unref();
    const slot: Slot = { worker, current: undefined, warmupLeft: [], retired: false };
    counters.started++;
    worker.on('message', (msg: TaskResponse | TaskProgress) => onMessage(slot, msg));
    worker.on('error', (err) =>
      onCrash(slot, err.message, (err as NodeJS.ErrnoException).code === WORKER_OOM_CODE),
    );
    worker.on('exit', (code) => onCrash(slot, `exited with code ${code}`, false));
    slots.add(slot);
    if (options.warmup?.length && warmupError === undefined) {
      slot.warmupLeft = [...options.warmup];
      let end!: () => void;
      warming.set(slot, { ended: new Promise<void>((r) => (end = r)), end });
      warmUpStep(slot);
    }
    return slot;
  }

  /** The worker's warm-up has ended (done, failed, or the worker is gone). */
  function endWarmup(slot: Slot): void {
    slot.warmupLeft = [];
    warming.get(slot)?.end();
    warming.delete(slot);
  }

  /** Runs the next warm-up step on the idle worker of `slot`. */
  function warmUpStep(slot: Slot): void {
    const step = slot.warmupLeft.shift()!;
    const ms = step.timeLimitMs ?? DEFAULT_WARMUP_TIME_LIMIT_MS;
    warmingNow++;
    const end = (error?: unknown) => {
      warmingNow--;
      if (error !== undefined) {
        if (!(error instanceof PoolClosedError))
          warmupError ??= error instanceof Error ? error.message : String(error);
        endWarmup(slot);
      } else if (slot.warmupLeft.length === 0) {
        counters.warmedUp++;
        endWarmup(slot);
      }
    };
    post(slot, {
      id: nextId++,
      task: step.task,
      args: step.args,
      transferList: [],
      signal: undefined,
      onAbort: undefined,
      limit: {
        ms,
        error: () => new Error(`The warm-up task '${step.task}' ran past its ${ms} ms limit.`),
      },
      timer: undefined,
      resolve: () => end(),
      reject: (e) => end(e ?? new Error('warm-up failed')),
    });
  }

  function onMessage(slot: Slot, msg: TaskResponse | TaskProgress): void {
    const p = slot.current;
    if (!p || p.id !== msg.id) return;
    if ('progress' in msg) {
      p.onProgress?.(msg.progress);
      return;
    }
    slot.current = undefined;
    slot.worker.unref();
    settle(p);
    if (msg.ok) p.resolve(msg.value);
    else p.reject(reviveError(msg.error));
    dispatch();
  }

  /** 'error' then 'exit' both arrive for one crash; the first one handles it. */
  function onCrash(slot: Slot, cause: string, outOfMemory: boolean): void {
    if (!slots.delete(slot)) return;
    if (slot.retired) return;
    const unfinished = slot.warmupLeft.length > 0;
    counters.crashed++;
    if (outOfMemory) counters.outOfMemory++;
    void slot.worker.terminate();
    const p = slot.current;
    slot.current = undefined;
    if (p) {
      settle(p);
      p.reject(
        outOfMemory
          ? new WorkerOutOfMemoryError(p.task, maxHeapMb)
          : new WorkerCrashedError(p.task, cause),
      );
    }
    if (unfinished) endWarmup(slot); // crashed during a task, between warm-up steps
    dispatch();
  }

  function settle(p: Pending): void {
    if (p.onAbort) p.signal?.removeEventListener('abort', p.onAbort);
    if (p.timer) clearTimeout(p.timer);
  }

  function dispatch(): void {
    if (closed) return;
    while (queue.length > 0) {
      const next = queue[0]!;
      if (next.signal?.aborted) {
        // Its abort listener has not run yet (several tasks share one signal): never start it.
        queue.shift();
        settle(next);
        next.reject(next.signal.reason);
        continue;
      }
      let slot: Slot | undefined;
      for (const s of slots) if (!s.current) slot = s;
      if (!slot && slots.size < size && warmingNow < queue.length) {
        // A new worker; one that warms up first takes the task when its warm-up ends.
        const s = spawn();
        if (s.current) continue;
        slot = s;
      }
      if (!slot) return;
      post(slot, queue.shift()!);
    }
    // Nothing waits: idle workers take their next warm-up step.
    for (const s of slots)
      if (!s.current && s.warmupLeft.length > 0) {
        if (warmupError === undefined) warmUpStep(s);
        else endWarmup(s);
      }
  }

  /** Hands `p` to the idle worker of `slot`. */
  function post(slot: Slot, p: Pending): void {
    slot.current = p;
    slot.worker.ref();
    try {
      if (p.startArgs) p.args = p.startArgs(p.args);
      const req: TaskRequest = { id: p.id, task: p.task, args: p.args };
      slot.worker.postMessage(req, p.transferList);
      if (p.limit) {
        const limit = p.limit;
        p.timer = setTimeout(() => stop(p, limit.error(), 'timedOut'), limit.ms);
        p.timer.unref();
      }
    } catch (err) {
      // Arguments that cannot be cloned: the task's own fault, the worker is fine.
      slot.current = undefined;
      slot.worker.unref();
      settle(p);
      p.reject(err);
    }
  }

  function abort(p: Pending): void {
    // A running task that keeps running on abort (abortQueuedOnly): nothing to stop.
    if (p.queuedOnly && !queue.includes(p)) return;
    stop(p, p.signal?.reason, 'aborted');
  }

  /** Ends `p`: out of the queue, or its worker terminated (a fresh one replaces it on demand). */
  function stop(p: Pending, reason: unknown, counter: 'aborted' | 'timedOut'): void {
    const queuedAt = queue.indexOf(p);
    if (queuedAt >= 0) {
      queue.splice(queuedAt, 1);
    } else {
      for (const slot of slots) {
        if (slot.current !== p) continue;
        slot.retired = true;
        slot.current = undefined;
        slots.delete(slot);
        counters[counter]++;
        void slot.worker.terminate();
        endWarmup(slot);
      }
    }
    settle(p);
    p.reject(reason);
    dispatch();
  }

  return {
    size,
    run(task, args, transferList = [], signal, options = {}) {
      if (closed) return Promise.reject(new PoolClosedError());
      if (signal?.aborted) return Promise.reject(signal.reason);
      return new Promise((resolve, reject) => {
        const p: Pending = {
          id: nextId++,
          task,
          args,
          transferList,
          signal,
          onAbort: undefined,
          limit: options.limit,
          timer: undefined,
          resolve: resolve as (v: unknown) => void,
          reject,
          ...(options.abortQueuedOnly ? { queuedOnly: true } : {}),
          ...(options.onProgress ? { onProgress: options.onProgress } : {}),
          ...(options.startArgs ? { startArgs: options.startArgs } : {}),
        };
        if (signal) {
          p.onAbort = () => abort(p);
          signal.addEventListener('abort', p.onAbort, { once: true });
        }
        enqueue(queue, p, options);
        dispatch();
      });
    },
    stats() {
      let busy = 0;
      for (const s of slots) if (s.current) busy++;
      return {
        size,
        workers: slots.size,
        busy,
        queued: queue.length,
        ...counters,
        ...(warmupError === undefined ? {} : { warmupError }),
      };
    },
    async start() {
      while (!closed && slots.size < size) spawn();
      dispatch();
      await Promise.all([...warming.values()].map((w) => w.ended));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const p of queue.splice(0)) {
        settle(p);
        p.reject(new PoolClosedError());
      }
      const ending: Promise<number>[] = [];
      for (const slot of [...slots]) {
        slot.retired = true;
        slots.delete(slot);
        const p = slot.current;
        slot.current = undefined;
        if (p) {
          settle(p);
          p.reject(new PoolClosedError());
        }
        endWarmup(slot);
        ending.push(slot.worker.terminate());
      }
      await Promise.all(ending);
    },
  };
}

/**
 * Puts `p` in its place: the queue holds the normal tasks (oldest first), then the low ones without
 * a rank (newest first), then the ranked low ones by rank (TaskOptions.rank; equal ranks oldest
 * first).
 */
function enqueue(queue: Pending[], p: Pending, options: TaskOptions): void {
  const firstLow = queue.findIndex((q) => q.low);
  if (options.priority !== 'low') {
    if (firstLow < 0) queue.push(p);
    else queue.splice(firstLow, 0, p);
    return;
  }
  p.low = true;
  if (!options.rank) {
    queue.splice(firstLow < 0 ? queue.length : firstLow, 0, p);
    return;
  }
  p.rank = options.rank;
  let at = queue.length;
  for (let i = firstLow < 0 ? queue.length : firstLow; i < queue.length; i++) {
    const q = queue[i]!;
    if (q.rank && compareRanks(p.rank, q.rank) < 0) {
      at = i;
      break;
    }
  }
  queue.splice(at, 0, p);
}

function reviveError(e: SerializedError): Error {
  if (e.name === 'ApiError' && e.code && isProblemCode(e.code)) {
    return new ApiError(e.code, e.detail ?? e.message);
  }
  return new WorkerTaskError(e.message, e.name);
}
