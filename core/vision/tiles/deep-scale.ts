import type { DiffResult } from '../compare/diff';
import { OBJECT_GREY } from '../compare/layers';

// Issue 19, item 2: a deep overlay tile classifies like the 200-dpi overlay does, in sheet units.
// The compare's stage (diffStage) works in pixels of its input: at level native + 4 one sheet pixel
// is 16 level pixels, so its 1-px tolerance is 1/16 of a sheet pixel there (a beam outline that moved
// by a fraction of a 200-dpi pixel between the issues came out as a thin red line), and a fill of
// the page a few level pixels wide (the inside of a narrow beam between its two outlines) is a wide
// light fill there although at 200 dpi its outlines cover it (dark ink at 100 %). Two steps, both in
// this module, leave the compare itself as it is:
//
//  - before the stage, `narrowFillsAsLine`: fill objects of the line-work image narrower than
//    NARROW_FILL_SHEET_PX sheet pixels become line work (a morphological opening of the fill class
//    by a square of that size at the level's scale: wide fills keep their exact outline);
//  - after it, `scaleTolerance`: the stage's per-pixel distances (1 px: changed ink with ink of the
//    other side around it is not a change; 2 px: a change next to the other side's ink is a style
//    change, drawn as ink; 1 px for fills) grow to the same distances in sheet pixels.
//
// Masks are 1-bit words (diff.ts): bit (x & 31) of word (y·stride + x>>5) is pixel (x, y).

/** A fill of the page narrower than this many sheet (stored-image) pixels is drawn as line work. */
export const NARROW_FILL_SHEET_PX = 2;

/** `dst` pixel x of each row = `src` pixel x + s (0 past the row's ends). */
function shiftRows(
  src: Uint32Array,
  dst: Uint32Array,
  stride: number,
  height: number,
  s: number,
): void {
  const a = Math.abs(s);
  const q = a >>> 5,
    r = a & 31,
    l = 32 - r;
  for (let y = 0; y < height; y++) {
    const row = y * stride,
      end = row + stride;
    if (s >= 0) {
      // Bit p of word k: pixel 32(k + q) + p + r.
      for (let k = row; k < end; k++) {
        const j = k + q;
        const lo = j < end ? src[j]! : 0;
        dst[k] = r === 0 ? lo : (lo >>> r) | (j + 1 < end ? src[j + 1]! << l : 0);
      }
    } else {
      // Bit p of word k: pixel 32(k − q) + p − r.
      for (let k = row; k < end; k++) {
        const j = k - q;
        const cur = j >= row ? src[j]! : 0;
        dst[k] = r === 0 ? cur : (cur << r) | (j - 1 >= row ? src[j - 1]! >>> l : 0);
      }
    }
  }
}

/** `dst` row y = `src` row y + s (0 past the top and bottom). */
function shiftCols(
  src: Uint32Array,
  dst: Uint32Array,
  stride: number,
  height: number,
  s: number,
): void {
  for (let y = 0; y < height; y++) {
    const from = y + s;
    if (from < 0 || from >= height) dst.fill(0, y * stride, (y + 1) * stride);
    else dst.set(src.subarray(from * stride, (from + 1) * stride), y * stride);
  }
}

/**
 * Pixels within `r` (Chebyshev distance: a square of side 2r + 1) of a set pixel of `m`. Each axis
 * by doubling windows (OR over [x, x + 2^j)), O(log r) passes over the words.
 */
export function dilateMask(m: Uint32Array, stride: number, height: number, r: number): Uint32Array {
  if (r <= 0) return m.slice();
  const n = stride * height;
  const tmp = new Uint32Array(n);
  const horiz = windowOr(m, stride, height, r, shiftRows, tmp);
  return windowOr(horiz, stride, height, r, shiftCols, tmp);
}

function windowOr(
  m: Uint32Array,
  stride: number,
  height: number,
  r: number,
  shift: typeof shiftRows,
  tmp: Uint32Array,
): Uint32Array {
  // OR over [x − r, x + r] = OR over [x, x + r] | OR over [x − r, x], each of length n = r + 1 by
  // doubling (OR over [x, x + q), q the largest power of two ≤ n, then that | itself n − q on).
  const n = r + 1;
  const half = (dir: 1 | -1): Uint32Array => {
    const w = m.slice();
    let q = 1;
    while (q * 2 <= n) {
      shift(w, tmp, stride, height, dir * q);
      for (let i = 0; i < w.length; i++) w[i] = w[i]! | tmp[i]!;
      q *= 2;
    }
    if (n > q) {
      shift(w, tmp, stride, height, dir * (n - q));
      for (let i = 0; i < w.length; i++) w[i] = w[i]! | tmp[i]!;
    }
    return w;
  };
  const fwd = half(1),
    back = half(-1);
  for (let i = 0; i < fwd.length; i++) fwd[i] = fwd[i]! | back[i]!;
  return fwd;
}

