import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { JobAccepted, REVIEW_STATUSES } from '../../contract/schemas';
import type { JobEnqueuer } from '../../services/context';
import { createExport, EXPORT_FORMATS, type ExportRequest } from '../../services/exports.service';
import { PAGE_SIZES } from '../../services/exports/report-pdf';
import { orgOf, requestOrigin, type HttpDeps } from '../deps';
import { created } from '../openapi';
import { addRoute } from '../router';

// Exports of a finished comparison (contract §6, added 2026-11-27): a review report, the newer
// revision's PDF with revision clouds, or a CSV of the changes. 202 {job_id, status} with
// Location: /v1/jobs/<id>; the `export` job's result is {file_id, format}, and that File's `uri`
// downloads the document. Document area: exports cost no credits.

export const ExportBody = Type.Object(
  {
    job_id: Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        'the comparison job (job_ id answered by POST /drawings/{id}/compare or POST /compare), Completed',
    }),
    format: Type.Union(
      EXPORT_FORMATS.map((f) => Type.Literal(f)),
      {
        description:
          "pdf_report: a review report of the whole comparison (cover, summary of every sheet pair, each changed sheet with its numbered changes); clouded_pdf: the newer revision's own PDF, pages untouched, with a revision-cloud annotation per non-noise change; csv: one row per change (UTF-8 with BOM, RFC 4180)",
      },
    ),
    review_status: Type.Optional(
      Type.Array(Type.Union(REVIEW_STATUSES.map((s) => Type.Literal(s))), {
        minItems: 1,
        maxItems: 4,
        description: 'export only the changes with one of these review statuses (default: all)',
      }),
    ),
    page_size: Type.Optional(
      Type.Union(
        (Object.keys(PAGE_SIZES) as (keyof typeof PAGE_SIZES)[]).map((s) => Type.Literal(s)),
        { description: 'pdf_report: landscape page size (default letter; tabloid is 11x17)' },
      ),
    ),
    palette: Type.Optional(
      Type.Union([Type.Literal('standard'), Type.Literal('colorblind')], {
        description:
          'pdf_report and clouded_pdf: change colours; colorblind uses the colour-blind-safe overlay and cloud colours (default standard)',
      }),
    ),
    tags: Type.Optional(
      Type.Boolean({
        description: 'clouded_pdf: a numbered delta tag beside each cloud (default true)',
      }),
    ),
  },
  { additionalProperties: false },
);

export function exportsRoutes(app: FastifyInstance, deps: HttpDeps, jobs: JobEnqueuer): void {
  addRoute(app, {
    operationId: 'createExport',
    method: 'POST',
    url: '/v1/exports',
    summary:
      'Export a completed comparison as a review report (PDF), the newer PDF with revision clouds, or a CSV of its changes. The changes are those of the whole-sheet overlays. Free (no credits).',
    tags: ['exports'],
    body: ExportBody,
    responses: { 202: created('The export job, Queued', JobAccepted) },
    // validation_error: unknown format or review status, or job_id not a comparison job;
    // not_found: no such job in this organization; conflict: the comparison has not Completed.
    problems: ['not_found', 'conflict'],
    handler: async (request, reply) => {
      const job = await createExport(
        deps.db,
        jobs,
        {
          organizationId: orgOf(request),
          keyId: request.auth!.keyId,
          origin: requestOrigin(request),
        },
        request.body as ExportRequest,
      );
      reply.code(202).header('location', `/v1/jobs/${job.id}`);
      return { job_id: job.id, status: job.status };
    },
  });
}
