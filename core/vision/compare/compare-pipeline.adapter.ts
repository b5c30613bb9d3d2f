// The whole compare of two sheet images, PNG (or any sharp input) → overlay PNG, scheduled so libvips
// threads work while JS does (performance-anchors §6/§7):
//   1. decode both to grey (two sharp pipelines in parallel on the libuv pool);
//   2. start the registration ink levels (box shrink by the level factor) inside libvips, and pack
//      both images' ink masks in JS meanwhile;
//   3. register (JS, on the libvips levels), warp B's masks, diff, render the overlay;
//   4. start the PNG encode (libvips) and find the change regions in JS meanwhile.
// Frames: A's sheet pixels, origin top-left; transform maps B pixels → A pixels (as compareImages).
import sharp from 'sharp';
import type { GreyImage } from '../types';
import type { CompareOptions, Alignment } from './compare';
import {
  coverage,
  diffMasks,
  packInk,
  renderOverlay,
  warpMasks,
  type DiffResult,
  type RgbImage,
} from './diff';
import { decodeGrey, encodeRgbPng } from './encode.adapter';
import { findRegions, type ChangeRegion } from './regions';
import { IDENTITY, levelFactor, registerImages, type Affine, type InkLevel } from './register';

/**
 * Ink level of `img` at factor f made by libvips: the image cropped to whole f x f cells (the last
 * partial row/column of cells is left out — registration does not need it) and shrunk by exactly f, so
 * level pixel u has its centre at full x = f·u + (f − 1)/2 as inkDownsample's. Ink = 255 − grey.
 * libvips shrinks by an integer box and finishes with the kernel (not a pure box: measured on the
 * bench sheet at f = 8, mean |difference| to inkDownsample ≈ 1.1 of 255 with 'cubic', the closest);
 * that only smooths the level, which the full-resolution round does not use.
 */
export async function inkLevelVips(img: GreyImage, f: number): Promise<InkLevel> {
  const w = Math.floor(img.width / f),
    h = Math.floor(img.height / f);
  if (w < 1 || h < 1) throw new Error(`Image ${img.width}x${img.height} is smaller than f=${f}`);
  // A Buffer over exactly the image bytes (sharp reads a typed array's whole ArrayBuffer otherwise).
  const buf = Buffer.from(img.data.buffer, img.data.byteOffset, img.width * img.height);
  const { data } = await sharp(buf, {
    raw: { width: img.width, height: img.height, channels: 1 },
  })
    .extract({ left: 0, top: 0, width: w * f, height: h * f })
    .resize(w, h, { kernel: 'cubic' })
    // Without this sharp hands back 3 channels.
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  const out = new Float32Array(w * h);
  for (let i = 0; i < out.length; i++) out[i] = 255 - data[i]!;
  return { width: w, height: h, data: out, f };
}

export interface PipelineResult {
  width: number;
  height: number;
  transform: Affine;
  alignment: Alignment;
  score: number;
  stats: DiffResult['stats'];
  regions: ChangeRegion[];
  overlay: RgbImage;
  png: Buffer;
  /** Wall time per phase, ms (phases overlapping libvips work are the JS side). */
  timings: Record<string, number>;
}

export async function compareToPng(
  inputA: string | Buffer | GreyImage,
  inputB: string | Buffer | GreyImage,
  opts: CompareOptions & { compressionLevel?: number } = {},
): Promise<PipelineResult> {
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (name: string): void => {
    const t = performance.now();
    timings[name] = t - t0;
    t0 = t;
  };
  const isGrey = (v: unknown): v is GreyImage =>
    typeof v === 'object' && v !== null && 'data' in v && 'width' in v && !Buffer.isBuffer(v);
  const [a, b] = await Promise.all([
    isGrey(inputA) ? inputA : decodeGrey(inputA),
    isGrey(inputB) ? inputB : decodeGrey(inputB),
  ]);
  lap('decode');
  const it = opts.diff?.inkThreshold ?? 160,
    wt = opts.diff?.weakThreshold ?? 208;
  const f1 = levelFactor(Math.max(a.width, a.height, b.width, b.height));
  const levelsP =
    !opts.skipRegistration && f1 > 1
      ? Promise.all([inkLevelVips(a, f1), inkLevelVips(b, f1)])
      : null;
  const ma = packInk(a, it, wt);
  const mb0 = packInk(b, it, wt);
  lap('pack');
  let transform: Affine;
  let alignment: Alignment;
  if (opts.skipRegistration) {
    transform = opts.transform ?? IDENTITY;
    alignment = { method: 'none', confidence: 1, residual_px: 0, inliers: 0 };
  } else {
    const levels = levelsP ? await levelsP : null;
    lap('levels_wait');
    const reg = registerImages(a, b, {
      ...opts.register,
      ...(levels ? { levels: { a: levels[0], b: levels[1] } } : {}),
    });
    transform = reg.transform;
    alignment = {
      method: reg.method,
      confidence: reg.confidence,
      residual_px: reg.residual_px,
      inliers: reg.inliers,
    };
    lap('register');
  }
  const mb = warpMasks(mb0, transform, a.width, a.height);
  const diff = diffMasks(ma, mb, coverage(transform, b.width, b.height, a.width, a.height));
  lap('diff');
  const overlay = renderOverlay(diff, 'combined', opts.palette ?? 'standard');
  lap('overlay');
  const pngP = encodeRgbPng(overlay, { compressionLevel: opts.compressionLevel ?? 1 });
  const minConf = opts.minAlignmentConfidence ?? 0.3;
  const regions =
    alignment.confidence >= minConf
      ? findRegions(diff, { alignmentConfidence: alignment.confidence, ...opts.regions })
      : [];
  lap('regions');
  const png = await pngP;
  lap('png_wait');
  return {
    width: a.width,
    height: a.height,
    transform,
    alignment,
    score: diff.score,
    stats: diff.stats,
    regions,
    overlay,
    png,
    timings,
  };
}
