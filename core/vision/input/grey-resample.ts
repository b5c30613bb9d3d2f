// Scaling 8-bit grey images for the page painter (pdfium.adapter.ts, paintImage): separable, with
// PDFium's choice of weights where the painter works (enlarging 1.5-2.5x: bilinear between the two
// nearest source pixels, centres aligned; measured against PDFium's own raster in
// pdfium-decoded-images.test.ts). Reducing averages the source pixels a target pixel covers (by
// area), so thin lines of a scan never vanish between samples. Weights are 14-bit fixed point; every
// target pixel's weights sum to exactly 1, so flat areas (white paper) keep exactly their value.
// Speed: ~3 ns a target pixel (a 283 x 275 tile to 567 x 550 in ~0.9 ms).

const ONE = 1 << 14;

interface Taps {
  /** First source index of each target pixel. */
  start: Int32Array;
  /** Number of taps of each target pixel. */
  count: Int32Array;
  /** Weights, `maxTaps` per target pixel. */
  weights: Int32Array;
  maxTaps: number;
}

/**
 * Taps by (src, dst), with their tapRanges: a scanned sheet's tiles are all scaled by the same few
 * sizes (24 tiles a sheet), and making them again for each tile cost more than scaling it. Read only.
 */
const tapsMade = new Map<number, Taps & { ranges?: ReturnType<typeof tapRanges> }>();
const TAPS_KEPT = 64;

/** Taps of `dst` target pixels over `src` source pixels (one axis); kept (tapsMade). */
function taps(src: number, dst: number): Taps {
  const key = src * 0x100000 + dst;
  let t = tapsMade.get(key);
  if (!t) {
    if (tapsMade.size >= TAPS_KEPT) tapsMade.clear();
    t = makeTaps(src, dst);
    tapsMade.set(key, t);
  }
  return t;
}

/** tapRanges(taps(src, dst), src, dst), kept with the taps. */
function rangesOf(src: number, dst: number): ReturnType<typeof tapRanges> {
  const t = taps(src, dst) as Taps & { ranges?: ReturnType<typeof tapRanges> };
  t.ranges ??= tapRanges(t, src, dst);
  return t.ranges;
}

function makeTaps(src: number, dst: number): Taps {
  const scale = src / dst;
  const maxTaps = scale <= 1 ? 2 : Math.ceil(scale) + 1;
  const start = new Int32Array(dst);
  const count = new Int32Array(dst);
  const weights = new Int32Array(dst * maxTaps);
  const w = new Float64Array(maxTaps);
  for (let i = 0; i < dst; i++) {
    let first: number;
    let n: number;
    if (scale <= 1) {
      // Enlarging: the source position of the target pixel's centre, between two source centres.
      const x = Math.min(Math.max((i + 0.5) * scale - 0.5, 0), src - 1);
      first = Math.min(Math.floor(x), Math.max(0, src - 2));
      const f = x - first;
      n = src === 1 ? 1 : 2;
      w[0] = 1 - f;
      w[1] = f;
    } else {
      // Reducing: the source pixels the target pixel covers, weighted by how much of each.
      const x0 = i * scale;
      const x1 = Math.min((i + 1) * scale, src);
      first = Math.floor(x0);
      const last = Math.min(Math.ceil(x1) - 1, src - 1);
      n = last - first + 1;
      for (let k = 0; k < n; k++) {
        const a = Math.max(x0, first + k);
        const b = Math.min(x1, first + k + 1);
        w[k] = Math.max(0, b - a) / (x1 - x0);
      }
    }
    start[i] = first;
    count[i] = n;
    // Round to fixed point and give the rounding error to the largest weight: the sum stays ONE.
    let sum = 0;
    let big = 0;
    for (let k = 0; k < n; k++) {
      const q = Math.round(w[k]! * ONE);
      weights[i * maxTaps + k] = q;
      sum += q;
      if (q > weights[i * maxTaps + big]!) big = k;
    }
    weights[i * maxTaps + big]! += ONE - sum;
  }
  return { start, count, weights, maxTaps };
}

