import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import {
  alignGrey,
  dilate3x3,
  diffImages,
  maskKernels,
  packInk,
  popcount32,
  overlayPalette,
  PALETTES,
  renderOverlay,
  renderOverlayIndexed,
  warpMasks,
} from './diff';
import { invertAffine, type Affine } from './register';
import {
  blankImage,
  drawLine,
  fillRect,
  nearUnitSimilarity,
  rng,
  speckledImage,
  strokeRect,
  warpAffine,
} from './test-support';

function bitAt(m: Uint32Array, stride: number, x: number, y: number): number {
  return (m[y * stride + (x >> 5)]! >>> (x & 31)) & 1;
}

function countBits(m: Uint32Array): number {
  let n = 0;
  for (const w of m) n += popcount32(w);
  return n;
}

/**
 * Calls f(x, y, sx, sy) for every output pixel of an outW x outH frame with the source pixel the
 * nearest-neighbour map through t (B → A) reads: the exact floating-point formula of warpMasks and
 * alignGrey.
 */
function forEachSource(
  t: readonly number[],
  outW: number,
  outH: number,
  f: (x: number, y: number, sx: number, sy: number) => void,
): void {
  const [ia, ib, ic, id, ie, iF] = invertAffine(t as Affine);
  for (let y = 0; y < outH; y++) {
    const rx = ib * y + ic + 0.5,
      ry = ie * y + iF + 0.5;
    for (let x = 0; x < outW; x++) f(x, y, Math.floor(rx + ia * x), Math.floor(ry + id * x));
  }
}

// Both packing loops: WebAssembly SIMD (the default) and JS.
describe.each([
  ['SIMD', true],
  ['JS', false],
] as const)('packInk (%s loop)', (_name, simd) => {
  beforeEach(() => {
    maskKernels.simd = simd;
  });
  afterEach(() => {
    maskKernels.simd = true;
  });
  it('matches a per-pixel threshold for every grey level, odd widths included', () => {
    const W = 37,
      Ht = 7;
    const img: GreyImage = { width: W, height: Ht, data: new Uint8Array(W * Ht) };
    for (let i = 0; i < img.data.length; i++) img.data[i] = (i * 7) % 256;
    for (const [t, wt] of [
      [160, 208],
      [128, 128],
      [100, 129],
      [1, 255],
    ] as const) {
      const m = packInk(img, t, wt);
      for (let y = 0; y < Ht; y++)
        for (let x = 0; x < W; x++) {
          const v = img.data[y * W + x]!;
          expect(bitAt(m.strong, m.stride, x, y), `strong t=${t} v=${v}`).toBe(v < t ? 1 : 0);
          expect(bitAt(m.weak, m.stride, x, y), `weak t=${wt} v=${v}`).toBe(v < wt ? 1 : 0);
        }
      // padding bits beyond the width stay clear
      expect(m.strong[m.stride - 1]! >>> (W & 31)).toBe(0);
    }
  });
  it('reads rows in place (width % 4 = 0) exactly like the copied rows, incl. pale and windows', () => {
    const r = rng(31);
    for (const [W, Ht] of [
      [100, 6],
      [64, 5],
      [132, 4],
    ] as const) {
      // In place: a 4-aligned view. Copied: the same pixels at an odd byte offset.
      const aligned = new Uint8Array(W * Ht);
      for (let i = 0; i < aligned.length; i++) aligned[i] = r() < 0.5 ? Math.floor(r() * 256) : 255;
      const odd = new Uint8Array(W * Ht + 1).subarray(1);
      odd.set(aligned);
      const a: GreyImage = { width: W, height: Ht, data: aligned };
      const o: GreyImage = { width: W, height: Ht, data: odd };
      for (const window of [undefined, { x: 4, y: 1, width: W - 8, height: Ht - 2 }] as const) {
        const m = packInk(a, 160, 208, 240, window);
        expect(m).toEqual(packInk(o, 160, 208, 240, window));
        const ww = window?.width ?? W;
        for (let y = 0; y < m.height; y++)
          for (let x = 0; x < ww; x++) {
            const v = aligned[(y + (window?.y ?? 0)) * W + x + (window?.x ?? 0)]!;
            expect(bitAt(m.pale, m.stride, x, y), `pale v=${v}`).toBe(v < 240 ? 1 : 0);
            expect(bitAt(m.strong, m.stride, x, y), `strong v=${v}`).toBe(v < 160 ? 1 : 0);
          }
      }
    }
  });
  it('rejects bad thresholds with an actionable message', () => {
    expect(() => packInk(blankImage(4, 4), 300, 300)).toThrow(/integer ink threshold/);
    expect(() => packInk(blankImage(4, 4), 200, 100)).toThrow(/weakThreshold/);
  });
});

