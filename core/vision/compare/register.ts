// Registration of two renders of (nominally) the same sheet: finds the 2x3 affine transform that maps
// B pixels to A pixels. Coordinates are sheet pixels, origin top-left, pixel centres at integers.
//
// Coarse to fine (the technique of bench/compare/README.md):
//   1. ink-density images at 1/f1 (SWAR box downsample, f1 a multiple of 4 so the level is ~1000 px),
//      and a coarse level at 1/(f1·g) (≤ 256 px) built from it;
//   2. coarse scale search: for each candidate scale (1, the ratio of image sizes, the ratio of ink
//      extents — covers plots at another paper size) B's coarse image is resampled at that scale and
//      FFT phase correlation gives the translation; the strongest peak wins;
//   3. patch rounds: windowed phase correlation of patches chosen by 2-D gradient energy (not long
//      straight lines, which only fix one axis), peak search bounded (periodic hatch cannot alias),
//      parabolic sub-pixel peaks; B patches are sampled through the current estimate, so scale and
//      rotation are absorbed; each round ends with a RANSAC + least-squares similarity (or affine) fit;
//      first at the 1/f1 level, then at full resolution.
// Entry points: registerImages (all of it), or its stages — registerLevels (steps 1–3 on the two
// levels) and refineFull (the full-resolution round).
// Pure TypeScript over typed arrays; no I/O.
import type { GreyImage } from '../types';
import { fft2d, nextPow2, phaseCorrelate } from './fft';
import { inkLevelSimd } from './masks-simd';

/** x_A = a·x_B + b·y_B + c ; y_A = d·x_B + e·y_B + f (sheet pixels). */
export type Affine = [number, number, number, number, number, number];

export const IDENTITY: Affine = [1, 0, 0, 0, 1, 0];

export interface RegisterOptions {
  /** 'similarity' (scale + rotation + translation, default, robust) or 'affine' (6 dof, final round only). */
  model?: 'similarity' | 'affine';
  /** Extra candidate scales (B→A) to try at the coarse level, e.g. a known plot-scale ratio. */
  scaleHints?: number[];
  /** Patch side at full resolution (power of two). Default 64. */
  patchSize?: number;
  /** Patch side at the 1/f1 level (power of two). Default 32 (256 full px at f1 = 8). */
  level1PatchSize?: number;
  /** Patch grid (columns x rows of cells, one patch per cell at most). Default 8 x 6. */
  grid?: [number, number];
  /** Skip the full-resolution round (faster, accuracy ≈ f1/10 px). Default false. */
  coarseOnly?: boolean;
  /** Longest side (level px) of the coarse level used for the global translation. Default 256. */
  coarseSize?: number;
  /** Level-1 patch rounds as [search radius, inlier threshold] in level px. Default [[12, 3]]. */
  level1Rounds?: [number, number][];
  /** Full-resolution patch rounds (search radius in px). Default [8, 4]. */
  fullRounds?: number[];
  /**
   * Ink levels of A and B made elsewhere (e.g. A's while B was still decoding, see
   * compare-pipeline.adapter.ts). Used only when their factor equals `levelFactor` of the pair.
   */
  levels?: { a: InkLevel; b: InkLevel };
}

export interface Registration {
  transform: Affine;
  /** How it was found, e.g. 'phase-correlation+patches/similarity', or 'coarse' when patches failed. */
  method: string;
  /** 0..1; below ~0.3 the images probably do not show the same sheet. */
  confidence: number;
  /** RMS distance (full-resolution A pixels) between matched patch centres after the fit. */
  residual_px: number;
  /** Patches that agree with the fit, out of `patches` evaluated in the last round. */
  inliers: number;
  patches: number;
  /** Coarse-level figures, for diagnostics. */
  coarse: { scale: number; peak: number; contrast: number };
  /** Wall time per stage, ms (downsample, coarse, level1, full). */
  timings: Record<string, number>;
}

// ---------------------------------------------------------------------------------------------
// Ink-density pyramid

/** Float ink-density image: 0 = white paper, 255 = full black, one value per level pixel. */
export interface InkLevel {
  width: number;
  height: number;
  data: Float32Array;
  /** Downsampling factor from full resolution: level pixel u has its centre at full x = f·u + (f−1)/2. */
  f: number;
}

/**
 * Box-downsample the ink (255 − grey) of `img` by the integer factor f. Rows are copied into an
 * aligned scratch row so a Uint32 view can sum 4 pixels per step (SWAR) when f is a multiple of 4.
 * Partial blocks at the right/bottom edges average over the pixels they have.
 */
