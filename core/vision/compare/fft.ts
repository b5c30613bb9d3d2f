// Minimal in-place radix-2 complex FFT on split real/imaginary Float64Arrays, and a 2-D version
// over a row-major n x m grid (both powers of two). Used for phase correlation of small images
// (coarse sheet thumbnails ≤ 512 px, patches of 32–128 px), so clarity beats the last 2x of speed.
// fft2d runs the same butterflies in WebAssembly (fft.wat) where it can: bit-identical results, and
// no cold-code cost in a fresh process (registration spends more than half its time in FFTs).
import { WASM_BASE64 } from './fft.wasm';

const twiddleCache = new Map<number, { cos: Float64Array; sin: Float64Array; rev: Uint32Array }>();

function plan(n: number): { cos: Float64Array; sin: Float64Array; rev: Uint32Array } {
  let p = twiddleCache.get(n);
  if (p) return p;
  if (n < 1 || (n & (n - 1)) !== 0)
    throw new Error(`FFT size must be a power of two but received ${n}`);
  const cos = new Float64Array(n / 2);
  const sin = new Float64Array(n / 2);
  for (let i = 0; i < n / 2; i++) {
    cos[i] = Math.cos((2 * Math.PI * i) / n);
    sin[i] = -Math.sin((2 * Math.PI * i) / n);
  }
  const rev = new Uint32Array(n);
  const bits = Math.round(Math.log2(n));
  for (let i = 0; i < n; i++) {
    let r = 0;
    for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
    rev[i] = r;
  }
  p = { cos, sin, rev };
  twiddleCache.set(n, p);
  return p;
}

/**
 * In-place FFT of `n` contiguous complex values starting at re[off], im[off].
 * inverse=true computes the unscaled inverse. Twiddles are hoisted out of the butterfly loop.
 */
export function fft1d(
  re: Float64Array,
  im: Float64Array,
  off: number,
  n: number,
  inverse: boolean,
): void {
  const p = plan(n);
  const cos = p.cos,
    sin = p.sin,
    rev = p.rev;
  for (let i = 0; i < n; i++) {
    const j = rev[i]!;
    if (j > i) {
      const a = off + i,
        b = off + j;
      const tr = re[a]!;
      re[a] = re[b]!;
      re[b] = tr;
      const ti = im[a]!;
      im[a] = im[b]!;
      im[b] = ti;
    }
  }
  const sgn = inverse ? -1 : 1;
  // size-2 stage without multiplications
  for (let a = off, end = off + n; a < end; a += 2) {
    const b = a + 1;
    const xr = re[b]!,
      xi = im[b]!;
    re[b] = re[a]! - xr;
    im[b] = im[a]! - xi;
    re[a] = re[a]! + xr;
    im[a] = im[a]! + xi;
  }
  for (let size = 4; size <= n; size <<= 1) {
    const half = size >> 1;
    const step = n / size;
    for (let k = 0; k < half; k++) {
      const wr = cos[k * step]!,
        wi = sgn * sin[k * step]!;
      for (let a = off + k, end = off + n; a < end; a += size) {
        const b = a + half;
        const br = re[b]!,
          bi = im[b]!;
        const xr = br * wr - bi * wi;
        const xi = br * wi + bi * wr;
        const ar = re[a]!,
          ai = im[a]!;
        re[b] = ar - xr;
        im[b] = ai - xi;
        re[a] = ar + xr;
        im[a] = ai + xi;
      }
    }
  }
}

function transpose(src: Float64Array, dst: Float64Array, rows: number, cols: number): void {
  for (let r = 0; r < rows; r++) transposeRow(src, dst, r, rows, cols);
}

function transposeRow(
  src: Float64Array,
  dst: Float64Array,
  r: number,
  rows: number,
  cols: number,
): void {
  const base = r * cols;
  for (let c = 0; c < cols; c++) dst[c * rows + r] = src[base + c]!;
}

const tScratch = { re: new Float64Array(0), im: new Float64Array(0) };

/** Which fft2d runs: `wasm` (default) where WebAssembly is available, else JS; tests set it false. */
export const fftKernels = { wasm: true };

