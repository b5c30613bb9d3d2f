// Which tiles of a pyramid cover the viewport. Pure.
//
// Level `native_level` is the image's own resolution (1 tile pixel = 1 image pixel); level z has
// resolution 2^(z - native_level), so levels past it (up to `max_level`, images of vector pages)
// hold more pixels than the stored image: rendered from the PDF, sharp when zoomed in. Tile (x, y)
// at level z covers image pixels
//   [x * tile * 2^(native-z), (x+1) * tile * 2^(native-z)) horizontally, likewise vertically.

import type { BBox, TilePyramid } from '../api/types';
import type { Size, View } from './view-transform';
import { visibleWorldRect } from './view-transform';

/** The level at the image's own resolution (max_level for pyramids that stop there). */
export const nativeLevel = (p: Pick<TilePyramid, 'max_level' | 'native_level'>) =>
  p.native_level ?? p.max_level;

export interface TileRef {
  z: number;
  x: number;
  y: number;
  url: string;
  /** Image-pixel rectangle the tile covers (clipped to the image). */
  rect: BBox;
}

/**
 * The coarsest level whose resolution is at least the on-screen scale (times the device pixel
 * ratio), so tiles are never magnified more than needed.
 */
export function levelForScale(
  scale: number,
  pyramid: Pick<TilePyramid, 'max_level' | 'min_level' | 'native_level'>,
  dpr = 1,
): number {
  const min = pyramid.min_level ?? 0;
  const needed = Math.max(1e-6, scale * dpr);
  const z = nativeLevel(pyramid) + Math.ceil(Math.log2(needed) - 1e-9);
  return Math.max(min, Math.min(pyramid.max_level, z));
}

export function tileUrl(template: string, z: number, x: number, y: number): string {
  return template.replace('{z}', String(z)).replace('{x}', String(x)).replace('{y}', String(y));
}

export function tilesForView(
  view: View,
  viewport: Size,
  pyramid: TilePyramid,
  dpr = 1,
  maxTiles = 400,
  level?: number,
  /** Tiles beyond the viewport on each side (prefetch). */
  margin = 0,
): TileRef[] {
  const z = level ?? levelForScale(view.scale, pyramid, dpr);
  const span = pyramid.tile_size * Math.pow(2, nativeLevel(pyramid) - z); // image px per tile
  const vis = grow(visibleWorldRect(view, viewport), margin * span);
  const x0 = Math.max(0, Math.floor(vis.x / span));
  const y0 = Math.max(0, Math.floor(vis.y / span));
  const x1 = Math.min(
    Math.ceil(pyramid.width / span) - 1,
    Math.ceil((vis.x + vis.width) / span) - 1,
  );
  const y1 = Math.min(
    Math.ceil(pyramid.height / span) - 1,
    Math.ceil((vis.y + vis.height) / span) - 1,
  );
  const out: TileRef[] = [];
  for (let ty = y0; ty <= y1; ty++) {
    for (let tx = x0; tx <= x1; tx++) {
      if (out.length >= maxTiles) return out;
      const rx = tx * span;
      const ry = ty * span;
      out.push({
        z,
        x: tx,
        y: ty,
        url: tileUrl(pyramid.url_template, z, tx, ty),
        rect: {
          x: rx,
          y: ry,
          width: Math.min(span, pyramid.width - rx),
          height: Math.min(span, pyramid.height - ry),
        },
      });
    }
  }
  return out;
}

const grow = (r: BBox, d: number): BBox => ({
  x: r.x - d,
  y: r.y - d,
  width: r.width + 2 * d,
  height: r.height + 2 * d,
});

/** The tiles in a ring `margin` tiles wide around the view (not the view's own): prefetch. */
export function ringAroundView(
  view: View,
  viewport: Size,
  pyramid: TilePyramid,
  dpr: number,
  level: number,
  margin = 1,
  maxTiles = 64,
): TileRef[] {
  const inside = new Set(
    tilesForView(view, viewport, pyramid, dpr, 10_000, level).map((t) => t.url),
  );
  return tilesForView(view, viewport, pyramid, dpr, 10_000, level, margin)
    .filter((t) => !inside.has(t.url))
    .slice(0, maxTiles);
}

