import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../domain/errors';
import { monotonicNow } from '../domain/clock';
import { newId } from '../domain/ids';
import {
  createJobRunner,
  JobAbortedError,
  toApiJob,
  type ApiJob,
  type JobLogger,
  type JobRunner,
  type JobRunnerOptions,
  type NewJob,
} from './job-runner';
import { JobsRepository } from './jobs.repository';
import { createWorkerPool, type WorkerPool } from './worker-pool';
import { TEST_REGISTRY_URL, type TestWorkerTasks } from './worker-tasks.test-support';
import {
  createEffectsTable,
  seedOrgAndProject,
  sleep,
  stepsHandler,
  tempDb,
  waitFor,
  type TempDb,
} from './test-support';

let t: TempDb;
let orgId: string;
let projectId: string;
let pool: WorkerPool<TestWorkerTasks>;
const runners: JobRunner<TestWorkerTasks>[] = [];

beforeEach(async () => {
  t = tempDb();
  ({ orgId, projectId } = await seedOrgAndProject(t.db));
  pool = createWorkerPool<TestWorkerTasks>({ size: 2, registryUrl: TEST_REGISTRY_URL });
});
afterEach(async () => {
  for (const r of runners.splice(0)) await r.stop({ abortGraceMs: 2000 });
  await pool.close();
  t.cleanup();
});

interface Logged {
  level: string;
  obj: object;
  msg: string | undefined;
}

function makeRunner(opts: Partial<JobRunnerOptions<TestWorkerTasks>> = {}) {
  const logs: Logged[] = [];
  const log: JobLogger = {
    info: (obj, msg) => logs.push({ level: 'info', obj, msg }),
    warn: (obj, msg) => logs.push({ level: 'warn', obj, msg }),
    error: (obj, msg) => logs.push({ level: 'error', obj, msg }),
  };
  const runner = createJobRunner<TestWorkerTasks>({ db: t.db, pool, concurrency: 2, log, ...opts });
  const events: ApiJob[] = [];
  runner.events.on('job', (job) => events.push(job));
  runners.push(runner);
  return { runner, events, logs };
}

const job = (over: Partial<NewJob> = {}): NewJob => ({
  organization_id: orgId,
  project_id: projectId,
  type: 'noop',
  target_type: 'drawing',
  target_id: 'drw_target',
  ...over,
});

const status = async (id: string) =>
  (await t.db.prepare('SELECT * FROM jobs WHERE id = ?').get(id)) as {
    status: string;
    attempts: number;
    result: string | null;
    error: string | null;
  };
const waitStatus = (id: string, s: string, timeoutMs?: number) =>
  waitFor(async () => (await status(id)).status === s, `job ${id} to be ${s}`, timeoutMs);

