import { useMemo, useState } from 'react';
import { ApiError } from '../api/client';
import {
  useChangesFor,
  useChildJobs,
  useCreateExport,
  useDrawings,
  useFile,
  useLiveJob,
  useOverlays,
  useSheets,
} from '../api/hooks';
import type {
  Change,
  CompareResult,
  CreateExportBody,
  ExportFormat,
  ExportResult,
  Overlay,
  ReviewStatus,
  Sheet,
  UnpairedSheetRef,
} from '../api/types';
import { comparisonSides, issueDate, sheetDrawingMap } from '../api/issue-order';
import { useUi } from '../state/ui-store';
import { isTerminal } from '../api/types';
import { href } from '../app/use-route';
import {
  Empty,
  ErrorNote,
  formatTime,
  ProgressBar,
  Spinner,
  StatusBadge,
} from '../components/common';
import { ScoreWordsBadge } from '../components/ScoreWordsBadge';
import { alignmentWords, plural } from '../viewer/words';
import { buildPairRows, isWholeSheet, pairStatus, type PairRow } from './pair-rows';

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
  // Review progress: the changes of each pair's counted overlays (its whole sheet).
  const countedIds = useMemo(
    () =>
      rows.flatMap((r) => {
        const whole = r.overlays.filter(isWholeSheet);
        return (whole.length > 0 ? whole : r.overlays)
          .filter((o) => (o.change_count ?? 0) > 0)
          .map((o) => o.id);
      }),
    [rows],
  );
  const changesBy = useChangesFor(countedIds);

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
  const changed = rows.filter((r) => pairStatus(r) !== 'unchanged').length;
  const progressOf = (r: PairRow): { reviewed: number; total: number } | null => {
    const whole = r.overlays.filter(isWholeSheet);
    const lists = (whole.length > 0 ? whole : r.overlays)
      .filter((o) => (o.change_count ?? 0) > 0)
      .map((o) => changesBy.get(o.id));
    if (lists.length === 0 || lists.some((l) => !l)) return null;
    const all = (lists as Change[][]).flat();
    return { reviewed: all.filter((c) => c.review_status !== 'open').length, total: all.length };
  };
  const progress = rows.map(progressOf);
  const setTotal = rows.reduce((s, r) => s + (r.changeCount ?? 0), 0);
  const setReviewed = progress.reduce((s, p) => s + (p?.reviewed ?? 0), 0);
  const added = result?.added_sheets?.length ?? 0;
  const removed = result?.removed_sheets?.length ?? 0;

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
          </div>
          {p && p.total > 0 && !isTerminal(j.status) && (
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
                {changed} changed · {rows.length - changed} unchanged
                {added > 0 && ` · ${added} added`}
                {removed > 0 && ` · ${removed} removed`} · most changed first
              </span>
            </div>
            {setTotal > 0 && (
              <div className="set-progress" data-testid="set-progress">
                <span className="small">
                  <strong>
                    {setReviewed} of {plural(setTotal, 'change')} reviewed
                  </strong>{' '}
                  <span className="muted">across {plural(changed, 'changed sheet')}</span>
                </span>
                <ProgressBar value={setReviewed} total={setTotal} label="Review progress" />
              </div>
            )}
            {overlays.isPending && <Spinner label="Loading overlays…" />}
            {overlays.isError && (
              <ErrorNote
                error={overlays.error}
                title="Could not load overlays"
                onRetry={() => void overlays.refetch()}
              />
            )}
            {overlays.isSuccess && rows.length === 0 && <Empty title="No sheets could be paired" />}
            {rows.length + added + removed > 0 && (
              <table className="table pair-table" data-testid="pair-table">
                <thead>
                  <tr>
                    <th>Sheet</th>
                    <th>Title</th>
                    <th>Status</th>
                    <th>Similarity</th>
                    <th className="num">Changes</th>
                    <th>Review</th>
                    <th />
                  </tr>
                </thead>
                <tbody>
                  {rows.map((r, i) => (
                    <PairRowView
                      key={r.key}
                      row={r}
                      progress={progress[i] ?? null}
                      projectId={projectId}
                      jobId={jobId}
                    />
                  ))}
                  {(['added', 'removed'] as const).map((kind) =>
                    (kind === 'added' ? result?.added_sheets : result?.removed_sheets)?.map(
                      (ref, i) => (
                        <UnpairedRow
                          key={`${kind}-${i}`}
                          kind={kind}
                          sheetRef={ref}
                          sheetById={sheetById}
                          projectId={projectId}
                        />
                      ),
                    ),
                  )}
                </tbody>
              </table>
            )}
          </section>
          <ExportsCard jobId={jobId} />
        </>
      )}
    </div>
  );
}