export function inkDownsample(img: GreyImage, f: number): InkLevel {
  const W = img.width,
    H = img.height;
  const w = Math.ceil(W / f),
    h = Math.ceil(H / f);
  const out = new Float32Array(w * h);
  const acc = new Float64Array(w);
  const src = img.data;
  if (f % 4 === 0) {
    // Vertical pass first: add the f rows of each output row as 16-bit lanes (even bytes in lo, odd
    // bytes in hi; ≤ 257 rows fit a lane), branch-free over Uint32 words; then fold lanes per cell.
    const nWords = Math.ceil(W / 4);
    const direct = W % 4 === 0 && src.byteOffset % 4 === 0;
    const all32 = direct ? new Uint32Array(src.buffer, src.byteOffset, (W * H) >> 2) : null;
    const row = direct ? null : new Uint8Array(nWords * 4);
    const row32 = row ? new Uint32Array(row.buffer) : null;
    const lo = new Uint32Array(nWords),
      hi = new Uint32Array(nWords);
    const wordsPerCell = f / 4;
    for (let oy = 0; oy < h; oy++) {
      lo.fill(0);
      hi.fill(0);
      const y0 = oy * f,
        y1 = Math.min(H, y0 + f);
      for (let y = y0; y < y1; y++) {
        let words: Uint32Array, base: number;
        if (all32) {
          words = all32;
          base = y * nWords;
        } else {
          row!.fill(255, W);
          row!.set(src.subarray(y * W, y * W + W));
          words = row32!;
          base = 0;
        }
        for (let k = 0; k < nWords; k++) {
          const v = words[base + k]!;
          lo[k] = lo[k]! + (v & 0x00ff00ff);
          hi[k] = hi[k]! + ((v >>> 8) & 0x00ff00ff);
        }
      }
      const rows = y1 - y0;
      for (let ox = 0; ox < w; ox++) {
        let sum = 0;
        const k1 = Math.min(nWords, (ox + 1) * wordsPerCell);
        for (let k = ox * wordsPerCell; k < k1; k++) {
          const l = lo[k]!,
            u = hi[k]!;
          sum += (l & 0xffff) + (l >>> 16) + (u & 0xffff) + (u >>> 16);
        }
        // Padding bytes of a partial last word are white (255), so count them as paper.
        const cols = Math.min(W, (ox + 1) * f) - ox * f;
        const padCols = (k1 - ox * wordsPerCell) * 4 - cols;
        out[oy * w + ox] = (255 * (cols + padCols) * rows - sum) / (rows * cols);
      }
    }
  } else {
    for (let oy = 0; oy < h; oy++) {
      acc.fill(0);
      const y0 = oy * f,
        y1 = Math.min(H, y0 + f);
      for (let y = y0; y < y1; y++) {
        const base = y * W;
        for (let x = 0; x < W; x++) {
          const v = src[base + x]!;
          if (v !== 255) {
            const c = (x / f) | 0;
            acc[c] = acc[c]! + 255 - v;
          }
        }
      }
      const rows = y1 - y0;
      for (let ox = 0; ox < w; ox++) {
        const cols = Math.min(W, (ox + 1) * f) - ox * f;
        out[oy * w + ox] = acc[ox]! / (rows * cols);
      }
    }
  }
  return { width: w, height: h, data: out, f };
}

/** Further box-downsample of an ink level by integer g (cheap: the level is small). */
export function downsampleLevel(lv: InkLevel, g: number): InkLevel {
  if (g === 1) return lv;
  const w = Math.ceil(lv.width / g),
    h = Math.ceil(lv.height / g);
  const out = new Float32Array(w * h);
  const acc = new Float64Array(w);
  for (let oy = 0; oy < h; oy++) {
    acc.fill(0);
    const y0 = oy * g,
      y1 = Math.min(lv.height, y0 + g);
    for (let y = y0; y < y1; y++) addRowCells(lv.data, y * lv.width, lv.width, g, acc);
    const rows = y1 - y0;
    for (let ox = 0; ox < w; ox++) {
      const cols = Math.min(lv.width, (ox + 1) * g) - ox * g;
      out[oy * w + ox] = acc[ox]! / (rows * cols);
    }
  }
  return { width: w, height: h, data: out, f: lv.f * g };
}

/** acc[c] += sum of the g values of row `base` in cell c (the last cell may be partial). */
function addRowCells(d: Float32Array, base: number, W: number, g: number, acc: Float64Array): void {
  for (let x0 = 0, c = 0; x0 < W; x0 += g, c++) {
    const x1 = Math.min(W, x0 + g);
    let sum = 0;
    for (let x = x0; x < x1; x++) sum += d[base + x]!;
    acc[c] = acc[c]! + sum;
  }
}

/**
 * Bilinear sample of ink at (x, y) in a level (0 outside). Written without inner closures: tsx/esbuild
 * wraps every nested arrow in a `__name` call, which costs more than the arithmetic in hot loops.
 */
function sampleLevel(data: Float32Array, W: number, H: number, x: number, y: number): number {
  const x0 = Math.floor(x),
    y0 = Math.floor(y);
  const fx = x - x0,
    fy = y - y0;
  if (x0 >= 0 && y0 >= 0 && x0 + 1 < W && y0 + 1 < H) {
    const i = y0 * W + x0;
    return (
      (data[i]! * (1 - fx) + data[i + 1]! * fx) * (1 - fy) +
      (data[i + W]! * (1 - fx) + data[i + W + 1]! * fx) * fy
    );
  }
  if (x0 < -1 || y0 < -1 || x0 >= W || y0 >= H) return 0;
  const v00 = x0 >= 0 && y0 >= 0 ? data[y0 * W + x0]! : 0;
  const v10 = x0 + 1 < W && y0 >= 0 ? data[y0 * W + x0 + 1]! : 0;
  const v01 = x0 >= 0 && y0 + 1 < H ? data[(y0 + 1) * W + x0]! : 0;
  const v11 = x0 + 1 < W && y0 + 1 < H ? data[(y0 + 1) * W + x0 + 1]! : 0;
  return (v00 * (1 - fx) + v10 * fx) * (1 - fy) + (v01 * (1 - fx) + v11 * fx) * fy;
}

/** Bilinear sample of ink (255 − grey) of a full-resolution image; 0 (paper) outside. */
function sampleGrey(data: Uint8Array, W: number, H: number, x: number, y: number): number {
  const x0 = Math.floor(x),
    y0 = Math.floor(y);
  const fx = x - x0,
    fy = y - y0;
  if (x0 >= 0 && y0 >= 0 && x0 + 1 < W && y0 + 1 < H) {
    const i = y0 * W + x0;
    return (
      255 -
      ((data[i]! * (1 - fx) + data[i + 1]! * fx) * (1 - fy) +
        (data[i + W]! * (1 - fx) + data[i + W + 1]! * fx) * fy)
    );
  }
  if (x0 < -1 || y0 < -1 || x0 >= W || y0 >= H) return 0;
  const v00 = x0 >= 0 && y0 >= 0 ? 255 - data[y0 * W + x0]! : 0;
  const v10 = x0 + 1 < W && y0 >= 0 ? 255 - data[y0 * W + x0 + 1]! : 0;
  const v01 = x0 >= 0 && y0 + 1 < H ? 255 - data[(y0 + 1) * W + x0]! : 0;
  const v11 = x0 + 1 < W && y0 + 1 < H ? 255 - data[(y0 + 1) * W + x0 + 1]! : 0;
  return (v00 * (1 - fx) + v10 * fx) * (1 - fy) + (v01 * (1 - fx) + v11 * fx) * fy;
}