describe('dilate3x3', () => {
  it('grows a single pixel into a 3x3 block, across word boundaries', () => {
    const W = 70,
      Ht = 5;
    const img = blankImage(W, Ht);
    img.data[2 * W + 31] = 0; // last bit of word 0
    img.data[2 * W + 64] = 0; // first bit of word 2
    const m = packInk(img);
    const d = dilate3x3(m.strong, m.stride, Ht);
    expect(countBits(d)).toBe(18);
    for (const [x, y] of [
      [30, 1],
      [32, 3],
      [63, 1],
      [65, 3],
    ])
      expect(bitAt(d, m.stride, x!, y!)).toBe(1);
    expect(bitAt(d, m.stride, 33, 2)).toBe(0);
  });
});

describe('diffImages', () => {
  const base = blankImage(200, 120);
  strokeRect(base, 10, 10, 180, 100, 2);
  drawLine(base, 20, 20, 180, 100, 2);
  fillRect(base, 40, 60, 30, 3, 0);

  it('identical images: score 1, nothing changed', () => {
    const d = diffImages(base, base);
    expect(d.score).toBe(1);
    expect(d.stats.added_px + d.stats.removed_px).toBe(0);
    expect(d.stats.unchanged_px).toBeGreaterThan(500);
  });

  it('counts added and removed ink exactly, and a 1 px shift or faint AA change never counts', () => {
    const b = blankImage(200, 120);
    strokeRect(b, 11, 10, 180, 100, 2); // shifted 1 px: tolerated
    drawLine(b, 20, 21, 180, 101, 2);
    fillRect(b, 100, 30, 10, 10, 0); // added 100 px
    // the 30x3 bar removed (90 px); a faint copy of it (grey 190) must not hide the removal
    fillRect(b, 40, 60, 30, 3, 190);
    const d = diffImages(base, b);
    expect(d.stats.added_px).toBe(100);
    // removal is hidden by faint ink within 1 px: weak ink suppresses it — document that behaviour
    expect(d.stats.removed_px).toBe(0);
    const c = blankImage(200, 120);
    strokeRect(c, 11, 10, 180, 100, 2);
    drawLine(c, 20, 21, 180, 101, 2);
    const d2 = diffImages(base, c);
    expect(d2.stats.removed_px).toBe(90);
    expect(d2.stats.added_px).toBe(0);
    expect(d2.score).toBeCloseTo(1 - 90 / (d2.stats.unchanged_px + 90), 10);
    expect(d2.stats.changed_fraction).toBeCloseTo(1 - d2.score, 12);
    // changed masks hold exactly those pixels
    expect(countBits(d2.removed)).toBe(90);
    expect(bitAt(d2.removed, d2.stride, 41, 61)).toBe(1);
  });

  it('samples B through the transform (B shifted by +7,−3 → transform maps back)', () => {
    const b = blankImage(200, 120);
    strokeRect(b, 17, 7, 180, 100, 2);
    drawLine(b, 27, 17, 187, 97, 2);
    fillRect(b, 47, 57, 30, 3, 0);
    const d = diffImages(base, b, [1, 0, -7, 0, 1, 3]);
    expect(d.stats.added_px + d.stats.removed_px).toBe(0);
    const none = diffImages(base, b);
    expect(none.score).toBeLessThan(0.5);
  });

  it('rotated + scaled + blurred resampling of a drawing stays below 0.2 % changed', () => {
    const r = rng(5);
    const img = blankImage(600, 400);
    for (let i = 0; i < 60; i++)
      drawLine(img, r() * 600, r() * 400, r() * 600, r() * 400, 1 + Math.floor(r() * 3));
    const th = (0.7 * Math.PI) / 180,
      s = 1.013;
    const t = [s * Math.cos(th), -s * Math.sin(th), 5.3, s * Math.sin(th), s * Math.cos(th), -4.6]; // B → A
    const inv = [t[4]! / (s * s), -t[1]! / (s * s), 0, -t[3]! / (s * s), t[0]! / (s * s), 0];
    inv[2] = -(inv[0]! * t[2]! + inv[1]! * t[5]!);
    inv[5] = -(inv[3]! * t[2]! + inv[4]! * t[5]!);
    const b = warpAffine(img, inv); // B such that B pixels map to A through t
    const d = diffImages(img, b, t);
    expect(d.stats.unchanged_px).toBeGreaterThan(5000);
    expect(d.stats.changed_fraction).toBeLessThan(0.002);
    // and the aligned grey copy lines up with A within the tolerance
    const al = alignGrey(b, t, 600, 400);
    expect(diffImages(img, al).stats.changed_fraction).toBeLessThan(0.002);
  });

  it('warpMasks leaves words outside B empty and identity returns the same masks', () => {
    const m = packInk(base);
    expect(warpMasks(m, [1, 0, 0, 0, 1, 0], 200, 120)).toBe(m);
    const far = warpMasks(m, [1, 0, 1000, 0, 1, 0], 200, 120);
    expect(countBits(far.weak)).toBe(0);
  });
});