interface FftExports {
  memory: WebAssembly.Memory;
  fft2d(
    re: number,
    im: number,
    tre: number,
    tim: number,
    rows: number,
    cols: number,
    inverse: number,
    cosR: number,
    sinR: number,
    revR: number,
    cosC: number,
    sinC: number,
    revC: number,
  ): void;
}

interface WasmFft {
  e: FftExports;
  /** Byte offsets of each size's tables (cos, sin: n/2 f64; rev: n u32) in the module's memory. */
  tables: Map<number, { cos: number; sin: number; rev: number }>;
  /** End of the tables: the grids go after it. */
  top: number;
}

let wasmFft: WasmFft | null | undefined;

/** This thread's instance, made on first use; null when WebAssembly is not available. */
function fftModule(): WasmFft | null {
  if (wasmFft !== undefined) return wasmFft;
  try {
    const mod = new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64'));
    const e = new WebAssembly.Instance(mod).exports as unknown as FftExports;
    wasmFft = { e, tables: new Map(), top: 16 };
  } catch {
    wasmFft = null;
  }
  return wasmFft;
}

function ensureBytes(e: FftExports, need: number): void {
  const have = e.memory.buffer.byteLength;
  if (have < need) e.memory.grow(Math.ceil((need - have) / 65536));
}

/** The module-side copies of plan(n)'s tables (the same numbers the JS butterflies use). */
function wasmTables(w: WasmFft, n: number): { cos: number; sin: number; rev: number } {
  let t = w.tables.get(n);
  if (t) return t;
  const p = plan(n);
  const half = Math.max(1, n / 2);
  const cos = w.top,
    sin = cos + half * 8,
    rev = sin + half * 8;
  w.top = Math.ceil((rev + n * 4) / 16) * 16;
  ensureBytes(w.e, w.top);
  new Float64Array(w.e.memory.buffer, cos, p.cos.length).set(p.cos);
  new Float64Array(w.e.memory.buffer, sin, p.sin.length).set(p.sin);
  new Uint32Array(w.e.memory.buffer, rev, n).set(p.rev);
  t = { cos, sin, rev };
  w.tables.set(n, t);
  return t;
}

/** fft2d in WebAssembly (fft.wat): the grid is copied in, transformed there and copied back. */
function fft2dWasm(
  re: Float64Array,
  im: Float64Array,
  rows: number,
  cols: number,
  inverse: boolean,
): boolean {
  const w = fftModule();
  if (!w) return false;
  const tr = wasmTables(w, rows),
    tc = wasmTables(w, cols);
  const n = rows * cols;
  const reAt = w.top,
    imAt = reAt + n * 8,
    treAt = imAt + n * 8,
    timAt = treAt + n * 8;
  ensureBytes(w.e, timAt + n * 8);
  const mem = new Float64Array(w.e.memory.buffer);
  mem.set(re.subarray(0, n), reAt / 8);
  mem.set(im.subarray(0, n), imAt / 8);
  w.e.fft2d(
    reAt,
    imAt,
    treAt,
    timAt,
    rows,
    cols,
    inverse ? 1 : 0,
    tr.cos,
    tr.sin,
    tr.rev,
    tc.cos,
    tc.sin,
    tc.rev,
  );
  re.set(mem.subarray(reAt / 8, reAt / 8 + n));
  im.set(mem.subarray(imAt / 8, imAt / 8 + n));
  return true;
}

/** 2-D FFT of a rows x cols grid (row-major), in place: rows, then columns. */
export function fft2d(
  re: Float64Array,
  im: Float64Array,
  rows: number,
  cols: number,
  inverse: boolean,
): void {
  if (fftKernels.wasm && fft2dWasm(re, im, rows, cols, inverse)) return;
  fft2dJs(re, im, rows, cols, inverse);
}