/**
 * Where each source row has ink (pixels other than white, 255): columns [lo[r], hi[r]), or lo[r] =
 * sw and hi[r] = 0 for a blank row. Runs of paper are skipped four bytes (one aligned word) at a
 * time: a scan tile is mostly paper, and its blank rows are read whole.
 */
function inkSpans(src: Uint8Array, sw: number, sh: number) {
  const lo = new Int32Array(sh);
  const hi = new Int32Array(sh);
  // Words from the first 4-byte boundary of src's buffer: byte i of src is in word (i - al) >> 2.
  const al = (4 - (src.byteOffset & 3)) & 3;
  const words =
    src.length >= al + 4
      ? new Int32Array(src.buffer, src.byteOffset + al, (src.length - al) >> 2)
      : new Int32Array(0);
  for (let r = 0, row = 0; r < sh; r++, row += sw) {
    let a = 0;
    while (a < sw && ((row + a - al) & 3) !== 0 && src[row + a] === 255) a++;
    if (((row + a - al) & 3) === 0) while (a + 4 <= sw && words[(row + a - al) >> 2] === -1) a += 4;
    while (a < sw && src[row + a] === 255) a++;
    let b = sw;
    if (a < sw) {
      while (((row + b - al) & 3) !== 0 && src[row + b - 1] === 255) b--;
      if (((row + b - al) & 3) === 0)
        while (b - 4 > a && words[(row + b - 4 - al) >> 2] === -1) b -= 4;
      while (src[row + b - 1] === 255) b--;
    }
    lo[r] = a;
    hi[r] = a < sw ? b : 0;
  }
  return { lo, hi };
}

/**
 * For each source column s in [0, src]: the first target pixel whose taps reach past s - 1
 * (`fromEnd[s]`: its last tap is s or later) and the first whose taps all lie at s or later
 * (`fromStart[s]`). Taps only move right as the target pixel does, so a source column range [a, b)
 * touches exactly the target pixels [fromEnd[a], fromStart[b]).
 */
function tapRanges(t: Taps, src: number, dst: number) {
  const fromEnd = new Int32Array(src + 1);
  const fromStart = new Int32Array(src + 1);
  for (let s = 0, x = 0; s <= src; s++) {
    while (x < dst && t.start[x]! + t.count[x]! <= s) x++;
    fromEnd[s] = x;
  }
  for (let s = 0, x = 0; s <= src; s++) {
    while (x < dst && t.start[x]! < s) x++;
    fromStart[s] = x;
  }
  return { fromEnd, fromStart };
}

export interface ResampleOptions {
  /**
   * Compute only where there is ink (default true): target pixels all of whose taps are white
   * (255) are filled with 255, which is what computing them gives (the weights sum to exactly one).
   * Scanned drawings are mostly paper. False computes every pixel (the tests' reference).
   */
  skipBlank?: boolean;
}

/**
 * Scales a `sw` x `sh` grey image (rows of `sw` bytes) to `dw` x `dh`, writing target row y, for y in
 * [rowFrom, rowTo), at `out[outOffset + (y - rowFrom) * outStride + x]`. Rows outside that range are
 * not computed (a band of the page needs only its own).
 */
