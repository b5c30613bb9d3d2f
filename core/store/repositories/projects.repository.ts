import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';
import { prepared } from '../statement-cache';
import type { Row } from './row';

export function insertProject(
  db: Db,
  organizationId: string,
  name: string,
  description: string | null,
): Row {
  const id = newId('project');
  const now = monotonicNow();
  prepared(
    db,
    'INSERT INTO projects (id, organization_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(id, organizationId, name, description, now, now);
  return prepared(db, 'SELECT * FROM projects WHERE id = ?').get(id) as Row;
}

export function updateProject(
  db: Db,
  organizationId: string,
  id: string,
  patch: { name?: string; description?: string | null },
): Row | undefined {
  const current = prepared(db, 'SELECT * FROM projects WHERE id = ? AND organization_id = ?').get(
    id,
    organizationId,
  ) as Row | undefined;
  if (!current) return undefined;
  prepared(
    db,
    'UPDATE projects SET name = ?, description = ?, updated_at = ? WHERE id = ? AND organization_id = ?',
  ).run(
    patch.name ?? current.name,
    patch.description === undefined ? current.description : patch.description,
    monotonicNow(),
    id,
    organizationId,
  );
  return prepared(db, 'SELECT * FROM projects WHERE id = ?').get(id) as Row;
}

/** Deletes the project row; foreign keys cascade to files, drawings, sheets, blocks, overlays, changes, symbols and jobs. */
export function deleteProject(db: Db, organizationId: string, id: string): boolean {
  return (
    prepared(db, 'DELETE FROM projects WHERE id = ? AND organization_id = ?').run(
      id,
      organizationId,
    ).changes === 1
  );
}
