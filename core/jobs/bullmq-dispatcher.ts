import {
  createPostgresBackend,
  runMigrations,
  assertSchemaCompatibility,
  withBackend,
  type Job,
} from 'bullmq';
import pg from 'pg';
import { queueJobId, type Deliver, type DispatchedJob, type JobDispatcher } from './dispatcher';
import type { JobLogger } from './job-runner';

// Team mode's dispatcher: BullMQ 6 on its PostgreSQL backend (the same database as the store, its
// own schema `bullmq`; no Redis). Chosen from measurements on this machine
// (docs/team-queue.md): LISTEN/NOTIFY wake-up, a lock renewed while a job runs, and a dead worker's
// job back in the queue after `lockDuration` + `stalledInterval`.
//
// The message is only the Blueline job id. BullMQ's own retry and stall limits are set out of
// reach: a job never fails in BullMQ (its processor returns whatever the job's outcome), a job whose
// worker was killed is handed out again however often that happens (contract §11: "a worker killed
// mid-job loses nothing"), and a delivery interrupted by a shutdown goes back after `retryDelayMs`.

const { Queue, Worker } = withBackend(createPostgresBackend);

export const QUEUE_NAME = 'blueline-jobs';

/** "No limit" for BullMQ's counters, which its PostgreSQL backend keeps in 32-bit integers. */
const NEVER = 2_000_000_000;

export interface BullmqDispatcherOptions {
  /** postgres://… — the store's database. */
  url: string;
  queueName?: string;
  /** A worker's lease on a job; renewed at half of it while the job runs. Default 30000. */
  lockDurationMs?: number;
  /** How often each worker looks for jobs whose lease ended. Default 30000. */
  stalledIntervalMs?: number;
  /** Before an interrupted delivery is handed out again. Default 1000. */
  retryDelayMs?: number;
  /** Connections of each of the queue's pools (producer, worker). Default 3. */
  poolMax?: number;
  log?: JobLogger;
}

/** Timings from the environment (tests and the reliability script shorten them). */
export function dispatcherTimingsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Pick<BullmqDispatcherOptions, 'lockDurationMs' | 'stalledIntervalMs'> {
  const n = (v: string | undefined) =>
    v !== undefined && /^\d+$/.test(v) && Number(v) >= 100 ? Number(v) : undefined;
  const lock = n(env.BLUELINE_QUEUE_LOCK_MS);
  const stalled = n(env.BLUELINE_QUEUE_STALLED_MS);
  return {
    ...(lock ? { lockDurationMs: lock } : {}),
    ...(stalled ? { stalledIntervalMs: stalled } : {}),
  };
}

/** Applies BullMQ's own schema migrations (its `bullmq` schema) to the database at `url`. */
export async function migrateQueueSchema(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await runMigrations(client);
  } finally {
    await client.end();
  }
}

/** Throws (with BullMQ's message) when the queue's schema is missing or too new for this build. */
export async function checkQueueSchema(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await assertSchemaCompatibility(client);
  } finally {
    await client.end();
  }
}

export function createBullmqDispatcher(opts: BullmqDispatcherOptions): JobDispatcher {
  const name = opts.queueName ?? QUEUE_NAME;
  const lockDuration = opts.lockDurationMs ?? 30_000;
  const stalledInterval = opts.stalledIntervalMs ?? 30_000;
  const retryDelay = opts.retryDelayMs ?? 1000;
  const connection = { connectionString: opts.url, max: opts.poolMax ?? 3 };
  const log = opts.log;
  const jobOptions = {
    removeOnComplete: true,
    removeOnFail: true,
    // Never failed by BullMQ: an interrupted delivery is retried until a worker finishes it.
    attempts: NEVER,
    backoff: { type: 'fixed' as const, delay: retryDelay },
  };
  let queue: InstanceType<typeof Queue> | undefined;
  type Message = { jobId: string };
  let worker: InstanceType<typeof Worker<Message, string>> | undefined;
  const producer = () => {
    if (queue) return queue;
    const q = new Queue(name, { connection });
    // Without a listener BullMQ prints each connection error (a PostgreSQL restart) in full;
    // the queue reconnects by itself, and a notification it loses is found by the sweeper.
    q.on('error', (err) => log?.warn({ err: err.message }, 'Job queue error; it retries'));
    return (queue = q);
  };

  return {
    name: 'bullmq',
    async notify(jobs: readonly DispatchedJob[]) {
      if (jobs.length === 0) return;
      await producer().addBulk(
        jobs.map((j) => ({
          name: j.type,
          data: { jobId: j.id },
          opts: { ...jobOptions, jobId: queueJobId(j) },
        })),
      );
    },
    async work(deliver: Deliver, concurrency: number) {
      if (worker) return;
      const w = new Worker<Message, string>(
        name,
        async (job: Job<Message, string>) => {
          const outcome = await deliver(job.data.jobId);
          // Thrown, so BullMQ hands the job out again (after retryDelay): it is not finished.
          if (outcome === 'interrupted')
            throw new Error(`Job ${job.data.jobId} was interrupted; it runs again.`);
          return outcome;
        },
        {
          connection,
          concurrency,
          lockDuration,
          stalledInterval,
          maxStalledCount: NEVER,
          autorun: true,
        },
      );
      worker = w;
      w.on('error', (err) => log?.warn({ err }, 'Job queue worker error; it retries'));
      await w.waitUntilReady();
    },
    async stopWorking() {
      const w = worker;
      worker = undefined;
      await w?.close();
    },
    async close() {
      await this.stopWorking();
      const q = queue;
      queue = undefined;
      await q?.close();
    },
  };
}
