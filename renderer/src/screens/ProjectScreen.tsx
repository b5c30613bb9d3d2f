import {
  useEffect,
  useMemo,
  useRef,
  useState,
  type DragEvent,
  type FormEvent,
  type KeyboardEvent,
} from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { errorDetail } from '../api/client';
import {
  useApi,
  useCompareDrawings,
  useDrawings,
  useJobs,
  useLiveJob,
  usePatchDrawing,
  useProject,
  useSheets,
} from '../api/hooks';
import {
  comparisonSides,
  defaultPair,
  describeDirection,
  issueDate,
  previousIssue,
  sheetDrawingMap,
} from '../api/issue-order';
import { uploadDrawing } from '../api/upload';
import type { Drawing, Sheet } from '../api/types';
import { DISCIPLINES, isTerminal } from '../api/types';
import type { ProjectTab } from '../app/route';
import { href, navigate } from '../app/use-route';
import {
  disciplineLabel,
  Empty,
  ErrorNote,
  formatBytes,
  formatTime,
  ProgressBar,
  Spinner,
  StatusBadge,
} from '../components/common';
import { ui, useUi, type Upload } from '../state/ui-store';
import { currentSet, logOrder } from './project/drawing-log';
import {
  DeleteComparisonButton,
  DeleteDrawingButton,
  DeleteProjectButton,
  RetryDrawingButton,
} from './project/DrawingActions';
import { SheetHistory } from './project/SheetHistory';
import { AskPanel } from './AskPanel';
import { SearchPanel } from './SearchPanel';
import { plural } from '../viewer/words';

export function ProjectScreen({ projectId, tab }: { projectId: string; tab: ProjectTab }) {
  const project = useProject(projectId);
  if (project.isPending) return <Spinner label="Loading project…" />;
  if (project.isError) {
    return (
      <div className="page">
        <ErrorNote error={project.error} title="Could not open the project" />
        <p>
          <a href="#/">Back to projects</a>
        </p>
      </div>
    );
  }
  const tabs: { id: ProjectTab; label: string }[] = [
    { id: 'drawings', label: 'Drawings & sheets' },
    { id: 'compare', label: 'Compare' },
    { id: 'search', label: 'Search' },
  ];
  return (
    <div className="page">
      <div className="page-head row between">
        <div>
          <h1>{project.data.name}</h1>
          {project.data.description && <p className="muted">{project.data.description}</p>}
        </div>
        <DeleteProjectButton projectId={projectId} name={project.data.name} />
      </div>
      <nav className="tabs" role="tablist" aria-label="Project sections">
        {tabs.map((t) => (
          <a
            key={t.id}
            role="tab"
            aria-selected={tab === t.id}
            className={`tab${tab === t.id ? ' active' : ''}`}
            href={href({ name: 'project', projectId, tab: t.id })}
          >
            {t.label}
          </a>
        ))}
      </nav>
      {tab === 'drawings' && <DrawingsTab projectId={projectId} />}
      {tab === 'compare' && <CompareTab projectId={projectId} />}
      {tab === 'search' && (
        <div className="sa-columns">
          <SearchPanel projectId={projectId} />
          <AskPanel projectId={projectId} />
        </div>
      )}
    </div>
  );
}

// ───────────────────────────── Drawings & sheets ─────────────────────────────

function DrawingsTab({ projectId }: { projectId: string }) {
  const drawings = useDrawings(projectId);
  // The drawing log: newest issue first, the current set marked.
  const log = useMemo(() => logOrder(drawings.data ?? []), [drawings.data]);
  const current = useMemo(() => currentSet(drawings.data ?? []), [drawings.data]);
  return (
    <div className="stack">
      <UploadZone projectId={projectId} />
      <section className="card" aria-labelledby="drw-h">
        <h2 id="drw-h" className="card-title">
          Drawing sets {drawings.data && <span className="count">{drawings.data.length}</span>}{' '}
          <span className="hint">newest issue first</span>
        </h2>
        {drawings.isPending && <Spinner label="Loading drawings…" />}
        {drawings.isError && (
          <ErrorNote
            error={drawings.error}
            title="Could not load drawings"
            onRetry={() => void drawings.refetch()}
          />
        )}
        {drawings.isSuccess && drawings.data.length === 0 && (
          <Empty title="No drawing sets yet">Drop a PDF issue above to add one.</Empty>
        )}
        {drawings.isSuccess && drawings.data.length > 0 && (
          <table className="table" data-testid="drawing-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Revision</th>
                <th>Issued</th>
                <th>Status</th>
                <th className="num">Sheets</th>
                <th>Added</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {log.map((d) => (
                <DrawingRow
                  key={d.id}
                  drawing={d}
                  projectId={projectId}
                  current={d.id === current?.id}
                />
              ))}
            </tbody>
          </table>
        )}
      </section>
      <SheetHistory projectId={projectId} drawings={drawings.data ?? []} />
      <SheetBrowser projectId={projectId} drawings={drawings.data ?? []} />
    </div>
  );
}

