import { describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { rng } from './test-support';
import { crop, diffOf, randomSheet, twin } from './rule-sheets.test-support';
import type { DiffResult, PixelWindow } from './diff';
import { SPECK_PX, speckNoise } from './layers';
import { labelRuns, listPieces } from './small-pieces';

// speckNoise over runs (small-pieces.ts) against the rule as it was first written: a flood per changed
// piece from each changed pixel, word by word (kept here as the reference). Same masks, counts and
// score to the bit on random sheets of dots, strokes and tones, with and without a window on A.

/** The first speckNoise (merge 25f77ef), unchanged but for its name. */
function speckNoiseFlood(
  d: DiffResult,
  greyA: GreyImage,
  windowA: PixelWindow | undefined,
  greyB: GreyImage,
  paleThreshold = 240,
): number {
  const { width: W, height: H, stride } = d;
  const wx = windowA ? Math.round(windowA.x) : 0,
    wy = windowA ? Math.round(windowA.y) : 0;
  const greyAt = (side: 0 | 1, x: number, y: number): number => {
    if (x < 0 || y < 0 || x >= W || y >= H) return 255;
    if (side === 1) return greyB.data[y * W + x]!;
    const ax = x + wx,
      ay = y + wy;
    return ax < 0 || ay < 0 || ax >= greyA.width || ay >= greyA.height
      ? 255
      : greyA.data[ay * greyA.width + ax]!;
  };
  /** Whether the other side has a dot within 2 px of box x0..x1, y0..y1. */
  const dotThere = (other: 0 | 1, x0: number, y0: number, x1: number, y1: number): boolean => {
    const ring: number[] = [];
    for (let y = y0 - 4; y <= y1 + 4; y++)
      for (let x = x0 - 4; x <= x1 + 4; x++) {
        if (x >= x0 - 2 && x <= x1 + 2 && y >= y0 - 2 && y <= y1 + 2) continue;
        ring.push(greyAt(other, x, y));
      }
    ring.sort((p, q) => p - q);
    const tone = ring[ring.length >> 1]!;
    let min = 255;
    for (let y = y0 - 2; y <= y1 + 2; y++)
      for (let x = x0 - 2; x <= x1 + 2; x++) min = Math.min(min, greyAt(other, x, y));
    return min < paleThreshold && min < tone - 8;
  };
  const st = d.style;
  const counts = [0, 0, 0, 0]; // strong removed, faint removed, strong added, faint added
  const sides = [
    {
      changed: d.removed,
      strong: d.strongA,
      other: 1 as const,
      style: st ? [st.removed, st.geomRemoved] : [],
    },
    {
      changed: d.added,
      strong: d.strongB,
      other: 0 as const,
      style: st ? [st.added, st.geomAdded] : [],
    },
  ];
  const stack: number[] = [];
  const piece: number[] = [];
  sides.forEach((sd, side) => {
    const { changed } = sd;
    const done = new Uint32Array(stride * H);
    let styleBack = 0;
    for (let y = 0; y < H; y++)
      for (let k = 0; k < stride; k++) {
        const i = y * stride + k;
        let bits = changed[i]! & ~done[i]!;
        while (bits !== 0) {
          const low = bits & -bits;
          bits ^= low;
          const x = k * 32 + (31 - Math.clz32(low));
          if (x >= W) break;
          // The piece, flooded until it is larger than a speck.
          piece.length = 0;
          stack.length = 0;
          stack.push(x, y);
          done[i] = done[i]! | low;
          let x0 = x,
            x1 = x,
            y0 = y,
            y1 = y;
          while (stack.length > 0 && piece.length <= 2 * SPECK_PX) {
            const py = stack.pop()!,
              px = stack.pop()!;
            piece.push(px, py);
            if (px < x0) x0 = px;
            if (px > x1) x1 = px;
            if (py < y0) y0 = py;
            if (py > y1) y1 = py;
            for (let yy = Math.max(0, py - 1); yy <= Math.min(H - 1, py + 1); yy++)
              for (let xx = Math.max(0, px - 1); xx <= Math.min(W - 1, px + 1); xx++) {
                const j = yy * stride + (xx >> 5),
                  t = 1 << (xx & 31);
                if (!(changed[j]! & t) || done[j]! & t) continue;
                done[j] = done[j]! | t;
                stack.push(xx, yy);
              }
          }
          if (stack.length > 0 || piece.length > 2 * SPECK_PX) {
            // Larger than a speck: the rest of it is marked done without a look.
            while (stack.length > 0) {
              const py = stack.pop()!,
                px = stack.pop()!;
              for (let yy = Math.max(0, py - 1); yy <= Math.min(H - 1, py + 1); yy++)
                for (let xx = Math.max(0, px - 1); xx <= Math.min(W - 1, px + 1); xx++) {
                  const j = yy * stride + (xx >> 5),
                    t = 1 << (xx & 31);
                  if (!(changed[j]! & t) || done[j]! & t) continue;
                  done[j] = done[j]! | t;
                  stack.push(xx, yy);
                }
            }
            continue;
          }
          if (!dotThere(sd.other, x0, y0, x1, y1)) continue;
          for (let q = 0; q < piece.length; q += 2) {
            const px = piece[q]!,
              j = piece[q + 1]! * stride + (px >> 5),
              t = 1 << (px & 31);
            changed[j] = changed[j]! & ~t;
            if (sd.style.length > 0) {
              if (sd.style[0]![j]! & t) styleBack++;
              sd.style[0]![j] = sd.style[0]![j]! & ~t;
              sd.style[1]![j] = sd.style[1]![j]! & ~t;
            }
            if (sd.strong[j]! & t) counts[2 * side]!++;
            else counts[2 * side + 1]!++;
          }
          bits &= ~done[i]!;
        }
      }
    if (st) {
      if (side === 0) st.removed_px -= styleBack;
      else st.added_px -= styleBack;
    }
  });
  const [sr, fr, sa, fa] = counts as [number, number, number, number];
  if (sr + fr + sa + fa === 0) return 0;
  const s = d.stats;
  s.removed_px -= sr;
  s.added_px -= sa;
  s.unchanged_px += sr + sa;
  const union = s.added_px + s.removed_px + s.unchanged_px;
  s.changed_fraction = union > 0 ? (s.added_px + s.removed_px) / union : 0;
  d.score = 1 - s.changed_fraction;
  d.faint.removed_px = Math.max(0, d.faint.removed_px - fr);
  d.faint.added_px = Math.max(0, d.faint.added_px - fa);
  return sr + fr + sa + fa;
}

describe('speckNoise over runs', () => {
  it('gives back the same pixels as the flood it replaces, to the bit (30 random sheet pairs)', () => {
    let given = 0;
    for (let seed = 1; seed <= 30; seed++) {
      const r = rng(seed);
      // Widths on and off a word's edge.
      const w = [96, 100, 131, 64, 77][seed % 5]!,
        h = 40 + ((r() * 60) | 0);
      const window = seed % 2 === 0 ? { x: 3, y: 2, width: w, height: h } : undefined;
      // With a window, A is larger than the frame (its masks packed through the window).
      const A = window ? randomSheet(w + 6, h + 6, r) : randomSheet(w, h, r);
      const src = crop(A, w, h, window);
      const B = twin(src, r);
      const d1 = diffOf(src, B),
        d2 = structuredClone(d1);
      const n1 = speckNoiseFlood(d1, A, window, B);
      const n2 = speckNoise(d2, A, window, B);
      expect(n2).toBe(n1);
      expect(d2.added).toEqual(d1.added);
      expect(d2.removed).toEqual(d1.removed);
      expect(d2.style).toEqual(d1.style);
      expect(d2.stats).toEqual(d1.stats);
      expect(d2.faint).toEqual(d1.faint);
      expect(d2.score).toBe(d1.score);
      given += n1;
    }
    // The sheets do have specks given back (the comparison is not of two no-ops).
    expect(given).toBeGreaterThan(100);
  });
});

describe('labelRuns', () => {
  it('finds the 8-connected pieces of a mask and their sizes, bits past the width ignored', () => {
    const W = 40,
      H = 6,
      stride = 2;
    const m = new Uint32Array(stride * H);
    const set = (x: number, y: number) =>
      (m[y * stride + (x >> 5)] = m[y * stride + (x >> 5)]! | (1 << (x & 31)));
    // A diagonal of 3 (one piece), a run across the word edge (x 30..34), a dot, bits past W.
    set(0, 0);
    set(1, 1);
    set(2, 2);
    for (let x = 30; x <= 34; x++) set(x, 4);
    set(10, 5);
    m[0 * stride + 1] = m[0 * stride + 1]! | 0xff000000; // x 56..63: past W
    const lab = labelRuns(m, W, H, stride);
    expect(lab.n).toBe(5);
    const pieces = new Map<number, number>();
    for (let i = 0; i < lab.n; i++) pieces.set(lab.root[i]!, lab.size[lab.root[i]!]!);
    expect([...pieces.values()].sort((a, b) => a - b)).toEqual([1, 3, 5]);
    expect(lab.xs0[3]).toBe(30);
    expect(lab.xs1[3]).toBe(34);
    expect(listPieces(lab, 3)).toBe(2);
    expect(SPECK_PX).toBe(9);
  });
});