describe('warpMasks', () => {
  it('matches a per-pixel nearest gather for near-unit scales, shifts and small rotations', () => {
    // Random ink (≈ 30 % of pixels) so every word takes either the word fast path or the per-pixel one.
    const W = 301,
      Ht = 67;
    const r = rng(7);
    const img: GreyImage = { width: W, height: Ht, data: new Uint8Array(W * Ht) };
    for (let i = 0; i < img.data.length; i++) img.data[i] = r() < 0.3 ? Math.floor(r() * 200) : 255;
    const m = packInk(img);
    const deg = Math.PI / 180;
    const transforms: number[][] = [
      [1.002, 0, 29.8, 0, 1.002, -26.8],
      [0.998, 0, -3.3, 0, 0.998, 2.6],
      [1, 0, 5, 0, 1, -2],
      [1, 0, 0.5, 0, 1, 0.25],
      [Math.cos(0.3 * deg), -Math.sin(0.3 * deg), 4, Math.sin(0.3 * deg), Math.cos(0.3 * deg), -3],
      [1.5, 0, -20, 0, 1.5, -10],
      [0.6, 0, 40, 0, 0.6, 10],
    ];
    for (const t of transforms) {
      for (const [ow, oh] of [
        [W, Ht],
        [290, 70],
      ] as const) {
        const out = warpMasks(m, t, ow, oh);
        const inv = invertAffine(t as Affine);
        const stride = Math.ceil(ow / 32);
        let diffs = 0;
        for (let y = 0; y < oh; y++) {
          for (let x = 0; x < ow; x++) {
            const sx = Math.floor(inv[0] * x + inv[1] * y + inv[2] + 0.5),
              sy = Math.floor(inv[3] * x + inv[4] * y + inv[5] + 0.5);
            const inside = sx >= 0 && sy >= 0 && sx < W && sy < Ht;
            const ew = inside ? bitAt(m.weak, m.stride, sx, sy) : 0;
            const es = inside ? bitAt(m.strong, m.stride, sx, sy) : 0;
            if (bitAt(out.weak, stride, x, y) !== ew || bitAt(out.strong, stride, x, y) !== es)
              diffs++;
          }
          // No bits beyond the frame's width.
          const rem = ow & 31;
          if (rem) expect(out.weak[y * stride + stride - 1]! >>> rem, `t=${t}`).toBe(0);
        }
        expect(diffs, `t=${t} ${ow}x${oh}`).toBe(0);
      }
    }
  });
});

