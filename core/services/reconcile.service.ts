import { ID_BODY_SOURCE } from '../domain/ids';
import type { ObjectStore, SweepReport } from '../blobs/object-store';
import { LocalObjectStore } from '../blobs/local-object-store';
import { idFromKeySegment } from '../blobs/keys';
import type { Db } from '../store/db';
import { openDatabase } from '../store/db';
import {
  anyFileRowUnder,
  deleteOrphanSearchRows,
  fileKeyHasRow,
  integrityProblems,
  referencedObjectKeys,
  repairStaleDrawings,
  rowExists,
  withSweepLock,
} from '../store/repositories/maintenance.repository';
import type { Logger } from './context';

export { integrityProblems };

// Boot-time reconciliation (issue 7): after a crash, kill or power loss the store may hold
//  - temp files and unreferenced versions of interrupted object writes (the object store's sweep);
//  - objects whose row never committed or was deleted: a job stores bytes first and rows after
//    (process.job, compare.job), so a kill between the two leaves bytes no row names, and a
//    deletion removes rows first and bytes after, so a kill between leaves bytes of a gone record;
//  - rows without a foreign key that outlived their record (search_index has none: FTS5);
//  - drawings left `Processing` although their job already ended (a kill between the job's
//    terminal write and the handler's drawing update).
// This module removes or repairs each, and reports counts. It runs before the job runner starts
// and before the port opens, so on the desktop nothing writes concurrently.
//
// Team mode (PostgreSQL, or objects in a shared bucket) is different: other processes — API
// servers and workers on other machines — keep writing while one boots, and a job writes its bytes
// before the row that names them. An object without a row may be one another process has stored
// but not recorded yet. So there:
//  - an orphan is removed only once it is older than `orphanGraceMs` (default ORPHAN_GRACE_MS,
//    1 h, the age S3ObjectStore's temp sweep uses too): no job spends that long between storing
//    bytes and recording them, and a younger orphan is left for a later boot's sweep;
//  - one sweeper at a time: a PostgreSQL advisory lock; a process that boots while another sweeps
//    skips the object sweep (the other one does it).
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

/**
 * Opens the service database and refuses a corrupt one with a message that says what to do.
 * A file that is not SQLite at all (or whose header is damaged) fails inside the driver before
 * the integrity check can run; that is reported the same way.
 */
export async function openCheckedDatabase(file: string): Promise<Db> {
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
    problems = await integrityProblems(db);
  } catch (err) {
    problems = [(err as Error).message];
  }
  if (problems.length > 0) {
    await db.close();
    throw new DatabaseCorruptError(file, problems);
  }
  return db;
}

/** Team mode: objects without a row younger than this are kept (their row may be on its way). */
export const ORPHAN_GRACE_MS = 60 * 60_000;

/**
 * Whether other processes may write to this store while it boots: PostgreSQL, or objects that are
 * not the data dir's own files (a bucket).
 */
export function isSharedStore(db: Db, objects: ObjectStore): boolean {
  return db.dialect === 'postgres' || !(objects instanceof LocalObjectStore);
}

