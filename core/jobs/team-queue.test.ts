// Team mode's queue with real worker processes (issue 21, items 3-4): BullMQ on PostgreSQL delivers
// jobs of the `jobs` table to `node` processes running team-worker.test-support.ts; this process is
// the API (it enqueues, cancels and follows events, and runs no job). Kill, stop and cancel are real
// signals and real cross-process notifications. Assertions are on final states only (no timing).
//
// Needs PostgreSQL: $BLUELINE_TEST_DATABASE (scripts/pg-test-cluster.sh start prints one). Without
// it the file is skipped, saying so, except under CI=true, where it starts its own throwaway cluster
// rather than skip.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PgDb } from '../store/pg-db';
import { openPostgres } from '../store/pg-db';
import { createBullmqDispatcher, migrateQueueSchema } from './bullmq-dispatcher';
import { createPgJobFeed } from './pg-job-events';
import { createWorkerPool } from './worker-pool';
import { createTeamTables, createTeamTestRunner } from './team.test-support';
import {
  createTeamDatabase,
  spawnTeamWorker,
  teamTestServer,
  until,
  type SpawnedWorker,
} from './team.process.test-support';
import type { ApiJob, JobRunner } from './job-runner';
import type { JobRow } from './jobs.repository';

const server = teamTestServer();
if (!server)
  console.warn(
    'team-queue.test.ts skipped: set BLUELINE_TEST_DATABASE=postgres://… (scripts/pg-test-cluster.sh start prints one) to run the team-mode queue tests.',
  );

const ORG = 'org_team_test';

// After every describe of the file (a cluster started here under CI=true stops once).
afterAll(() => server?.stop());

