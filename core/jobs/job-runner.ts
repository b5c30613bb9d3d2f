// The persisted job queue's runner: claims Queued jobs from SQLite, runs their handlers with a
// concurrency limit, records progress and outcome, and emits the API job object on every change.
//
// Guarantees (contract §4, §11):
// - Status writes are guarded in SQL by the status machine (jobs.repository.ts), so a status never
//   goes backwards: a handler that finishes after its job was canceled changes nothing.
// - A parent is terminal only when all its children are, and Failed when any child failed (its
//   result lists which). A parent waiting for children gives its slot back while it waits, so a
//   tree of jobs never deadlocks, even at concurrency 1.
// - Cancel marks the job and every non-terminal descendant Canceled in one transaction and aborts
//   their running handlers (and through the signal, their worker-pool tasks).
// - Shutdown (`stop`) stops claiming, aborts running handlers with reason 'shutdown' and leaves
//   their jobs Started; `start` (at the next boot) puts Started jobs back to Queued to run again.
//   A shutdown never marks a job Failed, and neither does a process death that only interrupted a
//   job: each start is a row of runner_boots, each claim names its boot and where its progress
//   stood, and `start` blames a job for the previous process's death only on evidence (the rules
//   are in crash-attribution.ts): a job that kills the process every time it runs alone fails with
//   `processor_crashed` after a few deaths, backing off between them; one that moves forward, or
//   that was not even running when the process died, is never failed for it. A worker-thread crash
//   during a job's task fails that job at once with `processor_crashed`.
// - New work is noticed at once when enqueued in this process (an in-process wake-up, no busy
//   loop), and within `pollIntervalMs` when another process wrote it.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { detached, type Db } from '../store/db';
import { ApiError, notFound, PROBLEMS } from '../domain/errors';
import { isTerminal } from '../domain/job-status';
import type { WorkerTaskRegistry } from './worker-protocol';
import type { WorkerTasks } from './worker-tasks';
import { WorkerCrashedError, WorkerOutOfMemoryError, type WorkerPool } from './worker-pool';
import {
  JobsRepository,
  LeaseLostError,
  type JobRow,
  type JobTargetType,
  type NewJob,
} from './jobs.repository';
import type { DeliveryOutcome, JobDispatcher } from './dispatcher';
import type { JobChangeFeed } from './pg-job-events';
import { RunnerBootsRepository } from './runner-boots.repository';
import {
  DEFAULT_CRASH_POLICY,
  judgeInterruptedClaim,
  processorCrashedDetail,
  type CrashPolicy,
} from './crash-attribution';
import { toApiJob, type ApiJob, type JobProblem } from './job.serializer';

export { toApiJob, type ApiJob, type JobProblem } from './job.serializer';
export type { JobRow, NewJob, JobTargetType } from './jobs.repository';

/** pino-compatible (Fastify's logger fits): structured fields first, message second. */
export interface JobLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

const SILENT: JobLogger = { info() {}, warn() {}, error() {} };

/**
 * Why a handler's signal aborted: its job was `canceled`; the service is stopping (`shutdown`);
 * team mode only: the run `yield`ed its slot to wait for its children (it runs again when they
 * end), or lost its lease (`lease_lost`: another process claimed the job). Only `canceled` ends the
 * job; after the others a handler must write nothing about its target's outcome.
 */
export type JobAbortReason = 'canceled' | 'shutdown' | 'yield' | 'lease_lost';

const ABORT_MESSAGES: Record<JobAbortReason, string> = {
  canceled: 'The job was canceled.',
  shutdown: 'The service is shutting down.',
  yield: 'The job gave its slot back to wait for its children.',
  lease_lost: 'Another process claimed the job; this run stops.',
};

/** The reason of a handler's AbortSignal (see JobAbortReason). */
export class JobAbortedError extends Error {
  constructor(readonly reason: JobAbortReason) {
    super(ABORT_MESSAGES[reason]);
    this.name = 'JobAbortedError';
  }
}

export interface ChildJobSpec {
  type: string;
  target_type: JobTargetType;
  target_id: string;
  payload?: unknown;
}

export interface JobContext<P = unknown, R extends WorkerTaskRegistry = WorkerTasks> {
  /** The job as claimed (status Started; `attempts` counts this run). */
  readonly job: JobRow;
  /** The parsed payload it was enqueued with. */
  readonly payload: P;
  /** Aborted with a JobAbortedError when the job is canceled or the service stops. Pass it on to pool.run. */
  readonly signal: AbortSignal;
  /** Records progress (written and emitted at once; call it per unit of work, not per pixel). */
  progress(completed: number, total: number): Promise<void>;
  readonly pool: WorkerPool<R>;
  /**
   * Creates (or, when it already exists, returns) the child job named `childKey` within this job.
   * Given the handler's transaction handle `tx`, it runs inside that transaction. Idempotent by
   * (parent_id, child_key): a parent that runs again after a restart gets its existing children.
   */
  createChild(childKey: string, spec: ChildJobSpec, tx?: Db): Promise<JobRow>;
  /**
   * Fencing for the handler's own records: throws LeaseLostError unless this run still holds the
   * job. Given the transaction `tx` that writes them, it checks inside it (on PostgreSQL locking the
   * job row to the commit), so records are committed only by the run that holds the job.
   */
  fence(tx?: Db): Promise<void>;
  /** Whether this run still holds the job (false after another process claimed it). */
  holdsLease(): Promise<boolean>;
  /**
   * Resolves when every child is terminal, with all children (oldest first). While it waits the
   * job gives up its concurrency slot. Rejects with the abort reason if the job is canceled or the
   * service stops meanwhile.
   */
  waitForChildren(): Promise<JobRow[]>;
}

