import type { Db } from '../db';
import { PgDb } from '../pg-db';

// SQL of the maintenance services (boot reconciliation, backups): which objects the records
// reference, which rows exist, and repairs of rows that have outlived their records.

type Table = 'projects' | 'drawings' | 'sheets' | 'blocks' | 'overlays';

/** `PRAGMA integrity_check` rows: [] when the file is sound. */
export async function integrityProblems(db: Db): Promise<string[]> {
  // PostgreSQL checks its pages itself (checksums, WAL); the check is SQLite's.
  if (db.dialect !== 'sqlite') return [];
  const rows = (await db.prepare('PRAGMA integrity_check').all()) as { integrity_check: string }[];
  const out = rows.map((r) => r.integrity_check);
  return out.length === 1 && out[0] === 'ok' ? [] : out;
}

/** A memoized "does a row with this id exist in `table`" check, for walks over many object keys. */
export function rowExists(db: Db, table: Table): (id: string) => Promise<boolean> {
  const stmt = db.prepare(`SELECT 1 AS one FROM ${table} WHERE id = ?`);
  const cache = new Map<string, boolean>();
  return async (id) => {
    let v = cache.get(id);
    if (v === undefined) cache.set(id, (v = (await stmt.get(id)) !== undefined));
    return v;
  };
}

/** Whether a file row names exactly this object key. */
export function fileKeyHasRow(db: Db): (key: string) => Promise<boolean> {
  const stmt = db.prepare('SELECT 1 AS one FROM files WHERE object_key = ?');
  return async (key) => (await stmt.get(key)) !== undefined;
}

/** Whether any file row names an object key under `prefix`. */
export function anyFileRowUnder(db: Db): (prefix: string) => Promise<boolean> {
  const stmt = db.prepare(
    'SELECT 1 AS one FROM files WHERE substr(object_key, 1, length(?)) = ? LIMIT 1',
  );
  return async (prefix) => (await stmt.get(prefix, prefix)) !== undefined;
}

/** Object keys named by overlays' `images` JSON (one per image), in the store's own JSON SQL. */
function overlayImageKeys(db: Db): string {
  return db.dialect === 'sqlite'
    ? `SELECT value FROM overlays, json_each(overlays.images) WHERE json_valid(overlays.images)`
    : `SELECT e.value FROM overlays, jsonb_each_text(overlays.images::jsonb) AS e`;
}

/** Object keys the records need: uploaded files, sheet images and thumbnails, crops, overlays. */
export async function referencedObjectKeys(db: Db): Promise<string[]> {
  return (
    (await db
      .prepare(
        `SELECT object_key FROM files WHERE status = 'uploaded'
         UNION SELECT image_key FROM sheets WHERE image_key IS NOT NULL
         UNION SELECT thumbnail_key FROM sheets WHERE thumbnail_key IS NOT NULL
         UNION SELECT image_key FROM blocks WHERE image_key IS NOT NULL
         UNION ${overlayImageKeys(db)}`,
      )
      .all()) as { object_key: unknown }[]
  )
    .map((r) => r.object_key)
    .filter((k): k is string => typeof k === 'string');
}

/** Object keys of files whose bytes may or may not have arrived. */
export async function pendingFileKeys(db: Db): Promise<string[]> {
  return (
    (await db.prepare(`SELECT object_key FROM files WHERE status = 'pending'`).all()) as {
      object_key: string;
    }[]
  ).map((r) => r.object_key);
}

/** Removes search_index rows whose sheet, drawing or project is gone; returns how many. */
export async function deleteOrphanSearchRows(db: Db): Promise<number> {
  return (
    await db
      .prepare(
        `DELETE FROM search_index WHERE
         (sheet_id IS NOT NULL AND sheet_id NOT IN (SELECT id FROM sheets))
         OR (drawing_id IS NOT NULL AND drawing_id NOT IN (SELECT id FROM drawings))
         OR (project_id IS NOT NULL AND project_id NOT IN (SELECT id FROM projects))`,
      )
      .run()
  ).changes;
}

/**
 * Drawings still Processing whose process job has ended (or vanished) take their job's outcome:
 * Ready when it completed, else Failed. Returns how many were repaired.
 */
const SET_STATUS = `UPDATE drawings SET status = ?, sheet_count = (SELECT count(*) FROM sheets WHERE drawing_id = drawings.id), updated_at = ? WHERE id = ?`;

export async function repairStaleDrawings(db: Db, now: string): Promise<number> {
  const stale = (await db
    .prepare(
      `SELECT d.id, j.status AS job_status FROM drawings d LEFT JOIN jobs j ON j.id = d.job_id
       WHERE d.status = 'Processing' AND (j.id IS NULL OR j.status IN ('Completed', 'Failed', 'Canceled'))`,
    )
    .all()) as { id: string; job_status: string | null }[];
  await db.transaction(async (tx) => {
    const set = tx.prepare(SET_STATUS);
    for (const d of stale)
      await set.run(d.job_status === 'Completed' ? 'Ready' : 'Failed', now, d.id);
  });
  return stale.length;
}

/** Any number to lock on: one orphan sweep at a time over a shared store (pg_try_advisory_lock). */
export const ORPHAN_SWEEP_LOCK = 74_2021_0002;

/**
 * Runs `fn` as the only orphan sweeper of the store: on PostgreSQL under a session advisory lock
 * held on a connection of its own for the sweep's length (the sweep awaits the object store, which
 * a transaction must not); null, without running `fn`, when another process holds it. SQLite's
 * data dir has one service: `fn` just runs.
 */
export async function withSweepLock<T>(db: Db, fn: () => Promise<T>): Promise<T | null> {
  const root = db.root;
  if (!(root instanceof PgDb)) return await fn();
  const client = await root.pool.connect();
  try {
    const got = (
      await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        ORPHAN_SWEEP_LOCK,
      ])
    ).rows[0]?.locked;
    if (!got) return null;
    try {
      return await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [ORPHAN_SWEEP_LOCK]);
    }
  } finally {
    client.release();
  }
}