describe('alignGrey', () => {
  it("gives the per-pixel nearest gather exactly: near-unit similarities, far scales, B's edges", () => {
    const W = 523,
      Ht = 37;
    const r = rng(29);
    const img: GreyImage = { width: W, height: Ht, data: new Uint8Array(W * Ht) };
    for (let i = 0; i < img.data.length; i++) img.data[i] = Math.floor(r() * 255);
    const transforms: number[][] = [
      [1, 0, 0, 0, 1, 0],
      [1.5, 0, -20, 0, 1.5, -10],
      [0.6, 0, 40, 0, 0.6, 10],
    ];
    for (let n = 0; n < 30; n++) {
      transforms.push(nearUnitSimilarity(r, 0.01));
    }
    for (const t of transforms) {
      const ow = 480 + Math.floor(r() * 100),
        oh = 30 + Math.floor(r() * 15);
      // A used buffer: every byte must be written.
      const out = new Uint8Array(ow * oh + 3).fill(7);
      const al = alignGrey(img, t, ow, oh, out);
      expect(al.data.buffer).toBe(out.buffer);
      let diffs = 0;
      forEachSource(t, ow, oh, (x, y, sx, sy) => {
        const want = sx < 0 || sy < 0 || sx >= W || sy >= Ht ? 255 : img.data[sy * W + sx]!;
        if (al.data[y * ow + x] !== want) diffs++;
      });
      expect(diffs, `t=${t} ${ow}x${oh}`).toBe(0);
      expect([...out.subarray(ow * oh)]).toEqual([7, 7, 7]);
    }
    expect(() => alignGrey(img, [1, 0, 1, 0, 1, 0], 10, 10, new Uint8Array(99))).toThrow(
      /at least 100 bytes/,
    );
  });

  it("packed, gives warpMasks' words of B's masks (what diffStage relies on)", () => {
    const W = 611,
      Ht = 83;
    const r = rng(31);
    const img: GreyImage = { width: W, height: Ht, data: new Uint8Array(W * Ht) };
    // Every grey level, so each threshold (160, 208, 240) has pixels on both sides.
    for (let i = 0; i < img.data.length; i++) img.data[i] = Math.floor(r() * 256);
    const masks = packInk(img);
    let cases = 0;
    for (const t of [
      [1, 0, 0, 0, 1, 0],
      [1, 0, 7, 0, 1, -3],
      ...Array.from({ length: 20 }, () => nearUnitSimilarity(r, 0.01)),
    ]) {
      const ow = 560 + Math.floor(r() * 80),
        oh = 70 + Math.floor(r() * 20);
      const warped = warpMasks(masks, t, ow, oh);
      const packed = packInk(alignGrey(img, t, ow, oh));
      for (const plane of ['strong', 'weak', 'pale'] as const)
        expect(packed[plane], `t=${t} ${plane}`).toEqual(warped[plane]);
      cases++;
    }
    expect(cases).toBe(22);
  });
});

describe('warpMasks row segments', () => {
  it("give the per-pixel formula exactly for random near-unit similarities, incl. B's edges", () => {
    const W = 1203,
      Ht = 41;
    const r = rng(19);
    const img: GreyImage = { width: W, height: Ht, data: new Uint8Array(W * Ht) };
    for (let i = 0; i < img.data.length; i++) img.data[i] = r() < 0.4 ? Math.floor(r() * 245) : 255;
    const m = packInk(img);
    for (let n = 0; n < 40; n++) {
      const t = nearUnitSimilarity(r, 0.004);
      const ow = 1100 + Math.floor(r() * 200),
        oh = 30 + Math.floor(r() * 20);
      const out = warpMasks(m, t, ow, oh);
      const stride = Math.ceil(ow / 32);
      let diffs = 0;
      forEachSource(t, ow, oh, (x, y, sx, sy) => {
        const inside = sx >= 0 && sy >= 0 && sx < W && sy < Ht;
        for (const [o, i] of [
          [out.pale, m.pale],
          [out.weak, m.weak],
          [out.strong, m.strong],
        ] as const) {
          if (bitAt(o, stride, x, y) !== (inside ? bitAt(i, m.stride, sx, sy) : 0)) diffs++;
        }
      });
      const rem = ow & 31;
      if (rem)
        for (let y = 0; y < oh; y++) expect(out.pale[y * stride + stride - 1]! >>> rem).toBe(0);
      expect(diffs, `t=${t} ${ow}x${oh}`).toBe(0);
    }
  });
});

