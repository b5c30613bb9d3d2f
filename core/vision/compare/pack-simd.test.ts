import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { packImpl, packInk, type PixelWindow } from './diff';
import { simdPackAvailable } from './pack-simd';
import { rng } from './test-support';

// The SIMD pack must give the JS loop's masks word for word (the JS loop is checked against a
// per-pixel threshold in diff.test.ts), and the committed module must be its .wat source.

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

afterEach(() => {
  packImpl.simd = true;
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

describe('packInk with WebAssembly SIMD (pack-simd.ts)', () => {
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
          packImpl.simd = true;
          const s = packInk(img, t, wt, pt, window);
          packImpl.simd = false;
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

  it('is built from pack-simd.wat (scripts/build-wasm.mjs --check)', () => {
    // Throws (exit 1) when pack-simd.wasm.ts is not what the .wat assembles to.
    execFileSync(process.execPath, [path.join(repo, 'scripts/build-wasm.mjs'), '--check'], {
      cwd: repo,
      stdio: 'pipe',
    });
  });
});