/** fft2d in JS: rows, transpose, rows, transpose back. */
function fft2dJs(
  re: Float64Array,
  im: Float64Array,
  rows: number,
  cols: number,
  inverse: boolean,
): void {
  const n = rows * cols;
  if (tScratch.re.length < n) {
    tScratch.re = new Float64Array(n);
    tScratch.im = new Float64Array(n);
  }
  const tr = tScratch.re,
    ti = tScratch.im;
  for (let r = 0; r < rows; r++) fft1d(re, im, r * cols, cols, inverse);
  transpose(re, tr, rows, cols);
  transpose(im, ti, rows, cols);
  for (let c = 0; c < cols; c++) fft1d(tr, ti, c * rows, rows, inverse);
  transpose(tr, re, cols, rows);
  transpose(ti, im, cols, rows);
}

export function nextPow2(n: number): number {
  let p = 1;
  while (p < n) p <<= 1;
  return p;
}

export interface CorrelationPeak {
  /** Shift d (in grid pixels) such that a(x) ≈ b(x - d). */
  dx: number;
  dy: number;
  /** Height of the normalised phase-correlation peak (1 = perfect match, ~0 = no correspondence). */
  peak: number;
  /** Peak height divided by the mean absolute correlation level: how much the peak stands out. */
  contrast: number;
}

/**
 * Phase correlation of two equal-size real grids (rows x cols, powers of two), already windowed.
 * The peak search is limited to |d| ≤ maxShift on each axis (so periodic patterns cannot alias),
 * and refined to sub-pixel precision by a parabola through the peak and its neighbours.
 * `scratch` arrays of length rows*cols are reused by callers in hot loops.
 */
export function phaseCorrelate(
  a: Float64Array,
  b: Float64Array,
  rows: number,
  cols: number,
  maxShiftX: number,
  maxShiftY: number,
  scratch?: { ar: Float64Array; ai: Float64Array; br: Float64Array; bi: Float64Array },
): CorrelationPeak {
  const n = rows * cols;
  const ar = scratch?.ar ?? new Float64Array(n);
  const ai = scratch?.ai ?? new Float64Array(n);
  const br = scratch?.br ?? new Float64Array(n);
  const bi = scratch?.bi ?? new Float64Array(n);
  // Two real FFTs for the price of one: z = a + i·b, then A(k) = (Z(k) + conj Z(−k))/2 and
  // B(k) = (Z(k) − conj Z(−k))/(2i).
  ar.set(a);
  ai.set(b);
  fft2d(ar, ai, rows, cols, false);
  crossPower(ar, ai, br, bi, rows, cols);
  ar.set(br);
  ai.set(bi);
  fft2d(ar, ai, rows, cols, true);
  return findPeak(ar, rows, cols, maxShiftX, maxShiftY);
}

// The stages of phaseCorrelate are separate functions with one loop nest each: V8 optimises a hot
// loop on stack replacement and then deoptimises when control reaches code after it that has never
// run (measured: ~120 deopts per registration, ~4x the warm time in a one-shot process). Small
// single-loop functions are optimised whole after a few calls instead.

/** Cross-power spectrum A·conj(B)/|A·conj(B)| of z = a + i·b's FFT (ar, ai) into (br, bi). */
function crossPower(
  ar: Float64Array,
  ai: Float64Array,
  br: Float64Array,
  bi: Float64Array,
  rows: number,
  cols: number,
): void {
  for (let r = 0; r < rows; r++) crossPowerRow(ar, ai, br, bi, r, rows, cols);
}

function crossPowerRow(
  ar: Float64Array,
  ai: Float64Array,
  br: Float64Array,
  bi: Float64Array,
  r: number,
  rows: number,
  cols: number,
): void {
  {
    const nr = ((rows - r) % rows) * cols;
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      const j = nr + ((cols - c) % cols);
      const zr = ar[i]!,
        zi = ai[i]!,
        wr = ar[j]!,
        wi = ai[j]!;
      const Ar = zr + wr,
        Ai = zi - wi; // 2·A
      const Br = zi + wi,
        Bi = wr - zr; // 2·B
      const xr = Ar * Br + Ai * Bi;
      const xi = Ai * Br - Ar * Bi;
      const mag = Math.sqrt(xr * xr + xi * xi);
      if (mag > 1e-12) {
        br[i] = xr / mag;
        bi[i] = xi / mag;
      } else {
        br[i] = 0;
        bi[i] = 0;
      }
    }
  }
}

