// Symbol detection by template matching (contract §7, POST /parse): every instance of each template
// crop in a target image, at rotations 0/90/180/270 and small scale changes, with a confidence.
// Pure typed-array code, run in the worker pool; pixels are those of the target image (origin
// top-left, x right, y down) unless a field says otherwise.
//
// Why it is fast enough for a 34x22 in sheet at 200 dpi (6800x4400 = 30 MP) — a full-resolution
// NCC at every pixel for 4 rotations x 3 scales of a 130 px symbol would be ~10^13 operations:
// 1. Coarse level: the target's ink (255 − grey) box-reduced by fc (per template, chosen so the
//    template's long side is ≥ 14 coarse cells; fc = 8 for a 130 px symbol → 850x550 cells), with
//    integral images of ink and ink² so any window's mean and spread cost 8 lookups.
// 2. Prune: a window whose ink spread σ is far from the template's (σ < 0.35 σT: paper, a lone
//    line, a flat fill; σ > 3.5 σT) cannot correlate well and is skipped. On drawings this drops
//    most windows before any correlation is computed.
// 3. Coarse NCC of every variant (rotation x scale) at the surviving windows, summing T·I over the
//    template's ink cells only (sparse: symbols are mostly paper). Local maxima of the best score
//    over variants above `threshold − 0.25` become candidates.
// 4. Refinement per candidate at the fine level (ff = 1 for templates under 128 px on their long
//    side, else fc/4): pattern search in position for the coarse winner, then the other rotations
//    and the neighbouring scales on a 0.05 grid; the fine NCC is the confidence.
// 5. Non-maximum suppression (nms.ts).
//
// Scores are zero-mean normalized cross-correlation of ink in [−1, 1], reported clipped to [0, 1].
// A rotation r means the instance looks like the template turned r degrees clockwise on the page.
import { downsampleLevel, inkDownsample } from '../compare/register';
import type { BBox, GreyImage } from '../types';
import { nms } from './nms';
import {
  reducePlane,
  rotatePlane,
  scalePlane,
  toKernel,
  inkOf,
  type InkPlane,
  type NccKernel,
  type Rotation,
} from './variants';

/**
 * Default confidence a match needs (fine-level NCC). Calibrated on the section markers of the beam
 * proposal's S101 (200 dpi): exact copies score ~1, instances with other text inside 0.74–0.96,
 * instances over a tint, joists or an overlapping grid bubble 0.54–0.69; the best non-instance
 * (a title-block glyph) 0.45. Callers with cleaner symbols can raise it.
 */
export const DEFAULT_THRESHOLD = 0.6;
/** Scales searched at the coarse level; refinement then tries ±0.05 around the winner, so 0.85–1.15 is covered. */
export const DEFAULT_SCALES: readonly number[] = [0.9, 1, 1.1];
export const ALL_ROTATIONS: readonly Rotation[] = [0, 90, 180, 270];

export interface SymbolTemplate {
  label: string;
  /** The crop showing one symbol (grey, paper white). */
  image: GreyImage;
}

export interface MatchOptions {
  threshold?: number;
  rotations?: readonly Rotation[];
  scales?: readonly number[];
  /** Candidates refined per template (highest coarse scores first). Default 4000. */
  maxCandidates?: number;
  /**
   * Grey at or above this counts as paper (default 230): light tints and hatch fills behind a
   * symbol (e.g. 225 on the beam-proposal sheets) then stop diluting the correlation. 255 turns it off.
   */
  paperLevel?: number;
}

export const DEFAULT_PAPER_LEVEL = 230;

/** Stretches grey so `paper` and lighter become 255 (black stays 0). A new image; the input is untouched. */
export function flattenPaper(img: GreyImage, paper: number): GreyImage {
  if (paper >= 255) return img;
  const lut = new Uint8Array(256);
  for (let g = 0; g < 256; g++) lut[g] = Math.min(255, Math.round((g * 255) / paper));
  const src = img.data;
  const out = new Uint8Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = lut[src[i]!]!;
  return { width: img.width, height: img.height, data: out };
}

