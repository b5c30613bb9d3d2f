// Contract §4: after a crash, jobs found Started go back to Queued and run again; no work is lost
// and none is done twice in the store. A real process runs the job and is killed with SIGKILL.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { createJobRunner, type ApiJob, type JobRunner } from './job-runner';
import { JobsRepository } from './jobs.repository';
import { createWorkerPool, type WorkerPool } from './worker-pool';
import {
  createEffectsTable,
  seedOrgAndProject,
  stepsHandler,
  tempDb,
  waitFor,
  type TempDb,
} from './test-support';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const script = fileURLToPath(new URL('./crash-runner.test-support.ts', import.meta.url));

/** A runner in its own process on the test's database file (crash-runner.test-support.ts). */
function spawnRunner(env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', script, t.file], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (out.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out.stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((r) =>
    child.on('exit', (_code, sig) => r(sig)),
  );
  return { child, out, exited };
}

let t: TempDb;
let pool: WorkerPool | undefined;
let runner: JobRunner | undefined;

beforeEach(() => {
  t = tempDb();
});
afterEach(async () => {
  await runner?.stop();
  await pool?.close();
  t.cleanup();
});

it('resumes a job after its process is killed mid-job: Completed once, no effect stored twice', async () => {
  const { orgId, projectId } = await seedOrgAndProject(t.db);
  await createEffectsTable(t.db);
  const steps = 12;
  const job = (
    await new JobsRepository(t.db).insert({
      organization_id: orgId,
      project_id: projectId,
      type: 'steps',
      target_type: 'drawing',
      target_id: 'drw_resume',
      payload: { steps, stepMs: 60 },
    })
  ).row;

  const child = spawn(process.execPath, ['--import', 'tsx', script, t.file], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((r) =>
    child.on('exit', (_code, sig) => r(sig)),
  );

  const row = async () =>
    (await t.db.prepare('SELECT * FROM jobs WHERE id = ?').get(job.id)) as {
      status: string;
      attempts: number;
      progress_completed: number;
    };
  await waitFor(
    async () => (await row()).progress_completed >= 4,
    `the child process to do 4 steps (stderr: ${stderr})`,
    30_000,
  );
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  expect(stdout).toContain('"status":"Started"');

  // What the killed process left behind: Started, part of the work stored.
  expect(await row()).toMatchObject({ status: 'Started', attempts: 1 });
  const effects = async () =>
    (await t.db
      .prepare('SELECT step, attempt FROM test_effects WHERE job_id = ? ORDER BY step')
      .all(job.id)) as {
      step: number;
      attempt: number;
    }[];
  const doneBefore = (await effects()).length;
  expect(doneBefore).toBeGreaterThanOrEqual(4);
  expect(doneBefore).toBeLessThan(steps);

  // "Boot": this process starts a runner on the same database file.
  pool = createWorkerPool({ size: 1 });
  runner = createJobRunner({ db: t.db, pool, concurrency: 1 });
  runner.register('steps', stepsHandler(t.db));
  const events: ApiJob[] = [];
  runner.events.on('job', (j) => j.id === job.id && events.push(j));
  runner.start();
  await waitFor(
    async () => (await row()).status === 'Completed',
    'the resumed job to complete',
    30_000,
  );

  expect(events[0]).toMatchObject({ status: 'Queued', started_at: null }); // back to Queued first
  expect(events.filter((e) => e.status === 'Completed')).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({
    status: 'Completed',
    result: { steps },
    progress: { completed: steps, total: steps },
  });
  expect((await row()).attempts).toBe(2);
  // Every step stored exactly once; the second attempt did only what the first had not.
  const stored = await effects();
  expect(stored.map((e) => e.step)).toEqual(Array.from({ length: steps }, (_, i) => i));
  expect(stored.filter((e) => e.attempt === 1)).toHaveLength(doneBefore);
  expect(stored.filter((e) => e.attempt === 2)).toHaveLength(steps - doneBefore);
});

it('a job killed from outside again and again while it moves forward is never failed for it', async () => {
  const { orgId, projectId } = await seedOrgAndProject(t.db);
  await createEffectsTable(t.db);
  const steps = 10;
  const job = (
    await new JobsRepository(t.db).insert({
      organization_id: orgId,
      project_id: projectId,
      type: 'steps',
      target_type: 'drawing',
      target_id: 'drw_kills',
      payload: { steps, stepMs: 120 },
    })
  ).row;
  const row = async () =>
    (await t.db.prepare('SELECT * FROM jobs WHERE id = ?').get(job.id)) as {
      status: string;
      attempts: number;
      crashes: number;
      progress_completed: number;
    };
  // Six SIGKILLs, each once the process stored one more step than the last one left.
  for (let kill = 1; kill <= 6; kill++) {
    const before = (await row()).progress_completed;
    const r = spawnRunner();
    await waitFor(
      async () => (await row()).progress_completed > before,
      `a step after kill ${kill - 1} (stderr: ${r.out.stderr})`,
      30_000,
    );
    r.child.kill('SIGKILL');
    expect(await r.exited).toBe('SIGKILL');
    expect(await row()).toMatchObject({ status: 'Started', crashes: 0 });
  }
  pool = createWorkerPool({ size: 1 });
  runner = createJobRunner({ db: t.db, pool, concurrency: 1 });
  runner.register('steps', stepsHandler(t.db));
  runner.start();
  await waitFor(async () => (await row()).status === 'Completed', 'the job to complete', 30_000);
  expect(await row()).toMatchObject({ attempts: 7, crashes: 0 });
  const stored = (
    (await t.db
      .prepare('SELECT step FROM test_effects WHERE job_id = ? ORDER BY step')
      .all(job.id)) as { step: number }[]
  ).map((r) => r.step);
  expect(stored).toEqual(Array.from({ length: steps }, (_, i) => i)); // each step exactly once
}, 120_000);

it('a poison file that takes the process down fails with processor_crashed after 3 crashes, without a crash loop', async () => {
  const { orgId, projectId } = await seedOrgAndProject(t.db);
  const job = (
    await new JobsRepository(t.db).insert({
      organization_id: orgId,
      project_id: projectId,
      type: 'poison',
      target_type: 'drawing',
      target_id: 'drw_poison',
    })
  ).row;
  const row = async () =>
    (await t.db.prepare('SELECT status, crashes, error FROM jobs WHERE id = ?').get(job.id)) as {
      status: string;
      crashes: number;
      error: string | null;
    };
  // A supervisor: restart the service whenever it dies, as systemd or the desktop app would.
  const t0 = Date.now();
  const deaths: (NodeJS.Signals | null)[] = [];
  let r = spawnRunner({ CRASH_BACKOFF_MS: '300' });
  for (;;) {
    // Whichever comes first: the process dies, or the job is Failed.
    const ended = await new Promise<NodeJS.Signals | null>((resolve) => {
      const poll = setInterval(
        () => void row().then((x) => x.status === 'Failed' && done(null)),
        20,
      );
      const done = (sig: NodeJS.Signals | null) => {
        clearInterval(poll);
        resolve(sig);
      };
      void r.exited.then(done);
    });
    if ((await row()).status === 'Failed') break;
    deaths.push(ended);
    expect(deaths.length).toBeLessThanOrEqual(3);
    r = spawnRunner({ CRASH_BACKOFF_MS: '300' });
  }
  const seconds = (Date.now() - t0) / 1000;
  // Three deaths, each the worker's SIGSEGV taking the process down; the 4th boot fails the job.
  expect(deaths).toEqual(['SIGSEGV', 'SIGSEGV', 'SIGSEGV']);
  expect(seconds).toBeLessThan(45);
  const failed = await row();
  expect(failed.crashes).toBe(3);
  const error = JSON.parse(failed.error!) as Record<string, unknown>;
  expect(error).toMatchObject({
    type: '/problems/processor_crashed',
    title: 'File crashed the processor',
    status: 422,
    code: 'processor_crashed',
    instance: `/v1/jobs/${job.id}`,
  });
  expect(String(error.detail)).toMatch(
    /^The file crashed the processor: the service process died 3 times/,
  );
  // No crash loop: the process that failed it stays up and never runs the poison again.
  await new Promise((res) => setTimeout(res, 1500));
  expect(r.child.exitCode).toBeNull();
  expect(r.child.signalCode).toBeNull();
  expect(r.out.stdout).not.toContain('poisonRun');
  r.child.kill('SIGKILL');
  await r.exited;
}, 120_000);