/** Either a float ink level or a full-resolution grey image, sampled in level coordinates. */
interface Sampler {
  f: number;
  width: number;
  height: number;
  level?: Float32Array;
  grey?: Uint8Array;
}

function fullAsSampler(img: GreyImage): Sampler {
  return { f: 1, width: img.width, height: img.height, grey: img.data };
}

function levelSampler(lv: InkLevel): Sampler {
  return { f: lv.f, width: lv.width, height: lv.height, level: lv.data };
}

/**
 * Fill a P x P grid with samples of `s` at (x0 + i·ux + j·vx, y0 + i·uy + j·vy), i = column, j = row
 * (sampler coordinates). One monomorphic loop per sampler kind: a single polymorphic sampleAt call in
 * the patch loop deoptimised between the level and the full-resolution rounds.
 */
function fillGrid(
  s: Sampler,
  out: Float64Array,
  P: number,
  x0: number,
  y0: number,
  ux: number,
  uy: number,
  vx: number,
  vy: number,
): void {
  if (s.grey) fillGridGrey(s.grey, s.width, s.height, out, P, x0, y0, ux, uy, vx, vy);
  else fillGridLevel(s.level!, s.width, s.height, out, P, x0, y0, ux, uy, vx, vy);
}

function fillGridGrey(
  d: Uint8Array,
  W: number,
  H: number,
  out: Float64Array,
  P: number,
  x0: number,
  y0: number,
  ux: number,
  uy: number,
  vx: number,
  vy: number,
): void {
  if (isUnitGrid(x0, y0, ux, uy, vx, vy) && x0 >= 0 && y0 >= 0 && x0 + P <= W && y0 + P <= H) {
    // Integer start, unit steps, inside the image: a plain copy of ink (no interpolation).
    for (let j = 0; j < P; j++) copyInkRow(d, (y0 + j) * W + x0, out, j * P, P);
    return;
  }
  const inside = gridInside(W, H, P, x0, y0, ux, uy, vx, vy);
  for (let j = 0; j < P; j++) {
    const rx = x0 + j * vx,
      ry = y0 + j * vy;
    if (inside) bilinearInkRow(d, W, rx, ry, ux, uy, out, j * P, P);
    else for (let i = 0; i < P; i++) out[j * P + i] = sampleGrey(d, W, H, rx + i * ux, ry + i * uy);
  }
}

// The samplers work row by row through small functions: in a one-shot process this code starts cold,
// and V8 optimises a small function called a few hundred times long before it would replace a long
// loop nest on the stack (see also fft.ts).

/** Whether every bilinear sample of the grid (and its +1 neighbours) lies inside a W x H image. */
function gridInside(
  W: number,
  H: number,
  P: number,
  x0: number,
  y0: number,
  ux: number,
  uy: number,
  vx: number,
  vy: number,
): boolean {
  const e = P - 1;
  const xs = [x0, x0 + e * ux, x0 + e * vx, x0 + e * (ux + vx)];
  const ys = [y0, y0 + e * uy, y0 + e * vy, y0 + e * (uy + vy)];
  return (
    Math.min(...xs) >= 0 &&
    Math.min(...ys) >= 0 &&
    Math.max(...xs) < W - 1 &&
    Math.max(...ys) < H - 1
  );
}

/** n bilinear samples of ink (255 − grey) from (x, y) in steps (ux, uy); all inside the image. */
function bilinearInkRow(
  d: Uint8Array,
  W: number,
  x: number,
  y: number,
  ux: number,
  uy: number,
  out: Float64Array,
  o: number,
  n: number,
): void {
  for (let i = 0; i < n; i++) {
    const xi = x + i * ux,
      yi = y + i * uy;
    const x0 = Math.floor(xi),
      y0 = Math.floor(yi);
    const fx = xi - x0,
      fy = yi - y0;
    const k = y0 * W + x0;
    const top = d[k]! * (1 - fx) + d[k + 1]! * fx;
    const bot = d[k + W]! * (1 - fx) + d[k + W + 1]! * fx;
    out[o + i] = 255 - (top * (1 - fy) + bot * fy);
  }
}

/** n bilinear samples of a float level from (x, y) in steps (ux, uy); all inside the level. */
function bilinearLevelRow(
  d: Float32Array,
  W: number,
  x: number,
  y: number,
  ux: number,
  uy: number,
  out: Float64Array,
  o: number,
  n: number,
): void {
  for (let i = 0; i < n; i++) {
    const xi = x + i * ux,
      yi = y + i * uy;
    const x0 = Math.floor(xi),
      y0 = Math.floor(yi);
    const fx = xi - x0,
      fy = yi - y0;
    const k = y0 * W + x0;
    out[o + i] =
      (d[k]! * (1 - fx) + d[k + 1]! * fx) * (1 - fy) +
      (d[k + W]! * (1 - fx) + d[k + W + 1]! * fx) * fy;
  }
}

function isUnitGrid(
  x0: number,
  y0: number,
  ux: number,
  uy: number,
  vx: number,
  vy: number,
): boolean {
  return (
    ux === 1 && uy === 0 && vx === 0 && vy === 1 && x0 === Math.floor(x0) && y0 === Math.floor(y0)
  );
}

function copyInkRow(d: Uint8Array, from: number, out: Float64Array, to: number, n: number): void {
  for (let i = 0; i < n; i++) out[to + i] = 255 - d[from + i]!;
}

function copyLevelRow(
  d: Float32Array,
  from: number,
  out: Float64Array,
  to: number,
  n: number,
): void {
  for (let i = 0; i < n; i++) out[to + i] = d[from + i]!;
}