describe('job runner', () => {
  it('serializes a job exactly as contract §4 lists its fields', async () => {
    const { runner } = makeRunner();
    const row = await runner.enqueue(job({ payload: { a: 1 } }));
    const api = toApiJob(row);
    expect(Object.keys(api)).toEqual([
      'id',
      'project_id',
      'type',
      'status',
      'target_type',
      'target_id',
      'parent_id',
      'progress',
      'result',
      'error',
      'credits_charged',
      'created_at',
      'updated_at',
      'started_at',
      'finished_at',
    ]);
    expect(api).toMatchObject({
      id: row.id,
      project_id: projectId,
      status: 'Queued',
      parent_id: null,
      progress: { completed: 0, total: 0 },
      result: null,
      error: null,
      credits_charged: 0,
      started_at: null,
      finished_at: null,
    });
    expect(api.id).toMatch(/^job_/);
    expect(await runner.get(orgId, row.id)).toEqual(api);
    await expect((async () => await runner.get('org_someoneelse', row.id))()).rejects.toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });

  it('enqueues in the same transaction as the row the job acts on', async () => {
    const { runner, events } = makeRunner();
    const ran: string[] = [];
    runner.register('noop', (ctx) => {
      ran.push(ctx.job.target_id);
      return { target: ctx.job.target_id };
    });
    const create = (fail: boolean) =>
      t.db.transaction(async (tx) => {
        const id = newId('project');
        const now = monotonicNow();
        await tx
          .prepare(
            'INSERT INTO projects (id, organization_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
          )
          .run(id, orgId, 'p', now, now);
        const row = await runner.enqueue(job({ project_id: id, target_id: id }), tx);
        if (fail) throw new Error('validation failed after the insert');
        return { id, jobId: row.id };
      });
    let rolledBack: string | undefined;
    try {
      await create(true);
    } catch {
      rolledBack = 'yes';
    }
    expect(rolledBack).toBe('yes');
    const ok = await create(false);
    runner.start();
    await waitStatus(ok.jobId, 'Completed');
    // The rolled-back job never existed: no row, no run, no event.
    expect(await t.db.prepare('SELECT count(*) AS n FROM jobs').get()).toEqual({ n: 1 });
    expect(ran).toEqual([ok.id]);
    expect(new Set(events.map((e) => e.id))).toEqual(new Set([ok.jobId]));
    expect((await runner.get(orgId, ok.jobId)).result).toEqual({ target: ok.id });
  });

  it('runs a real handler that uses the worker pool, with a progress event per band', async () => {
    const { runner, events } = makeRunner();
    const width = 2048;
    const bands = 4;
    const bandHeight = 512;
    const makeBand = (b: number) => {
      const px = new Uint8Array(width * bandHeight);
      for (let i = 0; i < px.length; i++) px[i] = (i * 31 + b * 17) % 256;
      return px;
    };
    runner.register('ink', async (ctx) => {
      const { threshold } = ctx.payload as { threshold: number };
      let ink = 0;
      await ctx.progress(0, bands);
      for (let b = 0; b < bands; b++) {
        const px = makeBand(b);
        const out = await ctx.pool.run(
          'grey.threshold',
          { pixels: px, threshold },
          [px.buffer as ArrayBuffer],
          ctx.signal,
        );
        ink += out.ink;
        await ctx.progress(b + 1, bands);
      }
      return { ink };
    });
    let expected = 0;
    for (let b = 0; b < bands; b++) for (const v of makeBand(b)) if (v < 100) expected++;

    runner.start();
    const row = await runner.enqueue(job({ type: 'ink', payload: { threshold: 100 } }));
    await waitStatus(row.id, 'Completed');
    expect(await runner.get(orgId, row.id)).toMatchObject({
      status: 'Completed',
      result: { ink: expected },
      progress: { completed: bands, total: bands },
      error: null,
    });
    const mine = events.filter((e) => e.id === row.id);
    expect(mine.map((e) => e.status)).toEqual([
      'Queued',
      'Started',
      ...Array(bands + 1).fill('Started'),
      'Completed',
    ]);
    expect(mine.filter((e) => e.status === 'Started').map((e) => e.progress.completed)).toEqual([
      0, 0, 1, 2, 3, 4,
    ]);
    expect(mine.at(-1)!.finished_at).not.toBeNull();
  });

  it('fails a job with the ApiError it threw, or a generic internal_error that hides the message', async () => {
    const { runner, logs } = makeRunner();
    runner.register('bad-input', () => {
      throw new ApiError('validation_error', 'The template bbox lies outside the sheet.');
    });
    runner.register('bug', async () => {
      await sleep(1);
      throw new Error('secret /var/data/path exploded');
    });
    runner.start();
    const a = await runner.enqueue(job({ type: 'bad-input' }));
    const b = await runner.enqueue(job({ type: 'bug' }));
    await waitStatus(a.id, 'Failed');
    await waitStatus(b.id, 'Failed');
    expect((await runner.get(orgId, a.id)).error).toEqual({
      type: '/problems/validation_error',
      title: 'Validation error',
      status: 400,
      detail: 'The template bbox lies outside the sheet.',
      instance: `/v1/jobs/${a.id}`,
      code: 'validation_error',
    });
    const bug = await runner.get(orgId, b.id);
    expect(bug.error).toMatchObject({ code: 'internal_error', status: 500 });
    expect(JSON.stringify(bug)).not.toContain('secret');
    expect(
      logs.some(
        (l) =>
          l.level === 'error' && String((l.obj as { err?: Error }).err?.message).includes('secret'),
      ),
    ).toBe(true);
  });

  it('fails a job whose worker ran out of heap as resource_limit_exceeded, and the pool carries on', async () => {
    const small = createWorkerPool<TestWorkerTasks>({
      size: 1,
      registryUrl: TEST_REGISTRY_URL,
      maxHeapMb: 64,
    });
    try {
      const { runner } = makeRunner({ pool: small });
      runner.register('greedy', (ctx) =>
        ctx.pool.run('test.allocateForever', undefined, [], ctx.signal),
      );
      runner.start();
      const row = await runner.enqueue(job({ type: 'greedy' }));
      await waitStatus(row.id, 'Failed', 60_000);
      const failed = await runner.get(orgId, row.id);
      expect(failed.error).toMatchObject({
        code: 'resource_limit_exceeded',
        status: 422,
        type: '/problems/resource_limit_exceeded',
      });
      expect(failed.error?.detail).toContain('64 MiB');
      // A fresh worker serves the next task.
      expect(await small.run('sha256', { data: new Uint8Array([1, 2, 3]) })).toMatch(
        /^[0-9a-f]{64}$/,
      );
    } finally {
      await small.close();
    }
  }, 90_000);

  it('completes a parent after its 3 children at concurrency 1 (a waiting parent holds no slot)', async () => {
    const { runner } = makeRunner({ concurrency: 1 });
    let runningNow = 0;
    let maxRunning = 0;
    runner.register('pair', async (ctx) => {
      runningNow++;
      maxRunning = Math.max(maxRunning, runningNow);
      await sleep(20);
      runningNow--;
      return { pair: (ctx.payload as { n: number }).n };
    });
    runner.register('compare', async (ctx) => {
      const kids = [];
      for (const n of [1, 2, 3])
        kids.push(
          await ctx.createChild(`pair-${n}`, {
            type: 'pair',
            target_type: 'sheet',
            target_id: `sht_${n}`,
            payload: { n },
          }),
        );
      // Asking twice returns the same child: a resumed parent never duplicates work.
      expect(
        (
          await ctx.createChild('pair-1', {
            type: 'pair',
            target_type: 'sheet',
            target_id: 'sht_1',
          })
        ).id,
      ).toBe(kids[0]!.id);
      const done = await ctx.waitForChildren();
      return { pairs: done.map((c) => JSON.parse(c.result!) as unknown) };
    });
    runner.start();
    const parent = await runner.enqueue(job({ type: 'compare' }));
    await waitStatus(parent.id, 'Completed');
    const children = await runner.repository.children(parent.id);
    expect(children).toHaveLength(3);
    expect(children.every((c) => c.status === 'Completed')).toBe(true);
    expect(children.map((c) => c.project_id)).toEqual([projectId, projectId, projectId]);
    expect((await runner.get(orgId, children[0]!.id)).parent_id).toBe(parent.id);
    expect((await runner.get(orgId, parent.id)).result).toEqual({
      pairs: [{ pair: 1 }, { pair: 2 }, { pair: 3 }],
    });
    const p = (await runner.repository.getById(parent.id))!;
    for (const c of children) expect(c.finished_at! <= p.finished_at!).toBe(true);
    expect(maxRunning).toBe(1);
  });

  it('fails the parent when a child fails, listing the failed child, after every child ended', async () => {
    const { runner } = makeRunner();
    runner.register('pair', async (ctx) => {
      const { n } = ctx.payload as { n: number };
      await sleep(n * 30);
      if (n === 2) throw new ApiError('unsupported_media_type', 'Sheet 2 is not a readable image.');
      return { n };
    });
    // The parent does not wait explicitly: the runner still holds it until its children end.
    runner.register('compare', async (ctx) => {
      for (const n of [1, 2, 3]) {
        await ctx.createChild(`n${n}`, {
          type: 'pair',
          target_type: 'sheet',
          target_id: `sht_${n}`,
          payload: { n },
        });
      }
      return { overlay_count: 2 };
    });
    runner.start();
    const parent = await runner.enqueue(job({ type: 'compare' }));
    await waitStatus(parent.id, 'Failed');
    const kids = await runner.repository.children(parent.id);
    expect(kids.map((k) => k.status)).toEqual(['Completed', 'Failed', 'Completed']);
    const api = await runner.get(orgId, parent.id);
    expect(api.result).toEqual({
      overlay_count: 2,
      failed_children: [
        {
          id: kids[1]!.id,
          type: 'pair',
          target_type: 'sheet',
          target_id: 'sht_2',
          error: expect.objectContaining({ code: 'unsupported_media_type' }),
        },
      ],
    });
    expect(api.error).toMatchObject({ code: 'unsupported_media_type', status: 415 });
    expect(api.error!.detail).toContain(`1 of 3 child jobs failed (first: ${kids[1]!.id}`);
  });

  it('cancel reaches every descendant and aborts a running CPU task; canceled jobs stay canceled', async () => {
    const { runner, events } = makeRunner({ concurrency: 2 });
    const handlerEnds: string[] = [];
    runner.register('leaf', async (ctx) => {
      try {
        // A non-yielding loop in a worker: only terminating the worker stops it.
        await ctx.pool.run('test.spin', { ms: 60_000 }, [], ctx.signal);
        return { spun: true };
      } finally {
        handlerEnds.push(ctx.job.id);
      }
    });
    runner.register('branch', async (ctx) => {
      for (const k of ['x', 'y'])
        await ctx.createChild(k, { type: 'leaf', target_type: 'block', target_id: `blk_${k}` });
      await ctx.waitForChildren();
      return { branch: true };
    });
    runner.register('root', async (ctx) => {
      for (const k of ['a', 'b'])
        await ctx.createChild(k, { type: 'branch', target_type: 'sheet', target_id: `sht_${k}` });
      await ctx.waitForChildren();
      return { root: true };
    });
    runner.start();
    const root = await runner.enqueue(job({ type: 'root' }));
    // Both slots busy with spinning leaves; the other leaves are queued.
    await waitFor(() => pool.stats().busy === 2, 'two CPU tasks running');
    const tree = await runner.repository.descendants(root.id);
    expect(tree).toHaveLength(6); // 2 branches + 4 leaves (grandchildren)
    expect(tree.filter((r) => r.status === 'Started')).toHaveLength(4); // 2 waiting branches + 2 leaves

    const t0 = Date.now();
    const answer = await runner.cancel(orgId, root.id);
    expect(answer.status).toBe('Canceled');
    const all = [root.id, ...tree.map((r) => r.id)];
    for (const id of all) expect((await status(id)).status).toBe('Canceled');
    // The running tasks were aborted: their workers were terminated, well before 60 s.
    await waitFor(() => handlerEnds.length === 2, 'running leaf handlers to return');
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(pool.stats()).toMatchObject({ aborted: 2, busy: 0 });
    // Nothing overwrote Canceled, and every canceled job was announced.
    await sleep(50);
    for (const id of all)
      expect(await status(id)).toMatchObject({ status: 'Canceled', result: null, error: null });
    const canceledEvents = new Set(events.filter((e) => e.status === 'Canceled').map((e) => e.id));
    expect(canceledEvents).toEqual(new Set(all));
    // Already terminal: 409 conflict; another organization: 404.
    await expect((async () => await runner.cancel(orgId, root.id))()).rejects.toThrow(
      expect.objectContaining({ code: 'conflict', status: 409 }),
    );
    await expect((async () => await runner.cancel('org_someoneelse', root.id))()).rejects.toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });

  it('a handler that ignores the cancel and returns later cannot overwrite Canceled', async () => {
    const { runner } = makeRunner();
    let sawSignal: unknown;
    let returned = false;
    runner.register('stubborn', async (ctx) => {
      await sleep(300); // ignores ctx.signal on purpose
      sawSignal = ctx.signal.reason;
      returned = true;
      return { finished: 'anyway' };
    });
    runner.start();
    const j = await runner.enqueue(job({ type: 'stubborn' }));
    await waitStatus(j.id, 'Started');
    await runner.cancel(orgId, j.id);
    await waitFor(() => returned, 'the handler to return');
    await sleep(50);
    expect(sawSignal).toBeInstanceOf(JobAbortedError);
    expect((sawSignal as JobAbortedError).reason).toBe('canceled');
    expect(await runner.get(orgId, j.id)).toMatchObject({
      status: 'Canceled',
      result: null,
      error: null,
    });
  });

  it('never runs more handlers at once than its concurrency', async () => {
    const { runner } = makeRunner({ concurrency: 2 });
    let now = 0;
    let max = 0;
    runner.register('work', async () => {
      now++;
      max = Math.max(max, now);
      await sleep(60);
      now--;
      return null;
    });
    runner.start();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await runner.enqueue(job({ type: 'work' }))).id);
    for (const id of ids) await waitStatus(id, 'Completed');
    expect(max).toBe(2);
  });

  it('graceful stop leaves a running job Started (not Failed), and the next start runs it again', async () => {
    await createEffectsTable(t.db);
    const first = makeRunner();
    first.runner.register('steps', stepsHandler(t.db));
    first.runner.start();
    const j = await first.runner.enqueue(job({ type: 'steps', payload: { steps: 6, stepMs: 80 } }));
    await waitFor(
      async () => (await first.runner.get(orgId, j.id)).progress.completed >= 2,
      'two steps done',
    );
    await first.runner.stop();
    const left = await runner_row(j.id);
    expect(left).toMatchObject({ status: 'Started', attempts: 1, error: null });
    expect(first.logs.some((l) => l.msg?.includes('interrupted by shutdown'))).toBe(true);
    const doneBefore = (await effects(j.id)).length;
    expect(doneBefore).toBeGreaterThanOrEqual(2);
    expect(doneBefore).toBeLessThan(6);

    const second = makeRunner();
    second.runner.register('steps', stepsHandler(t.db));
    second.runner.start();
    await waitStatus(j.id, 'Completed');
    expect(second.events.filter((e) => e.id === j.id)[0]).toMatchObject({ status: 'Queued' });
    expect((await runner_row(j.id)).attempts).toBe(2);
    const steps = await effects(j.id);
    expect(steps.map((e) => e.step)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(steps.filter((e) => e.attempt === 2)).toHaveLength(6 - doneBefore);
  });

  it('stop with drain lets running jobs finish and starts nothing new', async () => {
    const { runner } = makeRunner({ concurrency: 1 });
    runner.register('work', async () => {
      await sleep(150);
      return { ok: true };
    });
    runner.start();
    const a = await runner.enqueue(job({ type: 'work' }));
    const b = await runner.enqueue(job({ type: 'work' }));
    await waitStatus(a.id, 'Started');
    await runner.stop({ drain: true });
    expect((await status(a.id)).status).toBe('Completed');
    expect(await status(b.id)).toMatchObject({ status: 'Queued', attempts: 0 });
  });

  it('fails a job whose worker thread crashed during its task as processor_crashed, at once', async () => {
    const { runner } = makeRunner();
    let ran = 0;
    runner.register('crashy', (ctx) => {
      ran++;
      return ctx.pool.run('test.exit', undefined, [], ctx.signal);
    });
    runner.start();
    const row = await runner.enqueue(job({ type: 'crashy' }));
    await waitStatus(row.id, 'Failed', 30_000);
    const failed = await runner.get(orgId, row.id);
    expect(failed.error).toMatchObject({
      code: 'processor_crashed',
      status: 422,
      type: '/problems/processor_crashed',
      title: 'File crashed the processor',
    });
    expect(failed.error?.detail).toMatch(/^The file crashed the processor: .*'test\.exit'.*code 7/);
    expect(ran).toBe(1); // no retry, no crash loop
    // The pool carries on with a fresh worker.
    expect(await pool.run('test.threadId', undefined)).toBeGreaterThan(0);
  }, 60_000);
});

