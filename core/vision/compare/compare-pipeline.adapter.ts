// The whole compare of two sheet images, PNG (or any sharp input) → overlay PNG, scheduled so libvips
// threads work while JS does (performance-anchors §6/§7):
//   1. decode both to grey (two sharp pipelines in parallel on the libuv pool); pack A's ink masks and
//      make its registration ink level (box means, WebAssembly SIMD) in JS while B is still decoding;
//   2. make B's level;
//   3. register (JS), resample B into A's frame (aligned B) and pack its masks, diff (diffStage);
//   4. encode aligned B (libvips), render each requested overlay as palette indices (4 or 2 bits; one
//      render serves both palettes) and start its deflate (zlib, libuv pool) at once, rendering the
//      next one meanwhile, then find the change regions in JS while the last encodes run
//      (finishStage).
// Windows (windowA/windowB) compare a block of a sheet straight from the sheet images, no crop copies:
// compare-tasks.ts uses the two stages so a block pair is encoded only once its alignment is chosen.
// Frames: A's sheet pixels, origin top-left; transform maps B pixels → A pixels (as compareImages).
import type { GreyImage } from '../types';
import type { CompareOptions, Alignment } from './compare';
import {
  alignGrey,
  coverage,
  diffMasks,
  DIFF_SLOTS,
  MASK_PLANES,
  packInk,
  overlayBitDepth,
  overlayPalette,
  renderAddDelIndexed,
  type InkedWords,
  renderOverlayIndexed,
  type DiffResult,
  type PaletteName,
  type PixelWindow,
  type IndexedOverlay,
  type OverlayKind,
} from './diff';
import type { CompareBuffers } from './buffers';
import { decodeGrey, encodeGreyPng, encodeIndexedPngs } from './encode.adapter';
import { findLayerRegions, type ChangeRegion } from './regions';
import {
  diffFills,
  fillInkStyle,
  fillTexture,
  keepHiddenImage,
  keepHiddenLineWork,
  keepLineWork,
  objectLayers,
  penStyle,
  speckNoise,
  splitFills,
  styleMasks,
  FILL_SLOTS,
  STYLE_SLOTS,
} from './layers';
import {
  IDENTITY,
  invertAffine,
  inkLevel,
  levelFactor,
  registerImages,
  type Affine,
  type Registration,
} from './register';

/**
 * The images a compare can encode: overlays (4- or 2-bit palette PNGs, standard / colour-blind) and
 * aligned B (grey).
 */
export const IMAGE_KINDS = [
  'combined',
  'combined_colorblind',
  'additions',
  'deletions',
  'aligned_b',
] as const;
export type ImageKind = (typeof IMAGE_KINDS)[number];

export interface PipelineOptions extends CompareOptions {
  /** zlib level of the PNGs (1 on the interactive path, see performance-anchors §4). Default 1. */
  compressionLevel?: number;
  /**
   * Compare only this window of A (A's pixels; may reach outside A — paper there): it is the output
   * frame, so results are in window pixels. The window is packed straight from A, no crop is copied.
   */
  windowA?: PixelWindow;
  /**
   * Read only this window of B (B's pixels); `transform` then maps B-window pixels to A-window
   * pixels. Registration needs whole images: with a window, pass skipRegistration and a transform.
   */
  windowB?: PixelWindow;
  /** Images to encode. Default ['combined']. */
  images?: ImageKind[];
  /**
   * Buffers kept across compares (a kept-alive compare process): A's and B's ink masks, aligned B, the
   * changed masks and the overlay indices go into them instead of fresh arrays. What a compare returns
   * in them (its DiffResult masks, aligned B, the overlay) is then valid only until the next compare
   * given the same buffers.
   */
  buffers?: CompareBuffers;
  /**
   * Split fills (tones, solid areas) from line work on both sides and compare them apart (layers.ts).
   * Default true.
   */
  layers?: boolean;
  /**
   * The sheets' line work as their PDFs draw it (PageRaster.lineWork decoded to grey: 0 line work,
   * 255 elsewhere; A's and B's whole sheet pixels, also with windows): fill pixels on it stay line
   * work (layers.ts keepLineWork). A side without it keeps the image analysis alone.
   */
  lineWork?: { a?: GreyImage | undefined; b?: GreyImage | undefined };
  /**
   * Start the aligned-B PNG encode (libvips, on a libuv thread) as soon as aligned B is made, at this
   * zlib level, instead of in finishStage: it then runs on the other core while this thread packs B's
   * masks, splits the layers, diffs and renders (DiffStage.alignedPng; finishStage takes it when it
   * asks for 'aligned_b' at the same level). Aligned B must then stay unchanged until it settles.
   */
  encodeAlignedEarly?: number;
}