export interface SymbolMatch {
  label: string;
  /** Index of the template in the input list. */
  template: number;
  /** Target pixels. */
  bbox: BBox;
  confidence: number;
  rotation: Rotation;
  scale: number;
}

export interface MatchStats {
  templates: {
    label: string;
    coarseFactor: number;
    fineFactor: number;
    windows: number;
    kept: number;
    candidates: number;
    matches: number;
  }[];
  ms: { levels: number; coarse: number; refine: number; total: number };
}

interface Level {
  f: number;
  width: number;
  height: number;
  /** Ink per cell (f > 1, or a small f = 1 target), or null when the grey image is read directly (f = 1). */
  ink: Float32Array | null;
  grey: Uint8Array | null;
  /** Integral images of ink and ink² ((width+1) x (height+1)), when affordable (see FINE_INTEGRAL_CELLS). */
  s1?: Float64Array;
  s2?: Float64Array;
}

/** Fine levels up to this many cells get integral images (2 x 8 B per cell); bigger ones sum windows directly. */
const FINE_INTEGRAL_CELLS = 8_000_000;

interface CoarseLevel extends Level {
  ink: Float32Array;
  /** Integral images of ink and ink² ((width+1) x (height+1), row-major). */
  s1: Float64Array;
  s2: Float64Array;
}

function integrals(
  ink: ArrayLike<number>,
  w: number,
  h: number,
  invert = false,
): { s1: Float64Array; s2: Float64Array } {
  const W = w + 1;
  const s1 = new Float64Array(W * (h + 1));
  const s2 = new Float64Array(W * (h + 1));
  for (let y = 0; y < h; y++) {
    let r1 = 0;
    let r2 = 0;
    const o = (y + 1) * W;
    const p = y * W;
    const q = y * w;
    for (let x = 0; x < w; x++) {
      const v = invert ? 255 - ink[q + x]! : ink[q + x]!;
      r1 += v;
      r2 += v * v;
      s1[o + x + 1] = s1[p + x + 1]! + r1;
      s2[o + x + 1] = s2[p + x + 1]! + r2;
    }
  }
  return { s1, s2 };
}

/** Ink (255 − grey) box-reduced by 2; a lone last row/column averages what it has. */
function halve(img: GreyImage): InkPlane {
  const W = img.width;
  const H = img.height;
  const w = Math.ceil(W / 2);
  const h = Math.ceil(H / 2);
  const out = new Float32Array(w * h);
  const g = img.data;
  const fw = W >> 1;
  for (let y = 0; y < h; y++) {
    const r0 = 2 * y * W;
    const r1 = 2 * y + 1 < H ? r0 + W : r0;
    const o = y * w;
    for (let x = 0; x < fw; x++) {
      const i = 2 * x;
      out[o + x] = 255 - (g[r0 + i]! + g[r0 + i + 1]! + g[r1 + i]! + g[r1 + i + 1]!) * 0.25;
    }
    if (w > fw) out[o + fw] = 255 - (g[r0 + W - 1]! + g[r1 + W - 1]!) * 0.5;
  }
  return { width: w, height: h, data: out };
}

/** Template long side at the coarse level is at least this many cells. */
const MIN_COARSE_SIDE = 14;

export function chooseFactors(
  templateW: number,
  templateH: number,
  targetPixels: number,
): { fc: number; ff: number } {
  const long = Math.max(templateW, templateH);
  let fc = 1;
  for (const f of [2, 4, 8, 16]) if (long / f >= MIN_COARSE_SIDE) fc = f;
  // A per-pixel coarse level of a big sheet would need 2 x 8 B integrals per pixel: keep ≥ 2 there.
  if (fc === 1 && targetPixels > 4_000_000) fc = 2;
  const ff = long >= 128 ? Math.max(1, fc >> 2) : 1;
  return { fc, ff };
}

function roundScale(s: number): number {
  return Math.round(s * 100) / 100;
}