export interface ReconcileReport {
  sweep: SweepReport;
  /** False when another process held the sweep lock: orphan objects were left to it. */
  swept: boolean;
  /** Orphan objects younger than the grace period: kept (team mode), removed by a later sweep. */
  youngOrphans: number;
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

const ID = `[a-z]{3}_${ID_BODY_SOURCE}`;
const FILE_KEY_RE = new RegExp(`\\.(fil_${ID_BODY_SOURCE})$`);
const BLOCK_SEGMENT_RE = new RegExp(`^(blk_${ID_BODY_SOURCE})\\.`);
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
  /**
   * Orphan objects younger than this stay. Default: ORPHAN_GRACE_MS on a shared store
   * (isSharedStore), 0 on the desktop's own SQLite file and data dir.
   */
  orphanGraceMs?: number;
  /** Clock of the grace period (tests). */
  now?: () => number;
}): Promise<ReconcileReport> {
  const { db, objects } = env;
  const t0 = Date.now();
  const graceMs = env.orphanGraceMs ?? (isSharedStore(db, objects) ? ORPHAN_GRACE_MS : 0);
  const now = env.now ?? Date.now;
  const sweep = await objects.sweepTemp();
  const swept = await withSweepLock(db, () => sweepOrphans(db, objects, graceMs, now));
  const { orphanObjects, outer, unknownKeys, youngOrphans } = swept ?? {
    orphanObjects: 0,
    outer: [],
    unknownKeys: 0,
    youngOrphans: 0,
  };

  // Rows: FTS5 rows have no foreign keys, so a deletion interrupted between the row deletes and
  // the index delete (or an older bug) leaves them; they would surface as search hits of nothing.
  const orphanSearchRows = await deleteOrphanSearchRows(db);

  // Drawings still Processing whose job has ended (or vanished) match their job again.
  const repairedDrawings = await repairStaleDrawings(db, new Date().toISOString());

  // Lost bytes: rows naming objects the store does not have. Not repairable here (the bytes are
  // gone); logged so an operator restores from a backup. File rows count only once uploaded.
  const referenced = await referencedObjectKeys(db);
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
    swept: swept !== null,
    youngOrphans,
    orphanObjects,
    orphanPrefixes: outer,
    unknownKeys,
    orphanSearchRows,
    repairedDrawings,
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
      young_orphans: youngOrphans,
      ...(swept === null ? { orphan_sweep: 'skipped: another process is sweeping' } : {}),
      unknown_keys: unknownKeys,
      orphan_search_rows: orphanSearchRows,
      repaired_drawings: repairedDrawings,
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

/**
 * Removes objects no row owns; with `graceMs` > 0 only those committed at least that long ago
 * (a whole orphan unit then goes key by key, its young keys staying).
 */
async function sweepOrphans(
  db: Db,
  objects: ObjectStore,
  graceMs: number,
  now: () => number,
): Promise<{ orphanObjects: number; outer: string[]; unknownKeys: number; youngOrphans: number }> {
  const project = rowExists(db, 'projects');
  const drawing = rowExists(db, 'drawings');
  const sheet = rowExists(db, 'sheets');
  const block = rowExists(db, 'blocks');
  const overlay = rowExists(db, 'overlays');
  const fileHasRow = fileKeyHasRow(db);
  const fileRowUnder = anyFileRowUnder(db);

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
    if (!(await project(idFromKeySegment(prj)))) {
      const p = `projects/${prj}/`;
      // Never take a file's bytes whose row exists, even if its project row is gone (it cannot
      // be, with foreign keys on; this guards a database restored from elsewhere).
      if (!(await fileRowUnder(p))) prefixes.add(p);
      else if (!(kind === 'files' && (await fileHasRow(key)))) singles.push(key);
      continue;
    }
    if (kind === 'files') {
      if (s.length === 4 && FILE_KEY_RE.test(key)) {
        if (!(await fileHasRow(key))) singles.push(key);
      } else unknownKeys++;
      continue;
    }
    if (kind === 'drawings' && unit && ID_RE.test(unit)) {
      if (!(await drawing(idFromKeySegment(unit)))) {
        prefixes.add(`projects/${prj}/drawings/${unit}/`);
        continue;
      }
      if (sub !== 'sheets' || !subId || !ID_RE.test(subId)) {
        unknownKeys++;
        continue;
      }
      if (!(await sheet(idFromKeySegment(subId)))) {
        prefixes.add(`projects/${prj}/drawings/${unit}/sheets/${subId}/`);
        continue;
      }
      // A block crop (and its tiles, stored beside it as `<blk>.png.tiles/…`) without its row.
      if (rest[0] === 'blocks' && rest[1]) {
        const m = BLOCK_SEGMENT_RE.exec(rest[1]);
        if (m && !(await block(idFromKeySegment(m[1]!)))) singles.push(key);
        else if (!m) unknownKeys++;
      }
      continue;
    }
    if (kind === 'overlays' && unit && ID_RE.test(unit)) {
      if (!(await overlay(idFromKeySegment(unit))))
        prefixes.add(`projects/${prj}/overlays/${unit}/`);
      continue;
    }
    unknownKeys++;
  }

  let orphanObjects = 0;
  let youngOrphans = 0;
  // Outermost prefixes only (a drawing prefix inside an orphan project prefix goes with it).
  const sorted = [...prefixes].sort();
  const outer = sorted.filter((p) => !sorted.some((q) => q !== p && p.startsWith(q)));
  const cutoff = now() - graceMs;
  /** Deletes `key` if it is old enough; a key gone meanwhile counts as nothing. */
  const deleteIfOld = async (key: string): Promise<void> => {
    if (graceMs > 0) {
      const info = await objects.stat(key);
      if (info === null) return;
      if (info.mtime.getTime() > cutoff) {
        youngOrphans++;
        return;
      }
    }
    if (await objects.delete(key)) orphanObjects++;
  };
  for (const p of outer) {
    if (graceMs === 0) orphanObjects += await objects.deletePrefix(p);
    else for (const k of await allKeys(objects, p)) await deleteIfOld(k);
  }
  for (const k of singles) {
    if (outer.some((p) => k.startsWith(p))) continue;
    await deleteIfOld(k);
  }

  return { orphanObjects, outer, unknownKeys, youngOrphans };
}