function corrAt(ar: Float64Array, rows: number, cols: number, dx: number, dy: number): number {
  return ar[((dy + rows) % rows) * cols + ((dx + cols) % cols)]! / (rows * cols);
}

const peakState = new Float64Array(3);

function scanRun(ar: Float64Array, from: number, to: number, st: Float64Array): void {
  let best = st[0]!,
    bi = st[1]!,
    sumAbs = st[2]!;
  for (let i = from; i < to; i++) {
    const v = ar[i]!;
    sumAbs += v < 0 ? -v : v;
    if (v > best) {
      best = v;
      bi = i;
    }
  }
  st[0] = best;
  st[1] = bi;
  st[2] = sumAbs;
}

/**
 * Sub-pixel offset (−0.5..0.5, else 0) of a correlation peak `c` from its neighbours `m` (before) and
 * `p` (after): the vertex of a Gaussian through the three (a parabola through their logarithms) when
 * all are positive, else of a parabola through the values. Registration's transform error over 14
 * known transforms (fixture sheets at 150/200 dpi and the bench pair), two full-resolution rounds:
 * mean 0.060 px, max 0.119, against 0.073 and 0.178 with the parabola alone.
 */
function subpixel(m: number, c: number, p: number): number {
  let s = 0;
  if (m > 0 && c > 0 && p > 0) {
    const lm = Math.log(m),
      lc = Math.log(c),
      lp = Math.log(p);
    const den = lm - 2 * lc + lp;
    if (den < 0) s = (0.5 * (lm - lp)) / den;
  } else {
    const den = m - 2 * c + p;
    if (den < 0) s = (0.5 * (m - p)) / den;
  }
  return Math.abs(s) <= 0.5 ? s : 0;
}

/**
 * Highest correlation within ±max shifts, sub-pixel refinement (subpixel), contrast to the mean level.
 * The window wraps around the grid edges: each row is scanned as two contiguous runs (shifts 0..mx at
 * the start of the row, −mx..−1 at its end), with no modulo in the loop — the coarse search covers the
 * whole 256² grid once per registration, in code that is still cold (interpreted) in a one-shot process.
 */
function findPeak(
  ar: Float64Array,
  rows: number,
  cols: number,
  maxShiftX: number,
  maxShiftY: number,
): CorrelationPeak {
  const mx = Math.min(maxShiftX, (cols >> 1) - 1),
    my = Math.min(maxShiftY, (rows >> 1) - 1);
  // [best value, its index, Σ|v|], carried through the runs.
  const st = peakState;
  st[0] = -Infinity;
  st[1] = 0;
  st[2] = 0;
  for (let dy = -my; dy <= my; dy++) {
    const row = (dy < 0 ? dy + rows : dy) * cols;
    scanRun(ar, row, row + mx + 1, st); // shifts 0..mx
    scanRun(ar, row + cols - mx, row + cols, st); // shifts −mx..−1
  }
  const best = st[0]!,
    bi = st[1]!,
    sumAbs = st[2]!;
  const count = (2 * mx + 1) * (2 * my + 1);
  const scale = 1 / (rows * cols);
  const r0 = (bi / cols) | 0,
    c0 = bi - r0 * cols;
  const bx = c0 > cols >> 1 ? c0 - cols : c0,
    by = r0 > rows >> 1 ? r0 - rows : r0;
  const c = best * scale;
  const l = corrAt(ar, rows, cols, bx - 1, by),
    r = corrAt(ar, rows, cols, bx + 1, by),
    u = corrAt(ar, rows, cols, bx, by - 1),
    d = corrAt(ar, rows, cols, bx, by + 1);
  const sx = subpixel(l, c, r),
    sy = subpixel(u, c, d);
  const mean = count > 0 ? (sumAbs * scale) / count : 1;
  return { dx: bx + sx, dy: by + sy, peak: c, contrast: mean > 0 ? c / mean : 0 };
}