function fillGridLevel(
  d: Float32Array,
  W: number,
  H: number,
  out: Float64Array,
  P: number,
  x0: number,
  y0: number,
  ux: number,
  uy: number,
  vx: number,
  vy: number,
): void {
  if (isUnitGrid(x0, y0, ux, uy, vx, vy) && x0 >= 0 && y0 >= 0 && x0 + P <= W && y0 + P <= H) {
    for (let j = 0; j < P; j++) copyLevelRow(d, (y0 + j) * W + x0, out, j * P, P);
    return;
  }
  const inside = gridInside(W, H, P, x0, y0, ux, uy, vx, vy);
  for (let j = 0; j < P; j++) {
    const rx = x0 + j * vx,
      ry = y0 + j * vy;
    if (inside) bilinearLevelRow(d, W, rx, ry, ux, uy, out, j * P, P);
    else
      for (let i = 0; i < P; i++) out[j * P + i] = sampleLevel(d, W, H, rx + i * ux, ry + i * uy);
  }
}

// ---------------------------------------------------------------------------------------------
// Affine helpers

/** The axis-aligned box around `b`'s four corners mapped through `t` ([a, b, c, d, e, f]: x' = ax + by + c). */
export function mapBox<B extends { x: number; y: number; width: number; height: number }>(
  t: readonly number[],
  b: B,
): { x: number; y: number; width: number; height: number } {
  const xs: number[] = [];
  const ys: number[] = [];
  for (const [x, y] of [
    [b.x, b.y],
    [b.x + b.width, b.y],
    [b.x, b.y + b.height],
    [b.x + b.width, b.y + b.height],
  ] as const) {
    xs.push(t[0]! * x + t[1]! * y + t[2]!);
    ys.push(t[3]! * x + t[4]! * y + t[5]!);
  }
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

export function invertAffine(t: readonly number[]): Affine {
  const [a, b, c, d, e, f] = t as Affine;
  const det = a * e - b * d;
  if (Math.abs(det) < 1e-12) throw new Error('Transform is singular');
  const ia = e / det,
    ib = -b / det,
    id = -d / det,
    ie = a / det;
  return [ia, ib, -(ia * c + ib * f), id, ie, -(id * c + ie * f)];
}

export function applyAffine(t: readonly number[], x: number, y: number): [number, number] {
  return [t[0]! * x + t[1]! * y + t[2]!, t[3]! * x + t[4]! * y + t[5]!];
}

/** Largest distance between two transforms' images of points on an n x n grid over a w x h sheet. */
export function transformError(
  t: readonly number[],
  truth: readonly number[],
  w: number,
  h: number,
  n = 9,
): { max: number; rms: number } {
  let max = 0,
    ss = 0;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const x = ((w - 1) * i) / (n - 1),
        y = ((h - 1) * j) / (n - 1);
      const [x1, y1] = applyAffine(t, x, y);
      const [x2, y2] = applyAffine(truth, x, y);
      const d = Math.hypot(x1 - x2, y1 - y2);
      max = Math.max(max, d);
      ss += d * d;
    }
  }
  return { max, rms: Math.sqrt(ss / (n * n)) };
}

interface Match {
  /** B point (full-res) */
  bx: number;
  by: number;
  /** A point (full-res) */
  ax: number;
  ay: number;
  peak: number;
}

/** Weighted least-squares similarity x_A = s·R·x_B + t (4 dof). */
function fitSimilarity(ms: Match[]): Affine | null {
  if (ms.length < 2) return null;
  let n = 0,
    mbx = 0,
    mby = 0,
    max = 0,
    may = 0;
  for (const m of ms) {
    n++;
    mbx += m.bx;
    mby += m.by;
    max += m.ax;
    may += m.ay;
  }
  mbx /= n;
  mby /= n;
  max /= n;
  may /= n;
  let sxx = 0,
    sxy = 0,
    s2 = 0;
  for (const m of ms) {
    const bx = m.bx - mbx,
      by = m.by - mby,
      ax = m.ax - max,
      ay = m.ay - may;
    sxx += bx * ax + by * ay; // Σ b·a
    sxy += bx * ay - by * ax; // Σ b×a
    s2 += bx * bx + by * by;
  }
  if (s2 < 1e-9) return null;
  const p = sxx / s2,
    q = sxy / s2; // a = s cosθ, d = s sinθ
  return [p, -q, max - (p * mbx - q * mby), q, p, may - (q * mbx + p * mby)];
}

/** Least-squares full affine (6 dof); needs ≥ 3 non-collinear matches. */
function fitAffine(ms: Match[]): Affine | null {
  if (ms.length < 3) return null;
  // Normal equations for [a b c] from (bx, by, 1) → ax, and [d e f] → ay.
  let sxx = 0,
    sxy = 0,
    sx = 0,
    syy = 0,
    sy = 0,
    n = 0,
    xa = 0,
    ya = 0,
    a1 = 0,
    xb = 0,
    yb = 0,
    b1 = 0;
  for (const m of ms) {
    sxx += m.bx * m.bx;
    sxy += m.bx * m.by;
    sx += m.bx;
    syy += m.by * m.by;
    sy += m.by;
    n++;
    xa += m.bx * m.ax;
    ya += m.by * m.ax;
    a1 += m.ax;
    xb += m.bx * m.ay;
    yb += m.by * m.ay;
    b1 += m.ay;
  }
  const M = [sxx, sxy, sx, sxy, syy, sy, sx, sy, n];
  const solve = (r: number[]): number[] | null => {
    const [m0, m1, m2, m3, m4, m5, m6, m7, m8] = M as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const det = m0 * (m4 * m8 - m5 * m7) - m1 * (m3 * m8 - m5 * m6) + m2 * (m3 * m7 - m4 * m6);
    if (Math.abs(det) < 1e-9) return null;
    const inv = [
      m4 * m8 - m5 * m7,
      m2 * m7 - m1 * m8,
      m1 * m5 - m2 * m4,
      m5 * m6 - m3 * m8,
      m0 * m8 - m2 * m6,
      m2 * m3 - m0 * m5,
      m3 * m7 - m4 * m6,
      m1 * m6 - m0 * m7,
      m0 * m4 - m1 * m3,
    ];
    return [0, 1, 2].map(
      (i) => (inv[i * 3]! * r[0]! + inv[i * 3 + 1]! * r[1]! + inv[i * 3 + 2]! * r[2]!) / det,
    );
  };
  const p = solve([xa, ya, a1]);
  const q = solve([xb, yb, b1]);
  if (!p || !q) return null;
  return [p[0]!, p[1]!, p[2]!, q[0]!, q[1]!, q[2]!];
}