/**
 * Window bounds relative to the template at the coarse level: an instance of the symbol carries at
 * least about its own ink, with clutter adding some (other text inside, crossing lines).
 */
export const PRUNE = { stdLo: 0.5, stdHi: 2.5, meanLo: 0.4, meanHi: 2.5, core: 0.4 };

/**
 * Coarse NCC of every kernel at every window of level C whose centre cell is set in `mask` (all when
 * null) and whose ink spread and mean are plausible for the template; keeps per centre cell the best
 * score (and the kernel index when `bestVar` is given).
 */
function scanLevel(
  C: CoarseLevel,
  kernels: NccKernel[],
  mask: Uint8Array | null,
  best: Float32Array,
  bestVar: Int16Array | null,
): { windows: number; kept: number } {
  const Wc = C.width;
  const Hc = C.height;
  const I = C.ink;
  const S1 = C.s1;
  const S2 = C.s2;
  const SW = Wc + 1;
  let windows = 0;
  let kept = 0;
  // Kernels sharing a window size share the prune.
  const groups = new Map<string, number[]>();
  kernels.forEach((k, i) => {
    const key = `${k.width}x${k.height}`;
    const g = groups.get(key);
    if (g) g.push(i);
    else groups.set(key, [i]);
  });
  for (const group of groups.values()) {
    const ks = group.map((i) => kernels[i]!);
    const kw = ks[0]!.width;
    const kh = ks[0]!.height;
    if (kw > Wc || kh > Hc) continue;
    const n = kw * kh;
    let stdT = 0;
    let meanT = 0;
    for (const k of ks) {
      stdT = Math.max(stdT, k.std);
      meanT = Math.max(meanT, k.mean);
    }
    // Windows whose ink spread or amount is far from the template's cannot correlate well: paper,
    // a lone line, a flat fill. Bounds in Σ over the window (n cells).
    const varLo = PRUNE.stdLo * PRUNE.stdLo * stdT * stdT * n;
    const varHi = PRUNE.stdHi * PRUNE.stdHi * stdT * stdT * n;
    const sumLo = PRUNE.meanLo * meanT * n;
    const sumHi = PRUNE.meanHi * meanT * n;
    const offs = ks.map((k) => {
      const o = new Int32Array(k.nz.length);
      for (let j = 0; j < o.length; j++) o[j] = k.nzY[j]! * Wc + k.nzX[j]!;
      return o;
    });
    const vals = ks.map((k) => {
      const o = new Float32Array(k.nz.length);
      for (let j = 0; j < o.length; j++) o[j] = k.data[k.nz[j]!]!;
      return o;
    });
    // The template's darkest cells (≥ half its peak ink): an instance has ink there too. Checking
    // these few cells first rejects most windows before the full correlation.
    const cores = ks.map((k) => {
      let peak = 0;
      for (let j = 0; j < k.nz.length; j++) peak = Math.max(peak, k.data[k.nz[j]!]!);
      const idx: number[] = [];
      let need = 0;
      for (let j = 0; j < k.nz.length; j++) {
        const v = k.data[k.nz[j]!]!;
        if (v >= 0.5 * peak) {
          idx.push(k.nzY[j]! * Wc + k.nzX[j]!);
          need += v;
        }
      }
      return { off: Int32Array.from(idx), need: PRUNE.core * need };
    });
    const cx = kw >> 1;
    const cy = kh >> 1;
    for (let y = 0; y + kh <= Hc; y++) {
      const a = y * SW;
      const b = (y + kh) * SW;
      const crow = (y + cy) * Wc + cx;
      for (let x = 0; x + kw <= Wc; x++) {
        const ci = crow + x;
        if (mask && mask[ci] === 0) continue;
        windows++;
        const s = S1[b + x + kw]! - S1[b + x]! - S1[a + x + kw]! + S1[a + x]!;
        if (s < sumLo || s > sumHi) continue;
        const ss = S2[b + x + kw]! - S2[b + x]! - S2[a + x + kw]! + S2[a + x]!;
        const varI = ss - (s * s) / n;
        if (varI < varLo || varI > varHi) continue;
        kept++;
        const sd = Math.sqrt(varI);
        const base = y * Wc + x;
        for (let g = 0; g < ks.length; g++) {
          const core = cores[g]!;
          const co = core.off;
          let inCore = 0;
          for (let j = 0; j < co.length; j++) inCore += I[base + co[j]!]!;
          if (inCore < core.need) continue;
          const o = offs[g]!;
          const tv = vals[g]!;
          let cross = 0;
          for (let j = 0; j < o.length; j++) cross += tv[j]! * I[base + o[j]!]!;
          const k = ks[g]!;
          const score = (cross - s * k.mean) / (k.norm * sd);
          if (score > best[ci]!) {
            best[ci] = score;
            if (bestVar) bestVar[ci] = group[g]!;
          }
        }
      }
    }
  }
  return { windows, kept };
}

