// One Konva stage showing image layers in a shared world frame (overlay or sheet pixels) under
// a controlled View. Pointer input goes through the pure tool machine; wheel zoom is anchored
// at the cursor. Side-by-side mode renders two of these with the same View, which is what
// keeps them in sync.

import { useCallback, useEffect, useMemo, useRef, useState, type CSSProperties } from 'react';
import { Group, Image as KImage, Layer, Rect, Stage, Text } from 'react-konva';
import type { BBox, TilePyramid } from '../api/types';
import { backdropToDraw, layerLoad, wantedTiles, type LayerLoad, type TileRef } from './tiles';
import { tileStore, type TileOwner } from './tile-store';
import { sourceForScale, useImageLevels } from './use-image-levels';
import type { Point, Size, View } from './view-transform';
import { constrainView, hitTest, screenToWorld, wheelZoomFactor, zoomAt } from './view-transform';
import { initialToolState, step, type ToolEvent, type ToolState } from './viewer-tool.machine';

export interface ImageLayerSpec {
  key: string;
  src: string | null;
  tiles?: TilePyramid | null;
  opacity?: number;
  /** Hidden layers stay mounted (no reload when switching modes) but are not drawn. */
  visible?: boolean;
  /** Show only world x < clipRightOf (swipe: the old image left of the divider). */
  clipRightOf?: number;
}

export interface RegionSpec {
  id: string;
  bbox: BBox;
  colour: string;
  dim?: boolean;
}

/** A view (drawing block) on the whole sheet: a labelled box the reviewer can jump to. */
export interface ViewBoxSpec {
  id: string;
  bbox: BBox;
  label: string;
}

/** A highlighted place drawn above the canvas (a search hit, a citation), with its label. */
export interface MarkSpec {
  id: string;
  bbox: BBox;
  label?: string | null;
  testId?: string;
}

interface Props {
  /** Highlighted places (DOM boxes over the canvas, so they are seen and found by tests). */
  marks?: MarkSpec[];
  /** When set, a drag draws a box (world pixels) instead of panning; released, it is reported. */
  onDrawBox?: ((bbox: BBox) => void) | null;
  world: Size;
  layers: ImageLayerSpec[];
  regions?: RegionSpec[];
  viewBoxes?: ViewBoxSpec[];
  selectedId?: string | null;
  view: View | null;
  onView: (v: View) => void;
  onViewport?: (s: Size) => void;
  onRegionClick?: (id: string | null) => void;
  swipeFraction?: number | null;
  onSwipe?: (f: number) => void;
  label?: string;
  testId?: string;
  style?: CSSProperties;
}