describe('renderOverlay', () => {
  it('colours added green, removed red, unchanged dark grey, paper white; palettes differ', () => {
    const a = blankImage(64, 8);
    fillRect(a, 0, 0, 4, 4, 0); // unchanged
    fillRect(a, 10, 0, 4, 4, 0); // removed
    const b = blankImage(64, 8);
    fillRect(b, 0, 0, 4, 4, 0);
    fillRect(b, 40, 4, 4, 4, 0); // added
    const d = diffImages(a, b);
    const px = (img: { data: Uint8Array; width: number }, x: number, y: number): number[] =>
      Array.from(img.data.subarray((y * img.width + x) * 3, (y * img.width + x) * 3 + 3));
    const o = renderOverlay(d, 'combined');
    expect(px(o, 1, 1)).toEqual([70, 70, 70]);
    expect(px(o, 11, 1)).toEqual([225, 20, 20]);
    expect(px(o, 41, 5)).toEqual([0, 170, 0]);
    expect(px(o, 30, 3)).toEqual([255, 255, 255]);
    const cb = renderOverlay(d, 'combined', 'colorblind');
    expect(px(cb, 41, 5)).toEqual([0, 114, 178]);
    expect(px(cb, 11, 1)).toEqual([230, 120, 0]);
    const add = renderOverlay(d, 'additions');
    expect(px(add, 11, 1)).toEqual([255, 255, 255]); // A-only ink is not shown
    expect(px(add, 41, 5)).toEqual([0, 170, 0]);
    const del = renderOverlay(d, 'deletions');
    expect(px(del, 11, 1)).toEqual([225, 20, 20]);
    expect(px(del, 41, 5)).toEqual([255, 255, 255]);
  });
});

describe('renderOverlay (4-pixel LUT writer)', () => {
  it('matches a per-pixel reference for every kind and palette on random masks, odd widths', () => {
    const r = rng(11);
    const mk = (W: number, Ht: number, p: number) => speckledImage(r, W, Ht, p, 230);
    for (const [W, Ht] of [
      [67, 9],
      [96, 5],
      [33, 4],
    ] as const) {
      const a = mk(W, Ht, 0.35),
        b = mk(W, Ht, 0.35);
      const d = diffImages(a, b);
      for (const palette of ['standard', 'colorblind'] as const) {
        const P = PALETTES[palette];
        for (const kind of ['combined', 'additions', 'deletions'] as const) {
          const img = renderOverlay(d, kind, palette, new Uint8Array(W * Ht * 3 + 5).fill(7));
          let bad = 0;
          for (let y = 0; y < Ht; y++) {
            for (let x = 0; x < W; x++) {
              const bit = (m: Uint32Array) => bitAt(m, d.stride, x, y);
              const useA = kind !== 'additions',
                useB = kind !== 'deletions';
              const weak = (useA && bit(d.weakA)) || (useB && bit(d.weakB));
              const strong = (useA && bit(d.strongA)) || (useB && bit(d.strongB));
              const want = !weak
                ? [255, 255, 255]
                : kind !== 'deletions' && bit(d.added)
                  ? P.added
                  : kind !== 'additions' && bit(d.removed)
                    ? P.removed
                    : strong
                      ? P.ink
                      : P.faint;
              const o = (y * W + x) * 3;
              if (
                img.data[o] !== want[0] ||
                img.data[o + 1] !== want[1] ||
                img.data[o + 2] !== want[2]
              )
                bad++;
            }
          }
          expect(bad, `${W}x${Ht} ${kind} ${palette}`).toBe(0);
        }
      }
    }
  });
});

