// How jobs reach the processes that run them.
//
// The `jobs` table is always the API's record (status machine, parents and children, progress,
// credits); a dispatcher only says *which job to run now, and where*. Two kinds:
//
// - none (the desktop, and the SQLite service): the runner's own in-process claim loop
//   (job-runner.ts), which claims the oldest Queued row, with crash attribution at boot. One
//   process owns the database.
// - a `JobDispatcher` (team mode, `bullmq-dispatcher.ts`): a queue library leases each job to one of
//   any number of worker processes, renews the lease while the job runs, and hands a dead worker's
//   job to another within seconds. The runner then claims the delivered row by id with a fencing
//   attempt number (jobs.repository.ts `claimById`), so a worker that lost its lease writes nothing.
//
// Enqueue is transactional in the table and *notified after commit*: a notification lost between
// the commit and the queue (a crash right then) is found again by the runner's sweeper, which
// re-notifies old Queued rows. Notifications are idempotent (the queue's job id names the row and
// the attempt it was made for), so a repeated one is ignored.

/** A job row as much as a dispatcher needs to deliver it. */
export interface DispatchedJob {
  id: string;
  type: string;
  /** The row's `attempts` when notified: the queue's job id is `<id>-a<attempts>`. */
  attempts: number;
}

/**
 * What a delivery came to:
 * - `done`: the job is terminal, or was not runnable (terminal already, or unknown);
 * - `yielded`: a parent gave its slot back to wait for its children; it is notified again when
 *   they end;
 * - `interrupted`: this process is stopping (or lost the lease); the queue must deliver it again.
 */
export type DeliveryOutcome = 'done' | 'yielded' | 'interrupted';

export type Deliver = (jobId: string) => Promise<DeliveryOutcome>;

export interface JobDispatcher {
  readonly name: string;
  /** Hands committed jobs to the queue. Idempotent per (id, attempts). */
  notify(jobs: readonly DispatchedJob[]): Promise<void>;
  /** Starts taking jobs from the queue, at most `concurrency` at once, each through `deliver`. */
  work(deliver: Deliver, concurrency: number): Promise<void>;
  /** Stops taking jobs; resolves once the deliveries in progress have returned. */
  stopWorking(): Promise<void>;
  /** Releases the queue's connections. */
  close(): Promise<void>;
}

/** The queue's id for a notification of `job`: the row and the attempt it was made for. */
export function queueJobId(job: Pick<DispatchedJob, 'id' | 'attempts'>): string {
  return `${job.id}-a${job.attempts}`;
}