function residual(t: Affine, m: Match): number {
  // applyAffine written out: no [x, y] array per call (robustFit makes ~10^5 of these a compare).
  const x = t[0] * m.bx + t[1] * m.by + t[2],
    y = t[3] * m.bx + t[4] * m.by + t[5];
  return Math.hypot(x - m.ax, y - m.ay);
}

/**
 * Robust fit: exhaustive 2-point similarity hypotheses (matches are few, ≤ ~50) scored by inlier
 * count within `thr` px, then least squares on the inliers with two rounds of re-selection.
 */
function robustFit(
  ms: Match[],
  thr: number,
  model: 'similarity' | 'affine',
): { t: Affine; inliers: Match[]; rms: number } | null {
  if (ms.length < 2) return null;
  // The hypotheses' inliers as indices in two kept lists (no array per hypothesis), and a match
  // whose squared residual is clearly above thr² is no inlier without its Math.hypot (which
  // allocates; the residual itself is unchanged where it is taken).
  const nm = ms.length;
  let inl = new Int32Array(nm),
    bestIdx = new Int32Array(nm);
  let bestN = 0;
  const far = thr * thr * 1.0001;
  let bestScore = -1;
  for (let i = 0; i < nm; i++) {
    for (let j = i + 1; j < nm; j++) {
      const t = fitSimilarity([ms[i]!, ms[j]!]);
      if (!t) continue;
      const s = Math.hypot(t[0], t[3]);
      if (!(s > 0.2 && s < 5)) continue;
      let score = 0;
      let n = 0;
      for (let k = 0; k < nm; k++) {
        const m = ms[k]!;
        const ex = t[0] * m.bx + t[1] * m.by + t[2] - m.ax,
          ey = t[3] * m.bx + t[4] * m.by + t[5] - m.ay;
        if (ex * ex + ey * ey > far) continue;
        const r = residual(t, m);
        if (r < thr) {
          inl[n++] = k;
          score += 1 - r / thr;
        }
      }
      if (score > bestScore) {
        bestScore = score;
        [bestIdx, inl] = [inl, bestIdx];
        bestN = n;
      }
    }
  }
  if (bestN < 2) return null;
  const best: Match[] = [];
  for (let q = 0; q < bestN; q++) best.push(ms[bestIdx[q]!]!);
  let inliers = best;
  let t: Affine | null = null;
  for (let round = 0; round < 3; round++) {
    const fit =
      (model === 'affine' && inliers.length >= 6 ? fitAffine(inliers) : null) ??
      fitSimilarity(inliers);
    if (!fit) break;
    t = fit;
    const res = ms.map((m) => residual(fit, m));
    const inRes = inliers.map((m) => residual(fit, m));
    const rms = Math.sqrt(inRes.reduce((s, r) => s + r * r, 0) / inRes.length);
    const cut = Math.min(thr, Math.max(3 * rms, thr / 4));
    const next = ms.filter((_, i) => res[i]! < cut);
    if (next.length < 2) break;
    inliers = next;
  }
  if (!t) return null;
  const rms = Math.sqrt(inliers.reduce((s, m) => s + residual(t, m) ** 2, 0) / inliers.length);
  return { t, inliers, rms };
}

// ---------------------------------------------------------------------------------------------
// Coarse level

/** Ink extents (full-res px) from a level's row/column profiles: the span holding all but ~1 % of the ink. */
function inkExtents(lv: InkLevel): { x0: number; x1: number; y0: number; y1: number } | null {
  const col = new Float64Array(lv.width),
    row = new Float64Array(lv.height);
  let total = 0;
  for (let y = 0; y < lv.height; y++) {
    for (let x = 0; x < lv.width; x++) {
      const v = lv.data[y * lv.width + x]!;
      col[x] = col[x]! + v;
      row[y] = row[y]! + v;
      total += v;
    }
  }
  if (total <= 0) return null;
  const span = (p: Float64Array): [number, number] => {
    let acc = 0,
      lo = 0,
      hi = p.length - 1;
    for (let i = 0; i < p.length; i++) {
      acc += p[i]!;
      if (acc >= total * 0.005) {
        lo = i;
        break;
      }
    }
    acc = 0;
    for (let i = p.length - 1; i >= 0; i--) {
      acc += p[i]!;
      if (acc >= total * 0.005) {
        hi = i;
        break;
      }
    }
    return [lo, hi];
  };
  const [x0, x1] = span(col);
  const [y0, y1] = span(row);
  const f = lv.f;
  return { x0: x0 * f, x1: (x1 + 1) * f, y0: y0 * f, y1: (y1 + 1) * f };
}

/** Resample B's coarse level into an N x M grid in A's coarse frame under x_A = s·x_B (full-res). */
function resampleCoarse(
  b: InkLevel,
  s: number,
  F: number,
  cols: number,
  rows: number,
  out: Float64Array,
): void {
  const off = (F - 1) / 2;
  for (let v = 0; v < rows; v++) resampleCoarseRow(b, s, F, off, v, cols, out);
}

function resampleCoarseRow(
  b: InkLevel,
  s: number,
  F: number,
  off: number,
  v: number,
  cols: number,
  out: Float64Array,
): void {
  const yb = (F * v + off) / s;
  const ly = (yb - (b.f - 1) / 2) / b.f;
  for (let u = 0; u < cols; u++) {
    const xb = (F * u + off) / s;
    // Average over the B area one A coarse cell covers when B is larger (s < 1), so no aliasing.
    out[v * cols + u] = sampleLevel(b.data, b.width, b.height, (xb - (b.f - 1) / 2) / b.f, ly);
  }
}

// ---------------------------------------------------------------------------------------------
// Patch rounds