/** Fine-level NCC of kernel k with its top-left at (x, y); the window must lie inside the level. */
function nccAt(L: Level, k: NccKernel, x: number, y: number): number {
  const W = L.width;
  const kw = k.width;
  const kh = k.height;
  let s = 0;
  let ss = 0;
  let cross = 0;
  const nz = k.nz;
  const nzX = k.nzX;
  const nzY = k.nzY;
  const td = k.data;
  if (L.s1 && L.s2) {
    const SW = W + 1;
    const a = y * SW + x;
    const b = (y + kh) * SW + x;
    s = L.s1[b + kw]! - L.s1[b]! - L.s1[a + kw]! + L.s1[a]!;
    ss = L.s2[b + kw]! - L.s2[b]! - L.s2[a + kw]! + L.s2[a]!;
    if (L.ink) {
      const I = L.ink;
      for (let j = 0; j < nz.length; j++)
        cross += td[nz[j]!]! * I[(y + nzY[j]!) * W + x + nzX[j]!]!;
    } else {
      const G = L.grey!;
      for (let j = 0; j < nz.length; j++)
        cross += td[nz[j]!]! * (255 - G[(y + nzY[j]!) * W + x + nzX[j]!]!);
    }
  } else if (L.ink) {
    const I = L.ink;
    for (let r = 0; r < kh; r++) {
      const o = (y + r) * W + x;
      for (let c = 0; c < kw; c++) {
        const v = I[o + c]!;
        s += v;
        ss += v * v;
      }
    }
    for (let j = 0; j < nz.length; j++) cross += td[nz[j]!]! * I[(y + nzY[j]!) * W + x + nzX[j]!]!;
  } else {
    const G = L.grey!;
    for (let r = 0; r < kh; r++) {
      const o = (y + r) * W + x;
      for (let c = 0; c < kw; c++) {
        const v = 255 - G[o + c]!;
        s += v;
        ss += v * v;
      }
    }
    for (let j = 0; j < nz.length; j++)
      cross += td[nz[j]!]! * (255 - G[(y + nzY[j]!) * W + x + nzX[j]!]!);
  }
  const n = kw * kh;
  const varI = ss - (s * s) / n;
  if (varI <= 1e-6 || k.norm <= 1e-6) return 0;
  return (cross - s * k.mean) / (k.norm * Math.sqrt(varI));
}

/** Best coarse NCC of kernel k over the 3x3 window centres around cell (cx, cy). */
function coarseScoreAround(C: CoarseLevel, k: NccKernel, cx: number, cy: number): number {
  let best = -1;
  for (let dy = -1; dy <= 1; dy++) {
    for (let dx = -1; dx <= 1; dx++) {
      const x = cx + dx - (k.width >> 1);
      const y = cy + dy - (k.height >> 1);
      if (x < 0 || y < 0 || x + k.width > C.width || y + k.height > C.height) continue;
      best = Math.max(best, nccAt(C, k, x, y));
    }
  }
  return best;
}

interface Variant {
  rotation: Rotation;
  scale: number;
  /** Full-resolution size (target pixels). */
  width: number;
  height: number;
  coarse: NccKernel;
}

