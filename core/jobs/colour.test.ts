import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { openInput } from '../vision/input/document';
import {
  cloudBoxPx,
  cloudedPlanPdf,
  greyPlanPdf,
  redPixels,
} from '../vision/input/colour.test-support';
import { decodeGrey } from '../vision/compare/encode.adapter';
import { compareToPng } from '../vision/compare/compare-pipeline.adapter';
import { changeRegions } from './compare-tasks';
import type { GreyImage } from '../vision/types';
import { ingestPage } from '../vision/ingest/ingest-page';

// What the store keeps of a page with colour (issue 17 item 6): the sheet image, its crops and
// thumbnail in colour; the comparison decodes the grey the page was read with; pages without colour
// keep one channel.

const DPI = 200;
const open = (pdf: Uint8Array) => openInput(pdf, 'application/pdf', {});
const opts = { dpi: DPI, maxPixels: 50_000_000, ocr: false };

async function channelsOf(png: Uint8Array) {
  return (await sharp(png).metadata()).channels;
}

describe('ingest in colour', () => {
  it('stores a clouded page in colour: red where the cloud is, and the grey the comparison decodes is the grey read', async () => {
    const doc = await open(cloudedPlanPdf());
    try {
      const page = await ingestPage(doc, 0, opts);
      expect(page.colour).toBe(true);
      expect(await channelsOf(page.sheetPng)).toBe(3);
      const { data, info } = await sharp(page.sheetPng).raw().toBuffer({ resolveWithObject: true });
      const red = redPixels(data, info.width, info.height, 3, cloudBoxPx(DPI, 2));
      expect(red.inside).toBeGreaterThan(5000);
      expect(red.outside).toBe(0);
      // The block crops and the thumbnail are in colour too.
      for (const b of page.blocks) expect(await channelsOf(b.png)).toBe(3);
      expect(await channelsOf(page.thumbnailWebp)).toBe(3);

      // The comparison's decode of the stored colour image is exactly the grey ingest read (and the
      // same as the colour render's grey in the adapter), not libvips' own grey.
      const content = await doc.readPage(0, { dpi: DPI, colour: true });
      const grey = await decodeGrey(Buffer.from(page.sheetPng));
      expect(grey.width).toBe(content.raster.width);
      expect(Buffer.from(grey.data).equals(Buffer.from(content.raster.data))).toBe(true);
    } finally {
      await doc.close();
    }
  });

  it('stores a page without colour with one channel, as before colour', async () => {
    const doc = await open(greyPlanPdf());
    try {
      const page = await ingestPage(doc, 0, opts);
      expect(page.colour).toBe(false);
      expect(await channelsOf(page.sheetPng)).toBe(1);
      for (const b of page.blocks) expect(await channelsOf(b.png)).toBe(1);
      // Byte for byte the sheet image ingest stored before colour (grey render, 1-channel PNG).
      const before = await ingestPage(doc, 0, { ...opts, colour: false });
      expect(Buffer.from(page.sheetPng).equals(Buffer.from(before.sheetPng))).toBe(true);
    } finally {
      await doc.close();
    }
  });

  it('leaves the comparison unchanged: the grey of a colour page compares as its grey render does', async () => {
    // Old issue: the grey plan; new issue: the same plan with a red cloud and a blue note. The
    // change regions found between them are the same (to a pixel) whether the new issue's grey comes
    // from its colour render (as stored now) or from a grey render (as before colour); and the colour page
    // against its own grey render shows no change at all (a grey-only old issue against a colour
    // new one differs only where the drawing does).
    const [oldDoc, newDoc] = [await open(greyPlanPdf()), await open(cloudedPlanPdf())];
    try {
      const A = (await oldDoc.readPage(0, { dpi: DPI })).raster;
      const greyRender = (await newDoc.readPage(0, { dpi: DPI })).raster;
      const colourRender = (await newDoc.readPage(0, { dpi: DPI, colour: true })).raster;
      expect(colourRender.rgb).toBeDefined();
      const regionsOf = async (a: GreyImage, b: GreyImage) => {
        const reg = await compareToPng(a, b, { images: [] });
        const png = async (img: GreyImage) =>
          new Uint8Array(
            await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 1 } })
              .png({ compressionLevel: 1 })
              .toBuffer(),
          );
        const out = await changeRegions({
          a: { path: '', png: await png(a) },
          b: { path: '', png: await png(b) },
          aBox: { x: 0, y: 0, width: a.width, height: a.height },
          sheetTransform: [...reg.transform],
          alignmentConfidence: reg.alignment.confidence,
        });
        return out.regions.map((r) => ({ kind: r.kind, bbox: r.bbox }));
      };
      const before = await regionsOf(A, greyRender);
      const now = await regionsOf(A, colourRender);
      expect(before.length).toBeGreaterThan(0);
      // The same changes, of the same kinds, in the same places: PDFium draws text on a grey bitmap
      // with slightly other glyph edges than on a colour one, so a box around new lettering may
      // move by a pixel.
      expect(now.map((r) => r.kind)).toEqual(before.map((r) => r.kind));
      now.forEach((r, i) => {
        const b = before[i]!.bbox;
        for (const [x, y] of [
          [r.bbox.x, b.x],
          [r.bbox.y, b.y],
          [r.bbox.x + r.bbox.width, b.x + b.width],
          [r.bbox.y + r.bbox.height, b.y + b.height],
        ])
          expect(Math.abs(x! - y!)).toBeLessThanOrEqual(2);
      });
      expect(await regionsOf(greyRender, colourRender)).toEqual([]);
    } finally {
      await Promise.all([oldDoc.close(), newDoc.close()]);
    }
  }, 120_000);
});
