import type { ObjectStore, SweepReport } from '../blobs/object-store';
import type { Db } from '../store/db';
import { openDatabase } from '../store/db';
import type { Logger } from './context';

// Boot-time reconciliation (issue 7): after a crash, kill or power loss the store may hold
//  - temp files and unreferenced versions of interrupted object writes (the object store's sweep);
//  - objects whose row never committed or was deleted: a job stores bytes first and rows after
//    (process.job, compare.job), so a kill between the two leaves bytes no row names, and a
//    deletion removes rows first and bytes after, so a kill between leaves bytes of a gone record;
//  - rows without a foreign key that outlived their record (search_index has none: FTS5);
//  - drawings left `Processing` although their job already ended (a kill between the job's
//    terminal write and the handler's drawing update).
// This module removes or repairs each, and reports counts. It runs before the job runner starts
// and before the port opens, so nothing writes concurrently.
//
// One rule above all: the bytes of a file whose `files` row exists are NEVER removed, even while
// the row is `pending` (a client may be about to finish its upload).
//
// The SQL lives here rather than in a repository because it is one-off, whole-store maintenance
// that no request path uses.

export class DatabaseCorruptError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(
      `The database ${file} is corrupt (SQLite integrity check: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? `; … ${problems.length - 5} more` : ''}). ` +
        'Blueline refuses to start on a corrupt database so it cannot make things worse. Stop every Blueline process, ' +
        'then restore the last good copy with `blueline restore <backup-dir> --data-dir <new-dir>` (see `blueline backup`).',
    );
    this.name = 'DatabaseCorruptError';
  }
}

/** `PRAGMA integrity_check` rows: ['ok'] when the file is sound. */
export function integrityProblems(db: Db): string[] {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  const out = rows.map((r) => r.integrity_check);
  return out.length === 1 && out[0] === 'ok' ? [] : out;
}

/**
 * Opens the service database and refuses a corrupt one with a message that says what to do.
 * A file that is not SQLite at all (or whose header is damaged) fails inside the driver before
 * the integrity check can run; that is reported the same way.
 */
