import { createHash } from 'node:crypto';
import { getPriority } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../domain/errors';
import { compareRanks } from '../domain/rank';
import {
  createWorkerPool,
  PoolClosedError,
  WorkerCrashedError,
  WorkerOutOfMemoryError,
  WorkerTaskError,
  type WorkerPool,
} from './worker-pool';
import { TEST_REGISTRY_URL, type TestWorkerTasks } from './worker-tasks.test-support';

const pools: WorkerPool<TestWorkerTasks>[] = [];
function pool(size: number, maxHeapMb?: number, nice?: number): WorkerPool<TestWorkerTasks> {
  const p = createWorkerPool<TestWorkerTasks>({
    size,
    registryUrl: TEST_REGISTRY_URL,
    ...(maxHeapMb ? { maxHeapMb } : {}),
    ...(nice !== undefined ? { nice } : {}),
  });
  pools.push(p);
  return p;
}
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

/** A deterministic 8-bit "image": a gradient with a dark diagonal. */
function image(width: number, height: number): Uint8Array {
  const px = new Uint8Array(width * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) px[y * width + x] = x === y ? 10 : (x * 7 + y * 3) % 256;
  return px;
}

type WarmArgs = { ms?: number; fail?: string; step?: string };
function warmPool(
  size: number,
  warmup: { args: WarmArgs; timeLimitMs?: number } | { args: WarmArgs; timeLimitMs?: number }[],
) {
  const steps = Array.isArray(warmup) ? warmup : [warmup];
  const p = createWorkerPool<TestWorkerTasks>({
    size,
    registryUrl: TEST_REGISTRY_URL,
    warmup: steps.map((w) => ({ task: 'test.warmup', ...w })),
  });
  pools.push(p);
  return p;
}

describe('worker pool warm-up', () => {
  it('runs the warm-up on a new worker before its first task', async () => {
    const p = warmPool(1, { args: { ms: 150 } });
    const t = Date.now();
    const w = await p.run('test.warmth', undefined);
    expect(w.warmedAt).not.toBeNull();
    expect(w.warmedAt!).toBeGreaterThanOrEqual(t + 100); // the task waited for the warm-up
    expect(p.stats()).toMatchObject({ warmedUp: 1, workers: 1, started: 1 });
    expect(p.stats().warmupError).toBeUndefined();
  });

  it('start() starts every worker at once and resolves when all have warmed up', async () => {
    const p = warmPool(2, { args: { ms: 100 } });
    expect(p.stats().workers).toBe(0);
    await p.start();
    expect(p.stats()).toMatchObject({ workers: 2, warmedUp: 2, busy: 0 });
    const both = await Promise.all([
      p.run('test.warmth', undefined),
      p.run('test.warmth', undefined),
    ]);
    expect(new Set(both.map((w) => w.threadId)).size).toBe(2);
    expect(both.every((w) => w.warmedAt !== null)).toBe(true);
    expect(p.stats().started).toBe(2);
  });

  it('runs the first step before the first task, later steps only while nothing is queued', async () => {
    const p = warmPool(1, [
      { args: { ms: 100, step: 'first' } },
      { args: { ms: 300, step: 'second' } },
    ]);
    const ended = p.start();
    // Queued while the first step runs: it goes before the second step.
    const early = await p.run('test.warmth', undefined);
    expect(early.steps).toEqual(['first']);
    expect(p.stats().warmedUp).toBe(0);
    await ended; // the second step ran once the worker was idle
    const late = await p.run('test.warmth', undefined);
    expect(late.steps).toEqual(['first', 'second']);
    expect(late.threadId).toBe(early.threadId);
    expect(p.stats()).toMatchObject({ warmedUp: 1, started: 1 });
  });

  it('an idle pool runs every step at start', async () => {
    const p = warmPool(2, [{ args: { step: 'first' } }, { args: { step: 'second' } }]);
    await p.start();
    const w = await p.run('test.warmth', undefined);
    expect(w.steps).toEqual(['first', 'second']);
    expect(p.stats()).toMatchObject({ warmedUp: 2, workers: 2 });
  });

  it('a worker that crashes between warm-up steps ends its warm-up: start() still resolves', async () => {
    const p = warmPool(1, [{ args: { step: 'first' } }, { args: { ms: 200, step: 'second' } }]);
    const ended = p.start();
    await expect(p.run('test.exit', undefined)).rejects.toBeInstanceOf(WorkerCrashedError);
    await ended;
    expect(p.stats()).toMatchObject({ warmedUp: 0, crashed: 1 });
    expect(p.stats().warmupError).toBeUndefined();
  });

  it('one queued task starts one worker, not the whole pool', async () => {
    const p = warmPool(2, { args: { ms: 50 } });
    await p.run('test.warmth', undefined);
    expect(p.stats()).toMatchObject({ workers: 1, started: 1, warmedUp: 1 });
  });

  it('a failed warm-up is reported once; tasks still run, later workers start cold', async () => {
    const p = warmPool(1, { args: { fail: 'no warm-up today' } });
    const w = await p.run('test.warmth', undefined);
    expect(w.warmedAt).toBeNull();
    expect(p.stats()).toMatchObject({ warmedUp: 0, warmupError: 'no warm-up today' });
    // The replacement of a crashed worker does not try again.
    await expect(p.run('test.exit', undefined)).rejects.toBeInstanceOf(WorkerCrashedError);
    const after = await p.run('test.warmth', undefined);
    expect(after.threadId).not.toBe(w.threadId);
    expect(after.warmedAt).toBeNull();
    expect(p.stats()).toMatchObject({ started: 2, warmedUp: 0 });
  });

  it('a warm-up past its time limit ends its worker; the task waiting runs on a cold one', async () => {
    const p = warmPool(1, { args: { ms: 10_000 }, timeLimitMs: 200 });
    const t = Date.now();
    const w = await p.run('test.warmth', undefined);
    expect(Date.now() - t).toBeLessThan(5_000);
    expect(w.warmedAt).toBeNull();
    expect(p.stats()).toMatchObject({ timedOut: 1, started: 2, warmedUp: 0 });
    expect(p.stats().warmupError).toMatch(/ran past its 200 ms limit/);
  });

  it('closing the pool during a warm-up rejects the waiting tasks and reports no warm-up error', async () => {
    const p = warmPool(1, { args: { ms: 5_000 } });
    const waiting = p.run('test.warmth', undefined);
    const started = p.start();
    const refused = expect(waiting).rejects.toBeInstanceOf(PoolClosedError);
    await new Promise((r) => setTimeout(r, 100));
    await p.close();
    await refused;
    await started;
    expect(p.stats().warmupError).toBeUndefined();
  });
});

