import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';
import type { Row } from './row';

// Detected symbol instances written by the parse job (contract §4 Symbol, §7). A parse job stores
// the instances of one scanned unit (a sheet, or one block of it) by replacing whatever an earlier
// attempt of the same job stored for that unit, in one transaction: a re-run job never stores an
// instance twice. Boxes are in sheet pixels (origin top-left).

export interface NewSymbol {
  label: string;
  bbox: { x: number; y: number; width: number; height: number };
  confidence: number;
  rotation: 0 | 90 | 180 | 270;
  /** The block the instance lies in (null when it lies in none). */
  blockId: string | null;
}

export interface ParseUnit {
  organizationId: string;
  projectId: string;
  jobId: string;
  sheetId: string;
  /** Set when the job scans one block only: the unit is that block, not the whole sheet. */
  blockId: string | null;
}

/** Replaces the unit's instances from an earlier attempt of the same job with `symbols`. Call inside a transaction. */
export async function replaceUnitSymbols(
  db: Db,
  unit: ParseUnit,
  symbols: readonly NewSymbol[],
): Promise<void> {
  if (unit.blockId)
    await db
      .prepare('DELETE FROM symbols WHERE job_id = ? AND block_id = ?')
      .run(unit.jobId, unit.blockId);
  else
    await db
      .prepare('DELETE FROM symbols WHERE job_id = ? AND sheet_id = ?')
      .run(unit.jobId, unit.sheetId);
  const insert =
    db.prepare(`INSERT INTO symbols (id, organization_id, project_id, job_id, sheet_id, block_id, label, bbox, confidence, rotation, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  for (const s of symbols) {
    const now = monotonicNow();
    await insert.run(
      newId('symbol'),
      unit.organizationId,
      unit.projectId,
      unit.jobId,
      unit.sheetId,
      s.blockId,
      s.label,
      JSON.stringify(s.bbox),
      Math.round(s.confidence * 1e4) / 1e4,
      s.rotation,
      now,
      now,
    );
  }
}

export interface LabelCount {
  sheet_id: string;
  label: string;
  count: number;
}

export async function symbolCountsOfJob(db: Db, jobId: string): Promise<LabelCount[]> {
  return (await db
    .prepare(
      'SELECT sheet_id, label, count(*) AS count FROM symbols WHERE job_id = ? GROUP BY sheet_id, label ORDER BY sheet_id, label',
    )
    .all(jobId)) as LabelCount[];
}

/** Sheets a parse job has scanned so far: its progress counter, one unit per sheet or block scanned (credits: 1 per sheet). */
export async function parseSheetsScanned(db: Db, jobId: string): Promise<number> {
  const r = (await db
    .prepare('SELECT progress_completed AS n FROM jobs WHERE id = ?')
    .get(jobId)) as { n: number } | undefined;
  return r?.n ?? 0;
}

/** Completed parse jobs of a project, newest first (candidates for a revision baseline). */
export async function completedParseJobs(
  db: Db,
  projectId: string,
  excludeJobId: string,
): Promise<Row[]> {
  return (await db
    .prepare(
      `SELECT * FROM jobs WHERE project_id = ? AND type = 'parse' AND status = 'Completed' AND parent_id IS NULL AND id <> ?
     ORDER BY created_at DESC, id DESC`,
    )
    .all(projectId, excludeJobId)) as Row[];
}

export async function sheetsOfDrawingOrdered(db: Db, drawingId: string): Promise<Row[]> {
  return (await db
    .prepare('SELECT * FROM sheets WHERE drawing_id = ? ORDER BY page_index')
    .all(drawingId)) as Row[];
}

export async function blocksOfSheetOrdered(db: Db, sheetId: string): Promise<Row[]> {
  return (await db
    .prepare('SELECT * FROM blocks WHERE sheet_id = ? ORDER BY created_at, id')
    .all(sheetId)) as Row[];
}

export async function rowById(
  db: Db,
  table: 'sheets' | 'blocks' | 'drawings' | 'jobs',
  id: string,
): Promise<Row | undefined> {
  return (await db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id)) as Row | undefined;
}
