import sharp from 'sharp';
import { readFile } from 'node:fs/promises';
import { openInput, type InputDocument } from '../input/document';
import type { PageKind, RegionRaster, RenderColour } from '../input/pdfium.adapter';
import { alignGrey, overlayPalette, renderOverlayIndexed, type OverlayKind } from '../compare/diff';
import { diffStage, type ImageKind } from '../compare/compare-pipeline.adapter';
import { invertAffine, mapBox, type Affine } from '../compare/register';
import type { GreyImage } from '../types';
import { CELL } from '../compare/layers';
import {
  dilateMask,
  lineWhereSheetHasNoFill,
  scaleTolerance,
  SHEET_CONTEXT,
  type SheetFill,
} from './deep-scale';
import { stepClock, type DeepTimings } from './deep-timings';

// Deep-zoom tiles past a stored image's own resolution (contract §5, added 2026-11-27), rendered
// from the PDF page itself at the scale of the level: lines come out at their width times the
// scale, never as enlarged pixels. Runs in the worker pool (worker-tasks.ts 'tiles.*').
//
//  - Sheet and block tiles: a rectangle of the page (PDFium renderRegion), in colour.
//  - Overlay tiles: the rectangle of A (grey) and the part of B that the pair's transform maps onto
//    it, rendered at the same scale with their line work, then the compare pipeline's own stage
//    (diffStage through the transform scaled to the level) and overlay renderer: the same colour
//    rules as the overlay image, fills and lineweight layers split at the level's scale
//    (renderOverlayTile).
//
// Frames: a level's pixels are the stored image's pixels times `scale` (a power of two). Sheet
// pixels at the sheet's dpi; a block's or an overlay's image starts at its block's bbox origin.

/** Where a page's bytes are and which page: what a worker needs to open and render it. */
export interface PageSource {
  /** Local path of the stored file bytes. */
  path: string;
  /** Identifies the bytes (sha256): open documents are reused for the same bytes. */
  bytesKey: string;
  contentType: string;
  /** Page index in the file. */
  index: number;
  /** The dpi of the stored sheet image (level native_zoom of the sheet). */
  dpi: number;
  maxPixels: number;
}