describe('worker pool', () => {
  it.runIf(process.platform === 'linux')(
    'runs its workers below the HTTP thread: nice 10 by default, per thread, the main thread untouched',
    async () => {
      const mainBefore = getPriority(process.pid);
      const p = pool(2);
      const [a, b] = await Promise.all([
        p.run('test.priority', undefined),
        p.run('test.priority', undefined),
      ]);
      for (const r of [a, b]) {
        expect(r.tid).not.toBe(process.pid);
        expect(r.nice).toBe(Math.max(10, mainBefore));
      }
      // The main thread (tid = pid) keeps its priority: only the worker threads were reniced.
      expect(getPriority(process.pid)).toBe(mainBefore);
      const plain = pool(1, undefined, 0);
      expect((await plain.run('test.priority', undefined)).nice).toBe(mainBefore);
    },
  );

  it('runs a pixel loop on a transferred 16-megapixel buffer and moves the result back', async () => {
    const p = pool(2);
    const w = 4096;
    const h = 4096;
    const px = image(w, h);
    // Expected values computed here on the main thread, independently of the worker.
    let expectedInk = 0;
    for (let i = 0; i < px.length; i++) if (px[i]! < 128) expectedInk++;
    const probe = [0, 1, w + 1, 12345, px.length - 1].map((i) => [i, px[i]! < 128 ? 255 : 0]);

    const out = await p.run('grey.threshold', { pixels: px, threshold: 128 }, [
      px.buffer as ArrayBuffer,
    ]);
    expect(px.byteLength).toBe(0); // moved to the worker, not copied
    expect(out.ink).toBe(expectedInk);
    expect(out.pixels.length).toBe(w * h);
    for (const [i, v] of probe) expect(out.pixels[i!]).toBe(v);
  });

  it('hashes a large buffer in a worker with the same digest as the main thread', async () => {
    const p = pool(1);
    const data = image(2048, 2048);
    const expected = createHash('sha256').update(data).digest('hex');
    await expect(p.run('sha256', { data })).resolves.toBe(expected);
    expect(data.byteLength).toBe(2048 * 2048); // copied, not transferred: still usable here
  });

  it('runs tasks in parallel up to its size and queues the rest', async () => {
    const p = pool(2);
    // Warm both workers so start-up time does not blur the timing below.
    await Promise.all([p.run('test.spin', { ms: 1 }), p.run('test.spin', { ms: 1 })]);
    expect(p.stats().workers).toBe(2);
    const runs = [1, 2, 3].map(() => p.run('test.spin', { ms: 300 }));
    await new Promise((r) => setTimeout(r, 50));
    expect(p.stats()).toMatchObject({ busy: 2, queued: 1 });
    await Promise.all(runs);
    expect(p.stats()).toMatchObject({ busy: 0, queued: 0, workers: 2, started: 2 });
  });

  it('low-priority tasks wait for every normal task, newest first', async () => {
    const p = pool(1);
    const order: string[] = [];
    const track = (name: string, r: Promise<unknown>) => r.then(() => order.push(name));
    // The one worker is busy while the rest queue up (the order of completion is the order of
    // start: one worker).
    const busy = track('busy', p.run('test.spin', { ms: 100 }));
    const low = { priority: 'low' as const };
    const runs = [
      busy,
      track('low1', p.run('test.spin', { ms: 1 }, [], undefined, low)),
      track('job1', p.run('test.spin', { ms: 1 })),
      track('low2', p.run('test.spin', { ms: 1 }, [], undefined, low)),
      track('low3', p.run('test.spin', { ms: 1 }, [], undefined, low)),
      track('job2', p.run('test.spin', { ms: 1 })),
    ];
    expect(p.stats().queued).toBe(5);
    await Promise.all(runs);
    expect(order).toEqual(['busy', 'job1', 'job2', 'low3', 'low2', 'low1']);
  });

  it('ranked low tasks run by rank (equal ranks oldest first), after unranked low ones; jobs still first', async () => {
    const p = pool(1);
    const order: string[] = [];
    const track = (name: string, r: Promise<unknown>) => r.then(() => order.push(name));
    const busy = track('busy', p.run('test.spin', { ms: 100 }));
    const low = (name: string, rank?: number[]) =>
      track(
        name,
        p.run('test.spin', { ms: 1 }, [], undefined, {
          priority: 'low',
          ...(rank ? { rank } : {}),
        }),
      );
    // The tile service's ranks: [urgency, -batch number, place in the batch].
    const runs = [
      busy,
      low('prefetch', [3, -1, 0]),
      low('view1 far', [1, -1, 2]),
      low('view1 far again', [1, -1, 2]),
      low('view2 centre', [1, -2, 0]),
      low('view1 centre', [1, -1, 0]),
      low('kind'),
      track('job', p.run('test.spin', { ms: 1 })),
      low('view2 far', [1, -2, 1]),
    ];
    expect(p.stats().queued).toBe(8);
    await Promise.all(runs);
    expect(order).toEqual([
      'busy',
      'job',
      'kind',
      'view2 centre',
      'view2 far',
      'view1 centre',
      'view1 far',
      'view1 far again',
      'prefetch',
    ]);
    expect(compareRanks([1, -2], [1, -2, 0])).toBeLessThan(0);
    expect(compareRanks([1, -1, 0], [1, -1, 0])).toBe(0);
  });

  it('startArgs: a task runs with the arguments it gives when a worker takes it, not before', async () => {
    const p = pool(1);
    const calls: unknown[] = [];
    const busy = p.run('test.spin', { ms: 100 });
    const task = p.run('test.throw', { message: 'as queued' }, [], undefined, {
      priority: 'low',
      startArgs: (args) => {
        calls.push(args);
        return { message: 'as started' };
      },
    });
    task.catch(() => undefined);
    expect(calls).toEqual([]);
    await busy;
    await expect(task).rejects.toThrow('as started');
    expect(calls).toEqual([{ message: 'as queued' }]);
    // A task dropped while queued never asks.
    const busy2 = p.run('test.spin', { ms: 100 });
    const ctl = new AbortController();
    const dropped = p.run('test.throw', { message: 'x' }, [], ctl.signal, {
      priority: 'low',
      startArgs: (args) => (calls.push(args), args),
    });
    dropped.catch(() => undefined);
    ctl.abort(new Error('gone'));
    await busy2;
    await expect(dropped).rejects.toThrow('gone');
    expect(calls).toHaveLength(1);
  });

  it('abortQueuedOnly: an abort drops a queued task but lets a running one finish on its worker', async () => {
    const p = pool(1);
    await p.run('test.spin', { ms: 1 });
    const opts = { priority: 'low' as const, abortQueuedOnly: true };
    const running = new AbortController();
    const queued = new AbortController();
    const first = p.run('test.spin', { ms: 200 }, [], running.signal, opts);
    const second = p.run('test.spin', { ms: 1 }, [], queued.signal, opts);
    second.catch(() => undefined);
    expect(p.stats()).toMatchObject({ busy: 1, queued: 1 });
    running.abort(new Error('gone'));
    queued.abort(new Error('gone too'));
    // The queued one leaves the queue at once, rejected with the signal's reason.
    expect(p.stats().queued).toBe(0);
    await expect(second).rejects.toThrow('gone too');
    // The running one was not interrupted: it resolves, on the same worker.
    await expect(first).resolves.toBeTypeOf('number');
    expect(p.stats()).toMatchObject({ aborted: 0, started: 1, busy: 0 });
    // Without the option the same abort ends a running task.
    const plain = new AbortController();
    const third = p.run('test.spin', { ms: 200 }, [], plain.signal);
    plain.abort(new Error('stop'));
    await expect(third).rejects.toThrow('stop');
    expect(p.stats().aborted).toBe(1);
  });

  it('rejects with the task error and keeps an ApiError code across the thread hop', async () => {
    const p = pool(1);
    const plain = await p.run('test.throw', { message: 'bad input' }).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(WorkerTaskError);
    expect((plain as Error).message).toBe('bad input');
    const api = await p
      .run('test.throwApiError', { detail: 'dpi must be positive' })
      .catch((e: unknown) => e);
    expect(api).toBeInstanceOf(ApiError);
    expect(api).toMatchObject({ code: 'validation_error', detail: 'dpi must be positive' });
    expect(p.stats()).toMatchObject({ crashed: 0, started: 1 });
  });

  it("onProgress: a task's parts arrive in order, moved, before it settles; none outside a task", async () => {
    const p = pool(1);
    const parts: { part: number; bytes: Uint8Array }[] = [];
    const n = await p.run('test.progress', { parts: 3, size: 1000 }, [], undefined, {
      onProgress: (v) => parts.push(v as { part: number; bytes: Uint8Array }),
    });
    expect(n).toBe(3);
    expect(parts.map((x) => x.part)).toEqual([0, 1, 2]);
    for (const x of parts) expect([...new Set(x.bytes)]).toEqual([x.part]);
    // A failing task: its parts first, then the failure; a task without onProgress ignores them.
    const seen: number[] = [];
    await expect(
      p.run('test.progress', { parts: 2, size: 10, fail: 'after two' }, [], undefined, {
        onProgress: (v) => seen.push((v as { part: number }).part),
      }),
    ).rejects.toThrow('after two');
    expect(seen).toEqual([0, 1]);
    await expect(p.run('test.progress', { parts: 2, size: 10 })).resolves.toBe(2);
    // The next task on that worker sends nothing it did not send itself.
    const later: unknown[] = [];
    await p
      .run('test.throw', { message: 'x' }, [], undefined, { onProgress: (v) => later.push(v) })
      .catch(() => {});
    expect(later).toEqual([]);
  });

  it('fails only the task of a crashed worker and carries on with a new one', async () => {
    const p = pool(1);
    const first = await p.run('test.threadId', undefined);
    await expect(p.run('test.exit', undefined)).rejects.toBeInstanceOf(WorkerCrashedError);
    await expect(p.run('test.uncaught', undefined)).rejects.toThrow(/uncaught in worker/);
    const after = await p.run('test.threadId', undefined);
    expect(after).not.toBe(first);
    expect(p.stats()).toMatchObject({ crashed: 2, started: 3, workers: 1 });
  });

  it('a task whose heap runs away ends only its worker, with WorkerOutOfMemoryError, and the pool carries on', async () => {
    const p = pool(2, 64);
    const before = await p.run('test.threadId', undefined);
    // A neighbour task on the other worker must finish untouched.
    const neighbour = p.run('test.spin', { ms: 500 });
    const t0 = Date.now();
    const err = await p.run('test.allocateForever', undefined).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkerOutOfMemoryError);
    expect(err).toBeInstanceOf(WorkerCrashedError); // callers handling crashes still see one
    expect(err).toMatchObject({ code: 'ERR_WORKER_OUT_OF_MEMORY', maxHeapMb: 64 });
    expect((err as Error).message).toBe(
      "The worker running task 'test.allocateForever' crashed: it ran out of its 64 MiB JavaScript heap limit",
    );
    expect(Date.now() - t0).toBeLessThan(30_000);
    await expect(neighbour).resolves.toBeGreaterThan(0);
    expect(p.stats()).toMatchObject({ crashed: 1, outOfMemory: 1, workers: 1 });
    // A fresh worker takes the next tasks.
    const ids = await Promise.all([
      p.run('test.threadId', undefined),
      p.run('test.threadId', undefined),
    ]);
    expect(ids).not.toContain(undefined);
    expect(p.stats()).toMatchObject({ workers: 2, started: 3 });
    expect(new Set([...ids, before]).size).toBeGreaterThanOrEqual(2);
    await expect(p.run('sha256', { data: new Uint8Array([1, 2, 3]) })).resolves.toMatch(
      /^[0-9a-f]{64}$/,
    );
  });

  it('abort terminates the worker running a non-yielding loop and replaces it', async () => {
    const p = pool(1);
    const before = await p.run('test.threadId', undefined);
    const ac = new AbortController();
    const t0 = Date.now();
    const spinning = p.run('test.spin', { ms: 30_000 }, [], ac.signal);
    const queued = p.run('test.spin', { ms: 30_000 }, [], ac.signal);
    setTimeout(() => ac.abort(new Error('stop now')), 100);
    await expect(spinning).rejects.toThrow('stop now');
    await expect(queued).rejects.toThrow('stop now');
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(p.stats()).toMatchObject({ aborted: 1, workers: 0, queued: 0 });
    const after = await p.run('test.threadId', undefined);
    expect(after).not.toBe(before);
    // An already-aborted signal never reaches a worker.
    await expect(
      p.run('test.spin', { ms: 10 }, [], AbortSignal.abort(new Error('late'))),
    ).rejects.toThrow('late');
  });

  it('a time limit ends a task that runs past it, counted from when a worker takes it, not while queued', async () => {
    const p = pool(1);
    const before = await p.run('test.threadId', undefined);
    const limit = (ms: number) => ({
      limit: { ms, error: () => new ApiError('processing_timeout', `over ${ms} ms`) },
    });
    const t0 = Date.now();
    // The first task holds the only worker for 1.5 s; the second waits that long in the queue,
    // then runs for 150 ms under a 1 s limit: it completes, since queue time does not count. (The
    // margins are wide so that a loaded machine, which may not schedule the worker at once, cannot
    // end a task early.)
    const first = p.run('test.spin', { ms: 1_500 }, [], undefined, limit(5_000));
    const second = p.run('test.spin', { ms: 150 }, [], undefined, limit(1_000));
    await expect(first).resolves.toBeGreaterThan(0);
    await expect(second).resolves.toBeGreaterThan(0);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1_640);
    expect(p.stats()).toMatchObject({ timedOut: 0, workers: 1 });

    // A task that never yields is ended at its limit with the limit's error; the pool carries on.
    const t1 = Date.now();
    const err = await p
      .run('test.spin', { ms: 30_000 }, [], undefined, limit(200))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'processing_timeout', detail: 'over 200 ms' });
    expect(Date.now() - t1).toBeGreaterThanOrEqual(190);
    expect(Date.now() - t1).toBeLessThan(5_000);
    expect(p.stats()).toMatchObject({ timedOut: 1, aborted: 0, workers: 0, busy: 0 });
    const after = await p.run('test.threadId', undefined);
    expect(after).not.toBe(before);
    // A task that finishes in time leaves no timer behind to end its worker later.
    await p.run('test.spin', { ms: 10 }, [], undefined, limit(1_000));
    await new Promise((r) => setTimeout(r, 1_300));
    expect(await p.run('test.threadId', undefined)).toBe(after);
    expect(p.stats().timedOut).toBe(1);
  });

  it('close rejects running and queued tasks', async () => {
    const p = pool(1);
    const running = p.run('test.spin', { ms: 30_000 }).catch((e: unknown) => e);
    const queued = p.run('test.spin', { ms: 10 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 50));
    await p.close();
    expect(await running).toBeInstanceOf(PoolClosedError);
    expect(await queued).toBeInstanceOf(PoolClosedError);
    await expect(p.run('test.spin', { ms: 1 })).rejects.toBeInstanceOf(PoolClosedError);
  });

  it('validates its size and heap limit', () => {
    expect(() => createWorkerPool({ size: 0 })).toThrow(/positive integer for size but received 0/);
    expect(() => createWorkerPool({ maxHeapMb: 8 })).toThrow(
      /integer of at least 16 for maxHeapMb but received 8/,
    );
  });
});
