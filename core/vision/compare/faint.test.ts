import { describe, expect, it } from 'vitest';
import type { BBox, GreyImage } from '../types';
import { compareImages } from './compare';
import { diffImages, packInk, popcount32 } from './diff';
import { invertAffine, type Affine } from './register';
import {
  blankImage,
  cloneImage,
  drawGlyphs,
  drawLine,
  fillRect,
  fixture,
  renderPdfPage,
  rng,
  strokeRect,
  warpAffine,
} from './test-support';

// The faint-ink pass (diff.ts header): light-grey content (grey between the ink threshold 160 and the
// weak threshold 208, e.g. a title-block date stamp) never counts as strong ink; its changes are found
// as weak ink with no pale ink (grey < 240) within 1 px on the other side, and reported as regions —
// while anti-aliasing and sub-pixel resampling ghosts still never become regions.

function overlaps(a: BBox, b: BBox, pad = 0): boolean {
  return (
    a.x - pad < b.x + b.width &&
    b.x - pad < a.x + a.width &&
    a.y - pad < b.y + b.height &&
    b.y - pad < a.y + a.height
  );
}

/** Random stroke glyphs in light grey `grey` (min-composited onto `img`). */
function faintGlyphs(
  img: GreyImage,
  x: number,
  y: number,
  w: number,
  h: number,
  r: () => number,
  grey: number,
): void {
  const tmp = blankImage(w + 4, h + 4);
  drawGlyphs(tmp, 2, 2, w, h, r);
  for (let yy = 0; yy < tmp.height; yy++)
    for (let xx = 0; xx < tmp.width; xx++) {
      if (tmp.data[yy * tmp.width + xx] !== 0) continue;
      const i = (y - 2 + yy) * img.width + (x - 2 + xx);
      img.data[i] = Math.min(img.data[i]!, grey);
    }
}

function similarity(s: number, deg: number, tx: number, ty: number, w: number, h: number): Affine {
  const th = (deg * Math.PI) / 180;
  const a = s * Math.cos(th),
    d = s * Math.sin(th);
  const cx = w / 2,
    cy = h / 2;
  return [a, -d, cx - a * cx + d * cy + tx, d, a, cy - d * cx - a * cy + ty];
}

/**
 * A 1400x900 sheet: black linework (1–3 px lines, a border), a light fill, and a "title block" of
 * light-grey (grey 185) text rows; the revision erases, adds and rewrites some grey rows (known boxes).
 */
function faintSheet(seed: number): { a: GreyImage; b: GreyImage; edits: BBox[] } {
  const r = rng(seed);
  const a = blankImage(1400, 900);
  strokeRect(a, 10, 10, 1380, 880, 3);
  for (let i = 0; i < 50; i++)
    drawLine(
      a,
      30 + r() * 1000,
      30 + r() * 600,
      30 + r() * 1000,
      30 + r() * 600,
      1 + Math.floor(r() * 3),
    );
  fillRect(a, 200, 700, 300, 120, 225); // pale fill: tolerance only, never a change
  // title block on the right: 12 rows of grey text, 2 columns
  const rows: BBox[] = [];
  for (let i = 0; i < 12; i++)
    for (let c = 0; c < 2; c++)
      rows.push({ x: 1080 + c * 150, y: 60 + i * 60, width: 120, height: 14 });
  for (const q of rows) faintGlyphs(a, q.x, q.y, q.width, q.height, r, 185);
  const b = cloneImage(a);
  const edits: BBox[] = [];
  const pad = (q: BBox): BBox => ({
    x: q.x - 3,
    y: q.y - 3,
    width: q.width + 6,
    height: q.height + 6,
  });
  // 3 rows erased, 3 rewritten (other glyphs in the same box), 3 new rows in empty space
  for (const i of [1, 6, 15]) {
    fillRect(b, rows[i]!.x - 2, rows[i]!.y - 2, rows[i]!.width + 4, rows[i]!.height + 4, 255);
    edits.push(pad(rows[i]!));
  }
  for (const i of [3, 10, 20]) {
    fillRect(b, rows[i]!.x - 2, rows[i]!.y - 2, rows[i]!.width + 4, rows[i]!.height + 4, 255);
    faintGlyphs(b, rows[i]!.x, rows[i]!.y, rows[i]!.width, rows[i]!.height, r, 185);
    edits.push(pad(rows[i]!));
  }
  for (const [x, y] of [
    [600, 760],
    [800, 820],
    [1080, 800],
  ] as const) {
    const q = { x, y, width: 110, height: 14 };
    faintGlyphs(b, q.x, q.y, q.width, q.height, r, 190);
    edits.push(pad(q));
  }
  return { a, b, edits };
}