/** Tile edge of the service's pyramids (OpenAPI, GET /v1/blobs/*): 512 px, edge tiles smaller. */
export const SERVICE_TILE_SIZE = 512;

/**
 * The pyramid the service serves for every stored image (sheet, block crop, overlay):
 * `<uri path>/tiles/{z}/{x}/{y}.webp?<the uri's query>`, one signature covering all tiles;
 * maxZoom = ceil(log2(max(width, height) / 512)) is full resolution and level 0 fits one tile.
 * `width`/`height` are the image's pixel size. Extra query parameters (e.g. `palette`) are kept.
 */
export function servicePyramid(
  uri: string,
  width: number,
  height: number,
  base = 'https://invalid.local/',
): TilePyramid | null {
  if (!uri || !(width > 0) || !(height > 0)) return null;
  let u: URL;
  try {
    u = new URL(uri, base);
  } catch {
    return null;
  }
  const maxLevel = Math.max(0, Math.ceil(Math.log2(Math.max(width, height) / SERVICE_TILE_SIZE)));
  const relative = !/^[a-z][a-z0-9+.-]*:/i.test(uri);
  const prefix = relative ? '' : u.origin;
  return {
    url_template: `${prefix}${u.pathname.replace(/\/+$/, '')}/tiles/{z}/{x}/{y}.webp${u.search}`,
    tile_size: SERVICE_TILE_SIZE,
    max_level: maxLevel,
    min_level: 0,
    width,
    height,
  };
}

/** `<uri path>/tiles.json?<the uri's query>`: the pyramid's description (contract §5). */
export function tilesJsonUrl(uri: string, base = 'https://invalid.local/'): string | null {
  if (!uri) return null;
  let u: URL;
  try {
    u = new URL(uri, base);
  } catch {
    return null;
  }
  const relative = !/^[a-z][a-z0-9+.-]*:/i.test(uri);
  return `${relative ? '' : u.origin}${u.pathname.replace(/\/+$/, '')}/tiles.json${u.search}`;
}

/** The service's tiles.json, as served (contract §5). */
export interface TilesJson {
  tile_size: number;
  width: number;
  height: number;
  native_zoom: number;
  max_zoom: number;
}

/**
 * The pyramid tiles.json describes: servicePyramid's URLs, its levels (deeper than native for
 * images of vector pages). Null when the description does not fit the image (another size).
 */
export function pyramidFromTilesJson(
  uri: string,
  width: number,
  height: number,
  json: TilesJson,
): TilePyramid | null {
  const base = servicePyramid(uri, width, height);
  if (!base || json.width !== width || json.height !== height) return null;
  if (!(json.max_zoom >= json.native_zoom) || json.native_zoom !== base.max_level) return null;
  return { ...base, native_level: json.native_zoom, max_level: json.max_zoom };
}

const overlaps = (a: BBox, b: BBox) =>
  a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

/**
 * The backdrop (coarse) tiles still worth drawing: those under which some current-level tile is
 * not ready yet. `current` must cover the whole visible area (tilesForView without a cap hit), so a
 * backdrop tile whose overlapping current tiles are all ready is invisible and only costs a
 * full-size resample per frame — in software canvas mode that is most of a redraw (bench/viewer).
 * Returns every backdrop tile when `currentComplete` is false (the current list was capped).
 */
export function backdropToDraw(
  backdrop: readonly TileRef[],
  current: readonly TileRef[],
  isReady: (t: TileRef) => boolean,
  currentComplete = true,
): TileRef[] {
  if (!currentComplete) return [...backdrop];
  const missing = current.filter((t) => !isReady(t));
  if (missing.length === 0) return [];
  return backdrop.filter((b) => missing.some((m) => overlaps(b.rect, m.rect)));
}

/**
 * `tiles` nearest the viewport's centre first (tile centres, in the pyramid's pixels): the order
 * they are fetched in, so the middle of the view sharpens first.
 */
