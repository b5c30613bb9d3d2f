import type { FastifyInstance } from 'fastify';
import { Project, ProjectCreate, ProjectPatch } from '../../contract/schemas';
import {
  createProject,
  patchProject,
  removeProject,
  type ProjectCascade,
} from '../../services/projects.service';
import { orgOf, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import { getOneRoute, IdParams, listRoute, serializeOne } from './resource-reads';

export function projectsRoutes(
  app: FastifyInstance,
  deps: HttpDeps,
  cascade: ProjectCascade,
): void {
  listRoute(app, deps, { path: '/v1/projects', kind: 'project', filters: {} }, Project, 'projects');
  getOneRoute(app, deps, 'project', '/v1/projects/:id', Project, 'projects');

  addRoute(app, {
    method: 'POST',
    url: '/v1/projects',
    summary: 'Create a project',
    tags: ['projects'],
    body: ProjectCreate,
    responses: { 201: Project },
    handler: async (request, reply) => {
      const row = createProject(
        deps.db,
        orgOf(request),
        request.body as { name: string; description?: string | null },
      );
      reply.code(201).header('location', `/v1/projects/${row.id}`);
      return serializeOne(deps, request, 'project', row);
    },
  });

  addRoute(app, {
    method: 'PATCH',
    url: '/v1/projects/:id',
    summary: 'Update a project',
    tags: ['projects'],
    params: IdParams,
    body: ProjectPatch,
    responses: { 200: Project },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const row = patchProject(
        deps.db,
        orgOf(request),
        id,
        (request.body ?? {}) as { name?: string; description?: string | null },
      );
      return serializeOne(deps, request, 'project', row);
    },
  });

  addRoute(app, {
    method: 'DELETE',
    url: '/v1/projects/:id',
    summary: 'Delete a project and everything in it',
    tags: ['projects'],
    params: IdParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      await removeProject(deps.db, cascade, orgOf(request), id);
      return reply.code(204).send();
    },
  });
}