describe('renderOverlayIndexed', () => {
  it("gives every pixel the palette index of renderOverlay's colour, widths with partial words and groups", () => {
    const r = rng(23);
    const mk = (W: number, Ht: number, p: number) => speckledImage(r, W, Ht, p, 250);
    for (const [W, Ht] of [
      [1, 3],
      [2, 2],
      [3, 4],
      [5, 3],
      [31, 4],
      [32, 3],
      [67, 9],
      [68, 5],
      [96, 5],
      [101, 6],
      [132, 6],
    ] as const) {
      for (const p of [0.02, 0.35]) {
        const d = diffImages(mk(W, Ht, p), mk(W, Ht, p));
        for (const kind of ['combined', 'additions', 'deletions'] as const) {
          const idx = renderOverlayIndexed(d, kind);
          const bits = kind === 'combined' ? 4 : 2;
          expect(idx.bitDepth).toBe(bits);
          expect(idx.rowBytes).toBe(1 + Math.ceil((W * bits) / 8));
          expect(idx.data.length).toBe(idx.rowBytes * Ht);
          const perByte = 8 / bits;
          for (const palette of ['standard', 'colorblind'] as const) {
            const rgb = renderOverlay(d, kind, palette);
            const pal = overlayPalette(palette, kind);
            expect(pal).toHaveLength(kind === 'combined' ? 8 : 4);
            let bad = 0;
            for (let y = 0; y < Ht; y++) {
              if (idx.data[y * idx.rowBytes] !== 0) bad++; // filter byte: None
              for (let x = 0; x < W; x++) {
                const byte = idx.data[y * idx.rowBytes + 1 + Math.floor(x / perByte)]!;
                const i = (byte >> (8 - bits * ((x % perByte) + 1))) & ((1 << bits) - 1);
                const o = (y * W + x) * 3;
                const c = pal[i];
                if (
                  !c ||
                  c[0] !== rgb.data[o] ||
                  c[1] !== rgb.data[o + 1] ||
                  c[2] !== rgb.data[o + 2]
                )
                  bad++;
              }
              // The pad bits after the last pixel are 0.
              const used = (W * bits) % 8;
              if (
                used &&
                (idx.data[y * idx.rowBytes + idx.rowBytes - 1]! & ((1 << (8 - used)) - 1)) !== 0
              )
                bad++;
            }
            expect(bad, `${W}x${Ht} ${kind} ${palette} p=${p}`).toBe(0);
          }
        }
      }
    }
  });

  it('ignores mask bits past the row end and writes only inside the given buffer', () => {
    const W = 37,
      Ht = 4;
    const a = blankImage(W, Ht);
    fillRect(a, 30, 0, 7, 4, 0); // ink up to the last pixel: removed
    const d = diffImages(a, blankImage(W, Ht));
    const clean = renderOverlayIndexed(d, 'combined');
    const cleanAll = {
      combined: clean,
      additions: renderOverlayIndexed(d, 'additions'),
      deletions: renderOverlayIndexed(d, 'deletions'),
    };
    // Padding bits set in every mask of the row's last word: the output must not change.
    for (const m of [d.weakA, d.weakB, d.strongA, d.strongB, d.added, d.removed])
      for (let y = 0; y < Ht; y++) {
        const k = y * d.stride + 1;
        m[k] = m[k]! | ~((1 << (W - 32)) - 1);
      }
    const out = new Uint8Array(clean.data.length + 4);
    out.fill(9, clean.data.length);
    const got = renderOverlayIndexed(d, 'combined', out);
    expect(got.data.buffer).toBe(out.buffer);
    expect(Buffer.from(got.data).equals(Buffer.from(cleanAll.combined.data))).toBe(true);
    expect([...out.subarray(clean.data.length)]).toEqual([9, 9, 9, 9]);
    for (const kind of ['additions', 'deletions'] as const) {
      const o2 = new Uint8Array(cleanAll[kind].data.length + 2).fill(0);
      o2.fill(9, cleanAll[kind].data.length);
      const g2 = renderOverlayIndexed(d, kind, o2);
      expect(Buffer.from(g2.data).equals(Buffer.from(cleanAll[kind].data)), kind).toBe(true);
      expect([...o2.subarray(cleanAll[kind].data.length)]).toEqual([9, 9]);
    }
    // Deletions: pixel 36 (ink) in the high bits of the row's last byte, then padding.
    expect(cleanAll.deletions.data[1 + 9]! >> 6).not.toBe(0);
    expect(cleanAll.deletions.data[1 + 9]! & 63).toBe(0);
    expect(clean.data[1 + 18]! >> 4).not.toBe(0); // pixel 36 (ink) …
    expect(clean.data[1 + 18]! & 15).toBe(0); // … then the pad nibble
    expect(() => renderOverlayIndexed(d, 'combined', new Uint8Array(10))).toThrow(
      /at least 80 bytes/,
    );
  });
});

describe('coverage', () => {
  it('A ink outside B\'s page is not "removed"', () => {
    const a = blankImage(100, 40);
    fillRect(a, 2, 10, 6, 6, 0); // near the left edge
    fillRect(a, 50, 10, 6, 6, 0);
    // B is A shifted 20 px left (B pixels map to A by +20): A's x < 21 has no B source
    const b = blankImage(100, 40);
    fillRect(b, 30, 10, 6, 6, 0);
    const d = diffImages(a, b, [1, 0, 20, 0, 1, 0]);
    expect(d.stats.removed_px).toBe(0);
    expect(d.stats.added_px).toBe(0);
    // without the shift both squares differ
    expect(diffImages(a, b).stats.removed_px).toBe(72);
  });
});