/**
 * Runs one job; returns its `result` (any JSON value) or throws to fail it. Throw an ApiError to
 * fail with that code and detail; any other error fails it as `internal_error` with a generic
 * detail (the real message goes to the log only).
 *
 * Handlers MUST be re-runnable. A job whose process died (crash, kill, power loss) or was stopped
 * mid-run goes back to Queued and its handler runs again from the start, with the same job id and
 * payload and `job.attempts` one higher. So:
 * - write effects idempotently: upsert by a key derived from the job (or its target), or check
 *   what a previous attempt already stored and skip it; commit each unit of work together with its
 *   record in one transaction, so a unit is either fully stored or not at all;
 * - create children only through `ctx.createChild` with a stable `childKey` (e.g. the sheet id);
 * - honour `ctx.signal` between units of work, and pass it to `ctx.pool.run`.
 * No work is then lost and none is done twice in the store (contract §4).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type JobHandler<P = any, R extends WorkerTaskRegistry = WorkerTasks> = (
  ctx: JobContext<P, R>,
) => unknown;

export interface JobRunnerHooks {
  /**
   * Runs inside the transaction that makes a job terminal (Completed, Failed or Canceled), so
   * credit settlement commits with the status (contract §7: charge what was used, refund what was
   * reserved when the job failed through no fault of the request). Throwing rolls the status
   * write back.
   */
  onTerminal?(job: JobRow, tx: Db): Promise<void>;
}

export interface JobRunnerOptions<R extends WorkerTaskRegistry = WorkerTasks> {
  db: Db;
  pool: WorkerPool<R>;
  /** Handlers running at once (jobs waiting for children do not count). Default: pool.size. */
  concurrency?: number;
  log?: JobLogger;
  /** How often to look for work written by another process. Default 5000 ms. */
  pollIntervalMs?: number;
  /**
   * When a job is blamed for the process dying, and when it fails for it (crash-attribution.ts).
   * Default DEFAULT_CRASH_POLICY: fails at the 3rd death in a row blamed on it, backing off 5 s and
   * 30 s before the 2nd and 3rd claims.
   */
  crashPolicy?: Partial<CrashPolicy>;
  hooks?: JobRunnerHooks;
  /**
   * Team mode: a queue delivers the jobs (dispatcher.ts) instead of the in-process claim loop, and
   * there is no crash recovery at start (the queue hands a dead process's jobs to another).
   */
  dispatcher?: JobDispatcher;
  /**
   * Team mode: job changes made by any process (pg-job-events.ts). With a feed, every `'job'`
   * event comes from it (this process's own changes too), so SSE sees jobs run anywhere.
   */
  feed?: JobChangeFeed;
  /** With a dispatcher: how often to re-notify jobs the queue may have lost. Default 30000 ms. */
  sweepIntervalMs?: number;
}

export interface StartOptions {
  /** Run jobs here (default true). False: the API alone (`serve --no-workers`). */
  work?: boolean;
}

export interface StopOptions {
  /** Let running handlers finish (up to drainTimeoutMs) before aborting what is left. */
  drain?: boolean;
  /** Default 10000 ms. */
  drainTimeoutMs?: number;
  /** After aborting, how long to wait for handlers to return. Default 5000 ms. */
  abortGraceMs?: number;
}

export interface JobEventMeta {
  organization_id: string;
}

export interface JobRunner<R extends WorkerTaskRegistry = WorkerTasks> {
  /**
   * Registers the handler of a job type. `P` is what the handler expects its payload to be; the
   * payload is stored JSON and is not validated here, so a handler validates what it relies on.
   */
  register<P>(type: string, handler: JobHandler<P, R>): void;
  /**
   * Inserts a Queued job and returns its row. Call it inside the transaction that writes the row
   * the job acts on, with that transaction's handle `tx`; the runner picks it up once the
   * transaction has committed.
   */
  enqueue(job: NewJob, tx?: Db): Promise<JobRow>;
  /** Resets jobs left Started (crash recovery), then claims and runs jobs. */
  start(options?: StartOptions): Promise<void>;
  /** Announces a job row changed by a handler outside its own context (e.g. a root's progress). */
  publish(row: JobRow): void;
  /** Stops claiming; aborts running handlers (reason 'shutdown'), leaving their jobs Started. */
  stop(options?: StopOptions): Promise<void>;
  /**
   * Cancels a job and every non-terminal descendant. 404 not_found for another organization's or
   * an unknown id; 409 conflict when the job is already terminal. Returns the canceled job.
   */
  cancel(organizationId: string, jobId: string): Promise<ApiJob>;
  /** The job as the API returns it; 404 not_found when it is not this organization's. */
  get(organizationId: string, jobId: string): Promise<ApiJob>;
  /** 'job' (job: ApiJob, meta: JobEventMeta) after every change of a job. */
  readonly events: EventEmitter<{ job: [ApiJob, JobEventMeta] }>;
  readonly repository: JobsRepository;
}