/** A rectangle of a level: pixels of the page's raster at `dpi` times `scale`. */
export interface LevelRect {
  scale: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Documents kept open by this worker (LRU): an overlay's tiles need both revisions' files. */
const KEPT_DOCS = 3;
const docs = new Map<string, Promise<InputDocument>>();

function openDoc(src: PageSource): Promise<InputDocument> {
  let p = docs.get(src.bytesKey);
  if (p) {
    docs.delete(src.bytesKey);
    docs.set(src.bytesKey, p);
    return p;
  }
  // The bytes passed the process job's checks (stream scan) when the sheet was made from them.
  p = readFile(src.path).then((b) =>
    openInput(
      new Uint8Array(b),
      src.contentType,
      { maxPixels: src.maxPixels },
      {
        streamsChecked: true,
      },
    ),
  );
  p.catch(() => docs.delete(src.bytesKey));
  docs.set(src.bytesKey, p);
  while (docs.size > KEPT_DOCS) {
    const oldest = docs.keys().next().value!;
    const gone = docs.get(oldest)!;
    docs.delete(oldest);
    void gone.then((d) => d.close()).catch(() => {});
  }
  return p;
}

/**
 * Whether the page can go deeper than its stored image: vector pages can, scans (and image
 * uploads, which are scans by nature) cannot.
 */
export async function pageKindOf(src: PageSource): Promise<PageKind> {
  if (src.contentType !== 'application/pdf') return 'scan';
  const doc = await openDoc(src);
  return doc.pageKind ? doc.pageKind(src.index) : 'scan';
}

async function renderRect(
  src: PageSource,
  rect: LevelRect,
  colour: RenderColour,
  lineWork = false,
): Promise<RegionRaster> {
  const doc = await openDoc(src);
  if (!doc.renderRegion) throw new Error('Only PDF pages render past their stored resolution.');
  return doc.renderRegion(src.index, {
    dpi: src.dpi,
    colour,
    ...rect,
    ...(lineWork ? { lineWork } : {}),
  });
}

/**
 * WebP of a deep tile: lossless at effort 0, exact colours (an overlay's palette) and the fastest
 * encode measured for a 512-px tile (bench/viewer README, deep-zoom pass: 2–16 ms against 3–73 ms
 * near-lossless at effort 2, for 1.5–4x the bytes: 3–30 KB a tile).
 */
function encodeTile(px: { width: number; height: number; channels: 1 | 3; data: Uint8Array }) {
  let p = sharp(px.data, { raw: { width: px.width, height: px.height, channels: px.channels } });
  if (px.channels === 1) p = p.toColourspace('b-w');
  return p.webp({ lossless: true, effort: 0 }).toBuffer();
}

/** A sheet's or block's deep tile: `rect` of the page rendered in colour, as WebP. */
export async function renderPageTile(src: PageSource, rect: LevelRect): Promise<Uint8Array> {
  return (await renderPageTiles(src, rect.scale, [rect]))[0]!;
}

/** A rectangle of a level (level pixels of an image: a page's raster or an overlay's image). */
export interface TileCut {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The smallest rectangle holding every cut. */
function unionOf(cuts: readonly TileCut[]): TileCut {
  const left = Math.min(...cuts.map((c) => c.left)),
    top = Math.min(...cuts.map((c) => c.top));
  const right = Math.max(...cuts.map((c) => c.left + c.width)),
    bottom = Math.max(...cuts.map((c) => c.top + c.height));
  return { left, top, width: right - left, height: bottom - top };
}

/** Pixels of `cut` out of a packed raster whose top-left is at `origin` (same level frame). */
function cutOut(
  px: { width: number; channels: 1 | 3; data: Uint8Array },
  origin: { left: number; top: number },
  cut: TileCut,
): { width: number; height: number; channels: 1 | 3; data: Uint8Array } {
  const ch = px.channels;
  const out = new Uint8Array(cut.width * cut.height * ch);
  const dx = cut.left - origin.left,
    dy = cut.top - origin.top;
  for (let y = 0; y < cut.height; y++) {
    const from = ((dy + y) * px.width + dx) * ch;
    out.set(px.data.subarray(from, from + cut.width * ch), y * cut.width * ch);
  }
  return { width: cut.width, height: cut.height, channels: ch, data: out };
}

/**
 * Several deep tiles of one level of a sheet or block (`cuts`, in pixels of the page's raster at
 * `scale`): the rectangle holding them is rendered once (one PDFium call; the page stays loaded)
 * and each tile is cut from it, as WebP in the order of `cuts`.
 */
export async function renderPageTiles(
  src: PageSource,
  scale: number,
  cuts: readonly TileCut[],
  timings?: DeepTimings,
): Promise<Uint8Array[]> {
  const clock = stepClock(timings);
  const region = unionOf(cuts);
  await openDoc(src);
  clock.step('open');
  const r = await renderRect(src, { scale, ...region }, 'colour');
  clock.step('render');
  const webps = await Promise.all(
    cuts.map(async (c) => new Uint8Array(await encodeTile(cutOut(r, region, c)))),
  );
  clock.step('encode');
  clock.end();
  return webps;
}

export interface OverlayTileArgs {
  a: PageSource;
  b: PageSource;
  scale: number;
  /** Block A's bbox origin and block B's, in their sheets' pixels (stored image resolution). */
  aOrigin: { x: number; y: number };
  bOrigin: { x: number; y: number };
  /** The overlay's transform: block B crop pixels → overlay pixels, at the stored resolution. */
  transform: number[];
  /** The tile in level pixels of the overlay image (its top-left and size). */
  tile: { left: number; top: number; width: number; height: number };
  /** Which overlay image (compare-pipeline.adapter ImageKind). */
  kind: ImageKind;
}

/** Several tiles of one overlay level (renderOverlayTiles). */
export type OverlayTilesArgs = Omit<OverlayTileArgs, 'tile'> & {
  tiles: readonly TileCut[];
  /**
   * How many of `tiles`, in order, each compare takes (the tile service's 2 x 2 cells): A and B
   * are rendered once for all of them, and each cell is compared on its own part of the renders
   * (its tiles plus overlayMargin, as a render of the cell alone would give it). Default: one
   * compare for all the tiles.
   */
  cells?: readonly number[];
};

/** Pixels of B around the tile that are rendered too, so resampling near its edges has them. */
const B_MARGIN = 2;

/**
 * The pieces of an overlay's deep tile before any compare: A's rectangle, B's window, and the
 * transform from B-window pixels to tile pixels (the overlay's transform scaled to the level).
 */
export async function overlayTileInputs(
  args: OverlayTileArgs,
  colourB: RenderColour = 'grey',
): Promise<{
  a: RegionRaster | null;
  b: RegionRaster;
  transform: Affine;
  /** The rectangles of A's and B's rasters at the level (level pixels of their pages). */
  aRect: LevelRect;
  bRect: LevelRect;
}> {
  const { aRect, bRect, transform } = overlayWindows(args);
  const [ra, rb] = await Promise.all([
    // B's aligned image alone (New mode, in colour) needs no A.
    // The overlay's layers need both sides' line work at this scale (renderOverlayTile).
    colourB === 'grey' ? renderRect(args.a, aRect, 'grey', true) : null,
    renderRect(args.b, bRect, colourB, colourB === 'grey'),
  ]);
  return { a: ra, b: rb, transform, aRect, bRect };
}

/**
 * Where an overlay tile's pieces lie (overlayTileInputs): A's rectangle, B's window (what the
 * pair's transform maps onto the tile, B_MARGIN around) and the transform from B-window pixels to
 * tile pixels. A window of a rectangle inside another lies inside the other's (the box of the
 * image of a part lies in the box of the image of the whole).
 */
export function overlayWindows(args: Omit<OverlayTileArgs, 'a' | 'b' | 'kind'>): {
  aRect: LevelRect;
  bRect: LevelRect;
  transform: Affine;
} {
  const k = args.scale;
  const t = args.transform;
  // Level pixels: q' = k q, p' = k p, p = T q  →  p' = L q' + k (c, f).
  const tk = [t[0]!, t[1]!, t[2]! * k, t[3]!, t[4]!, t[5]! * k];
  const { left, top, width, height } = args.tile;
  const box = mapBox(invertAffine(tk), { x: left, y: top, width, height });
  const bx = Math.floor(box.x) - B_MARGIN;
  const by = Math.floor(box.y) - B_MARGIN;
  const bw = Math.max(1, Math.ceil(box.x + box.width) + B_MARGIN - bx);
  const bh = Math.max(1, Math.ceil(box.y + box.height) + B_MARGIN - by);
  const aRect = {
    scale: k,
    left: args.aOrigin.x * k + left,
    top: args.aOrigin.y * k + top,
    width,
    height,
  };
  const bRect = {
    scale: k,
    left: args.bOrigin.x * k + bx,
    top: args.bOrigin.y * k + by,
    width: bw,
    height: bh,
  };
  // B-window pixel q → tile pixel: T_k(q + (bx, by)) − (left, top).
  const transform: Affine = [
    tk[0]!,
    tk[1]!,
    tk[2]! + tk[0]! * bx + tk[1]! * by - left,
    tk[3]!,
    tk[4]!,
    tk[5]! + tk[3]! * bx + tk[4]! * by - top,
  ];
  return { aRect, bRect, transform };
}

/** `rect` (level pixels of a page) out of a render of `outer`, which holds it, with its line work. */
function cropRaster(r: RegionRaster, outer: LevelRect, rect: LevelRect): RegionRaster {
  const at = { left: outer.left, top: outer.top };
  if (
    rect.left < outer.left ||
    rect.top < outer.top ||
    rect.left + rect.width > outer.left + outer.width ||
    rect.top + rect.height > outer.top + outer.height
  )
    throw new RangeError('A cell of deep tiles lies outside the render it is cut from.');
  const px = cutOut(r, at, rect);
  if (!r.lineWork) return px;
  const lw = cutOut({ width: r.width, channels: 1, data: r.lineWork }, at, rect);
  return { ...px, lineWork: lw.data };
}

/**
 * Level pixels around a region of overlay tiles that are compared too, so every tile pixel has the
 * other side's ink within the stage's distances as they are in sheet pixels (deep-scale.ts: up to
 * 2 sheet pixels) and the fill split sees the areas around it.
 */
export function overlayMargin(scale: number): number {
  return 2 * Math.ceil(scale) + 16;
}

/**
 * Sheet-pixel fill areas kept by this worker (LRU): the regions of one zoom session lie within a
 * few of them, and the 200-dpi stage (two renders and a compare) then runs once per area instead of
 * once per region.
 */
const KEPT_FILL_AREAS = 24;
/** Areas at 8x and deeper are rounded out to this grid of sheet pixels (on the frame's origin). */
const FILL_AREA_GRID = 256;
const fillAreas = new Map<string, Promise<SheetFill>>();

/**
 * A page's fill layer as the compare finds it at the stored resolution (scale 1: splitFills,
 * keepLineWork and objectLayers on the page's own render and line work), dilated by 1 sheet pixel,
 * over the sheet pixels under a level rectangle (and more: an area rounded out to FILL_AREA_GRID,
 * kept for the next regions), judged with SHEET_CONTEXT around it (the fill split judges an area by
 * its surroundings).
 */
async function sheetFills(
  src: PageSource,
  rect: LevelRect,
  origin: { x: number; y: number },
): Promise<SheetFill> {
  const k = rect.scale;
  const sl = Math.floor(rect.left / k),
    st = Math.floor(rect.top / k),
    sr = Math.ceil((rect.left + rect.width) / k),
    sb = Math.ceil((rect.top + rect.height) / k);
  const id = `${src.bytesKey}:${src.index}:${src.dpi}:${origin.x},${origin.y}:`;
  for (const [key, p] of fillAreas) {
    if (!key.startsWith(id)) continue;
    const [l, t, r, b] = key.slice(id.length).split(',').map(Number) as [
      number,
      number,
      number,
      number,
    ];
    if (l <= sl && t <= st && r >= sr && b >= sb) {
      fillAreas.delete(key);
      fillAreas.set(key, p);
      return p;
    }
  }
  // Deep levels (8x and more: a region is at most ~140 sheet px) round out to the grid, so the
  // next regions of the session fall in the same area; shallower regions are large enough alone.
  const G = k >= 8 ? FILL_AREA_GRID : CELL;
  const down = (v: number, o: number) => o + Math.floor((v - o) / G) * G,
    up = (v: number, o: number) => o + Math.ceil((v - o) / G) * G;
  const area = {
    left: down(sl, origin.x),
    top: down(st, origin.y),
    right: up(sr, origin.x),
    bottom: up(sb, origin.y),
  };
  const key = `${id}${area.left},${area.top},${area.right},${area.bottom}`;
  const p = fillArea(src, area);
  p.catch(() => fillAreas.delete(key));
  fillAreas.set(key, p);
  while (fillAreas.size > KEPT_FILL_AREAS) fillAreas.delete(fillAreas.keys().next().value!);
  return p;
}

async function fillArea(
  src: PageSource,
  area: { left: number; top: number; right: number; bottom: number },
): Promise<SheetFill> {
  // The area's edges lie on the grid of the stored image's frame (its origin: a block's bbox) and
  // SHEET_CONTEXT is a whole number of cells, so the fill split's 8x8 cells lie where they did for
  // the stored overlay: a beam a cell wide is a fill or not by where the grid falls.
  const C = SHEET_CONTEXT;
  const left = area.left - C,
    top = area.top - C;
  const width = area.right - area.left + 2 * C,
    height = area.bottom - area.top + 2 * C;
  const r = await renderRect(src, { scale: 1, left, top, width, height }, 'grey', true);
  const lw = r.lineWork && { width: r.width, height: r.height, data: r.lineWork };
  const img = r as GreyImage;
  const st = await diffStage(img, img, {
    skipRegistration: true,
    lineWork: lw ? { a: lw, b: lw } : {},
  });
  const fill = st.diff.fills?.a ?? null;
  return {
    left,
    top,
    width: st.diff.width,
    height: st.diff.height,
    stride: st.diff.stride,
    near: fill && dilateMask(fill, st.diff.stride, st.diff.height, 1),
  };
}

/** One overlay deep tile (see renderOverlayTiles). */
export async function renderOverlayTile(args: OverlayTileArgs): Promise<Uint8Array> {
  return (await renderOverlayTiles({ ...args, tiles: [args.tile] }))[0]!;
}

/**
 * An overlay's deep tiles of one level (`tiles`, level pixels of the overlay image): A and B
 * rendered once at the level's scale for the rectangle holding them (plus overlayMargin), compared
 * through the pair's transform by the compare pipeline's stage (diffStage), the stage's distances
 * and the narrow-fill rule taken to sheet pixels (deep-scale.ts), drawn by its overlay renderer
 * (renderOverlayIndexed) with the overlay image's palette, and cut into tiles, as WebP in the order
 * of `tiles`. A region of neighbouring tiles costs one pair of PDFium renders and one stage instead
 * of one per tile.
 *
 * Fills and line work are told apart at the level's own scale, per pixel, by the compare's own
 * layers (layers.ts): splitFills on the renders at this scale, and keepLineWork with each side's
 * line work as the PDF draws it at this scale (renderRegion `lineWork`: strokes, text, small filled
 * symbols, annotations), so a line stays line work however wide the zoom makes it and an area fill
 * is a fill, except where the compare at the stored resolution finds no fill within a sheet pixel
 * (a beam a few sheet pixels wide, ink in the 200-dpi overlay: sheetFills, lineWhereSheetHasNoFill).
 * The class boundaries are drawn by the renders at this scale wherever the two resolutions agree;
 * the stored 200-dpi overlay itself is not read.
 *
 * With `args.cells`, `onCell` is told each cell's tiles (from index `first` of `tiles`) as soon as
 * they are encoded, before the next cell is compared; they are also in the result.
 */
export async function renderOverlayTiles(
  args: OverlayTilesArgs,
  timings?: DeepTimings,
  onCell?: (first: number, webps: Uint8Array[]) => void,
): Promise<Uint8Array[]> {
  const clock = stepClock(timings);
  const region = unionOf(args.tiles);
  await Promise.all([openDoc(args.a), openDoc(args.b)]);
  clock.step('open');
  if (args.kind === 'aligned_b') {
    const b = await alignedBRaster({ ...args, tile: region }, clock.step);
    const webps = await Promise.all(
      args.tiles.map(async (c) => new Uint8Array(await encodeTile(cutOut(b, region, c)))),
    );
    clock.step('encode');
    clock.end();
    return webps;
  }
  const sizes = args.cells ?? [args.tiles.length];
  if (sizes.some((n) => !(n >= 1)) || sizes.reduce((p, q) => p + q, 0) !== args.tiles.length)
    throw new RangeError(`Cells of ${sizes.join(', ')} tiles do not split ${args.tiles.length}.`);
  const cells: TileCut[][] = [];
  for (let i = 0, at = 0; i < sizes.length; at += sizes[i]!, i++)
    cells.push(args.tiles.slice(at, at + sizes[i]!));
  const m = overlayMargin(args.scale);
  const frameOf = (cuts: readonly TileCut[]): TileCut => {
    const r = unionOf(cuts);
    return { left: r.left - m, top: r.top - m, width: r.width + 2 * m, height: r.height + 2 * m };
  };
  const mk: OverlayKind =
    args.kind === 'additions' ? 'additions' : args.kind === 'deletions' ? 'deletions' : 'combined';
  const palette = overlayPalette(
    args.kind === 'combined_colorblind' ? 'colorblind' : 'standard',
    mk,
  );
  const encodes: Promise<Uint8Array>[] = [];
  if (cells.length === 1) {
    const frame = frameOf(args.tiles);
    const inputs = await overlayTileInputs({ ...args, tile: frame });
    clock.step('render');
    encodes.push(...(await overlayCell(args, frame, args.tiles, inputs, mk, palette, clock.step)));
  } else {
    // One pair of renders (PDFium's cost per call, ~10 ms a side, paid once), then each cell's
    // compare on its frame cut out of them.
    const whole = await overlayTileInputs({ ...args, tile: frameOf(args.tiles) });
    clock.step('render');
    for (const cuts of cells) {
      const frame = frameOf(cuts);
      const w = overlayWindows({ ...args, tile: frame });
      const inputs = {
        a: cropRaster(whole.a!, whole.aRect, w.aRect),
        b: cropRaster(whole.b, whole.bRect, w.bRect),
        ...w,
      };
      clock.step('render');
      const first = encodes.length;
      const cell = await overlayCell(args, frame, cuts, inputs, mk, palette, clock.step);
      encodes.push(...cell);
      // A cell's tiles are handed on as soon as they are encoded, before the next cell's compare.
      if (onCell) {
        onCell(first, await Promise.all(cell));
        clock.step('encode');
      }
    }
  }
  // The tiles' encodes run in libvips' threads while the next cell is compared.
  const webps = await Promise.all(encodes);
  clock.step('encode');
  clock.end();
  return webps;
}

/**
 * One compare of renderOverlayTiles: the overlay of `frame` from its renders (`inputs`), cut into
 * `cuts` (tiles inside it), each tile's encode started (settling to its WebP).
 */
async function overlayCell(
  args: OverlayTilesArgs,
  frame: TileCut,
  cuts: readonly TileCut[],
  inputs: {
    a: RegionRaster | null;
    b: RegionRaster;
    transform: Affine;
    aRect: LevelRect;
    bRect: LevelRect;
  },
  mk: OverlayKind,
  palette: readonly (readonly number[])[],
  step: (name: string) => void,
): Promise<Promise<Uint8Array>[]> {
  const { a, b, transform, aRect, bRect } = inputs;
  // Each side's fills as the 200-dpi compare finds them, for the level's line work (deep-scale.ts).
  const [fillA, fillB] = await Promise.all([
    sheetFills(args.a, aRect, args.aOrigin),
    sheetFills(args.b, bRect, args.bOrigin),
  ]);
  step('fills');
  const lineWork = (r: RegionRaster, rect: LevelRect, fill: SheetFill): GreyImage | undefined => {
    if (!r.lineWork) return undefined;
    lineWhereSheetHasNoFill(r as GreyImage, r.lineWork, rect, fill);
    return { width: r.width, height: r.height, data: r.lineWork };
  };
  const lineWorkA = lineWork(a!, aRect, fillA),
    lineWorkB = lineWork(b, bRect, fillB);
  step('mark');
  const st = await diffStage(a as GreyImage, b as GreyImage, {
    skipRegistration: true,
    transform,
    lineWork: { a: lineWorkA, b: lineWorkB },
  });
  step('stage');
  scaleTolerance(st.diff, args.scale);
  step('tolerance');
  const img = renderOverlayIndexed(st.diff, mk);
  const four = img.bitDepth === 4;
  // RGB of every byte of the indexed rows: its 2 (4-bit) or 4 (2-bit) pixels, in order.
  const per = four ? 2 : 4;
  const lut = new Uint8Array(256 * per * 3);
  for (let v = 0; v < 256; v++)
    for (let j = 0; j < per; j++) {
      const i = four ? (j === 0 ? v >> 4 : v & 15) : (v >> (6 - 2 * j)) & 3;
      lut.set(palette[i] ?? palette[0]!, (v * per + j) * 3);
    }
  step('paint');
  const encodes = cuts.map((c) => {
    const { width, height } = c;
    const dx = c.left - frame.left,
      dy = c.top - frame.top;
    const out = new Uint8Array(width * height * 3);
    for (let y = 0; y < height; y++) {
      const row = (dy + y) * img.rowBytes + 1;
      let o = y * width * 3;
      let x = 0;
      // Pixels before the first whole byte, then whole bytes, then the rest.
      for (; x < width && (dx + x) % per !== 0; x++, o += 3) pixel(row, dx + x, o);
      for (; x + per <= width; x += per, o += per * 3) {
        const from = img.data[row + (dx + x) / per]! * per * 3;
        for (let q = 0; q < per * 3; q++) out[o + q] = lut[from + q]!;
      }
      for (; x < width; x++, o += 3) pixel(row, dx + x, o);
    }
    function pixel(row: number, fx: number, o: number) {
      const byte = img.data[row + Math.floor(fx / per)]!;
      const from = (byte * per + (fx % per)) * 3;
      out[o] = lut[from]!;
      out[o + 1] = lut[from + 1]!;
      out[o + 2] = lut[from + 2]!;
    }
    return encodeTile({ width, height, channels: 3, data: out }).then((b) => new Uint8Array(b));
  });
  step('encode');
  return encodes;
}

/**
 * The aligned-B image's pixels for a rectangle (the viewer's New mode): B rendered in colour at the
 * level's scale and resampled into it through the pair's transform, each channel as the aligned-B
 * image is made (alignGrey: nearest neighbour, paper outside B).
 */
async function alignedBRaster(
  args: OverlayTileArgs,
  step: (name: string) => void = () => {},
): Promise<{ width: number; height: number; channels: 3; data: Uint8Array }> {
  const { b, transform } = await overlayTileInputs(args, 'colour');
  step('render');
  const { width, height } = args.tile;
  const out = new Uint8Array(width * height * 3);
  const plane = new Uint8Array(b.width * b.height);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < plane.length; i++) plane[i] = b.data[i * 3 + c]!;
    const aligned = alignGrey(
      { width: b.width, height: b.height, data: plane },
      transform,
      width,
      height,
    );
    for (let i = 0; i < width * height; i++) out[i * 3 + c] = aligned.data[i]!;
  }
  step('align');
  return { width, height, channels: 3, data: out };
}
