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
  cancelProjectJobs(organizationId: string, projectId: string): void;
  /** Removes every stored object of the project. */
  deleteProjectObjects(projectId: string): Promise<void>;
}

export function createProject(
  db: Db,
  organizationId: string,
  body: { name: string; description?: string | null },
): Row {
  return insertProject(db, organizationId, body.name.trim() || body.name, body.description ?? null);
}

export function patchProject(
  db: Db,
  organizationId: string,
  id: string,
  body: { name?: string; description?: string | null },
): Row {
  const row = updateProject(db, organizationId, id, body);
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
  if (!getRow(db, 'projects', organizationId, id)) throw notFound('project', id);
  cascade.cancelProjectJobs(organizationId, id);
  db.transaction(() => {
    deleteProjectSearchRows(db, id);
    deleteProject(db, organizationId, id);
  })();
  await cascade.deleteProjectObjects(id);
}
