// The overlay viewer: one sheet pair (its whole sheet or one view) of a comparison. The parts
// live in ./overlay: the camera (use-camera), viewer modes (modes), the keys (use-viewer-keys),
// change navigation and review across the set (use-change-nav, set-nav), the toolbar
// (ViewerToolbar) and the side panel (ChangePanel). UI preferences (mode, palette, opacity,
// regions) are in the zustand store; server data in React Query.

import { useCallback, useEffect, useMemo, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { withParam } from '../api/client';
import { qk, useOverlay } from '../api/hooks';
import type { Change, Overlay, ReadyOverlay } from '../api/types';
import { isReadyOverlay } from '../api/types';
import { navigate } from '../app/use-route';
import { Empty, ErrorNote, Spinner } from '../components/common';
import { useUi } from '../state/ui-store';
import { frameRegion } from '../viewer/change-nav';
import { KIND_COLOURS, OVERLAY_PALETTE_PARAM } from '../viewer/palette';
import { SheetCanvas, type RegionSpec, type ViewBoxSpec } from '../viewer/SheetCanvas';
import { useTilePyramid } from '../viewer/use-tile-pyramid';
import { viewTitle } from '../viewer/words';
import {
  ChangeDetail,
  ChangeList,
  KeysHelp,
  Legend,
  SheetFacts,
  ViewLinks,
  type ViewLink,
} from './overlay/ChangePanel';
import { layersFor, modeLabel, type ModeImages, type ModeState } from './overlay/modes';
import { pairKey } from './overlay/set-nav';
import { useCamera } from './overlay/use-camera';
import { useChangeNav } from './overlay/use-change-nav';
import { useViewerKeys } from './overlay/use-viewer-keys';
import { ViewerToolbar } from './overlay/ViewerToolbar';
import { isWholeSheet } from './pair-rows';

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
      key={overlay.data.id}
      overlay={overlay.data}
      projectId={projectId}
      jobId={jobId ?? overlay.data.job_id ?? null}
      initialChangeId={changeId}
    />
  );
}

