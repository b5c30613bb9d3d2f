import type { ObjectStore } from './blobs/object-store';
import { createJobSystem } from './job-system';
import { createBullmqDispatcher, dispatcherTimingsFromEnv } from './jobs/bullmq-dispatcher';
import type { JobRunner } from './jobs/job-runner';
import { createPgJobFeed } from './jobs/pg-job-events';
import { createWorkerPool, type WorkerPool } from './jobs/worker-pool';
import { WORKER_WARMUP } from './jobs/ingest-in-pool';
import { DEFAULT_CONFIG, type Logger } from './services/context';
import { openPostgres, type PgDb } from './store/pg-db';

// A team-mode worker process (`blueline worker`, contract §11): the job handlers over the shared
// PostgreSQL store and object storage, fed by the queue; no HTTP. Any number of them, on any
// machines; a worker killed mid-job loses nothing (the queue hands the job to another, which claims
// it with a higher attempt number, so the killed run's writes would be refused).

export interface TeamWorkerOptions {
  database: string;
  objects: ObjectStore;
  /** Handlers running at once (default: the pool's size). */
  concurrency?: number;
  /** Worker threads for pixel work (default: available cores). */
  threads?: number;
  workerUrl?: URL;
  warmWorkers?: boolean;
  log: Logger;
  /** Tests and benches: more job types. */
  registerHandlers?: (runner: JobRunner) => void;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  sweepIntervalMs?: number;
}

export interface TeamWorker {
  readonly db: PgDb;
  readonly jobs: JobRunner;
  readonly pool: WorkerPool;
  start(): Promise<void>;
  /** Stops taking jobs; running ones are interrupted and go back to the queue. */
  stop(): Promise<void>;
}

export async function createTeamWorker(opts: TeamWorkerOptions): Promise<TeamWorker> {
  // Refuses a schema this build does not know (older or newer): `blueline migrate` first.
  const db = await openPostgres(opts.database, { migrate: false, max: 6 });
  const pool = createWorkerPool({
    ...(opts.threads ? { size: opts.threads } : {}),
    ...(opts.workerUrl ? { workerUrl: opts.workerUrl } : {}),
    ...(opts.warmWorkers ? { warmup: WORKER_WARMUP } : {}),
  });
  const timings = dispatcherTimingsFromEnv();
  const dispatcher = createBullmqDispatcher({
    url: opts.database,
    log: opts.log,
    ...timings,
    ...(opts.lockDurationMs ? { lockDurationMs: opts.lockDurationMs } : {}),
    ...(opts.stalledIntervalMs ? { stalledIntervalMs: opts.stalledIntervalMs } : {}),
  });
  const jobs = createJobSystem({
    db,
    objects: opts.objects,
    pool,
    log: opts.log,
    config: DEFAULT_CONFIG,
    dispatcher,
    feed: createPgJobFeed(opts.database, opts.log),
    ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
    ...sweepFromEnv(opts.sweepIntervalMs),
    ...(opts.registerHandlers ? { registerHandlers: opts.registerHandlers } : {}),
  });
  return {
    db,
    jobs,
    pool,
    async start() {
      await jobs.start({ work: true });
      if (opts.warmWorkers) void pool.start();
    },
    async stop() {
      await jobs.stop();
      await pool.close();
      await db.close();
    },
  };
}

/** $BLUELINE_QUEUE_SWEEP_MS (tests) unless given. */
export function sweepFromEnv(given?: number): { sweepIntervalMs?: number } {
  const v = given ?? Number(process.env.BLUELINE_QUEUE_SWEEP_MS);
  return Number.isInteger(v) && v >= 100 ? { sweepIntervalMs: v } : {};
}