/** The pixel part of a compare (masks, registration, diff), before images and regions. */
export interface DiffStage {
  /** Output frame (A's window, or A). */
  width: number;
  height: number;
  /** B (window) pixels → output pixels. */
  transform: Affine;
  alignment: Alignment;
  diff: DiffResult;
  /**
   * B resampled into the output frame (nearest neighbour, paper outside B): the aligned-B image, and
   * what B's masks were packed from. In `buffers` when they were given.
   */
  aligned: GreyImage;
  /** The aligned-B PNG at `level`, started by diffStage (PipelineOptions.encodeAlignedEarly). */
  alignedPng?: { level: number; png: Promise<Buffer> };
  timings: Record<string, number>;
}

/** Slots of `buffers`: A's masks, aligned B, and B's masks in A's frame (packInk adds the plane). */
/** Slots of the annotation planes (layers.ts objectLayers). */
const ANNOT_SLOTS = { a: 'a.annot', b: 'b.annot' };
const A_SLOT = 'a.',
  INKED_SLOT = 'overlay.inked',
  ALIGNED_SLOT = 'aligned_b',
  B_SLOT = 'b.';

/** The overlay masks an image is rendered from ('combined' and 'combined_colorblind' share them). */
function overlayKindOf(kind: Exclude<ImageKind, 'aligned_b'>): OverlayKind {
  return kind === 'additions' ? 'additions' : kind === 'deletions' ? 'deletions' : 'combined';
}

