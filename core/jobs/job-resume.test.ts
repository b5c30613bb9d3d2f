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
  const { orgId, projectId } = seedOrgAndProject(t.db);
  createEffectsTable(t.db);
  const steps = 12;
  const job = new JobsRepository(t.db).insert({
    organization_id: orgId,
    project_id: projectId,
    type: 'steps',
    target_type: 'drawing',
    target_id: 'drw_resume',
    payload: { steps, stepMs: 60 },
  }).row;

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

  const row = () =>
    t.db.prepare('SELECT * FROM jobs WHERE id = ?').get(job.id) as {
      status: string;
      attempts: number;
      progress_completed: number;
    };
  await waitFor(
    () => row().progress_completed >= 4,
    `the child process to do 4 steps (stderr: ${stderr})`,
    30_000,
  );
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  expect(stdout).toContain('"status":"Started"');

  // What the killed process left behind: Started, part of the work stored.
  expect(row()).toMatchObject({ status: 'Started', attempts: 1 });
  const effects = () =>
    t.db
      .prepare('SELECT step, attempt FROM test_effects WHERE job_id = ? ORDER BY step')
      .all(job.id) as {
      step: number;
      attempt: number;
    }[];
  const doneBefore = effects().length;
  expect(doneBefore).toBeGreaterThanOrEqual(4);
  expect(doneBefore).toBeLessThan(steps);

  // "Boot": this process starts a runner on the same database file.
  pool = createWorkerPool({ size: 1 });
  runner = createJobRunner({ db: t.db, pool, concurrency: 1 });
  runner.register('steps', stepsHandler(t.db));
  const events: ApiJob[] = [];
  runner.events.on('job', (j) => j.id === job.id && events.push(j));
  runner.start();
  await waitFor(() => row().status === 'Completed', 'the resumed job to complete', 30_000);

  expect(events[0]).toMatchObject({ status: 'Queued', started_at: null }); // back to Queued first
  expect(events.filter((e) => e.status === 'Completed')).toHaveLength(1);
  expect(events.at(-1)).toMatchObject({
    status: 'Completed',
    result: { steps },
    progress: { completed: steps, total: steps },
  });
  expect(row().attempts).toBe(2);
  // Every step stored exactly once; the second attempt did only what the first had not.
  const stored = effects();
  expect(stored.map((e) => e.step)).toEqual(Array.from({ length: steps }, (_, i) => i));
  expect(stored.filter((e) => e.attempt === 1)).toHaveLength(doneBefore);
  expect(stored.filter((e) => e.attempt === 2)).toHaveLength(steps - doneBefore);
});
