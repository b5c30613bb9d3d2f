import { describe, expect, it } from 'vitest';
import { dilateMask } from './deep-scale';

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