function DrawingRow({
  drawing,
  projectId,
  current,
}: {
  drawing: Drawing;
  projectId: string;
  current: boolean;
}) {
  const processing = drawing.status === 'Processing';
  const failed = drawing.status === 'Failed';
  // A failed set says why (its process job's error), so the reviewer can decide to retry or remove.
  const job = useLiveJob(processing || failed ? drawing.job_id : null);
  const p = job.data?.progress;
  const [editing, setEditing] = useState(false);
  return (
    <tr
      data-testid="drawing-row"
      data-id={drawing.id}
      data-status={drawing.status}
      data-current={current}
    >
      <td className="strong">
        {drawing.name}
        {current && (
          <span className="current-tag" data-testid="current-set" title="The latest issue">
            Current
          </span>
        )}
      </td>
      {editing ? (
        <IssueEditor drawing={drawing} projectId={projectId} onDone={() => setEditing(false)} />
      ) : (
        <>
          <td data-testid="drawing-revision">
            {drawing.revision || <span className="muted">—</span>}
          </td>
          <td className="nowrap" data-testid="drawing-issued">
            {drawing.issued_at ?? (
              <span className="muted" title="No issue date found yet">
                —
              </span>
            )}
          </td>
        </>
      )}
      <td>
        <div className="row gap-s">
          <StatusBadge status={drawing.status} />
          {processing && p && p.total > 0 && (
            <span className="muted small">
              {p.completed} of {plural(p.total, 'page')}
            </span>
          )}
        </div>
        {processing && (
          <ProgressBar value={p?.completed ?? 0} total={p?.total ?? 0} label="Processing" />
        )}
        {failed && job.data?.error && (
          <div className="state-error-inline small" data-testid="drawing-error">
            {job.data.error.detail}
          </div>
        )}
      </td>
      <td className="num">{drawing.sheet_count ?? '—'}</td>
      <td className="muted nowrap">{formatTime(drawing.created_at)}</td>
      <td className="nowrap">
        {!editing && (
          <span className="row gap-s">
            {drawing.status === 'Failed' && (
              <RetryDrawingButton drawing={drawing} projectId={projectId} />
            )}
            {drawing.status !== 'Failed' && (
              <button
                type="button"
                className="btn btn-small"
                onClick={() => setEditing(true)}
                aria-label={`Edit revision and issue date of ${drawing.name}`}
                data-testid="edit-drawing"
              >
                Edit
              </button>
            )}
            <DeleteDrawingButton
              drawing={drawing}
              projectId={projectId}
              label={drawing.status === 'Failed' ? 'Remove' : 'Delete'}
            />
          </span>
        )}
      </td>
    </tr>
  );
}

/**
 * Revision and issue date edited in place (two cells of the row). Only the fields changed are
 * sent: a value a person sets is kept over what processing reads from the title blocks, so an
 * untouched field must stay the processing's.
 */