export function resampleGrey(
  src: Uint8Array,
  sw: number,
  sh: number,
  dw: number,
  dh: number,
  out: Uint8Array,
  outOffset: number,
  outStride: number,
  rowFrom = 0,
  rowTo = dh,
  options: ResampleOptions = {},
): void {
  if (src.length < sw * sh) {
    throw new RangeError(`Expected ${sw} x ${sh} = ${sw * sh} bytes but received ${src.length}`);
  }
  const from = Math.max(0, rowFrom);
  const to = Math.min(dh, rowTo);
  if (to <= from || dw < 1) return;
  const h = taps(sw, dw);
  const v = taps(sh, dh);
  const skip = options.skipBlank ?? true;
  const ink = skip ? inkSpans(src, sw, sh) : undefined;
  const range = skip ? rangesOf(sw, dw) : undefined;
  // Row by row: the target row's source rows combined vertically into `line` (8 fractional bits,
  // at most 255 x 256, so the horizontal sums stay below 2^31), then horizontally into `out`.
  const line = new Int32Array(sw + 1);
  const half = 1 << 21;
  const hs = h.start;
  const two = h.maxTaps === 2;
  // Enlarging: first tap, its weight and the next one's, side by side.
  const tab = new Int32Array(two ? 3 * dw : 0);
  if (two)
    for (let x = 0; x < dw; x++) {
      tab[3 * x] = hs[x]!;
      tab[3 * x + 1] = h.weights[2 * x]!;
      tab[3 * x + 2] = h.count[x] === 2 ? h.weights[2 * x + 1]! : 0;
    }
  for (let y = from; y < to; y++) {
    const first = v.start[y]!;
    const n = v.count[y]!;
    const wi = y * v.maxTaps;
    const o = outOffset + (y - from) * outStride;
    // The target pixels [x0, x1) this row computes, and the source columns [c0, c1) they read.
    let x0 = 0;
    let x1 = dw;
    if (ink && range) {
      let a = sw;
      let b = 0;
      for (let k = 0; k < n; k++) {
        a = Math.min(a, ink.lo[first + k]!);
        b = Math.max(b, ink.hi[first + k]!);
      }
      x0 = a < b ? range.fromEnd[a]! : 0;
      x1 = a < b ? range.fromStart[b]! : 0;
      if (x1 <= x0) {
        out.fill(255, o, o + dw); // no target pixel of this row reads ink
        continue;
      }
      out.fill(255, o, o + x0);
      out.fill(255, o + x1, o + dw);
    }
    const c0 = hs[x0]!;
    const c1 = Math.min(sw, hs[x1 - 1]! + h.count[x1 - 1]!);
    if (n === 2) {
      const w0 = v.weights[wi]!;
      const w1 = v.weights[wi + 1]!;
      const r0 = first * sw;
      const r1 = r0 + sw;
      for (let x = c0; x < c1; x++) line[x] = (src[r0 + x]! * w0 + src[r1 + x]! * w1 + 32) >> 6;
    } else {
      for (let x = c0; x < c1; x++) {
        let acc = 0;
        for (let k = 0; k < n; k++) acc += src[(first + k) * sw + x]! * v.weights[wi + k]!;
        line[x] = (acc + 32) >> 6;
      }
    }
    line[sw] = line[sw - 1]!; // the right edge's second tap (weight 0)
    if (two) {
      for (let x = x0, t = 3 * x0; x < x1; x++, t += 3) {
        const st = tab[t]!;
        out[o + x] = (line[st]! * tab[t + 1]! + line[st + 1]! * tab[t + 2]! + half) >> 22;
      }
    } else {
      for (let x = x0; x < x1; x++) {
        const st = hs[x]!;
        const hi = x * h.maxTaps;
        const c = h.count[x]!;
        let acc = 0;
        for (let k = 0; k < c; k++) acc += line[st + k]! * h.weights[hi + k]!;
        out[o + x] = (acc + half) >> 22;
      }
    }
  }
}

/** RGB samples to grey as PDFium composites colour onto a grey raster: (30 R + 59 G + 11 B) / 100. */
export function rgbToGrey(rgb: Uint8Array, pixels = rgb.length / 3): Uint8Array {
  const out = new Uint8Array(pixels);
  for (let i = 0, j = 0; i < out.length; i++, j += 3)
    // x * 5243 >> 19 is floor(x / 100) for every x up to 255 x 100.
    out[i] = ((rgb[j]! * 30 + rgb[j + 1]! * 59 + rgb[j + 2]! * 11) * 5243) >> 19;
  return out;
}

