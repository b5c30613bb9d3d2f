import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';
import type { Row } from './row';

// Overlays and change regions written by the compare and analyze jobs (contract §4, §6).
// One overlay per (comparison job, block pair): UNIQUE in migration 003, so a re-run job finds
// what an earlier attempt stored instead of writing it twice.

export interface NewOverlay {
  organizationId: string;
  projectId: string;
  /** The comparison job the client started (the root), so GET /overlays?job_id= returns all. */
  jobId: string;
  blockAId: string;
  blockBId: string;
  score: number;
  width: number;
  height: number;
  transform: number[];
  alignment: unknown;
  stats: unknown;
  /** Object keys: {combined, combined_colorblind, addition, deletion, aligned_b}. */
  images: Record<string, string>;
}

export async function overlayFor(
  db: Db,
  jobId: string,
  blockAId: string,
  blockBId: string,
): Promise<Row | undefined> {
  return (await db
    .prepare('SELECT * FROM overlays WHERE job_id = ? AND block_a_id = ? AND block_b_id = ?')
    .get(jobId, blockAId, blockBId)) as Row | undefined;
}

export async function overlaysOfJob(db: Db, jobId: string): Promise<Row[]> {
  return (await db
    .prepare('SELECT * FROM overlays WHERE job_id = ? ORDER BY created_at, id')
    .all(jobId)) as Row[];
}

export async function countOverlaysOfJob(db: Db, jobId: string): Promise<number> {
  return (
    (await db.prepare('SELECT count(*) AS n FROM overlays WHERE job_id = ?').get(jobId)) as {
      n: number;
    }
  ).n;
}

/** Inserts the overlay unless this job already stored that block pair; returns the stored row. */
export async function insertOverlay(db: Db, o: NewOverlay, id = newId('overlay')): Promise<Row> {
  const now = monotonicNow();
  await db
    .prepare(
      `INSERT INTO overlays (id, organization_id, project_id, job_id, block_a_id, block_b_id, score, width, height, transform, alignment, stats, images, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (job_id, block_a_id, block_b_id) DO NOTHING`,
    )
    .run(
      id,
      o.organizationId,
      o.projectId,
      o.jobId,
      o.blockAId,
      o.blockBId,
      o.score,
      o.width,
      o.height,
      JSON.stringify(o.transform),
      JSON.stringify(o.alignment),
      JSON.stringify(o.stats),
      JSON.stringify(o.images),
      now,
      now,
    );
  return (await overlayFor(db, o.jobId, o.blockAId, o.blockBId))!;
}

export async function getOverlayById(db: Db, id: string): Promise<Row | undefined> {
  return (await db.prepare('SELECT * FROM overlays WHERE id = ?').get(id)) as Row | undefined;
}

export interface NewChange {
  bbox: { x: number; y: number; width: number; height: number };
  kind: string;
  category: string;
  areaPx: number;
  confidence: number;
  textBefore: string | null;
  textAfter: string | null;
  description: string;
}

/**
 * Replaces an overlay's change regions with a fresh analysis, in one transaction, and marks the
 * overlay analyzed (has_changes = true, change_count). Re-running analysis is idempotent: the
 * previous regions (and their review status) are replaced, never duplicated.
 */
/**
 * Stores an overlay's change regions in place of its earlier ones; `score`, when given, becomes the
 * overlay's score in the same transaction (change detection may hold it below 1, see score.ts).
 */
export async function replaceChanges(
  db: Db,
  overlay: Row,
  changes: NewChange[],
  score?: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.prepare('DELETE FROM changes WHERE overlay_id = ?').run(overlay.id);
    const ins =
      tx.prepare(`INSERT INTO changes (id, organization_id, project_id, overlay_id, bbox, kind, category, area_px, confidence, text_before, text_after, description, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const c of changes) {
      const now = monotonicNow();
      await ins.run(
        newId('change'),
        overlay.organization_id,
        overlay.project_id,
        overlay.id,
        JSON.stringify(c.bbox),
        c.kind,
        c.category,
        c.areaPx,
        c.confidence,
        c.textBefore,
        c.textAfter,
        c.description,
        now,
        now,
      );
    }
    await tx
      .prepare(
        'UPDATE overlays SET has_changes = 1, change_count = ?, score = coalesce(?, score), updated_at = ? WHERE id = ?',
      )
      .run(changes.length, score ?? null, monotonicNow(), overlay.id);
  });
}

export interface TextRun {
  text: string;
  /** Sheet pixels. */
  bbox: { x: number; y: number; width: number; height: number };
}

/** A sheet's text runs and markup words (search index rows of kind 'text' and 'markup'), sheet pixels. */
export async function sheetTextRuns(db: Db, sheetId: string): Promise<TextRun[]> {
  const rows = (await db
    .prepare(
      "SELECT text, bbox FROM search_index WHERE sheet_id = ? AND kind IN ('text', 'markup')",
    )
    .all(sheetId)) as { text: string; bbox: string | null }[];
  const out: TextRun[] = [];
  for (const r of rows)
    if (r.bbox) out.push({ text: r.text, bbox: JSON.parse(r.bbox) as TextRun['bbox'] });
  return out;
}

export async function sheetsOfDrawing(db: Db, drawingId: string): Promise<Row[]> {
  return (await db
    .prepare('SELECT * FROM sheets WHERE drawing_id = ? ORDER BY page_index')
    .all(drawingId)) as Row[];
}

export async function blocksOfSheet(db: Db, sheetId: string): Promise<Row[]> {
  return (await db
    .prepare('SELECT * FROM blocks WHERE sheet_id = ? ORDER BY created_at, id')
    .all(sheetId)) as Row[];
}

export async function blockCountsOfDrawing(
  db: Db,
  drawingId: string,
): Promise<Map<string, number>> {
  const rows = (await db
    .prepare('SELECT sheet_id, count(*) AS n FROM blocks WHERE drawing_id = ? GROUP BY sheet_id')
    .all(drawingId)) as { sheet_id: string; n: number }[];
  return new Map(rows.map((r) => [r.sheet_id, r.n]));
}

export async function getById(
  db: Db,
  table: 'sheets' | 'blocks' | 'drawings',
  id: string,
): Promise<Row | undefined> {
  return (await db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id)) as Row | undefined;
}

export async function blockCountOfSheet(db: Db, sheetId: string): Promise<number> {
  return (
    (await db.prepare('SELECT count(*) AS n FROM blocks WHERE sheet_id = ?').get(sheetId)) as {
      n: number;
    }
  ).n;
}
