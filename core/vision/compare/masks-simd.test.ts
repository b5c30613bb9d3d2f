import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { coverage, diffMasks, maskKernels, packInk, warpMasks, type PixelWindow } from './diff';
import { inkDownsample, inkLevel, invertAffine, type Affine } from './register';
import { blockCountsSimd, inkLevelSimd, simdPackAvailable } from './masks-simd';
import { findRegions } from './regions';
import { nearUnitSimilarity, rng } from './test-support';

// The SIMD kernels must give the JS loops' words and counts exactly (the JS loops are checked against
// per-pixel references in diff.test.ts), and the committed module must be its .wat source.

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

afterEach(() => {
  maskKernels.simd = true;
});

function randomSheet(W: number, Ht: number, seed: number): GreyImage {
  const r = rng(seed);
  const img: GreyImage = { width: W, height: Ht, data: new Uint8Array(W * Ht).fill(255) };
  // Runs of paper, of ink of every grey level, and of grey near each threshold.
  for (let i = 0; i < img.data.length;) {
    const run = 1 + Math.floor(r() * 70);
    const kind = r();
    for (let j = 0; j < run && i < img.data.length; j++, i++)
      img.data[i] =
        kind < 0.4
          ? 255
          : kind < 0.7
            ? Math.floor(r() * 256)
            : [159, 160, 207, 208, 239, 240][j % 6]!;
  }
  return img;
}

