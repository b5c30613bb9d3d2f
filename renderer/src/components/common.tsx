// Small shared pieces: loading, empty and error states, badges, progress.

import type { ReactNode } from 'react';
import { errorCode, errorDetail } from '../api/client';
import type { DrawingStatus, JobStatus } from '../api/types';

export function Spinner({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state state-loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden />
      <span>{label}</span>
    </div>
  );
}

/** Shows the API's `detail` (and its `code`, small) — never a stack trace. */
export function ErrorNote({
  error,
  title = 'Something went wrong',
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  const code = errorCode(error);
  return (
    <div className="state state-error" role="alert">
      <strong>{title}</strong>
      <p className="detail">{errorDetail(error)}</p>
      <div className="row gap-s">
        {code && <code className="code-tag">{code}</code>}
        {onRetry && (
          <button type="button" className="btn btn-small" onClick={onRetry}>
            Retry
          </button>
        )}
      </div>
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state state-empty">
      <strong>{title}</strong>
      {children && <div className="muted">{children}</div>}
    </div>
  );
}

export function ProgressBar({
  value,
  total,
  label,
}: {
  value: number;
  total: number;
  label?: string;
}) {
  const pct = total > 0 ? Math.min(100, Math.round((value / total) * 100)) : null;
  return (
    <div
      className="progress"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={pct ?? undefined}
      aria-label={label}
    >
      <div
        className={`progress-fill${pct === null ? ' indeterminate' : ''}`}
        style={{ width: pct === null ? '30%' : `${pct}%` }}
      />
    </div>
  );
}

const STATUS_CLASS: Record<string, string> = {
  Queued: 'badge-neutral',
  Started: 'badge-info',
  Processing: 'badge-info',
  Completed: 'badge-ok',
  Ready: 'badge-ok',
  Failed: 'badge-bad',
  Canceled: 'badge-neutral',
};

export function StatusBadge({ status }: { status: JobStatus | DrawingStatus | string }) {
  return <span className={`badge ${STATUS_CLASS[status] ?? 'badge-neutral'}`}>{status}</span>;
}

export function Kbd({ children }: { children: ReactNode }) {
  return <kbd className="kbd">{children}</kbd>;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function formatTime(ts: string | null | undefined): string {
  if (!ts) return '—';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return ts;
  return d.toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });
}

export function disciplineLabel(d: string | null | undefined): string {
  if (!d) return '—';
  return d.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase());
}