/** Masks of the shared frame, OR'ed word by word (null entries skipped). */
function or(...ms: (Uint32Array | null | undefined)[]): Uint32Array {
  const first = ms.find((m) => m) as Uint32Array;
  const out = new Uint32Array(first.length);
  for (const m of ms) if (m) for (let i = 0; i < out.length; i++) out[i] = out[i]! | m[i]!;
  return out;
}

/**
 * The stage's distances in sheet pixels at `scale` level pixels a sheet pixel (see the top): a
 * changed pixel stays changed only as the 200-dpi stage would judge it with every distance times
 * `scale`. Shrinks `d.added`, `d.removed` and the fill changes in place (never grows them); the
 * style masks are dropped, their pixels now out of `added` / `removed` (the overlay draws a style
 * change as ink, as it draws unchanged ink).
 */
export function scaleTolerance(d: DiffResult, scale: number): void {
  const R = Math.round(scale);
  if (R <= 1) return;
  const { stride, height } = d;
  const dil = (m: Uint32Array, r: number) => dilateMask(m, stride, height, r);
  const pale = (p: Uint32Array | undefined, w: Uint32Array) => p ?? w;
  const paleA = pale(d.paleA, d.weakA),
    paleB = pale(d.paleB, d.weakB);
  // 200 dpi: added = strong B with no weak A within 1 px, or weak B with no pale A within 1 px;
  // drawn as added unless within 2 px of weak A or on pale A (style). Removed the same way round.
  const judge = (
    changed: Uint32Array,
    strongOwn: Uint32Array,
    weakOther: Uint32Array,
    paleOther: Uint32Array,
  ) => {
    if (!changed.some((v) => v !== 0)) return;
    const nearPale = dil(paleOther, R);
    const nearWeak2 = dil(weakOther, 2 * R);
    for (let i = 0; i < changed.length; i++) {
      const c = changed[i]!;
      if (c === 0) continue;
      changed[i] = c & ~nearWeak2[i]! & ~paleOther[i]! & (~nearPale[i]! | strongOwn[i]!);
    }
  };
  judge(d.added, d.strongB, d.weakA, paleA);
  judge(d.removed, d.strongA, d.weakB, paleB);
  delete d.style;
  if (d.fills) {
    // 200 dpi: fill of one side with neither fill nor weak ink of the other within 1 px.
    const f = d.fills;
    if (f.removed.some((v) => v !== 0)) {
      const near = dil(or(f.b, d.weakB), R);
      for (let i = 0; i < f.removed.length; i++) f.removed[i] = f.removed[i]! & ~near[i]!;
    }
    if (f.added.some((v) => v !== 0)) {
      const near = dil(or(f.a, d.weakA), R);
      for (let i = 0; i < f.added.length; i++) f.added[i] = f.added[i]! & ~near[i]!;
    }
  }
}

/**
 * Fill objects of a line-work image (OBJECT_GREY.fill) narrower than NARROW_FILL_SHEET_PX sheet
 * pixels at `scale` become line work (OBJECT_GREY.line), in place: what is left of the fill class
 * after an opening by a square of side NARROW_FILL_SHEET_PX·scale stays fill. At 200 dpi such a
 * fill is all but covered by the outlines drawn along it, and the overlay draws it as ink.
 */
export function narrowFillsAsLine(
  img: { width: number; height: number; data: Uint8Array },
  scale: number,
): number {
  const side = Math.round(NARROW_FILL_SHEET_PX * scale);
  if (side <= 2) return 0;
  const { width: W, height: H, data } = img;
  const stride = Math.ceil(W / 32);
  const FILL = OBJECT_GREY.fill;
  const fill = new Uint32Array(stride * H);
  let any = false;
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++)
      if (data[y * W + x] === FILL) {
        fill[y * stride + (x >> 5)]! |= 1 << (x & 31);
        any = true;
      }
  if (!any) return 0;
  // Opening by a square of `side` (odd: 2h + 1) = erosion then dilation, each by h.
  const h = Math.max(1, Math.floor((side - 1) / 2));
  const notFill = new Uint32Array(fill.length);
  const tail = W & 31 ? (2 ** (W & 31) - 1) | 0 : -1;
  for (let i = 0; i < fill.length; i++)
    notFill[i] = ~fill[i]! & ((i % stride) + 1 === stride ? tail : -1);
  // Outside the image counts as fill (a fill running out of the region is not narrow there).
  const eroded = dilateMask(notFill, stride, H, h);
  for (let i = 0; i < eroded.length; i++) eroded[i] = fill[i]! & ~eroded[i]!;
  const opened = dilateMask(eroded, stride, H, h);
  let moved = 0;
  for (let y = 0; y < H; y++)
    for (let k = 0; k < stride; k++) {
      const i = y * stride + k;
      let thin = fill[i]! & ~opened[i]!;
      while (thin !== 0) {
        const low = thin & -thin;
        thin ^= low;
        const x = k * 32 + (31 - Math.clz32(low));
        data[y * W + x] = OBJECT_GREY.line;
        moved++;
      }
    }
  return moved;
}
