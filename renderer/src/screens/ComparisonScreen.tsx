import { useMemo } from 'react';
import { ApiError } from '../api/client';
import { useChildJobs, useDrawings, useLiveJob, useOverlays, useSheets } from '../api/hooks';
import { comparisonSides, issueDate, sheetDrawingMap } from '../api/issue-order';
import type { CompareResult, Overlay, Sheet, UnpairedSheetRef } from '../api/types';
import { isTerminal } from '../api/types';
import { href } from '../app/use-route';
import {
  Empty,
  ErrorNote,
  formatTime,
  ProgressBar,
  ScoreBadge,
  scoreBand,
  Spinner,
  StatusBadge,
} from '../components/common';
import { buildPairRows, isWholeSheet, type PairRow } from './pair-rows';

export function ComparisonScreen({ projectId, jobId }: { projectId: string; jobId: string }) {
  const job = useLiveJob(jobId);
  const done = job.data?.status === 'Completed';
  const overlays = useOverlays(jobId, !!job.data && (done || job.data.status === 'Failed'));
  const sheets = useSheets({ project_id: projectId }, done);
  const drawings = useDrawings(projectId);

  const result = (job.data?.result ?? null) as CompareResult | null;
  const sheetById = useMemo(
    () => new Map((sheets.data ?? []).map((s) => [s.id, s])),
    [sheets.data],
  );
  const rows = useMemo(
    () => buildPairRows(result, overlays.data ?? [], sheetById),
    [result, overlays.data, sheetById],
  );

  if (job.isPending) return <Spinner label="Loading comparison…" />;
  if (job.isError)
    return (
      <div className="page">
        <ErrorNote error={job.error} title="Could not load the comparison" />
      </div>
    );
  const j = job.data;
  const sides = comparisonSides(j, sheetDrawingMap(sheets.data ?? []));
  const newer = drawings.data?.find((d) => d.id === sides.newerId);
  const older = drawings.data?.find((d) => d.id === sides.olderId);
  const p = j.progress;
  // A pair whose alignment is not trusted is not "unchanged": it counts with the changed ones.
  const changed = rows.filter(
    (r) => r.score < 0.95 || (r.changeCount ?? 0) > 0 || r.lowConfidence,
  ).length;

  return (
    <div className="page">
      <div className="page-head">
        <h1>Comparison</h1>
        <p className="muted" data-testid="comparison-direction">
          {newer && older ? (
            <>
              <strong>{older.name}</strong> → <strong>{newer.name}</strong>, issued{' '}
              {issueDate(older)} → {issueDate(newer)}
            </>
          ) : newer ? (
            <>
              Newer issue <strong>{newer.name}</strong> (issued {issueDate(newer)}) against an
              earlier one
            </>
          ) : (
            <span className="mono">{j.target_id}</span>
          )}{' '}
          · started {formatTime(j.created_at)}
        </p>
      </div>

      <section className="card" aria-label="Job status" data-testid="compare-status">
        <div className="row between">
          <div className="row gap-s" data-testid="compare-job-status" data-status={j.status}>
            <StatusBadge status={j.status} />
            <span className="muted small mono">{j.id}</span>
          </div>
          {p && p.total > 0 && (
            <span className="muted small" data-testid="compare-progress-text">
              {p.completed} of {p.total} steps
            </span>
          )}
        </div>
        {!isTerminal(j.status) && <ChildJobs parentId={j.id} />}
        {!isTerminal(j.status) && (
          <ProgressBar
            value={p?.completed ?? 0}
            total={p?.total ?? 0}
            label="Comparison progress"
          />
        )}
        {j.status === 'Failed' && j.error && (
          <ErrorNote error={new ApiError(j.error)} title="The comparison failed" />
        )}
        {j.status === 'Canceled' && <p className="muted">The comparison was canceled.</p>}
      </section>

      {done && (
        <>
          <section className="card" aria-labelledby="pairs-h">
            <div className="row between">
              <h2 id="pairs-h" className="card-title">
                Sheet pairs <span className="count">{rows.length}</span>
              </h2>
              <span className="muted small" data-testid="pairs-summary">
                {changed} changed · {rows.length - changed} unchanged · sorted by similarity, most
                changed first
              </span>
            </div>
            {overlays.isPending && <Spinner label="Loading overlays…" />}
            {overlays.isError && (
              <ErrorNote
                error={overlays.error}
                title="Could not load overlays"
                onRetry={() => void overlays.refetch()}
              />
            )}
            {overlays.isSuccess && rows.length === 0 && <Empty title="No sheets could be paired" />}
            {rows.length > 0 && (
              <table className="table pair-table" data-testid="pair-table">
                <thead>
                  <tr>
                    <th>Sheet</th>
                    <th>Title</th>
                    <th>Paired by</th>
                    <th className="num">Similarity</th>
                    <th>Assessment</th>
                    <th className="num">Changes</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <PairRowView key={r.key} row={r} projectId={projectId} jobId={jobId} />
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <div className="grid-2">
            <UnpairedList
              title="Added sheets"
              hint="only in the newer issue"
              refs={result?.added_sheets ?? []}
              sheetById={sheetById}
              testId="added-sheets"
            />
            <UnpairedList
              title="Removed sheets"
              hint="only in the older issue"
              refs={result?.removed_sheets ?? []}
              sheetById={sheetById}
              testId="removed-sheets"
            />
          </div>
        </>
      )}
    </div>
  );
}

function PairRowView({
  row,
  projectId,
  jobId,
}: {
  row: PairRow;
  projectId: string;
  jobId: string;
}) {
  const band = scoreBand(row.score);
  // The whole-sheet overlay comes first (pair-rows.ts): the pair opens on the whole page.
  const first: Overlay | undefined = row.overlays[0];
  const views = row.overlays.filter((o) => !isWholeSheet(o)).length;
  return (
    <tr data-testid="pair-row" data-sheet={row.sheetNumber}>
      <td>
        <span className="sheet-number">{row.sheetNumber}</span>
        {row.oldNumber && row.oldNumber !== row.sheetNumber && (
          <span className="muted small"> (was {row.oldNumber})</span>
        )}
      </td>
      <td className="ellipsis" title={row.title}>
        {row.title || <span className="muted">—</span>}
        {views > 0 && (
          <span className="muted small">
            {' '}
            · {views} view{views === 1 ? '' : 's'}
          </span>
        )}
      </td>
      <td className="muted small">
        {row.method ?? '—'}
        {row.confidence != null && ` · ${Math.round(row.confidence * 100)}%`}
      </td>
      <td className="num">
        <ScoreBadge score={row.score} />
      </td>
      <td>
        <span className={`band ${band.cls}`}>{band.label}</span>
      </td>
      <td className="num" data-testid="pair-change-count">
        {row.lowConfidence ? (
          <span
            className="band band-major"
            title="The sheets could not be aligned with confidence: no changes were sought, so none can be claimed. Open the overlay and check it by eye."
          >
            alignment poor
          </span>
        ) : (
          (row.changeCount ?? '—')
        )}
      </td>
      <td className="nowrap">
        {first ? (
          <a
            className="btn btn-small"
            href={href({ name: 'overlay', projectId, overlayId: first.id, jobId })}
            data-testid="open-overlay"
          >
            Open overlay
          </a>
        ) : (
          <span className="muted small">no overlay</span>
        )}
      </td>
    </tr>
  );
}

function UnpairedList({
  title,
  hint,
  refs,
  sheetById,
  testId,
}: {
  title: string;
  hint: string;
  refs: UnpairedSheetRef[];
  sheetById: Map<string, Sheet>;
  testId: string;
}) {
  return (
    <section className="card" data-testid={testId}>
      <h2 className="card-title">
        {title} <span className="count">{refs.length}</span> <span className="hint">{hint}</span>
      </h2>
      {refs.length === 0 ? (
        <p className="muted small">None.</p>
      ) : (
        <ul className="plain-list">
          {refs.map((r, i) => {
            const id = typeof r === 'string' ? r : (r.id ?? r.sheet_id ?? '');
            const s = sheetById.get(id);
            const number = s?.sheet_number ?? (typeof r === 'object' ? r.sheet_number : null) ?? id;
            const t = s?.title ?? (typeof r === 'object' ? r.title : null) ?? '';
            return (
              <li key={id || i} className="row gap-s">
                <span className="sheet-number">{number}</span>
                <span className="ellipsis">{t}</span>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

/** Per-pair work shows as child jobs (contract §6): a compact live list while the comparison runs. */
function ChildJobs({ parentId }: { parentId: string }) {
  const children = useChildJobs(parentId);
  const list = children.data ?? [];
  if (list.length === 0) return null;
  const done = list.filter((c) => isTerminal(c.status)).length;
  return (
    <div className="child-jobs" data-testid="child-jobs">
      <span className="muted small">
        {done} of {list.length} sub-tasks finished
      </span>
      <ul>
        {list.map((c) => (
          <li key={c.id} title={c.id}>
            <StatusBadge status={c.status} /> <span className="small">{c.type}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
