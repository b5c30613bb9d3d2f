// SQL for the `jobs` table, and nothing else. A repository is bound to one store handle; `with(tx)`
// gives the same repository over a transaction, so a caller can enqueue a job inside the same
// transaction as the row the job acts on: either both are committed or neither is
// (architecture.md, habit 4).
//
// Status writes carry their legality in the WHERE clause (`sourcesOf` from the status machine),
// so a status never goes backwards and never leaves a terminal status, whatever races in memory:
// e.g. a handler that finishes after its job was canceled updates 0 rows. The one exception is
// crash recovery at boot, `resetStarted` and `requeueInterrupted` (contract §4: jobs found Started
// go back to Queued).
import type { Db, Statement } from '../store/db';
import { newId } from '../domain/ids';
import { monotonicNow } from '../domain/clock';
import { sourcesOf, TERMINAL_JOB_STATUSES, type JobStatus } from '../domain/job-status';

/** A run that no longer holds its job (another process claimed it since) tried to write. */
export class LeaseLostError extends Error {
  constructor(
    readonly jobId: string,
    readonly attempt: number,
  ) {
    super(`Job ${jobId}: run ${attempt} no longer holds the job (it was claimed again since).`);
    this.name = 'LeaseLostError';
  }
}

export type JobTargetType = 'drawing' | 'sheet' | 'block' | 'overlay';

/** A row of `jobs` as stored: JSON columns are still text. */
export interface JobRow {
  id: string;
  organization_id: string;
  project_id: string | null;
  type: string;
  status: JobStatus;
  target_type: JobTargetType;
  target_id: string;
  parent_id: string | null;
  child_key: string | null;
  /** JSON text. */
  payload: string;
  progress_completed: number;
  progress_total: number;
  /** JSON text or null. */
  result: string | null;
  /** JSON text of a Problem Details object, or null. */
  error: string | null;
  credits_reserved: number;
  credits_charged: number;
  attempts: number;
  /** Claims since the job last made progress (diagnostics; no limit counts these any more). */
  stalled_claims: number;
  /** The runner boot (runner_boots.id) that made the latest claim; null before the first. */
  claim_boot: string | null;
  /** progress_completed when the latest claim began: the claim made progress when it rose. */
  claim_progress: number;
  /** Consecutive process deaths blamed on this job (crash-attribution.ts, rule 5). */
  crashes: number;
  /** 1: claimed only when nothing else runs, and nothing else runs beside it. */
  suspect: number;
  /** Not claimed before this time (back-off after a counted crash); null: at once. */
  not_before: string | null;
  /**
   * 1: a Started parent whose run ended to wait for its children without holding a queue slot
   * (team mode, migration 013); it is delivered again when its last child ends.
   */
  yielded: number;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface NewJob {
  organization_id: string;
  project_id?: string | null;
  type: string;
  target_type: JobTargetType;
  target_id: string;
  /** Any JSON value; stored as text and handed back parsed to the handler. */
  payload?: unknown;
  parent_id?: string | null;
  /** With parent_id: the idempotency key of this child within its parent (UNIQUE together). */
  child_key?: string | null;
  credits_reserved?: number;
}

export interface InsertedJob {
  row: JobRow;
  /** False when (parent_id, child_key) already existed and the existing row was returned. */
  created: boolean;
}

/** The listed statuses as a SQL list literal. Statuses are our own constants, never user input. */
const sqlList = (statuses: readonly JobStatus[]): string =>
  statuses.map((s) => `'${s}'`).join(', ');
const TERMINAL = sqlList(TERMINAL_JOB_STATUSES);

/** No child of `jobs.id` is still Queued or Started. A parent is terminal only when all its children are. */
const NO_OPEN_CHILDREN = `NOT EXISTS (SELECT 1 FROM jobs AS c WHERE c.parent_id = jobs.id AND c.status NOT IN (${TERMINAL}))`;

/** A recursive CTE named `tree(id, depth)` of a root (bound as the first parameter) and its descendants. */
const TREE = `WITH RECURSIVE tree(id, depth) AS (
  SELECT id, 0 FROM jobs WHERE id = ?
  UNION ALL
  SELECT j.id, t.depth + 1 FROM jobs AS j JOIN tree AS t ON j.parent_id = t.id
)`;

export class JobsRepository {
  private readonly s: ReturnType<typeof prepare>;

