// Scaling 8-bit grey images for the page compositor (pdfium.adapter.ts, paintImages): separable,
// with PDFium's choices of weights so a scanned tile looks as PDFium would draw it: bilinear between
// the two nearest source pixels when enlarging, the average of the source pixels a target pixel
// covers (by area) when reducing, so thin lines of a scan never vanish between samples.
// Weights are 14-bit fixed point; every target pixel's weights sum to exactly 1, so flat areas
// (white paper) stay exactly their value.

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

/** Taps of `dst` target pixels over `src` source pixels (one axis). */
function taps(src: number, dst: number): Taps {
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
): void {
  if (src.length < sw * sh) {
    throw new RangeError(`Expected ${sw} x ${sh} = ${sw * sh} bytes but received ${src.length}`);
  }
  const from = Math.max(0, rowFrom);
  const to = Math.min(dh, rowTo);
  if (to <= from || dw < 1) return;
  const h = taps(sw, dw);
  const v = taps(sh, dh);
  // Source rows the requested target rows need.
  const s0 = v.start[from]!;
  const s1 = v.start[to - 1]! + v.count[to - 1]!;
  // Horizontal pass over those source rows, kept with 8 fractional bits (at most 255 x 256, so the
  // vertical pass's sums stay below 2^31).
  const mid = new Int32Array((s1 - s0) * dw);
  if (h.maxTaps === 2) {
    // Enlarging (the common case for scans drawn at 200 dpi): two taps, unrolled.
    const hs = h.start;
    const w0 = new Int32Array(dw);
    const w1 = new Int32Array(dw);
    for (let x = 0; x < dw; x++) {
      w0[x] = h.weights[2 * x]!;
      w1[x] = h.count[x] === 2 ? h.weights[2 * x + 1]! : 0;
    }
    const last = sw - 1;
    for (let y = s0; y < s1; y++) {
      const row = y * sw;
      const m = (y - s0) * dw;
      for (let x = 0; x < dw; x++) {
        const st = row + hs[x]!;
        const nx = hs[x]! < last ? st + 1 : st;
        mid[m + x] = (src[st]! * w0[x]! + src[nx]! * w1[x]! + 32) >> 6;
      }
    }
  } else {
    for (let y = s0; y < s1; y++) {
      const row = y * sw;
      const m = (y - s0) * dw;
      for (let x = 0; x < dw; x++) {
        const st = row + h.start[x]!;
        const wi = x * h.maxTaps;
        const n = h.count[x]!;
        let acc = 0;
        for (let k = 0; k < n; k++) acc += src[st + k]! * h.weights[wi + k]!;
        mid[m + x] = (acc + (1 << 5)) >> 6;
      }
    }
  }
  // Vertical pass.
  const half = 1 << 21;
  for (let y = from; y < to; y++) {
    const first = v.start[y]! - s0;
    const n = v.count[y]!;
    const wi = y * v.maxTaps;
    const o = outOffset + (y - from) * outStride;
    if (n === 2) {
      const w0 = v.weights[wi]!;
      const w1 = v.weights[wi + 1]!;
      const r0 = first * dw;
      const r1 = r0 + dw;
      for (let x = 0; x < dw; x++)
        out[o + x] = (mid[r0 + x]! * w0 + mid[r1 + x]! * w1 + half) >> 22;
    } else {
      for (let x = 0; x < dw; x++) {
        let acc = 0;
        for (let k = 0; k < n; k++) acc += mid[(first + k) * dw + x]! * v.weights[wi + k]!;
        out[o + x] = (acc + half) >> 22;
      }
    }
  }
}
