import type { FastifyInstance } from 'fastify';
import { Drawing, DrawingCreate } from '../../contract/schemas';
import type { JobRunner } from '../../jobs/job-runner';
import { createDrawing } from '../../services/drawings.service';
import { orgOf, type HttpDeps } from '../deps';
import { created } from '../openapi';
import { addRoute } from '../router';
import { serializeOne } from './resource-reads';

export function drawingsRoutes(app: FastifyInstance, deps: HttpDeps, jobs: JobRunner): void {
  addRoute(app, {
    operationId: 'createDrawing',
    method: 'POST',
    url: '/v1/drawings',
    summary: 'Create a drawing from an uploaded file; queues its `process` job (no credits)',
    tags: ['drawings'],
    body: DrawingCreate,
    responses: { 201: created('The drawing, status Processing', Drawing) },
    // not_found: the project or file; conflict: the file's bytes have not arrived yet.
    problems: ['not_found', 'conflict'],
    handler: async (request, reply) => {
      const row = await createDrawing(
        deps.db,
        jobs,
        orgOf(request),
        request.body as {
          project_id: string;
          name: string;
          file_id: string;
          revision?: string | null;
        },
      );
      reply.code(201).header('location', `/v1/drawings/${row.id}`);
      return await serializeOne(deps, request, 'drawing', row);
    },
  });
}
