// The Job resource as the API returns it (contract §4, Job): exactly these fields, in this order.
import type { JobStatus } from '../domain/job-status';
import type { JobRow, JobTargetType } from './jobs.repository';

/** A Problem Details object (contract §3) stored as a Failed job's `error`. */
export interface JobProblem {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** The job's path, `/v1/jobs/<id>`. */
  instance: string;
  code: string;
  [member: string]: unknown;
}

export interface ApiJob {
  id: string;
  project_id: string | null;
  type: string;
  status: JobStatus;
  target_type: JobTargetType;
  target_id: string;
  /** null for a top-level job. */
  parent_id: string | null;
  progress: { completed: number; total: number };
  /** Per job type; null until the job ends (a Failed parent lists its failed children here). */
  result: unknown;
  /** A Problem Details object when Failed, else null. */
  error: JobProblem | null;
  credits_charged: number;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export function toApiJob(row: JobRow): ApiJob {
  return {
    id: row.id,
    project_id: row.project_id,
    type: row.type,
    status: row.status,
    target_type: row.target_type,
    target_id: row.target_id,
    parent_id: row.parent_id ?? null,
    progress: { completed: row.progress_completed, total: row.progress_total },
    result: row.result === null ? null : (JSON.parse(row.result) as unknown),
    error: row.error === null ? null : (JSON.parse(row.error) as JobProblem),
    credits_charged: row.credits_charged,
    created_at: row.created_at,
    updated_at: row.updated_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
  };
}
