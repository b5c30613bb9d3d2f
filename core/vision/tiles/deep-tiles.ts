import sharp from 'sharp';
import { readFile } from 'node:fs/promises';
import { openInput, type InputDocument } from '../input/document';
import type { PageKind, RegionRaster, RenderColour } from '../input/pdfium.adapter';
import { alignGrey, overlayPalette } from '../compare/diff';
import { diffStage, finishStage, type ImageKind } from '../compare/compare-pipeline.adapter';
import { invertAffine, mapBox, type Affine } from '../compare/register';
import type { GreyImage } from '../types';

// Deep-zoom tiles past a stored image's own resolution (contract §5, added 2026-11-27), rendered
// from the PDF page itself at the scale of the level: lines come out at their width times the
// scale, never as enlarged pixels. Runs in the worker pool (worker-tasks.ts 'tiles.*').
//
//  - Sheet and block tiles: a rectangle of the page (PDFium renderRegion), in colour.
//  - Overlay tiles: the rectangle of A (grey) and the part of B that the pair's transform maps onto
//    it, rendered at the same scale, then the compare pipeline's own two stages (diffStage through
//    the transform scaled to the level, finishStage for the image kind): the same colour rules as
//    the overlay image, fills and lineweight layers included.
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
): Promise<{ width: number; height: number; channels: 1 | 3; data: Uint8Array }> {
  const doc = await openDoc(src);
  if (!doc.renderRegion) throw new Error('Only PDF pages render past their stored resolution.');
  return doc.renderRegion(src.index, { dpi: src.dpi, colour, ...rect });
}

/** WebP of a tile, as the stored levels are encoded (tiles.adapter.ts renderTile). */
function encodeTile(px: { width: number; height: number; channels: 1 | 3; data: Uint8Array }) {
  let p = sharp(px.data, { raw: { width: px.width, height: px.height, channels: px.channels } });
  if (px.channels === 1) p = p.toColourspace('b-w');
  return p.webp({ nearLossless: true, quality: 80, effort: 2 }).toBuffer();
}

/** A sheet's or block's deep tile: `rect` of the page rendered in colour, as WebP. */
export async function renderPageTile(src: PageSource, rect: LevelRect): Promise<Uint8Array> {
  return new Uint8Array(await encodeTile(await renderRect(src, rect, 'colour')));
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
  /**
   * The stored overlay image of that kind under the tile (its pixels at the stored resolution,
   * cut by the tile service from its decoded copy): its fill classes are kept (renderOverlayTile).
   */
  stored?: StoredRegion;
}

/** Pixels of a stored image: the rectangle at (left, top) of it, packed rows. */
export interface StoredRegion {
  left: number;
  top: number;
  width: number;
  height: number;
  channels: number;
  data: Uint8Array;
}

/** The 8 neighbours of a pixel. */
const NEIGHBOURS = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
  [-1, -1],
  [1, -1],
  [-1, 1],
  [1, 1],
] as const;

/** Pixels of B around the tile that are rendered too, so resampling near its edges has them. */
const B_MARGIN = 2;

/**
 * The pieces of an overlay's deep tile before any compare: A's rectangle, B's window, and the
 * transform from B-window pixels to tile pixels (the overlay's transform scaled to the level).
 */
export async function overlayTileInputs(
  args: OverlayTileArgs,
  colourB: RenderColour = 'grey',
): Promise<{ a: GreyImage | null; b: RegionRaster; transform: Affine }> {
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
  const [ra, rb] = await Promise.all([
    // B's aligned image alone (New mode, in colour) needs no A.
    colourB === 'grey' ? renderRect(args.a, aRect, 'grey') : null,
    renderRect(args.b, bRect, colourB),
  ]);
  // B-window pixel q → tile pixel: T_k(q + (bx, by)) − (left, top).
  const transform: Affine = [
    tk[0]!,
    tk[1]!,
    tk[2]! + tk[0]! * bx + tk[1]! * by - left,
    tk[3]!,
    tk[4]!,
    tk[5]! + tk[3]! * bx + tk[4]! * by - top,
  ];
  return { a: ra, b: rb, transform };
}

/**
 * An overlay's deep tile: A and B rendered at the level's scale, compared through the pair's
 * transform by the compare pipeline's stages (the overlay image's colour rules), as WebP.
 */
