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
import type { GreyImage } from '../vision/types';
import { compareImages, type CompareResult } from '../vision/compare/compare';
import { renderOverlay } from '../vision/compare/diff';
import { registerImages, invertAffine, type Affine } from '../vision/compare/register';
import { decodeGrey, encodeGreyPng, encodeRgbPng } from '../vision/compare/encode.adapter';
import { pairBlocks, type BlockBox, type BlockInfo, type BlockPair } from '../services/pairing';

export interface SheetSource {
  /** Local path of the stored sheet image. */
  path: string;
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

/** The diff of A's block against B, through the sheet transform (B sheet px → A sheet px). */
function diffThroughSheet(
  A: GreyImage,
  B: GreyImage,
  aBox: BlockBox,
  sheetT: readonly number[],
  withImages: boolean,
  alignmentConfidence = 1,
) {
  const aCrop = cropGrey(A, aBox);
  const src = sourceBox(aBox, sheetT, B.width, B.height);
  const bCrop = cropGrey(B, src);
  // B crop px → A crop px: shift into B's sheet, through the sheet transform, shift into A's crop.
  const t = thenShift(afterShift(sheetT, src.x, src.y), -aBox.x, -aBox.y);
  const r = compareImages(aCrop, bCrop, {
    skipRegistration: true,
    transform: t,
    overlays: withImages ? ['combined', 'additions', 'deletions'] : [],
    alignedB: withImages,
    regions: { alignmentConfidence },
  });
  return { r, aCrop, bCrop, src };
}

export async function compareBlockPairs(args: ComparePairArgs): Promise<ComparePairOut> {
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (k: string) => {
    const t = performance.now();
    timings[k] = Math.round((timings[k] ?? 0) + t - t0);
    t0 = t;
  };
  const A = await decodeGrey(args.a.path);
  const B = await decodeGrey(args.b.path);
  lap('decode');
  const byIdA = new Map(args.blocksA.map((b) => [b.id, b]));
  const byIdB = new Map(args.blocksB.map((b) => [b.id, b]));

  let sheet: ComparePairOut['sheet'] = null;
  let pairs: BlockPair[];
  if (args.given) {
    pairs = args.given.map((g) => ({ ...g, method: 'given' as const, confidence: 1 }));
  } else {
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
    let best: { r: CompareResult; sheetT: Affine; alignment: AlignmentOut } | undefined;
    if (sheet) {
      const d = diffThroughSheet(A, B, aBox, sheet.transform, true);
      best = {
        r: d.r,
        sheetT: sheet.transform as Affine,
        alignment: {
          method: `sheet:${sheet.method}`,
          confidence: sheet.confidence,
          residual_px: sheet.residual_px,
        },
      };
      lap('diff');
    }
    if (!best || best.r.score < REFINE_BELOW || best.alignment.confidence < LOW_CONFIDENCE) {
      // Register the block on its own: its B region (through the sheet transform when known, else
      // block B's own box) against A's crop.
      const src = sheet ? sourceBox(aBox, sheet.transform, B.width, B.height, 48) : { ...bb.bbox };
      const aCrop = cropGrey(A, aBox);
      const bCrop = cropGrey(B, src);
      const r = compareImages(aCrop, bCrop, {
        overlays: ['combined', 'additions', 'deletions'],
        alignedB: true,
      });
      lap('refine');
      const sheetT = thenShift(afterShift(r.transform, -src.x, -src.y), aBox.x, aBox.y);
      const better =
        !best ||
        (r.alignment.confidence >= 0.5 && r.score > best.r.score + 0.01) ||
        (best.alignment.confidence < LOW_CONFIDENCE &&
          r.alignment.confidence > best.alignment.confidence);
      if (better)
        best = {
          r,
          sheetT,
          alignment: {
            method: `block:${r.alignment.method}`,
            confidence: round(r.alignment.confidence, 3),
            residual_px: round(r.alignment.residual_px, 3),
          },
        };
    }
    const { r, sheetT, alignment } = best!;
    if (alignment.confidence < LOW_CONFIDENCE) {
      alignment.low_confidence = true;
      alignment.warning =
        'Low alignment confidence: these blocks may not show the same drawing, or the alignment is wrong. Check the overlay by eye; no change regions are reported from it.';
    }
    // Block B crop px → overlay px.
    const blockT = thenShift(afterShift(sheetT, bb.bbox.x, bb.bbox.y), -aBox.x, -aBox.y);
    const png = {
      combined: new Uint8Array(await encodeRgbPng(r.overlays.combined!)),
      combined_colorblind: new Uint8Array(
        await encodeRgbPng(renderOverlay(r.diff, 'combined', 'colorblind')),
      ),
      addition: new Uint8Array(await encodeRgbPng(r.overlays.additions!)),
      deletion: new Uint8Array(await encodeRgbPng(r.overlays.deletions!)),
      aligned_b: new Uint8Array(await encodeGreyPng(r.alignedB!)),
    };
    lap('encode');
    overlays.push({
      block_a_id: pair.block_a_id,
      block_b_id: pair.block_b_id,
      pair,
      width: r.width,
      height: r.height,
      transform: blockT.map((v) => round(v)),
      alignment,
      stats: r.stats,
      score: round(r.score, 6),
      region_count: r.regions.length,
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
}

export interface RegionOut {
  /** Overlay pixels. */
  bbox: BlockBox;
  area_px: number;
  added_px: number;
  removed_px: number;
  kind: 'added' | 'removed' | 'modified' | 'moved';
  confidence: number;
}

/** The engine's change regions of a stored overlay (none when the alignment is not trusted). */
export async function changeRegions(
  args: RegionsArgs,
): Promise<{ regions: RegionOut[]; score: number }> {
  const A = await decodeGrey(args.a.path);
  const B = await decodeGrey(args.b.path);
  const { r } = diffThroughSheet(
    A,
    B,
    args.aBox,
    args.sheetTransform,
    false,
    Math.max(LOW_CONFIDENCE, Math.min(1, args.alignmentConfidence)),
  );
  const regions = args.alignmentConfidence < LOW_CONFIDENCE ? [] : r.regions;
  return {
    score: r.score,
    regions: regions.map((g) => ({
      bbox: g.bbox,
      area_px: g.area_px,
      added_px: g.added_px,
      removed_px: g.removed_px,
      kind: g.kind,
      confidence: round(g.confidence, 3),
    })),
  };
}
