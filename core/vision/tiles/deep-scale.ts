import type { DiffResult } from '../compare/diff';
import { OBJECT_GREY } from '../compare/layers';

// Issue 19, item 2: a deep overlay tile classifies like the 200-dpi overlay does, in sheet units.
// The compare's stage (diffStage) works in pixels of its input: at level native + 4 one sheet pixel
// is 16 level pixels, so its 1-px tolerance is 1/16 of a sheet pixel there (a beam outline that moved
// by a fraction of a 200-dpi pixel between the issues came out as a thin red line), and its fill
// split (8x8-px cells of ink, components of 24 cells with cells inside them) finds fills in areas
// that are far too small for it at 200 dpi: a beam 8 sheet pixels wide was a light fill at 800 %
// and dark ink at 100 %. Two steps, both in this module, leave the compare itself as it is:
//
//  - before the stage, `lineWhereSheetHasNoFill`: ink that the compare at the stored resolution
//    does not call fill (splitFills needs areas with whole 8x8 cells of ink and cells inside them,
//    so a beam a few sheet pixels wide is line work there) is marked line work in the level's
//    line-work image, which the stage's keepLineWork and objectLayers follow;
//  - after it, `scaleTolerance`: the stage's per-pixel distances (1 px: changed ink with ink of the
//    other side around it is not a change; 2 px: a change next to the other side's ink is a style
//    change, drawn as ink; 1 px for fills) grow to the same distances in sheet pixels.
//
// Masks are 1-bit words (diff.ts): bit (x & 31) of word (y·stride + x>>5) is pixel (x, y).

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
 * Sheet pixels around a deep region whose fills are found at the stored resolution too (a whole
 * number of the fill split's 8-px cells).
 */
export const SHEET_CONTEXT = 64;

/** A page's fill layer at the stored resolution over a rectangle of sheet pixels (top-left). */
export interface SheetFill {
  left: number;
  top: number;
  width: number;
  height: number;
  stride: number;
  /** The fill layer dilated by 1 px (a square of 3); null: no fill there. */
  near: Uint32Array | null;
}

/**
 * Line work for the level's compare where the stored resolution has no fill (see the top): every
 * ink pixel of a deep render (`grey`, level rectangle `rect` of the page; grey < paleThreshold) whose
 * sheet pixel has no fill of `sheet` within 1 sheet pixel is marked line work in `lineWork` (the
 * render's line-work image, same frame), so the stage's keepLineWork and objectLayers keep it line
 * work. A fill too narrow or too small for the 200-dpi fill split (a beam a few sheet pixels wide:
 * ink in the 200-dpi overlay) is then ink at every level too; a fill the 200-dpi compare finds keeps
 * the edges the level's renders give it.
 *
 * Decided per area of the render, not per sheet pixel alone: the ink not drawn as line work falls
 * into areas (4-connected, of one tone: within AREA_TONE of the grey the area starts from; the
 * page's line work between them parts them too), and an area at least a sheet pixel large of which
 * less than half lies where the stored resolution has fill is line work whole. Otherwise the edge of the
 * 200-dpi fill (dilated by a sheet pixel) cut such an area on the grid of sheet pixels: beam S101's
 * 8-px blue beam, ink at 200 dpi but for a corner of cells the fill split took, showed a light
 * rectangle inside it at 1,600 % whose sides lay on the 16-px grid (tile 120/78). An area mostly on
 * the sheet's fill keeps the rule per pixel. Returns the pixels marked.
 */
/** Neighbouring ink pixels within this much of an area's first grey are one area (one fill's tone). */
const AREA_TONE = 24;

export function lineWhereSheetHasNoFill(
  grey: { width: number; height: number; data: Uint8Array },
  lineWork: Uint8Array,
  rect: { scale: number; left: number; top: number },
  sheet: SheetFill,
  paleThreshold = 240,
): number {
  const { width: W, height: H, data: G } = grey;
  const k = rect.scale;
  const near = sheet.near;
  const { stride, width: SW, height: SH } = sheet;
  // Sheet column of each level column (relative to the sheet rectangle).
  const sxOf = new Int32Array(W);
  for (let x = 0; x < W; x++) sxOf[x] = Math.floor((rect.left + x) / k) - sheet.left;
  // Each pixel's class once: 1 ink with the sheet's fill near; 0 ink without; −1 not ink of an area
  // (paper, the page's line work, or outside the sheet rectangle).
  const cls = new Int8Array(W * H);
  let anyOn = false;
  for (let y = 0; y < H; y++) {
    const sy = Math.floor((rect.top + y) / k) - sheet.top;
    const rowIn = sy >= 0 && sy < SH;
    const nb = sy * stride;
    for (let x = 0, i = y * W; x < W; x++, i++) {
      if (!rowIn || G[i]! >= paleThreshold || lineWork[i] === OBJECT_GREY.line) {
        cls[i] = -1;
        continue;
      }
      const sx = sxOf[x]!;
      const c = sx < 0 || sx >= SW ? -1 : near && (near[nb + (sx >> 5)]! >>> (sx & 31)) & 1 ? 1 : 0;
      cls[i] = c;
      if (c === 1) anyOn = true;
    }
  }
  let marked = 0;
  if (!anyOn) {
    // No ink of the render lies where the stored resolution has fill (most deep regions: lines on
    // paper): every area has none of it on the fill, so all of it is line work, with no need to
    // find the areas (the same result as below, which would mark every pixel of class 0).
    for (let p = 0; p < W * H; p++) {
      if (cls[p]! < 0) continue;
      lineWork[p] = OBJECT_GREY.line;
      marked++;
    }
    return marked;
  }
  // Areas of ink that is not line work, with how much of each lies on the sheet's fill.
  const label = new Int32Array(W * H).fill(-1);
  const onShare: number[] = [];
  const stack = new Int32Array(W * H);
  for (let p = 0; p < W * H; p++) {
    if (label[p] !== -1 || cls[p]! < 0) continue;
    const id = onShare.length;
    const g0 = G[p]!;
    let n = 0,
      on = 0,
      top = 0;
    label[p] = id;
    stack[top++] = p;
    while (top > 0) {
      const q = stack[--top]!;
      const qx = q % W;
      n++;
      if (cls[q] === 1) on++;
      // Left, right, up, down (the order the stack is filled in does not change an area).
      if (qx > 0) {
        const j = q - 1;
        if (label[j] === -1 && Math.abs(G[j]! - g0) <= AREA_TONE && cls[j]! >= 0) {
          label[j] = id;
          stack[top++] = j;
        }
      }
      if (qx < W - 1) {
        const j = q + 1;
        if (label[j] === -1 && Math.abs(G[j]! - g0) <= AREA_TONE && cls[j]! >= 0) {
          label[j] = id;
          stack[top++] = j;
        }
      }
      if (q >= W) {
        const j = q - W;
        if (label[j] === -1 && Math.abs(G[j]! - g0) <= AREA_TONE && cls[j]! >= 0) {
          label[j] = id;
          stack[top++] = j;
        }
      }
      if (q < W * (H - 1)) {
        const j = q + W;
        if (label[j] === -1 && Math.abs(G[j]! - g0) <= AREA_TONE && cls[j]! >= 0) {
          label[j] = id;
          stack[top++] = j;
        }
      }
    }
    // An area smaller than a sheet pixel (an anti-aliased edge) keeps the rule per pixel.
    onShare.push(n < k * k ? 1 : on / n);
  }
  for (let p = 0; p < W * H; p++) {
    const id = label[p]!;
    if (id < 0) continue;
    // Mostly on the sheet's fill: per pixel; else the whole area is line work.
    if (onShare[id]! >= 0.5 && cls[p] === 1) continue;
    lineWork[p] = OBJECT_GREY.line;
    marked++;
  }
  return marked;
}
