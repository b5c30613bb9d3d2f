import { ApiError, notFound } from '../domain/errors';
import type { Db } from '../store/db';
import type { JobEnqueuer } from './context';
import { getRow } from '../store/list-query';
import { insertDrawing, setDrawingJob } from '../store/repositories/drawings.repository';
import type { Row } from '../store/repositories/row';

// Creating a drawing queues its `process` job in the same transaction as the drawing row, so a
// drawing never exists without the job that will process it (and vice versa).

export async function createDrawing(
  db: Db,
  jobs: JobEnqueuer,
  organizationId: string,
  body: { project_id: string; name: string; file_id: string; revision?: string | null },
): Promise<Row> {
  if (!(await getRow(db, 'projects', organizationId, body.project_id)))
    throw notFound('project', body.project_id);
  const file = await getRow<Row>(db, 'files', organizationId, body.file_id);
  if (!file) throw notFound('file', body.file_id);
  if (file.project_id !== body.project_id) {
    throw new ApiError(
      'validation_error',
      `File ${body.file_id} belongs to another project; upload it to project ${body.project_id} first.`,
      {
        errors: [
          { field: '/file_id', code: 'project_mismatch', message: 'belongs to another project' },
        ],
      },
    );
  }
  if (file.status !== 'uploaded') {
    throw new ApiError(
      'conflict',
      `File ${body.file_id} has no bytes yet; PUT them to its upload_url before creating the drawing.`,
    );
  }
  return await db.transaction(async (tx) => {
    const drawing = await insertDrawing(tx, {
      organizationId,
      projectId: body.project_id,
      name: body.name,
      fileId: body.file_id,
      revision: body.revision ?? null,
    });
    const job = await jobs.enqueue(
      {
        organization_id: organizationId,
        project_id: body.project_id,
        type: 'process',
        target_type: 'drawing',
        target_id: drawing.id,
        payload: { drawing_id: drawing.id },
      },
      tx,
    );
    await setDrawingJob(tx, drawing.id, job.id);
    return (await getRow<Row>(tx, 'drawings', organizationId, drawing.id))!;
  });
}
