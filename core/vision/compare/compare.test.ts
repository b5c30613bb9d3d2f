import { describe, expect, it } from 'vitest';
import type { BBox, GreyImage } from '../types';
import { compareImages } from './compare';
import sharp from 'sharp';
import { overlayPalette, renderOverlay, renderOverlayIndexed } from './diff';
import { decodeGrey, encodeGreyPng, encodeIndexedPngs } from './encode.adapter';
import { invertAffine, transformError, type Affine } from './register';
import {
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

const DPI = 100;
const OLD = fixture('20190601_beam-proposal_5-sheets.pdf');
const NEW = fixture('20190602_beam-proposal_5-sheets.pdf');

function similarity(s: number, deg: number, tx: number, ty: number, w: number, h: number): Affine {
  const th = (deg * Math.PI) / 180;
  const a = s * Math.cos(th),
    d = s * Math.sin(th);
  const cx = w / 2,
    cy = h / 2;
  return [a, -d, cx - a * cx + d * cy + tx, d, a, cy - d * cx - a * cy + ty];
}

function overlaps(a: BBox, b: BBox, margin = 0): boolean {
  return (
    a.x - margin < b.x + b.width &&
    b.x - margin < a.x + a.width &&
    a.y - margin < b.y + b.height &&
    b.y - margin < a.y + a.height
  );
}

function strongInk(img: GreyImage, box: BBox): number {
  let n = 0;
  for (let y = box.y; y < box.y + box.height; y++)
    for (let x = box.x; x < box.x + box.width; x++) if (img.data[y * img.width + x]! < 160) n++;
  return n;
}

/**
 * Known edits on a copy of A (A's frame): erase ink in some cells (removed), draw rectangles, lines and
 * glyph rows in others (added). Cells lie on a 7 x 5 grid with margins so edits never merge.
 */
function makeEdits(a: GreyImage, seed: number): { edited: GreyImage; boxes: BBox[] } {
  const r = rng(seed);
  const edited = cloneImage(a);
  const boxes: BBox[] = [];
  const cols = 7,
    rows = 5;
  for (let cy = 0; cy < rows; cy++) {
    for (let cx = 0; cx < cols; cx++) {
      const kind = (cx + cy * cols) % 3; // 0,1: add, 2: remove
      const cellW = a.width / cols,
        cellH = a.height / rows;
      if (kind === 2) {
        // remove: find a 50x40 window with plenty of strong ink
        for (let tries = 0; tries < 60; tries++) {
          const box = {
            x: Math.floor(cx * cellW + 100 + r() * (cellW - 250)),
            y: Math.floor(cy * cellH + 100 + r() * (cellH - 240)),
            width: 50,
            height: 40,
          };
          if (strongInk(a, box) >= 150) {
            fillRect(edited, box.x, box.y, box.width, box.height, 255);
            boxes.push(box);
            break;
          }
        }
      } else {
        const x = Math.floor(cx * cellW + 100 + r() * (cellW - 260)),
          y = Math.floor(cy * cellH + 100 + r() * (cellH - 200));
        const style = (cx + cy) % 3;
        if (style === 0) strokeRect(edited, x, y, 60, 40, 2);
        else if (style === 1) drawLine(edited, x, y, x + 70, y + 30, 2);
        else drawGlyphs(edited, x, y, 80, 14, r);
        boxes.push({
          x: x - 2,
          y: y - 2,
          width: style === 2 ? 84 : 74,
          height: style === 2 ? 18 : 44,
        });
      }
    }
  }
  return { edited, boxes };
}

describe('compareImages — ground truth on a real sheet (S101 at 100 dpi)', () => {
  it('identical images → score 1 and no regions', async () => {
    const A = await renderPdfPage(OLD, 0, DPI);
    const res = compareImages(A, A);
    expect(res.score).toBe(1);
    expect(res.regions).toEqual([]);
    expect(res.alignment.confidence).toBeGreaterThan(0.8);
  });

  const cases: [string, number, number, number, number][] = [
    ['shift only', 1, 0, 37, -22],
    ['scale 1.5 % + 0.5° + shift', 1.015, 0.5, -41, 28],
    ['scale −0.8 % + −1° + shift', 0.992, -1, 55, 18],
  ];
  for (const [name, s, deg, tx, ty] of cases) {
    it(`${name}: registration ≤ 1 px, ≥ 95 % of edits found, no false regions`, async () => {
      const A = await renderPdfPage(OLD, 0, DPI);
      const { edited, boxes } = makeEdits(A, Math.round(s * 1000 + deg * 10));
      expect(boxes.length).toBeGreaterThanOrEqual(30);
      const truth = similarity(s, deg, tx, ty, A.width, A.height); // B → A
      const B = warpAffine(edited, invertAffine(truth));
      const res = compareImages(A, B, { overlays: [] });
      const err = transformError(res.transform, truth, A.width, A.height);
      expect(err.max, JSON.stringify(res.alignment)).toBeLessThanOrEqual(1);
      const found = boxes.filter((b) => res.regions.some((r) => overlaps(r.bbox, b)));
      expect(
        found.length / boxes.length,
        `found ${found.length}/${boxes.length}`,
      ).toBeGreaterThanOrEqual(0.95);
      const falseRegions = res.regions.filter((r) => !boxes.some((b) => overlaps(r.bbox, b, 3)));
      expect(falseRegions, JSON.stringify(falseRegions)).toEqual([]);
      expect(res.score).toBeGreaterThan(0.8);
      expect(res.score).toBeLessThan(1);
    });
  }
});

describe('compareImages — the real revision pair (beam proposal 20190601 → 20190602)', () => {
  for (const page of [1, 2, 3, 4]) {
    it(`page ${page}: unchanged sheet scores ≥ 0.99 with no regions`, async () => {
      const A = await renderPdfPage(OLD, page, DPI);
      const B = await renderPdfPage(NEW, page, DPI);
      const res = compareImages(A, B, { overlays: [] });
      expect(res.score).toBeGreaterThanOrEqual(0.99);
      expect(res.regions).toEqual([]);
    });
  }

  it('page 0 (S101): the added column and its callout are found, nothing else', async () => {
    const A = await renderPdfPage(OLD, 0, DPI);
    const B = await renderPdfPage(NEW, 0, DPI);
    const res = compareImages(A, B, { overlays: ['combined', 'additions', 'deletions'] });
    // Where the renders differ (found by eye at 100 dpi: column square, leader and "GLULAM COLUMN" cloud).
    const truth: BBox = { x: 1925, y: 1132, width: 325, height: 271 };
    expect(res.regions.length).toBeGreaterThan(0);
    expect(res.regions.some((r) => overlaps(r.bbox, truth) && r.added_px > 100)).toBe(true);
    for (const r of res.regions) expect(overlaps(r.bbox, truth, 20), JSON.stringify(r)).toBe(true);
    expect(res.score).toBeGreaterThan(0.95);
    expect(res.score).toBeLessThan(1);
    expect(res.stats.added_px).toBeGreaterThan(res.stats.removed_px);
    // overlays have the sheet's size and show green where ink was added
    const o = res.overlays.combined!;
    expect([o.width, o.height]).toEqual([A.width, A.height]);
    let green = 0;
    for (let i = 0; i < o.data.length; i += 3)
      if (o.data[i] === 0 && o.data[i + 1] === 170) green++;
    // Green = strong added ink plus the faint-ink additions (its anti-aliased fringe).
    expect(green).toBe(res.stats.added_px + res.diff.faint.added_px);
    const [png] = await encodeIndexedPngs(renderOverlayIndexed(res.diff), [
      overlayPalette('standard'),
    ]);
    const back = await decodeGrey(png!);
    expect([back.width, back.height]).toEqual([A.width, A.height]);
  });
});

describe('encode.adapter', () => {
  it('round-trips a grey image through a 1-channel PNG', async () => {
    const img: GreyImage = {
      width: 5,
      height: 3,
      data: new Uint8Array([0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 255]),
    };
    const png = await encodeGreyPng(img);
    expect(png[25]).toBe(0); // PNG colour type 0 = greyscale (IHDR byte 25)
    const back = await decodeGrey(png);
    expect(Array.from(back.data)).toEqual(Array.from(img.data));
  });
  it("writes overlays as 4-bit palette PNGs that decode to renderOverlay's RGB, one per palette", async () => {
    const a: GreyImage = { width: 45, height: 7, data: new Uint8Array(45 * 7).fill(255) };
    const b: GreyImage = { width: 45, height: 7, data: new Uint8Array(45 * 7).fill(255) };
    for (let x = 0; x < 45; x++) {
      a.data[2 * 45 + x] = x % 3 === 0 ? 0 : 190; // strong and faint ink
      b.data[2 * 45 + x] = x % 3 === 0 ? 0 : 255;
      if (x > 20) b.data[5 * 45 + x] = 0; // added
    }
    const d = compareImages(a, b, { skipRegistration: true, overlays: [] }).diff;
    for (const level of [1, 6])
      for (const kind of ['combined', 'additions', 'deletions'] as const) {
        const pngs = await encodeIndexedPngs(
          renderOverlayIndexed(d, kind),
          [overlayPalette('standard', kind), overlayPalette('colorblind', kind)],
          { compressionLevel: level },
        );
        expect(pngs).toHaveLength(2);
        for (const [i, palette] of (['standard', 'colorblind'] as const).entries()) {
          const png = pngs[i]!;
          // IHDR: bit depth 4 (combined) or 2, colour type 3 (palette)
          expect([png[24], png[25]]).toEqual([kind === 'combined' ? 4 : 2, 3]);
          const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
          expect([info.width, info.height, info.channels]).toEqual([45, 7, 3]);
          const want = renderOverlay(d, kind, palette).data;
          expect(Buffer.compare(data, Buffer.from(want)), `${kind} ${palette} level ${level}`).toBe(
            0,
          );
        }
      }
    const img = renderOverlayIndexed(d);
    await expect(
      encodeIndexedPngs({ ...img, data: img.data.subarray(0, 10) }, [overlayPalette('standard')]),
    ).rejects.toThrow(/7 scanlines of 24 bytes/);
    await expect(encodeIndexedPngs(img, [[]])).rejects.toThrow(/1–16 palette entries/);
    const two = renderOverlayIndexed(d, 'additions');
    await expect(encodeIndexedPngs(two, [overlayPalette('standard', 'combined')])).rejects.toThrow(
      /1–4 palette entries for a 2-bit PNG but received 8/,
    );
  });
});