function IssueEditor({
  drawing,
  projectId,
  onDone,
}: {
  drawing: Drawing;
  projectId: string;
  onDone: () => void;
}) {
  const patch = usePatchDrawing(projectId);
  const [revision, setRevision] = useState(drawing.revision ?? '');
  const [issued, setIssued] = useState(drawing.issued_at ?? '');
  const save = () => {
    const body: { revision?: string | null; issued_at?: string | null } = {};
    if (revision.trim() !== (drawing.revision ?? '')) body.revision = revision.trim() || null;
    if (issued !== (drawing.issued_at ?? '')) body.issued_at = issued || null;
    if (Object.keys(body).length === 0) return onDone();
    patch.mutate(
      { id: drawing.id, body },
      {
        onSuccess: () => {
          ui.toast('Revision and issue date saved');
          onDone();
        },
      },
    );
  };
  const keys = (e: KeyboardEvent) => {
    if (e.key === 'Enter') save();
    if (e.key === 'Escape') onDone();
  };
  return (
    <>
      <td>
        <input
          value={revision}
          onChange={(e) => setRevision(e.target.value)}
          onKeyDown={keys}
          maxLength={100}
          size={10}
          placeholder="e.g. Rev B"
          aria-label={`Revision of ${drawing.name}`}
          data-testid="drawing-edit-revision"
          autoFocus
        />
      </td>
      <td>
        <div className="row gap-s nowrap">
          <input
            type="date"
            value={issued}
            onChange={(e) => setIssued(e.target.value)}
            onKeyDown={keys}
            aria-label={`Issue date of ${drawing.name}`}
            data-testid="drawing-edit-issued"
          />
          <button
            type="button"
            className="btn btn-small btn-primary"
            onClick={save}
            disabled={patch.isPending}
            data-testid="save-drawing"
          >
            {patch.isPending ? 'Saving…' : 'Save'}
          </button>
          <button type="button" className="btn btn-small" onClick={onDone}>
            Cancel
          </button>
        </div>
        {patch.isError && (
          <div className="state-error-inline small" role="alert">
            {errorDetail(patch.error)}
          </div>
        )}
      </td>
    </>
  );
}

function UploadZone({ projectId }: { projectId: string }) {
  const api = useApi();
  const qc = useQueryClient();
  const uploads = useUi((s) => s.uploads).filter((u) => u.projectId === projectId);
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);

  const start = (files: FileList | File[]) => {
    // In name order: offices name prints by issue date (20190601_…, 20190602_…), and same-day
    // issues take their upload order as their issue order.
    const byName = Array.from(files).sort((a, b) =>
      a.name.localeCompare(b.name, undefined, { numeric: true }),
    );
    for (const f of byName) void uploadDrawing(api, qc, projectId, f);
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    if (e.dataTransfer.files.length) start(e.dataTransfer.files);
  };

  return (
    <section className="card" aria-labelledby="up-h">
      <h2 id="up-h" className="card-title">
        Upload drawing sets
      </h2>
      <div
        className={`dropzone${over ? ' over' : ''}`}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
        role="button"
        tabIndex={0}
        onKeyDown={(e) => {
          if (e.key === 'Enter' || e.key === ' ') {
            e.preventDefault();
            input.current?.click();
          }
        }}
        onClick={() => input.current?.click()}
      >
        <strong>Drop PDF issues here</strong>
        <span className="muted">
          or click to choose files — each file becomes one drawing set, split into sheets
        </span>
        <input
          ref={input}
          type="file"
          accept=".pdf,application/pdf,image/png,image/jpeg,image/tiff"
          multiple
          hidden
          data-testid="file-input"
          onChange={(e) => {
            if (e.target.files) start(e.target.files);
            e.target.value = '';
          }}
        />
      </div>
      {uploads.length > 0 && (
        <>
          <ul className="upload-list" aria-label="Uploads">
            {uploads.map((u) => (
              <UploadItem key={u.localId} upload={u} />
            ))}
          </ul>
          {uploads.some((u) => u.phase === 'ready' || u.phase === 'failed') && (
            <button type="button" className="btn btn-small" onClick={ui.clearFinishedUploads}>
              Clear finished
            </button>
          )}
        </>
      )}
    </section>
  );
}

const PHASE_LABEL: Record<Upload['phase'], string> = {
  uploading: 'Uploading',
  registering: 'Registering',
  processing: 'Processing',
  ready: 'Ready',
  failed: 'Failed',
};

function UploadItem({ upload }: { upload: Upload }) {
  const job = useLiveJob(upload.phase === 'processing' ? upload.jobId : null);
  const status = job.data?.status;
  useEffect(() => {
    if (!status || !isTerminal(status) || upload.phase !== 'processing') return;
    if (status === 'Completed') ui.updateUpload(upload.localId, { phase: 'ready' });
    else
      ui.updateUpload(upload.localId, {
        phase: 'failed',
        error: job.data?.error?.detail ?? `Processing ${status.toLowerCase()}.`,
      });
  }, [status, upload.localId, upload.phase, job.data?.error?.detail]);
  const p = job.data?.progress;
  return (
    <li className="upload-item" data-testid="upload-item" data-phase={upload.phase}>
      <div className="row between">
        <span className="strong ellipsis">{upload.filename}</span>
        <span className={`phase phase-${upload.phase}`}>{PHASE_LABEL[upload.phase]}</span>
      </div>
      {upload.phase === 'uploading' && (
        <>
          <ProgressBar
            value={upload.uploaded}
            total={upload.size}
            label={`Uploading ${upload.filename}`}
          />
          <span className="muted small">
            {formatBytes(upload.uploaded)} of {formatBytes(upload.size)}
          </span>
        </>
      )}
      {upload.phase === 'processing' && (
        <>
          <ProgressBar
            value={p?.completed ?? 0}
            total={p?.total ?? 0}
            label={`Processing ${upload.filename}`}
          />
          <span className="muted small">
            {p && p.total > 0
              ? `${p.completed} of ${plural(p.total, 'page')} processed`
              : job.data?.status === 'Started'
                ? 'Reading the file…'
                : 'Queued for processing…'}
          </span>
        </>
      )}
      {upload.error && <div className="state-error-inline small">{upload.error}</div>}
    </li>
  );
}

