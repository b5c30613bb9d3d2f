import { notFound } from '../domain/errors';
import type { Db } from '../store/db';
import { getRow } from '../store/list-query';
import {
  deleteProject,
  insertProject,
  updateProject,
} from '../store/repositories/projects.repository';
import { deleteProjectSearchRows } from '../store/repositories/drawings.repository';
import type { Row } from '../store/repositories/row';

export interface ProjectCascade {
  /** Cancels every non-terminal job of the project (and their descendants) before rows go. */
  cancelProjectJobs(organizationId: string, projectId: string): Promise<void>;
  /** Removes every stored object of the project. */
  deleteProjectObjects(projectId: string): Promise<void>;
}

export async function createProject(
  db: Db,
  organizationId: string,
  body: { name: string; description?: string | null },
): Promise<Row> {
  return await insertProject(
    db,
    organizationId,
    body.name.trim() || body.name,
    body.description ?? null,
  );
}

export async function patchProject(
  db: Db,
  organizationId: string,
  id: string,
  body: { name?: string; description?: string | null },
): Promise<Row> {
  const row = await updateProject(db, organizationId, id, body);
  if (!row) throw notFound('project', id);
  return row;
}

/** Contract §4: DELETE removes all of the project's records and files; running jobs are canceled first. */
export async function removeProject(
  db: Db,
  cascade: ProjectCascade,
  organizationId: string,
  id: string,
): Promise<void> {
  if (!(await getRow(db, 'projects', organizationId, id))) throw notFound('project', id);
  await cascade.cancelProjectJobs(organizationId, id);
  await db.transaction(async (tx) => {
    await deleteProjectSearchRows(tx, id);
    await deleteProject(tx, organizationId, id);
  });
  await cascade.deleteProjectObjects(id);
}
