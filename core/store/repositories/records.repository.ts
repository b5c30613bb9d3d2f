import { monotonicNow } from '../../domain/clock';
import type { Db } from '../db';
import type { Row } from './row';

// Generic single-record writes for the PATCH/DELETE routes. Table and column names come from code
// (the resource table and route schemas), never from request text.

const IDENT_RE = /^[a-z_]+$/;

export async function updateRecord(
  db: Db,
  table: string,
  organizationId: string,
  id: string,
  values: Record<string, unknown>,
): Promise<Row | undefined> {
  const cols = Object.keys(values);
  for (const c of [table, ...cols]) if (!IDENT_RE.test(c)) throw new Error(`bad identifier ${c}`);
  const sets = [...cols.map((c) => `${c} = ?`), 'updated_at = ?'].join(', ');
  const res = await db
    .prepare(`UPDATE ${table} SET ${sets} WHERE id = ? AND organization_id = ?`)
    .run(...cols.map((c) => values[c]), monotonicNow(), id, organizationId);
  if (res.changes !== 1) return undefined;
  return (await db.prepare(`SELECT * FROM ${table} WHERE id = ?`).get(id)) as Row;
}

export async function deleteRecord(
  db: Db,
  table: string,
  organizationId: string,
  id: string,
): Promise<boolean> {
  if (!IDENT_RE.test(table)) throw new Error(`bad identifier ${table}`);
  return (
    (
      await db
        .prepare(`DELETE FROM ${table} WHERE id = ? AND organization_id = ?`)
        .run(id, organizationId)
    ).changes === 1
  );
}

/** Ids of overlays that compare a block of the drawing (they go when the drawing goes). */
export async function overlayIdsOfDrawing(
  db: Db,
  organizationId: string,
  drawingId: string,
): Promise<string[]> {
  return (
    (await db
      .prepare(
        `SELECT id FROM overlays WHERE organization_id = ? AND (block_a_id IN (SELECT id FROM blocks WHERE drawing_id = ?) OR block_b_id IN (SELECT id FROM blocks WHERE drawing_id = ?))`,
      )
      .all(organizationId, drawingId, drawingId)) as { id: string }[]
  ).map((r) => r.id);
}

export async function drawingsUsingFile(
  db: Db,
  organizationId: string,
  fileId: string,
): Promise<string[]> {
  return (
    (await db
      .prepare('SELECT id FROM drawings WHERE organization_id = ? AND file_id = ?')
      .all(organizationId, fileId)) as { id: string }[]
  ).map((r) => r.id);
}

/** Non-terminal jobs of a project, or targeting any of the given ids (roots and children alike). */
export async function openJobIds(
  db: Db,
  organizationId: string,
  where: { projectId?: string; targetIds?: string[] },
): Promise<string[]> {
  const open = `status IN ('Queued', 'Started')`;
  if (where.projectId) {
    return (
      (await db
        .prepare(
          `SELECT id FROM jobs WHERE organization_id = ? AND project_id = ? AND ${open} ORDER BY created_at`,
        )
        .all(organizationId, where.projectId)) as { id: string }[]
    ).map((r) => r.id);
  }
  const ids = where.targetIds ?? [];
  if (ids.length === 0) return [];
  return (
    (await db
      .prepare(
        `SELECT id FROM jobs WHERE organization_id = ? AND ${open} AND target_id IN (${ids.map(() => '?').join(',')}) ORDER BY created_at`,
      )
      .all(organizationId, ...ids)) as { id: string }[]
  ).map((r) => r.id);
}