function isGrey(v: unknown): v is GreyImage {
  return typeof v === 'object' && v !== null && 'data' in v && 'width' in v && !Buffer.isBuffer(v);
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

/**
 * Stage 1: decode (both in parallel), pack the masks (of the windows when given — one pass over those
 * pixels, no cropped copies) and make the registration levels, register, align B and pack its
 * masks, diff.
 */
export async function diffStage(
  inputA: string | Buffer | GreyImage,
  inputB: string | Buffer | GreyImage,
  opts: PipelineOptions = {},
): Promise<DiffStage> {
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (name: string): void => {
    const t = performance.now();
    timings[name] = (timings[name] ?? 0) + t - t0; // pack: A + B
    t0 = t;
  };
  if ((opts.windowA || opts.windowB) && !opts.skipRegistration)
    throw new Error(
      'Registration needs whole images: pass skipRegistration and a transform with windowA/windowB, or crop first',
    );
  // Both decodes start at once (two libvips pipelines); A's masks and its registration level are made
  // in JS while B is still decoding.
  const decA = isGrey(inputA) ? Promise.resolve(inputA) : decodeGrey(inputA);
  const decB = isGrey(inputB) ? Promise.resolve(inputB) : decodeGrey(inputB);
  // Keep a rejection of B from being unhandled while A is awaited.
  decB.catch(() => undefined);
  const a = await decA;
  lap('decode');
  const it = opts.diff?.inkThreshold ?? 160,
    wt = opts.diff?.weakThreshold ?? 208,
    pt = opts.diff?.paleThreshold ?? Math.max(240, wt);
  const ma = packInk(a, it, wt, pt, opts.windowA, opts.buffers, A_SLOT);
  lap('pack');
  const layers = opts.layers !== false;
  let fillA = layers
    ? splitFills(a, ma, opts.windowA, it, wt, pt, opts.buffers, FILL_SLOTS.a)
    : null;
  let annotA: Uint32Array | null = null;
  if (layers && opts.lineWork?.a) {
    const wx = opts.windowA ? Math.round(opts.windowA.x) : 0,
      wy = opts.windowA ? Math.round(opts.windowA.y) : 0;
    const lines = { image: opts.lineWork.a, toImage: [1, 0, wx, 0, 1, wy] };
    if (fillA) keepLineWork(a, opts.windowA, ma, fillA, lines, it, wt, pt);
    // Fills and annotations by object where the page's objects say so (vector PDFs).
    const ol = objectLayers(ma, fillA, lines, opts.buffers, {
      fill: FILL_SLOTS.a,
      annotations: ANNOT_SLOTS.a,
    });
    fillA = ol.fill;
    annotA = ol.annotations;
  }
  lap('layers');
  // B's size is not known yet: A's gives the level factor (the pair's is checked below).
  const f1 = levelFactor(Math.max(a.width, a.height));
  const levelA = opts.skipRegistration ? null : inkLevel(a, f1);
  lap('levels');
  const b = await decB;
  lap('decode_wait');
  let transform: Affine;
  let alignment: Alignment;
  if (opts.skipRegistration) {
    transform = opts.transform ?? IDENTITY;
    alignment = { method: 'none', confidence: 1, residual_px: 0, inliers: 0 };
  } else {
    const f = levelFactor(Math.max(a.width, a.height, b.width, b.height));
    const levels = { a: levelA && f1 === f ? levelA : inkLevel(a, f), b: inkLevel(b, f) };
    lap('levels');
    const reg: Registration = registerImages(a, b, { ...opts.register, levels });
    transform = reg.transform;
    alignment = {
      method: reg.method,
      confidence: reg.confidence,
      residual_px: reg.residual_px,
      inliers: reg.inliers,
    };
    lap('register');
  }
  const W = ma.width,
    H = ma.height;
  const bToOut = opts.windowB
    ? afterShift(transform, -Math.round(opts.windowB.x), -Math.round(opts.windowB.y))
    : transform;
  // B in the output frame (the aligned-B image), then its masks: the words warpMasks would make from
  // B's masks, as nearest-neighbour resampling commutes with the thresholds, without B's own masks
  // or the warp. B's pixels outside windowB are read too: the window holds every pixel the frame maps
  // to (sourceBox), so they fall outside the frame.
  // Reduced by 1.33x or more (B on a larger sheet), B's pixels are reduced to their darkest, so thin
  // lines survive the reduction (alignGrey darkestBelow).
  // alignGrey writes every pixel: the kept array needs no zeroing first.
  const aligned = alignGrey(b, bToOut, W, H, opts.buffers?.bytesToOverwrite(ALIGNED_SLOT, W * H), {
    darkestBelow: 0.75,
  });
  let alignedPng: DiffStage['alignedPng'];
  if (opts.encodeAlignedEarly !== undefined) {
    const level = opts.encodeAlignedEarly;
    const png = encodeGreyPng(aligned, { compressionLevel: level });
    // Awaited by finishStage, or settled by the caller that chose another stage.
    png.catch(() => undefined);
    alignedPng = { level, png };
  }
  lap('align');
  const mb = packInk(aligned, it, wt, pt, undefined, opts.buffers, B_SLOT);
  lap('pack');
  let fillB = layers
    ? splitFills(aligned, mb, undefined, it, wt, pt, opts.buffers, FILL_SLOTS.b)
    : null;
  let annotB: Uint32Array | null = null;
  if (layers && opts.lineWork?.b) {
    // Output pixels → B's sheet pixels: the inverse of bToOut (which maps B's sheet, window or not).
    const lines = { image: opts.lineWork.b, toImage: invertAffine(bToOut) };
    if (fillB) keepLineWork(aligned, undefined, mb, fillB, lines, it, wt, pt);
    const ol = objectLayers(mb, fillB, lines, opts.buffers, {
      fill: FILL_SLOTS.b,
      annotations: ANNOT_SLOTS.b,
    });
    fillB = ol.fill;
    annotB = ol.annotations;
  }
  lap('layers');
  /** Output pixels → A's sheet pixels (A's line-work image): the window's offset. */
  const aToImage = [
    1,
    0,
    opts.windowA ? Math.round(opts.windowA.x) : 0,
    0,
    1,
    opts.windowA ? Math.round(opts.windowA.y) : 0,
  ];
  const bw = opts.windowB ? Math.max(1, Math.round(opts.windowB.width)) : b.width,
    bh = opts.windowB ? Math.max(1, Math.round(opts.windowB.height)) : b.height;
  const cover = coverage(transform, bw, bh, W, H);
  const diff = diffMasks(ma, mb, cover, opts.buffers);
  if (annotA || annotB) diff.annotations = { a: annotA, b: annotB };
  // A's ink that B's objects still draw, hidden on B's page (under a markup's box): not removed.
  if (layers && opts.lineWork?.b) {
    const linesB = { image: opts.lineWork.b, toImage: invertAffine(bToOut) };
    keepHiddenLineWork(diff, linesB);
    // And A's image content under B's markups (a callout's white box over a raster).
    keepHiddenImage(diff, opts.lineWork.a && { image: opts.lineWork.a, toImage: aToImage }, linesB);
  }
  lap('diff');
  if (
    layers &&
    diff.stats.added_px + diff.stats.removed_px + diff.faint.added_px + diff.faint.removed_px > 0
  ) {
    diff.style = styleMasks(diff, opts.buffers);
    lap('layers');
  }
  if (fillA || fillB) {
    const fd = diffFills(fillA?.fill ?? null, fillB?.fill ?? null, ma, mb, cover, opts.buffers);
    diff.fills = { a: fillA?.fill ?? null, b: fillB?.fill ?? null, ...fd };
    // The same ink called fill on one side and line work on the other: style, not geometry.
    fillInkStyle(diff, a, opts.windowA, aligned);
    // A changed tone's own hatch or stipple: fill, not short line-work dashes across it.
    fillTexture(
      diff,
      {
        a: opts.lineWork?.a && { image: opts.lineWork.a, toImage: aToImage },
        b: opts.lineWork?.b && { image: opts.lineWork.b, toImage: invertAffine(bToOut) },
      },
      { a, windowA: opts.windowA, b: aligned },
    );
    lap('layers');
  }
  if (diff.style) {
    // The same line drawn with a heavier or lighter pen: style along all its width.
    penStyle(diff, a, opts.windowA, aligned, pt);
    // Stipple dots both issues print, one lighter over a tone: not specks of change.
    speckNoise(diff, a, opts.windowA, aligned, pt);
    lap('layers');
  }
  return {
    width: W,
    height: H,
    transform,
    alignment,
    diff,
    aligned,
    ...(alignedPng ? { alignedPng } : {}),
    timings,
  };
}

/**
 * Grow `buffers` now to what diffStage and finishStage will take from them for an output window of
 * `a` (A's window), encoding `images`: A's masks, aligned B and its masks, the diff masks and the
 * overlay indices. New arrays have every page touched here (CompareBuffers.reserve), e.g. while
 * libvips decodes the sheets, instead of by the stage that first writes them: a worker's first bench
 * compare (36x24 in at 200 dpi) took ~181 ms instead of ~200.
 */
export function reserveStageBuffers(
  buffers: CompareBuffers,
  a: { width: number; height: number },
  images: ImageKind[],
): void {
  const masks = Math.ceil(a.width / 32) * a.height;
  for (const m of MASK_PLANES) {
    buffers.reserve(`${A_SLOT}${m}`, masks);
    buffers.reserve(`${B_SLOT}${m}`, masks);
  }
  for (const slot of DIFF_SLOTS) buffers.reserve(slot, masks);
  // The style masks are made whenever anything changed; the fill planes only for sheets with fills,
  // so they are not reserved here.
  for (const slot of STYLE_SLOTS) buffers.reserve(slot, masks);
  const bytes = (n: number) => (n + 3) >>> 2;
  buffers.reserve(ALIGNED_SLOT, bytes(a.width * a.height));
  const kinds = new Set(images.filter((k) => k !== 'aligned_b').map(overlayKindOf));
  // finishStage's list of the combined image's inked words (when the 2-bit images follow it).
  if (kinds.has('combined') && kinds.has('additions') && kinds.has('deletions'))
    buffers.reserve(INKED_SLOT, masks);
  for (const mk of kinds)
    buffers.reserve(
      `overlay.${mk}`,
      bytes((1 + Math.ceil((a.width * overlayBitDepth(mk)) / 8)) * a.height),
    );
}

export interface FinishOptions {
  images?: ImageKind[];
  /** Palette of 'combined' / 'additions' / 'deletions' ('combined_colorblind' is always colour-blind). */
  palette?: PaletteName;
  compressionLevel?: number;
  regions?: CompareOptions['regions'];
  /** Below this alignment confidence no regions are reported. Default 0.3. */
  minAlignmentConfidence?: number;
  /** See PipelineOptions.buffers. */
  buffers?: CompareBuffers;
}

/**
 * Stage 2: aligned B first (its libvips encode is the longest), then each requested overlay rendered
 * as palette indices with its deflate started at once (zlib on a libuv thread) while JS renders the
 * next, then the change regions in JS while the encodes finish. Overlay PNGs are 4-bit (combined) or
 * 2-bit palette images: they decode to the same RGB pixels as renderOverlay's from 1/6 or 1/12 of the
 * bytes (bench/compare README, indexed-overlay slice).
 */
export async function finishStage(
  st: DiffStage,
  opts: FinishOptions = {},
): Promise<{
  regions: ChangeRegion[];
  pngs: Partial<Record<ImageKind, Buffer>>;
  overlay?: IndexedOverlay;
  timings: Record<string, number>;
}> {
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (name: string): void => {
    const t = performance.now();
    timings[name] = (timings[name] ?? 0) + t - t0;
    t0 = t;
  };
  const level = opts.compressionLevel ?? 1;
  const pngs: Partial<Record<ImageKind, Buffer>> = {};
  const pending: Promise<void>[] = [];
  // The overlay images by mask kind: 'combined' and 'combined_colorblind' are one render and one
  // deflate, written with two palettes.
  const groups = new Map<OverlayKind, { kinds: ImageKind[]; palettes: PaletteName[] }>();
  let wantAligned = false;
  for (const kind of opts.images ?? ['combined']) {
    if (kind === 'aligned_b') {
      wantAligned = true;
      continue;
    }
    const mk = overlayKindOf(kind);
    const g = groups.get(mk) ?? { kinds: [], palettes: [] };
    g.kinds.push(kind);
    g.palettes.push(kind === 'combined_colorblind' ? 'colorblind' : (opts.palette ?? 'standard'));
    groups.set(mk, g);
  }
  if (wantAligned) {
    // First: its encode (libvips, the longest of the five: 8 bits per pixel) runs while the overlays
    // render.
    const p =
      st.alignedPng && st.alignedPng.level === level
        ? st.alignedPng.png
        : encodeGreyPng(st.aligned, { compressionLevel: level });
    pending.push(p.then((buf) => void (pngs.aligned_b = buf)));
  }
  let overlay: IndexedOverlay | undefined;
  // Each render is 0.5 (combined) or 0.25 byte per pixel: the deflates run on libuv threads while the
  // next image renders, with no need to wait for one before the next.
  const out = (mk: OverlayKind) =>
    opts.buffers?.bytes(
      `overlay.${mk}`,
      (1 + Math.ceil((st.width * overlayBitDepth(mk)) / 8)) * st.height,
    );
  // The additions and deletions images in one pass over the masks when both are asked for.
  let addDel: Partial<Record<OverlayKind, IndexedOverlay>> = {};
  // The combined render lists its inked words when additions and deletions follow: their pass then
  // visits those words only (the rest is paper in both).
  const bothAddDel = groups.has('additions') && groups.has('deletions');
  const inked: InkedWords | undefined =
    bothAddDel && groups.has('combined')
      ? {
          words: opts.buffers
            ? opts.buffers.wordsToOverwrite(INKED_SLOT, st.diff.stride * st.height)
            : new Uint32Array(st.diff.stride * st.height),
          n: 0,
        }
      : undefined;
  for (const [mk, g] of groups) {
    if (mk !== 'combined' && !addDel[mk] && bothAddDel)
      // The list only once the combined image has made it (images asked in another order: every word).
      addDel = renderAddDelIndexed(
        st.diff,
        out('additions'),
        out('deletions'),
        overlay ? inked : undefined,
      );
    const img =
      addDel[mk] ??
      renderOverlayIndexed(st.diff, mk, out(mk), mk === 'combined' ? inked : undefined);
    if (mk === 'combined') overlay = img;
    pending.push(
      encodeIndexedPngs(
        img,
        g.palettes.map((p) => overlayPalette(p, mk)),
        { compressionLevel: level },
      ).then((bufs) => {
        g.kinds.forEach((k, i) => (pngs[k] = bufs[i]!));
      }),
    );
    lap('overlay');
  }
  const minConf = opts.minAlignmentConfidence ?? 0.3;
  const regions =
    st.alignment.confidence >= minConf
      ? findLayerRegions(st.diff, {
          alignmentConfidence: st.alignment.confidence,
          ...opts.regions,
        })
      : [];
  lap('regions');
  await Promise.all(pending);
  lap('png_wait');
  return { regions, pngs, ...(overlay ? { overlay } : {}), timings };
}

export interface PipelineResult {
  width: number;
  height: number;
  transform: Affine;
  alignment: Alignment;
  score: number;
  stats: DiffResult['stats'];
  regions: ChangeRegion[];
  diff: DiffResult;
  /** The combined overlay's palette indices (when 'combined' was among the images). */
  overlay?: IndexedOverlay;
  /** The combined PNG (empty when it was not requested). */
  png: Buffer;
  pngs: Partial<Record<ImageKind, Buffer>>;
  /** Wall time per phase, ms (phases overlapping libvips work are the JS side). */
  timings: Record<string, number>;
}

export async function compareToPng(
  inputA: string | Buffer | GreyImage,
  inputB: string | Buffer | GreyImage,
  opts: PipelineOptions = {},
): Promise<PipelineResult> {
  const images = opts.images ?? ['combined'];
  const st = await diffStage(inputA, inputB, opts);
  const fin = await finishStage(st, {
    images,
    compressionLevel: opts.compressionLevel ?? 1,
    ...(opts.palette ? { palette: opts.palette } : {}),
    ...(opts.regions ? { regions: opts.regions } : {}),
    ...(opts.minAlignmentConfidence !== undefined
      ? { minAlignmentConfidence: opts.minAlignmentConfidence }
      : {}),
    ...(opts.buffers ? { buffers: opts.buffers } : {}),
  });
  return {
    width: st.width,
    height: st.height,
    transform: st.transform,
    alignment: st.alignment,
    score: st.diff.score,
    stats: st.diff.stats,
    diff: st.diff,
    regions: fin.regions,
    ...(fin.overlay ? { overlay: fin.overlay } : {}),
    png: fin.pngs.combined ?? Buffer.alloc(0),
    pngs: fin.pngs,
    timings: { ...st.timings, ...fin.timings },
  };
}
