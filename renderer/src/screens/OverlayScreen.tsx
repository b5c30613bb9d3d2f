import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { errorDetail, withParam } from '../api/client';
import {
  qk,
  useAnalyzeOverlay,
  useChanges,
  useLiveJob,
  useOverlay,
  useOverlays,
  usePatchChange,
} from '../api/hooks';
import type { BBox, Change, Overlay, ReadyOverlay, ReviewStatus } from '../api/types';
import { isReadyOverlay, isTerminal } from '../api/types';
import { navigate } from '../app/use-route';
import {
  Empty,
  ErrorNote,
  Kbd,
  ProgressBar,
  ScoreBadge,
  Spinner,
  StatusBadge,
} from '../components/common';
import { ui, useUi, VIEWER_MODES, type ViewerMode } from '../state/ui-store';
import { frameRegion, readingOrder, stepIndex } from '../viewer/change-nav';
import { servicePyramid } from '../viewer/tiles';
import { KIND_COLOURS, OVERLAY_PALETTE_PARAM, REVIEW_LABELS } from '../viewer/palette';
import { SheetCanvas, type ImageLayerSpec, type RegionSpec } from '../viewer/SheetCanvas';
import type { Size, View } from '../viewer/view-transform';
import { isWholeSheet, viewingOrder } from './pair-rows';
import {
  centreOn,
  easeInOutCubic,
  fitView,
  lerpView,
  MAX_SCALE,
  regionView,
  viewCentre,
  zoomAt,
} from '../viewer/view-transform';

export function OverlayScreen({
  projectId,
  overlayId,
  jobId,
  changeId = null,
}: {
  projectId: string;
  overlayId: string;
  jobId: string | null;
  /** A change to select once the changes have loaded (a link from an export). */
  changeId?: string | null;
}) {
  const overlay = useOverlay(overlayId);
  if (overlay.isPending) return <Spinner label="Loading overlay…" />;
  if (overlay.isError) {
    return (
      <div className="page">
        <ErrorNote
          error={overlay.error}
          title="Could not open the overlay"
          onRetry={() => void overlay.refetch()}
        />
      </div>
    );
  }
  if (!isReadyOverlay(overlay.data)) {
    return (
      <div className="page">
        <Empty title="This overlay has no images">
          The service holds no overlay images for it; run the comparison again.
        </Empty>
      </div>
    );
  }
  return (
    <OverlayViewer
      overlay={overlay.data}
      projectId={projectId}
      jobId={jobId ?? overlay.data.job_id ?? null}
      initialChangeId={changeId}
    />
  );
}

function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return (
    !!t &&
    (t.tagName === 'INPUT' ||
      t.tagName === 'TEXTAREA' ||
      t.tagName === 'SELECT' ||
      t.isContentEditable)
  );
}