describe('job runner after a process death (crash-attribution.ts)', () => {
  /**
   * What a process that died leaves behind: a runner boot that never ended, and the job Started
   * under it, claimed when its progress stood at `claimedAt` and now standing at `progress`.
   */
  async function diedWhileRunning(
    ids: string[],
    o: { crashes?: number; suspect?: boolean; claimedAt?: number; progress?: number } = {},
  ): Promise<string> {
    const boot = `boot-${newId('job')}`;
    await t.db
      .prepare('INSERT INTO runner_boots (id, started_at) VALUES (?, ?)')
      .run(boot, monotonicNow());
    for (const id of ids)
      await t.db
        .prepare(
          `UPDATE jobs SET status = 'Started', attempts = attempts + 1, started_at = ?, claim_boot = ?,
             claim_progress = ?, progress_completed = ?, progress_total = 8, crashes = ?, suspect = ?
           WHERE id = ?`,
        )
        .run(
          monotonicNow(),
          boot,
          o.claimedAt ?? 3,
          o.progress ?? o.claimedAt ?? 3,
          o.crashes ?? 0,
          o.suspect ? 1 : 0,
          id,
        );
    return boot;
  }
  const claimState = async (id: string) =>
    (await t.db
      .prepare(
        'SELECT status, attempts, crashes, suspect, not_before, error FROM jobs WHERE id = ?',
      )
      .get(id)) as {
      status: string;
      attempts: number;
      crashes: number;
      suspect: number;
      not_before: string | null;
      error: string | null;
    };

  it('fails a job at its 3rd death in a row while running alone without progress, without running it again', async () => {
    const { runner } = makeRunner();
    let ran = 0;
    runner.register('poison', () => {
      ran++;
      return null;
    });
    const j = await runner.enqueue(job({ type: 'poison' }));
    await diedWhileRunning([j.id], { crashes: 2, suspect: true });
    runner.start();
    await waitStatus(j.id, 'Failed');
    expect(ran).toBe(0);
    const failed = await runner.get(orgId, j.id);
    expect(failed.error).toMatchObject({ code: 'processor_crashed', status: 422 });
    expect(failed.error?.detail).toMatch(
      /^The file crashed the processor: .* died 3 times in a row/,
    );
    expect((await claimState(j.id)).crashes).toBe(3);
  });

  it('never blames a job that made progress in the claim the process died in', async () => {
    const { runner } = makeRunner();
    runner.register('steady', async (ctx) => {
      await ctx.progress(8, 8);
      return null;
    });
    const j = await runner.enqueue(job({ type: 'steady' }));
    await diedWhileRunning([j.id], { crashes: 2, suspect: true, claimedAt: 3, progress: 4 });
    runner.start();
    await waitStatus(j.id, 'Completed');
    expect(await claimState(j.id)).toMatchObject({ crashes: 0, suspect: 0, attempts: 2 });
  });

  it('counts a death while running alone without progress, and backs off before the next claim', async () => {
    const { runner } = makeRunner({ crashPolicy: { backoffMs: 400 } });
    const claimedAt: number[] = [];
    runner.register('slow', () => {
      claimedAt.push(Date.now());
      return null;
    });
    const j = await runner.enqueue(job({ type: 'slow' }));
    await diedWhileRunning([j.id]);
    const t0 = Date.now();
    runner.start();
    const queued = await claimState(j.id);
    expect(queued).toMatchObject({ status: 'Queued', crashes: 1, suspect: 1 });
    expect(Date.parse(queued.not_before!) - t0).toBeGreaterThanOrEqual(350);
    await waitStatus(j.id, 'Completed');
    expect(claimedAt[0]! - t0).toBeGreaterThanOrEqual(390);
  });

  it('does not count a death shared with other running jobs, but runs each suspect alone next', async () => {
    const { runner } = makeRunner({ concurrency: 2 });
    let now = 0;
    let most = 0;
    runner.register('work', async (ctx) => {
      most = Math.max(most, ++now);
      await sleep(80);
      now--;
      if ((ctx.payload as { progress?: boolean }).progress) await ctx.progress(8, 8);
      return null;
    });
    const a = await runner.enqueue(job({ type: 'work' }));
    const b = await runner.enqueue(job({ type: 'work' }));
    await diedWhileRunning([a.id, b.id]);
    runner.start();
    await waitStatus(a.id, 'Completed');
    await waitStatus(b.id, 'Completed');
    expect(most).toBe(1); // suspects never ran side by side
    expect(await claimState(a.id)).toMatchObject({ crashes: 0, suspect: 1 });
    expect(await claimState(b.id)).toMatchObject({ crashes: 0, suspect: 1 });
  });

  it('clears the suspicion of a job that was not running when the process died', async () => {
    const { runner } = makeRunner();
    runner.register('work', () => null);
    const j = await runner.enqueue(job({ type: 'work' }));
    // Two deaths were blamed on it and it was backing off for a minute when the process died again.
    await t.db
      .prepare('UPDATE jobs SET crashes = 2, suspect = 1, not_before = ? WHERE id = ?')
      .run(new Date(Date.now() + 60_000).toISOString(), j.id);
    await diedWhileRunning([]);
    runner.start();
    await waitStatus(j.id, 'Completed'); // at once: no back-off left
    expect(await claimState(j.id)).toMatchObject({ crashes: 0, suspect: 0, not_before: null });
  });

  it('a clean stop never counts: a job left Started by a stopped runner runs again as it was', async () => {
    await createEffectsTable(t.db);
    const first = makeRunner();
    first.runner.register('steps', stepsHandler(t.db));
    const j = await first.runner.enqueue(
      job({ type: 'steps', payload: { steps: 4, stepMs: 400 } }),
    );
    await t.db.prepare('UPDATE jobs SET crashes = 2, suspect = 1 WHERE id = ?').run(j.id);
    first.runner.start();
    await waitStatus(j.id, 'Started');
    await first.runner.stop(); // before its first step: no progress
    expect(await claimState(j.id)).toMatchObject({ status: 'Started', crashes: 2 });

    const second = makeRunner();
    second.runner.register('steps', stepsHandler(t.db));
    second.runner.start();
    await waitStatus(j.id, 'Completed', 30_000);
    expect(await claimState(j.id)).toMatchObject({ attempts: 2, crashes: 0 });
  });

  it('restarts that interrupt a job between its steps never fail it, however many', async () => {
    await createEffectsTable(t.db);
    const steps = 8;
    const j = (
      await new JobsRepository(t.db).insert(job({ type: 'steps', payload: { steps, stepMs: 30 } }))
    ).row;
    // Eight process deaths, each after the job moved forward by one step: none is its fault.
    for (let death = 1; death < steps; death++) {
      const r = makeRunner({ concurrency: 1 });
      r.runner.register('steps', stepsHandler(t.db));
      r.runner.start();
      await waitFor(async () => (await effects(j.id)).length >= death, `step ${death}`);
      await r.runner.stop({ abortGraceMs: 2000 });
      // Pretend the process died instead of stopping: its boot never ended.
      await t.db
        .prepare(
          "UPDATE runner_boots SET ended_at = NULL, end_reason = NULL WHERE end_reason = 'stopped'",
        )
        .run();
      if ((await runner_row(j.id)).status === 'Completed') break;
      expect(await claimState(j.id)).toMatchObject({ status: 'Started', crashes: 0 });
    }
    const last = makeRunner();
    last.runner.register('steps', stepsHandler(t.db));
    last.runner.start();
    await waitStatus(j.id, 'Completed');
    expect((await effects(j.id)).map((e) => e.step)).toEqual(
      Array.from({ length: steps }, (_, i) => i),
    );
    expect(await claimState(j.id)).toMatchObject({ crashes: 0, error: null });
  });
});

async function runner_row(id: string) {
  return (await t.db.prepare('SELECT status, attempts, error FROM jobs WHERE id = ?').get(id)) as {
    status: string;
    attempts: number;
    error: string | null;
  };
}

async function effects(jobId: string) {
  return (await t.db
    .prepare('SELECT step, attempt FROM test_effects WHERE job_id = ? ORDER BY step')
    .all(jobId)) as { step: number; attempt: number }[];
}