  private readonly byHandle = new WeakMap<Db, JobsRepository>();

  constructor(readonly db: Db) {
    this.s = prepare(db);
  }

  /** The same repository over another handle of the store (a transaction's). */
  with(tx: Db): JobsRepository {
    if (tx === this.db) return this;
    let r = this.byHandle.get(tx);
    if (!r) {
      r = new JobsRepository(tx);
      this.byHandle.set(tx, r);
    }
    return r;
  }

  /**
   * Inserts a Queued job. With a parent_id and child_key the insert is idempotent: a second call
   * with the same pair returns the first row (created: false), so a parent that runs again after a
   * crash never creates duplicate children.
   */
  async insert(job: NewJob): Promise<InsertedJob> {
    const now = monotonicNow();
    const params = {
      id: newId('job'),
      organization_id: job.organization_id,
      project_id: job.project_id ?? null,
      type: job.type,
      target_type: job.target_type,
      target_id: job.target_id,
      parent_id: job.parent_id ?? null,
      child_key: job.child_key ?? null,
      payload: JSON.stringify(job.payload ?? {}),
      credits_reserved: job.credits_reserved ?? 0,
      now,
    };
    if (params.child_key !== null && params.parent_id === null) {
      throw new Error('A child_key needs a parent_id: it is unique only within one parent.');
    }
    const inserted = (await this.s.insert.get(params)) as JobRow | undefined;
    if (inserted) return { row: inserted, created: true };
    const existing = (await this.s.byChildKey.get(params.parent_id, params.child_key)) as
      JobRow | undefined;
    if (!existing)
      throw new Error(`Job insert for child '${params.child_key}' conflicted but found no row.`);
    if (existing.type !== job.type || existing.target_id !== job.target_id) {
      // Same key, different work: a bug in the parent handler, not something to paper over.
      throw new Error(
        `Child key '${params.child_key}' of job ${params.parent_id} already names a ${existing.type} job on ${existing.target_id}.`,
      );
    }
    return { row: existing, created: false };
  }

  /** A job of this organization, or undefined (another organization's job is not visible). */
  async get(organizationId: string, id: string): Promise<JobRow | undefined> {
    return (await this.s.get.get(id, organizationId)) as JobRow | undefined;
  }

  /** Any job by id. For the runner's own bookkeeping, never for answering a request. */
  async getById(id: string): Promise<JobRow | undefined> {
    return (await this.s.getById.get(id)) as JobRow | undefined;
  }

  /**
   * Atomically moves the oldest Queued job of one of `types` to Started (attempts + 1) and returns
   * it; undefined when there is none. One statement, so two claimers never get the same job.
   */
  async claimNext(
    types: readonly string[],
    claim: { boot?: string | null; idle?: boolean } = {},
  ): Promise<JobRow | undefined> {
    if (types.length === 0) return undefined;
    const now = monotonicNow();
    return (await this.s.claim.get({
      now,
      types: JSON.stringify(types),
      boot: claim.boot ?? null,
      idle: claim.idle === false ? 0 : 1,
    })) as JobRow | undefined;
  }

  /** The earliest `not_before` still in the future of a Queued job of `types`, or undefined. */
  async nextNotBefore(types: readonly string[]): Promise<string | undefined> {
    if (types.length === 0) return undefined;
    const r = (await this.s.nextNotBefore.get({
      now: new Date().toISOString(),
      types: JSON.stringify(types),
    })) as { t: string | null } | undefined;
    return r?.t ?? undefined;
  }

  /** Started jobs, each with whether it was waiting for children (so not actively running). */
  async startedJobs(): Promise<(JobRow & { waiting: number })[]> {
    return (await this.s.started.all()) as (JobRow & { waiting: number })[];
  }

  /**
   * Started → Queued for a job whose claim ended with its process (crash recovery at boot), with
   * the crash bookkeeping of crash-attribution.ts. Undefined when it is no longer Started.
   */
  async requeueInterrupted(
    id: string,
    verdict: { crashes: number; suspect: boolean; notBefore: string | null },
  ): Promise<JobRow | undefined> {
    return (await this.s.requeue.get({
      id,
      crashes: verdict.crashes,
      suspect: verdict.suspect ? 1 : 0,
      not_before: verdict.notBefore,
      now: monotonicNow(),
    })) as JobRow | undefined;
  }