describe('mask kernels on WebAssembly SIMD (masks-simd.ts)', () => {
  it("runs here and gives the JS loop's masks word for word: widths, windows, thresholds, batches", () => {
    expect(simdPackAvailable()).toBe(true);
    let cases = 0;
    for (const [W, Ht] of [
      [1, 1],
      [31, 3],
      [32, 2],
      [33, 5],
      [100, 7],
      [257, 9],
      [9000, 40], // 9024-byte rows: more than one batch of rows
    ] as const) {
      const img = randomSheet(W, Ht, W * 7 + Ht);
      const windows: (PixelWindow | undefined)[] = [
        undefined,
        { x: 0, y: 0, width: W, height: Ht },
        { x: -5, y: -2, width: W + 9, height: Ht + 3 }, // paper all round
        { x: 3, y: 1, width: Math.max(1, W - 5), height: Math.max(1, Ht - 1) },
        { x: W + 4, y: 0, width: 10, height: 2 }, // beside the image
        { x: -40, y: Ht + 1, width: 20, height: 3 }, // below and left of it
        { x: 2.4, y: 0.6, width: 40.2, height: Ht + 0.4 }, // rounded like the JS loop
      ];
      for (const window of windows) {
        for (const [t, wt, pt] of [
          [160, 208, 240],
          [160, 208, 208], // no faint pass: pale is weak
          [1, 1, 1],
          [128, 129, 255],
          [255, 255, 255],
        ] as const) {
          maskKernels.simd = true;
          const s = packInk(img, t, wt, pt, window);
          maskKernels.simd = false;
          const j = packInk(img, t, wt, pt, window);
          const label = `${W}x${Ht} ${JSON.stringify(window)} ${t}/${wt}/${pt}`;
          expect([s.width, s.height, s.stride], label).toEqual([j.width, j.height, j.stride]);
          expect(s.strong, label).toEqual(j.strong);
          expect(s.weak, label).toEqual(j.weak);
          expect(s.pale, label).toEqual(j.pale);
          expect(s.pale === s.weak, label).toBe(pt === wt);
          cases++;
        }
      }
    }
    expect(cases).toBe(7 * 7 * 5);
  });

  it('checks the thresholds on the SIMD path too, and the masks are not all paper', () => {
    const img = randomSheet(300, 50, 3);
    expect(packInk(img).strong.some((w) => w !== 0)).toBe(true);
    expect(() => packInk(img, 0, 208)).toThrow(/ink threshold in 1..255/);
    expect(() => packInk(img, 160, 256, 256)).toThrow(/ink threshold in 1..255/);
  });

  it("gives diffMasks' added/removed words and counts exactly: coverages, faint pass, batches", () => {
    let cases = 0;
    for (const [W, Ht] of [
      [1, 1],
      [5, 3],
      [32, 4],
      [33, 2],
      [100, 9],
      [131, 7], // stride 5: a last group with one word
      [9000, 150], // 282-word rows: three batches
    ] as const) {
      const a = randomSheet(W, Ht, W + 3 * Ht);
      // B: A with some pixels changed, so there are added, removed and faint changes.
      const b: GreyImage = { width: W, height: Ht, data: a.data.slice() };
      const r = rng(W * Ht + 1);
      for (let i = 0; i < b.data.length; i++) if (r() < 0.08) b.data[i] = Math.floor(r() * 256);
      const transforms = [
        [1, 0, 0, 0, 1, 0],
        [1.003, 0, -2.2, 0, 1.003, 1.4],
        [1, 0, 7, 0, 1, -3], // B shifted: coverage leaves columns and rows out
      ];
      for (const t of transforms)
        for (const pale of [240, 208]) {
          const ma = packInk(a, 160, 208, pale);
          const mb = warpMasks(packInk(b, 160, 208, pale), t, W, Ht);
          for (const cover of [undefined, coverage(t, W, Ht, W, Ht)]) {
            maskKernels.simd = true;
            const s1 = diffMasks(ma, mb, cover);
            maskKernels.simd = false;
            const j = diffMasks(ma, mb, cover);
            const label = `${W}x${Ht} t=${t} pale=${pale} cover=${!!cover}`;
            expect(s1.stats, label).toEqual(j.stats);
            expect(s1.faint, label).toEqual(j.faint);
            expect(s1.added, label).toEqual(j.added);
            expect(s1.removed, label).toEqual(j.removed);
            cases++;
          }
        }
      // Not vacuous: the big sheet has changes of every kind.
      if (W === 9000) {
        const d = diffMasks(packInk(a), packInk(b));
        expect(d.stats.added_px).toBeGreaterThan(0);
        expect(d.stats.removed_px).toBeGreaterThan(0);
        expect(d.faint.added_px + d.faint.removed_px).toBeGreaterThan(0);
      }
    }
    expect(cases).toBe(7 * 3 * 2 * 2);
    // Random coverages (empty rows, partial words, bounds past the row).
    const a = randomSheet(300, 40, 77),
      b = randomSheet(300, 40, 78);
    const ma = packInk(a),
      mb = packInk(b);
    const r = rng(5);
    for (let n = 0; n < 20; n++) {
      const lo = new Int32Array(40),
        hi = new Int32Array(40);
      for (let y = 0; y < 40; y++) {
        lo[y] = Math.floor(r() * 340) - 20;
        hi[y] = lo[y]! + Math.floor(r() * 360) - 40;
      }
      maskKernels.simd = true;
      const s1 = diffMasks(ma, mb, { lo, hi });
      maskKernels.simd = false;
      const j = diffMasks(ma, mb, { lo, hi });
      expect(s1.stats).toEqual(j.stats);
      expect(s1.faint).toEqual(j.faint);
      expect(s1.removed).toEqual(j.removed);
      expect(s1.added).toEqual(j.added);
    }
  });

  it("gives warpMasks' words exactly: near-unit similarities, B's edges, rows it cannot cut", () => {
    const r = rng(31);
    let cases = 0;
    for (const [W, Ht, OW, OH] of [
      [300, 70, 290, 75],
      [1203, 41, 1300, 45],
      [6000, 140, 6100, 150], // three batches of rows
    ] as const) {
      const img = randomSheet(W, Ht, W + Ht);
      for (const pale of [240, 208]) {
        const m = packInk(img, 160, 208, pale);
        const transforms: number[][] = [
          [1.002, 0, 29.8, 0, 1.002, -26.8],
          [0.998, 0, -3.3, 0, 0.998, 2.6],
          [1.0005, 0, -40, 0, 1.0005, 30], // B's edges inside the frame
        ];
        for (let i = 0; i < 4; i++) transforms.push(nearUnitSimilarity(r, 0.01, 60));
        // 2°: long rows need more than 256 segments and go to the per-word writer.
        const d = (2 * Math.PI) / 180;
        transforms.push([Math.cos(d), -Math.sin(d), 5, Math.sin(d), Math.cos(d), -3]);
        for (const t of transforms) {
          maskKernels.simd = true;
          const w = warpMasks(m, t, OW, OH);
          maskKernels.simd = false;
          const j = warpMasks(m, t, OW, OH);
          const label = `${W}x${Ht} t=${t} pale=${pale}`;
          expect(w.strong, label).toEqual(j.strong);
          expect(w.weak, label).toEqual(j.weak);
          expect(w.pale, label).toEqual(j.pale);
          expect(w.pale === w.weak, label).toBe(pale === 208);
          cases++;
        }
        // Not vacuous: the warp moved ink (compare with the per-pixel formula at a few points).
        const t = transforms[0]!;
        const out = warpMasks(m, t, OW, OH);
        const inv = invertAffine(t as Affine);
        let ink = 0;
        for (let y = 0; y < OH; y += 7)
          for (let x = 0; x < OW; x += 3) {
            const sx = Math.floor(inv[0] * x + inv[1] * y + inv[2] + 0.5),
              sy = Math.floor(inv[3] * x + inv[4] * y + inv[5] + 0.5);
            if (sx < 0 || sy < 0 || sx >= W || sy >= Ht) continue;
            const want = (m.strong[sy * m.stride + (sx >> 5)]! >>> (sx & 31)) & 1;
            expect((out.strong[y * out.stride + (x >> 5)]! >>> (x & 31)) & 1).toBe(want);
            ink += want;
          }
        expect(ink).toBeGreaterThan(0);
      }
    }
    expect(cases).toBe(3 * 2 * 8);
  });

  it("makes registration's ink level: inkDownsample's box means on every whole cell, in batches", () => {
    let cases = 0;
    // Widths not a multiple of 16 or of f; heights of a few batches (256 KB of rows each).
    for (const [W, Ht] of [
      [2003, 1297],
      [317, 95],
      [6800, 330],
    ] as const)
      for (const f of [4, 8, 12]) {
        const img = randomSheet(W, Ht, W + f);
        const got = inkLevelSimd(img, f)!;
        const want = inkDownsample(img, f);
        expect([got.width, got.height, got.f]).toEqual([Math.floor(W / f), Math.floor(Ht / f), f]);
        let ink = 0;
        for (let y = 0; y < got.height; y++)
          for (let x = 0; x < got.width; x++) {
            const v = got.data[y * got.width + x]!;
            // Both sum the same integers and scale once: equal to float32 rounding.
            expect(Math.abs(v - want.data[y * want.width + x]!)).toBeLessThan(1e-3);
            ink += v;
          }
        expect(ink).toBeGreaterThan(0);
        cases++;
      }
    expect(cases).toBe(9);
    // A grey level is 255 minus its ink: one cell of grey 55 is 200 of ink.
    const flat: GreyImage = { width: 8, height: 8, data: new Uint8Array(64).fill(55) };
    expect([...inkLevelSimd(flat, 8)!.data]).toEqual([200]);
  });

  it('leaves factors that are not multiples of 4, and images smaller than a cell, to inkDownsample', () => {
    const img = randomSheet(50, 30, 9);
    expect(inkLevelSimd(img, 2)).toBeNull();
    expect(inkLevelSimd(img, 6)).toBeNull();
    expect(inkLevelSimd(randomSheet(50, 3, 9), 4)).toBeNull();
    // inkLevel falls back to it: partial cells included.
    expect(inkLevel(img, 6)).toEqual(inkDownsample(img, 6));
    expect(inkLevel(img, 4).width).toBe(12);
  });

  it("gives blockCounts' changed pixels per 32 x 32 block exactly: strides, partial blocks, batches", () => {
    let cases = 0;
    // Strides with and without a remainder of 4 words; heights with a partial last block row; the
    // tallest spans several batches (2^19 bytes of both masks' rows each).
    for (const [stride, height, density] of [
      [1, 5, 0.7],
      [7, 70, 0.05],
      [8, 64, 0.5],
      [37, 3001, 0.002],
      [225, 1300, 0.01],
    ] as const) {
      const r = rng(stride * 1000 + height);
      const word = () => (r() < density ? (r() < 0.2 ? -1 : Math.floor(r() * 2 ** 32)) >>> 0 : 0);
      const added = Uint32Array.from({ length: stride * height }, word);
      const removed = Uint32Array.from({ length: stride * height }, word);
      const n = stride * Math.ceil(height / 32);
      // The reference: every set bit of every word, one at a time.
      const refA = new Uint32Array(n),
        refR = new Uint32Array(n);
      for (let y = 0; y < height; y++)
        for (let k = 0; k < stride; k++)
          for (let b = 0; b < 32; b++) {
            refA[(y >> 5) * stride + k]! += (added[y * stride + k]! >>> b) & 1;
            refR[(y >> 5) * stride + k]! += (removed[y * stride + k]! >>> b) & 1;
          }
      // Counts are added to what the arrays hold.
      const addCnt = new Uint32Array(n).fill(3),
        remCnt = new Uint32Array(n).fill(5);
      expect(blockCountsSimd(added, removed, stride, height, addCnt, remCnt)).toBe(true);
      expect(addCnt).toEqual(refA.map((v) => v + 3));
      expect(remCnt).toEqual(refR.map((v) => v + 5));
      expect(refA.some((v) => v > 0) && refR.some((v) => v > 0)).toBe(true);
      cases++;
    }
    expect(cases).toBe(5);
  });

  it('finds the same regions with blockCounts on SIMD as with its JS loop', () => {
    const width = 1000,
      height = 700,
      stride = Math.ceil(width / 32);
    const r = rng(17);
    const added = new Uint32Array(stride * height),
      removed = new Uint32Array(stride * height);
    // Rectangles of change, some of them thin, some touching the edges.
    for (let i = 0; i < 40; i++) {
      const m = r() < 0.5 ? added : removed;
      const x0 = Math.floor(r() * width),
        y0 = Math.floor(r() * height);
      const x1 = Math.min(width - 1, x0 + Math.floor(r() * 90)),
        y1 = Math.min(height - 1, y0 + Math.floor(r() * 60));
      for (let y = y0; y <= y1; y++)
        for (let x = x0; x <= x1; x++) m[y * stride + (x >>> 5)]! |= 1 << (x & 31);
    }
    const d = {
      width,
      height,
      stride,
      added,
      removed,
    } as unknown as Parameters<typeof findRegions>[0];
    maskKernels.simd = false;
    const js = findRegions(d);
    maskKernels.simd = true;
    const simd = findRegions(d);
    expect(js.length).toBeGreaterThan(5);
    expect(simd).toEqual(js);
  });

  it('is built from masks-simd.wat, as fft.wasm.ts from fft.wat (scripts/build-wasm.mjs --check)', () => {
    // Throws (exit 1) when a committed *.wasm.ts is not what its .wat assembles to.
    execFileSync(process.execPath, [path.join(repo, 'scripts/build-wasm.mjs'), '--check'], {
      cwd: repo,
      stdio: 'pipe',
    });
  });
});
