import { describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { rng } from './test-support';
import { crop, diffOf, pens, randomSheet, twin } from './rule-sheets.test-support';
import type { DiffResult, PixelWindow } from './diff';
import { PEN_PX, penStyle, takeBits } from './layers';

// penStyle without closures per pixel (penPass, sameStroke over the words) against the rule as it was
// first written (kept here as the reference): same masks and counts to the bit on random sheets of
// strokes drawn with other pens, tones and dots, with and without a window on A.

const HATCH_DELTA = 8;

/** The first penStyle and its helpers (merge 25f77ef), unchanged but for the name. */
/**
 * Bit x of row y of a packed plane (rows of `stride` words), 0 outside `W` x `H`.
 */
function bitOf(m: Uint32Array, stride: number, W: number, H: number, x: number, y: number): number {
  return x < 0 || y < 0 || x >= W || y >= H ? 0 : (m[y * stride + (x >> 5)]! >>> (x & 31)) & 1;
}

/**
 * Whether pixel (x, y) of a stroke of `own` (a packed ink plane) is the same line as ink of `other`
 * drawn with another pen: the stroke's cross-section through the pixel — its run of `own` ink across
 * the line (the shorter of the horizontal and the vertical run, each at most PEN_PX long between
 * paper on both ends) — holds line work of `other`, and where the pixel lies beyond that line work,
 * the other side's grey there (`otherGrey`) is a band that ends with the stroke: darker by
 * HATCH_DELTA than the other side's grey just past the run's far end (the stroke drawn lighter
 * there, not a wide fill it was drawn over).
 */
function sameStroke(
  own: Uint32Array,
  other: Uint32Array,
  stride: number,
  W: number,
  H: number,
  x: number,
  y: number,
  otherGrey: (x: number, y: number) => number,
): boolean {
  let x0 = x,
    x1 = x;
  while (x1 - x0 < PEN_PX && bitOf(own, stride, W, H, x0 - 1, y)) x0--;
  while (x1 - x0 < PEN_PX && bitOf(own, stride, W, H, x1 + 1, y)) x1++;
  let y0 = y,
    y1 = y;
  while (y1 - y0 < PEN_PX && bitOf(own, stride, W, H, x, y0 - 1)) y0--;
  while (y1 - y0 < PEN_PX && bitOf(own, stride, W, H, x, y1 + 1)) y1++;
  const h = x1 - x0 < PEN_PX ? x1 - x0 : Infinity,
    v = y1 - y0 < PEN_PX ? y1 - y0 : Infinity;
  if (h === Infinity && v === Infinity) return false;
  // The run as positions t0..t1 along one axis, the pixel at t.
  const across = h <= v;
  const t0 = across ? x0 : y0,
    t1 = across ? x1 : y1,
    t = across ? x : y;
  const at = (u: number): [number, number] => (across ? [u, y] : [x, u]);
  let lo = Infinity,
    hi = -Infinity;
  for (let u = t0; u <= t1; u++)
    if (bitOf(other, stride, W, H, ...at(u))) {
      if (u < lo) lo = u;
      hi = u;
    }
  if (hi < lo) return false;
  if (t >= lo && t <= hi) return true;
  const far = t > hi ? t1 + 1 : t0 - 1;
  return otherGrey(...at(far)) >= otherGrey(x, y) + HATCH_DELTA;
}

function penStyleFirst(
  d: DiffResult,
  greyA: GreyImage,
  windowA: PixelWindow | undefined,
  greyB: GreyImage,
  paleThreshold = 240,
): number {
  const st = d.style;
  if (!st) return 0;
  const { width: W, height: H, stride, weakA, weakB } = d;
  const wx = windowA ? Math.round(windowA.x) : 0,
    wy = windowA ? Math.round(windowA.y) : 0;
  const greyOfA = (x: number, y: number): number => {
    const ax = x + wx,
      ay = y + wy;
    return ax >= 0 && ay >= 0 && ax < greyA.width && ay < greyA.height
      ? greyA.data[ay * greyA.width + ax]!
      : 255;
  };
  const greyOfB = (x: number, y: number): number =>
    x >= 0 && y >= 0 && x < W && y < H ? greyB.data[y * W + x]! : 255;
  const pass = (
    geom: Uint32Array,
    style: Uint32Array,
    own: Uint32Array,
    other: Uint32Array,
    otherGrey: (x: number, y: number) => number,
  ) =>
    takeBits(
      geom,
      W,
      H,
      stride,
      (x, y) =>
        otherGrey(x, y) < paleThreshold && sameStroke(own, other, stride, W, H, x, y, otherGrey),
      (i, back) => {
        style[i] = style[i]! | back;
      },
    );
  const r = pass(st.geomRemoved, st.removed, weakA, weakB, greyOfB);
  const a = pass(st.geomAdded, st.added, weakB, weakA, greyOfA);
  st.removed_px += r;
  st.added_px += a;
  return r + a;
}

describe('penStyle over words', () => {
  it('moves the same pixels as the first penStyle, to the bit (30 random sheet pairs)', () => {
    let moved = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const r = rng(1000 + seed);
      const w = [96, 100, 131, 64, 77][seed % 5]!,
        h = 40 + ((r() * 60) | 0);
      const window = seed % 2 === 0 ? { x: 3, y: 2, width: w, height: h } : undefined;
      const A = window ? randomSheet(w + 6, h + 6, r) : randomSheet(w, h, r);
      const B = twin(crop(A, w, h, window), r);
      pens(A, B, window?.x ?? 0, window?.y ?? 0, r);
      const src = crop(A, w, h, window);
      const d1 = diffOf(src, B),
        d2 = structuredClone(d1);
      const n1 = penStyleFirst(d1, A, window, B);
      const n2 = penStyle(d2, A, window, B);
      expect(n2).toBe(n1);
      expect(d2.style).toEqual(d1.style);
      moved += n1;
    }
    // The sheets do have pen changes (the comparison is not of two no-ops).
    expect(moved).toBeGreaterThan(100);
    expect(PEN_PX).toBe(10);
  });
});
