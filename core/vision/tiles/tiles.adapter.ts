import sharp from 'sharp';

// Deep-zoom tiles for sheet and overlay images (contract §5: `<uri>/tiles/{z}/{x}/{y}.webp`).
// Level z has the image scaled by 2^(z − nativeZoom): level nativeZoom is the stored image's own
// resolution, level 0 fits in one tile. Tiles are TILE_SIZE square (edge tiles smaller). Levels up
// to nativeZoom are cut from the stored image on first request and then stored, so the pyramid
// fills in as people look at it rather than costing 8–12 PNG encodes up front
// (performance-anchors §4). Images of vector pages go deeper (maxZoom > nativeZoom): those tiles
// are rendered from the page itself (deep-tiles.ts).

export const TILE_SIZE = 512;

/** Levels past native of images that come from vector PDF pages: 16x the stored image. */
export const DEEP_LEVELS = 4;

export interface TileGeometry {
  width: number;
  height: number;
  /** The stored image's own resolution. */
  nativeZoom: number;
  /** The deepest level: nativeZoom, or nativeZoom + deep levels for vector pages. */
  maxZoom: number;
}

export function tileGeometry(width: number, height: number, deepLevels = 0): TileGeometry {
  const nativeZoom = Math.max(0, Math.ceil(Math.log2(Math.max(width, height) / TILE_SIZE)));
  return { width, height, nativeZoom, maxZoom: nativeZoom + deepLevels };
}

/** Size of level z and its tile grid, or null when (z, x, y) lies outside the pyramid. */
export function levelOf(g: TileGeometry, z: number, x: number, y: number) {
  if (!Number.isInteger(z) || z < 0 || z > g.maxZoom) return null;
  const scale = 2 ** (z - g.nativeZoom);
  const w = Math.max(1, Math.ceil(g.width * scale));
  const h = Math.max(1, Math.ceil(g.height * scale));
  const cols = Math.ceil(w / TILE_SIZE);
  const rows = Math.ceil(h / TILE_SIZE);
  if (!Number.isInteger(x) || !Number.isInteger(y) || x < 0 || y < 0 || x >= cols || y >= rows)
    return null;
  return { scale, w, h, cols, rows };
}

/** Tile (x, y) of a level in that level's pixels: its top-left and size (edge tiles smaller). */
export function tileRect(level: { w: number; h: number }, x: number, y: number) {
  const left = x * TILE_SIZE;
  const top = y * TILE_SIZE;
  return {
    left,
    top,
    width: Math.min(TILE_SIZE, level.w - left),
    height: Math.min(TILE_SIZE, level.h - top),
  };
}

export interface DecodedImage {
  width: number;
  height: number;
  channels: 1 | 3 | 4;
  data: Buffer;
}

export async function decodeForTiles(bytes: Buffer): Promise<DecodedImage> {
  const { data, info } = await sharp(bytes, { limitInputPixels: 400_000_000 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, channels: info.channels as 1 | 3 | 4, data };
}

/**
 * Encodes tile (z, x, y) of a decoded image as WebP, at most at the image's own resolution (deeper
 * levels come from the page: deep-tiles.ts). The caller has checked levelOf() first.
 */
export async function renderTile(
  img: DecodedImage,
  z: number,
  x: number,
  y: number,
): Promise<Buffer> {
  const g = tileGeometry(img.width, img.height);
  const level = z <= g.nativeZoom ? levelOf(g, z, x, y) : null;
  if (!level)
    throw new RangeError(
      `Tile ${z}/${x}/${y} is outside the pyramid of a ${img.width}x${img.height} image.`,
    );
  // The tile's rectangle in full-resolution pixels.
  const inv = 1 / level.scale;
  const left = Math.floor(x * TILE_SIZE * inv);
  const top = Math.floor(y * TILE_SIZE * inv);
  const width = Math.min(img.width - left, Math.ceil(TILE_SIZE * inv));
  const height = Math.min(img.height - top, Math.ceil(TILE_SIZE * inv));
  const outW = Math.max(1, Math.min(TILE_SIZE, Math.round(width * level.scale)));
  const outH = Math.max(1, Math.min(TILE_SIZE, Math.round(height * level.scale)));
  let pipeline = sharp(img.data, {
    raw: { width: img.width, height: img.height, channels: img.channels },
  }).extract({ left, top, width, height });
  if (outW !== width || outH !== height)
    pipeline = pipeline.resize(outW, outH, { kernel: 'lanczos3' });
  if (img.channels === 1) pipeline = pipeline.toColourspace('b-w');
  // Near-lossless keeps one-pixel lines crisp; effort 2 keeps an on-demand tile well under 100 ms.
  return pipeline.webp({ nearLossless: true, quality: 80, effort: 2 }).toBuffer();
}