/**
 * resampleGrey for interleaved RGB (3 B/px): the same taps and weights applied to each channel, so
 * each channel comes out exactly as resampleGrey would scale that channel alone. Writes target row y,
 * for y in [rowFrom, rowTo), at `out[outOffset + (y - rowFrom) * outStride + 3 x + c]`: straight
 * into a colour bitmap's rows. Target pixels whose taps read only white (255, 255, 255) are white.
 */
export function resampleRgb(
  src: Uint8Array,
  sw: number,
  sh: number,
  dw: number,
  dh: number,
  out: Uint8Array,
  outOffset: number,
  outStride: number,
  rowFrom = 0,
  rowTo = dh,
): void {
  if (src.length < sw * sh * 3) {
    throw new RangeError(
      `Expected ${sw} x ${sh} x 3 = ${sw * sh * 3} bytes but received ${src.length}`,
    );
  }
  const from = Math.max(0, rowFrom);
  const to = Math.min(dh, rowTo);
  if (to <= from || dw < 1) return;
  const h = taps(sw, dw);
  const v = taps(sh, dh);
  // Ink spans in bytes of each row (a pixel is white when its three bytes are), then in pixels.
  const bytes = inkSpans(src, sw * 3, sh);
  const range = rangesOf(sw, dw);
  const line = new Int32Array(3 * (sw + 1));
  const half = 1 << 21;
  const hs = h.start;
  const rowBytes = sw * 3;
  // Enlarging: each target pixel's first tap (in bytes), its weight and the next one's.
  const tab = h.maxTaps === 2 ? new Int32Array(3 * dw) : undefined;
  if (tab)
    for (let x = 0; x < dw; x++) {
      tab[3 * x] = hs[x]! * 3;
      tab[3 * x + 1] = h.weights[2 * x]!;
      tab[3 * x + 2] = h.count[x] === 2 ? h.weights[2 * x + 1]! : 0;
    }
  for (let y = from; y < to; y++) {
    const first = v.start[y]!;
    const n = v.count[y]!;
    const wi = y * v.maxTaps;
    const o = outOffset + (y - from) * outStride;
    let a = sw;
    let b = 0;
    for (let k = 0; k < n; k++) {
      a = Math.min(a, Math.floor(bytes.lo[first + k]! / 3));
      b = Math.max(b, Math.ceil(bytes.hi[first + k]! / 3));
    }
    const x0 = a < b ? range.fromEnd[a]! : 0;
    const x1 = a < b ? range.fromStart[b]! : 0;
    if (x1 <= x0) {
      out.fill(255, o, o + 3 * dw);
      continue;
    }
    out.fill(255, o, o + 3 * x0);
    out.fill(255, o + 3 * x1, o + 3 * dw);
    const c0 = hs[x0]! * 3;
    const c1 = Math.min(sw, hs[x1 - 1]! + h.count[x1 - 1]!) * 3;
    if (n === 2) {
      const w0 = v.weights[wi]!;
      const w1 = v.weights[wi + 1]!;
      const r0 = first * rowBytes;
      const r1 = r0 + rowBytes;
      for (let x = c0; x < c1; x++) line[x] = (src[r0 + x]! * w0 + src[r1 + x]! * w1 + 32) >> 6;
    } else {
      for (let x = c0; x < c1; x++) {
        let acc = 0;
        for (let k = 0; k < n; k++) acc += src[(first + k) * rowBytes + x]! * v.weights[wi + k]!;
        line[x] = (acc + 32) >> 6;
      }
    }
    // The right edge's second tap (weight 0).
    line[rowBytes] = line[rowBytes - 3]!;
    line[rowBytes + 1] = line[rowBytes - 2]!;
    line[rowBytes + 2] = line[rowBytes - 1]!;
    if (tab) {
      // Enlarging: two taps, the second of weight 0 where there is only one.
      for (let x = x0, q = o + 3 * x0, t = 3 * x0; x < x1; x++, q += 3, t += 3) {
        const st = tab[t]!;
        const w0 = tab[t + 1]!;
        const w1 = tab[t + 2]!;
        out[q] = (line[st]! * w0 + line[st + 3]! * w1 + half) >> 22;
        out[q + 1] = (line[st + 1]! * w0 + line[st + 4]! * w1 + half) >> 22;
        out[q + 2] = (line[st + 2]! * w0 + line[st + 5]! * w1 + half) >> 22;
      }
      continue;
    }
    for (let x = x0; x < x1; x++) {
      const st = hs[x]! * 3;
      const hi = x * h.maxTaps;
      const c = h.count[x]!;
      const q = o + 3 * x;
      for (let ch = 0; ch < 3; ch++) {
        let acc = 0;
        for (let k = 0; k < c; k++) acc += line[st + 3 * k + ch]! * h.weights[hi + k]!;
        out[q + ch] = (acc + half) >> 22;
      }
    }
  }
}