function PairRowView({
  row,
  progress,
  projectId,
  jobId,
}: {
  row: PairRow;
  progress: { reviewed: number; total: number } | null;
  projectId: string;
  jobId: string;
}) {
  // The whole-sheet overlay comes first (pair-rows.ts): the pair opens on the whole page.
  const first: Overlay | undefined = row.overlays[0];
  const views = row.overlays.filter((o) => !isWholeSheet(o)).length;
  const status = pairStatus(row);
  const al = alignmentWords(first?.alignment);
  const done = progress && progress.total > 0 && progress.reviewed === progress.total;
  return (
    <tr data-testid="pair-row" data-sheet={row.sheetNumber} data-status={status}>
      <td>
        <span className="sheet-number">{row.sheetNumber}</span>
        {row.oldNumber && row.oldNumber !== row.sheetNumber && (
          <span className="muted small"> (was {row.oldNumber})</span>
        )}
      </td>
      <td className="ellipsis" title={row.title}>
        {row.title || <span className="muted">—</span>}
        {views > 0 && <span className="muted small"> · {plural(views, 'view')}</span>}
      </td>
      <td>
        <span className={`pair-status pair-status-${status}`} data-testid="pair-status">
          {status === 'changed' ? 'Changed' : 'Unchanged'}
        </span>
        {!al.ok && (
          <span className="band band-major small" title={al.details ?? undefined}>
            {' '}
            · check alignment
          </span>
        )}
      </td>
      <td>
        <ScoreWordsBadge score={row.score} changeCount={row.changeCount} />
      </td>
      <td className="num" data-testid="pair-change-count">
        {row.lowConfidence ? (
          <span
            className="band band-major"
            title="The sheets could not be aligned with confidence: no changes were sought, so none can be claimed. Open the overlay and check it by eye."
          >
            not checked
          </span>
        ) : (
          (row.changeCount ?? '—')
        )}
      </td>
      <td className="nowrap small" data-testid="pair-review">
        {progress && progress.total > 0 ? (
          <span className={done ? 'ok-text' : ''}>
            {done ? '✓ ' : ''}
            {progress.reviewed} of {progress.total} reviewed
          </span>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td className="nowrap">
        {first ? (
          <a
            className="btn btn-small"
            href={href({ name: 'overlay', projectId, overlayId: first.id, jobId })}
            data-testid="open-overlay"
          >
            {status === 'changed' ? 'Review' : 'Open'}
          </a>
        ) : (
          <span className="muted small">no overlay</span>
        )}
      </td>
    </tr>
  );
}

/** A sheet only in the newer issue (added) or only in the older one (removed): a row of its own. */
function UnpairedRow({
  kind,
  sheetRef,
  sheetById,
  projectId,
}: {
  kind: 'added' | 'removed';
  sheetRef: UnpairedSheetRef;
  sheetById: Map<string, Sheet>;
  projectId: string;
}) {
  const r = sheetRef;
  const id = typeof r === 'string' ? r : (r.id ?? r.sheet_id ?? '');
  const s = sheetById.get(id);
  const number = s?.sheet_number ?? (typeof r === 'object' ? r.sheet_number : null) ?? '—';
  const t = s?.title ?? (typeof r === 'object' ? r.title : null) ?? '';
  return (
    <tr data-testid="unpaired-row" data-sheet={number} data-status={kind}>
      <td>
        <span className="sheet-number">{number}</span>
      </td>
      <td className="ellipsis" title={t}>
        {t || <span className="muted">—</span>}
      </td>
      <td>
        <span className={`pair-status pair-status-${kind}`}>
          {kind === 'added' ? 'Added' : 'Removed'}
        </span>
      </td>
      <td className="muted small" colSpan={3}>
        {kind === 'added' ? 'only in the newer issue' : 'only in the older issue'}
      </td>
      <td className="nowrap">
        {id && (
          <a className="btn btn-small" href={href({ name: 'sheet', projectId, sheetId: id })}>
            Open sheet
          </a>
        )}
      </td>
    </tr>
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

const EXPORTS: { format: ExportFormat; label: string; hint: string }[] = [
  {
    format: 'pdf_report',
    label: 'Review report (PDF)',
    hint: 'cover, summary of every sheet, each changed sheet with numbered clouds and its changes',
  },
  {
    format: 'clouded_pdf',
    label: 'Clouded drawings (PDF)',
    hint: 'the newer set itself with a revision cloud per change, editable in PDF markup tools',
  },
  { format: 'csv', label: 'Change list (CSV)', hint: 'one row per change, for Excel' },
];

/**
 * Exports of this comparison (contract §6): a button per format starts an export job, its progress
 * shows live, and the finished file is a download link. Review-status filter and report page size
 * apply to the next export; the palette follows the viewer's.
 */
function ExportsCard({ jobId }: { jobId: string }) {
  const create = useCreateExport();
  const palette = useUi((s) => s.palette);
  const [pageSize, setPageSize] = useState<NonNullable<CreateExportBody['page_size']>>('letter');
  const [only, setOnly] = useState<ReviewStatus | 'all'>('all');
  const [runs, setRuns] = useState<{ format: ExportFormat; jobId: string }[]>([]);

  const start = (format: ExportFormat) =>
    create.mutate(
      {
        job_id: jobId,
        format,
        palette,
        ...(format === 'pdf_report' ? { page_size: pageSize } : {}),
        ...(only === 'all' ? {} : { review_status: [only] }),
      },
      { onSuccess: (r) => setRuns((list) => [{ format, jobId: r.job_id }, ...list]) },
    );

  return (
    <section className="card" aria-labelledby="exports-h" data-testid="exports">
      <h2 id="exports-h" className="card-title">
        Export
      </h2>
      <div className="row gap-s wrap">
        {EXPORTS.map((e) => (
          <button
            key={e.format}
            className="btn"
            title={e.hint}
            disabled={create.isPending}
            onClick={() => start(e.format)}
            data-testid={`export-${e.format}`}
          >
            {e.label}
          </button>
        ))}
        <label className="small muted">
          Changes{' '}
          <select value={only} onChange={(ev) => setOnly(ev.target.value as ReviewStatus | 'all')}>
            <option value="all">all</option>
            <option value="open">open only</option>
            <option value="flagged">flagged only</option>
            <option value="accepted">accepted only</option>
            <option value="rejected">rejected only</option>
          </select>
        </label>
        <label className="small muted">
          Report page{' '}
          <select
            value={pageSize}
            onChange={(ev) => setPageSize(ev.target.value as typeof pageSize)}
          >
            <option value="letter">Letter</option>
            <option value="a4">A4</option>
            <option value="tabloid">11x17</option>
          </select>
        </label>
      </div>
      {create.isError && <ErrorNote error={create.error} title="Could not start the export" />}
      {runs.length > 0 && (
        <ul className="plain-list">
          {runs.map((r) => (
            <ExportRun key={r.jobId} run={r} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ExportRun({ run }: { run: { format: ExportFormat; jobId: string } }) {
  const job = useLiveJob(run.jobId);
  const j = job.data;
  const result = (j?.status === 'Completed' ? j.result : null) as ExportResult | null;
  const file = useFile(result?.file_id ?? null);
  const label = EXPORTS.find((e) => e.format === run.format)?.label ?? run.format;
  return (
    <li className="row gap-s" data-testid="export-run" data-format={run.format}>
      <span className="small">{label}</span>
      {j && <StatusBadge status={j.status} />}
      {j && !isTerminal(j.status) && (
        <ProgressBar
          value={j.progress?.completed ?? 0}
          total={j.progress?.total ?? 0}
          label={`${label} progress`}
        />
      )}
      {j?.progress && j.progress.total > 0 && (
        // The job's own count (sheet pairs, then the document), kept once it ends: a short export
        // can finish between two frames of the bar.
        <span className="small muted" data-testid="export-progress">
          {j.progress.completed} of {j.progress.total} steps
        </span>
      )}
      {file.data?.uri && (
        <a
          className="btn btn-small"
          href={file.data.uri}
          download={file.data.filename}
          data-testid="export-download"
        >
          Download {file.data.filename}
        </a>
      )}
      {j?.status === 'Failed' && j.error && (
        <ErrorNote error={new ApiError(j.error)} title="The export failed" />
      )}
    </li>
  );
}
