// Which tiles of a pyramid cover the viewport. Pure.
//
// Level `max_level` is full resolution (1 tile pixel = 1 image pixel); level z has resolution
// 2^(z - max_level). Tile (x, y) at level z covers image pixels
//   [x * tile * 2^(max-z), (x+1) * tile * 2^(max-z)) horizontally, likewise vertically.

import type { BBox, TilePyramid } from '../api/types';
import type { Size, View } from './view-transform';
import { visibleWorldRect } from './view-transform';

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
  pyramid: Pick<TilePyramid, 'max_level' | 'min_level'>,
  dpr = 1,
): number {
  const min = pyramid.min_level ?? 0;
  const needed = Math.max(1e-6, scale * dpr);
  const z = pyramid.max_level + Math.ceil(Math.log2(needed) - 1e-9);
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
): TileRef[] {
  const z = level ?? levelForScale(view.scale, pyramid, dpr);
  const span = pyramid.tile_size * Math.pow(2, pyramid.max_level - z); // image pixels per tile
  const vis = visibleWorldRect(view, viewport);
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
