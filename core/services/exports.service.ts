import { ApiError, notFound } from '../domain/errors';
import { idKind } from '../domain/ids';
import type { Db } from '../store/db';
import { getRow } from '../store/list-query';
import { rowById } from '../store/repositories/exports.repository';
import type { Row } from '../store/repositories/row';
import type { JobEnqueuer } from './context';
import type { ReviewStatus } from './exports/model';
import type { PaletteName } from './exports/palette';
import type { PageSize } from './exports/report-pdf';

// Starting an export (contract §6, POST /exports): checks that `job_id` names a finished
// comparison of the caller's organization and queues an `export` job. Exports cost no credits.
// The job's target is the comparison's own target (the newer drawing, sheet or block), so
// deleting that record cancels the export with everything else that works on it.

export const EXPORT_FORMATS = ['pdf_report', 'clouded_pdf', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportRequest {
  job_id: string;
  format: ExportFormat;
  review_status?: ReviewStatus[];
  page_size?: PageSize;
  palette?: PaletteName;
  tags?: boolean;
}

/** What the export job reads from its payload. */
export interface ExportPayload {
  comparison_job_id: string;
  format: ExportFormat;
  /** null: every change. */
  review_status: ReviewStatus[] | null;
  page_size: PageSize;
  palette: PaletteName;
  /** Numbered delta tags beside the clouds of a clouded PDF. */
  tags: boolean;
  /** The origin the request came to: the CSV's links open the web UI served there. */
  origin: string;
  /** The requesting API key's label (or id), for the report's cover. */
  requested_by: string;
}

const invalidJobId = (detail: string, message: string) =>
  new ApiError('validation_error', detail, {
    errors: [{ field: '/job_id', code: 'not_a_comparison', message }],
  });

export async function createExport(
  db: Db,
  jobs: JobEnqueuer,
  caller: { organizationId: string; keyId: string; origin: string },
  req: ExportRequest,
): Promise<{ id: string; status: string }> {
  if (idKind(req.job_id) !== 'job')
    throw new ApiError(
      'validation_error',
      `job_id must be the id of a comparison job (job_…); got '${req.job_id.slice(0, 60)}'.`,
      {
        errors: [
          {
            field: '/job_id',
            code: 'wrong_id_type',
            message: "expected an id starting with 'job_'",
          },
        ],
      },
    );
  const job = await getRow<Row>(db, 'jobs', caller.organizationId, req.job_id);
  if (!job) throw notFound('job', req.job_id);
  if (job.type !== 'compare')
    throw invalidJobId(
      `Job ${job.id} is a${job.type === 'analyze' || job.type === 'export' ? 'n' : ''} ${String(job.type)} job; exports are made from a comparison job (the job_id that POST /drawings/{id}/compare or POST /compare answered).`,
      'must be a comparison job',
    );
  if (job.parent_id)
    throw invalidJobId(
      `Job ${job.id} is one sheet pair of comparison ${String(job.parent_id)}; export that comparison instead.`,
      'must be the comparison job the client started, not one of its parts',
    );
  if (job.status !== 'Completed')
    throw new ApiError(
      'conflict',
      job.status === 'Queued' || job.status === 'Started'
        ? `Comparison ${job.id} is still ${String(job.status)}; export it once it has Completed (GET /v1/jobs/${job.id}/events follows it).`
        : `Comparison ${job.id} ended ${String(job.status)} and has no complete result to export; run the comparison again.`,
    );
  const key = await rowById(db, 'api_keys', caller.keyId);
  const payload: ExportPayload = {
    comparison_job_id: job.id,
    format: req.format,
    review_status: req.review_status?.length ? [...new Set(req.review_status)] : null,
    page_size: req.page_size ?? 'letter',
    palette: req.palette ?? 'standard',
    tags: req.tags ?? true,
    origin: caller.origin,
    requested_by: (key?.label as string | null | undefined) || caller.keyId,
  };
  return await db.transaction(
    async (tx) =>
      await jobs.enqueue(
        {
          organization_id: caller.organizationId,
          project_id: String(job.project_id),
          type: 'export',
          target_type: job.target_type as 'drawing' | 'sheet' | 'block' | 'overlay',
          target_id: String(job.target_id),
          payload,
        },
        tx,
      ),
    { immediate: true },
  );
}