interface Active {
  row: JobRow;
  /** The claim's attempt number: every write of this run is guarded by it (fencing). */
  attempt: number;
  /** Team mode: how the delivery ended when it did not simply run to the end. */
  outcome?: DeliveryOutcome;
  ac: AbortController;
  /** Whether this job currently counts against the concurrency limit. */
  holdsSlot: boolean;
  /** A suspect of crashing the process: nothing else runs while it holds its slot. */
  exclusive: boolean;
  done: Promise<void>;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function createJobRunner<R extends WorkerTaskRegistry = WorkerTasks>(
  options: JobRunnerOptions<R>,
): JobRunner<R> {
  const { db, pool, dispatcher, feed } = options;
  const sweepIntervalMs = options.sweepIntervalMs ?? 30_000;
  const log = options.log ?? SILENT;
  const concurrency = options.concurrency ?? pool.size;
  const pollIntervalMs = options.pollIntervalMs ?? 5000;
  const crashPolicy: CrashPolicy = { ...DEFAULT_CRASH_POLICY, ...options.crashPolicy };
  const hooks = options.hooks ?? {};
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(
      `Expected a positive integer for concurrency but received ${String(concurrency)}.`,
    );
  }

  const repo = new JobsRepository(db);
  const boots = new RunnerBootsRepository(db);
  /** This runner's start (runner_boots.id), named by every claim it makes; set by start(). */
  let bootId = '';
  let backoffTimer: NodeJS.Timeout | undefined;
  const events = new EventEmitter<{ job: [ApiJob, JobEventMeta] }>();
  // Many SSE clients may follow jobs at once; they are not a leak.
  events.setMaxListeners(0);
  const handlers = new Map<string, JobHandler<unknown, R>>();
  const active = new Map<string, Active>();
  /** Parents waiting in waitForChildren: re-checked whenever one of their children ends. */
  const childWaiters = new Map<string, Set<() => void>>();
  /** Parents whose children are done, waiting for a free slot to continue (served first). */
  const resumers: Array<() => void> = [];
  const idleWaiters = new Set<() => void>();
  /** Jobs inserted by this process and not yet announced (see deferEmit). */
  const pendingInserted = new Map<string, JobRow>();
  let flushScheduled = false;

  let running = 0;
  /** Team mode: deliveries waiting for a slot (served after resumers). */
  const deliveries: Array<(granted: boolean) => void> = [];
  let sweepTimer: NodeJS.Timeout | undefined;
  let working = false;
  let started = false;
  let claiming = false;
  let wakeScheduled = false;
  let timer: NodeJS.Timeout | undefined;

  function emit(row: JobRow): void {
    // With a change feed every event comes from it, once, wherever the change was made.
    if (feed) return;
    emitNow(row);
  }

  function emitNow(row: JobRow): void {
    try {
      events.emit('job', toApiJob(row), { organization_id: row.organization_id });
    } catch (err) {
      log.error({ err, job_id: row.id }, 'A job event listener threw');
    }
  }

  /** Runs `fill` soon, once, however many times it is asked for before then. */
  function wake(): void {
    if (wakeScheduled || !started) return;
    wakeScheduled = true;
    detached(() =>
      setImmediate(() => {
        wakeScheduled = false;
        void fill();
      }),
    );
  }

  let filling = false;
  let refill = false;

  /** Claims jobs while slots are free. One fill at a time: a wake-up meanwhile makes it go round again. */
  async function fill(): Promise<void> {
    if (filling) {
      refill = true;
      return;
    }
    filling = true;
    try {
      do {
        refill = false;
        await fillOnce();
      } while (refill && started);
    } catch (err) {
      log.error({ err }, 'Could not fill the job slots; retrying at the next poll');
    } finally {
      filling = false;
    }
  }

  async function fillOnce(): Promise<void> {
    if (!started) return;
    await flushInserted();
    while (running < concurrency) {
      // A suspect runs alone, so that a process death while it runs is its own (crash-attribution.ts).
      if (exclusiveRunning()) break;
      const resume = resumers.shift();
      if (resume) {
        running++;
        resume();
        continue;
      }
      const delivery = deliveries.shift();
      if (delivery) {
        running++;
        delivery(true);
        continue;
      }
      if (!claiming) break;
      let row: JobRow | undefined;
      try {
        row = await repo.claimNext([...handlers.keys()], { boot: bootId, idle: running === 0 });
        if (!row) await scheduleBackoffWake();
      } catch (err) {
        log.error({ err }, 'Could not claim a job; retrying at the next poll');
        break;
      }
      if (!row) break;
      running++;
      startJob(row);
    }
    notifyIdle();
  }

  function exclusiveRunning(): boolean {
    for (const e of active.values()) if (e.exclusive && e.holdsSlot) return true;
    return false;
  }

  /** Wakes the runner when the earliest back-off of a Queued job ends. */
  async function scheduleBackoffWake(): Promise<void> {
    if (backoffTimer) clearTimeout(backoffTimer);
    backoffTimer = undefined;
    const at = await repo.nextNotBefore([...handlers.keys()]);
    if (!at) return;
    backoffTimer = setTimeout(
      () => {
        backoffTimer = undefined;
        wake();
      },
      Math.max(0, Date.parse(at) - Date.now()) + 5,
    );
    backoffTimer.unref();
  }

  function releaseSlot(entry: Active): void {
    if (!entry.holdsSlot) return;
    entry.holdsSlot = false;
    running--;
    wake();
    notifyIdle();
  }

