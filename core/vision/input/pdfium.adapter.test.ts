import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PageRaster } from '../types';
import { openDocument } from './pdf.adapter';
import { pdfiumHeapBytes } from './pdfium.adapter';
import { buildPdf } from './synthetic-inputs';

const FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures/drawings/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(FIXTURES + name));

/** Share of pixels darker than 128 in a box given in PDF points of an unrotated page (y up). */
function darkInPt(
  r: PageRaster,
  box: { x0: number; y0: number; x1: number; y1: number },
  heightPt: number,
): number {
  const s = r.dpi / 72;
  const px0 = Math.round(box.x0 * s);
  const px1 = Math.round(box.x1 * s);
  const py0 = Math.round((heightPt - box.y1) * s);
  const py1 = Math.round((heightPt - box.y0) * s);
  let dark = 0;
  for (let y = py0; y < py1; y++)
    for (let x = px0; x < px1; x++) if (r.data[y * r.width + x]! < 128) dark++;
  return dark / ((px1 - px0) * (py1 - py0));
}

describe('PDFium raster', () => {
  it('converts colour to grey with Rec.601 luma, as the pdf.js path did ((77 R + 150 G + 29 B) >> 8)', async () => {
    // Four 1-in squares: red, green, blue, mid grey; white paper around them.
    const content =
      '1 0 0 rg 72 72 72 72 re f 0 1 0 rg 216 72 72 72 re f ' +
      '0 0 1 rg 360 72 72 72 re f 0.5 0.5 0.5 rg 72 288 72 72 re f';
    const doc = await openDocument(buildPdf({ content }));
    try {
      const r = await doc.renderPage(0, { dpi: 72 });
      expect(r.data.length).toBe(r.width * r.height);
      const at = (xPt: number, yPt: number) => r.data[(792 - yPt) * r.width + xPt]!;
      const expected = [
        [108, 108, 76], // red
        [252, 108, 149], // green
        [396, 108, 29], // blue
        [108, 324, 128], // 0.5 grey (sRGB 128)
      ];
      for (const [x, y, v] of expected) expect(Math.abs(at(x!, y!) - v!)).toBeLessThanOrEqual(2);
      expect(at(10, 10)).toBe(255); // paper stays pure white
      expect(at(600, 780)).toBe(255);
    } finally {
      await doc.close();
    }
  });

  it('draws markup annotations: the FreeText added to S101 in the 20190602 issue is ink only there', async () => {
    // Only difference in that box between the two issues: a FreeText annotation (rect 1386,568 -
    // 1626,665 pt, with an appearance stream) present in 20190602 and absent in 20190601.
    const box = { x0: 1392, y0: 574, x1: 1620, y1: 648 };
    const dark: number[] = [];
    for (const name of [
      '20190601_beam-proposal_5-sheets.pdf',
      '20190602_beam-proposal_5-sheets.pdf',
    ]) {
      const doc = await openDocument(fixture(name));
      try {
        const r = await doc.renderPage(0, { dpi: 50 });
        dark.push(darkInPt(r, box, 1584));
      } finally {
        await doc.close();
      }
    }
    expect(dark[1]! - dark[0]!).toBeGreaterThan(0.01);
  });

  it('frees every page, bitmap and document: the WASM heap stops growing after the first round', async () => {
    const pdf = buildPdf({ pages: 2 });
    const sizes: number[] = [];
    for (let round = 0; round < 6; round++) {
      const doc = await openDocument(pdf);
      // 8.4 MP per render: a leaked bitmap would grow the heap by ~8 MB a round.
      await doc.renderPage(0, { dpi: 300 });
      await doc.renderPage(1, { dpi: 300 });
      await doc.close();
      sizes.push(await pdfiumHeapBytes());
    }
    expect(sizes[0]).toBeGreaterThan(0);
    expect(sizes.at(-1)).toBe(sizes[1]);
  });

  it('a closed document refuses further use', async () => {
    const doc = await openDocument(buildPdf());
    await doc.close();
    await expect(doc.renderPage(0)).rejects.toThrow(/after close/);
  });
});
