import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent } from 'react';
import { useBlocks, usePatchSheet, useSheet } from '../api/hooks';
import type { BBox, Discipline, ReadySheet, Sheet } from '../api/types';
import { DISCIPLINES, isReadySheet } from '../api/types';
import { disciplineLabel, Empty, ErrorNote, Spinner } from '../components/common';
import { ui } from '../state/ui-store';
import { SheetCanvas, type MarkSpec, type RegionSpec } from '../viewer/SheetCanvas';
import { useSheetSymbols } from '../api/vision';
import { CountPanel } from './CountPanel';
import { useTilePyramid } from '../viewer/use-tile-pyramid';
import type { Size, View } from '../viewer/view-transform';
import { blockTypeWords, viewTitle } from '../viewer/words';
import { centreOn, fitView, regionView, viewCentre } from '../viewer/view-transform';

export function SheetScreen({
  projectId,
  sheetId,
  at = null,
  label = null,
}: {
  projectId: string;
  sheetId: string;
  /** A place to open zoomed to and highlight (a search hit, a citation). */
  at?: BBox | null;
  label?: string | null;
}) {
  const sheet = useSheet(sheetId);
  if (sheet.isPending) return <Spinner label="Loading sheet…" />;
  if (sheet.isError) {
    return (
      <div className="page">
        <ErrorNote
          error={sheet.error}
          title="Could not open the sheet"
          onRetry={() => void sheet.refetch()}
        />
      </div>
    );
  }
  if (!isReadySheet(sheet.data)) {
    return (
      <div className="page">
        <Empty title="This sheet has no image">
          The service holds no image for it; process the drawing again.
        </Empty>
      </div>
    );
  }
  return <SheetView sheet={sheet.data} projectId={projectId} at={at} label={label} />;
}

function SheetView({
  sheet,
  projectId,
  at,
  label,
}: {
  sheet: ReadySheet;
  projectId: string;
  at: BBox | null;
  label: string | null;
}) {
  const blocks = useBlocks(sheet.id);
  // Counting a symbol: the box drawn around it, and the parse job whose instances are shown.
  const [drawing, setDrawing] = useState(false);
  const [template, setTemplate] = useState<BBox | null>(null);
  const [parseJob, setParseJob] = useState<string | null>(null);
  const symbols = useSheetSymbols(sheet.id, parseJob);
  const world = useMemo(
    () => ({ width: sheet.width, height: sheet.height }),
    [sheet.width, sheet.height],
  );
  const [view, setView] = useState<View | null>(null);
  const viewport = useRef<Size | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const sheetTiles = useTilePyramid(sheet.uri, sheet.width, sheet.height);
  const layers = useMemo(
    () => [{ key: 'sheet', src: sheet.uri, tiles: sheetTiles }],
    [sheet.uri, sheetTiles],
  );

  const onViewport = useCallback(
    (s: Size) => {
      const prev = viewport.current;
      viewport.current = s;
      setView((v) =>
        !v || !prev
          ? at
            ? // Enough of the sheet around the place to read it in context (~4 in at 200 dpi).
              regionView(s, at, 800, 2)
            : fitView(s, { x: 0, y: 0, ...world })
          : centreOn(s, viewCentre(v, prev), v.scale),
      );
    },
    [world, at],
  );

  // The Sheet block is the page this viewer already shows, not a view on it: left out of the list
  // and the boxes.
  const views = useMemo(() => (blocks.data ?? []).filter((b) => b.type !== 'Sheet'), [blocks.data]);
  const regions: RegionSpec[] = [
    ...views.map((b) => ({
      id: b.id,
      bbox: b.bbox,
      colour: '#1f5fbf',
      dim: b.id !== selected,
    })),
    ...(symbols.data ?? []).map((y) => ({ id: y.id, bbox: y.bbox, colour: '#c2410c' })),
  ];
  const marks: MarkSpec[] = [
    ...(at ? [{ id: 'at', bbox: at, label, testId: 'hit-highlight' }] : []),
    ...(template
      ? [{ id: 'template', bbox: template, label: 'Template', testId: 'template' }]
      : []),
  ];
  const focus = (id: string | null) => {
    setSelected(id);
    const b = views.find((x) => x.id === id);
    if (b && viewport.current) setView(regionView(viewport.current, b.bbox, 600, 1));
  };

  return (
    <div className="viewer" data-testid="sheet-viewer">
      <div className="viewer-toolbar">
        <div className="viewer-title">
          <span className="sheet-number">{sheet.sheet_number ?? `Page ${sheet.index + 1}`}</span>
          <span className="ellipsis">{sheet.title}</span>
          <span className="muted small">{sheet.drawing?.name}</span>
        </div>
        <div className="zoom-controls">
          <span className="mono small">{view ? `${Math.round(view.scale * 100)}%` : '—'}</span>
          <button
            type="button"
            className="btn btn-small"
            onClick={() =>
              viewport.current && setView(fitView(viewport.current, { x: 0, y: 0, ...world }))
            }
          >
            Fit
          </button>
        </div>
      </div>
      <div className="viewer-body">
        <div className="viewer-stage">
          <SheetCanvas
            world={world}
            layers={layers}
            regions={regions}
            marks={marks}
            onDrawBox={
              drawing
                ? (b) => {
                    setTemplate(b);
                    setDrawing(false);
                  }
                : null
            }
            selectedId={selected}
            view={view}
            onView={setView}
            onViewport={onViewport}
            onRegionClick={focus}
            testId="canvas-sheet"
          />
        </div>
        <aside className="change-panel" aria-label="Sheet details">
          <CountPanel
            sheet={sheet}
            projectId={projectId}
            template={template}
            drawing={drawing}
            onDraw={() => setDrawing((d) => !d)}
            onClear={() => {
              setTemplate(null);
              setParseJob(null);
            }}
            onJob={setParseJob}
          />
          {symbols.data && parseJob && (
            <p className="panel-section small" data-testid="symbols-on-sheet">
              {symbols.data.length} found on this sheet (outlined in orange)
            </p>
          )}
          <SheetMetaForm sheet={sheet} />
          <div className="panel-section grow">
            <h2 className="card-title">
              Views <span className="count">{blocks.data ? views.length : ''}</span>
            </h2>
            {blocks.isPending && <Spinner />}
            {blocks.isError && <ErrorNote error={blocks.error} />}
            <ol className="change-list">
              {views.map((b, i) => (
                <li key={b.id}>
                  <button
                    type="button"
                    className={`change-item view-item${b.id === selected ? ' selected' : ''}`}
                    onClick={() => focus(b.id)}
                    data-testid="sheet-view"
                  >
                    <span className="change-idx">{i + 1}</span>
                    <span className="change-text">
                      {/* The view's name in words (never a stray "F." or a type like TitleBlock). */}
                      <span className="change-kind">{viewTitle(b)}</span>
                      <span className="ellipsis small muted">
                        {[
                          viewTitle(b).startsWith(blockTypeWords(b.type))
                            ? ''
                            : blockTypeWords(b.type),
                          // A scale as printed ("1/4" = 1'-0"", "NTS"), not a stray "P.".
                          b.scale && /\d|NTS/i.test(b.scale) ? b.scale : '',
                        ]
                          .filter(Boolean)
                          .join(' · ')}
                      </span>
                    </span>
                  </button>
                </li>
              ))}
            </ol>
          </div>
          <div className="panel-section small muted">{sheetFacts(sheet)}</div>
        </aside>
      </div>
    </div>
  );
}

