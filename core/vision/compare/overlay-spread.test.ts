// The indexed overlay writers' 8-pixel steps (diff.ts writeCodes4 / writeCodes2: palette indices as
// weighted sums of the code planes' spread bits, whole words stored 4 bytes at a time) against the RGB
// reference writer (renderOverlay, one 4-pixel LUT entry per group), pixel by pixel, on random mask
// planes — line work, fills and style planes all set at random, sparse and dense, with words that are
// all ones (the uniform path) and widths that end inside a word and inside a byte.
import { describe, expect, it } from 'vitest';
import {
  overlayPalette,
  renderAddDelIndexed,
  renderOverlay,
  renderOverlayIndexed,
  type DiffResult,
  type IndexedOverlay,
  type OverlayKind,
} from './diff';
import { rng } from './test-support';

function randomDiff(r: () => number, width: number, height: number, p: number): DiffResult {
  const stride = Math.ceil(width / 32);
  const plane = (q: number) => {
    const m = new Uint32Array(stride * height);
    for (let i = 0; i < m.length; i++) {
      const u = r();
      if (u < 0.1) m[i] = 0xffffffff;
      else if (u < 0.2) m[i] = 0;
      else for (let b = 0; b < 32; b++) if (r() < q) m[i] = (m[i]! | (1 << b)) >>> 0;
    }
    return m;
  };
  const weakA = plane(p),
    weakB = plane(p);
  const strongA = plane(0.5),
    strongB = plane(0.5);
  return {
    width,
    height,
    stride,
    weakA,
    weakB,
    strongA,
    strongB,
    paleA: weakA,
    paleB: weakB,
    added: plane(0.3),
    removed: plane(0.3),
    fills: {
      a: plane(p),
      b: plane(p),
      added: plane(0.4),
      removed: plane(0.4),
      added_px: 0,
      removed_px: 0,
      union_px: 0,
    },
    style: {
      added: plane(0.2),
      removed: plane(0.2),
      added_px: 0,
      removed_px: 0,
      geomAdded: plane(0),
      geomRemoved: plane(0),
    },
    stats: { added_px: 0, removed_px: 0, unchanged_px: 0, changed_fraction: 0 },
    faint: { added_px: 0, removed_px: 0 },
  } as DiffResult;
}

/** Pixels whose palette colour differs from the RGB writer's, and the indices seen. */
function mismatches(d: DiffResult, kind: OverlayKind, idx: IndexedOverlay) {
  const bits = idx.bitDepth,
    perByte = 8 / bits;
  const seen = new Set<number>();
  let bad = 0;
  for (const palette of ['standard', 'colorblind'] as const) {
    const rgb = renderOverlay(d, kind, palette);
    const pal = overlayPalette(palette, kind);
    for (let y = 0; y < d.height; y++) {
      if (idx.data[y * idx.rowBytes] !== 0) bad++;
      for (let x = 0; x < d.width; x++) {
        const byte = idx.data[y * idx.rowBytes + 1 + Math.floor(x / perByte)]!;
        const i = (byte >> (8 - bits * ((x % perByte) + 1))) & ((1 << bits) - 1);
        seen.add(i);
        const c = pal[i],
          o = (y * d.width + x) * 3;
        if (!c || c[0] !== rgb.data[o] || c[1] !== rgb.data[o + 1] || c[2] !== rgb.data[o + 2])
          bad++;
      }
      // Pad bits after the last pixel stay 0.
      const used = d.width % perByte;
      if (used !== 0) {
        const lastByte = idx.data[y * idx.rowBytes + idx.rowBytes - 1]!;
        if ((lastByte & ((1 << (8 - used * bits)) - 1)) !== 0) bad++;
      }
    }
  }
  return { bad, seen };
}

describe('indexed overlays from spread bits', () => {
  it('give every pixel the RGB writer’s colour, on random line work, fills and style planes', () => {
    const r = rng(71);
    for (const width of [1, 7, 32, 45, 64, 97, 131])
      for (const p of [0.05, 0.5, 0.9]) {
        const height = 5;
        const d = randomDiff(r, width, height, p);
        const comb = renderOverlayIndexed(d, 'combined');
        const c = mismatches(d, 'combined', comb);
        expect(c.bad, `combined ${width} ${p}`).toBe(0);
        const pair = renderAddDelIndexed(d);
        for (const kind of ['additions', 'deletions'] as const) {
          const one = renderOverlayIndexed(d, kind);
          const m = mismatches(d, kind, one);
          expect(m.bad, `${kind} ${width} ${p}`).toBe(0);
          expect(pair[kind].data).toEqual(one.data);
          if (width >= 32 && p === 0.5)
            for (let i = 1; i < 4; i++) expect(m.seen.has(i), `${kind} ${width}: ${i}`).toBe(true);
        }
        // Every colour of the combined palette but paper drawn: faint, ink, removed, added, 3 fill tints.
        if (width >= 32 && p === 0.5)
          for (let i = 1; i < 8; i++) expect(c.seen.has(i), `${width}: index ${i}`).toBe(true);
      }
  });

  it('the 2-bit images from the inked list are the full pass’s bytes on random planes', () => {
    const r = rng(72);
    for (const width of [33, 100]) {
      const d = randomDiff(r, width, 6, 0.3);
      const inked = { words: new Uint32Array(d.stride * d.height), n: 0 };
      renderOverlayIndexed(d, 'combined', undefined, inked);
      const listed = renderAddDelIndexed(d, undefined, undefined, inked);
      const full = renderAddDelIndexed(d);
      expect(listed.additions.data).toEqual(full.additions.data);
      expect(listed.deletions.data).toEqual(full.deletions.data);
    }
  });
});
