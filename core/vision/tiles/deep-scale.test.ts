import { describe, expect, it } from 'vitest';
import { OBJECT_GREY } from '../compare/layers';
import { dilateMask, lineWhereSheetHasNoFill, type SheetFill } from './deep-scale';

/** A seeded pseudo-random generator (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const bit = (m: Uint32Array, stride: number, x: number, y: number) =>
  (m[y * stride + (x >> 5)]! >>> (x & 31)) & 1;

describe('dilateMask', () => {
  // Against the definition: a pixel is set when a set pixel lies within r on both axes.
  for (const [W, H, r, density] of [
    [70, 23, 1, 0.02],
    [97, 40, 5, 0.01],
    [130, 31, 16, 0.002],
    [64, 64, 33, 0.001],
    [33, 9, 3, 0.3],
  ] as const) {
    it(`${W}x${H}, radius ${r}: matches the brute-force square dilation`, () => {
      const stride = Math.ceil(W / 32);
      const m = new Uint32Array(stride * H);
      const rand = rng(W * 1000 + r);
      const set: [number, number][] = [];
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++)
          if (rand() < density) {
            m[y * stride + (x >> 5)]! |= 1 << (x & 31);
            set.push([x, y]);
          }
      const d = dilateMask(m, stride, H, r);
      let wrong = 0;
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++) {
          const want = set.some(([sx, sy]) => Math.abs(sx - x) <= r && Math.abs(sy - y) <= r);
          if (bit(d, stride, x, y) !== (want ? 1 : 0)) wrong++;
        }
      expect(set.length).toBeGreaterThan(0);
      expect(wrong).toBe(0);
    });
  }
});

describe('lineWhereSheetHasNoFill', () => {
  // A 40 x 30 render at 4x of sheet pixels (10, 5).. : random ink (grey < 240) and line work.
  const W = 40,
    H = 30;
  const rect = { scale: 4, left: 40, top: 20 };
  function render(seed: number) {
    const r = rng(seed);
    const grey = new Uint8Array(W * H);
    const lineWork = new Uint8Array(W * H).fill(255);
    for (let i = 0; i < W * H; i++) {
      grey[i] = r() < 0.5 ? 255 : Math.floor(r() * 200);
      if (r() < 0.1) lineWork[i] = OBJECT_GREY.line;
    }
    return { grey: { width: W, height: H, data: grey }, lineWork };
  }
  // Sheet pixels (8, 3) to (22, 14): the render's (10..19, 5..12) and more.
  const sheet = (near: Uint32Array | null): SheetFill => ({
    left: 8,
    top: 3,
    width: 14,
    height: 11,
    stride: 1,
    near,
  });
  /** Ink of the render that is not line work: every pixel of it is made line work. */
  const allInk = (g: Uint8Array, lw: Uint8Array) =>
    [...g].map((v, i) => (v < 240 && lw[i] !== OBJECT_GREY.line ? 1 : 0));

  for (const near of [null, new Uint32Array(11)]) {
    it(`no fill at the stored resolution (${near ? 'an empty layer' : 'none'}): all ink is line work`, () => {
      for (const seed of [1, 2, 3]) {
        const { grey, lineWork } = render(seed);
        const want = allInk(grey.data, lineWork);
        const before = lineWork.slice();
        const marked = lineWhereSheetHasNoFill(grey, lineWork, rect, sheet(near));
        expect(marked).toBe(want.reduce((p: number, q) => p + q, 0));
        for (let i = 0; i < W * H; i++)
          expect(lineWork[i]).toBe(want[i] ? OBJECT_GREY.line : before[i]);
      }
    });
  }

  it('an area of one tone wholly on the fill keeps its pixels; the ink elsewhere is line work', () => {
    // Paper, a dark square on the sheet's fill (render 8..23 x 8..19: sheet 12..15 x 7..9, the
    // fill's layer there) and a grey bar off it.
    const grey = new Uint8Array(W * H).fill(255);
    const lineWork = new Uint8Array(W * H).fill(255);
    for (let y = 8; y < 20; y++) for (let x = 8; x < 24; x++) grey[y * W + x] = 60;
    for (let x = 30; x < 38; x++) grey[25 * W + x] = 120;
    const near = new Uint32Array(11);
    for (let sy = 7 - 3; sy <= 9 - 3; sy++)
      for (let sx = 12 - 8; sx <= 15 - 8; sx++) near[sy] = near[sy]! | (1 << sx);
    const marked = lineWhereSheetHasNoFill(
      { width: W, height: H, data: grey },
      lineWork,
      rect,
      sheet(near),
    );
    expect(marked).toBe(8);
    for (let i = 0; i < W * H; i++) {
      const bar = Math.floor(i / W) === 25 && i % W >= 30 && i % W < 38;
      expect(lineWork[i]).toBe(bar ? OBJECT_GREY.line : 255);
    }
  });
});