  /** Sets a Started job's crash count (before failing it for its crashes). */
  async setCrashes(id: string, crashes: number): Promise<void> {
    await this.s.setCrashes.run({ id, crashes });
  }

  /** Rule 3 of crash-attribution.ts: Queued jobs lose their suspicion. Returns their ids. */
  async clearQueuedSuspicion(): Promise<string[]> {
    return ((await this.s.clearSuspicion.all({ now: monotonicNow() })) as { id: string }[]).map(
      (r) => r.id,
    );
  }

  /** Records progress of a Started job; undefined when it is not Started or nothing changed. */
  async updateProgress(
    id: string,
    completed: number,
    total: number,
    attempt?: number,
  ): Promise<JobRow | undefined> {
    return (await this.s.progress.get({
      id,
      completed,
      total,
      attempt: attempt ?? -1,
      now: monotonicNow(),
    })) as JobRow | undefined;
  }

  /**
   * Started → Completed with its result. Undefined (nothing written) when the job is no longer
   * Started (e.g. canceled meanwhile) or still has children that are not terminal.
   */
  async complete(id: string, result: unknown, attempt?: number): Promise<JobRow | undefined> {
    return (await this.s.complete.get({
      id,
      result: JSON.stringify(result ?? null),
      attempt: attempt ?? -1,
      now: monotonicNow(),
    })) as JobRow | undefined;
  }

  /** Started → Failed with a Problem Details error (and optionally a result). Guarded like complete. */
  async fail(
    id: string,
    error: object,
    result: unknown = null,
    attempt?: number,
  ): Promise<JobRow | undefined> {
    return (await this.s.fail.get({
      id,
      error: JSON.stringify(error),
      result: result === null || result === undefined ? null : JSON.stringify(result),
      attempt: attempt ?? -1,
      now: monotonicNow(),
    })) as JobRow | undefined;
  }

  // ---- Team mode: jobs delivered by a queue (core/jobs/dispatcher.ts) ----
  //
  // Fencing: every claim raises `attempts`, and every later write of that run names the attempt it
  // belongs to (`attempt` above; `fence` for a handler's own records). A process that lost its
  // lease (stopped or cut off past it, while another process claimed the job) writes nothing.

  /**
   * Claims the job a queue delivered: Queued, or Started by a run whose lease ended (its process
   * died, or a yielded parent), becomes Started with attempts + 1. Undefined when the job is
   * terminal or unknown (nothing to run).
   */
  async claimById(id: string, boot: string | null): Promise<JobRow | undefined> {
    return (await this.s.claimById.get({ id, boot, now: monotonicNow() })) as JobRow | undefined;
  }

  /** Whether run `attempt` of job `id` still holds it (Started, not claimed since). */
  async holdsLease(id: string, attempt: number): Promise<boolean> {
    return (await this.s.holdsLease.get(id, attempt)) !== undefined;
  }

  /**
   * Inside the transaction `this` is bound to: throws LeaseLostError unless run `attempt` still
   * holds job `id`. On PostgreSQL it locks the job row until the transaction ends, so no claim can
   * slip in between the check and the commit of the records written with it.
   */
  async fence(id: string, attempt: number): Promise<void> {
    if ((await this.s.fence.get(id, attempt)) === undefined) throw new LeaseLostError(id, attempt);
  }

  /** Run `attempt` of parent `id` ends to wait for its children without a slot (yielded = 1). */
  async markYielded(id: string, attempt: number): Promise<JobRow | undefined> {
    return (await this.s.markYielded.get({ id, attempt, now: monotonicNow() })) as
      JobRow | undefined;
  }

  /** The parent `id` when it yielded and has no open child left: it is due to run again. */
  async resumableParent(id: string): Promise<JobRow | undefined> {
    return (await this.s.resumableParent.get(id)) as JobRow | undefined;
  }

  /**
   * What a queue may have lost (the outbox's sweep): Queued jobs, and yielded parents whose children
   * all ended, last changed before `before`. Oldest first, at most `limit`.
   */
  async undelivered(before: string, limit: number): Promise<JobRow[]> {
    return (await this.s.undelivered.all({ before, limit })) as JobRow[];
  }