export async function renderOverlayTile(args: OverlayTileArgs): Promise<Uint8Array> {
  if (args.kind === 'aligned_b') return alignedBTile(args);
  const { a, b, transform } = await overlayTileInputs(args);
  // Line work: the pipeline's masks and colours on the renders at this scale. Fills are told from
  // line work by size in pixels (layers.ts: 8-px cells, 0.2-in areas at 200 dpi), which at 16x
  // would call every line a fill: the fill layers come from the stored overlay instead (below).
  const fills = fillColours(args.kind);
  const st = await diffStage(a!, b, {
    skipRegistration: true,
    transform,
    layers: !(fills && args.stored),
  });
  const fin = await finishStage(st, { images: [args.kind] });
  const png = fin.pngs[args.kind];
  if (!png) throw new Error(`The compare made no ${args.kind} image.`);
  let out = sharp(png);
  if (fills && args.stored) {
    // What each pixel is comes from the stored overlay (200 dpi, its layers split there); its
    // shape from the renders at this scale:
    //  - a fill there: its fill colour, enlarged (fills are areas: only their edges step);
    //  - line work there (ink, removed, added, faint): its colour where the line work of the
    //    renders has ink, paper elsewhere — the line as thin as the PDF draws it;
    //  - paper there, ink here (a line's edge past the 200-dpi pixels): the colour of the line
    //    work stored next to it, if any.
    const { width, height } = args.tile;
    const deep = await sharp(png).removeAlpha().raw().toBuffer();
    const stored = enlarge(args.stored, args.scale, args.tile);
    const out2 = Buffer.alloc(width * height * 3, 255);
    const is = (px: Buffer, o: number, colours: [number, number, number][]) =>
      colours.some((c) => px[o] === c[0] && px[o + 1] === c[1] && px[o + 2] === c[2]);
    const paper = (px: Buffer, o: number) =>
      px[o] === 255 && px[o + 1] === 255 && px[o + 2] === 255;
    const put = (o: number, from: Buffer, f: number) => {
      out2[o] = from[f]!;
      out2[o + 1] = from[f + 1]!;
      out2[o + 2] = from[f + 2]!;
    };
    const k = args.scale;
    for (let y = 0; y < height; y++)
      for (let x = 0; x < width; x++) {
        const o = (y * width + x) * 3;
        if (is(stored, o, fills.fill)) put(o, stored, o);
        else if (paper(deep, o)) continue;
        else if (!paper(stored, o)) put(o, stored, o);
        else {
          // The stored line work one 200-dpi pixel away.
          for (const [dx, dy] of NEIGHBOURS) {
            const nx = x + dx * k,
              ny = y + dy * k;
            if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
            const n = (ny * width + nx) * 3;
            if (!paper(stored, n) && !is(stored, n, fills.fill)) {
              put(o, stored, n);
              break;
            }
          }
        }
      }
    out = sharp(out2, { raw: { width, height, channels: 3 } });
  }
  const webp = await out.webp({ nearLossless: true, quality: 80, effort: 2 }).toBuffer();
  return new Uint8Array(webp);
}

/**
 * The colours of a combined overlay's palette (diff.ts overlayPalette): its fills (fill, fill
 * removed, fill added) and its line work (ink, removed, added). Null for the other images, which
 * draw fills as faint line work.
 */
function fillColours(
  kind: ImageKind,
): { fill: [number, number, number][]; line: [number, number, number][] } | null {
  const palette =
    kind === 'combined' ? 'standard' : kind === 'combined_colorblind' ? 'colorblind' : null;
  if (!palette) return null;
  const p = overlayPalette(palette, 'combined');
  return { fill: p.slice(5, 8), line: p.slice(2, 5) };
}

/** The stored pixels under a tile, enlarged `scale` times (nearest), RGB; paper outside them. */
function enlarge(
  r: StoredRegion,
  scale: number,
  tile: { left: number; top: number; width: number; height: number },
): Buffer {
  const out = Buffer.alloc(tile.width * tile.height * 3, 255);
  const c = r.channels;
  for (let y = 0; y < tile.height; y++) {
    const sy = Math.floor((tile.top + y) / scale) - r.top;
    if (sy < 0 || sy >= r.height) continue;
    for (let x = 0; x < tile.width; x++) {
      const sx = Math.floor((tile.left + x) / scale) - r.left;
      if (sx < 0 || sx >= r.width) continue;
      const i = (sy * r.width + sx) * c;
      const o = (y * tile.width + x) * 3;
      out[o] = r.data[i]!;
      out[o + 1] = r.data[c >= 3 ? i + 1 : i]!;
      out[o + 2] = r.data[c >= 3 ? i + 2 : i]!;
    }
  }
  return out;
}

/**
 * The aligned-B image's deep tile (the viewer's New mode): B rendered in colour at the level's
 * scale and resampled into the tile through the pair's transform, each channel as the aligned-B
 * image is made (alignGrey: nearest neighbour, paper outside B).
 */
async function alignedBTile(args: OverlayTileArgs): Promise<Uint8Array> {
  const { b, transform } = await overlayTileInputs(args, 'colour');
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
  return new Uint8Array(await encodeTile({ width, height, channels: 3, data: out }));
}
