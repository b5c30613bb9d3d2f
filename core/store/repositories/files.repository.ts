import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';
import type { Row } from './row';

export async function insertFile(
  db: Db,
  a: {
    organizationId: string;
    projectId: string;
    filename: string;
    contentType: string;
    declaredSize: number | null;
    objectKey: (createdAt: string, id: string) => string;
  },
): Promise<Row> {
  const id = newId('file');
  const now = monotonicNow();
  await db
    .prepare(
      `INSERT INTO files (id, organization_id, project_id, filename, content_type, declared_size, status, object_key, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
    )
    .run(
      id,
      a.organizationId,
      a.projectId,
      a.filename,
      a.contentType,
      a.declaredSize,
      a.objectKey(now, id),
      now,
      now,
    );
  return (await db.prepare('SELECT * FROM files WHERE id = ?').get(id)) as Row;
}

export async function markUploaded(db: Db, id: string, size: number, sha256: string): Promise<Row> {
  await db
    .prepare(
      `UPDATE files SET status = 'uploaded', size_bytes = ?, sha256 = ?, updated_at = ? WHERE id = ?`,
    )
    .run(size, sha256, monotonicNow(), id);
  return (await db.prepare('SELECT * FROM files WHERE id = ?').get(id)) as Row;
}

/** Any-organization lookup for the signed upload route, whose signature is the credential. */
export async function getFileById(db: Db, id: string): Promise<Row | undefined> {
  return (await db.prepare('SELECT * FROM files WHERE id = ?').get(id)) as Row | undefined;
}
