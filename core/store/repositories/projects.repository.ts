import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';
import type { Row } from './row';

export async function insertProject(
  db: Db,
  organizationId: string,
  name: string,
  description: string | null,
): Promise<Row> {
  const id = newId('project');
  const now = monotonicNow();
  await db
    .prepare(
      'INSERT INTO projects (id, organization_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .run(id, organizationId, name, description, now, now);
  return (await db.prepare('SELECT * FROM projects WHERE id = ?').get(id)) as Row;
}

export async function updateProject(
  db: Db,
  organizationId: string,
  id: string,
  patch: { name?: string; description?: string | null },
): Promise<Row | undefined> {
  const current = (await db
    .prepare('SELECT * FROM projects WHERE id = ? AND organization_id = ?')
    .get(id, organizationId)) as Row | undefined;
  if (!current) return undefined;
  await db
    .prepare(
      'UPDATE projects SET name = ?, description = ?, updated_at = ? WHERE id = ? AND organization_id = ?',
    )
    .run(
      patch.name ?? current.name,
      patch.description === undefined ? current.description : patch.description,
      monotonicNow(),
      id,
      organizationId,
    );
  return (await db.prepare('SELECT * FROM projects WHERE id = ?').get(id)) as Row;
}

/** Deletes the project row; foreign keys cascade to files, drawings, sheets, blocks, overlays, changes, symbols and jobs. */
export async function deleteProject(db: Db, organizationId: string, id: string): Promise<boolean> {
  return (
    (
      await db
        .prepare('DELETE FROM projects WHERE id = ? AND organization_id = ?')
        .run(id, organizationId)
    ).changes === 1
  );
}