  function notifyIdle(): void {
    if (running === 0 && resumers.length === 0) for (const f of idleWaiters) f();
  }

  /** Waits for a slot as a resumer. Rejects if the job is aborted first. */
  function acquireSlot(entry: Active): Promise<void> {
    const signal = entry.ac.signal;
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal.removeEventListener('abort', onAbort);
        entry.holdsSlot = true;
        resolve();
      };
      const onAbort = () => {
        const i = resumers.indexOf(grant);
        if (i >= 0) resumers.splice(i, 1);
        notifyIdle();
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      resumers.push(grant);
      wake();
    });
  }

  function notifyParent(parentId: string | null): void {
    if (!parentId) return;
    // Team mode: a parent that yielded runs again once its last child has ended.
    if (dispatcher) void resumeParent(parentId);
    const waiters = childWaiters.get(parentId);
    if (waiters) for (const f of [...waiters]) f();
  }

  /** Resolves once no child of `entry` is open, without holding a slot meanwhile. */
  async function awaitChildren(entry: Active): Promise<void> {
    const id = entry.row.id;
    if ((await repo.openChildCount(id)) === 0) return;
    if (dispatcher) return await yieldForChildren(entry);
    releaseSlot(entry);
    const signal = entry.ac.signal;
    await new Promise<void>((resolve, reject) => {
      let set = childWaiters.get(id);
      if (!set) childWaiters.set(id, (set = new Set()));
      const waiters = set;
      const done = (err?: unknown) => {
        waiters.delete(check);
        if (waiters.size === 0) childWaiters.delete(id);
        signal.removeEventListener('abort', onAbort);
        if (err === undefined) resolve();
        else reject(err);
      };
      const check = () => {
        repo.openChildCount(id).then((n) => {
          if (n === 0) done();
        }, done);
      };
      const onAbort = () => done(signal.reason);
      if (signal.aborted) return done(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      waiters.add(check);
      check();
    });
    await acquireSlot(entry);
  }

  function toProblem(row: JobRow, err: unknown): JobProblem {
    const instance = `/v1/jobs/${row.id}`;
    if (err instanceof ApiError) {
      return {
        type: `/problems/${err.code}`,
        title: PROBLEMS[err.code].title,
        status: err.status,
        detail: err.detail,
        instance,
        code: err.code,
        ...(err.errors ? { errors: err.errors } : {}),
        ...err.extra,
      };
    }
    if (err instanceof WorkerOutOfMemoryError) {
      log.warn({ err, job_id: row.id, job_type: row.type }, 'Job ran out of worker memory');
      return toProblem(
        row,
        new ApiError(
          'resource_limit_exceeded',
          `The ${row.type} job needed more than the ${err.maxHeapMb} MiB of memory a worker may use and was stopped. Split the input (fewer or smaller pages) or raise the worker memory limit.`,
        ),
      );
    }
    if (err instanceof WorkerCrashedError) {
      // The pool knows which task's worker died: the crash is this job's, with certainty. Retrying
      // would only crash another worker, so the job fails at once; the pool carries on.
      log.warn({ err, job_id: row.id, job_type: row.type }, 'Job crashed its worker thread');
      return toProblem(
        row,
        new ApiError(
          'processor_crashed',
          `The file crashed the processor: ${err.message.replace(/\.$/, '')} while running this ${row.type} job, so the job was stopped instead of being retried. The file is most likely malformed in a way that crashes the renderer; export it again or split it, and upload the new file.`,
        ),
      );
    }
    log.error({ err, job_id: row.id, job_type: row.type }, 'Job handler failed');
    return {
      type: '/problems/internal_error',
      title: PROBLEMS.internal_error.title,
      status: PROBLEMS.internal_error.status,
      detail: `The ${row.type} job failed because of an internal error. It was logged with the job id ${row.id}.`,
      instance,
      code: 'internal_error',
    };
  }

  /**
   * Fails a job, first canceling its descendants that are still open (a parent is terminal only
   * when all its children are). One transaction; events and aborts follow the commit.
   */
  async function failJob(
    row: JobRow,
    problem: JobProblem,
    result: unknown = null,
    attempt?: number,
  ): Promise<void> {
    announceFailure(
      await db.transaction(
        async (tx) => await failInTransaction(tx, row, problem, result, attempt),
      ),
    );
  }

  interface Failure {
    failed: JobRow | undefined;
    canceled: JobRow[];
  }

  /** The writes of failJob; call inside a transaction, then announceFailure after the commit. */
  async function failInTransaction(
    tx: Db,
    row: JobRow,
    problem: JobProblem,
    result: unknown = null,
    attempt?: number,
  ): Promise<Failure> {
    const canceled: JobRow[] = [];
    const t = repo.with(tx);
    // A run that lost its job cancels none of its children and fails nothing (fencing).
    if (attempt !== undefined && !(await t.holdsLease(row.id, attempt)))
      return { failed: undefined, canceled };
    for (const child of await t.children(row.id)) {
      if (isTerminal(child.status)) continue;
      for (const r of await t.cancelTree(child.id)) {
        await hooks.onTerminal?.(r, tx);
        canceled.push(r);
      }
    }
    const failed = await t.fail(row.id, problem, result, attempt);
    if (failed) await hooks.onTerminal?.(failed, tx);
    return { failed, canceled };
  }

  function announceFailure({ failed, canceled }: Failure): void {
    afterCancel(canceled);
    if (failed) {
      emit(failed);
      notifyParent(failed.parent_id);
    }
  }

  /**
   * Crash recovery, at start: this boot is recorded; boots that never ended are processes that
   * died; every job left Started goes back to Queued, or fails when the deaths are its own
   * (crash-attribution.ts has the rules). One transaction.
   */
  async function recover(): Promise<void> {
    const requeued: JobRow[] = [];
    const failures: Failure[] = [];
    await db.transaction(async (tx) => {
      const t = repo.with(tx);
      const tb = new RunnerBootsRepository(tx);
      await tb.insert(bootId);
      const dead = new Set((await tb.openBoots(bootId)).map((b) => b.id));
      // Rule 3: the process died while these were not running.
      if (dead.size > 0) {
        for (const id of await t.clearQueuedSuspicion())
          log.info(
            { job_id: id },
            'The process died while this job was not running: not a suspect',
          );
      }
      const started = await t.startedJobs();
      const activeIn = new Map<string, number>();
      for (const r of started)
        if (!r.waiting && r.claim_boot !== null)
          activeIn.set(r.claim_boot, (activeIn.get(r.claim_boot) ?? 0) + 1);
      for (const r of started) {
        const processEnd =
          r.claim_boot === null || r.waiting
            ? 'unknown' // claimed before boots were tracked, or only waiting for its children
            : dead.has(r.claim_boot)
              ? 'died'
              : (await tb.get(r.claim_boot))?.end_reason === 'stopped'
                ? 'stopped'
                : 'unknown';
        const verdict = judgeInterruptedClaim(
          {
            processEnd,
            progressed: r.progress_completed > r.claim_progress,
            alone: r.claim_boot !== null && activeIn.get(r.claim_boot) === 1,
            crashes: r.crashes,
            suspect: r.suspect === 1,
          },
          crashPolicy,
        );
        if (verdict.action === 'fail') {
          await t.setCrashes(r.id, verdict.crashes);
          log.error(
            { job_id: r.id, job_type: r.type, crashes: verdict.crashes },
            'The process died each time this job ran alone without progress: failing it',
          );
          failures.push(
            await failInTransaction(
              tx,
              r,
              toProblem(
                r,
                new ApiError('processor_crashed', processorCrashedDetail(r.type, verdict.crashes)),
              ),
            ),
          );
          continue;
        }
        const notBefore =
          verdict.backoffMs > 0 ? new Date(Date.now() + verdict.backoffMs).toISOString() : null;
        const row = await t.requeueInterrupted(r.id, { ...verdict, notBefore });
        if (!row) continue;
        requeued.push(row);
        log.info(
          {
            job_id: r.id,
            process_end: processEnd,
            crashes: verdict.crashes,
            suspect: verdict.suspect,
            ...(notBefore ? { not_before: notBefore } : {}),
          },
          verdict.counted
            ? 'Job found Started at boot; the process died while it ran alone without progress: queued again after a back-off'
            : 'Job found Started at boot; queued to run again',
        );
      }
      for (const id of dead) await tb.end(id, 'died');
      await tb.prune();
    });
    for (const f of failures) announceFailure(f);
    for (const row of requeued) emit(row);
  }

  function afterCancel(rows: readonly JobRow[]): void {
    for (const r of rows) active.get(r.id)?.ac.abort(new JobAbortedError('canceled'));
    for (const r of rows) emit(r);
    for (const r of rows) notifyParent(r.parent_id);
  }

  /** Records a handler's success: Completed, or Failed when a child failed. Waits for open children. */
  async function completeJob(entry: Active, output: unknown): Promise<void> {
    const id = entry.row.id;
    for (;;) {
      await awaitChildren(entry);
      const children = await repo.children(id);
      const failedChildren = children.filter((c) => c.status === 'Failed');
      const written = await db.transaction(async (tx) => {
        const t = repo.with(tx);
        let out: JobRow | undefined;
        if (failedChildren.length > 0) {
          const list = failedChildren.map((c) => ({
            id: c.id,
            type: c.type,
            target_type: c.target_type,
            target_id: c.target_id,
            error: c.error === null ? null : (JSON.parse(c.error) as unknown),
          }));
          const result = { ...(isPlainObject(output) ? output : {}), failed_children: list };
          out = await t.fail(
            id,
            childFailureProblem(entry.row, failedChildren, children.length),
            result,
            entry.attempt,
          );
        } else {
          out = await t.complete(id, output ?? null, entry.attempt);
        }
        if (out) await hooks.onTerminal?.(out, tx);
        return out;
      });
      if (written) {
        emit(written);
        notifyParent(written.parent_id);
        return;
      }
      const current = await repo.getById(id);
      // Canceled (or otherwise moved on) meanwhile: the guard refused the write, which is right.
      if (!current || current.status !== 'Started') return;
      // Claimed by another process since (team mode): that run records the outcome.
      if (current.attempts !== entry.attempt) {
        entry.outcome = 'done';
        log.warn({ job_id: id, attempt: entry.attempt }, 'Lost the job before recording it');
        return;
      }
      // Still Started: a child was created after we looked. Wait for it too.
    }
  }

  function childFailureProblem(row: JobRow, failed: JobRow[], total: number): JobProblem {
    // The first failed child's problem code explains the failure best (a validation problem
    // stays a validation problem); the detail counts them all.
    const first = failed[0]!.error ? (JSON.parse(failed[0]!.error) as Partial<JobProblem>) : {};
    const code =
      typeof first.code === 'string' && first.code in PROBLEMS ? first.code : 'internal_error';
    const def = PROBLEMS[code as keyof typeof PROBLEMS];
    return {
      type: `/problems/${code}`,
      title: def.title,
      status: def.status,
      detail: `${failed.length} of ${total} child jobs failed (first: ${failed[0]!.id}${first.detail ? `: ${first.detail}` : ''}). result.failed_children lists them.`,
      instance: `/v1/jobs/${row.id}`,
      code,
    };
  }

  function startJob(row: JobRow): void {
    const ac = new AbortController();
    const entry: Active = {
      row,
      attempt: row.attempts,
      ac,
      holdsSlot: true,
      exclusive: row.suspect === 1,
      done: Promise.resolve(),
    };
    if (entry.exclusive)
      log.info({ job_id: row.id, crashes: row.crashes }, 'Running a crash suspect alone');
    active.set(row.id, entry);
    entry.done = runJob(entry).finally(() => {
      active.delete(row.id);
      releaseSlot(entry);
    });
  }

  async function runJob(entry: Active): Promise<void> {
    const { row, ac } = entry;
    emit(row);
    const handler = handlers.get(row.type);
    if (!handler) return; // unreachable: only registered types are claimed
    let output: unknown;
    try {
      output = await handler(makeContext(entry));
    } catch (err) {
      if (ac.signal.aborted) {
        const reason = (ac.signal.reason as JobAbortedError).reason;
        if (reason === 'shutdown') {
          entry.outcome = 'interrupted';
          log.info({ job_id: row.id }, 'Job interrupted by shutdown; it resumes at the next start');
        }
        if (reason === 'yield') entry.outcome = 'yielded';
        // Told by the job feed that another process holds the job now (it may hear that before
        // its own next write is refused): the same warning as a refused write below.
        if (reason === 'lease_lost')
          log.warn({ job_id: row.id, attempt: entry.attempt }, 'Job lost to another process');
        return; // canceled: already Canceled; shutdown: stays Started for resume; yield: see above
      }
      if (err instanceof LeaseLostError) {
        log.warn({ job_id: row.id, attempt: entry.attempt }, 'Job lost to another process');
        return;
      }
      try {
        await failJob(row, toProblem(row, err), null, entry.attempt);
      } catch (writeErr) {
        log.error({ err: writeErr, job_id: row.id }, 'Could not record a job failure');
      }
      return;
    }
    try {
      await completeJob(entry, output);
    } catch (err) {
      if (ac.signal.aborted) return;
      log.error({ err, job_id: row.id }, 'Could not record a job result');
    }
  }

  function makeContext(entry: Active): JobContext<unknown, R> {
    const { row, ac } = entry;
    return {
      job: row,
      payload: JSON.parse(row.payload) as unknown,
      signal: ac.signal,
      pool,
      async progress(completed, total) {
        if (
          !Number.isInteger(completed) ||
          !Number.isInteger(total) ||
          completed < 0 ||
          total < 0
        ) {
          throw new RangeError(
            `Expected non-negative integers for progress but received ${completed}/${total}.`,
          );
        }
        const out = await repo.updateProgress(row.id, completed, total, entry.attempt);
        if (!out && dispatcher && !(await repo.holdsLease(row.id, entry.attempt))) {
          const current = await repo.getById(row.id);
          const reason = current?.status === 'Canceled' ? 'canceled' : 'lease_lost';
          ac.abort(new JobAbortedError(reason));
          throw ac.signal.reason;
        }
        if (out) emit(out);
        if (out && entry.exclusive && out.suspect === 0) {
          // It moved forward: not the one taking the process down; others may run beside it.
          entry.exclusive = false;
          wake();
        }
      },
      async createChild(childKey, spec, outer) {
        if (ac.signal.aborted) throw ac.signal.reason;
        if (!handlers.has(spec.type)) {
          log.warn({ job_id: row.id, type: spec.type }, 'Child job of a type with no handler');
        }
        const inserted = await (outer ?? db).transaction(async (tx) => {
          const r = repo.with(tx);
          const parent = await r.getById(row.id);
          if (parent?.status !== 'Started') throw new JobAbortedError('canceled');
          if (parent.attempts !== entry.attempt) throw new LeaseLostError(row.id, entry.attempt);
          return await r.insert({
            organization_id: row.organization_id,
            project_id: row.project_id,
            parent_id: row.id,
            child_key: childKey,
            ...spec,
          });
        });
        if (inserted.created) {
          // Inside the caller's transaction: announced (and queued) once it commits.
          if (outer?.onCommit) outer.onCommit(() => deferEmit(inserted.row));
          else deferEmit(inserted.row);
        }
        return inserted.row;
      },
      async waitForChildren() {
        await awaitChildren(entry);
        return await repo.children(row.id);
      },
      async fence(tx) {
        if (tx) await repo.with(tx).fence(row.id, entry.attempt);
        else if (!(await repo.holdsLease(row.id, entry.attempt)))
          throw new LeaseLostError(row.id, entry.attempt);
      },
      async holdsLease() {
        return await repo.holdsLease(row.id, entry.attempt);
      },
    };
  }

  /**
   * Announces a new job once the caller's transaction is over, and only if it committed (a job
   * enqueued in a transaction that rolled back never existed). Flushed before any claim, so a
   * job's Queued event always precedes its Started event.
   */
  function deferEmit(row: JobRow): void {
    pendingInserted.set(row.id, row);
    if (!flushScheduled) {
      flushScheduled = true;
      detached(() => setImmediate(() => void flushInserted()));
    }
    wake();
  }

  let flushing: Promise<void> = Promise.resolve();

  /**
   * Announces the pending new jobs. Flushes run one after another, and a caller's promise settles
   * after every flush before it: a claim that awaits it never overtakes an announcement.
   */
  function flushInserted(): Promise<void> {
    const next = flushing.then(flushOnce);
    flushing = next.catch(() => {});
    return next;
  }

  async function flushOnce(): Promise<void> {
    flushScheduled = false;
    if (pendingInserted.size === 0) return;
    const rows = [...pendingInserted.values()];
    pendingInserted.clear();
    if (!db.open) return;
    const committed: JobRow[] = [];
    for (const row of rows) {
      try {
        if (await repo.getById(row.id)) {
          emit(row);
          committed.push(row);
        }
      } catch (err) {
        log.error({ err, job_id: row.id }, 'Could not announce a new job');
      }
    }
    if (dispatcher && committed.length > 0) {
      // After the commit; a notification lost here is found again by the sweeper.
      await dispatcher.notify(committed).catch((err: unknown) => {
        log.warn({ err }, 'Could not hand new jobs to the queue; the sweeper retries');
      });
    }
  }

  // ---- Team mode (a dispatcher delivers the jobs) ----

  /**
   * A parent waiting for its children gives its queue slot back: the run ends with the row Started
   * and `yielded = 1`, and the job is notified again when its last child ends (by whichever process
   * ends it, or by this one if they all ended already). Its handler then runs once more: its
   * children exist already (createChild is idempotent) and waitForChildren returns at once.
   */
  async function yieldForChildren(entry: Active): Promise<never> {
    const { row, ac } = entry;
    const marked = await repo.markYielded(row.id, entry.attempt);
    const reason: JobAbortedError = marked
      ? new JobAbortedError('yield')
      : new JobAbortedError(
          (await repo.getById(row.id))?.status === 'Canceled' ? 'canceled' : 'lease_lost',
        );
    if (marked) {
      entry.outcome = 'yielded';
      await resumeParent(row.id);
    }
    ac.abort(reason);
    throw reason;
  }

  /** Notifies parent `id` when it yielded and none of its children is open any more. */
  async function resumeParent(id: string | null): Promise<void> {
    if (!dispatcher || !id) return;
    try {
      const parent = await repo.resumableParent(id);
      if (parent) await dispatcher.notify([parent]);
    } catch (err) {
      log.warn(
        { err, job_id: id },
        'Could not hand a parent back to the queue; the sweeper retries',
      );
    }
  }

  /** A job the queue delivered: waits for a slot, claims it (attempt + 1), runs it. */
  async function deliver(jobId: string): Promise<DeliveryOutcome> {
    if (!started || !working) return 'interrupted';
    const granted = await new Promise<boolean>((resolve) => {
      deliveries.push(resolve);
      wake();
    });
    if (!granted) return 'interrupted';
    let row: JobRow | undefined;
    try {
      row = await repo.claimById(jobId, bootId);
    } catch (err) {
      running--;
      wake();
      throw err; // the queue delivers it again
    }
    if (!row || !handlers.has(row.type)) {
      running--;
      wake();
      if (row) {
        await failJob(
          row,
          toProblem(row, new Error(`No handler for job type '${row.type}' in this worker.`)),
          null,
          row.attempts,
        );
      }
      return 'done';
    }
    startJob(row);
    const entry = active.get(row.id)!;
    await entry.done;
    return entry.outcome ?? 'done';
  }

  /** Re-notifies what the queue may have lost: old Queued rows, yielded parents due to run. */
  async function sweep(): Promise<void> {
    if (!dispatcher || !db.open) return;
    try {
      const before = new Date(Date.now() - sweepIntervalMs).toISOString();
      const rows = await repo.undelivered(before, 500);
      if (rows.length > 0) {
        await dispatcher.notify(rows);
        log.info({ jobs: rows.length }, 'Sweeper handed old jobs to the queue again');
      }
    } catch (err) {
      log.warn({ err }, 'Job sweep failed; it runs again');
    }
  }

  /** Latest change of each job heard on the feed, read one at a time per job. */
  const feedReads = new Map<string, boolean>();
  /** Non-terminal jobs heard of recently: re-read after the feed reconnects (SSE may follow them). */
  const followed = new Set<string>();

  function onFeedJob(id: string): void {
    if (feedReads.has(id)) {
      feedReads.set(id, true); // read again after the one in flight
      return;
    }
    feedReads.set(id, false);
    void (async () => {
      do {
        feedReads.set(id, false);
        try {
          const row = await repo.getById(id);
          if (row) onFeedRow(row);
        } catch (err) {
          log.warn({ err, job_id: id }, 'Could not read a changed job');
        }
      } while (feedReads.get(id) === true);
      feedReads.delete(id);
    })();
  }

  /** What was last announced of each job heard on the feed (a change the API shows), bounded. */
  const announced = new Map<string, string>();

  function onFeedRow(row: JobRow): void {
    if (isTerminal(row.status)) followed.delete(row.id);
    else if (followed.size < 10_000) followed.add(row.id);
    // A write that changes nothing the API shows (e.g. the yield mark) is not an event.
    const shown = `${row.status}|${row.progress_completed}|${row.progress_total}`;
    if (announced.get(row.id) !== shown) {
      announced.delete(row.id);
      announced.set(row.id, shown);
      if (announced.size > 20_000) announced.delete(announced.keys().next().value!);
      emitNow(row);
    }
    const entry = active.get(row.id);
    if (entry && !entry.ac.signal.aborted) {
      if (row.status === 'Canceled') entry.ac.abort(new JobAbortedError('canceled'));
      else if (row.attempts !== entry.attempt || row.status !== 'Started')
        entry.ac.abort(new JobAbortedError('lease_lost'));
    }
    if (isTerminal(row.status)) notifyParent(row.parent_id);
  }

  function onFeedReconnect(): void {
    for (const id of new Set([...active.keys(), ...followed])) onFeedJob(id);
    void sweep();
  }

  return {
    events,
    repository: repo,
    publish(row) {
      emit(row);
    },
    register(type, handler) {
      if (handlers.has(type))
        throw new Error(`A handler for job type '${type}' is already registered.`);
      handlers.set(type, handler as JobHandler<unknown, R>);
      wake();
    },
    async enqueue(job, tx) {
      const { row, created } = await (tx ? repo.with(tx) : repo).insert(job);
      // On PostgreSQL, announced (and handed to the queue) once the caller's transaction commits:
      // another connection would not see the row before.
      if (created) {
        if (tx?.onCommit) tx.onCommit(() => deferEmit(row));
        else deferEmit(row);
      }
      return row;
    },
    async start({ work = true } = {}) {
      if (started) return;
      bootId = randomUUID();
      if (dispatcher) {
        // Team mode: no recovery here (the queue re-delivers a dead process's jobs), no claim loop.
        await feed?.start(onFeedJob, onFeedReconnect);
        started = true;
        claiming = false;
        working = work;
        sweepTimer = setInterval(() => void sweep(), sweepIntervalMs);
        sweepTimer.unref();
        void sweep();
        if (work) await dispatcher.work(deliver, concurrency);
        return;
      }
      await recover();
      started = true;
      claiming = true;
      timer = setInterval(() => {
        // Children finished by another process, and jobs enqueued by one, show up here.
        for (const parentId of [...childWaiters.keys()]) notifyParent(parentId);
        wake();
      }, pollIntervalMs);
      timer.unref();
      wake();
    },
    async stop({ drain = false, drainTimeoutMs = 10_000, abortGraceMs = 5_000 } = {}) {
      if (!started) return;
      claiming = false;
      if (timer) clearInterval(timer);
      if (drain) {
        // Jobs holding a slot finish; parents whose children finish still resume; nothing new starts.
        await waitUntil(
          new Promise<void>((resolve) => {
            const f = () => {
              idleWaiters.delete(f);
              resolve();
            };
            idleWaiters.add(f);
            notifyIdle();
          }),
          drainTimeoutMs,
        );
      }
      started = false;
      if (backoffTimer) clearTimeout(backoffTimer);
      backoffTimer = undefined;
      if (sweepTimer) clearInterval(sweepTimer);
      sweepTimer = undefined;
      for (const d of deliveries.splice(0)) d(false);
      const remaining = [...active.values()];
      for (const entry of remaining) entry.ac.abort(new JobAbortedError('shutdown'));
      await waitUntil(Promise.allSettled(remaining.map((e) => e.done)), abortGraceMs);
      idleWaiters.clear();
      if (dispatcher) {
        // Jobs enqueued here are handed to the queue before it closes: their flush runs after
        // the commit, and one still pending would open the queue again after close (and keep it).
        await flushInserted().catch(() => {});
        // Interrupted deliveries went back to the queue (another worker takes them over).
        working = false;
        await dispatcher.close().catch((err: unknown) => log.warn({ err }, 'Queue close failed'));
        await feed?.close();
        return;
      }
      // A clean end: the jobs it leaves Started were interrupted, not crashed (crash-attribution.ts).
      try {
        if (db.open) await boots.end(bootId, 'stopped');
      } catch (err) {
        log.error({ err }, 'Could not record the runner’s clean stop');
      }
    },
    async cancel(organizationId, jobId) {
      const canceled = await db.transaction(async (tx) => {
        const t = repo.with(tx);
        const row = await t.get(organizationId, jobId);
        if (!row) throw notFound('job', jobId);
        if (isTerminal(row.status)) {
          throw new ApiError(
            'conflict',
            `Job ${jobId} is already ${row.status}; only a Queued or Started job can be canceled.`,
          );
        }
        const rows = await t.cancelTree(jobId);
        for (const r of rows) await hooks.onTerminal?.(r, tx);
        return rows;
      });
      afterCancel(canceled);
      return toApiJob((await repo.getById(jobId))!);
    },
    async get(organizationId, jobId) {
      const row = await repo.get(organizationId, jobId);
      if (!row) throw notFound('job', jobId);
      return toApiJob(row);
    },
  };
}

async function waitUntil(p: Promise<unknown>, ms: number): Promise<void> {
  let t: NodeJS.Timeout | undefined;
  await Promise.race([p, new Promise((r) => (t = setTimeout(r, ms)))]);
  clearTimeout(t);
}