/**
 * resampleRgb's work for target rows [rowFrom, rowTo) when it enlarges both ways (two taps each way:
 * sw, sh ≥ 2 and dw ≥ sw, dh ≥ sh), laid out for raster-simd.wat's resample_rgb_rows: `params` has
 * 8 words a row (first source row, w0, w1, target pixels [x0, x1) to compute, source bytes [c0, c1)
 * they read, the row's offset from the output) and `tab` 3 words a target pixel (first tap in bytes,
 * w0, w1), the same taps, weights and ink spans resampleRgb uses. Rows with x1 ≤ x0 and pixels
 * outside [x0, x1) are white (the caller fills them). Undefined when resampleRgb does not enlarge
 * both ways.
 */
export function resampleRgbPlan(
  src: Uint8Array,
  sw: number,
  sh: number,
  dw: number,
  dh: number,
  outStride: number,
  rowFrom = 0,
  rowTo = dh,
): { params: Int32Array; tab: Int32Array; rows: number } | undefined {
  if (sw < 2 || sh < 2 || dw < sw || dh < sh || src.length < sw * sh * 3) return undefined;
  const from = Math.max(0, rowFrom);
  const to = Math.min(dh, rowTo);
  const h = taps(sw, dw);
  const v = taps(sh, dh);
  if (h.maxTaps !== 2 || v.maxTaps !== 2) return undefined;
  const bytes = inkSpans(src, sw * 3, sh);
  const range = rangesOf(sw, dw);
  const hs = h.start;
  const tab = new Int32Array(3 * dw);
  for (let x = 0; x < dw; x++) {
    tab[3 * x] = hs[x]! * 3;
    tab[3 * x + 1] = h.weights[2 * x]!;
    tab[3 * x + 2] = h.count[x] === 2 ? h.weights[2 * x + 1]! : 0;
  }
  const rows = Math.max(0, to - from);
  const params = new Int32Array(8 * rows);
  for (let y = from; y < to; y++) {
    const first = v.start[y]!;
    const n = v.count[y]!;
    let a = sw;
    let b = 0;
    for (let k = 0; k < n; k++) {
      a = Math.min(a, Math.floor(bytes.lo[first + k]! / 3));
      b = Math.max(b, Math.ceil(bytes.hi[first + k]! / 3));
    }
    const x0 = a < b ? range.fromEnd[a]! : 0;
    const x1 = a < b ? range.fromStart[b]! : 0;
    const p = 8 * (y - from);
    params[p] = first;
    params[p + 1] = v.weights[y * 2]!;
    params[p + 2] = n === 2 ? v.weights[y * 2 + 1]! : 0;
    params[p + 3] = x0;
    params[p + 4] = x1;
    if (x1 > x0) {
      params[p + 5] = hs[x0]! * 3;
      params[p + 6] = Math.min(sw, hs[x1 - 1]! + h.count[x1 - 1]!) * 3;
    }
    params[p + 7] = (y - from) * outStride;
  }
  return { params, tab, rows };
}