export interface PatchSite {
  /** centre in A full-res px */
  x: number;
  y: number;
}

function boxSum(
  I: Float64Array,
  S: number,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
): number {
  return I[y1 * S + x1]! - I[y0 * S + x1]! - I[y1 * S + x0]! + I[y0 * S + x0]!;
}

/** Row y of the integral images of |∂x| and |∂y| (row y + 1 of ix/iy, from row y). */
function gradientIntegralRow(
  d: Float32Array,
  W: number,
  H: number,
  y: number,
  ix: Float64Array,
  iy: Float64Array,
): void {
  let rx = 0,
    ry = 0;
  const last = y + 1 >= H;
  for (let x = 0; x < W; x++) {
    const v = d[y * W + x]!;
    const gx = x + 1 < W ? Math.abs(d[y * W + x + 1]! - v) : 0;
    const gy = last ? 0 : Math.abs(d[(y + 1) * W + x]! - v);
    rx += gx;
    ry += gy;
    ix[(y + 1) * (W + 1) + x + 1] = ix[y * (W + 1) + x + 1]! + rx;
    iy[(y + 1) * (W + 1) + x + 1] = iy[y * (W + 1) + x + 1]! + ry;
  }
}

/**
 * Choose up to cols x rows patch centres on A's level image: within each grid cell the window of
 * side `win` (level px) with the largest min(Σ|∂x|, Σ|∂y|) — i.e. ink with structure along both axes.
 */
function choosePatches(lv: InkLevel, win: number, cols: number, rows: number): PatchSite[] {
  const W = lv.width,
    H = lv.height,
    d = lv.data;
  // Integral images of |gx| and |gy|.
  const ix = new Float64Array((W + 1) * (H + 1));
  const iy = new Float64Array((W + 1) * (H + 1));
  for (let y = 0; y < H; y++) gradientIntegralRow(d, W, H, y, ix, iy);
  const sites: { x: number; y: number; score: number }[] = [];
  const half = win >> 1;
  const step = Math.max(1, win >> 2);
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const gx0 = Math.floor((cx * W) / cols),
        gx1 = Math.floor(((cx + 1) * W) / cols);
      const gy0 = Math.floor((cy * H) / rows),
        gy1 = Math.floor(((cy + 1) * H) / rows);
      let best = 0,
        bx = -1,
        by = -1;
      for (let y = Math.max(half, gy0); y <= Math.min(H - half, gy1); y += step) {
        for (let x = Math.max(half, gx0); x <= Math.min(W - half, gx1); x += step) {
          const sx = boxSum(ix, W + 1, x - half, y - half, x + half, y + half);
          const sy = boxSum(iy, W + 1, x - half, y - half, x + half, y + half);
          const s = Math.min(sx, sy);
          if (s > best) {
            best = s;
            bx = x;
            by = y;
          }
        }
      }
      if (bx >= 0) sites.push({ x: bx, y: by, score: best });
    }
  }
  if (sites.length === 0) return [];
  // Drop cells that are nearly empty compared with the typical cell: they would only add noise.
  const sorted = sites.map((s) => s.score).sort((a, b) => a - b);
  const median = sorted[sorted.length >> 1]!;
  const f = lv.f;
  return sites
    .filter((s) => s.score >= median * 0.15)
    .map((s) => ({ x: f * s.x + (f - 1) / 2, y: f * s.y + (f - 1) / 2 }));
}

interface PatchScratch {
  pa: Float64Array;
  pb: Float64Array;
  ar: Float64Array;
  ai: Float64Array;
  br: Float64Array;
  bi: Float64Array;
  hann: Float64Array;
}

function makeScratch(P: number): PatchScratch {
  const n = P * P;
  const hann = new Float64Array(n);
  for (let y = 0; y < P; y++) {
    const wy = 0.5 - 0.5 * Math.cos((2 * Math.PI * (y + 0.5)) / P);
    for (let x = 0; x < P; x++)
      hann[y * P + x] = wy * (0.5 - 0.5 * Math.cos((2 * Math.PI * (x + 0.5)) / P));
  }
  return {
    pa: new Float64Array(n),
    pb: new Float64Array(n),
    ar: new Float64Array(n),
    ai: new Float64Array(n),
    br: new Float64Array(n),
    bi: new Float64Array(n),
    hann,
  };
}

/** Mean-remove and window a patch in place; returns its energy (0 for a blank patch). */
function prepPatch(p: Float64Array, hann: Float64Array): number {
  let m = 0;
  for (let i = 0; i < p.length; i++) m += p[i]!;
  m /= p.length;
  let e = 0;
  for (let i = 0; i < p.length; i++) {
    const v = (p[i]! - m) * hann[i]!;
    p[i] = v;
    e += v * v;
  }
  return e;
}

/**
 * The ink level of `img` at factor f: inkLevelSimd's box means on WebAssembly SIMD (f a multiple of
 * 4, whole cells: ~4 ms for a 36x24 in sheet at 200 dpi), else inkDownsample's.
 */
export function inkLevel(img: GreyImage, f: number): InkLevel {
  return inkLevelSimd(img, f) ?? inkDownsample(img, f);
}

/**
 * One patch round at a level: for each site (A full-res px) sample A's and B's level around it (B
 * through `t`), phase-correlate with a ±`search` level-px window, and return the matches in full-res px.
 */
