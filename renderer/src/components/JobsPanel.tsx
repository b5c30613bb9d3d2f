import { errorDetail } from '../api/client';
import { useCancelJob, useJobs } from '../api/hooks';
import type { Job } from '../api/types';
import { isTerminal } from '../api/types';
import { href } from '../app/use-route';
import { ui } from '../state/ui-store';
import { Empty, ErrorNote, formatTime, ProgressBar, Spinner, StatusBadge } from './common';

const TYPE_LABEL: Record<string, string> = {
  process: 'Process drawing',
  compare: 'Compare',
  analyze: 'Detect changes',
  parse: 'Count symbols',
  export: 'Export',
};

export function JobsPanel({ projectId }: { projectId: string }) {
  const jobs = useJobs(projectId, true);
  const cancel = useCancelJob();
  const list = jobs.data?.data ?? [];
  // Top-level jobs first; children are summarized by their parent's progress.
  const top = list.filter((j) => !j.parent_id || !list.some((p) => p.id === j.parent_id));
  return (
    <aside className="side-panel" aria-label="Jobs">
      <div className="panel-head">
        <h2>Jobs</h2>
        <button
          type="button"
          className="btn-x"
          aria-label="Close jobs panel"
          onClick={() => ui.toggleJobsPanel(false)}
        >
          ×
        </button>
      </div>
      {jobs.isPending && <Spinner />}
      {jobs.isError && <ErrorNote error={jobs.error} onRetry={() => void jobs.refetch()} />}
      {jobs.isSuccess && top.length === 0 && (
        <Empty title="No jobs yet">Uploading a drawing or starting a comparison creates one.</Empty>
      )}
      <ul className="job-list">
        {top.map((j) => (
          <JobRow
            key={j.id}
            job={j}
            projectId={projectId}
            onCancel={() =>
              cancel.mutate(j.id, { onError: (e) => ui.toast(errorDetail(e), 'error') })
            }
          />
        ))}
      </ul>
    </aside>
  );
}

function JobRow({
  job,
  projectId,
  onCancel,
}: {
  job: Job;
  projectId: string;
  onCancel: () => void;
}) {
  const running = !isTerminal(job.status);
  const p = job.progress;
  return (
    // The job's id is for support and logs, not the reviewer: on hover only.
    <li className="job-row" data-testid="job-row" title={job.id}>
      <div className="row between">
        <span className="job-type">{TYPE_LABEL[job.type] ?? job.type}</span>
        <StatusBadge status={job.status} />
      </div>
      {running && (
        <ProgressBar
          value={p?.completed ?? 0}
          total={p?.total ?? 0}
          label={`${TYPE_LABEL[job.type] ?? job.type} progress`}
        />
      )}
      {p && p.total > 0 && (
        <div className="muted small">
          {p.completed} of {p.total} done
        </div>
      )}
      {job.status === 'Failed' && job.error && (
        <div className="state-error-inline small">{job.error.detail}</div>
      )}
      <div className="row between small">
        <span className="muted">{formatTime(job.created_at)}</span>
        <span className="row gap-s">
          {job.type === 'compare' && job.status === 'Completed' && (
            <a href={href({ name: 'comparison', projectId, jobId: job.id })}>Open</a>
          )}
          {running && (
            <button type="button" className="btn btn-small" onClick={onCancel}>
              Cancel
            </button>
          )}
        </span>
      </div>
    </li>
  );
}
