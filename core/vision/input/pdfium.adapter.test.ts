import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { PageRaster } from '../types';
import { openDocument, type PdfDocumentHandle } from './pdf.adapter';
import { pdfiumHeapBytes } from './pdfium.adapter';
import { buildPdf } from './synthetic-inputs';
import { assemblePdf, streamObject } from './pdf-writer';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/drawings/', import.meta.url));
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

/** Renders page `index` in `n` equal bands into one buffer, as the worker pool does. */
async function inBands(
  doc: PdfDocumentHandle,
  index: number,
  dpi: number,
  n: number,
  size: { width: number; height: number },
): Promise<Uint8Array> {
  const into = new Uint8Array(size.width * size.height);
  const rows = Math.ceil(size.height / n);
  for (let top = 0; top < size.height; top += rows) {
    await doc.renderBand(index, { top, rows: Math.min(rows, size.height - top), into }, { dpi });
  }
  return into;
}

function differing(a: Uint8Array, b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
  return n;
}

describe('PDFium bands (a page rendered by several workers)', () => {
  it('1 to 4 bands assemble the same pixels, on pages of fractional size, rotated or not', async () => {
    for (const [w, h, rotate] of [
      [612.7, 791.3, 0],
      [1224.9, 792.6, 90],
      [2448.5, 1584.25, 0],
    ] as const) {
      // Thin strokes and text across the seams: anti-aliased edges on every band boundary.
      const content =
        `0.3 w 10 10 m ${w - 10} ${h - 10} l S 20 20 ${w - 40} ${h - 40} re S ` +
        `0.5 w 30 ${h / 2} m ${w - 30} ${h / 2 + 0.37} l S ` +
        `BT /F1 9 Tf 100 ${h / 2 - 3} Td (Seam text across a band boundary) Tj ET`;
      const doc = await openDocument(buildPdf({ widthPt: w, heightPt: h, rotate, content }));
      try {
        for (const dpi of [150, 200]) {
          const whole = await doc.renderPage(0, { dpi });
          const one = await inBands(doc, 0, dpi, 1, whole);
          let ink = 0;
          for (const v of one) if (v < 128) ink++;
          expect(ink).toBeGreaterThan(1000);
          for (const n of [2, 3, 4]) {
            expect(
              differing(await inBands(doc, 0, dpi, n, whole), one),
              `${w}x${h} /Rotate ${rotate} @${dpi}, ${n} bands`,
            ).toBe(0);
          }
        }
      } finally {
        await doc.close();
      }
    }
  });

  it('on fixture sheets the bands give exactly renderPage’s pixels, and the first band the same text', async () => {
    for (const [name, index] of [
      ['20130718_barber-house_set_9-sheets.pdf', 0],
      ['20150129_A-101_first-floor.pdf', 0], // /Rotate 90, rotated title-block text
      ['20190414_foundation-details_3-sheets.pdf', 0],
    ] as const) {
      const doc = await openDocument(fixture(name));
      try {
        const { raster: whole, text } = await doc.renderPageWithText(index, { dpi: 200 });
        expect(differing(await inBands(doc, index, 200, 2, whole), whole.data), name).toBe(0);
        const into = new Uint8Array(whole.width * whole.height);
        const band = await doc.renderBand(
          index,
          { top: 0, rows: 700, into },
          { dpi: 200, withText: true },
        );
        expect(band.text).toEqual(text);
        expect(band.raster).toMatchObject({ width: whole.width, height: whole.height, dpi: 200 });
        expect(band.raster.data).toBe(into);
        // Only the band's rows were written.
        expect(into.subarray(700 * whole.width).every((v) => v === 0)).toBe(true);
      } finally {
        await doc.close();
      }
    }
  });

  it('refuses a band outside the page or a target that is not the whole page', async () => {
    const doc = await openDocument(buildPdf());
    try {
      const page = { width: 1700, height: 2200 }; // letter at 200 dpi
      const into = new Uint8Array(page.width * page.height);
      await expect(doc.renderBand(0, { top: 2100, rows: 101, into })).rejects.toThrow(
        'Expected a band of at least 1 row inside rows 0..2199 but received top 2100, rows 101',
      );
      await expect(doc.renderBand(0, { top: 0, rows: 0, into })).rejects.toThrow(RangeError);
      await expect(
        doc.renderBand(0, { top: 0, rows: 10, into: new Uint8Array(1700 * 10) }),
      ).rejects.toThrow(
        'Expected a band target of 1700 x 2200 = 3740000 bytes (the whole page) but received 17000',
      );
      // The document stays usable.
      const ok = await doc.renderBand(0, { top: 0, rows: 10, into });
      expect(ok.raster.height).toBe(2200);
    } finally {
      await doc.close();
    }
  });
});

