// The worker-side pixel work of a revision comparison (contract §6), run in the worker pool
// (worker-tasks.ts registers it). Pure apart from reading the stored sheet images it is given:
// no database, no writes; images go back as encoded PNG buffers.
//
// Frames and units: A is the older sheet and the output frame. Everything is in sheet pixels,
// origin top-left. `sheet transform` maps B sheet pixels to A sheet pixels; an overlay's frame is
// block A's bbox (overlay pixel (0,0) = A sheet pixel (bbox.x, bbox.y)); an overlay's `transform`
// maps block B's crop pixels to block A's crop pixels (contract §4: B pixels → A pixels).
//
// One registration per sheet pair (both full sheets, coarse to fine: translation, small rotation,
// scale — another paper size prints the same layout at another scale); each block pair is then
// diffed through it, and re-registered on its own only when the sheet transform leaves it
// visibly different (a view moved on the sheet), keeping whichever explains the ink better.
// The pixel work is compare-pipeline.adapter's two stages: diffStage packs the block's window straight
// from the sheet images (no crop copies on the main path), finishStage renders and encodes the five
// images of the chosen alignment only (palette-PNG overlays deflated on libuv threads while JS renders
// the next; aligned B copied from B by row segments and encoded by libvips).
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import type { GreyImage } from '../vision/types';
import type { CompareResult } from '../vision/compare/compare';
import {
  diffStage,
  finishStage,
  IMAGE_KINDS,
  reserveStageBuffers,
  type DiffStage,
} from '../vision/compare/compare-pipeline.adapter';
import { CompareBuffers } from '../vision/compare/buffers';
import { ANNOTATION_SHARE, findLayerRegions, STYLE_SHARE } from '../vision/compare/regions';
import { registerImages, invertAffine, mapBox, type Affine } from '../vision/compare/register';
import { isNoise, reportedScore } from '../vision/compare/score';
import { decodeGrey } from '../vision/compare/encode.adapter';
import { alignRgb, encodeRgbPng } from '../vision/compare/align-colour';
import { pairBlocks, type BlockBox, type BlockInfo, type BlockPair } from '../services/pairing';

export interface SheetSource {
  /** Local path of the stored sheet image. */
  path: string;
  /** The sheet's PNG bytes, read instead of `path` (the worker warm-up: nothing on disk). */
  png?: Uint8Array;
  /**
   * Local path of the sheet's line-work image (a PDF page's line work drawn from its objects,
   * ingest-page.ts): fills found by image analysis leave that line work alone (layers.ts
   * keepLineWork). Absent for sheets from images and scans, and for sheets processed before it was
   * kept.
   */
  lineWork?: string;
}

/** The line-work images of both sheets (grey: 0 line work), each undefined when it has none. */
function decodeLineWork(a: SheetSource, b: SheetSource) {
  return Promise.all([
    a.lineWork ? decodeGrey(a.lineWork) : undefined,
    b.lineWork ? decodeGrey(b.lineWork) : undefined,
  ]);
}

/** The sheet images of a pair with their line work. */
interface SheetImages {
  A: GreyImage;
  B: GreyImage;
  LA: GreyImage | undefined;
  LB: GreyImage | undefined;
}

/** What libvips decodes for a sheet: its bytes when given, else its file. */
function sheetInput(src: SheetSource): string | Buffer {
  return src.png ? Buffer.from(src.png.buffer, src.png.byteOffset, src.png.byteLength) : src.path;
}

export interface ComparePairArgs {
  a: SheetSource;
  b: SheetSource;
  blocksA: BlockInfo[];
  blocksB: BlockInfo[];
  /** Block pairs chosen by the request (a Block comparison): registered block to block, no sheet pairing. */
  given?: { block_a_id: string; block_b_id: string }[];
  /** "blockA:blockB" pairs an earlier attempt already stored: paired again, not rendered again. */
  skip: string[];
}

export interface AlignmentOut {
  method: string;
  confidence: number;
  residual_px: number;
  /** Present and true when the alignment is not trustworthy: the overlay says so instead of asserting it. */
  low_confidence?: boolean;
  warning?: string;
}