function OverlayViewer({
  overlay,
  projectId,
  jobId,
  initialChangeId,
}: {
  overlay: ReadyOverlay;
  projectId: string;
  jobId: string | null;
  initialChangeId: string | null;
}) {
  const qc = useQueryClient();
  const mode = useUi((s) => s.viewerMode);
  const palette = useUi((s) => s.palette);
  const opacity = useUi((s) => s.overlayOpacity);
  const showRegions = useUi((s) => s.showRegions);
  const blinkMs = useUi((s) => s.blinkMs);

  const changesQ = useChanges(overlay.id, overlay.has_changes);
  const patch = usePatchChange(overlay.id);
  const changes = useMemo(() => readingOrder(changesQ.data ?? []), [changesQ.data]);
  const [selected, setSelected] = useState(-1);
  const current: Change | undefined = selected >= 0 ? changes[selected] : undefined;

  const world = useMemo(
    () => ({ width: overlay.width, height: overlay.height }),
    [overlay.width, overlay.height],
  );
  const [view, setView] = useState<View | null>(null);
  const viewport = useRef<Size | null>(null);
  const viewRef = useRef<View | null>(null);
  viewRef.current = view;
  const [swipe, setSwipe] = useState(0.5);
  const [blinkOld, setBlinkOld] = useState(false);
  const anim = useRef(0);

  const stopAnim = () => {
    cancelAnimationFrame(anim.current);
    anim.current = 0;
  };
  const setViewNow = useCallback((v: View) => {
    stopAnim();
    setView(v);
  }, []);

  const animateTo = useCallback((target: View) => {
    const vp = viewport.current;
    const from = viewRef.current;
    stopAnim();
    if (!vp || !from || window.matchMedia?.('(prefers-reduced-motion: reduce)').matches) {
      setView(target);
      return;
    }
    const t0 = performance.now();
    const dur = 320;
    const tick = (now: number) => {
      const t = Math.min(1, (now - t0) / dur);
      setView(lerpView(from, target, easeInOutCubic(t), vp));
      anim.current = t < 1 ? requestAnimationFrame(tick) : 0;
    };
    anim.current = requestAnimationFrame(tick);
  }, []);
  useEffect(() => () => stopAnim(), []);

  const fit = useCallback(() => {
    if (viewport.current) animateTo(fitView(viewport.current, { x: 0, y: 0, ...world }));
  }, [animateTo, world]);

  const onViewport = useCallback(
    (s: Size) => {
      const prev = viewport.current;
      viewport.current = s;
      setView((v) => {
        if (!v || !prev) return fitView(s, { x: 0, y: 0, ...world });
        // Keep the same world point in the middle when the canvas is resized (e.g. side-by-side).
        return centreOn(s, viewCentre(v, prev), v.scale);
      });
    },
    [world],
  );

  const select = useCallback(
    (i: number) => {
      setSelected(i);
      const c = changes[i];
      if (!c || !viewport.current) return;
      // Zoom to the part of the change inside this overlay's image; a change wholly beyond it
      // (found on the sheet around the block) shows the whole frame, and the list says where it is.
      const { inFrame } = frameRegion(c.bbox, world);
      if (inFrame) animateTo(regionView(viewport.current, inFrame, 600, 1));
      else animateTo(fitView(viewport.current, { x: 0, y: 0, ...world }));
    },
    [changes, animateTo, world],
  );

  // A link naming a change (the CSV export's) selects it once, when the changes and the canvas are
  // there; later navigation is the reviewer's.
  const opened = useRef(false);
  useEffect(() => {
    if (opened.current || !initialChangeId || !view) return;
    const i = changes.findIndex((c) => c.id === initialChangeId);
    if (i < 0) return;
    opened.current = true;
    select(i);
  }, [initialChangeId, changes, view, select]);

  const review = useCallback(
    (status: ReviewStatus) => {
      if (!current) return;
      patch.mutate(
        { id: current.id, body: { review_status: status } },
        { onError: (err) => ui.toast(`Could not save the review: ${errorDetail(err)}`, 'error') },
      );
    },
    [current, patch],
  );

  // Blink alternates old and new.
  useEffect(() => {
    if (mode !== 'blink') return;
    const t = setInterval(() => setBlinkOld((b) => !b), blinkMs);
    return () => clearInterval(t);
  }, [mode, blinkMs]);

  // Sibling overlays of the same comparison, for [ and ].
  const siblings = useOverlays(jobId ?? '', !!jobId);
  // Sheet pair by sheet pair, most changed first, each pair's whole sheet before its views.
  const ordered = useMemo(() => viewingOrder(siblings.data ?? []), [siblings.data]);
  const myIndex = ordered.findIndex((o) => o.id === overlay.id);
  const goSibling = useCallback(
    (dir: 1 | -1) => {
      const next = ordered[myIndex + dir];
      if (next) navigate({ name: 'overlay', projectId, overlayId: next.id, jobId });
    },
    [ordered, myIndex, projectId, jobId],
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || e.metaKey || e.ctrlKey || e.altKey) return;
      const vp = viewport.current;
      const v = viewRef.current;
      const k = e.key;
      const modeKey = VIEWER_MODES.find((m) => m.key === k);
      if (modeKey) ui.setViewerMode(modeKey.mode);
      else if (k === 'j' || k === 'ArrowDown' || k === 'n')
        select(stepIndex(selected, changes.length, 1));
      else if (k === 'k' || k === 'ArrowUp' || k === 'p')
        select(stepIndex(selected, changes.length, -1));
      else if (k === 'a') review('accepted');
      else if (k === 'x') review('rejected');
      else if (k === 'f') review('flagged');
      else if (k === 'o') review('open');
      else if (k === '0') fit();
      else if ((k === '+' || k === '=') && vp && v)
        animateTo(zoomAt(v, 1.5, { x: vp.width / 2, y: vp.height / 2 }));
      else if (k === '-' && vp && v)
        animateTo(zoomAt(v, 1 / 1.5, { x: vp.width / 2, y: vp.height / 2 }));
      else if (k === 'r') ui.toggleRegions();
      else if (k === 'c') ui.togglePalette();
      else if (k === '[') goSibling(-1);
      else if (k === ']') goSibling(1);
      else if (k === 'Escape') setSelected(-1);
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [select, selected, changes.length, review, fit, animateTo, goSibling]);

  const overlayUri = withParam(overlay.uri, 'palette', OVERLAY_PALETTE_PARAM[palette]);
  const oldUri = overlay.block_a?.uri ?? null;
  const newUri = overlay.aligned_b_uri;
  // Every stored image has a 512-px tile pyramid on the service (OpenAPI, GET /v1/blobs/*).
  const overlayTiles = useMemo(
    () => overlay.tiles ?? servicePyramid(overlayUri, overlay.width, overlay.height),
    [overlay.tiles, overlayUri, overlay.width, overlay.height],
  );
  const newTiles = useMemo(
    () => servicePyramid(newUri, overlay.width, overlay.height),
    [newUri, overlay.width, overlay.height],
  );
  // Block A's crop is A's frame, so its pixel size is the block's bbox size.
  const oldW = overlay.block_a?.bbox?.width ?? 0;
  const oldH = overlay.block_a?.bbox?.height ?? 0;
  const oldTiles = useMemo(
    () => (oldUri ? servicePyramid(oldUri, oldW, oldH) : null),
    [oldUri, oldW, oldH],
  );
  const vp = viewport.current;
  const swipeWorldX = view && vp ? (swipe * vp.width - view.x) / view.scale : null;

  const layersFor = (side: 'main' | 'old' | 'new'): ImageLayerSpec[] => {
    const show = (m: ViewerMode, which: 'overlay' | 'old' | 'new'): boolean => {
      if (side === 'old') return which === 'old';
      if (side === 'new') return which === 'new';
      switch (m) {
        case 'overlay':
          return which === 'overlay' || (which === 'new' && opacity < 1);
        case 'old':
          return which === 'old';
        case 'new':
          return which === 'new';
        case 'swipe':
          return which === 'old' || which === 'new';
        case 'blink':
          return which === (blinkOld ? 'old' : 'new');
        default:
          return false;
      }
    };
    return [
      { key: 'new', src: newUri, tiles: newTiles, visible: show(mode, 'new') },
      {
        key: 'old',
        src: oldUri,
        tiles: oldTiles,
        visible: show(mode, 'old'),
        clipRightOf:
          mode === 'swipe' && side === 'main' && swipeWorldX !== null ? swipeWorldX : undefined,
      },
      {
        key: 'overlay',
        src: overlayUri,
        tiles: overlayTiles,
        visible: show(mode, 'overlay'),
        opacity: mode === 'overlay' ? opacity : 1,
      },
    ];
  };

  // Outlines stay on the image: a change reaching beyond the frame is drawn up to its edge.
  const regions: RegionSpec[] = showRegions
    ? changes.flatMap((c) => {
        const { inFrame } = frameRegion(c.bbox, world);
        return inFrame
          ? [
              {
                id: c.id,
                bbox: inFrame,
                colour: KIND_COLOURS[palette][c.kind] ?? '#555',
                dim: c.review_status !== 'open',
              },
            ]
          : [];
      })
    : [];
  const onRegionClick = (id: string | null) => {
    if (!id) return;
    const i = changes.findIndex((c) => c.id === id);
    if (i >= 0) select(i);
  };

  const canvasProps = {
    world,
    regions,
    selectedId: current?.id ?? null,
    view,
    onView: setViewNow,
    onViewport,
    onRegionClick,
  };

  const a = overlay.block_a?.sheet;
  const b = overlay.block_b?.sheet;
  const reviewed = changes.filter((c) => c.review_status !== 'open').length;
  const modeLabel =
    mode === 'blink'
      ? blinkOld
        ? 'OLD'
        : 'NEW'
      : mode === 'old'
        ? 'OLD'
        : mode === 'new'
          ? 'NEW'
          : undefined;

  return (
    <div className="viewer" data-testid="overlay-viewer">
      <div className="viewer-toolbar" role="toolbar" aria-label="Viewer">
        <div className="viewer-title">
          <span className="sheet-number" data-testid="viewer-sheet-number">
            {b?.sheet_number ?? a?.sheet_number ?? '—'}
          </span>
          <span className="ellipsis">{b?.title ?? a?.title ?? ''}</span>
          <ScoreBadge score={overlay.score} />
        </div>
        <div className="segmented" role="radiogroup" aria-label="View mode">
          {VIEWER_MODES.map((m) => (
            <button
              key={m.mode}
              type="button"
              role="radio"
              aria-checked={mode === m.mode}
              className={mode === m.mode ? 'active' : ''}
              onClick={() => ui.setViewerMode(m.mode)}
              title={`${m.label} (${m.key})`}
            >
              {m.label}
            </button>
          ))}
        </div>
        <label className="slider" title="Overlay opacity over the new drawing">
          <span>Opacity</span>
          <input
            type="range"
            min={0}
            max={1}
            step={0.05}
            value={opacity}
            onChange={(e) => ui.setOpacity(Number(e.target.value))}
            disabled={mode !== 'overlay'}
            aria-label="Overlay opacity"
          />
          <span className="mono small">{Math.round(opacity * 100)}%</span>
        </label>
        <label className="check">
          <input type="checkbox" checked={showRegions} onChange={ui.toggleRegions} /> Regions
        </label>
        <div className="zoom-controls">
          <button
            type="button"
            className="btn btn-small"
            onClick={() =>
              vp && view && animateTo(zoomAt(view, 1 / 1.5, { x: vp.width / 2, y: vp.height / 2 }))
            }
            aria-label="Zoom out"
          >
            −
          </button>
          <span className="mono small zoom-pct" data-testid="zoom-pct">
            {view ? `${Math.round(view.scale * 100)}%` : '—'}
          </span>
          <button
            type="button"
            className="btn btn-small"
            onClick={() =>
              vp && view && animateTo(zoomAt(view, 1.5, { x: vp.width / 2, y: vp.height / 2 }))
            }
            aria-label="Zoom in"
            disabled={!!view && view.scale >= MAX_SCALE}
          >
            +
          </button>
          <button type="button" className="btn btn-small" onClick={fit} title="Fit sheet (0)">
            Fit
          </button>
        </div>
        {jobId && ordered.length > 1 && (
          <div className="row gap-s">
            <button
              type="button"
              className="btn btn-small"
              disabled={myIndex <= 0}
              onClick={() => goSibling(-1)}
              title="Previous sheet ([)"
            >
              ‹ Sheet
            </button>
            <span className="muted small">
              {myIndex + 1}/{ordered.length}
            </span>
            <button
              type="button"
              className="btn btn-small"
              disabled={myIndex < 0 || myIndex >= ordered.length - 1}
              onClick={() => goSibling(1)}
              title="Next sheet (])"
            >
              Sheet ›
            </button>
          </div>
        )}
      </div>

      <div className="viewer-body">
        <div className={`viewer-stage${mode === 'side-by-side' ? ' split' : ''}`}>
          {mode === 'side-by-side' ? (
            <>
              <SheetCanvas
                {...canvasProps}
                layers={layersFor('old')}
                label={`OLD · ${a?.sheet_number ?? ''}`}
                testId="canvas-old"
              />
              <SheetCanvas
                {...canvasProps}
                layers={layersFor('new')}
                label={`NEW · ${b?.sheet_number ?? ''}`}
                testId="canvas-new"
              />
            </>
          ) : (
            <SheetCanvas
              {...canvasProps}
              layers={layersFor('main')}
              label={modeLabel}
              swipeFraction={mode === 'swipe' ? swipe : null}
              onSwipe={setSwipe}
              testId="canvas-main"
            />
          )}
          <Legend palette={palette} mode={mode} />
        </div>

        <aside className="change-panel" aria-label="Changes">
          <div className="panel-section">
            <dl className="facts">
              <dt>Old</dt>
              <dd>
                {a?.sheet_number ?? '—'} <span className="muted small">{a?.title}</span>
              </dd>
              <dt>New</dt>
              <dd>
                {b?.sheet_number ?? '—'} <span className="muted small">{b?.title}</span>
              </dd>
              <dt>View</dt>
              <dd data-testid="overlay-view-name">{viewName(overlay)}</dd>
              {overlay.alignment && (
                <>
                  <dt>Aligned</dt>
                  <dd className="small">
                    {overlay.alignment.method} · {Math.round(overlay.alignment.confidence * 100)}% ·{' '}
                    {overlay.alignment.residual_px.toFixed(1)} px
                  </dd>
                </>
              )}
              {overlay.alignment?.low_confidence && (
                <dd className="state-error-inline small" data-testid="alignment-warning">
                  {overlay.alignment.warning ??
                    'Poor alignment: this overlay may not show real changes. Check it by eye.'}
                </dd>
              )}
              {overlay.stats && (
                <>
                  <dt>Ink</dt>
                  <dd className="small">
                    <span className="ink-add" style={{ color: KIND_COLOURS[palette].added }}>
                      +{overlay.stats.added_px.toLocaleString()}
                    </span>{' '}
                    <span className="ink-rem" style={{ color: KIND_COLOURS[palette].removed }}>
                      −{overlay.stats.removed_px.toLocaleString()}
                    </span>{' '}
                    px
                  </dd>
                </>
              )}
            </dl>
          </div>
          <ChangeList
            overlay={overlay}
            frame={world}
            changesQ={changesQ}
            changes={changes}
            selected={selected}
            reviewed={reviewed}
            palette={palette}
            onSelect={select}
            onAnalyzed={() => {
              void qc.invalidateQueries({ queryKey: qk.overlay(overlay.id) });
              void qc.invalidateQueries({ queryKey: qk.changes(overlay.id) });
            }}
          />
          {current && (
            <div className="panel-section change-detail" data-testid="change-detail">
              <div className="row between">
                <strong>
                  Change {selected + 1} of {changes.length}
                </strong>
                <span
                  className={`review review-${current.review_status}`}
                  data-testid="change-status"
                >
                  {REVIEW_LABELS[current.review_status]}
                </span>
              </div>
              <p className="small">
                <span
                  className="kind-chip"
                  style={{ borderColor: KIND_COLOURS[palette][current.kind] }}
                >
                  {current.kind}
                </span>{' '}
                {current.category.replace('_', ' ')} · {Math.round(current.confidence * 100)}%
                confidence
              </p>
              {current.description && <p>{current.description}</p>}
              {/* The same words on both sides (ink changed around unchanged text) are the
                  context of the change, not an edit: shown once, not struck out. */}
              {current.text_before && current.text_before === current.text_after
                ? !current.description && (
                    <p className="mono small" data-testid="change-text-context">
                      near {current.text_before}
                    </p>
                  )
                : (current.text_before || current.text_after) && (
                    <p className="mono small">
                      {current.text_before && (
                        <del style={{ color: KIND_COLOURS[palette].removed }}>
                          {current.text_before}
                        </del>
                      )}{' '}
                      {current.text_after && (
                        <ins style={{ color: KIND_COLOURS[palette].added }}>
                          {current.text_after}
                        </ins>
                      )}
                    </p>
                  )}
              <div className="review-buttons" role="group" aria-label="Review">
                <button
                  type="button"
                  className={`btn btn-small btn-accept${current.review_status === 'accepted' ? ' active' : ''}`}
                  onClick={() => review('accepted')}
                >
                  Accept <Kbd>a</Kbd>
                </button>
                <button
                  type="button"
                  className={`btn btn-small btn-reject${current.review_status === 'rejected' ? ' active' : ''}`}
                  onClick={() => review('rejected')}
                >
                  Reject <Kbd>x</Kbd>
                </button>
                <button
                  type="button"
                  className={`btn btn-small btn-flag${current.review_status === 'flagged' ? ' active' : ''}`}
                  onClick={() => review('flagged')}
                >
                  Flag <Kbd>f</Kbd>
                </button>
                {current.review_status !== 'open' && (
                  <button type="button" className="btn btn-small" onClick={() => review('open')}>
                    Reopen <Kbd>o</Kbd>
                  </button>
                )}
              </div>
            </div>
          )}
          <div className="panel-section keys small muted">
            <Kbd>j</Kbd>/<Kbd>k</Kbd> next/previous change · <Kbd>1</Kbd>–<Kbd>6</Kbd> modes ·{' '}
            <Kbd>0</Kbd> fit · <Kbd>+</Kbd>/<Kbd>−</Kbd> zoom · <Kbd>r</Kbd> regions · <Kbd>c</Kbd>{' '}
            colours · <Kbd>[</Kbd>/<Kbd>]</Kbd> sheets · wheel zooms at the cursor, drag pans
          </div>
        </aside>
      </div>
    </div>
  );
}