export function nearestCentreFirst(
  tiles: readonly TileRef[],
  view: View,
  viewport: Size,
): TileRef[] {
  const r = visibleWorldRect(view, viewport);
  const cx = r.x + r.width / 2;
  const cy = r.y + r.height / 2;
  const d = (t: TileRef) =>
    (t.rect.x + t.rect.width / 2 - cx) ** 2 + (t.rect.y + t.rect.height / 2 - cy) ** 2;
  return [...tiles].sort((a, b) => d(a) - d(b));
}

/** The tiles a tiled layer wants for a view (`view` in the pyramid's pixels). */
export interface WantedTiles {
  /** Coarser tiles drawn under missing ones (coarsest first). */
  backdrop: TileRef[];
  /** The view's level, nearest the viewport's centre first. */
  current: TileRef[];
  /** Prefetch: the ring around the view at its level, nearest first. */
  ring: TileRef[];
  /** backdrop + current: asked for at once, in this order. */
  all: TileRef[];
  /** Every URL the layer still wants (all + ring): fetches of others are released. */
  keep: Set<string>;
  /** current covers the whole view (not capped). */
  complete: boolean;
}

/**
 * Backdrops keep the sheet on screen while finer tiles load, coarsest drawn first: a level three
 * down, at most the image's own resolution (always asked for: cut from the stored image, never
 * rendered from the PDF, and usually here already), and the levels between it and this one where
 * their tiles are here already (the level zoomed in from) — so a deep tile still rendering shows
 * the enlarged level above it, never paper.
 */
export function wantedTiles(
  view: View,
  viewport: Size,
  pyramid: TilePyramid,
  dpr: number,
  isReady: (t: TileRef) => boolean,
  maxCurrent = 400,
): WantedTiles {
  const z = levelForScale(view.scale, pyramid, dpr);
  const min = pyramid.min_level ?? 0;
  const coarse = Math.max(min, Math.min(z - 3, nativeLevel(pyramid)));
  const backdrop: TileRef[] = [];
  for (let bz = coarse; bz < z; bz++) {
    const ts = tilesForView(view, viewport, pyramid, dpr, 64, bz);
    backdrop.push(...(bz === coarse ? ts : ts.filter((t) => isReady(t))));
  }
  const listed = tilesForView(view, viewport, pyramid, dpr, maxCurrent, z);
  const current = nearestCentreFirst(listed, view, viewport);
  const ring = nearestCentreFirst(
    ringAroundView(view, viewport, pyramid, dpr, z, 1, 32),
    view,
    viewport,
  );
  const all = [...backdrop, ...current];
  const keep = new Set([...all, ...ring].map((t) => t.url));
  return { backdrop, current, ring, all, keep, complete: listed.length < maxCurrent };
}

/** 'refining': sharper tiles on their way over a view that coarser tiles already cover. */
export type LayerLoad = 'loading' | 'refining' | 'ready' | 'failed';

const contains = (outer: BBox, inner: BBox) =>
  outer.x <= inner.x + 0.5 &&
  outer.y <= inner.y + 0.5 &&
  outer.x + outer.width >= inner.x + inner.width - 0.5 &&
  outer.y + outer.height >= inner.y + inner.height - 0.5;

/**
 * A tiled layer's state, what the canvas's `data-loaded` and its "Loading drawing…" status follow:
 * 'ready' once every wanted tile is here (or failed); 'refining' while the view's missing tiles
 * all lie under ready tiles of a coarser level (the enlarged level shows: no Loading status);
 * 'loading' only where some part of the view has nothing to show.
 */
export function layerLoad(
  w: Pick<WantedTiles, 'backdrop' | 'current' | 'all'>,
  isReady: (t: TileRef) => boolean,
  failed: (t: TileRef) => boolean,
): LayerLoad {
  const here = (t: TileRef) => failed(t) || isReady(t);
  const pending = w.all.filter((t) => !here(t)).length;
  if (pending === 0) return 'ready';
  // Every missing tile of the view under a ready coarser one (or none missing: only a backdrop is
  // on its way under a view its own tiles already show).
  const covered = w.current
    .filter((t) => !here(t))
    .every((m) => w.backdrop.some((b) => isReady(b) && contains(b.rect, m.rect)));
  return covered ? 'refining' : 'loading';
}
