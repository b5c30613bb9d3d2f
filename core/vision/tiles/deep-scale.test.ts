import { describe, expect, it } from 'vitest';
import { OBJECT_GREY } from '../compare/layers';
import { dilateMask, narrowFillsAsLine } from './deep-scale';

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

describe('narrowFillsAsLine', () => {
  it('turns fills narrower than 2 sheet pixels into line work and keeps wide ones exactly', () => {
    // Scale 8: 2 sheet px = 16 level px. A 10-px-wide band (narrow) and a 40-px-wide band (wide).
    const W = 120,
      H = 100;
    const data = new Uint8Array(W * H).fill(OBJECT_GREY.paper);
    for (let y = 10; y < 90; y++) {
      for (let x = 10; x < 20; x++) data[y * W + x] = OBJECT_GREY.fill;
      for (let x = 50; x < 90; x++) data[y * W + x] = OBJECT_GREY.fill;
    }
    const moved = narrowFillsAsLine({ width: W, height: H, data }, 8);
    expect(moved).toBe(10 * 80);
    for (let y = 10; y < 90; y++) {
      for (let x = 10; x < 20; x++) expect(data[y * W + x]).toBe(OBJECT_GREY.line);
      for (let x = 50; x < 90; x++) expect(data[y * W + x]).toBe(OBJECT_GREY.fill);
    }
    expect(data[5 * W + 5]).toBe(OBJECT_GREY.paper);
  });

  it('leaves a fill running out of the region as fill (no edge of the region narrows it)', () => {
    const W = 64,
      H = 64;
    const data = new Uint8Array(W * H).fill(OBJECT_GREY.paper);
    // 20 px wide at scale 8 (2.5 sheet px), touching the left edge.
    for (let y = 0; y < H; y++) for (let x = 0; x < 20; x++) data[y * W + x] = OBJECT_GREY.fill;
    expect(narrowFillsAsLine({ width: W, height: H, data }, 8)).toBe(0);
  });
});
