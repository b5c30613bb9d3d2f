import { describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { nextPow2, phaseCorrelate } from './fft';
import {
  _internal,
  inkDownsample,
  pairLevelFactor,
  refineFull,
  registerLevels,
  invertAffine,
  registerImages,
  transformError,
  type Affine,
  type RegisterOptions,
} from './register';
import {
  blankImage,
  drawGlyphs,
  drawLine,
  fixture,
  renderPdfPage,
  rng,
  strokeRect,
  warpAffine,
} from './test-support';

/** A small synthetic "drawing": frame, grid of boxes, diagonal strokes and glyph rows. */
function synthSheet(w: number, h: number, seed = 1): GreyImage {
  const img = blankImage(w, h);
  const r = rng(seed);
  strokeRect(img, 10, 10, w - 20, h - 20, 3);
  for (let i = 0; i < 40; i++) {
    const x = 20 + r() * (w - 120),
      y = 20 + r() * (h - 80);
    strokeRect(img, x, y, 20 + r() * 80, 15 + r() * 50, 2);
  }
  for (let i = 0; i < 30; i++)
    drawLine(
      img,
      20 + r() * (w - 40),
      20 + r() * (h - 40),
      20 + r() * (w - 40),
      20 + r() * (h - 40),
      2,
    );
  for (let i = 0; i < 25; i++)
    drawGlyphs(img, 20 + r() * (w - 140), 20 + r() * (h - 40), 60 + r() * 60, 12, r);
  return img;
}

/** Similarity x_A = s·R(θ)·x_B + t, about the sheet centre. */
function similarity(s: number, deg: number, tx: number, ty: number, w: number, h: number): Affine {
  const th = (deg * Math.PI) / 180;
  const a = s * Math.cos(th),
    d = s * Math.sin(th);
  const cx = w / 2,
    cy = h / 2;
  return [a, -d, cx - a * cx + d * cy + tx, d, a, cy - d * cx - a * cy + ty];
}

describe('phaseCorrelate', () => {
  it('finds an integer shift with the documented sign (a(x) = b(x − d))', () => {
    const n = 32;
    const b = new Float64Array(n * n);
    const a = new Float64Array(n * n);
    const r = rng(3);
    for (let i = 0; i < n * n; i++) b[i] = r();
    for (let y = 0; y < n; y++)
      for (let x = 0; x < n; x++) a[y * n + x] = b[((y - 2 + n) % n) * n + ((x - 5 + n) % n)]!;
    const pk = phaseCorrelate(a, b, n, n, 10, 10);
    expect(pk.dx).toBeCloseTo(5, 5);
    expect(pk.dy).toBeCloseTo(2, 5);
    expect(pk.peak).toBeGreaterThan(0.9);
    expect(nextPow2(33)).toBe(64);
  });
});

describe('inkDownsample', () => {
  it('averages ink over f x f blocks (SWAR path f=4 and byte path f=3 agree with a direct sum)', () => {
    const img = blankImage(13, 9);
    img.data[0] = 0; // ink 255 in the first block
    img.data[13 * 8 + 12] = 155; // ink 100 at the bottom-right corner pixel
    const l4 = inkDownsample(img, 4);
    expect([l4.width, l4.height]).toEqual([4, 3]);
    expect(l4.data[0]).toBeCloseTo(255 / 16, 5);
    expect(l4.data[11]).toBeCloseTo(100 / 1, 5); // corner block holds 1x1 pixel
    const l3 = inkDownsample(img, 3);
    expect(l3.data[0]).toBeCloseTo(255 / 9, 5);
    expect(l3.data[l3.width * l3.height - 1]).toBeCloseTo(100 / 3, 5); // 1 col x 3 rows
  });
});

describe('similarity fit', () => {
  it('recovers an exact similarity from matches and rejects an outlier', () => {
    const t = similarity(1.01, 0.7, 12, -7, 400, 300);
    const ms = [] as { ax: number; ay: number; bx: number; by: number; peak: number }[];
    for (let i = 0; i < 12; i++) {
      const bx = (i % 4) * 100 + 20,
        by = Math.floor(i / 4) * 100 + 30;
      ms.push({
        bx,
        by,
        ax: t[0] * bx + t[1] * by + t[2],
        ay: t[3] * bx + t[4] * by + t[5],
        peak: 1,
      });
    }
    ms[3]!.ax += 40; // gross outlier
    const fit = _internal.robustFit(ms, 2, 'similarity')!;
    expect(fit.inliers.length).toBe(11);
    expect(transformError(fit.t, t, 400, 300).max).toBeLessThan(1e-6);
    const aff = _internal.fitAffine(ms.filter((_, i) => i !== 3))!;
    expect(transformError(aff, t, 400, 300).max).toBeLessThan(1e-6);
  });
});

describe('registerImages (synthetic)', () => {
  const A = synthSheet(1200, 800);
  it('identical images give identity with high confidence', () => {
    const r = registerImages(A, A);
    expect(transformError(r.transform, [1, 0, 0, 0, 1, 0], 1200, 800).max).toBeLessThan(0.25);
    expect(r.confidence).toBeGreaterThan(0.7);
  });
  it('recovers shift + 1.5 % scale + 0.8° rotation within 0.5 px', () => {
    const truthBtoA = similarity(1 / 1.015, -0.8, -31, 22, 1200, 800);
    const B = warpAffine(A, invertAffine(truthBtoA)); // B = A seen through the inverse: B pixels map to A by truth
    const r = registerImages(A, B);
    const err = transformError(r.transform, truthBtoA, 1200, 800);
    expect(err.max).toBeLessThan(0.5);
    expect(r.confidence).toBeGreaterThan(0.6);
  });
  it('reports low confidence for unrelated sheets', () => {
    const other = synthSheet(1200, 800, 99);
    const r = registerImages(A, other);
    expect(r.confidence).toBeLessThan(0.3);
  });
});

/** A registered onto each known transform of itself (B = A warped), with the transform error. */
function registerCases(A: GreyImage, cases: Affine[], opts: RegisterOptions = {}) {
  return cases.map((truth) => {
    const r = registerImages(A, warpAffine(A, invertAffine(truth)), opts);
    return { truth, r, err: transformError(r.transform, truth, A.width, A.height) };
  });
}

describe('registerImages (real sheet, beam proposal S101 at 100 dpi)', () => {
  it('recovers known transforms within 1 px over the sheet (max) and 0.25 px (rms)', async () => {
    const A = await renderPdfPage(fixture('20190601_beam-proposal_5-sheets.pdf'), 0, 100);
    const cases: Affine[] = [
      similarity(1, 0, 37, -22, A.width, A.height),
      similarity(1.012, 0.6, -45, 30, A.width, A.height),
      similarity(0.992, -1.0, 60, 15, A.width, A.height),
    ];
    for (const { truth, r, err } of registerCases(A, cases)) {
      expect(err.max, JSON.stringify({ truth, r })).toBeLessThan(1);
      expect(err.rms).toBeLessThan(0.25);
      expect(r.confidence).toBeGreaterThan(0.6);
    }
  });
  it('is within 0.2 px over the sheet at 150 dpi: the bench goal is 0.25 (two full-resolution rounds)', async () => {
    const A = await renderPdfPage(fixture('20190601_beam-proposal_5-sheets.pdf'), 3, 150);
    const cases: Affine[] = [
      similarity(1.002, 0, 37, -22, A.width, A.height),
      similarity(1.011, 0.7, -52, 41, A.width, A.height),
      similarity(0.995, -0.9, 18, 57, A.width, A.height),
      similarity(1.006, 0.3, -8.5, -31.25, A.width, A.height),
    ];
    const errs = registerCases(A, cases).map((c) => c.err.max);
    expect(Math.max(...errs), JSON.stringify(errs)).toBeLessThan(0.2);
    // One round leaves the windowed patches' pull toward zero shift in the fit.
    const one = registerCases(A, cases, { fullRounds: [8] }).map((c) => c.err.max);
    expect(one.reduce((s, e) => s + e, 0)).toBeGreaterThan(errs.reduce((s, e) => s + e, 0));
  }, 60_000);

  it('handles the same sheet at twice the size (11x17 vs 22x34 plot at one dpi)', async () => {
    const A = await renderPdfPage(fixture('20190601_beam-proposal_5-sheets.pdf'), 0, 50);
    const B = await renderPdfPage(fixture('20190601_beam-proposal_5-sheets.pdf'), 0, 100);
    const r = registerImages(A, B);
    // pdf.js pixel centres: x_A = 0.5·x_B + 0.25 (half-pixel convention) — allow a pixel.
    const truth: Affine = [0.5, 0, -0.25, 0, 0.5, -0.25];
    const err = transformError(r.transform, truth, A.width, A.height);
    expect(err.max, JSON.stringify(r)).toBeLessThan(1);
    expect(r.coarse.scale).toBeCloseTo(0.5, 1);
  });
});

describe('registerLevels + refineFull', () => {
  it('give registerImages’ result, stage by stage', async () => {
    const A = await renderPdfPage(fixture('20190601_beam-proposal_5-sheets.pdf'), 0, 100);
    const truth = similarity(1.006, 0.4, 60, 50, A.width, A.height);
    const B = warpAffine(A, invertAffine(truth));
    const whole = registerImages(A, B);
    const size = { aw: A.width, ah: A.height, bw: B.width, bh: B.height };
    const f = pairLevelFactor(size);
    const stage = registerLevels(inkDownsample(A, f), inkDownsample(B, f), size);
    expect(stage.fitted).toBe(true);
    const full = refineFull(A, B, stage);
    expect(full.transform).toEqual(whole.transform);
    expect(full.inliers).toBe(whole.inliers);
    expect(full.confidence).toBe(whole.confidence);
    expect(transformError(full.transform, truth, A.width, A.height).max).toBeLessThan(0.5);
  });
});