  /**
   * Cancels a job and every non-terminal descendant (children, grandchildren, ...) in one
   * statement. Returns the rows it changed (in no particular order); terminal ones are left as
   * they are.
   */
  async cancelTree(rootId: string): Promise<JobRow[]> {
    return (await this.s.cancelTree.all(rootId, { now: monotonicNow() })) as JobRow[];
  }

  /** Direct children, oldest first. */
  async children(parentId: string): Promise<JobRow[]> {
    return (await this.s.children.all(parentId)) as JobRow[];
  }

  /** How many direct children are still Queued or Started. */
  async openChildCount(parentId: string): Promise<number> {
    return ((await this.s.openChildren.get(parentId)) as { n: number }).n;
  }

  /** Every descendant (not the root itself), nearest generation first, then oldest first. */
  async descendants(rootId: string): Promise<JobRow[]> {
    return (await this.s.descendants.all(rootId)) as JobRow[];
  }

  /**
   * Crash recovery at boot: every Started job goes back to Queued to run again (its progress is
   * kept; started_at is cleared because the next claim starts a new attempt). Only call this when
   * no runner is working on the database, i.e. before this process starts its own runner.
   */
  async resetStarted(): Promise<JobRow[]> {
    return (await this.s.reset.all({ now: monotonicNow() })) as JobRow[];
  }