export interface OverlayOut {
  block_a_id: string;
  block_b_id: string;
  pair: BlockPair;
  width: number;
  height: number;
  /** Block B crop pixels → block A crop (overlay) pixels. */
  transform: number[];
  alignment: AlignmentOut;
  stats: CompareResult['stats'];
  score: number;
  region_count: number;
  png: {
    combined: Uint8Array;
    combined_colorblind: Uint8Array;
    addition: Uint8Array;
    deletion: Uint8Array;
    aligned_b: Uint8Array;
  };
}

export interface ComparePairOut {
  sheet: { transform: number[]; method: string; confidence: number; residual_px: number } | null;
  pairs: BlockPair[];
  overlays: OverlayOut[];
  timings_ms: Record<string, number>;
}

/** Alignments below this confidence are reported as low confidence (regions are not trusted). */
export const LOW_CONFIDENCE = 0.3;
/** A block pair scoring below this after the sheet transform is registered again on its own. */
const REFINE_BELOW = 0.97;

const round = (v: number, d = 6): number => Math.round(v * 10 ** d) / 10 ** d;

/** Copies the part of `img` inside `box` (clipped); white where the box leaves the image. */
export function cropGrey(img: GreyImage, box: BlockBox): GreyImage {
  const w = Math.max(1, Math.round(box.width));
  const h = Math.max(1, Math.round(box.height));
  const x0 = Math.round(box.x);
  const y0 = Math.round(box.y);
  const out = new Uint8Array(w * h).fill(255);
  const sx0 = Math.max(0, x0);
  const sx1 = Math.min(img.width, x0 + w);
  if (sx1 > sx0) {
    for (let y = Math.max(0, y0); y < Math.min(img.height, y0 + h); y++) {
      out.set(
        img.data.subarray(y * img.width + sx0, y * img.width + sx1),
        (y - y0) * w + (sx0 - x0),
      );
    }
  }
  return { width: w, height: h, data: out };
}

/** Whether `box` is exactly the whole of `img` (sheet pixels). */
function isWhole(box: BlockBox, img: { width: number; height: number }): boolean {
  return box.x === 0 && box.y === 0 && box.width === img.width && box.height === img.height;
}