/** Builds and caches the template's planes per (scale, rotation) and level factor. */
class TemplateBank {
  private readonly ink: InkPlane;
  private readonly cache = new Map<string, InkPlane>();
  private readonly kernels = new Map<string, NccKernel>();

  constructor(image: GreyImage) {
    this.ink = inkOf(image);
  }

  plane(scale: number, rotation: Rotation): InkPlane {
    const key = `${roundScale(scale)}:${rotation}`;
    let p = this.cache.get(key);
    if (!p) {
      p = rotatePlane(scalePlane(this.ink, roundScale(scale)), rotation);
      this.cache.set(key, p);
    }
    return p;
  }

  kernel(scale: number, rotation: Rotation, f: number): NccKernel {
    const key = `${roundScale(scale)}:${rotation}:${f}`;
    let k = this.kernels.get(key);
    if (!k) {
      k = toKernel(reducePlane(this.plane(scale, rotation), f));
      this.kernels.set(key, k);
    }
    return k;
  }
}

export function matchSymbols(
  targetIn: GreyImage,
  templatesIn: readonly SymbolTemplate[],
  options: MatchOptions = {},
): { matches: SymbolMatch[]; stats: MatchStats } {
  const t0 = performance.now();
  const paper = options.paperLevel ?? DEFAULT_PAPER_LEVEL;
  const target = flattenPaper(targetIn, paper);
  const templates = templatesIn.map((t) => ({
    label: t.label,
    image: flattenPaper(t.image, paper),
  }));
  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  const rotations = options.rotations ?? ALL_ROTATIONS;
  const scales = options.scales ?? DEFAULT_SCALES;
  const maxCandidates = options.maxCandidates ?? 4000;
  const stats: MatchStats = { templates: [], ms: { levels: 0, coarse: 0, refine: 0, total: 0 } };
  const levels = new Map<number, Level>();
  const coarseLevels = new Map<number, CoarseLevel>();
  const pixels = target.width * target.height;

  const level = (f: number): Level => {
    let L = levels.get(f);
    if (!L) {
      const t = performance.now();
      if (f === 1)
        L = { f, width: target.width, height: target.height, ink: null, grey: target.data };
      else if (f === 2) {
        const d = halve(target);
        L = { f, width: d.width, height: d.height, ink: d.data, grey: null };
      } else {
        // From a finer level already built when one divides f (cheap: it is small), else SWAR from grey.
        const finer = [...levels.values()]
          .filter((l) => l.f > 1 && l.f >= 4 && f % l.f === 0 && l.ink)
          .sort((a, b) => b.f - a.f)[0];
        const d = finer
          ? downsampleLevel(
              { width: finer.width, height: finer.height, data: finer.ink!, f: finer.f },
              f / finer.f,
            )
          : inkDownsample(target, f);
        L = { f, width: d.width, height: d.height, ink: d.data, grey: null };
      }
      if (L.width * L.height <= FINE_INTEGRAL_CELLS) {
        const ig = L.ink
          ? integrals(L.ink, L.width, L.height)
          : integrals(L.grey!, L.width, L.height, true);
        L.s1 = ig.s1;
        L.s2 = ig.s2;
      }
      levels.set(f, L);
      stats.ms.levels += performance.now() - t;
    }
    return L;
  };
  const coarseLevel = (f: number): CoarseLevel => {
    let C = coarseLevels.get(f);
    if (!C) {
      const L = level(f);
      const t = performance.now();
      const ink = L.ink ?? inkOf(target).data;
      const ig = L.s1 && L.s2 ? { s1: L.s1, s2: L.s2 } : integrals(ink, L.width, L.height);
      C = { ...L, ink, s1: ig.s1, s2: ig.s2 };
      coarseLevels.set(f, C);
      stats.ms.levels += performance.now() - t;
    }
    return C;
  };

  const all: SymbolMatch[] = [];
  templates.forEach((tpl, ti) => {
    const { fc, ff } = chooseFactors(tpl.image.width, tpl.image.height, pixels);
    const bank = new TemplateBank(tpl.image);
    const C = coarseLevel(fc);
    const F = level(ff);
    const tc = performance.now();

    // ---- coarse scan (after a pre-scan at twice the factor when the template is big enough) ------
    const variants: Variant[] = [];
    for (const s of scales) {
      for (const r of rotations) {
        const p = bank.plane(s, r);
        const k = bank.kernel(s, r, fc);
        if (k.norm <= 1e-6) continue;
        variants.push({
          rotation: r,
          scale: roundScale(s),
          width: p.width,
          height: p.height,
          coarse: k,
        });
      }
    }
    const coarseThreshold = Math.max(0.2, threshold - 0.25);
    const Wc = C.width;
    const Hc = C.height;
    const best = new Float32Array(Wc * Hc).fill(-1);
    const bestVar = new Int16Array(Wc * Hc).fill(-1);
    let mask: Uint8Array | null = null;
    let windows = 0;
    let kept = 0;
    const fa = fc * 2;
    if (Math.max(tpl.image.width, tpl.image.height) / fa >= 7) {
      const A = coarseLevel(fa);
      const bestA = new Float32Array(A.width * A.height).fill(-1);
      const kernelsA = variants.map((v) => bank.kernel(v.scale, v.rotation, fa));
      const r = scanLevel(A, kernelsA, null, bestA, null);
      windows += r.windows;
      kept += r.kept;
      // A pre-scan cell covers 2x2 coarse cells; its blur costs some score, hence the lower bar.
      const preThreshold = coarseThreshold - 0.15;
      mask = new Uint8Array(Wc * Hc);
      for (let y = 0; y < A.height; y++) {
        for (let x = 0; x < A.width; x++) {
          if (bestA[y * A.width + x]! < preThreshold) continue;
          for (let yy = Math.max(0, 2 * y - 1); yy <= Math.min(Hc - 1, 2 * y + 2); yy++) {
            mask.fill(1, yy * Wc + Math.max(0, 2 * x - 1), yy * Wc + Math.min(Wc, 2 * x + 3));
          }
        }
      }
    }
    {
      const r = scanLevel(
        C,
        variants.map((v) => v.coarse),
        mask,
        best,
        bestVar,
      );
      windows += r.windows;
      kept += r.kept;
    }

    // ---- candidates: local maxima of the best coarse score ------------------------------------
    let minSide = Infinity;
    for (const v of variants) minSide = Math.min(minSide, v.coarse.width, v.coarse.height);
    const rad = Math.max(1, Math.floor(minSide / 3));
    const cands: number[] = [];
    for (let y = 0; y < Hc; y++) {
      for (let x = 0; x < Wc; x++) {
        const i = y * Wc + x;
        const v = best[i]!;
        if (v < coarseThreshold) continue;
        let isMax = true;
        for (let dy = -rad; dy <= rad && isMax; dy++) {
          const yy = y + dy;
          if (yy < 0 || yy >= Hc) continue;
          for (let dx = -rad; dx <= rad; dx++) {
            const xx = x + dx;
            if (xx < 0 || xx >= Wc || (dx === 0 && dy === 0)) continue;
            const u = best[yy * Wc + xx]!;
            // Ties: the first in scan order wins, so a flat plateau yields one candidate.
            if (u > v || (u === v && (dy < 0 || (dy === 0 && dx < 0)))) {
              isMax = false;
              break;
            }
          }
        }
        if (isMax) cands.push(i);
      }
    }
    cands.sort((a, b) => best[b]! - best[a]!);
    if (cands.length > maxCandidates) cands.length = maxCandidates;
    stats.ms.coarse += performance.now() - tc;

    // ---- refinement at the fine level ----------------------------------------------------------
    const tr = performance.now();
    const ratio = fc / ff;
    const found: SymbolMatch[] = [];
    const scaleGrid = (s: number) =>
      [roundScale(s - 0.05), roundScale(s + 0.05)].filter((x) => x >= 0.5 && x <= 2);
    const search = (k: NccKernel, cxF: number, cyF: number, step0: number) => {
      const maxX = F.width - k.width;
      const maxY = F.height - k.height;
      if (maxX < 0 || maxY < 0) return { x: 0, y: 0, score: -1 };
      const clampX = (x: number) => Math.min(maxX, Math.max(0, x));
      const clampY = (y: number) => Math.min(maxY, Math.max(0, y));
      let bx = clampX(Math.round(cxF - k.width / 2));
      let by = clampY(Math.round(cyF - k.height / 2));
      let bs = nccAt(F, k, bx, by);
      let step = step0;
      let guard = 0;
      while (step >= 1 && guard++ < 64) {
        let nx = bx;
        let ny = by;
        let ns = bs;
        for (let dy = -step; dy <= step; dy += step) {
          for (let dx = -step; dx <= step; dx += step) {
            if (dx === 0 && dy === 0) continue;
            const x = clampX(bx + dx);
            const y = clampY(by + dy);
            if (x === bx && y === by) continue;
            const sc = nccAt(F, k, x, y);
            if (sc > ns) {
              ns = sc;
              nx = x;
              ny = y;
            }
          }
        }
        if (ns > bs) {
          bs = ns;
          bx = nx;
          by = ny;
        } else step >>= 1;
      }
      return { x: bx, y: by, score: bs };
    };

    for (const ci of cands) {
      const ccx = ci % Wc;
      const ccy = Math.floor(ci / Wc);
      // Shortlist: every variant's coarse score around this centre (±1 cell); refine those close to the best.
      const scored = variants.map((v, vi) => ({
        vi,
        score: coarseScoreAround(C, v.coarse, ccx, ccy),
      }));
      scored.sort((a, b) => b.score - a.score);
      const top = scored[0]!.score;
      let pos = { x: 0, y: 0, score: -Infinity };
      let bestR: Rotation = 0;
      let bestS = 1;
      let k: NccKernel | undefined;
      const cxF = (ccx + 0.5) * ratio;
      const cyF = (ccy + 0.5) * ratio;
      for (const c of scored.slice(0, 3)) {
        if (c.score < top - 0.12 && k) break;
        const v = variants[c.vi]!;
        const kv = bank.kernel(v.scale, v.rotation, ff);
        const p = search(kv, cxF, cyF, Math.max(1, ratio >> 1));
        if (p.score > pos.score + 1e-9) {
          pos = p;
          bestR = v.rotation;
          bestS = v.scale;
          k = kv;
        }
      }
      if (!k || pos.score < threshold - 0.15) continue;
      const centre = () => ({ x: pos.x + k!.width / 2, y: pos.y + k!.height / 2 });
      for (const s of scaleGrid(bestS)) {
        const ks = bank.kernel(s, bestR, ff);
        const c = centre();
        const p = search(ks, c.x, c.y, 2);
        if (p.score > pos.score + 1e-9) {
          pos = p;
          bestS = s;
          k = ks;
        }
      }
      if (pos.score < threshold) continue;
      const full = bank.plane(bestS, bestR);
      // Fine cell (x, y) covers target pixels [x·ff, x·ff + ff); the kernel's full-res size is the plane's.
      found.push({
        label: tpl.label,
        template: ti,
        bbox: { x: pos.x * ff, y: pos.y * ff, width: full.width, height: full.height },
        confidence: Math.min(1, Math.max(0, pos.score)),
        rotation: bestR,
        scale: bestS,
      });
    }
    stats.ms.refine += performance.now() - tr;
    const kept1 = nms(found);
    stats.templates.push({
      label: tpl.label,
      coarseFactor: fc,
      fineFactor: ff,
      windows,
      kept,
      candidates: cands.length,
      matches: kept1.length,
    });
    all.push(...kept1);
  });
  const matches = nms(all);
  stats.ms.total = performance.now() - t0;
  for (const k of Object.keys(stats.ms) as (keyof MatchStats['ms'])[])
    stats.ms[k] = Math.round(stats.ms[k]);
  return { matches, stats };
}
