import { describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { coverage, diffMasks, packInk, type DiffResult } from './diff';
import {
  diffFills,
  fillInkStyle,
  fillTexture,
  penStyle,
  speckNoise,
  splitFills,
  styleMasks,
} from './layers';
import { crop, pens, randomSheet, twin } from './rule-sheets.test-support';
import { labelRuns } from './small-pieces';
import { blankImage, fillRect as rect, rng } from './test-support';

// The rules after styleMasks look only at the words that held a change (style.words): the same
// results, to the bit, as their walk over every word of the page (style.words absent).

/** The diff of A (through `window`) and B as diffStage makes it: fills, style, fill changes. */
function diffWithFills(src: GreyImage, B: GreyImage): DiffResult {
  const W = B.width,
    H = B.height;
  const ma = packInk(src, 160, 208, 240),
    mb = packInk(B, 160, 208, 240);
  const fa = splitFills(src, ma, undefined, 160, 208, 240),
    fb = splitFills(B, mb, undefined, 160, 208, 240);
  const cover = coverage([1, 0, 0, 0, 1, 0], W, H, W, H);
  const d = diffMasks(ma, mb, cover);
  d.style = styleMasks(d);
  const fd = diffFills(fa?.fill ?? null, fb?.fill ?? null, ma, mb, cover);
  d.fills = { a: fa?.fill ?? null, b: fb?.fill ?? null, ...fd };
  return d;
}

/** The rules as diffStage runs them after the style masks; the pixels each moved. */
function rules(
  d: DiffResult,
  A: GreyImage,
  window: { x: number; y: number } | undefined,
  B: GreyImage,
) {
  const w = window && { ...window, width: d.width, height: d.height };
  return [
    fillInkStyle(d, A, w, B),
    fillTexture(d, {}, { a: A, windowA: w, b: B }),
    penStyle(d, A, w, B),
    speckNoise(d, A, w, B),
  ];
}

/**
 * A dark tone hatched with short dashes a little darker (weak line work over it) in A only (through
 * the window's offset): the tone's removal leaves the dashes as removed line work, which fillTexture
 * moves to the fill change.
 */
function hatchedTone(A: GreyImage, ox: number, oy: number, W: number, H: number, r: () => number) {
  const w = 40 + ((r() * 24) | 0),
    h = 32 + ((r() * 16) | 0);
  const x0 = ox + ((r() * Math.max(1, W - w)) | 0),
    y0 = oy + ((r() * Math.max(1, H - h)) | 0);
  rect(A, x0, y0, w, h, 150);
  for (let y = y0 + 2; y + 6 < y0 + h; y += 9)
    for (let x = x0 + 2; x < x0 + w - 2; x += 5) rect(A, x, y, 1, 6, 120);
  // A contour across it, as dark as the dashes and joined to some: long pieces, which stay line work.
  rect(A, x0, y0 + ((r() * h) | 0), w, 1, 120);
}

describe('rules over the changed words', () => {
  it('move the same pixels as over every word (30 random sheet pairs, with and without a window)', () => {
    const moved = [0, 0, 0, 0];
    for (let seed = 1; seed <= 30; seed++) {
      const r = rng(seed);
      // Widths on and off a word's edge.
      const w = [96, 100, 131, 64, 77, 160][seed % 6]!,
        h = 40 + ((r() * 80) | 0);
      const window = seed % 2 === 0 ? { x: 3, y: 2 } : undefined;
      const [aw, ah] = window ? [w + 6, h + 6] : [w, h];
      // One pair in three on blank paper: only the pens and the hatch change (so the first and last
      // changed words hold them).
      const blank = seed % 3 === 0;
      const A = blank ? blankImage(aw, ah) : randomSheet(aw, ah, r);
      const B = blank
        ? blankImage(w, h)
        : twin(crop(A, w, h, window && { ...window, width: w, height: h }), r);
      // Pen changes (penStyle) and a hatched tone gone (fillTexture) on top.
      pens(A, B, window?.x ?? 0, window?.y ?? 0, r);
      hatchedTone(A, window?.x ?? 0, window?.y ?? 0, w, h, r);
      const src = crop(A, w, h, window && { ...window, width: w, height: h });
      const d1 = diffWithFills(src, B);
      expect(d1.style!.words!.length, `seed ${seed}`).toBeGreaterThan(0);
      const d2 = structuredClone(d1),
        d3 = structuredClone(d1);
      delete d2.style!.words;
      const n1 = rules(d1, A, window, B),
        n2 = rules(d2, A, window, B);
      expect(n1).toEqual(n2);
      for (const k of ['added', 'removed', 'weakA', 'weakB', 'paleA', 'paleB'] as const)
        expect(d1[k], k).toEqual(d2[k]);
      const { words: _, ...s1 } = d1.style!;
      expect(s1).toEqual(d2.style);
      expect(d1.fills).toEqual(d2.fills);
      expect(d1.stats).toEqual(d2.stats);
      expect(d1.faint).toEqual(d2.faint);
      expect(d1.score).toBe(d2.score);
      // Once more after the other two: nothing the rules keep between calls changes what they find.
      expect(rules(d3, A, window, B)).toEqual(n1);
      expect(d3.added).toEqual(d1.added);
      expect(d3.removed).toEqual(d1.removed);
      expect(d3.fills).toEqual(d1.fills);
      n1.forEach((n, i) => (moved[i]! += n));
    }
    // Each rule moved pixels on these sheets (the comparison is not of no-ops).

    for (const n of moved) expect(n).toBeGreaterThan(0);
  });

  it('styleMasks lists every word of added or removed with a bit, ascending, and no other', () => {
    const r = rng(7);
    const src = randomSheet(131, 90, r),
      B = twin(src, r);
    const d = diffWithFills(src, B);
    const expected: number[] = [];
    for (let i = 0; i < d.added.length; i++)
      if ((d.added[i]! | d.removed[i]!) !== 0) expected.push(i);
    expect(expected.length).toBeGreaterThan(10);
    // d.added / removed as styleMasks saw them: the rules above were not run on d.
    expect([...d.style!.words!]).toEqual(expected);
  });
});

describe('labelRuns over given words', () => {
  it('finds the same runs and pieces with a superset of the set words as over every word', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = rng(seed);
      const W = [64, 70, 96, 33, 128][seed % 5]!,
        H = 3 + ((r() * 20) | 0),
        stride = Math.ceil(W / 32);
      const m = new Uint32Array(stride * H);
      // Runs of any length, across word edges, up to the row's end (and past W: not in the mask).
      for (let i = 0; i < 25; i++) {
        const y = (r() * H) | 0,
          x0 = (r() * stride * 32) | 0,
          len = 1 + ((r() * (r() < 0.3 ? 70 : 6)) | 0);
        for (let x = x0; x < Math.min(stride * 32, x0 + len); x++)
          m[y * stride + (x >> 5)] = m[y * stride + (x >> 5)]! | (1 << (x & 31));
      }
      // Whole rows of ones now and then (a run from the first to the last word).
      if (seed % 4 === 0) m.fill(0xffffffff, 0, stride);
      const words: number[] = [];
      for (let i = 0; i < m.length; i++) if (m[i] !== 0 || r() < 0.1) words.push(i);
      const snap = (l: ReturnType<typeof labelRuns>) => ({
        n: l.n,
        runs: Array.from({ length: l.n }, (_, i) => [
          l.ys[i],
          l.xs0[i],
          l.xs1[i],
          l.root[i],
          l.size[l.root[i]!],
        ]),
        rows: [...l.rowStart.subarray(0, H + 1)],
      });
      const all = snap(labelRuns(m, W, H, stride));
      const some = snap(labelRuns(m, W, H, stride, Int32Array.from(words)));
      expect(some).toEqual(all);
      expect(all.n).toBeGreaterThan(0);
    }
  });
});
