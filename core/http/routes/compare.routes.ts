import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { JobEnqueuer } from '../../services/context';
import { JobAccepted } from '../../contract/schemas';
import { createAnalysis, createComparison, type CompareType } from '../../services/compare.service';
import { orgOf, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import { created } from '../openapi';
import { IdParams, idParamsDoc, loadOwned } from './resource-reads';

// Comparison and change detection (contract §6; Vision area, credits §7). Each answers
// 202 {job_id, status: "Queued"} with Location: /v1/jobs/<id>; the work happens in the job.
// Ids in bodies are checked against their field's type in the service (a wrong prefix is a
// validation_error naming the field), so the schemas only require strings here.

const IdString = Type.String({ minLength: 1, maxLength: 100 });

export const DrawingCompareBody = Type.Object(
  {
    compare_to: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'drw_ id of the OLDER revision; the path id is the newer one',
    }),
    analyze: Type.Optional(
      Type.Boolean({
        description: 'also run change detection on every overlay (1 more credit per overlay)',
      }),
    ),
  },
  { additionalProperties: false },
);

export const CompareBody = Type.Object(
  {
    old_id: { ...IdString, description: 'the older revision: drw_, sht_ or blk_ id matching type' },
    new_id: { ...IdString, description: 'the newer revision: drw_, sht_ or blk_ id matching type' },
    type: Type.Union([Type.Literal('Drawing'), Type.Literal('Sheet'), Type.Literal('Block')]),
    analyze: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

const accepted = { 202: created('The comparison job, Queued', JobAccepted) };

export function compareRoutes(app: FastifyInstance, deps: HttpDeps, jobs: JobEnqueuer): void {
  addRoute(app, {
    operationId: 'compareDrawing',
    method: 'POST',
    url: '/v1/drawings/:id/compare',
    summary:
      'Compare this (newer) drawing with an older one: pairs sheets and blocks, one overlay per block pair. Reserves 1 credit per block pair it may compare (+1 with analyze); charged what it used.',
    tags: ['compare'],
    area: 'vision',
    params: IdParams,
    docParams: idParamsDoc('drw'),
    body: DrawingCompareBody,
    responses: accepted,
    // not_found: either drawing; conflict: one is not Ready; insufficient_credits: the reservation.
    problems: ['conflict', 'insufficient_credits'],
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const body = request.body as { compare_to: string; analyze?: boolean };
      await loadOwned(deps, request, 'drawing', id); // 404 for a wrong prefix or another organization's id
      const job = await createComparison(deps.db, jobs, orgOf(request), {
        type: 'Drawing',
        oldId: body.compare_to,
        newId: id,
        analyze: body.analyze ?? false,
        oldField: '/compare_to',
        newField: '/compare_to',
      });
      reply.code(202).header('location', `/v1/jobs/${job.id}`);
      return { job_id: job.id, status: job.status };
    },
  });

  addRoute(app, {
    operationId: 'compareRevisions',
    method: 'POST',
    url: '/v1/compare',
    summary:
      'Compare two revisions of a Drawing, Sheet or Block (old_id older, new_id newer, both of one project). Reserves 1 credit per block pair it may compare (+1 with analyze).',
    tags: ['compare'],
    area: 'vision',
    body: CompareBody,
    responses: accepted,
    problems: ['not_found', 'conflict', 'insufficient_credits'],
    handler: async (request, reply) => {
      const body = request.body as {
        old_id: string;
        new_id: string;
        type: CompareType;
        analyze?: boolean;
      };
      const job = await createComparison(deps.db, jobs, orgOf(request), {
        type: body.type,
        oldId: body.old_id,
        newId: body.new_id,
        analyze: body.analyze ?? false,
        oldField: '/old_id',
        newField: '/new_id',
      });
      reply.code(202).header('location', `/v1/jobs/${job.id}`);
      return { job_id: job.id, status: job.status };
    },
  });

  addRoute(app, {
    operationId: 'analyzeOverlay',
    method: 'POST',
    url: '/v1/overlays/:id/analyze',
    summary:
      'Run change detection on an overlay (no body needed): replaces its change regions, sets has_changes and change_count. 1 credit.',
    tags: ['compare'],
    area: 'vision',
    params: IdParams,
    docParams: idParamsDoc('ovl'),
    responses: { 202: created('The analysis job, Queued', JobAccepted) },
    problems: ['insufficient_credits'],
    handler: async (request, reply) => {
      const { id } = request.params as { id: string };
      const overlay = await loadOwned(deps, request, 'overlay', id);
      const job = await createAnalysis(deps.db, jobs, orgOf(request), overlay);
      reply.code(202).header('location', `/v1/jobs/${job.id}`);
      return { job_id: job.id, status: job.status };
    },
  });
}