describe.skipIf(!server)('team mode: jobs through the queue to worker processes', () => {
  let db: PgDb;
  let api: JobRunner;
  let drop: () => Promise<void>;
  let url: string;
  const workers: SpawnedWorker[] = [];
  const events: ApiJob[] = [];

  beforeAll(async () => {
    const created = await createTeamDatabase(server!.url);
    url = created.url;
    drop = created.drop;
    db = await openPostgres(url, { max: 4 });
    await migrateQueueSchema(url);
    await createTeamTables(db);
    // This process is the API: it enqueues and cancels, runs nothing (work: false).
    api = createTeamTestRunner({
      db,
      pool: createWorkerPool({ size: 1 }),
      dispatcher: createBullmqDispatcher({ url, poolMax: 2 }),
      feed: createPgJobFeed(url),
      concurrency: 1,
      sweepIntervalMs: 2000,
    });
    api.events.on('job', (j) => events.push(j));
    await api.start({ work: false });
  }, 60_000);

  // Each test starts with no worker of an earlier one alive (else it might take this test's jobs).
  afterEach(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
  }, 60_000);

  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await api?.stop();
    await db?.close();
    await drop?.();
  }, 60_000);

  const worker = (env: Record<string, string> = {}) => {
    const w = spawnTeamWorker(url, env);
    workers.push(w);
    return w;
  };
  const ready = (w: SpawnedWorker) => w.waitFor((l) => l.ready !== undefined, 60_000);
  const row = async (id: string) => (await api.repository.getById(id))!;
  const terminal = (id: string, ms = 90_000) =>
    until(
      `job ${id} to end`,
      async () => {
        const r = await row(id);
        return ['Completed', 'Failed', 'Canceled'].includes(r.status) ? r : undefined;
      },
      ms,
    );
  const effects = async (id: string) =>
    (await db
      .prepare(
        'SELECT step, attempt, pid FROM team_effects WHERE job_id = ? ORDER BY step, attempt',
      )
      .all(id)) as { step: number; attempt: number; pid: number }[];
  const terminalRows = async (id: string) =>
    (await db.prepare('SELECT status, pid FROM team_terminal WHERE job_id = ?').all(id)) as {
      status: string;
      pid: number;
    }[];
  const enqueueSteps = async (steps: number, ms: number, target = 'd1'): Promise<JobRow> =>
    await api.enqueue({
      organization_id: ORG,
      type: 'steps',
      target_type: 'drawing',
      target_id: target,
      payload: { steps, ms },
    });
  const expectStepsOnce = async (id: string, steps: number) => {
    const e = await effects(id);
    expect(e.map((x) => x.step)).toEqual(Array.from({ length: steps }, (_, i) => i));
    expect(await terminalRows(id)).toHaveLength(1);
  };

  it('runs a job on a worker and the API process hears every change (SSE sees it)', async () => {
    const w = worker();
    await ready(w);
    const job = await enqueueSteps(3, 50);
    const done = await terminal(job.id);
    expect(done.status).toBe('Completed');
    await expectStepsOnce(job.id, 3);
    // Events of a job run in another process reach this one, in order, ending with Completed.
    await until(
      'the Completed event',
      async () => events.some((e) => e.id === job.id && e.status === 'Completed'),
      10_000,
    );
    const seen = events.filter((e) => e.id === job.id).map((e) => e.status);
    expect(seen[0]).toBe('Queued');
    expect(seen).toContain('Started');
    expect(seen.indexOf('Started')).toBeLessThan(seen.indexOf('Completed'));
    expect(seen.filter((s) => s === 'Completed')).toHaveLength(1);
  });

  it('a worker SIGKILLed mid-job: another worker finishes it, each step stored once', async () => {
    const a = worker();
    const b = worker();
    await Promise.all([ready(a), ready(b)]);
    const job = await enqueueSteps(8, 250);
    // Whichever worker took it: kill it after it stored two steps.
    const first = await until(
      'a worker to store two steps',
      async () => (await effects(job.id)).length >= 2 && (await effects(job.id))[0],
      60_000,
    );
    const victim = [a, b].find((w) => w.pid === first.pid)!;
    victim.kill('SIGKILL');
    await victim.exited;
    const done = await terminal(job.id);
    expect(done.status).toBe('Completed');
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    await expectStepsOnce(job.id, 8);
    const pids = new Set((await effects(job.id)).map((e) => e.pid));
    expect(pids.size).toBeGreaterThanOrEqual(2); // the survivor finished it
    for (const w of [a, b]) w.kill('SIGTERM');
    await Promise.all([a.exited, b.exited]);
  }, 120_000);

  it('a worker killed 6 times on one job never fails it: it completes once a worker lets it', async () => {
    const job = await enqueueSteps(40, 150);
    let kills = 0;
    while (kills < 6) {
      const w = worker();
      const before = (await effects(job.id)).length;
      // Let it store at least one more step (so this is mid-job), then kill it.
      await until(
        'the worker to store a step',
        async () => (await effects(job.id)).length > before,
        60_000,
      );
      w.kill('SIGKILL');
      await w.exited;
      kills++;
      expect((await row(job.id)).status).toBe('Started');
    }
    const last = worker();
    const done = await terminal(job.id, 120_000);
    expect(done.status).toBe('Completed');
    expect(done.attempts).toBeGreaterThanOrEqual(7);
    await expectStepsOnce(job.id, 40);
    last.kill('SIGTERM');
    await last.exited;
  }, 300_000);

  it('a worker stopped past its lease, then resumed, writes nothing', async () => {
    const a = worker();
    await ready(a);
    const job = await enqueueSteps(10, 200);
    await until('two steps', async () => (await effects(job.id)).length >= 2, 60_000);
    a.kill('SIGSTOP');
    const stoppedAt = await effects(job.id);
    const zombieAttempt = stoppedAt[0]!.attempt;
    // Another worker takes it over once the lease ran out, and finishes it.
    const b = worker();
    const done = await terminal(job.id);
    expect(done.status).toBe('Completed');
    expect(done.attempts).toBeGreaterThan(zombieAttempt);
    a.kill('SIGCONT');
    // The zombie tries its next write, is refused, and says so.
    await a.waitFor(
      (l) => l.log === 'warn' && l.job_id === job.id && String(l.msg).startsWith('Job lost'),
      60_000,
    );
    const after = await effects(job.id);
    expect(after.filter((e) => e.attempt === zombieAttempt)).toEqual(
      stoppedAt.filter((e) => e.attempt === zombieAttempt),
    );
    await expectStepsOnce(job.id, 10);
    expect((await row(job.id)).status).toBe('Completed');
    for (const w of [a, b]) w.kill('SIGTERM');
    await Promise.all([a.exited, b.exited]);
  }, 180_000);

  it('cancel in the API process stops the job running on a worker, and every descendant', async () => {
    const w = worker({ TEAM_CONCURRENCY: '3' });
    await ready(w);
    const parent = await api.enqueue({
      organization_id: ORG,
      type: 'parent',
      target_type: 'drawing',
      target_id: 'p1',
      payload: { children: 2, steps: 200, ms: 100 },
    });
    await until(
      'both children running',
      async () => {
        const kids = await api.repository.children(parent.id);
        return kids.length === 2 && kids.every((k) => k.status === 'Started');
      },
      60_000,
    );
    const kids = await api.repository.children(parent.id);
    await api.cancel(ORG, parent.id);
    for (const k of kids) await w.waitFor((l) => l.claimed === k.id, 1000); // it was running there
    // The worker aborts its handlers: no step is stored after the cancel committed.
    const frozen = await Promise.all(kids.map((k) => effects(k.id)));
    await new Promise((r) => setTimeout(r, 1500));
    expect(await Promise.all(kids.map((k) => effects(k.id)))).toEqual(frozen);
    for (const id of [parent.id, ...kids.map((k) => k.id)]) {
      expect((await row(id)).status).toBe('Canceled');
      expect(await terminalRows(id)).toHaveLength(1);
    }
    w.kill('SIGTERM');
    expect(await w.exited).toBe(0);
  }, 120_000);

  it('a parent gives its slot back while its children run (one slot, no deadlock)', async () => {
    const w = worker({ TEAM_CONCURRENCY: '1' });
    await ready(w);
    const parents = await Promise.all(
      [0, 1, 2].map((i) =>
        api.enqueue({
          organization_id: ORG,
          type: 'parent',
          target_type: 'drawing',
          target_id: `q${i}`,
          payload: { children: 3, steps: 1, ms: 10 },
        }),
      ),
    );
    for (const p of parents) {
      const done = await terminal(p.id);
      expect(done.status).toBe('Completed');
      expect(JSON.parse(done.result!)).toEqual({ children: 3 });
      expect(await terminalRows(p.id)).toHaveLength(1);
      for (const k of await api.repository.children(p.id)) await expectStepsOnce(k.id, 1);
    }
    w.kill('SIGTERM');
    await w.exited;
  }, 120_000);
});

