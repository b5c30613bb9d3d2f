import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import type { BBox, GreyImage } from '../types';
import { CompareBuffers } from './buffers';
import { compareImages } from './compare';
import { renderOverlay } from './diff';
import { compareToPng, IMAGE_KINDS, reserveStageBuffers } from './compare-pipeline.adapter';
import { invertAffine, transformError, type Affine } from './register';
import {
  cloneImage,
  drawGlyphs,
  fixture,
  renderPdfPage,
  rng,
  strokeRect,
  warpAffine,
} from './test-support';

// The scheduled pipeline (libvips levels + PNG encode overlapped with JS) must give the same answer
// as the pure engine: registration within 1 px of the truth, the same regions, and a PNG that decodes
// to exactly the overlay it returns.

const OLD = fixture('20190601_beam-proposal_5-sheets.pdf');

const overlaps = (a: BBox, b: BBox, m = 0): boolean =>
  a.x - m < b.x + b.width &&
  b.x - m < a.x + a.width &&
  a.y - m < b.y + b.height &&
  b.y - m < a.y + a.height;

describe('compareToPng', () => {
  it('registers, finds the edits and encodes the overlay like compareImages', async () => {
    const A = await renderPdfPage(OLD, 0, 100);
    const r = rng(5);
    const edited = cloneImage(A);
    const boxes: BBox[] = [];
    for (let i = 0; i < 8; i++) {
      const x = 200 + i * 370,
        y = 300 + (i % 3) * 600;
      if (i % 2) strokeRect(edited, x, y, 60, 40, 2);
      else drawGlyphs(edited, x, y, 80, 14, r);
      boxes.push({ x: x - 2, y: y - 2, width: 84, height: 44 });
    }
    const th = (0.3 * Math.PI) / 180,
      s = 1.004;
    const cx = A.width / 2,
      cy = A.height / 2;
    const a = s * Math.cos(th),
      d = s * Math.sin(th);
    const truth: Affine = [a, -d, cx - a * cx + d * cy + 23, d, a, cy - d * cx - a * cy - 17];
    const B = warpAffine(edited, invertAffine(truth));
    // compareImages (the reference) has no layers: the same compare without them (layers.fixtures.test
    // covers them on real sheets).
    const res = await compareToPng(A, B, { layers: false });
    const ref = compareImages(A, B, { overlays: [] });
    const err = transformError(res.transform, truth, A.width, A.height);
    expect(err.max, JSON.stringify(res.alignment)).toBeLessThanOrEqual(1);
    expect(res.alignment.confidence).toBeGreaterThan(0.5);
    expect(Math.abs(res.score - ref.score)).toBeLessThan(0.002);
    const found = boxes.filter((b) => res.regions.some((g) => overlaps(g.bbox, b)));
    expect(found.length).toBe(boxes.length);
    const falseRegions = res.regions.filter((g) => !boxes.some((b) => overlaps(g.bbox, b, 3)));
    expect(falseRegions).toEqual([]);
    // The PNG decodes to exactly the RGB overlay of the returned masks, and holds the returned indices.
    const { data, info } = await sharp(res.png).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height, info.channels]).toEqual([A.width, A.height, 3]);
    expect(Buffer.compare(data, Buffer.from(renderOverlay(res.diff).data))).toBe(0);
    expect(res.stats.added_px).toBeGreaterThan(0); // green in it
    const idx = res.overlay!;
    expect([idx.width, idx.height, idx.rowBytes]).toEqual([
      A.width,
      A.height,
      1 + Math.ceil(A.width / 2),
    ]);
  }, 120_000);
});

