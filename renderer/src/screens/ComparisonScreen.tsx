import { useMemo, useState } from 'react';
import { ApiError } from '../api/client';
import {
  useChildJobs,
  useCreateExport,
  useDrawings,
  useFile,
  useLiveJob,
  useOverlays,
  useSheets,
} from '../api/hooks';
import type {
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
          <ExportsCard jobId={jobId} />
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