describe('line work from the page objects (issue 17)', () => {
  // At 72 dpi one point is one pixel; raster y = 792 − PDF y.
  const content = [
    '0 G 1 w 50 550 m 550 550 l S', // a line the area fill below covers: hidden in both renders
    '0.5 g 100 400 300 200 re f', // an area fill (300 x 200 pt, grey)
    '0 G 2 w 50 700 m 550 700 l S', // a line, partly covered by the wipeout below
    '0 G 1 w 50 500 m 550 500 l S', // a line over the area fill
    '0 g 450 450 10 10 re f', // a small filled square: a symbol of the line work
    '1 g 300 690 100 20 re f', // a wipeout (white fill) over the first line
    '0 g BT /F1 24 Tf 60 100 Td (AB) Tj ET', // text
  ].join(' ');
  const bitAt = (r: PageRaster, x: number, y: number) => {
    const rb = Math.ceil(r.width / 8);
    return (r.lineWork![y * (rb + 1) + 1 + (x >> 3)]! >> (7 - (x & 7))) & 1;
  };

  it('marks stroked paths, text and small fills, not area fills, hidden lines or wiped-out parts', async () => {
    const doc = await openDocument(buildPdf({ content }));
    try {
      const { raster: r } = await doc.renderPageWithText(0, { dpi: 72 });
      expect(r.lineWork).toBeDefined();
      expect(r.lineWork!.length).toBe((Math.ceil(r.width / 8) + 1) * r.height);
      // The page itself: the area fill is grey, the line over it dark.
      expect(Math.abs(r.data[250 * r.width + 200]! - 128)).toBeLessThanOrEqual(2);
      expect(r.data[292 * r.width + 200]!).toBeLessThan(80);
      expect(bitAt(r, 200, 92)).toBe(1); // the line
      expect(bitAt(r, 350, 92)).toBe(0); // under the wipeout
      expect(bitAt(r, 200, 250)).toBe(0); // the area fill
      expect(bitAt(r, 200, 242)).toBe(0); // the line the area fill covers
      expect(bitAt(r, 200, 292)).toBe(1); // the line over the area fill
      expect(bitAt(r, 455, 337)).toBe(1); // the small square
      let text = 0;
      for (let y = 670; y < 692; y++) for (let x = 60; x < 95; x++) text += bitAt(r, x, y);
      expect(text).toBeGreaterThan(50);
      // Line work is the ink of those objects and nothing else: outside it the page is paper or fill.
      let stray = 0;
      for (let y = 0; y < r.height; y++)
        for (let x = 0; x < r.width; x++)
          if (bitAt(r, x, y) === 1 && r.data[y * r.width + x]! >= 250) stray++;
      expect(stray).toBe(0);
    } finally {
      await doc.close();
    }
  });

  it('is the page’s own ink on a page of line work only (no second render), whole or in one band', async () => {
    const lines =
      '0 G 2 w 50 700 m 550 700 l S 0.3 G 1 w 50 500 m 550 500 l S 0 g 450 450 10 10 re f';
    const doc = await openDocument(buildPdf({ content: lines }));
    try {
      const whole = (await doc.renderPageWithText(0, { dpi: 72 })).raster;
      const into = new Uint8Array(whole.width * whole.height);
      const band = (
        await doc.renderBand(0, { top: 0, rows: whole.height, into }, { dpi: 72, withText: true })
      ).raster;
      for (const r of [whole, band]) {
        let ink = 0,
          wrong = 0;
        for (let y = 0; y < r.height; y++)
          for (let x = 0; x < r.width; x++) {
            const isInk = r.data[y * r.width + x]! < 240 ? 1 : 0;
            ink += isInk;
            if (bitAt(r, x, y) !== isInk) wrong++;
          }
        expect(ink).toBeGreaterThan(1000);
        expect(wrong).toBe(0);
      }
    } finally {
      await doc.close();
    }
  });

  it('classifies the objects inside a form XObject one by one', async () => {
    // The same area fill and line over it, drawn by a form the page paints.
    const form = '0.5 g 100 400 300 200 re f 0 G 1 w 50 500 m 550 500 l S';
    const page = 'q /Fm1 Do Q';
    const pdf = assemblePdf([
      '',
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Fm1 5 0 R >> >> /Contents 4 0 R >>',
      streamObject('', new TextEncoder().encode(page)),
      streamObject(
        '/Type /XObject /Subtype /Form /BBox [0 0 612 792]',
        new TextEncoder().encode(form),
      ),
    ]);
    const doc = await openDocument(pdf);
    try {
      const { raster: r } = await doc.renderPageWithText(0, { dpi: 72 });
      expect(Math.abs(r.data[250 * r.width + 200]! - 128)).toBeLessThanOrEqual(2);
      expect(bitAt(r, 200, 292)).toBe(1); // the line
      expect(bitAt(r, 200, 250)).toBe(0); // the area fill
    } finally {
      await doc.close();
    }
  });

  it('marks the area fills of tone by object (fillWork), not dark poche, symbols, thin fills or what paper hides', async () => {
    const content = [
      '0.5 g 100 400 300 200 re f', // a tone (300 x 200 pt, grey): the fill layer
      '0 G 1 w 50 500 m 550 500 l S', // a line over it: line work (the fill lies under it)
      '1 g 150 450 50 50 re f', // a wipeout over the tone: paper hides it
      '0.05 g 100 100 200 100 re f', // a near-black area (poche): left to image analysis
      '0.5 g 450 150 10 10 re f', // a small filled square: a symbol of the line work
      '0.5 g 480 100 8 200 re f', // a filled strip 8 pt wide: too thin for a tone
    ].join(' ');
    const bit = (rows: Uint8Array, r: PageRaster, x: number, y: number) =>
      (rows[y * (Math.ceil(r.width / 8) + 1) + 1 + (x >> 3)]! >> (7 - (x & 7))) & 1;
    const doc = await openDocument(buildPdf({ content }));
    try {
      const { raster: r } = await doc.renderPageWithText(0, { dpi: 72 });
      expect(r.fillWork).toBeDefined();
      expect(r.fillWork!.length).toBe(r.lineWork!.length);
      expect(r.annotWork).toBeUndefined();
      const f = (x: number, y: number) => bit(r.fillWork!, r, x, y);
      expect(f(120, 250)).toBe(1); // the tone
      expect(f(200, 292)).toBe(1); // under the line
      expect(bitAt(r, 200, 292)).toBe(1); // which is line work
      expect(f(175, 317)).toBe(0); // under the wipeout
      expect(f(200, 642)).toBe(0); // the poche
      expect(f(455, 637)).toBe(0); // the symbol
      expect(f(484, 600)).toBe(0); // the strip
      expect(f(50, 50)).toBe(0); // paper
      // Nothing outside the tone's box.
      let outside = 0;
      for (let y = 0; y < r.height; y++)
        for (let x = 0; x < r.width; x++)
          if (f(x, y) && (x < 99 || x > 401 || y < 191 || y > 393)) outside++;
      expect(outside).toBe(0);
    } finally {
      await doc.close();
    }
    // A page of line work and symbols only has no fill layer by object.
    const plain = await openDocument(
      buildPdf({ content: '0 G 1 w 50 500 m 550 500 l S 0.5 g 450 150 10 10 re f' }),
    );
    try {
      expect((await plain.renderPageWithText(0, { dpi: 72 })).raster.fillWork).toBeUndefined();
    } finally {
      await plain.close();
    }
  });

  it('marks what the page’s annotations draw (annotWork), apart from the line work; links draw nothing', async () => {
    // A Square markup (its appearance: a 3 pt red frame at 300..400 x 300..360 pt) and a Link.
    const ap = '1 0 0 RG 3 w 1.5 1.5 97 57 re S';
    const annotPdf = (annots: string) =>
      assemblePdf([
        '',
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Annots [${annots}] >>`,
        streamObject('', new TextEncoder().encode('0 G 1 w 50 500 m 550 500 l S')),
        '<< /Type /Annot /Subtype /Square /Rect [300 300 400 360] /C [1 0 0] /AP << /N 6 0 R >> >>',
        streamObject(
          '/Type /XObject /Subtype /Form /BBox [0 0 100 60]',
          new TextEncoder().encode(ap),
        ),
        '<< /Type /Annot /Subtype /Link /Rect [50 50 150 80] /Border [0 0 0] >>',
      ]);
    const bit = (rows: Uint8Array, r: PageRaster, x: number, y: number) =>
      (rows[y * (Math.ceil(r.width / 8) + 1) + 1 + (x >> 3)]! >> (7 - (x & 7))) & 1;
    const doc = await openDocument(annotPdf('5 0 R 7 0 R'));
    try {
      const { raster: r } = await doc.renderPageWithText(0, { dpi: 72 });
      expect(r.annotWork).toBeDefined();
      expect(r.fillWork).toBeUndefined();
      // The frame's left side (x ≈ 301), from y 432 to 492 on the raster: annotation, not line work.
      expect(bit(r.annotWork!, r, 301, 460)).toBe(1);
      expect(bitAt(r, 301, 460)).toBe(0);
      expect(bit(r.annotWork!, r, 350, 460)).toBe(0); // inside the frame
      expect(bit(r.annotWork!, r, 200, 292)).toBe(0); // the page's line
      expect(bitAt(r, 200, 292)).toBe(1);
      expect(r.data[460 * r.width + 301]!).toBeLessThan(200); // the page shows it
    } finally {
      await doc.close();
    }
    const linkOnly = await openDocument(annotPdf('7 0 R'));
    try {
      expect((await linkOnly.renderPageWithText(0, { dpi: 72 })).raster.annotWork).toBeUndefined();
    } finally {
      await linkOnly.close();
    }
  });

  it('marks the white fill of a markup box as drawn by the annotation (it hides what lies under it)', async () => {
    // A Square markup painted white inside its red frame, over a grey area of the page.
    const ap = '1 g 0 0 100 60 re f 1 0 0 RG 3 w 1.5 1.5 97 57 re S';
    const pdf = assemblePdf([
      '',
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Annots [5 0 R] >>',
      streamObject(
        '',
        new TextEncoder().encode('0 G 1 w 50 500 m 550 500 l S 0.5 g 280 280 140 100 re f'),
      ),
      '<< /Type /Annot /Subtype /Square /Rect [300 300 400 360] /C [1 0 0] /AP << /N 6 0 R >> >>',
      streamObject(
        '/Type /XObject /Subtype /Form /BBox [0 0 100 60]',
        new TextEncoder().encode(ap),
      ),
    ]);
    const bit = (rows: Uint8Array, r: PageRaster, x: number, y: number) =>
      (rows[y * (Math.ceil(r.width / 8) + 1) + 1 + (x >> 3)]! >> (7 - (x & 7))) & 1;
    const doc = await openDocument(pdf);
    try {
      const { raster: r } = await doc.renderPageWithText(0, { dpi: 72 });
      expect(r.annotWork).toBeDefined();
      expect(bit(r.annotWork!, r, 301, 460)).toBe(1); // the frame
      // Inside the frame: painted white by the markup over the page's grey area.
      expect(r.data[460 * r.width + 350]!).toBeGreaterThan(240);
      expect(bit(r.annotWork!, r, 350, 460)).toBe(1);
      expect(bit(r.annotWork!, r, 330, 440)).toBe(1);
      // The grey area around the markup and the page's line are not the annotation's.
      expect(bit(r.annotWork!, r, 290, 460)).toBe(0);
      expect(bit(r.annotWork!, r, 200, 292)).toBe(0);
      // Nothing outside its box (x 300–400, y 432–492 on the raster).
      let outside = 0;
      for (let y = 0; y < r.height; y++)
        for (let x = 0; x < r.width; x++)
          if (bit(r.annotWork!, r, x, y) && (x < 298 || x > 402 || y < 430 || y > 494)) outside++;
      expect(outside).toBe(0);
    } finally {
      await doc.close();
    }
  });

  it('is not read without the text, nor when asked not to, nor on a page of images only', async () => {
    const doc = await openDocument(buildPdf({ content }));
    try {
      expect((await doc.renderPage(0, { dpi: 72 })).lineWork).toBeUndefined();
      const off = await doc.renderPageWithText(0, { dpi: 72, lineWork: false });
      expect(off.raster.lineWork).toBeUndefined();
    } finally {
      await doc.close();
    }
    const scan = await openDocument(buildPdf({ content: '0.5 g 100 400 300 200 re f' }));
    try {
      expect((await scan.renderPageWithText(0, { dpi: 72 })).raster.lineWork).toBeUndefined();
    } finally {
      await scan.close();
    }
  });
});