/** The smallest box holding both (integer pixels). */
function boxUnion(a: BlockBox, b: BlockBox): BlockBox {
  const x0 = Math.floor(Math.min(a.x, b.x));
  const y0 = Math.floor(Math.min(a.y, b.y));
  const x1 = Math.ceil(Math.max(a.x + a.width, b.x + b.width));
  const y1 = Math.ceil(Math.max(a.y + a.height, b.y + b.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** `b` clipped to the image (at least 1 x 1 px). */
function clipBox(b: BlockBox, img: { width: number; height: number }): BlockBox {
  const x0 = Math.max(0, Math.min(img.width - 1, Math.floor(b.x)));
  const y0 = Math.max(0, Math.min(img.height - 1, Math.floor(b.y)));
  const x1 = Math.max(x0 + 1, Math.min(img.width, Math.ceil(b.x + b.width)));
  const y1 = Math.max(y0 + 1, Math.min(img.height, Math.ceil(b.y + b.height)));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** t ∘ translate(dx, dy): applies the shift first. */
function afterShift(t: readonly number[], dx: number, dy: number): Affine {
  return [
    t[0]!,
    t[1]!,
    t[2]! + t[0]! * dx + t[1]! * dy,
    t[3]!,
    t[4]!,
    t[5]! + t[3]! * dx + t[4]! * dy,
  ];
}

/** translate(dx, dy) ∘ t: shifts the result. */
function thenShift(t: readonly number[], dx: number, dy: number): Affine {
  return [t[0]!, t[1]!, t[2]! + dx, t[3]!, t[4]!, t[5]! + dy];
}

/** The box of B sheet pixels that `sheetT` maps onto A's box, with a margin, clipped to B. */
export function sourceBox(
  aBox: BlockBox,
  sheetT: readonly number[],
  bw: number,
  bh: number,
  margin = 24,
): BlockBox {
  const inv = invertAffine(sheetT);
  const pts = [
    [aBox.x, aBox.y],
    [aBox.x + aBox.width, aBox.y],
    [aBox.x, aBox.y + aBox.height],
    [aBox.x + aBox.width, aBox.y + aBox.height],
  ].map(([x, y]) => [inv[0] * x! + inv[1] * y! + inv[2], inv[3] * x! + inv[4] * y! + inv[5]]);
  const x0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[0]!)) - margin));
  const y0 = Math.max(0, Math.floor(Math.min(...pts.map((p) => p[1]!)) - margin));
  const x1 = Math.min(bw, Math.ceil(Math.max(...pts.map((p) => p[0]!)) + margin));
  const y1 = Math.min(bh, Math.ceil(Math.max(...pts.map((p) => p[1]!)) + margin));
  if (x1 <= x0 || y1 <= y0) return { x: 0, y: 0, width: 1, height: 1 };
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

// Buffers kept across the compares of this worker thread (vision/compare/buffers.ts): fresh sheet-size
// arrays (masks, overlay indices, aligned B) cost tens of ms of first-touch page faults per compare;
// kept ones are already mapped (bench/compare: kept buffers). What a compare leaves in them is valid
// only until the next compare given them, so only stages whose results are consumed before the next one
// use them: the sheet-transform diff of each block pair (never alive beside another buffered stage)
// and the finish stage that encodes its images. They are let go after a minute without a compare.
const BUFFERS_IDLE_MS = 60_000;
let keptBuffers: CompareBuffers | null = null;
let releaseTimer: ReturnType<typeof setTimeout> | null = null;

/** This thread's kept buffers, held until BUFFERS_IDLE_MS after the last call. */
function workerBuffers(): CompareBuffers {
  keptBuffers ??= new CompareBuffers();
  if (releaseTimer) clearTimeout(releaseTimer);
  releaseTimer = setTimeout(() => {
    keptBuffers?.clear();
    keptBuffers = null;
    releaseTimer = null;
  }, BUFFERS_IDLE_MS);
  releaseTimer.unref();
  return keptBuffers;
}

/**
 * Lets this thread's kept buffers go now (the end of a worker's compare warm-up: ~45 MB a worker
 * at 200 dpi that its ingest tasks would otherwise hold beside their PDFium heap until the idle
 * timer; the first compare maps them again).
 */
export function releaseWorkerBuffers(): void {
  if (releaseTimer) clearTimeout(releaseTimer);
  releaseTimer = null;
  keptBuffers?.clear();
  keptBuffers = null;
}

/** Whether this thread keeps compare buffers now (releaseWorkerBuffers, the idle timer). */
export function workerBuffersKept(): boolean {
  return keptBuffers !== null;
}

/** Width and height of the largest of `blocks` (by area). */
function largestBlock(blocks: BlockInfo[]): { width: number; height: number } {
  let best = { width: 0, height: 0 };
  for (const b of blocks) {
    const width = Math.round(b.bbox.width),
      height = Math.round(b.bbox.height);
    if (width * height > best.width * best.height) best = { width, height };
  }
  return best;
}

/** The diff of A's block against B, through the sheet transform: windows of both sheets, no copies. */
function diffThroughSheet(
  { A, B, LA, LB }: SheetImages,
  aBox: BlockBox,
  sheetT: readonly number[],
  buffers?: CompareBuffers,
  encodeAligned = false,
): Promise<DiffStage> {
  const src = sourceBox(aBox, sheetT, B.width, B.height);
  // B window px → A window px: shift into B's sheet, through the sheet transform, shift into A's box.
  const t = thenShift(afterShift(sheetT, src.x, src.y), -aBox.x, -aBox.y);
  return diffStage(A, B, {
    skipRegistration: true,
    transform: t,
    windowA: aBox,
    windowB: src,
    lineWork: { a: LA, b: LB },
    ...(buffers ? { buffers } : {}),
    ...(encodeAligned ? { encodeAlignedEarly: 1 } : {}),
  });
}

export async function compareBlockPairs(
  args: ComparePairArgs,
  opts: { keepBuffers?: boolean } = {},
): Promise<ComparePairOut> {
  const buffers = opts.keepBuffers === false ? undefined : workerBuffers();
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (k: string) => {
    const t = performance.now();
    timings[k] = Math.round((timings[k] ?? 0) + t - t0);
    t0 = t;
  };
  // Both sheets at once (two libvips pipelines on the libuv pool).
  // B's colour pixels are kept when its sheet is stored in colour: its aligned image is shown in the
  // viewer's New mode (align-colour.ts); the comparison reads the grey only.
  const decoded = Promise.all([
    decodeGrey(sheetInput(args.a)),
    decodeGrey(sheetInput(args.b), { keepRgb: true }),
    decodeLineWork(args.a, args.b),
  ]);
  // Meanwhile the kept buffers grow to what the largest block needs, so a first compare takes those
  // page faults now, not in its pixel stages.
  if (buffers) reserveStageBuffers(buffers, largestBlock(args.blocksA), [...IMAGE_KINDS]);
  const [A, B, [LA, LB]] = await decoded;
  const images: SheetImages = { A, B, LA, LB };
  lap('decode');
  const byIdA = new Map(args.blocksA.map((b) => [b.id, b]));
  const byIdB = new Map(args.blocksB.map((b) => [b.id, b]));

  let sheet: ComparePairOut['sheet'] = null;
  let pairs: BlockPair[];
  if (args.given) {
    pairs = args.given.map((g) => ({ ...g, method: 'given' as const, confidence: 1 }));
  } else {
    // The ink levels are box means made on this thread (WebAssembly SIMD, ~4 ms a sheet at 200 dpi):
    // registerImages makes them.
    const reg = registerImages(A, B);
    lap('register');
    sheet = {
      transform: reg.transform.map((v) => round(v)),
      method: reg.method,
      confidence: round(reg.confidence, 3),
      residual_px: round(reg.residual_px, 3),
    };
    pairs = pairBlocks(args.blocksA, args.blocksB, reg.transform, Math.hypot(A.width, A.height));
  }
  const skip = new Set(args.skip);
  const overlays: OverlayOut[] = [];
  for (const pair of pairs) {
    if (skip.has(`${pair.block_a_id}:${pair.block_b_id}`)) continue;
    const ba = byIdA.get(pair.block_a_id)!;
    const bb = byIdB.get(pair.block_b_id)!;
    const aBox = ba.bbox;
    let best: { st: DiffStage; sheetT: Affine; alignment: AlignmentOut } | undefined;
    let sheetSt: DiffStage | undefined;
    if (sheet) {
      // Aligned B's PNG (grey: not when B is shown in colour) encodes on the other core meanwhile.
      const st = await diffThroughSheet(images, aBox, sheet.transform, buffers, !B.rgb);
      sheetSt = st;
      best = {
        st,
        sheetT: sheet.transform as Affine,
        alignment: {
          method: `sheet:${sheet.method}`,
          confidence: sheet.confidence,
          residual_px: sheet.residual_px,
        },
      };
      lap('diff');
    }
    // Register the block on its own: its B region against A's crop — where the sheet transform puts
    // A's box in B, and where block B itself is (a view moved on the sheet further than its own size
    // is found there, not in the empty place it left); without a sheet transform, block B's box.
    // Registration needs whole images, so these are copies.
    const src = sheet
      ? boxUnion(
          sourceBox(aBox, sheet.transform, B.width, B.height, 48),
          clipBox(
            {
              x: bb.bbox.x - 48,
              y: bb.bbox.y - 48,
              width: bb.bbox.width + 96,
              height: bb.bbox.height + 96,
            },
            B,
          ),
        )
      : { ...bb.bbox };
    // A block that is all of A, read from all of B, would repeat the sheet registration on copies of
    // the same two images (same answer, ~100 ms at 200 DPI): not run.
    const repeatsSheet = best !== undefined && isWhole(aBox, A) && isWhole(src, B);
    if (
      !repeatsSheet &&
      (!best || best.st.diff.score < REFINE_BELOW || best.alignment.confidence < LOW_CONFIDENCE)
    ) {
      const st = await diffStage(cropGrey(A, aBox), cropGrey(B, src), {
        lineWork: { a: LA && cropGrey(LA, aBox), b: LB && cropGrey(LB, src) },
      });
      lap('refine');
      const sheetT = thenShift(afterShift(st.transform, -src.x, -src.y), aBox.x, aBox.y);
      const better =
        !best ||
        (st.alignment.confidence >= 0.5 && st.diff.score > best.st.diff.score + 0.01) ||
        (best.alignment.confidence < LOW_CONFIDENCE &&
          st.alignment.confidence > best.alignment.confidence);
      if (better)
        best = {
          st,
          sheetT,
          alignment: {
            method: `block:${st.alignment.method}`,
            confidence: round(st.alignment.confidence, 3),
            residual_px: round(st.alignment.residual_px, 3),
          },
        };
    }
    const { st, sheetT, alignment } = best!;
    // A sheet stage not chosen: its early aligned-B encode settles before its buffers are reused.
    if (sheetSt && sheetSt !== st) await sheetSt.alignedPng?.png.catch(() => undefined);
    if (alignment.confidence < LOW_CONFIDENCE) {
      alignment.low_confidence = true;
      alignment.warning = `Poor alignment (confidence ${alignment.confidence.toFixed(2)}, residual ${alignment.residual_px.toFixed(1)} px): these may not show the same drawing, or the alignment is wrong. Check the overlay by eye; no change regions are reported from it, so "no changes" cannot be concluded.`;
    }
    // Block B crop px → overlay px.
    const blockT = thenShift(afterShift(sheetT, bb.bbox.x, bb.bbox.y), -aBox.x, -aBox.y);
    // The five images of the chosen alignment only; regions are found while the last encodes run.
    const fin = await finishStage(st, {
      images: [...IMAGE_KINDS],
      ...(buffers ? { buffers } : {}),
    });
    // Own copies: the worker moves each one's whole ArrayBuffer back to the main thread.
    const u8 = (b: Buffer | undefined) => new Uint8Array(b!);
    const png = {
      combined: u8(fin.pngs.combined),
      combined_colorblind: u8(fin.pngs.combined_colorblind),
      addition: u8(fin.pngs.additions),
      deletion: u8(fin.pngs.deletions),
      aligned_b: u8(fin.pngs.aligned_b),
    };
    if (B.rgb) {
      // B in colour, through the same transform into the overlay's frame (the New mode's image).
      const rgb = { width: B.width, height: B.height, data: B.rgb };
      const aligned = alignRgb(rgb, thenShift(sheetT, -aBox.x, -aBox.y), st.width, st.height);
      png.aligned_b = u8(await encodeRgbPng(aligned));
      lap('alignedColour');
    }
    lap('encode');
    overlays.push({
      block_a_id: pair.block_a_id,
      block_b_id: pair.block_b_id,
      pair,
      width: st.width,
      height: st.height,
      transform: blockT.map((v) => round(v)),
      alignment,
      stats: st.diff.stats,
      // A real change never reads 1.000 (score.ts); change detection applies the same rule to the
      // regions it stores.
      score: round(
        reportedScore(
          st.diff.score,
          !alignment.low_confidence && fin.regions.some((g) => !isNoise(g)),
        ),
        6,
      ),
      region_count: fin.regions.length,
      png,
    });
  }
  return { sheet, pairs, overlays, timings_ms: timings };
}

export interface RegionsArgs {
  a: SheetSource;
  b: SheetSource;
  /** Block A's bbox (the overlay frame), A sheet pixels. */
  aBox: BlockBox;
  /** B sheet pixels → A sheet pixels, as the overlay was made. */
  sheetTransform: number[];
  alignmentConfidence: number;
  /**
   * Whether the overlay was made through the sheet transform (true) or registered on its own (a
   * view that may have moved: its changes are sought in its box with a margin). Default true, or
   * what `siblings[self]` says.
   */
  sheetAligned?: boolean;
  /**
   * Given for a whole-sheet overlay (block A is the Sheet block): the views of the same sheet pair
   * that were registered on their own, each with its box in A and its own transform (B sheet px →
   * A sheet px). A view whose own transform puts it elsewhere than the sheet transform does has moved
   * on the sheet: the whole-sheet overlay reports the move as one `moved` change, plus the changes
   * inside the view found through its own registration — not a removal and an addition of all of it.
   */
  views?: { box: BlockBox; transform: number[]; confidence: number }[];
  /**
   * Comparisons made before sheets had a Sheet block: the overlays of this sheet pair in the same
   * comparison, this one included (A sheet pixels of their block A, and whether each was made
   * through the sheet transform). With them each change goes to exactly one overlay, whole — also a
   * change straddling a block box or lying outside every block (see assignRegion). Without them (and
   * without `views`) the changes touching `aBox` are reported, whole, not cut at the box: a view's
   * changes as seen through it; the whole-sheet overlay reports them all.
   */
  siblings?: { box: BlockBox; sheetAligned: boolean }[];
  /** This overlay's index in `siblings`. */
  self?: number;
}

export interface RegionOut {
  /** Overlay pixels: may reach outside the overlay's frame when the change does. */
  bbox: BlockBox;
  area_px: number;
  added_px: number;
  removed_px: number;
  kind: 'added' | 'removed' | 'modified' | 'moved';
  confidence: number;
  /**
   * B sheet px → A sheet px under which this change was found, when not the overlay's own: a change
   * inside a view that moved, found through that view's registration (its text on B is there).
   */
  transform?: number[];
  /** A view that moved on the sheet: its box in A (A sheet px) and how far it moved (A sheet px). */
  move?: { view: BlockBox; dx: number; dy: number };
  /**
   * 'fill': a change of the fill layer (tones, solid areas); 'style': lineweight or pen shade;
   * 'annotation': drawn by the pages' annotations (the architect's clouds, callouts and markups).
   */
  layer?: 'fill' | 'style' | 'annotation';
}

function overlapArea(a: BlockBox, b: BlockBox): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

function boxGap(a: BlockBox, b: BlockBox): number {
  const gx = Math.max(0, Math.max(a.x, b.x) - Math.min(a.x + a.width, b.x + b.width));
  const gy = Math.max(0, Math.max(a.y, b.y) - Math.min(a.y + a.height, b.y + b.height));
  return Math.hypot(gx, gy);
}

/**
 * Which overlay reports a change region (A sheet pixels): the block box it overlaps most (a change
 * straddling two boxes is reported once, by the one holding more of it); a change outside every box
 * goes to the nearest box among the sheet-aligned overlays (a block registered on its own may have
 * moved, so its transform says nothing about the sheet around it). Ties go to the lower index.
 * Returns the index in `boxes`, or −1 when there is no box.
 */
export function assignRegion(
  region: BlockBox,
  boxes: { box: BlockBox; sheetAligned: boolean }[],
): number {
  let best = -1,
    bestArea = 0;
  boxes.forEach((b, i) => {
    const a = overlapArea(region, b.box);
    if (a > bestArea) {
      bestArea = a;
      best = i;
    }
  });
  if (best >= 0) return best;
  const pool = boxes.some((b) => b.sheetAligned) ? boxes.filter((b) => b.sheetAligned) : boxes;
  let bestGap = Infinity;
  for (const b of pool) {
    const g = boxGap(region, b.box);
    if (g < bestGap) {
      bestGap = g;
      best = boxes.indexOf(b);
    }
  }
  return best;
}

/** Margin (A sheet px) around a block's box compared when it was registered on its own. */
const OWN_MARGIN = 96;
/**
 * A view registered on its own has moved on the sheet when its own transform puts its centre this
 * far (A sheet px) from where the sheet transform does; below it, the two alignments differ by the
 * registration's own play (a sheet drawn at another scale, a slightly skewed scan).
 */
export const MOVED_MIN_PX = 12;

/** `t` applied to point (x, y). */
function apply(t: readonly number[], x: number, y: number): [number, number] {
  return [t[0]! * x + t[1]! * y + t[2]!, t[3]! * x + t[4]! * y + t[5]!];
}

/** t ∘ u: u first. */
function compose(t: readonly number[], u: readonly number[]): Affine {
  return [
    t[0]! * u[0]! + t[1]! * u[3]!,
    t[0]! * u[1]! + t[1]! * u[4]!,
    t[0]! * u[2]! + t[1]! * u[5]! + t[2]!,
    t[3]! * u[0]! + t[4]! * u[3]!,
    t[3]! * u[1]! + t[4]! * u[4]!,
    t[3]! * u[2]! + t[4]! * u[5]! + t[5]!,
  ];
}

function grow(b: BlockBox, by: number): BlockBox {
  return { x: b.x - by, y: b.y - by, width: b.width + 2 * by, height: b.height + 2 * by };
}

function contains(b: BlockBox, x: number, y: number): boolean {
  return x >= b.x && x <= b.x + b.width && y >= b.y && y <= b.y + b.height;
}

/** A change region found on the sheet, A sheet pixels. */
interface SheetRegion {
  box: BlockBox;
  area_px: number;
  added_px: number;
  removed_px: number;
  kind: RegionOut['kind'];
  confidence: number;
  transform?: number[];
  move?: RegionOut['move'];
  layer?: RegionOut['layer'];
}

// The region lists of the last few (sheet pair, transform, window) diffs of this worker: the analyze
// jobs of one sheet pair come one after another and, through the sheet transform, all need the same
// whole-sheet regions; a whole-sheet overlay also needs those of its moved views.
const REGION_CACHE_SIZE = 6;
const regionCache = new Map<string, { regions: SheetRegion[]; score: number }>();

/**
 * The change regions of A against B through `transform` (B sheet px → A sheet px), on the whole
 * sheet or, when `box` is given, in that box with a margin (A sheet pixels).
 */
async function regionsThrough(
  images: () => Promise<SheetImages>,
  stamps: string,
  transform: readonly number[],
  confidence: number,
  box: BlockBox | null,
): Promise<{ regions: SheetRegion[]; score: number }> {
  const key = JSON.stringify([stamps, transform.map((v) => round(v)), round(confidence, 3), box]);
  const hit = regionCache.get(key);
  if (hit) {
    regionCache.delete(key);
    regionCache.set(key, hit);
    return hit;
  }
  const { A, B, LA, LB } = await images();
  const win: BlockBox = box
    ? {
        x: Math.round(box.x) - OWN_MARGIN,
        y: Math.round(box.y) - OWN_MARGIN,
        width: Math.round(box.width) + 2 * OWN_MARGIN,
        height: Math.round(box.height) + 2 * OWN_MARGIN,
      }
    : { x: 0, y: 0, width: A.width, height: A.height };
  const st = await diffStage(A, B, {
    skipRegistration: true,
    transform: thenShift(transform, -win.x, -win.y),
    windowA: win,
    lineWork: { a: LA, b: LB },
  });
  // Both layers (vision/compare/layers.ts): line work, and fills found apart; a line-work region that is
  // mostly lineweight or pen shade is a style change.
  const regions = findLayerRegions(st.diff, { alignmentConfidence: confidence }).map((g) => ({
    box: { x: g.bbox.x + win.x, y: g.bbox.y + win.y, width: g.bbox.width, height: g.bbox.height },
    area_px: g.area_px,
    added_px: g.added_px,
    removed_px: g.removed_px,
    kind: g.kind,
    confidence: round(g.confidence, 3),
    ...(g.layer === 'fill'
      ? { layer: 'fill' as const }
      : (g.annotation_share ?? 0) >= ANNOTATION_SHARE
        ? { layer: 'annotation' as const }
        : (g.style_share ?? 0) >= STYLE_SHARE
          ? { layer: 'style' as const }
          : {}),
  }));
  const found = { regions, score: st.diff.score };
  regionCache.set(key, found);
  while (regionCache.size > REGION_CACHE_SIZE)
    regionCache.delete(regionCache.keys().next().value as string);
  return found;
}

/**
 * The whole-sheet overlay's changes: every region of the sheet, except that a view which moved on the
 * sheet is one `moved` change (the regions its old and new places leave through the sheet transform,
 * merged) plus the changes inside it, found through its own registration where it was in A.
 */
async function wholeSheetRegions(
  sheetRegions: SheetRegion[],
  args: RegionsArgs & { views: NonNullable<RegionsArgs['views']> },
  images: () => Promise<SheetImages>,
  stamps: string,
  confidence: number,
): Promise<SheetRegion[]> {
  let rest = sheetRegions;
  const moves: SheetRegion[] = [];
  for (const v of args.views) {
    if (!(v.confidence >= LOW_CONFIDENCE)) continue;
    // Where the view's content of B lands in the whole-sheet overlay: B's place of it (the inverse of
    // its own transform) taken through the sheet transform.
    const toOverlay = compose(args.sheetTransform, invertAffine(v.transform));
    const cx = v.box.x + v.box.width / 2;
    const cy = v.box.y + v.box.height / 2;
    const [nx, ny] = apply(toOverlay, cx, cy);
    const dx = nx - cx;
    const dy = ny - cy;
    if (Math.hypot(dx, dy) < MOVED_MIN_PX) continue;
    const from = grow(v.box, 16);
    const to = grow(mapBox(toOverlay, v.box), 16);
    const mine = rest.filter((r) => {
      const rx = r.box.x + r.box.width / 2;
      const ry = r.box.y + r.box.height / 2;
      return contains(from, rx, ry) || contains(to, rx, ry);
    });
    if (mine.length === 0) continue;
    rest = rest.filter((r) => !mine.includes(r));
    const x0 = Math.min(...mine.map((r) => r.box.x));
    const y0 = Math.min(...mine.map((r) => r.box.y));
    const x1 = Math.max(...mine.map((r) => r.box.x + r.box.width));
    const y1 = Math.max(...mine.map((r) => r.box.y + r.box.height));
    const sum = (k: 'area_px' | 'added_px' | 'removed_px') => mine.reduce((n, r) => n + r[k], 0);
    moves.push({
      box: { x: x0, y: y0, width: x1 - x0, height: y1 - y0 },
      area_px: sum('area_px'),
      added_px: sum('added_px'),
      removed_px: sum('removed_px'),
      kind: 'moved',
      confidence: round(Math.min(confidence, v.confidence), 3),
      move: { view: v.box, dx: round(dx, 1), dy: round(dy, 1) },
    });
    const own = await regionsThrough(
      images,
      stamps,
      v.transform,
      Math.max(LOW_CONFIDENCE, Math.min(1, v.confidence)),
      v.box,
    );
    for (const r of own.regions)
      if (overlapArea(r.box, v.box) > 0) moves.push({ ...r, transform: v.transform });
  }
  return [...rest, ...moves];
}

/**
 * The engine's change regions for a stored overlay (none when the alignment is not trusted), found
 * on the whole sheet (or, for a block registered on its own, its box with a margin) so a change is
 * never cut at the block box. Which of them the overlay reports: see RegionsArgs.
 */
export async function changeRegions(
  args: RegionsArgs,
): Promise<{ regions: RegionOut[]; score: number }> {
  if (args.alignmentConfidence < LOW_CONFIDENCE) return { regions: [], score: 0 };
  const conf = Math.max(LOW_CONFIDENCE, Math.min(1, args.alignmentConfidence));
  const me = args.siblings && args.self !== undefined ? args.siblings[args.self] : undefined;
  const sheetAligned = args.sheetAligned ?? (me ? me.sheetAligned : true);
  // The files' size and mtime are in the key: a re-processed sheet may be written to the same path.
  // Sheets given as bytes are known by their digest.
  const stamp = (src: SheetSource) => {
    // With or without its line work, a sheet's regions differ.
    const lw = src.lineWork ? `+${src.lineWork}` : '';
    if (src.png) return `png:${createHash('sha256').update(src.png).digest('base64')}${lw}`;
    const st = statSync(src.path);
    return `${src.path}:${st.size}:${st.mtimeMs}${lw}`;
  };
  const stamps = `${stamp(args.a)}|${stamp(args.b)}`;
  let decoded: Promise<SheetImages> | undefined;
  const images = () =>
    (decoded ??= Promise.all([
      decodeGrey(sheetInput(args.a)),
      decodeGrey(sheetInput(args.b)),
      decodeLineWork(args.a, args.b),
    ]).then(([A, B, [LA, LB]]) => ({ A, B, LA, LB })));
  const found = await regionsThrough(
    images,
    stamps,
    args.sheetTransform,
    conf,
    sheetAligned ? null : args.aBox,
  );
  let mine: SheetRegion[];
  if (args.views)
    mine = await wholeSheetRegions(
      found.regions,
      { ...args, views: args.views },
      images,
      stamps,
      conf,
    );
  else if (args.siblings && args.self !== undefined)
    mine = found.regions.filter((g) => assignRegion(g.box, args.siblings!) === args.self);
  else mine = found.regions.filter((g) => overlapArea(g.box, args.aBox) > 0);
  return {
    score: found.score,
    regions: mine.map((g) => ({
      // A sheet px → overlay px (the overlay's frame is block A's box).
      bbox: {
        x: g.box.x - Math.round(args.aBox.x),
        y: g.box.y - Math.round(args.aBox.y),
        width: g.box.width,
        height: g.box.height,
      },
      area_px: g.area_px,
      added_px: g.added_px,
      removed_px: g.removed_px,
      kind: g.kind,
      confidence: g.confidence,
      ...(g.transform ? { transform: g.transform.map((v) => round(v)) } : {}),
      ...(g.move ? { move: g.move } : {}),
      ...(g.layer ? { layer: g.layer } : {}),
    })),
  };
}