function patchRound(
  A: Sampler,
  B: Sampler,
  sites: PatchSite[],
  t: Affine,
  P: number,
  search: number,
  minPeak: number,
): Match[] {
  const inv = invertAffine(t);
  const sc = makeScratch(P);
  const fa = A.f,
    fb = B.f;
  const offA = (fa - 1) / 2,
    offB = (fb - 1) / 2;
  // B's sampling grid in B sampler px per A patch px (columns u, rows v).
  const bux = (inv[0] * fa) / fb,
    buy = (inv[3] * fa) / fb,
    bvx = (inv[1] * fa) / fb,
    bvy = (inv[4] * fa) / fb;
  const out: Match[] = [];
  for (let k = 0; k < sites.length; k++) {
    const s = sites[k]!;
    // A patch: level grid centred on the site (A level coords), step = 1 level px = fa full px.
    const ua = (s.x - offA) / fa,
      va = (s.y - offA) / fa;
    const u0 = Math.round(ua) - P / 2,
      v0 = Math.round(va) - P / 2;
    // A: the level grid itself. B: A's full-res points through the inverse transform, in B's level
    // coordinates — linear in the patch indices, so a start point and two steps describe it.
    fillGrid(A, sc.pa, P, u0, v0, 1, 0, 0, 1);
    const ax0 = fa * u0 + offA,
      ay0 = fa * v0 + offA;
    const bx0 = (inv[0] * ax0 + inv[1] * ay0 + inv[2] - offB) / fb,
      by0 = (inv[3] * ax0 + inv[4] * ay0 + inv[5] - offB) / fb;
    // Bilinear even when B's grid is nearly A's: a snapped integer grid leaves a residual shift of up
    // to ±0.5 px, where the parabolic peak fit is biased (measured: 0.067 → 0.12–0.21 px max error).
    fillGrid(B, sc.pb, P, bx0, by0, bux, buy, bvx, bvy);
    const ea = prepPatch(sc.pa, sc.hann);
    const eb = prepPatch(sc.pb, sc.hann);
    if (ea <= 1e-6 || eb <= 1e-6) continue;
    const pk = phaseCorrelate(sc.pa, sc.pb, P, P, search, search, sc);
    if (pk.peak < minPeak) continue;
    // A(x) ≈ Bw(x − d): A point c ↔ B point inv(c − d·fa)
    const cx = fa * (u0 + P / 2) + offA,
      cy = fa * (v0 + P / 2) + offA;
    const [bx, by] = applyAffine(inv, cx - pk.dx * fa, cy - pk.dy * fa);
    out.push({ ax: cx, ay: cy, bx, by, peak: pk.peak });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export function levelFactor(maxDim: number): number {
  // ~1000 px at the first level; a multiple of 4 so the SWAR downsample applies.
  if (maxDim <= 1400) return maxDim <= 700 ? 1 : 2;
  return 4 * Math.max(1, Math.round(maxDim / 4000));
}

/** Sizes of the two full-resolution images (all registerLevels needs to know of them). */
export interface PairSize {
  aw: number;
  ah: number;
  bw: number;
  bh: number;
}

/** What the level stages (coarse + level-1 patch rounds) found, for the full-resolution round. */
export interface LevelStage {
  /** Level factor the stages ran at. */
  f1: number;
  transform: Affine;
  /** Patch centres in A full-res px (chosen on A's level), reused by the full-resolution round. */
  sites: PatchSite[];
  fitted: boolean;
  method: string;
  inliers: number;
  patches: number;
  residual_px: number;
  coarse: { scale: number; peak: number; contrast: number };
  timings: Record<string, number>;
}

/** The factor registerImages works at for a pair, and whether `levels` made elsewhere can be used. */
export function pairLevelFactor(size: PairSize): number {
  return levelFactor(Math.max(size.aw, size.ah, size.bw, size.bh));
}

/**
 * Register B onto A. Returns the transform mapping B pixels to A pixels, and an honest confidence:
 * pages that do not show the same drawing give few agreeing patches and a weak coarse peak.
 * = registerLevels (on the 1/f1 ink levels) then refineFull (full-resolution round).
 */
export function registerImages(
  a: GreyImage,
  b: GreyImage,
  opts: RegisterOptions = {},
): Registration {
  const t0 = performance.now();
  const size = { aw: a.width, ah: a.height, bw: b.width, bh: b.height };
  const f1 = pairLevelFactor(size);
  const given = opts.levels && opts.levels.a.f === f1 && opts.levels.b.f === f1;
  const la = given ? opts.levels!.a : inkLevel(a, f1);
  const lb = given ? opts.levels!.b : inkLevel(b, f1);
  const ds = performance.now() - t0;
  const st = registerLevels(la, lb, size, opts);
  st.timings.downsample = ds + (st.timings.downsample ?? 0);
  return refineFull(a, b, st, opts);
}

/**
 * Stages 1–3 on the ink levels only (no full-resolution pixels): coarse level and scale search, then
 * the level-1 patch rounds. `la`/`lb` must be at pairLevelFactor(size).
 */
/** The part of the level stages that needs A's level only (its coarse level and grid, extents, sites). */
interface LevelAPrep {
  la: InkLevel;
  /** Further factor of the coarse level. */
  g: number;
  ca: InkLevel;
  extents: ReturnType<typeof inkExtents>;
  cols: number;
  rows: number;
  gridA: Float64Array;
  sites: PatchSite[];
}

function prepareLevelA(la: InkLevel, opts: RegisterOptions = {}): LevelAPrep {
  // Coarse level ≤ coarseSize px on the long side of A, same factor for B; the level-1 round then
  // searches ±12 level px (±96 full px at f1 = 8) around the coarse estimate.
  const g = Math.max(1, Math.ceil(Math.max(la.width, la.height) / (opts.coarseSize ?? 256)));
  const ca = downsampleLevel(la, g);
  const cols = nextPow2(ca.width),
    rows = nextPow2(ca.height);
  const gridA = new Float64Array(cols * rows);
  for (let y = 0; y < ca.height; y++)
    gridA.set(ca.data.subarray(y * ca.width, (y + 1) * ca.width), y * cols);
  const gridCR = opts.grid ?? [8, 6];
  // Sites are chosen with a 32-level-px window whatever the patch size (their spacing, not the FFT size).
  const sites = choosePatches(la, 32, gridCR[0], gridCR[1]);
  return {
    la,
    g,
    ca,
    extents: inkExtents(ca),
    cols,
    rows,
    gridA,
    sites,
  };
}

export function registerLevels(
  la: InkLevel,
  lb: InkLevel,
  size: PairSize,
  opts: RegisterOptions = {},
): LevelStage {
  const timings: Record<string, number> = {};
  let t0 = performance.now();
  const lap = (name: string): void => {
    const now = performance.now();
    timings[name] = now - t0;
    t0 = now;
  };
  const f1 = la.f;
  if (lb.f !== f1) throw new Error(`Levels of A (f=${la.f}) and B (f=${lb.f}) differ`);
  const pa = prepareLevelA(la, opts);
  const { g, ca, cols, rows, gridA } = pa;
  const cb = downsampleLevel(lb, g);
  const F = ca.f;
  lap('downsample');

  // Candidate scales (B→A).
  const cands: number[] = [1];
  const addCand = (s: number): void => {
    if (!(s > 0.2 && s < 5)) return;
    if (cands.every((c) => Math.abs(Math.log(c / s)) > 0.01)) cands.push(s);
  };
  const dimW = size.aw / size.bw,
    dimH = size.ah / size.bh;
  if (Math.abs(Math.log(dimW / dimH)) < 0.05) addCand(Math.sqrt(dimW * dimH));
  const ea = pa.extents,
    eb = inkExtents(cb);
  if (ea && eb) {
    const sw = (ea.x1 - ea.x0) / Math.max(1, eb.x1 - eb.x0);
    const sh = (ea.y1 - ea.y0) / Math.max(1, eb.y1 - eb.y0);
    if (Math.abs(Math.log(sw / sh)) < 0.05) addCand(Math.sqrt(sw * sh));
  }
  for (const s of opts.scaleHints ?? []) addCand(s);

  const gridB = new Float64Array(cols * rows);
  let coarse = { scale: 1, peak: -Infinity, contrast: 0, dx: 0, dy: 0 };
  for (const s of cands) {
    resampleCoarse(cb, s, F, cols, rows, gridB);
    const pk = phaseCorrelate(gridA, gridB, rows, cols, cols >> 1, rows >> 1);
    if (pk.peak > coarse.peak)
      coarse = { scale: s, peak: pk.peak, contrast: pk.contrast, dx: pk.dx, dy: pk.dy };
  }
  let t: Affine = [coarse.scale, 0, coarse.dx * F, 0, coarse.scale, coarse.dy * F];
  const coarseInfo = { scale: coarse.scale, peak: coarse.peak, contrast: coarse.contrast };
  lap('coarse');

  // Level-1 patch rounds.
  const P1 = opts.level1PatchSize ?? 32;
  const sitesA = pa.sites;
  const SA = levelSampler(la),
    SB = levelSampler(lb);
  let method = 'phase-correlation/coarse';
  let inliers = 0,
    nPatches = sitesA.length,
    rms = F / 2;
  let fitted = false;
  for (const [search, thrLv] of (opts.level1Rounds ?? [[12, 3]]) as [number, number][]) {
    const ms = patchRound(SA, SB, sitesA, t, P1, search, 0.02);
    const fit = robustFit(ms, thrLv * f1, 'similarity');
    if (!fit || fit.inliers.length < Math.max(3, Math.ceil(sitesA.length * 0.25))) break;
    t = fit.t;
    inliers = fit.inliers.length;
    nPatches = sitesA.length;
    rms = fit.rms;
    fitted = true;
    method = 'phase-correlation+patches/similarity';
  }
  lap('level1');
  return {
    f1,
    transform: t,
    sites: sitesA,
    fitted,
    method,
    inliers,
    patches: nPatches,
    residual_px: rms,
    coarse: coarseInfo,
    timings,
  };
}

/** Stage 4: the full-resolution patch round(s) from a LevelStage, and the confidence. */
export function refineFull(
  a: GreyImage,
  b: GreyImage,
  st: LevelStage,
  opts: RegisterOptions = {},
): Registration {
  const model = opts.model ?? 'similarity';
  const t0 = performance.now();
  let t = st.transform;
  let { inliers, method } = st;
  let nPatches = st.patches,
    rms = st.residual_px;
  const sitesA = st.sites;
  if (st.fitted && st.f1 > 1 && !opts.coarseOnly) {
    const P = opts.patchSize ?? 64;
    const FA = fullAsSampler(a),
      FB = fullAsSampler(b);
    // Two rounds. Both patches are windowed in place, so the correlation peak is pulled toward zero
    // shift, the more the larger the shift: the second round measures only what the first fit left
    // (well under a pixel). Transform error over 14 known transforms (fixture sheets at 150/200 dpi,
    // the bench pair): mean 0.118 → 0.060 px, max 0.24 → 0.12 (~8 ms more at 200 dpi).
    const rounds = opts.fullRounds ?? [8, 4];
    for (const search of rounds) {
      // Same sites (A full-res px); patches of P full px centred on them.
      const ms = patchRound(FA, FB, sitesA, t, P, search, 0.02);
      const fit = robustFit(ms, 1.5, model);
      if (!fit || fit.inliers.length < Math.max(3, Math.ceil(sitesA.length * 0.25))) break;
      t = fit.t;
      inliers = fit.inliers.length;
      nPatches = sitesA.length;
      rms = fit.rms;
      method = `phase-correlation+patches/${model === 'affine' && fit.inliers.length >= 6 ? 'affine' : 'similarity'}`;
    }
  }
  const timings = { ...st.timings, full: performance.now() - t0 };
  let confidence: number;
  if (st.fitted) {
    const frac = nPatches > 0 ? inliers / nPatches : 0;
    // Inlier share dominates; a residual above ~1 px and a weak coarse peak pull it down.
    confidence = Math.max(
      0,
      Math.min(
        1,
        frac * (1 / (1 + Math.max(0, rms - 0.5))) * Math.min(1, 0.5 + st.coarse.contrast / 20),
      ),
    );
  } else {
    confidence = Math.max(0, Math.min(0.2, st.coarse.contrast / 200));
  }
  return {
    transform: t,
    method,
    confidence,
    residual_px: rms,
    inliers,
    patches: nPatches,
    coarse: st.coarse,
    timings,
  };
}

// Exported for tests.
export const _internal = {
  fitSimilarity,
  fitAffine,
  robustFit,
  choosePatches,
  inkExtents,
  fft2d,
};