function SheetMetaForm({ sheet }: { sheet: Sheet }) {
  const patch = usePatchSheet();
  const [number, setNumber] = useState(sheet.sheet_number ?? '');
  const [title, setTitle] = useState(sheet.title ?? '');
  const [discipline, setDiscipline] = useState(sheet.discipline ?? '');
  useEffect(() => {
    setNumber(sheet.sheet_number ?? '');
    setTitle(sheet.title ?? '');
    setDiscipline(sheet.discipline ?? '');
  }, [sheet.sheet_number, sheet.title, sheet.discipline]);
  const dirty =
    number !== (sheet.sheet_number ?? '') ||
    title !== (sheet.title ?? '') ||
    discipline !== (sheet.discipline ?? '');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body: { sheet_number?: string; title?: string; discipline?: string } = {};
    if (number !== (sheet.sheet_number ?? '')) body.sheet_number = number.trim();
    if (title !== (sheet.title ?? '')) body.title = title.trim();
    if (discipline !== (sheet.discipline ?? '')) body.discipline = discipline;
    patch.mutate({ id: sheet.id, body }, { onSuccess: () => ui.toast('Sheet details saved') });
  };
  return (
    <form className="panel-section form" onSubmit={submit} aria-label="Sheet metadata">
      <h2 className="card-title">Sheet details</h2>
      <label className="field">
        <span>Sheet number</span>
        <input
          value={number}
          onChange={(e) => setNumber(e.target.value)}
          data-testid="meta-number"
        />
      </label>
      <label className="field">
        <span>Title</span>
        <input value={title} onChange={(e) => setTitle(e.target.value)} data-testid="meta-title" />
      </label>
      <label className="field">
        <span>Discipline</span>
        <select value={discipline} onChange={(e) => setDiscipline(e.target.value as Discipline)}>
          {!DISCIPLINES.includes(discipline as (typeof DISCIPLINES)[number]) && (
            <option value={discipline}>{disciplineLabel(discipline) || '—'}</option>
          )}
          {DISCIPLINES.map((d) => (
            <option key={d} value={d}>
              {disciplineLabel(d)}
            </option>
          ))}
        </select>
      </label>
      {patch.isError && <ErrorNote error={patch.error} title="Could not save" />}
      <div className="row gap-s">
        <button
          type="submit"
          className="btn btn-primary btn-small"
          disabled={!dirty || patch.isPending}
        >
          {patch.isPending ? 'Saving…' : 'Save'}
        </button>
        {dirty && (
          <button
            type="button"
            className="btn btn-small"
            onClick={() => {
              setNumber(sheet.sheet_number ?? '');
              setTitle(sheet.title ?? '');
              setDiscipline(sheet.discipline ?? '');
            }}
          >
            Revert
          </button>
        )}
      </div>
      <p className="muted small">
        Your corrections win over what was read from the title block and survive re-processing.
      </p>
    </form>
  );
}

/** The page in a reader's terms: its paper size and where its words come from. */
function sheetFacts(sheet: Pick<Sheet, 'width' | 'height' | 'dpi' | 'text_source'>): string {
  const inches = (px: number) => Math.round((px / (sheet.dpi || 1)) * 10) / 10;
  const text =
    sheet.text_source === 'vector'
      ? 'text read from the PDF'
      : sheet.text_source === 'ocr'
        ? 'text read by OCR'
        : 'no text found';
  return `${inches(sheet.width)} × ${inches(sheet.height)} in at ${sheet.dpi} DPI · ${text}`;
}