export function openCheckedDatabase(file: string): Db {
  let db: Db;
  try {
    db = openDatabase(file);
  } catch (err) {
    const code = (err as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB'))
      throw new DatabaseCorruptError(file, [(err as Error).message]);
    throw err;
  }
  let problems: string[];
  try {
    problems = integrityProblems(db);
  } catch (err) {
    problems = [(err as Error).message];
  }
  if (problems.length > 0) {
    db.close();
    throw new DatabaseCorruptError(file, problems);
  }
  return db;
}

export interface ReconcileReport {
  sweep: SweepReport;
  /** Object keys removed because no row owns them. */
  orphanObjects: number;
  /** Whole prefixes removed (a project, drawing, sheet or overlay without its row). */
  orphanPrefixes: string[];
  /** Keys under projects/ of a shape this module does not know: left alone. */
  unknownKeys: number;
  /** search_index rows of deleted sheets, drawings or projects. */
  orphanSearchRows: number;
  /** Drawings left Processing whose job had ended: set Ready or Failed to match it. */
  repairedDrawings: number;
  /** Keys rows point at that the store does not have (lost bytes; logged, not repairable here). */
  missingObjects: string[];
  ms: number;
}

const ID = '[a-z]{3}_[0-9a-z]{10,40}';
const FILE_KEY_RE = new RegExp(`\\.(fil_[0-9a-z]{10,40})$`);
const BLOCK_SEGMENT_RE = new RegExp(`^(blk_[0-9a-z]{10,40})\\.`);
const ID_RE = new RegExp(`^${ID}$`);

/** Every key under `prefix`, in key order. */
async function allKeys(objects: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | null = null;
  for (;;) {
    const page = await objects.list(prefix, { limit: 1000, direction: 'forward', token });
    for (const e of page.keys) out.push(e.key);
    if (page.nextToken === null) return out;
    token = page.nextToken;
  }
}

export async function reconcile(env: {
  db: Db;
  objects: ObjectStore;
  log?: Logger;
}): Promise<ReconcileReport> {
  const { db, objects } = env;
  const t0 = Date.now();
  const sweep = await objects.sweepTemp();

  const exists = (table: 'projects' | 'drawings' | 'sheets' | 'blocks' | 'overlays') => {
    const stmt = db.prepare(`SELECT 1 FROM ${table} WHERE id = ?`).pluck();
    const cache = new Map<string, boolean>();
    return (id: string) => {
      let v = cache.get(id);
      if (v === undefined) cache.set(id, (v = stmt.get(id) !== undefined));
      return v;
    };
  };
  const project = exists('projects');
  const drawing = exists('drawings');
  const sheet = exists('sheets');
  const block = exists('blocks');
  const overlay = exists('overlays');
  const fileKeyHasRow = db.prepare('SELECT 1 FROM files WHERE object_key = ?').pluck();
  const anyFileRowUnder = db
    .prepare('SELECT 1 FROM files WHERE substr(object_key, 1, length(?)) = ? LIMIT 1')
    .pluck();

  // Decide per key; a whole unit (project/drawing/sheet/overlay) whose row is gone goes as a prefix.
  const prefixes = new Set<string>();
  const singles: string[] = [];
  let unknownKeys = 0;
  for (const key of await allKeys(objects, 'projects/')) {
    const s = key.split('/');
    const [, prj, kind, unit, sub, subId, ...rest] = s;
    if (!prj || !ID_RE.test(prj) || !kind) {
      unknownKeys++;
      continue;
    }
    if (!project(prj)) {
      const p = `projects/${prj}/`;
      // Never take a file's bytes whose row exists, even if its project row is gone (it cannot
      // be, with foreign keys on; this guards a database restored from elsewhere).
      if (anyFileRowUnder.get(p, p) === undefined) prefixes.add(p);
      else if (!(kind === 'files' && fileKeyHasRow.get(key) !== undefined)) singles.push(key);
      continue;
    }
    if (kind === 'files') {
      if (s.length === 4 && FILE_KEY_RE.test(key)) {
        if (fileKeyHasRow.get(key) === undefined) singles.push(key);
      } else unknownKeys++;
      continue;
    }
    if (kind === 'drawings' && unit && ID_RE.test(unit)) {
      if (!drawing(unit)) {
        prefixes.add(`projects/${prj}/drawings/${unit}/`);
        continue;
      }
      if (sub !== 'sheets' || !subId || !ID_RE.test(subId)) {
        unknownKeys++;
        continue;
      }
      if (!sheet(subId)) {
        prefixes.add(`projects/${prj}/drawings/${unit}/sheets/${subId}/`);
        continue;
      }
      // A block crop (and its tiles, stored beside it as `<blk>.png.tiles/…`) without its row.
      if (rest[0] === 'blocks' && rest[1]) {
        const m = BLOCK_SEGMENT_RE.exec(rest[1]);
        if (m && !block(m[1]!)) singles.push(key);
        else if (!m) unknownKeys++;
      }
      continue;
    }
    if (kind === 'overlays' && unit && ID_RE.test(unit)) {
      if (!overlay(unit)) prefixes.add(`projects/${prj}/overlays/${unit}/`);
      continue;
    }
    unknownKeys++;
  }

  let orphanObjects = 0;
  // Outermost prefixes only (a drawing prefix inside an orphan project prefix goes with it).
  const sorted = [...prefixes].sort();
  const outer = sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(q)));
  for (const p of outer) orphanObjects += await objects.deletePrefix(p);
  for (const k of singles) {
    if (outer.some((p) => k.startsWith(p))) continue;
    if (await objects.delete(k)) orphanObjects++;
  }

  // Rows: FTS5 rows have no foreign keys, so a deletion interrupted between the row deletes and
  // the index delete (or an older bug) leaves them; they would surface as search hits of nothing.
  const orphanSearchRows = db
    .prepare(
      `DELETE FROM search_index WHERE
         (sheet_id IS NOT NULL AND sheet_id NOT IN (SELECT id FROM sheets))
         OR (drawing_id IS NOT NULL AND drawing_id NOT IN (SELECT id FROM drawings))
         OR (project_id IS NOT NULL AND project_id NOT IN (SELECT id FROM projects))`,
    )
    .run().changes;

  // Drawings still Processing whose job has ended (or vanished) match their job again.
  const stale = db
    .prepare(
      `SELECT d.id, j.status AS job_status FROM drawings d LEFT JOIN jobs j ON j.id = d.job_id
       WHERE d.status = 'Processing' AND (j.id IS NULL OR j.status IN ('Completed', 'Failed', 'Canceled'))`,
    )
    .all() as { id: string; job_status: string | null }[];
  const setStatus = db.prepare(
    `UPDATE drawings SET status = ?, sheet_count = (SELECT count(*) FROM sheets WHERE drawing_id = drawings.id), updated_at = ? WHERE id = ?`,
  );
  const now = new Date().toISOString();
  db.transaction(() => {
    for (const d of stale)
      setStatus.run(d.job_status === 'Completed' ? 'Ready' : 'Failed', now, d.id);
  })();

  // Lost bytes: rows naming objects the store does not have. Not repairable here (the bytes are
  // gone); logged so an operator restores from a backup. File rows count only once uploaded.
  const referenced = db
    .prepare(
      `SELECT object_key AS k FROM files WHERE status = 'uploaded'
       UNION ALL SELECT image_key FROM sheets WHERE image_key IS NOT NULL
       UNION ALL SELECT thumbnail_key FROM sheets WHERE thumbnail_key IS NOT NULL
       UNION ALL SELECT image_key FROM blocks WHERE image_key IS NOT NULL
       UNION ALL SELECT value FROM overlays, json_each(overlays.images) WHERE json_valid(overlays.images)`,
    )
    .pluck()
    .all() as string[];
  const missingObjects: string[] = [];
  for (const k of referenced) {
    if (typeof k !== 'string') continue;
    try {
      if ((await objects.stat(k)) === null) missingObjects.push(k);
    } catch {
      missingObjects.push(k);
    }
  }

  const report: ReconcileReport = {
    sweep,
    orphanObjects,
    orphanPrefixes: outer,
    unknownKeys,
    orphanSearchRows,
    repairedDrawings: stale.length,
    missingObjects,
    ms: Date.now() - t0,
  };
  env.log?.info(
    {
      temp_files: sweep.tempFiles,
      orphan_versions: sweep.orphanVersions,
      broken_keys: sweep.brokenKeys.length,
      trash: sweep.trash,
      orphan_objects: orphanObjects,
      orphan_prefixes: outer.length,
      unknown_keys: unknownKeys,
      orphan_search_rows: orphanSearchRows,
      repaired_drawings: stale.length,
      missing_objects: missingObjects.length,
      ms: report.ms,
    },
    'Boot reconciliation',
  );
  if (missingObjects.length > 0)
    env.log?.warn(
      { missing_objects: missingObjects.slice(0, 20) },
      'Rows name objects the store does not have (lost bytes); restore from a backup',
    );
  return report;
}
