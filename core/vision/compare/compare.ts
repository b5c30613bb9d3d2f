// compareImages: the pure compare engine — registration, mask diff, score, change regions and overlays
// for two grey renders of one sheet. A is the older revision and the output frame (sheet pixels of A,
// origin top-left); B is the newer one, mapped into A by `transform` (B pixels → A pixels).
import type { GreyImage } from '../types';
import {
  diffImages,
  alignGrey,
  renderOverlay,
  type DiffOptions,
  type DiffResult,
  type DiffStats,
  type OverlayKind,
  type PaletteName,
  type RgbImage,
} from './diff';
import {
  IDENTITY,
  registerImages,
  type Affine,
  type RegisterOptions,
  type Registration,
} from './register';
import { findRegions, type ChangeRegion, type RegionOptions } from './regions';

export interface CompareOptions {
  /**
   * Skip registration for pre-aligned input (the identity, or the given transform, is used).
   * Default false.
   */
  skipRegistration?: boolean;
  /** Transform to use when registration is skipped (B → A). Default identity. */
  transform?: Affine;
  register?: RegisterOptions;
  diff?: DiffOptions;
  regions?: RegionOptions;
  /** Overlays to render (RGB). Default ['combined']. Pass [] for none. */
  overlays?: OverlayKind[];
  palette?: PaletteName;
  /** Also return B resampled into A's frame (a full grey copy). Default false. */
  alignedB?: boolean;
  /** Below this alignment confidence no regions are reported (the sheets probably differ). Default 0.3. */
  minAlignmentConfidence?: number;
}

export interface Alignment {
  method: string;
  confidence: number;
  residual_px: number;
  inliers: number;
}

export interface CompareResult {
  width: number;
  height: number;
  transform: Affine;
  alignment: Alignment;
  stats: DiffStats;
  /** 1 − changed ink / union ink after alignment; see DiffResult.score. */
  score: number;
  regions: ChangeRegion[];
  overlays: Partial<Record<OverlayKind, RgbImage>>;
  alignedB?: GreyImage;
  /** Masks (A's frame) for later analysis. */
  diff: DiffResult;
  /** Wall time per phase, ms. */
  timings: Record<string, number>;
}

export function compareImages(
  a: GreyImage,
  b: GreyImage,
  opts: CompareOptions = {},
): CompareResult {
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (name: string): void => {
    const t = performance.now();
    timings[name] = t - t0;
    t0 = t;
  };
  let reg: Registration | null = null;
  let transform: Affine;
  let alignment: Alignment;
  if (opts.skipRegistration) {
    transform = opts.transform ?? IDENTITY;
    alignment = { method: 'none', confidence: 1, residual_px: 0, inliers: 0 };
  } else {
    reg = registerImages(a, b, opts.register);
    transform = reg.transform;
    alignment = {
      method: reg.method,
      confidence: reg.confidence,
      residual_px: reg.residual_px,
      inliers: reg.inliers,
    };
    lap('register');
  }
  const diff = diffImages(a, b, transform, opts.diff);
  lap('diff');
  const minConf = opts.minAlignmentConfidence ?? 0.3;
  const regions =
    alignment.confidence >= minConf
      ? findRegions(diff, { alignmentConfidence: alignment.confidence, ...opts.regions })
      : [];
  lap('regions');
  const overlays: Partial<Record<OverlayKind, RgbImage>> = {};
  for (const kind of opts.overlays ?? ['combined'])
    overlays[kind] = renderOverlay(diff, kind, opts.palette ?? 'standard');
  lap('overlay');
  const result: CompareResult = {
    width: a.width,
    height: a.height,
    transform,
    alignment,
    stats: diff.stats,
    score: diff.score,
    regions,
    overlays,
    diff,
    timings,
  };
  if (opts.alignedB) {
    result.alignedB = alignGrey(b, transform, a.width, a.height);
    lap('alignedB');
  }
  return result;
}