describe.skipIf(!server)('team mode: serve and worker refuse a schema they do not know', () => {
  it('exit 3 on an unmigrated database, 0 after migrate, 1 on a newer one', async () => {
    const { url, drop } = await createTeamDatabase(server!.url);
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'core/cli/main.ts', ...args], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        encoding: 'utf8',
        env: { ...process.env, BLUELINE_DATABASE_URL: '', BLUELINE_STORAGE_URL: '' },
      });
    // Nothing listens on port 9 of loopback: the schema is refused before storage is reached.
    const storage = 's3://blueline-test/x?endpoint=http://127.0.0.1:9';
    const dataDir = mkdtempSync(path.join(tmpdir(), 'bl-team-cli-'));
    try {
      const unmigrated = cli(
        'worker',
        '--database',
        url,
        '--storage',
        storage,
        '--data-dir',
        dataDir,
      );
      expect(unmigrated.status).toBe(3);
      expect(unmigrated.stderr).toContain(
        'The database is at schema version 0 (not migrated); this Blueline needs',
      );
      expect(unmigrated.stderr).toContain('run `blueline migrate --database URL` first');
      expect(cli('migrate', '--database', url, '--check').status).toBe(3);
      const migrated = cli('migrate', '--database', url);
      expect(migrated.status).toBe(0);
      expect(migrated.stdout).toMatch(
        /applied \d+ migrations; schema version \d+; job queue schema version \d+\./,
      );
      expect(cli('migrate', '--database', url, '--check').status).toBe(0);
      const pgDb = await openPostgres(url, { migrate: false, max: 1 });
      await pgDb
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
        .run(99, 'future', new Date().toISOString());
      await pgDb.close();
      for (const cmd of ['worker', 'serve']) {
        const newer = cli(
          cmd,
          '--database',
          url,
          '--storage',
          storage,
          '--data-dir',
          dataDir,
          '--no-warmup',
          ...(cmd === 'serve' ? ['--no-web', '--port', '0'] : []),
        );
        expect(newer.status, newer.stderr).toBe(1);
        expect(newer.stderr).toContain('is at schema version 99');
        expect(newer.stderr).toContain('newer than this Blueline');
      }
      expect(cli('migrate', '--database', url).status).toBe(1);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await drop();
    }
  }, 180_000);
});