describe('packInk pale mask and windows', () => {
  it('pale = grey < paleThreshold per pixel; a window packs like a white-padded crop', () => {
    const W = 75,
      H = 9;
    const img: GreyImage = { width: W, height: H, data: new Uint8Array(W * H) };
    for (let i = 0; i < img.data.length; i++) img.data[i] = (i * 13) % 256;
    const bit = (m: Uint32Array, stride: number, x: number, y: number) =>
      (m[y * stride + (x >> 5)]! >>> (x & 31)) & 1;
    const m = packInk(img, 160, 208, 240);
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++)
        expect(bit(m.pale, m.stride, x, y)).toBe(img.data[y * W + x]! < 240 ? 1 : 0);
    // pale = weak turns the faint pass off: the same array
    const off = packInk(img, 160, 208, 208);
    expect(off.pale).toBe(off.weak);
    for (const win of [
      { x: 5, y: 2, width: 40, height: 5 },
      { x: -7, y: -3, width: 50, height: 8 },
      { x: 60, y: 6, width: 33, height: 9 },
      { x: 100, y: 0, width: 10, height: 4 },
    ]) {
      const w = packInk(img, 160, 208, 240, win);
      expect([w.width, w.height]).toEqual([win.width, win.height]);
      for (let y = 0; y < win.height; y++)
        for (let x = 0; x < win.width; x++) {
          const sx = win.x + x,
            sy = win.y + y;
          const v = sx >= 0 && sy >= 0 && sx < W && sy < H ? img.data[sy * W + sx]! : 255;
          const where = `${JSON.stringify(win)} (${x},${y})`;
          expect(bit(w.strong, w.stride, x, y), where).toBe(v < 160 ? 1 : 0);
          expect(bit(w.weak, w.stride, x, y), where).toBe(v < 208 ? 1 : 0);
          expect(bit(w.pale, w.stride, x, y), where).toBe(v < 240 ? 1 : 0);
        }
    }
  });
});

describe('faint-ink pass (generated ground truth)', () => {
  const truth = similarity(1.0012, 0.04, 3.4, -2.7, 1400, 900); // B → A
  const cases: [string, number][] = [
    ['seed 1', 1],
    ['seed 2', 2],
  ];
  for (const [name, seed] of cases) {
    it(`${name}: every faint edit is a region, nothing else is, strong score untouched`, () => {
      const { a, b: edited, edits } = faintSheet(seed);
      const b = warpAffine(edited, invertAffine(truth)); // bilinear: sub-pixel ghosts everywhere
      const res = compareImages(a, b, { skipRegistration: true, transform: truth, overlays: [] });
      const found = edits.filter((e) => res.regions.some((r) => overlaps(r.bbox, e)));
      expect(found.length, JSON.stringify(res.regions)).toBe(edits.length);
      const falseRegions = res.regions.filter((r) => !edits.some((e) => overlaps(r.bbox, e, 3)));
      expect(falseRegions, JSON.stringify(falseRegions)).toEqual([]);
      expect(res.diff.faint.added_px).toBeGreaterThan(0);
      expect(res.diff.faint.removed_px).toBeGreaterThan(0);
      // Grey text is not strong ink: the score (strong ink only) does not move.
      expect(res.score).toBeGreaterThan(0.998);
      // The faint pixels are in the changed masks the regions and overlays read.
      let changed = 0;
      for (const w of res.diff.added) changed += popcount32(w);
      for (const w of res.diff.removed) changed += popcount32(w);
      expect(changed).toBe(
        res.stats.added_px +
          res.stats.removed_px +
          res.diff.faint.added_px +
          res.diff.faint.removed_px,
      );
    });
  }

  it('without edits the resampled sheet gives no region (anti-aliasing and ghosts stay quiet)', () => {
    const { a } = faintSheet(3);
    for (const t of [truth, similarity(0.9985, -0.3, -11.25, 7.5, 1400, 900)]) {
      const b = warpAffine(a, invertAffine(t));
      const res = compareImages(a, b, { skipRegistration: true, transform: t, overlays: [] });
      expect(res.regions, JSON.stringify(res.regions)).toEqual([]);
    }
  });

  it('the faint pass is what finds them: with paleThreshold = weakThreshold the grey edits vanish', () => {
    const { a, b: edited } = faintSheet(1);
    const b = warpAffine(edited, invertAffine(truth));
    const off = diffImages(a, b, truth, { paleThreshold: 208 });
    expect(off.faint).toEqual({ added_px: 0, removed_px: 0 });
    expect(off.stats.added_px + off.stats.removed_px).toBeLessThan(20);
  });
});

describe('faint-ink pass on the ASK-003 pair (title-block date stamp 1/15 → 1/16, light grey)', () => {
  it('reports the date stamp as a region; every other region is one of the known right-third edits', async () => {
    const A = await renderPdfPage(
      fixture('20150115_ASK-003_exterior-west-wall-window-locations.pdf'),
      0,
      200,
    );
    const B = await renderPdfPage(
      fixture('20150116_ASK-003_exterior-west-wall-window-locations.pdf'),
      0,
      200,
    );
    // Where the stamp is (found by eye on 200 dpi renders, A's sheet pixels): bottom strip, light grey.
    const stamp: BBox = { x: 2150, y: 2030, width: 600, height: 65 };
    const res = compareImages(A, B, { overlays: [] });
    const hits = res.regions.filter((r) => overlaps(r.bbox, stamp));
    expect(hits.length, JSON.stringify(res.regions)).toBeGreaterThanOrEqual(1);
    expect(hits.some((r) => r.added_px > 100 && r.removed_px > 100)).toBe(true);
    // Nothing in the left part (x < 0.6 W), where nothing changed.
    const left = res.regions.filter((r) => r.bbox.x + r.bbox.width < 0.6 * A.width);
    expect(left).toEqual([]);
    // Without the faint pass the stamp is not seen (the "below the ink threshold").
    const off = compareImages(A, B, { overlays: [], diff: { paleThreshold: 208 } });
    expect(off.regions.filter((r) => overlaps(r.bbox, stamp))).toEqual([]);
  });
});
