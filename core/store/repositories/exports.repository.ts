import type { Db } from '../db';
import type { Row } from './row';

// What an export reads (contract §6, Exports): a comparison's overlays with the sheets of their
// blocks, their change regions, and the records around them. Reads only; the export job writes
// nothing but its File.

/** An overlay of a comparison with its blocks' sheets, types and boxes (sheet pixels). */
export interface OverlayWithBlocks extends Row {
  sheet_a_id: string;
  sheet_b_id: string;
  block_a_type: string;
  block_b_type: string;
  block_a_bbox: string;
  block_b_bbox: string;
}

export async function overlaysWithBlocksOfJob(db: Db, jobId: string): Promise<OverlayWithBlocks[]> {
  return (await db
    .prepare(
      `SELECT o.*, ba.sheet_id AS sheet_a_id, bb.sheet_id AS sheet_b_id,
            ba.type AS block_a_type, bb.type AS block_b_type,
            ba.bbox AS block_a_bbox, bb.bbox AS block_b_bbox
       FROM overlays o
       JOIN blocks ba ON ba.id = o.block_a_id
       JOIN blocks bb ON bb.id = o.block_b_id
      WHERE o.job_id = ?
      ORDER BY o.created_at, o.id`,
    )
    .all(jobId)) as OverlayWithBlocks[];
}

export async function changesOfOverlay(db: Db, overlayId: string): Promise<Row[]> {
  return (await db
    .prepare('SELECT * FROM changes WHERE overlay_id = ? ORDER BY created_at, id')
    .all(overlayId)) as Row[];
}

export async function sheetsByIds(db: Db, ids: string[]): Promise<Map<string, Row>> {
  if (ids.length === 0) return new Map();
  const rows = (await db
    .prepare(`SELECT * FROM sheets WHERE id IN (${ids.map(() => '?').join(',')})`)
    .all(...ids)) as Row[];
  return new Map(rows.map((r) => [r.id, r]));
}

export async function rowById(
  db: Db,
  table: 'drawings' | 'files' | 'projects' | 'jobs' | 'api_keys',
  id: string,
): Promise<Row | undefined> {
  return (await db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id)) as Row | undefined;
}

/** The file an export job stored, if an earlier run of that job got as far as storing it. */
export async function fileOfExportJob(db: Db, jobId: string): Promise<Row | undefined> {
  return (await db.prepare('SELECT * FROM files WHERE job_id = ?').get(jobId)) as Row | undefined;
}

/**
 * The File of an export, stored with its bytes already in place (status `uploaded`) and the job
 * that made it. `id` and `createdAt` are chosen by the caller, who wrote the bytes under the key
 * they determine (bytes first, then the row: a row never points at missing bytes).
 */
export async function insertExportFile(
  db: Db,
  f: {
    id: string;
    organizationId: string;
    projectId: string;
    jobId: string;
    filename: string;
    contentType: string;
    size: number;
    sha256: string;
    objectKey: string;
    createdAt: string;
  },
): Promise<Row> {
  await db
    .prepare(
      `INSERT INTO files (id, organization_id, project_id, filename, content_type, declared_size, size_bytes, sha256, status, object_key, job_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'uploaded', ?, ?, ?, ?)`,
    )
    .run(
      f.id,
      f.organizationId,
      f.projectId,
      f.filename,
      f.contentType,
      f.size,
      f.size,
      f.sha256,
      f.objectKey,
      f.jobId,
      f.createdAt,
      f.createdAt,
    );
  return (await db.prepare('SELECT * FROM files WHERE id = ?').get(f.id)) as Row;
}
