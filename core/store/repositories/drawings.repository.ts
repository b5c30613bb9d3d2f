import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { DerivedIssue, SheetIssueEvidence } from '../../domain/issue-date';
import type { Db } from '../db';
import type { Row } from './row';

// Drawings and what processing makes of them (sheets, blocks).

export async function insertDrawing(
  db: Db,
  a: {
    organizationId: string;
    projectId: string;
    name: string;
    fileId: string;
    revision: string | null;
  },
): Promise<Row> {
  const id = newId('drawing');
  const now = monotonicNow();
  // A label given at creation is the person's: processing never replaces it.
  await db
    .prepare(
      `INSERT INTO drawings (id, organization_id, project_id, name, file_id, revision, revision_source, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, 'Processing', ?, ?)`,
    )
    .run(
      id,
      a.organizationId,
      a.projectId,
      a.name,
      a.fileId,
      a.revision,
      a.revision === null ? null : 'person',
      now,
      now,
    );
  return (await db.prepare('SELECT * FROM drawings WHERE id = ?').get(id)) as Row;
}

export async function setDrawingJob(db: Db, drawingId: string, jobId: string): Promise<void> {
  await db.prepare('UPDATE drawings SET job_id = ? WHERE id = ?').run(jobId, drawingId);
}

export async function setDrawingStatus(
  db: Db,
  drawingId: string,
  status: 'Processing' | 'Ready' | 'Failed',
  sheetCount?: number,
): Promise<void> {
  await db
    .prepare(
      'UPDATE drawings SET status = ?, sheet_count = COALESCE(?, sheet_count), updated_at = ? WHERE id = ?',
    )
    .run(status, sheetCount ?? null, monotonicNow(), drawingId);
}

export async function getDrawingById(db: Db, id: string): Promise<Row | undefined> {
  return (await db.prepare('SELECT * FROM drawings WHERE id = ?').get(id)) as Row | undefined;
}

export async function sheetAtPage(
  db: Db,
  drawingId: string,
  pageIndex: number,
): Promise<Row | undefined> {
  return (await db
    .prepare('SELECT * FROM sheets WHERE drawing_id = ? AND page_index = ?')
    .get(drawingId, pageIndex)) as Row | undefined;
}

export async function countSheets(db: Db, drawingId: string): Promise<number> {
  return (
    (await db.prepare('SELECT count(*) AS n FROM sheets WHERE drawing_id = ?').get(drawingId)) as {
      n: number;
    }
  ).n;
}

export interface NewSheet {
  id: string;
  organizationId: string;
  projectId: string;
  drawingId: string;
  pageIndex: number;
  sheetNumber: string | null;
  title: string | null;
  discipline: string;
  revision: string | null;
  /** The title block's issue date (ISO), or null. */
  issued: string | null;
  width: number;
  height: number;
  dpi: number;
  textSource: string;
  imageKey: string;
  thumbnailKey: string;
}

export interface NewBlock {
  id: string;
  type: string;
  bbox: { x: number; y: number; width: number; height: number };
  identifier: string | null;
  title: string | null;
  scale: string | null;
  imageKey: string;
}

/**
 * Stores one processed page with its blocks in one transaction, so a page is either fully recorded
 * or not at all (a resumed job redoes exactly the pages that are missing).
 */
export interface SearchRun {
  text: string;
  bbox: { x: number; y: number; width: number; height: number } | null;
  /** 'markup': the text of a PDF markup annotation; 'text' (default): a run of the drawing's text. */
  kind?: 'text' | 'markup';
}

export async function insertProcessedSheet(db: Db, s: NewSheet, blocks: NewBlock[]): Promise<void> {
  await db.transaction(async (tx) => {
    const now = monotonicNow();
    await tx
      .prepare(
        `INSERT INTO sheets (id, organization_id, project_id, drawing_id, page_index, sheet_number, title, discipline, revision, issued, width, height, dpi, text_source, image_key, thumbnail_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        s.id,
        s.organizationId,
        s.projectId,
        s.drawingId,
        s.pageIndex,
        s.sheetNumber,
        s.title,
        s.discipline,
        s.revision,
        s.issued,
        s.width,
        s.height,
        s.dpi,
        s.textSource,
        s.imageKey,
        s.thumbnailKey,
        now,
        now,
      );
    const ins =
      tx.prepare(`INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, identifier, title, scale, image_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const b of blocks) {
      const t = monotonicNow();
      await ins.run(
        b.id,
        s.organizationId,
        s.projectId,
        s.drawingId,
        s.id,
        b.type,
        JSON.stringify(b.bbox),
        b.identifier,
        b.title,
        b.scale,
        b.imageKey,
        t,
        t,
      );
    }
  });
}

