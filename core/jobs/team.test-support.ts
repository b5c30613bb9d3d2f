// Team-mode test support: cheap synthetic jobs run by real worker processes over one PostgreSQL
// database and the BullMQ queue (team-queue.test.ts, reliability/team-chaos.ts). The handlers
// record what they do in test tables, so a test can tell what happened exactly once:
//
// - `team_effects (job_id, step, attempt)`: one row per step of a `steps` job, written in the
//   step's transaction behind `ctx.fence(tx)`. A re-run skips steps already stored, so a job has
//   exactly `steps` rows unless a run that lost the job wrote one (fencing broken).
// - `team_terminal (job_id, status)`: written by the terminal hook (where Blueline settles
//   credits, contract §7); one row per job means "terminal exactly once, charged once".
import type { Db } from '../store/db';
import { createJobRunner, type JobHandler, type JobRunner, type JobLogger } from './job-runner';
import type { JobDispatcher } from './dispatcher';
import type { JobChangeFeed } from './pg-job-events';
import type { WorkerPool } from './worker-pool';

export async function createTeamTables(db: Db): Promise<void> {
  await db.exec(`
    CREATE TABLE IF NOT EXISTS team_effects (
      job_id TEXT NOT NULL, step BIGINT NOT NULL, attempt BIGINT NOT NULL, pid BIGINT NOT NULL);
    CREATE TABLE IF NOT EXISTS team_terminal (
      job_id TEXT NOT NULL, status TEXT NOT NULL, pid BIGINT NOT NULL,
      at TIMESTAMPTZ NOT NULL DEFAULT now());
  `);
}

export interface StepsPayload {
  steps: number;
  /** Time each step takes (a sleep: the test machine has 2 cores). */
  ms: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

/** Prints one JSON line (worker processes talk to the test through stdout). */
export const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);

export function stepsHandler(db: Db): JobHandler<StepsPayload> {
  return async (ctx) => {
    const { steps, ms } = ctx.payload;
    say({ claimed: ctx.job.id, attempt: ctx.job.attempts, pid: process.pid });
    const done = Number(
      (
        (await db
          .prepare('SELECT count(*) AS n FROM team_effects WHERE job_id = ?')
          .get(ctx.job.id)) as { n: number }
      ).n,
    );
    for (let step = done; step < steps; step++) {
      await sleep(ms, ctx.signal);
      await db.transaction(async (tx) => {
        await ctx.fence(tx);
        await tx
          .prepare('INSERT INTO team_effects (job_id, step, attempt, pid) VALUES (?, ?, ?, ?)')
          .run(ctx.job.id, step, ctx.job.attempts, process.pid);
      });
      await ctx.progress(step + 1, steps);
      say({ step: ctx.job.id, n: step + 1, attempt: ctx.job.attempts });
    }
    return { steps };
  };
}

/** A parent of `children` steps jobs. */
export function parentHandler(): JobHandler<{ children: number; steps: number; ms: number }> {
  return async (ctx) => {
    const { children, steps, ms } = ctx.payload;
    for (let i = 0; i < children; i++)
      await ctx.createChild(`c${i}`, {
        type: 'steps',
        target_type: 'sheet',
        target_id: `${ctx.job.target_id}-c${i}`,
        payload: { steps, ms },
      });
    const done = await ctx.waitForChildren();
    return { children: done.length };
  };
}

export function createTeamTestRunner(opts: {
  db: Db;
  pool: WorkerPool;
  dispatcher: JobDispatcher;
  feed: JobChangeFeed;
  concurrency: number;
  sweepIntervalMs?: number;
  log?: JobLogger;
}): JobRunner {
  const runner = createJobRunner({
    db: opts.db,
    pool: opts.pool,
    concurrency: opts.concurrency,
    dispatcher: opts.dispatcher,
    feed: opts.feed,
    ...(opts.sweepIntervalMs ? { sweepIntervalMs: opts.sweepIntervalMs } : {}),
    ...(opts.log ? { log: opts.log } : {}),
    hooks: {
      onTerminal: async (row, tx) => {
        await tx
          .prepare('INSERT INTO team_terminal (job_id, status, pid) VALUES (?, ?, ?)')
          .run(row.id, row.status, process.pid);
      },
    },
  });
  runner.register('steps', stepsHandler(opts.db));
  runner.register('parent', parentHandler());
  return runner;
}
