import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { JobEnqueuer } from '../../services/context';
import { JobAccepted } from '../../contract/schemas';
import { createParse, MAX_TEMPLATES, type ParseRequest } from '../../services/parse.service';
import { orgOf, type HttpDeps } from '../deps';
import { created } from '../openapi';
import { addRoute } from '../router';

// Symbol detection (contract §7; Vision area). 202 {job_id, status} with Location: /v1/jobs/<id>;
// the matching runs in the `parse` job. Ids in the body are checked against their field's type in
// the service (a wrong prefix is a validation_error naming the field).

const PixelBox = Type.Object(
  {
    x: Type.Integer({ minimum: 0 }),
    y: Type.Integer({ minimum: 0 }),
    width: Type.Integer({ minimum: 1 }),
    height: Type.Integer({ minimum: 1 }),
  },
  {
    additionalProperties: false,
    description: 'Crop in pixels of the source sheet or block image, origin top-left',
  },
);

export const ParseBody = Type.Object(
  {
    target_id: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'drw_ (every sheet), sht_ or blk_ id to search',
    }),
    templates: Type.Array(
      Type.Object(
        {
          label: Type.String({
            minLength: 1,
            maxLength: 100,
            description: 'name the instances get (several templates may share one)',
          }),
          source_id: Type.String({
            minLength: 1,
            maxLength: 100,
            description: 'sht_ or blk_ id whose image shows the symbol',
          }),
          bbox: PixelBox,
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_TEMPLATES },
    ),
    threshold: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          'Minimum confidence (normalized cross-correlation of ink, 0–1) an instance needs. Default 0.6: exact copies score ~1, instances with other text inside ~0.75–0.95, instances over tints or crossing linework ~0.55–0.7.',
      }),
    ),
  },
  { additionalProperties: false },
);

export function parseRoutes(app: FastifyInstance, deps: HttpDeps, jobs: JobEnqueuer): void {
  addRoute(app, {
    operationId: 'parseSymbols',
    method: 'POST',
    url: '/v1/parse',
    summary:
      'Find every instance of template symbols (crops of a sheet or block) in a drawing, sheet or block, at rotations 0/90/180/270 and ±10 % scale. Results in /symbols (job_id = this job); the job result counts instances per label per sheet, with deltas against an earlier revision parsed with the same labels. Reserves 1 credit per sheet scanned.',
    tags: ['symbols'],
    area: 'vision',
    body: ParseBody,
    responses: { 202: created('The parse job, Queued', JobAccepted) },
    // not_found: the target or a template source; conflict: the target drawing is not Ready.
    problems: ['not_found', 'conflict', 'insufficient_credits'],
    handler: async (request, reply) => {
      const job = await createParse(deps.db, jobs, orgOf(request), request.body as ParseRequest);
      reply.code(202).header('location', `/v1/jobs/${job.id}`);
      return { job_id: job.id, status: job.status };
    },
  });
}