/** What the title blocks of a drawing's stored sheets say about its issue, in page order. */
export async function sheetIssueEvidence(db: Db, drawingId: string): Promise<SheetIssueEvidence[]> {
  return (
    (await db
      .prepare(
        'SELECT page_index, issued, revision FROM sheets WHERE drawing_id = ? ORDER BY page_index',
      )
      .all(drawingId)) as { page_index: number; issued: string | null; revision: string | null }[]
  ).map((r) => ({ pageIndex: r.page_index, issued: r.issued, revision: r.revision }));
}

/**
 * Stores what processing derived for a drawing's issue date and revision, leaving alone each value
 * a person set (source 'person'): the WHERE clause decides, so a PATCH that lands while the job
 * runs is never overwritten. updated_at moves only when a value changes.
 */
export async function applyDerivedIssue(db: Db, drawingId: string, d: DerivedIssue): Promise<void> {
  const now = monotonicNow();
  await db
    .prepare(
      `UPDATE drawings SET issued_at = ?, issued_at_source = ?, updated_at = ?
     WHERE id = ? AND issued_at_source IS DISTINCT FROM 'person'
       AND (issued_at IS DISTINCT FROM ? OR issued_at_source IS DISTINCT FROM ?)`,
    )
    .run(d.issuedAt, d.issuedAtSource, now, drawingId, d.issuedAt, d.issuedAtSource);
  const source = d.revision === null ? null : 'title_block';
  await db
    .prepare(
      `UPDATE drawings SET revision = ?, revision_source = ?, updated_at = ?
     WHERE id = ? AND revision_source IS DISTINCT FROM 'person'
       AND (revision IS DISTINCT FROM ? OR revision_source IS DISTINCT FROM ?)`,
    )
    .run(d.revision, source, now, drawingId, d.revision, source);
}

/** Removes a drawing's rows from the search index (the drawing itself goes by foreign keys). */
export async function deleteDrawingSearchRows(db: Db, drawingId: string): Promise<void> {
  await db.prepare('DELETE FROM search_index WHERE drawing_id = ?').run(drawingId);
}

export async function deleteProjectSearchRows(db: Db, projectId: string): Promise<void> {
  await db.prepare('DELETE FROM search_index WHERE project_id = ?').run(projectId);
}

/** Marks a drawing Failed if it is still Processing (its process job ended without completing). */
export async function failProcessingDrawing(db: Db, drawingId: string): Promise<void> {
  await db
    .prepare(
      `UPDATE drawings SET status = 'Failed', updated_at = ? WHERE id = ? AND status = 'Processing'`,
    )
    .run(monotonicNow(), drawingId);
}

/**
 * Adds a page's text runs to the full-text index, one chunk per call (the caller yields between
 * chunks so a text-dense sheet never blocks the HTTP thread for long). Written before the sheet row:
 * runs of a sheet that was never recorded (a crash in between) are invisible to search, which joins
 * on sheets, and boot reconciliation removes them.
 */
export async function insertSearchRuns(
  db: Db,
  s: { sheetId: string; drawingId: string; projectId: string; organizationId: string },
  runs: SearchRun[],
): Promise<void> {
  await db.transaction(async (tx) => {
    const idx = tx.prepare(
      `INSERT INTO search_index (text, kind, ref_id, sheet_id, drawing_id, project_id, organization_id, bbox) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const r of runs) {
      if (r.text.trim())
        await idx.run(
          r.text,
          r.kind ?? 'text',
          s.sheetId,
          s.sheetId,
          s.drawingId,
          s.projectId,
          s.organizationId,
          r.bbox ? JSON.stringify(r.bbox) : null,
        );
    }
  });
}