export function SheetCanvas(props: Props) {
  const {
    world,
    layers,
    regions = [],
    viewBoxes = [],
    selectedId,
    view,
    onView,
    onViewport,
    onRegionClick,
    swipeFraction,
    onSwipe,
    label,
  } = props;
  const hostRef = useRef<HTMLDivElement>(null);
  const [size, setSize] = useState<Size>({ width: 0, height: 0 });
  const tool = useRef<ToolState>(initialToolState);
  const viewRef = useRef<View | null>(view);
  viewRef.current = view;
  const [cursor, setCursor] = useState<string>('default');
  const [drag, setDrag] = useState<{ a: Point; b: Point } | null>(null);
  const drawBox = props.onDrawBox ?? null;
  const dpr = typeof window !== 'undefined' ? window.devicePixelRatio || 1 : 1;

  // Track the host's size; report it so the parent can fit views.
  useEffect(() => {
    const el = hostRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => {
      const s = { width: el.clientWidth, height: el.clientHeight };
      setSize(s);
      onViewport?.(s);
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [onViewport]);

  // Wheel: zoom at cursor (ctrl/pinch too); shift+wheel or horizontal deltas pan. A native
  // listener because React's wheel listener is passive and cannot preventDefault.
  const onViewRef = useRef(onView);
  onViewRef.current = onView;
  const pending = useRef<View | null>(null);
  const raf = useRef(0);
  const commit = (v: View) => {
    pending.current = v;
    viewRef.current = v;
    if (!raf.current) {
      raf.current = requestAnimationFrame(() => {
        raf.current = 0;
        if (pending.current) onViewRef.current(pending.current);
      });
    }
  };
  const sizeRef = useRef(size);
  sizeRef.current = size;
  const worldRef = useRef(world);
  worldRef.current = world;
  useEffect(() => {
    const el = hostRef.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      const v = viewRef.current;
      if (!v) return;
      e.preventDefault();
      const r = el.getBoundingClientRect();
      const anchor = { x: e.clientX - r.left, y: e.clientY - r.top };
      let next: View;
      if (e.shiftKey || (Math.abs(e.deltaX) > Math.abs(e.deltaY) && !e.ctrlKey)) {
        next = {
          ...v,
          x: v.x - (e.shiftKey ? e.deltaY : e.deltaX),
          y: e.shiftKey ? v.y : v.y - e.deltaY,
        };
      } else {
        next = zoomAt(v, wheelZoomFactor(e.deltaY, e.deltaMode, e.ctrlKey), anchor);
      }
      commit(constrainView(next, sizeRef.current, worldRef.current));
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, []); // commit reads refs only, so the listener is installed once
  useEffect(() => () => cancelAnimationFrame(raf.current), []);

  const feed = (ev: ToolEvent) => {
    const v = viewRef.current;
    if (!v) return;
    const r = step(tool.current, ev, { view: v, viewportWidth: sizeRef.current.width });
    tool.current = r.state;
    for (const eff of r.effects) {
      if (eff.type === 'view') commit(constrainView(eff.view, sizeRef.current, worldRef.current));
      else if (eff.type === 'swipe') onSwipe?.(eff.fraction);
      else if (eff.type === 'cursor') setCursor(eff.cursor);
      else if (eff.type === 'click' && onRegionClick) {
        const hit = hitTest(regions, eff.world, 6 / v.scale);
        onRegionClick(hit ? hit.id : null);
      }
    }
  };
  const local = (e: React.PointerEvent): Point => {
    const r = (hostRef.current as HTMLDivElement).getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  };

  const [loads, setLoads] = useState<Record<string, LayerLoad>>({});
  const onLayerState = useCallback((key: string, state: LayerLoad) => {
    setLoads((m) => (m[key] === state ? m : { ...m, [key]: state }));
  }, []);
  const shown = layers.filter((l) => l.visible ?? true);
  const loading = shown.some((l) => (loads[l.key] ?? 'loading') === 'loading');
  const refining = shown.some((l) => loads[l.key] === 'refining');
  const failed = shown.some((l) => loads[l.key] === 'failed');

  const v = view;
  const swipeWorldX =
    v && swipeFraction != null && size.width > 0
      ? (swipeFraction * size.width - v.x) / v.scale
      : null;

  return (
    <div
      ref={hostRef}
      className="sheet-canvas"
      data-testid={props.testId}
      data-loaded={!loading && !refining}
      data-refining={refining}
      aria-busy={loading || refining}
      style={{
        cursor: drawBox ? 'crosshair' : cursor === 'default' ? 'grab' : cursor,
        ...props.style,
      }}
      onPointerDown={(e) => {
        if (drawBox && v && e.button === 0) {
          (e.currentTarget as HTMLDivElement).setPointerCapture(e.pointerId);
          const p = screenToWorld(v, local(e));
          setDrag({ a: p, b: p });
          return;
        }
        const target =
          (e.target as HTMLElement).dataset.role === 'swipe-handle' ? 'swipe-handle' : 'canvas';
        (e.currentTarget as HTMLDivElement).setPointerCapture(e.pointerId);
        feed({ type: 'down', p: local(e), target, button: e.button });
      }}
      onPointerMove={(e) => {
        if (drag && v) setDrag({ a: drag.a, b: screenToWorld(v, local(e)) });
        else feed({ type: 'move', p: local(e) });
      }}
      onPointerUp={(e) => {
        if (drag && v) {
          const b = screenToWorld(v, local(e));
          setDrag(null);
          const box = {
            x: Math.max(0, Math.min(drag.a.x, b.x)),
            y: Math.max(0, Math.min(drag.a.y, b.y)),
            width: Math.abs(b.x - drag.a.x),
            height: Math.abs(b.y - drag.a.y),
          };
          if (box.width * v.scale >= 4 && box.height * v.scale >= 4) drawBox?.(box);
          return;
        }
        feed({ type: 'up', p: local(e) });
      }}
      onPointerCancel={() => feed({ type: 'cancel' })}
    >
      {v && size.width > 0 && size.height > 0 && (
        <Stage
          width={size.width}
          height={size.height}
          scaleX={v.scale}
          scaleY={v.scale}
          x={v.x}
          y={v.y}
          listening={false}
        >
          <Layer listening={false}>
            <Rect
              x={0}
              y={0}
              width={world.width}
              height={world.height}
              fill="#ffffff"
              shadowColor="#000"
              shadowOpacity={0.18}
              shadowBlur={12 / v.scale}
              perfectDrawEnabled={false}
            />
            {layers.map((l) => (
              // Every layer sits in a Group so toggling the swipe clip never remounts (and reloads) the image.
              <Group
                key={l.key}
                clipX={0}
                clipY={0}
                clipWidth={
                  l.clipRightOf != null
                    ? Math.max(0, Math.min(world.width, l.clipRightOf))
                    : world.width
                }
                clipHeight={world.height}
              >
                <ImageLayer
                  spec={l}
                  world={world}
                  view={v}
                  viewport={size}
                  dpr={dpr}
                  onState={onLayerState}
                />
              </Group>
            ))}
          </Layer>
          {viewBoxes.length > 0 && (
            <Layer listening={false}>
              {viewBoxes.map((b) => (
                <Group key={b.id}>
                  <Rect
                    x={b.bbox.x}
                    y={b.bbox.y}
                    width={b.bbox.width}
                    height={b.bbox.height}
                    stroke="#5b6b82"
                    strokeWidth={1}
                    strokeScaleEnabled={false}
                    dash={[4, 4]}
                    opacity={0.7}
                    perfectDrawEnabled={false}
                  />
                  <Text
                    x={b.bbox.x + 3 / v.scale}
                    y={b.bbox.y + 3 / v.scale}
                    text={b.label}
                    fontSize={11 / v.scale}
                    fontFamily="Inter, system-ui, sans-serif"
                    fill="#33415a"
                    padding={2 / v.scale}
                    perfectDrawEnabled={false}
                  />
                </Group>
              ))}
            </Layer>
          )}
          {regions.length > 0 && (
            <Layer listening={false}>
              {regions.map((r) => {
                const sel = r.id === selectedId;
                const pad = 4 / v.scale; // a few screen px outside the ink
                return (
                  <Rect
                    key={r.id}
                    x={r.bbox.x - pad}
                    y={r.bbox.y - pad}
                    width={r.bbox.width + 2 * pad}
                    height={r.bbox.height + 2 * pad}
                    stroke={r.colour}
                    strokeWidth={sel ? 3 : 1.5}
                    strokeScaleEnabled={false}
                    dash={r.dim ? [6, 4] : undefined}
                    opacity={r.dim && !sel ? 0.55 : 1}
                    fill={sel ? hexAlpha(r.colour, 0.1) : undefined}
                    perfectDrawEnabled={false}
                  />
                );
              })}
            </Layer>
          )}
        </Stage>
      )}
      {v &&
        (props.marks ?? []).map((m) => {
          const pad = 6;
          const left = m.bbox.x * v.scale + v.x - pad;
          const top = m.bbox.y * v.scale + v.y - pad;
          return (
            <div
              key={m.id}
              className="hit-mark"
              data-testid={m.testId ?? 'hit-mark'}
              style={{
                left,
                top,
                width: m.bbox.width * v.scale + 2 * pad,
                height: m.bbox.height * v.scale + 2 * pad,
              }}
            >
              {m.label && <span className="hit-mark-label">{m.label}</span>}
            </div>
          );
        })}
      {v && drag && (
        <div
          className="draw-box"
          data-testid="draw-box"
          style={{
            left: Math.min(drag.a.x, drag.b.x) * v.scale + v.x,
            top: Math.min(drag.a.y, drag.b.y) * v.scale + v.y,
            width: Math.abs(drag.b.x - drag.a.x) * v.scale,
            height: Math.abs(drag.b.y - drag.a.y) * v.scale,
          }}
        />
      )}
      {swipeWorldX !== null && swipeFraction != null && (
        <div
          className="swipe-handle"
          data-role="swipe-handle"
          style={{ left: `${swipeFraction * 100}%` }}
          title="Drag to compare old (left) and new (right)"
        >
          <span data-role="swipe-handle">◀ ▶</span>
        </div>
      )}
      {label && <div className="canvas-label">{label}</div>}
      {loading && v && (
        <div className="canvas-status" role="status">
          <span className="spinner" aria-hidden /> Loading drawing…
        </div>
      )}
      {failed && !loading && (
        <div className="canvas-status canvas-status-error" role="alert">
          An image of this view could not be loaded (its link may have expired): reload the page.
        </div>
      )}
    </div>
  );
}

export type { LayerLoad };

function ImageLayer({
  spec,
  world,
  view,
  viewport,
  dpr,
  onState,
}: {
  spec: ImageLayerSpec;
  world: Size;
  view: View;
  viewport: Size;
  dpr: number;
  onState: (key: string, state: LayerLoad) => void;
}) {
  const report = (state: LayerLoad) => onState(spec.key, state);
  const visible = spec.visible ?? true;
  // Tiles when the image has a pyramid; the whole image if the pyramid turns out unavailable.
  const [tilesFailed, setTilesFailed] = useState(false);
  if (spec.tiles && !tilesFailed) {
    return visible ? (
      <TiledImage
        pyramid={spec.tiles}
        world={world}
        view={view}
        viewport={viewport}
        dpr={dpr}
        opacity={spec.opacity ?? 1}
        onUnavailable={() => setTilesFailed(true)}
        onState={report}
      />
    ) : null;
  }
  return (
    <WholeImage
      src={spec.src}
      world={world}
      view={view}
      dpr={dpr}
      opacity={spec.opacity ?? 1}
      visible={visible}
      onState={report}
    />
  );
}

function WholeImage({
  src,
  world,
  view,
  dpr,
  opacity,
  visible,
  onState,
}: {
  src: string | null;
  world: Size;
  view: View;
  dpr: number;
  opacity: number;
  visible: boolean;
  onState: (state: LayerLoad) => void;
}) {
  const levels = useImageLevels(src);
  const load: LayerLoad =
    levels.status === 'loaded' ? 'ready' : levels.status === 'failed' ? 'failed' : 'loading';
  const onStateRef = useRef(onState);
  onStateRef.current = onState;
  useEffect(() => onStateRef.current(load), [load]);
  // The image is stretched to the world frame (overlay images are exactly the frame's size).
  const scaleToScreen = levels.full
    ? (view.scale * world.width) / levels.full.naturalWidth
    : view.scale;
  const source = sourceForScale(levels, scaleToScreen, dpr);
  if (!source) return null;
  return (
    <KImage
      image={source}
      x={0}
      y={0}
      width={world.width}
      height={world.height}
      opacity={opacity}
      visible={visible && opacity > 0}
      listening={false}
      perfectDrawEnabled={false}
    />
  );
}

const isReady = (t: TileRef) => tileStore.isReady(t.url);
/** Cap on current-level tiles per view; a capped list does not cover the view. */
const MAX_CURRENT_TILES = 400;

function TiledImage({
  pyramid,
  world,
  view,
  viewport,
  dpr,
  opacity,
  onUnavailable,
  onState,
}: {
  pyramid: TilePyramid;
  onUnavailable: () => void;
  onState: (state: LayerLoad) => void;
  world: Size;
  view: View;
  viewport: Size;
  dpr: number;
  opacity: number;
}) {
  const [, setDrawn] = useState(0);
  // A landed tile re-renders the layer at once (React batches the landings queued before its
  // render runs; Konva draws the layer once per frame whatever the renders): the tile is drawn in
  // the next frame. Deferring the state update to an animation frame, as before, cost a frame
  // more (bench/viewer deep pass: bitmap → first draw 31 ms median at ~17 ms a frame).
  const bump = () => setDrawn((n) => n + 1);
  const stats = useRef({ loads: 0, errors: 0 });
  const onUnavailableRef = useRef(onUnavailable);
  onUnavailableRef.current = onUnavailable;
  // This layer as the tile store knows it: one object for the layer's life.
  const owner = useRef<TileOwner | null>(null);
  if (!owner.current) {
    owner.current = {
      landed: () => {
        stats.current.loads++;
        bump();
      },
      // A pyramid whose very first tiles fail (an older service, a deleted image) is unusable:
      // fall back to the whole image instead of showing a blank sheet.
      failed: () => {
        bump();
        if (++stats.current.errors >= 2 && stats.current.loads === 0) onUnavailableRef.current();
      },
    };
  }
  const me = owner.current;
  useEffect(() => () => tileStore.release(me, null), [me]);
  const sx = world.width / pyramid.width;
  const sy = world.height / pyramid.height;
  const wanted = useMemo(
    () =>
      wantedTiles(
        { scale: view.scale * sx, x: view.x, y: view.y },
        viewport,
        pyramid,
        dpr,
        isReady,
        MAX_CURRENT_TILES,
      ),
    [view, viewport, pyramid, dpr, sx],
  );
  // After the commit, not in render: tiles the view left that are still on their way are
  // cancelled or dropped from the store's queue (silently: no state update), then the view's own
  // are asked for — backdrop first, then nearest the viewport's centre (the store fetches a few
  // at a time over HTTP/1.1, all at once over HTTP/2; the newest view's first).
  useEffect(() => {
    tileStore.release(me, wanted.keep);
    tileStore.requestAll(
      wanted.all.map((t) => t.url),
      me,
      false,
    );
  }, [wanted, me]);
  // What the `data-loaded` attribute (used by e2e screenshots and benches) and the "Loading"
  // status follow (tiles.ts layerLoad): while sharper tiles are on their way over a view that
  // ready tiles of a coarser level cover, the layer is 'refining' — the enlarged level shows.
  const load = layerLoad(wanted, isReady, (t) => tileStore.failed(t.url));
  // Prefetch: the ring of tiles around the view at this level, asked for once the view's own
  // have arrived (a pan shows them at once).
  const ringWanted = load === 'ready' ? wanted.ring : null;
  useEffect(() => {
    if (ringWanted)
      tileStore.requestAll(
        ringWanted.map((t) => t.url),
        me,
        true,
      );
  }, [ringWanted, me]);
  const onStateRef = useRef(onState);
  onStateRef.current = onState;
  useEffect(() => onStateRef.current(load), [load]);

  // Backdrop tiles hidden under ready current-level tiles are not drawn: each one is a full-area
  // resample per redraw, and under a translucent layer it would show through.
  const drawn = [
    ...backdropToDraw(
      wanted.backdrop,
      wanted.current,
      // A current tile that failed keeps the enlarged level under it rather than paper.
      (t) => isReady(t),
      wanted.complete,
    ),
    ...wanted.current,
  ];
  return (
    <Group opacity={opacity} listening={false}>
      {drawn.map((t) => {
        const bitmap = tileStore.bitmap(t.url);
        if (!bitmap) return null;
        tileStore.touch(t.url);
        return (
          <KImage
            key={t.url}
            image={bitmap}
            x={t.rect.x * sx}
            y={t.rect.y * sy}
            width={t.rect.width * sx}
            height={t.rect.height * sy}
            listening={false}
            perfectDrawEnabled={false}
          />
        );
      })}
    </Group>
  );
}

function hexAlpha(hex: string, a: number): string {
  const n = parseInt(hex.slice(1), 16);
  return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a})`;
}
