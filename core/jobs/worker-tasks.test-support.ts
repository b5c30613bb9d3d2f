// A worker registry for tests: the real tasks plus tasks that misbehave on purpose (spin without
// yielding, crash the thread, throw). Loaded inside workers through WorkerPoolOptions.registryUrl.
import { getPriority } from 'node:os';
import { threadId } from 'node:worker_threads';
import { ApiError } from '../domain/errors';
import { currentThreadId } from './thread-priority';
import { WORKER_TASKS as REAL_TASKS } from './worker-tasks';
import { taskProgress, type WorkerTaskRegistry } from './worker-protocol';

export const WORKER_TASKS = {
  ...REAL_TASKS,
  /** Burns CPU for `ms` without ever yielding: only terminating the thread stops it. */
  'test.spin'(args: { ms: number }): number {
    const end = Date.now() + args.ms;
    let n = 0;
    while (Date.now() < end) n++;
    return n;
  },
  /** Keeps live JS objects without bound until the worker's heap limit ends it. */
  'test.allocateForever'(): never {
    const keep: number[][] = [];
    for (;;) keep.push(Array.from({ length: 1024 }, (_, i) => i + keep.length));
  },
  /** The worker thread's nice value and kernel thread id (Linux), or nulls elsewhere. */
  'test.priority'(): { tid: number | null; nice: number | null } {
    const tid = currentThreadId();
    return { tid, nice: tid === null ? null : getPriority(tid) };
  },
  /** The worker thread's id, to tell a replacement worker from the original. */
  'test.threadId'(): number {
    return threadId;
  },
  /** Ends the worker thread abruptly, as a native crash or OOM would. */
  'test.exit'(): never {
    process.exit(7);
  },
  /**
   * Takes the whole process down from a worker thread, as a segfault in a native renderer would:
   * a SIGSEGV to the process (no thread survives it, nothing gets to clean up).
   */
  'test.killProcess'(): never {
    process.kill(process.pid, 'SIGSEGV');
    for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1000);
  },
  /** An error thrown outside the task's promise chain: an uncaught exception in the worker. */
  'test.uncaught'(): Promise<never> {
    setTimeout(() => {
      throw new Error('uncaught in worker');
    }, 1);
    return new Promise<never>(() => {});
  },
  'test.throwApiError'(args: { detail: string }): never {
    throw new ApiError('validation_error', args.detail);
  },
  'test.throw'(args: { message: string }): never {
    throw new Error(args.message);
  },
  /**
   * Sends `parts` buffers of `size` bytes (part i filled with i) as taskProgress one by one, each
   * moved, then answers how many it sent; fails after them with `fail`.
   */
  async 'test.progress'(args: { parts: number; size: number; fail?: string }): Promise<number> {
    for (let i = 0; i < args.parts; i++) {
      const b = new Uint8Array(args.size).fill(i);
      taskProgress({ part: i, bytes: b }, [b.buffer as ArrayBuffer]);
      if (b.byteLength !== 0) throw new Error('the part was copied, not moved');
      await new Promise((r) => setTimeout(r, 1));
    }
    if (args.fail) throw new Error(args.fail);
    return args.parts;
  },
  /** A warm-up step (WorkerPoolOptions.warmup): records `step` in this worker, or fails with `fail`. */
  async 'test.warmup'(args: { ms?: number; fail?: string; step?: string }): Promise<number> {
    await new Promise((r) => setTimeout(r, args.ms ?? 0));
    if (args.fail) throw new Error(args.fail);
    warmedAt ??= Date.now();
    warmSteps.push(args.step ?? 'warm-up');
    return threadId;
  },
  /** When this worker's first warm-up step ended (null: never), the steps it ran, its thread id. */
  'test.warmth'(): { warmedAt: number | null; steps: string[]; threadId: number } {
    return { warmedAt: warmedAt ?? null, steps: [...warmSteps], threadId };
  },
} satisfies WorkerTaskRegistry;

/** Set by test.warmup in the worker that ran it. */
let warmedAt: number | undefined;
const warmSteps: string[] = [];

export type TestWorkerTasks = typeof WORKER_TASKS;

export const TEST_REGISTRY_URL = new URL('./worker-tasks.test-support.ts', import.meta.url);
