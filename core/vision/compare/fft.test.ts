import { afterEach, describe, expect, it } from 'vitest';
import { fft1d, fft2d, fftKernels, phaseCorrelate } from './fft';
import { rng } from './test-support';

// fft2d in WebAssembly must give the JS butterflies' results bit for bit (same operations in the same
// order), forward and inverse, for every grid shape registration uses.

afterEach(() => {
  fftKernels.wasm = true;
});

const bytes = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('fft2d in WebAssembly (fft.wat)', () => {
  it('is bit-identical to the JS FFT, forward and inverse, square and oblong grids', () => {
    const r = rng(13);
    for (const [rows, cols] of [
      [2, 2],
      [2, 8],
      [16, 4],
      [32, 32],
      [64, 64],
      [128, 256],
      [256, 256],
    ] as const) {
      const n = rows * cols;
      const re = Float64Array.from({ length: n }, () => r() * 510 - 255);
      const im = Float64Array.from({ length: n }, () => r() * 2 - 1);
      for (const inverse of [false, true]) {
        const out = { re: re.slice(), im: im.slice() },
          ref = { re: re.slice(), im: im.slice() };
        fftKernels.wasm = true;
        fft2d(out.re, out.im, rows, cols, inverse);
        fftKernels.wasm = false;
        fft2d(ref.re, ref.im, rows, cols, inverse);
        const label = `${rows}x${cols} inverse=${inverse}`;
        expect(bytes(out.re).equals(bytes(ref.re)), label).toBe(true);
        expect(bytes(out.im).equals(bytes(ref.im)), label).toBe(true);
        // Not the identity: the transform did something.
        expect(bytes(out.re).equals(bytes(re)), label).toBe(false);
      }
    }
  });

  it('transforms a known signal: a row impulse gives a flat spectrum, and inverse(forward) = n·x', () => {
    const rows = 8,
      cols = 16;
    const re = new Float64Array(rows * cols),
      im = new Float64Array(rows * cols);
    re[0] = 1;
    fft2d(re, im, rows, cols, false);
    expect([...re].every((v) => Math.abs(v - 1) < 1e-12)).toBe(true);
    expect([...im].every((v) => Math.abs(v) < 1e-12)).toBe(true);
    const r = rng(3);
    const x = Float64Array.from({ length: rows * cols }, () => r());
    const xr = x.slice(),
      xi = new Float64Array(rows * cols);
    fft2d(xr, xi, rows, cols, false);
    fft2d(xr, xi, rows, cols, true);
    for (let i = 0; i < x.length; i++) expect(xr[i]! / (rows * cols)).toBeCloseTo(x[i]!, 12);
    // 1-D JS FFT of the same impulse (the building block of both).
    const a = new Float64Array(4),
      b = new Float64Array(4);
    a[0] = 1;
    fft1d(a, b, 0, 4, false);
    expect([...a]).toEqual([1, 1, 1, 1]);
  });

  it('gives phaseCorrelate the same peak either way', () => {
    const r = rng(21);
    const n = 64;
    const a = Float64Array.from({ length: n * n }, () => r());
    const b = new Float64Array(n * n);
    for (let y = 0; y < n; y++)
      for (let x = 0; x < n; x++) b[y * n + x] = a[((y + 3) % n) * n + ((x + 5) % n)]!;
    fftKernels.wasm = true;
    const w = phaseCorrelate(a, b, n, n, 10, 10);
    fftKernels.wasm = false;
    const j = phaseCorrelate(a, b, n, n, 10, 10);
    expect(w).toEqual(j);
    expect([Math.round(w.dx), Math.round(w.dy)]).toEqual([5, 3]); // a(x) ≈ b(x − d)
  });
});
