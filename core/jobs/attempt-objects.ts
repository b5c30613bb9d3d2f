import type { ObjectStore } from '../blobs/object-store';
import { monotonicNow } from '../domain/clock';
import type { Db } from '../store/db';
import { LeaseLostError } from './jobs.repository';

// Objects written by a run that died (migration 16). A handler stores bytes first and the row
// naming them after (a row never points at missing bytes), so a run killed between the two leaves
// objects no row names. Each unit of objects (a sheet's prefix, an overlay's prefix, under an id
// made by that run) is recorded here, fenced by the run's attempt, *before* its bytes go up; the
// transaction that commits the row naming the unit deletes the entry. When the job is claimed again
// (attempt n), `cleanEarlierAttempts` deletes the objects of every entry of attempts below n — units
// no committed row names — then the entries. An object a committed row names is never deleted: its
// entry went in the row's own transaction, and the sheet or overlay id is checked again anyway.
//
// What it does not catch: a run that stalled past its lease, was cleaned up after, and then still
// uploads (its own fenced row write then fails): those objects are the orphan sweep's, as before.

export type AttemptUnitKind = 'sheet' | 'overlay';

interface RunningJob {
  id: string;
  /** The run's attempt (the job row's `attempts` as claimed). */
  attempts: number;
}

/**
 * Records that this run is about to write the objects under `prefix` (the unit `unitId`). Throws
 * LeaseLostError when the run no longer holds the job: it must write nothing then.
 */
export async function trackAttemptUnit(
  db: Db,
  job: RunningJob,
  unit: { kind: AttemptUnitKind; id: string; prefix: string },
): Promise<void> {
  const r = await db
    .prepare(
      `INSERT INTO job_attempt_objects (job_id, attempt, kind, unit_id, prefix, created_at)
       SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (
         SELECT 1 FROM jobs WHERE id = ? AND attempts = ? AND status = 'Started')`,
    )
    .run(
      job.id,
      job.attempts,
      unit.kind,
      unit.id,
      unit.prefix,
      monotonicNow(),
      job.id,
      job.attempts,
    );
  if (r.changes !== 1) throw new LeaseLostError(job.id, job.attempts);
}

/** In the transaction that commits the row naming the unit: it is no longer a leftover. */
export async function adoptAttemptUnit(tx: Db, jobId: string, prefix: string): Promise<void> {
  await tx
    .prepare('DELETE FROM job_attempt_objects WHERE job_id = ? AND prefix = ?')
    .run(jobId, prefix);
}

/**
 * The unit was written but its row was not (an earlier run stored the same page or pair
 * meanwhile): deletes its objects and its entry now.
 */
export async function discardAttemptUnit(
  db: Db,
  objects: ObjectStore,
  jobId: string,
  prefix: string,
): Promise<void> {
  await objects.deletePrefix(prefix);
  await adoptAttemptUnit(db, jobId, prefix);
}

const UNIT_TABLE: Record<AttemptUnitKind, string> = { sheet: 'sheets', overlay: 'overlays' };

/**
 * At the start of attempt `job.attempts`: deletes what earlier attempts of the job wrote and no
 * row names, then their entries. Returns how many units went.
 */
export async function cleanEarlierAttempts(
  db: Db,
  objects: ObjectStore,
  job: RunningJob,
): Promise<number> {
  if (job.attempts <= 1) return 0;
  const left = (await db
    .prepare(
      'SELECT kind, unit_id, prefix FROM job_attempt_objects WHERE job_id = ? AND attempt < ? ORDER BY prefix',
    )
    .all(job.id, job.attempts)) as { kind: AttemptUnitKind; unit_id: string; prefix: string }[];
  let n = 0;
  for (const u of left) {
    const named = await db
      .prepare(`SELECT 1 AS one FROM ${UNIT_TABLE[u.kind]} WHERE id = ?`)
      .get(u.unit_id);
    if (!named) {
      await objects.deletePrefix(u.prefix);
      n++;
    }
    await db
      .prepare('DELETE FROM job_attempt_objects WHERE job_id = ? AND prefix = ? AND attempt < ?')
      .run(job.id, u.prefix, job.attempts);
  }
  return n;
}