/** The views of this sheet pair, titled, with their boxes on the whole sheet. */
function sheetViews(overlay: Overlay, siblings: Overlay[]): ViewLink[] {
  const key = pairKey(overlay);
  const same = siblings.filter((o) => pairKey(o) === key);
  const whole = isWholeSheet(overlay);
  const origin = overlay.block_a?.bbox ?? { x: 0, y: 0 };
  const byType = new Map<string, number>();
  const links: ViewLink[] = [];
  for (const o of same.filter((x) => !isWholeSheet(x))) {
    const t = o.block_a?.type ?? o.block_b?.type ?? 'View';
    const n = (byType.get(t) ?? 0) + 1;
    byType.set(t, n);
    const b = o.block_a?.bbox;
    links.push({
      id: o.id,
      label: viewTitle(o.block_b ?? o.block_a, n),
      bbox:
        whole && b
          ? { x: b.x - origin.x, y: b.y - origin.y, width: b.width, height: b.height }
          : null,
    });
  }
  if (!whole) {
    const w = same.find(isWholeSheet);
    if (w) links.unshift({ id: w.id, label: 'Whole sheet', bbox: null });
  }
  return links;
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

  const world = useMemo(
    () => ({ width: overlay.width, height: overlay.height }),
    [overlay.width, overlay.height],
  );
  const cam = useCamera(world);
  const { fit, showRegion } = cam;

  // Zoom to the part of a change inside this overlay's image; a change wholly beyond it (found
  // on the sheet around the block) shows the whole frame, and the list says where it is.
  const frameChange = useCallback(
    (c: Change | undefined) => {
      if (!c) return;
      const { inFrame } = frameRegion(c.bbox, world);
      if (inFrame) showRegion(inFrame);
      else fit();
    },
    [world, showRegion, fit],
  );
  const nav = useChangeNav(overlay, projectId, jobId, frameChange, initialChangeId);

  const [swipe, setSwipe] = useState(0.5);
  const [blinkOld, setBlinkOld] = useState(false);
  useEffect(() => {
    if (mode !== 'blink') return;
    const t = setInterval(() => setBlinkOld((b) => !b), blinkMs);
    return () => clearInterval(t);
  }, [mode, blinkMs]);

  useViewerKeys({
    step: nav.step,
    sheet: nav.sheet,
    review: nav.review,
    acceptRest: nav.acceptRest,
    undoBulk: nav.undoBulk,
    clear: nav.clear,
    fit: cam.fit,
    zoomBy: cam.zoomBy,
  });

  const overlayUri = withParam(overlay.uri, 'palette', OVERLAY_PALETTE_PARAM[palette]);
  const oldUri = overlay.block_a?.uri ?? null;
  const newUri = overlay.aligned_b_uri;
  // Block A's crop is A's frame, so its pixel size is the block's bbox size.
  const oldW = overlay.block_a?.bbox?.width ?? 0;
  const oldH = overlay.block_a?.bbox?.height ?? 0;
  // Every stored image has a 512-px tile pyramid on the service (contract §5, tiles.json): deeper
  // than the image for vector pages, whose deep tiles are rendered from the PDFs.
  const overlayTiles = useTilePyramid(overlayUri, overlay.width, overlay.height);
  const newTiles = useTilePyramid(newUri, overlay.width, overlay.height);
  const oldTiles = useTilePyramid(oldUri, oldW, oldH);
  const images: ModeImages = useMemo(
    () => ({
      overlay: { src: overlayUri, tiles: overlay.tiles ?? overlayTiles },
      new: { src: newUri, tiles: newTiles },
      old: { src: oldUri, tiles: oldUri ? oldTiles : null },
    }),
    [overlay.tiles, overlayUri, overlayTiles, newUri, newTiles, oldUri, oldTiles],
  );
  const vp = cam.viewport;
  const view = cam.view;
  const modeState: ModeState = {
    mode,
    opacity,
    blinkOld,
    swipeWorldX: view && vp ? (swipe * vp.width - view.x) / view.scale : null,
  };

  // Outlines stay on the image: a change reaching beyond the frame is drawn up to its edge.
  const regions: RegionSpec[] = showRegions
    ? nav.changes.flatMap((c) => {
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
  const views = useMemo(() => sheetViews(overlay, nav.siblings), [overlay, nav.siblings]);
  const viewBoxes: ViewBoxSpec[] = views.flatMap((l) =>
    l.bbox ? [{ id: l.id, bbox: l.bbox, label: l.label }] : [],
  );
  const title = isWholeSheet(overlay)
    ? 'Whole sheet'
    : viewTitle(overlay.block_b ?? overlay.block_a);

  const canvasProps = {
    world,
    regions,
    viewBoxes,
    selectedId: nav.current?.id ?? null,
    view,
    onView: cam.setViewNow,
    onViewport: cam.onViewport,
    onRegionClick: (id: string | null) => {
      const i = id ? nav.changes.findIndex((c) => c.id === id) : -1;
      if (i >= 0) nav.select(i);
    },
  };
  const a = overlay.block_a?.sheet;
  const b = overlay.block_b?.sheet;

  return (
    <div className="viewer" data-testid="overlay-viewer">
      <ViewerToolbar
        overlay={overlay}
        viewTitle={title}
        changeCount={nav.changes.length}
        view={view}
        fit={cam.fit}
        zoomBy={cam.zoomBy}
        stopAt={nav.stopAt}
        stopCount={nav.stops.length}
        sheet={nav.sheet}
      />
      <div className="viewer-body">
        <div className={`viewer-stage${mode === 'side-by-side' ? ' split' : ''}`}>
          {mode === 'side-by-side' ? (
            <>
              <SheetCanvas
                {...canvasProps}
                layers={layersFor('old', modeState, images)}
                label={`OLD · ${a?.sheet_number ?? ''}`}
                testId="canvas-old"
              />
              <SheetCanvas
                {...canvasProps}
                layers={layersFor('new', modeState, images)}
                label={`NEW · ${b?.sheet_number ?? ''}`}
                testId="canvas-new"
              />
            </>
          ) : (
            <SheetCanvas
              {...canvasProps}
              layers={layersFor('main', modeState, images)}
              label={modeLabel(modeState)}
              swipeFraction={mode === 'swipe' ? swipe : null}
              onSwipe={setSwipe}
              testId="canvas-main"
            />
          )}
          <Legend palette={palette} show={mode === 'overlay'} />
        </div>

        <aside className="change-panel" aria-label="Changes">
          <SheetFacts overlay={overlay} viewTitle={title} palette={palette} />
          <ViewLinks
            links={views}
            onJump={(l) => {
              if (l.bbox) showRegion(l.bbox, 0);
              else navigate({ name: 'overlay', projectId, overlayId: l.id, jobId });
            }}
          />
          <ChangeList
            overlay={overlay}
            frame={world}
            nav={nav}
            palette={palette}
            onAnalyzed={() => {
              void qc.invalidateQueries({ queryKey: qk.overlay(overlay.id) });
              void qc.invalidateQueries({ queryKey: qk.changes(overlay.id) });
            }}
          />
          {nav.current && (
            <ChangeDetail
              change={nav.current}
              index={nav.selected}
              count={nav.changes.length}
              palette={palette}
              review={nav.review}
            />
          )}
          <KeysHelp />
        </aside>
      </div>
    </div>
  );
}