describe('compareToPng with CompareBuffers', () => {
  it('renders into the kept buffers: the same images, and the next compare reuses them', async () => {
    const mk = (seed: number): GreyImage => {
      const r = rng(seed);
      const img: GreyImage = { width: 300, height: 120, data: new Uint8Array(300 * 120).fill(255) };
      for (let i = 0; i < 40; i++) strokeRect(img, r() * 260, r() * 90, 30, 20, 1 + (i % 3));
      return img;
    };
    const A = mk(1),
      B = mk(2),
      C = mk(3);
    const images = ['combined', 'combined_colorblind', 'additions', 'deletions'] as const;
    const opts = { skipRegistration: true, images: [...images] };
    const plainAB = await compareToPng(A, B, opts);
    const plainAC = await compareToPng(A, C, opts);
    const buffers = new CompareBuffers();
    const first = await compareToPng(A, B, { ...opts, buffers });
    const firstData = first.overlay!.data;
    const firstAdded = first.diff.added;
    expect(first.stats).toEqual(plainAB.stats);
    expect(Buffer.compare(Buffer.from(firstData), Buffer.from(plainAB.overlay!.data))).toBe(0);
    for (const k of images) expect(first.pngs[k]!.equals(plainAB.pngs[k]!), k).toBe(true);
    // Each image decodes to renderOverlay's RGB of its kind and palette; the two combined images
    // differ only in their palette.
    const want = {
      combined: renderOverlay(first.diff, 'combined'),
      combined_colorblind: renderOverlay(first.diff, 'combined', 'colorblind'),
      additions: renderOverlay(first.diff, 'additions'),
      deletions: renderOverlay(first.diff, 'deletions'),
    };
    for (const k of images) {
      const got = await sharp(first.pngs[k]!).raw().toBuffer();
      expect(Buffer.compare(got, Buffer.from(want[k].data)), k).toBe(0);
    }
    expect(first.pngs.combined!.equals(first.pngs.combined_colorblind!)).toBe(false);
    const second = await compareToPng(A, C, { ...opts, buffers });
    // The same memory, now holding the second compare's overlay and masks.
    expect(second.overlay!.data.buffer).toBe(firstData.buffer);
    expect(second.diff.added.buffer).toBe(firstAdded.buffer);
    expect(second.stats).toEqual(plainAC.stats);
    expect(second.diff.added).toEqual(plainAC.diff.added);
    expect(second.diff.removed).toEqual(plainAC.diff.removed);
    expect(second.regions).toEqual(plainAC.regions);
    expect(
      Buffer.compare(Buffer.from(second.overlay!.data), Buffer.from(plainAC.overlay!.data)),
    ).toBe(0);
    for (const k of images) expect(second.pngs[k]!.equals(plainAC.pngs[k]!), k).toBe(true);
    expect(() => buffers.words('x', 1.5)).toThrow(/word count/);
    // Kept words come back zeroed.
    buffers.words('z', 8).fill(7);
    expect([...buffers.words('z', 6)]).toEqual([0, 0, 0, 0, 0, 0]);
  });
});

describe('reserveStageBuffers', () => {
  it('grows every slot the two stages take, so a compare of that size makes no array', async () => {
    const mk = (w: number, h: number, seed: number): GreyImage => {
      const r = rng(seed);
      const img: GreyImage = { width: w, height: h, data: new Uint8Array(w * h).fill(255) };
      for (let i = 0; i < 60; i++)
        strokeRect(img, r() * (w - 40), r() * (h - 30), 30, 20, 1 + (i % 3));
      return img;
    };
    const A = mk(333, 141, 1),
      B = mk(301, 157, 2);
    const images = IMAGE_KINDS;
    const buffers = new CompareBuffers();
    reserveStageBuffers(buffers, A, [...images]);
    const made = buffers.made;
    expect(made).toBeGreaterThan(0);
    const res = await compareToPng(A, B, { skipRegistration: true, images: [...images], buffers });
    expect(buffers.made, 'arrays made by the compare').toBe(made);
    expect(res.pngs.aligned_b!.length).toBeGreaterThan(0);
    // Reserving again for the same sizes (or smaller) makes nothing; a larger window grows the slots.
    reserveStageBuffers(buffers, A, [...images]);
    reserveStageBuffers(buffers, { width: 100, height: 100 }, ['combined']);
    expect(buffers.made).toBe(made);
    reserveStageBuffers(buffers, { width: 400, height: 141 }, ['combined']);
    expect(buffers.made).toBeGreaterThan(made);
    // Without the reservation the same compare makes its arrays itself.
    const fresh = new CompareBuffers();
    await compareToPng(A, B, { skipRegistration: true, images: [...images], buffers: fresh });
    expect(fresh.made).toBe(made);
  });
});
