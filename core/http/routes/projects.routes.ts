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
import { created, DELETED } from '../openapi';
import { getOneRoute, IdParams, idParamsDoc, listRoute, serializeOne } from './resource-reads';

export function projectsRoutes(
  app: FastifyInstance,
  deps: HttpDeps,
  cascade: ProjectCascade,
): void {
  listRoute(app, deps, { path: '/v1/projects', kind: 'project', filters: {} }, Project, 'projects');
  getOneRoute(app, deps, 'project', '/v1/projects/:id', Project, 'projects');

  addRoute(app, {
    operationId: 'createProject',
    method: 'POST',
    url: '/v1/projects',
    summary: 'Create a project',
    tags: ['projects'],
    body: ProjectCreate,
    responses: { 201: created('The project', Project) },
    handler: async (request, reply) => {
      const row = await createProject(
        deps.db,
        orgOf(request),
        request.body as { name: string; description?: string | null },
      );
      reply.code(201).header('location', `/v1/projects/${row.id}`);
      return await serializeOne(deps, request, 'project', row);
    },
  });

  addRoute(app, {
    operationId: 'updateProject',
    method: 'PATCH',
    url: '/v1/projects/:id',
    summary: 'Update a project',
    tags: ['projects'],
    params: IdParams,
    docParams: idParamsDoc('prj'),
    body: ProjectPatch,
    responses: { 200: Project },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      const row = await patchProject(
        deps.db,
        orgOf(request),
        id,
        (request.body ?? {}) as { name?: string; description?: string | null },
      );
      return await serializeOne(deps, request, 'project', row);
    },
  });

  addRoute(app, {
    operationId: 'deleteProject',
    method: 'DELETE',
    url: '/v1/projects/:id',
    summary: 'Delete a project and everything in it',
    description:
      'Removes its drawings, files, sheets, blocks, overlays, changes, symbols and jobs; a running job is canceled first.',
    tags: ['projects'],
    params: IdParams,
    docParams: idParamsDoc('prj'),
    responses: { 204: DELETED },
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      await removeProject(deps.db, cascade, orgOf(request), id);
      return reply.code(204).send();
    },
  });
}