function SheetBrowser({ projectId, drawings }: { projectId: string; drawings: Drawing[] }) {
  const filter = useUi((s) => s.sheetFilter);
  const [numberDraft, setNumberDraft] = useState(filter.sheetNumber);
  const drawingKnown = !filter.drawingId || drawings.some((d) => d.id === filter.drawingId);
  const sheets = useSheets({
    project_id: filter.drawingId && drawingKnown ? undefined : projectId,
    drawing_id: filter.drawingId && drawingKnown ? filter.drawingId : undefined,
    discipline: filter.discipline || undefined,
    sheet_number: filter.sheetNumber || undefined,
  });
  const byDrawing = useMemo(() => new Map(drawings.map((d) => [d.id, d])), [drawings]);
  const readyCount = drawings.filter((d) => d.status === 'Ready').length;
  return (
    <section className="card" aria-labelledby="sheets-h">
      <div className="row between wrap">
        <h2 id="sheets-h" className="card-title">
          Sheets {sheets.data && <span className="count">{sheets.data.length}</span>}
        </h2>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            ui.setSheetFilter({ sheetNumber: numberDraft.trim() });
          }}
        >
          <label>
            <span>Set</span>
            <select
              value={drawingKnown ? filter.drawingId : ''}
              onChange={(e) => ui.setSheetFilter({ drawingId: e.target.value })}
            >
              <option value="">All sets</option>
              {drawings.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                  {d.revision ? ` (${d.revision})` : ''}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Discipline</span>
            <select
              value={filter.discipline}
              onChange={(e) => ui.setSheetFilter({ discipline: e.target.value })}
              data-testid="discipline-filter"
            >
              <option value="">All</option>
              {DISCIPLINES.map((d) => (
                <option key={d} value={d}>
                  {disciplineLabel(d)}
                </option>
              ))}
            </select>
          </label>
          <label>
            <span>Sheet no.</span>
            <input
              value={numberDraft}
              onChange={(e) => setNumberDraft(e.target.value)}
              onBlur={() => ui.setSheetFilter({ sheetNumber: numberDraft.trim() })}
              placeholder="exact, e.g. S101"
              size={12}
              data-testid="sheet-number-filter"
            />
          </label>
          {(filter.discipline || filter.sheetNumber || filter.drawingId) && (
            <button
              type="button"
              className="btn btn-small"
              onClick={() => {
                setNumberDraft('');
                ui.setSheetFilter({ discipline: '', sheetNumber: '', drawingId: '' });
              }}
            >
              Clear
            </button>
          )}
        </form>
      </div>
      {sheets.isPending && <Spinner label="Loading sheets…" />}
      {sheets.isError && (
        <ErrorNote
          error={sheets.error}
          title="Could not load sheets"
          onRetry={() => void sheets.refetch()}
        />
      )}
      {sheets.isSuccess && sheets.data.length === 0 && (
        <Empty
          title={
            filter.discipline || filter.sheetNumber
              ? 'No sheets match these filters'
              : 'No sheets yet'
          }
        >
          {readyCount === 0 && !filter.discipline && !filter.sheetNumber
            ? 'Sheets appear once a drawing set has been processed.'
            : null}
        </Empty>
      )}
      {sheets.isSuccess && sheets.data.length > 0 && (
        <ul className="sheet-grid" data-testid="sheet-grid">
          {sortSheets(sheets.data).map((s) => (
            <li key={s.id}>
              <a
                className="sheet-card"
                href={href({ name: 'sheet', projectId, sheetId: s.id })}
                data-testid="sheet-card"
              >
                <div className="thumb">
                  {s.thumbnail_uri ? (
                    <img
                      src={s.thumbnail_uri}
                      alt={`Sheet ${s.sheet_number ?? s.index + 1}`}
                      loading="lazy"
                    />
                  ) : (
                    <span className="muted">No preview</span>
                  )}
                </div>
                <div className="sheet-meta">
                  <div className="row between">
                    <span className="sheet-number">{s.sheet_number || `p. ${s.index + 1}`}</span>
                    <span className="disc">{disciplineLabel(s.discipline)}</span>
                  </div>
                  <div className="sheet-title ellipsis" title={s.title ?? ''}>
                    {s.title || <span className="muted">Untitled</span>}
                  </div>
                  <div className="muted small ellipsis">
                    {byDrawing.get(s.drawing_id)?.name ?? s.drawing_id}
                  </div>
                </div>
              </a>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function sortSheets(list: Sheet[]): Sheet[] {
  return [...list].sort((a, b) =>
    a.drawing_id === b.drawing_id ? a.index - b.index : a.drawing_id < b.drawing_id ? 1 : -1,
  );
}

// ───────────────────────────── Compare ─────────────────────────────

function CompareTab({ projectId }: { projectId: string }) {
  const drawings = useDrawings(projectId);
  const jobs = useJobs(projectId, false);
  const compare = useCompareDrawings();
  const ready = useMemo(
    () => (drawings.data ?? []).filter((d) => d.status === 'Ready'),
    [drawings.data],
  );
  // The default pair: the latest issue by issue date (same day: the later upload) against the
  // issue just before it — not the last two uploads, which may have come in any order.
  const [newer, setNewer] = useState('');
  const [older, setOlder] = useState('');
  const newerId = newer || defaultPair(ready)?.newer.id || '';
  const chosenNewer = ready.find((d) => d.id === newerId);
  const olderId = older || (chosenNewer && previousIssue(ready, chosenNewer)?.id) || '';
  const hidden = useUi((s) => s.hiddenComparisons);
  const comparisons = (jobs.data?.data ?? []).filter(
    (j) => j.type === 'compare' && !j.parent_id && !hidden.includes(j.id),
  );
  const byId = new Map((drawings.data ?? []).map((d) => [d.id, d]));
  const newerSet = byId.get(newerId);
  const olderSet = byId.get(olderId);
  const direction =
    newerSet && olderSet && newerId !== olderId ? describeDirection(olderSet, newerSet) : null;
  // The older side of a finished comparison is known from its result's sheets.
  const sheets = useSheets({ project_id: projectId }, comparisons.length > 0);
  const sheetDrawing = useMemo(() => sheetDrawingMap(sheets.data ?? []), [sheets.data]);
  const option = (d: Drawing) =>
    `${d.name}${d.revision ? ` — ${d.revision}` : ''} · issued ${issueDate(d)} · ${d.sheet_count == null ? '? sheets' : plural(d.sheet_count, 'sheet')}`;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!newerId || !olderId || newerId === olderId) return;
    compare.mutate(
      { newerId, olderId },
      {
        onSuccess: (r) => navigate({ name: 'comparison', projectId, jobId: r.job_id }),
      },
    );
  };

  return (
    <div className="grid-2">
      <section className="card" aria-labelledby="cmp-h">
        <h2 id="cmp-h" className="card-title">
          Compare two issues
        </h2>
        {drawings.isPending && <Spinner />}
        {drawings.isError && (
          <ErrorNote error={drawings.error} onRetry={() => void drawings.refetch()} />
        )}
        {drawings.isSuccess && ready.length < 2 && (
          <Empty title="Two processed drawing sets are needed">
            {ready.length} of {plural(drawings.data.length, 'set')}{' '}
            {ready.length === 1 ? 'is' : 'are'} ready.{' '}
            <a href={href({ name: 'project', projectId, tab: 'drawings' })}>
              Upload or wait for processing
            </a>
            .
          </Empty>
        )}
        {ready.length >= 2 && (
          <form onSubmit={submit} className="form">
            <label className="field">
              <span>Newer issue</span>
              <select
                value={newerId}
                onChange={(e) => setNewer(e.target.value)}
                data-testid="compare-newer"
              >
                {ready.map((d) => (
                  <option key={d.id} value={d.id}>
                    {option(d)}
                  </option>
                ))}
              </select>
            </label>
            <div className="row">
              <button
                type="button"
                className="btn btn-small"
                onClick={() => {
                  setNewer(olderId);
                  setOlder(newerId);
                }}
                title="Swap newer and older"
              >
                ⇅ Swap
              </button>
            </div>
            <label className="field">
              <span>Older issue (compare to)</span>
              <select
                value={olderId}
                onChange={(e) => setOlder(e.target.value)}
                data-testid="compare-older"
              >
                {ready.map((d) => (
                  <option key={d.id} value={d.id}>
                    {option(d)}
                  </option>
                ))}
              </select>
            </label>
            {direction && (
              <div className="direction" data-testid="compare-direction">
                <span className="muted small">Direction</span>
                <strong>{direction.text}</strong>
                {direction.reversed && (
                  <span className="state-error-inline small" data-testid="compare-reversed">
                    The set chosen as newer was issued before the older one: additions would show as
                    removals. Swap them unless this is intended.
                  </span>
                )}
              </div>
            )}
            {newerId === olderId && (
              <div className="state-error-inline small">Pick two different sets.</div>
            )}
            {compare.isError && (
              <ErrorNote error={compare.error} title="Could not start the comparison" />
            )}
            <button
              type="submit"
              className="btn btn-primary"
              disabled={compare.isPending || newerId === olderId}
              data-testid="start-compare"
            >
              {compare.isPending ? 'Starting…' : 'Compare sheets and detect changes'}
            </button>
            <p className="muted small">
              Pairs sheets by number, aligns each pair and finds change regions. Costs one credit
              per overlay for comparison and one for change detection.
            </p>
          </form>
        )}
      </section>
      <section className="card" aria-labelledby="cmp-prev-h">
        <h2 id="cmp-prev-h" className="card-title">
          Comparisons
        </h2>
        {jobs.isPending && <Spinner />}
        {jobs.isError && <ErrorNote error={jobs.error} onRetry={() => void jobs.refetch()} />}
        {jobs.isSuccess && comparisons.length === 0 && <Empty title="No comparisons yet" />}
        <ul className="plain-list" data-testid="comparison-list">
          {comparisons.map((j) => (
            <li key={j.id} className="comparison-item" data-testid="comparison-item">
              <a href={href({ name: 'comparison', projectId, jobId: j.id })}>
                <ComparisonLabel
                  sides={comparisonSides(j, sheetDrawing)}
                  byId={byId}
                  finished={isTerminal(j.status)}
                />
              </a>
              <span className="row gap-s">
                <StatusBadge status={j.status} />
                <span className="muted small nowrap">{formatTime(j.created_at)}</span>
                {isTerminal(j.status) && (
                  <DeleteComparisonButton
                    jobId={j.id}
                    label={comparisonText(comparisonSides(j, sheetDrawing), byId, j.created_at)}
                  />
                )}
              </span>
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}

/** "<older> → <newer>, started <time>" in words for the delete confirmation. */
function comparisonText(
  sides: { newerId: string; olderId: string | null },
  byId: Map<string, Drawing>,
  created: string,
): string {
  const newer = byId.get(sides.newerId)?.name;
  const older = sides.olderId ? byId.get(sides.olderId)?.name : undefined;
  const what = newer && older ? `${older} → ${newer}` : newer ? `against ${newer}` : 'Comparison';
  return `${what}, started ${formatTime(created)}`;
}

/** "<older> → <newer>, issued <date> → <date>" for a comparison in the list. */
function ComparisonLabel({
  sides,
  byId,
  finished,
}: {
  sides: { newerId: string; olderId: string | null };
  byId: Map<string, Drawing>;
  finished: boolean;
}) {
  const newer = byId.get(sides.newerId);
  const older = sides.olderId ? byId.get(sides.olderId) : undefined;
  if (newer && older) {
    const d = describeDirection(older, newer);
    return (
      <span className="stack-tight">
        <span>
          {older.name} → <strong>{newer.name}</strong>
        </span>
        <span className="muted small">
          issued {issueDate(older)} → {issueDate(newer)}
          {d.reversed ? ' (compared against a later issue)' : ''}
        </span>
      </span>
    );
  }
  return (
    <span className="stack-tight">
      <span>
        {finished ? 'earlier set' : 'earlier set (known when finished)'} →{' '}
        <strong>{newer?.name ?? sides.newerId}</strong>
      </span>
      {newer && <span className="muted small">issued {issueDate(newer)}</span>}
    </span>
  );
}