  /** Hook for the credits service (contract §7): what the job is charged when it ends. */
  async setCreditsCharged(id: string, credits: number): Promise<void> {
    await this.s.setCharged.run({ id, credits, now: monotonicNow() });
  }
}

function prepare(db: Db) {
  const st = (sql: string): Statement => db.prepare(sql);
  // The claim is the one statement the engines need apart: the handled types arrive as one JSON
  // array, and on PostgreSQL concurrent claimers (workers on other machines) skip a row another
  // claimer holds instead of waiting for it.
  const typesIn =
    db.dialect === 'sqlite'
      ? 'SELECT value FROM json_each(@types)'
      : 'SELECT json_array_elements_text(@types::json)';
  const skipLocked = db.dialect === 'sqlite' ? '' : ' FOR UPDATE SKIP LOCKED';
  return {
    insert: st(`
      INSERT INTO jobs (id, organization_id, project_id, type, status, target_type, target_id,
        parent_id, child_key, payload, credits_reserved, created_at, updated_at)
      VALUES (@id, @organization_id, @project_id, @type, 'Queued', @target_type, @target_id,
        @parent_id, @child_key, @payload, @credits_reserved, @now, @now)
      ON CONFLICT (parent_id, child_key) DO NOTHING
      RETURNING *`),
    byChildKey: st(`SELECT * FROM jobs WHERE parent_id = ? AND child_key = ?`),
    get: st(`SELECT * FROM jobs WHERE id = ? AND organization_id = ?`),
    getById: st(`SELECT * FROM jobs WHERE id = ?`),
    claim: st(`
      UPDATE jobs SET status = 'Started', attempts = attempts + 1, stalled_claims = stalled_claims + 1,
        started_at = @now, updated_at = @now,
        claim_boot = @boot, claim_progress = progress_completed, not_before = NULL
      WHERE id = (
        SELECT id FROM jobs
        WHERE status = 'Queued' AND type IN (${typesIn})
          AND (not_before IS NULL OR not_before <= @now)
        ORDER BY created_at, id LIMIT 1${skipLocked}
      ) AND status IN (${sqlList(sourcesOf('Started'))})
        -- A suspect runs alone: when it is next in line and others run, nothing is claimed until
        -- they are done (crash-attribution.ts).
        AND (suspect = 0 OR @idle = 1)
      RETURNING *`),
    nextNotBefore: st(`
      SELECT min(not_before) AS t FROM jobs
      WHERE status = 'Queued' AND type IN (${typesIn})
        AND not_before > @now`),
    started: st(`
      SELECT jobs.*, EXISTS (SELECT 1 FROM jobs AS c WHERE c.parent_id = jobs.id AND c.status NOT IN (${TERMINAL})) AS waiting
      FROM jobs WHERE status = 'Started' ORDER BY created_at, id`),
    requeue: st(`
      UPDATE jobs SET status = 'Queued', started_at = NULL, updated_at = @now,
        crashes = @crashes, suspect = @suspect, not_before = @not_before
      WHERE id = @id AND status = 'Started'
      RETURNING *`),
    setCrashes: st(`UPDATE jobs SET crashes = @crashes WHERE id = @id`),
    clearSuspicion: st(`
      UPDATE jobs SET crashes = 0, suspect = 0, not_before = NULL, updated_at = @now
      WHERE status = 'Queued' AND (crashes > 0 OR suspect = 1)
      RETURNING id`),
    progress: st(`
      UPDATE jobs SET progress_completed = @completed, progress_total = @total, updated_at = @now,
        -- A job that moves forward is not stalled…
        stalled_claims = CASE WHEN @completed > progress_completed THEN 1 ELSE stalled_claims END,
        -- …and is not the one taking it down: its suspicion ends (crash-attribution.ts, rule 2).
        crashes = CASE WHEN @completed > progress_completed THEN 0 ELSE crashes END,
        suspect = CASE WHEN @completed > progress_completed THEN 0 ELSE suspect END
      WHERE id = @id AND status = 'Started' AND (@attempt < 0 OR attempts = @attempt)
        AND (progress_completed <> @completed OR progress_total <> @total)
      RETURNING *`),
    complete: st(`
      UPDATE jobs SET status = 'Completed', result = @result, error = NULL,
        finished_at = @now, updated_at = @now
      WHERE id = @id AND status IN (${sqlList(sourcesOf('Completed'))}) AND ${NO_OPEN_CHILDREN}
        AND (@attempt < 0 OR attempts = @attempt)
      RETURNING *`),
    fail: st(`
      UPDATE jobs SET status = 'Failed', result = @result, error = @error,
        finished_at = @now, updated_at = @now
      WHERE id = @id AND status IN (${sqlList(sourcesOf('Failed'))}) AND ${NO_OPEN_CHILDREN}
        AND (@attempt < 0 OR attempts = @attempt)
      RETURNING *`),
    cancelTree: st(`
      ${TREE}
      UPDATE jobs SET status = 'Canceled', finished_at = @now, updated_at = @now
      WHERE id IN (SELECT id FROM tree) AND status IN (${sqlList(sourcesOf('Canceled'))})
      RETURNING *`),
    children: st(`SELECT * FROM jobs WHERE parent_id = ? ORDER BY created_at, id`),
    openChildren: st(
      `SELECT count(*) AS n FROM jobs WHERE parent_id = ? AND status NOT IN (${TERMINAL})`,
    ),
    descendants: st(`
      ${TREE}
      SELECT jobs.* FROM tree JOIN jobs ON jobs.id = tree.id
      WHERE tree.depth > 0 ORDER BY tree.depth, jobs.created_at, jobs.id`),
    reset: st(`
      UPDATE jobs SET status = 'Queued', started_at = NULL, updated_at = @now
      WHERE status = 'Started'
      RETURNING *`),
    setCharged: st(`UPDATE jobs SET credits_charged = @credits, updated_at = @now WHERE id = @id`),
    claimById: st(`
      UPDATE jobs SET status = 'Started', attempts = attempts + 1, stalled_claims = stalled_claims + 1,
        started_at = @now, updated_at = @now, yielded = 0,
        claim_boot = @boot, claim_progress = progress_completed, not_before = NULL
      WHERE id = @id AND status IN ('Queued', 'Started')
      RETURNING *`),
    holdsLease: st(`SELECT 1 AS ok FROM jobs WHERE id = ? AND attempts = ? AND status = 'Started'`),
    fence: st(
      `SELECT 1 AS ok FROM jobs WHERE id = ? AND attempts = ? AND status = 'Started'${db.dialect === 'postgres' ? ' FOR UPDATE' : ''}`,
    ),
    markYielded: st(`
      UPDATE jobs SET yielded = 1, updated_at = @now
      WHERE id = @id AND attempts = @attempt AND status = 'Started'
      RETURNING *`),
    resumableParent: st(
      `SELECT * FROM jobs WHERE id = ? AND status = 'Started' AND yielded = 1 AND ${NO_OPEN_CHILDREN}`,
    ),
    undelivered: st(`
      SELECT * FROM jobs
      WHERE ((status = 'Queued') OR (status = 'Started' AND yielded = 1 AND ${NO_OPEN_CHILDREN}))
        AND updated_at < @before
      ORDER BY created_at, id LIMIT @limit`),
  };
}