/** What an overlay compares, in words: "Whole sheet" for the Sheet blocks, else the view's name. */
function viewName(o: Overlay): string {
  if (isWholeSheet(o)) return 'Whole sheet';
  const b = o.block_b ?? o.block_a;
  const name = [b?.identifier, b?.title].filter(Boolean).join(' ');
  return name || b?.type || '—';
}

/** Where a change wholly outside the frame lies, in words: "right", "above left", … */
function describeOffset(b: BBox, frame: { width: number; height: number }): string {
  const cx = b.x + b.width / 2;
  const cy = b.y + b.height / 2;
  const v = cy < 0 ? 'above' : cy > frame.height ? 'below' : '';
  const h = cx < 0 ? 'left' : cx > frame.width ? 'right' : '';
  return [v, h].filter(Boolean).join(' ') || 'at the edge';
}

function ChangeList(props: {
  overlay: Overlay;
  /** The overlay image's size (the frame change boxes are placed in). */
  frame: { width: number; height: number };
  changesQ: ReturnType<typeof useChanges>;
  changes: Change[];
  selected: number;
  reviewed: number;
  palette: 'standard' | 'colorblind';
  onSelect: (i: number) => void;
  onAnalyzed: () => void;
}) {
  const { overlay, frame, changesQ, changes, selected, reviewed, palette, onSelect } = props;
  const listRef = useRef<HTMLOListElement>(null);
  useEffect(() => {
    listRef.current
      ?.querySelector<HTMLElement>(`[data-index="${selected}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  if (!overlay.has_changes) return <AnalyzePrompt overlay={overlay} onDone={props.onAnalyzed} />;
  return (
    <div className="panel-section grow">
      <div className="row between">
        <h2 className="card-title">
          Changes{' '}
          <span className="count" data-testid="change-count">
            {changes.length}
          </span>
        </h2>
        {changes.length > 0 && (
          <span className="muted small" data-testid="reviewed-count">
            {reviewed} of {changes.length} reviewed
          </span>
        )}
      </div>
      {changesQ.isPending && <Spinner label="Loading changes…" />}
      {changesQ.isError && (
        <ErrorNote
          error={changesQ.error}
          title="Could not load changes"
          onRetry={() => void changesQ.refetch()}
        />
      )}
      {changesQ.isSuccess &&
        changes.length === 0 &&
        (overlay.alignment?.low_confidence ? (
          // Nothing was sought on an untrusted alignment: that is not "no changes".
          <Empty title="Changes not detected">
            The alignment is not trusted, so no changes were sought. Compare the images by eye.
          </Empty>
        ) : (
          <Empty title="No changes found">
            After alignment, nothing on this {isWholeSheet(overlay) ? 'sheet' : 'view'} differs
            beyond noise.
          </Empty>
        ))}
      <ol className="change-list" ref={listRef} data-testid="change-list">
        {changes.map((c, i) => {
          const fit = frameRegion(c.bbox, frame).fit;
          return (
            <li key={c.id} data-index={i}>
              <button
                type="button"
                className={`change-item${i === selected ? ' selected' : ''}`}
                onClick={() => onSelect(i)}
                aria-current={i === selected}
              >
                <span className="change-idx">{i + 1}</span>
                <span
                  className="kind-dot"
                  style={{ background: KIND_COLOURS[palette][c.kind] }}
                  aria-hidden
                />
                <span className="change-text">
                  <span className="change-kind">
                    {c.kind} · {c.category.replace('_', ' ')}
                  </span>
                  <span className="ellipsis small muted">
                    {c.description ??
                      c.text_after ??
                      c.text_before ??
                      `${Math.round(c.bbox.width)}×${Math.round(c.bbox.height)} px`}
                  </span>
                  {fit !== 'inside' && (
                    <span
                      className="small muted"
                      data-testid="change-outside"
                      title="Changes are found on the whole sheet; this one reaches beyond this view's image, which shows only the block."
                    >
                      {fit === 'partial'
                        ? 'continues beyond this view'
                        : `beside this view (${describeOffset(c.bbox, frame)})`}
                    </span>
                  )}
                </span>
                <span className={`review review-${c.review_status}`}>
                  {REVIEW_LABELS[c.review_status]}
                </span>
              </button>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

function AnalyzePrompt({ overlay, onDone }: { overlay: Overlay; onDone: () => void }) {
  const analyze = useAnalyzeOverlay();
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useLiveJob(jobId);
  const status = job.data?.status;
  useEffect(() => {
    if (status && isTerminal(status)) onDone();
  }, [status, onDone]);
  return (
    <div className="panel-section">
      <h2 className="card-title">Changes</h2>
      <p className="muted small">Change detection has not run on this overlay yet.</p>
      {!jobId && (
        <button
          type="button"
          className="btn btn-primary btn-small"
          disabled={analyze.isPending}
          onClick={() => analyze.mutate(overlay.id, { onSuccess: (r) => setJobId(r.job_id) })}
        >
          Detect changes
        </button>
      )}
      {job.data && (
        <div className="stack-s">
          <StatusBadge status={job.data.status} />
          {!isTerminal(job.data.status) && (
            <ProgressBar
              value={job.data.progress?.completed ?? 0}
              total={job.data.progress?.total ?? 0}
              label="Change detection"
            />
          )}
          {job.data.error && (
            <div className="state-error-inline small">{job.data.error.detail}</div>
          )}
        </div>
      )}
      {analyze.isError && (
        <ErrorNote error={analyze.error} title="Could not start change detection" />
      )}
    </div>
  );
}

function Legend({ palette, mode }: { palette: 'standard' | 'colorblind'; mode: ViewerMode }) {
  if (mode !== 'overlay') return null;
  const c = KIND_COLOURS[palette];
  return (
    <div className="legend" aria-label="Legend">
      <span>
        <i style={{ background: c.removed }} /> Removed
      </span>
      <span>
        <i style={{ background: c.added }} /> Added
      </span>
      <span>
        <i style={{ background: '#555' }} /> Unchanged
      </span>
    </div>
  );
}
