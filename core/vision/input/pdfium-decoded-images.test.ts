import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDocument, type RenderTimings } from './pdf.adapter';
import { indexPredictedImages } from './pdf-image-index';
import { pdfiumHeapBytes } from './pdfium.adapter';
import { buildImagesPdf, type SyntheticImage } from './synthetic-inputs';

// Eligible images (8-bit RGB or grey, Flate + PNG predictors, nothing else that changes their
// pixels) are decoded outside PDFium and handed over decoded (pdfium.adapter.ts,
// decodePredictedImages): the raster must be exactly PDFium's own, and every other image must be
// left to PDFium.

const FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures/drawings/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(FIXTURES + name));

function timings(): RenderTimings {
  return { pageMs: 0, renderMs: 0, readbackMs: 0, greyMs: 0 };
}

/** Page `index` rendered by a fresh document with and without decoded images, and the bytes handed. */
async function both(pdf: Uint8Array, index: number, dpi: number) {
  const off = await openDocument(pdf);
  const on = await openDocument(pdf);
  try {
    const t = timings();
    const plain = await off.renderPage(index, { dpi, decodeImages: false });
    const decoded = await on.renderPage(index, { dpi, timings: t });
    let differ = 0;
    for (let i = 0; i < plain.data.length; i++) if (plain.data[i] !== decoded.data[i]) differ++;
    return { plain, decoded, differ, bytes: t.imageBytes ?? 0 };
  } finally {
    await Promise.all([off.close(), on.close()]);
  }
}

const eligible: SyntheticImage[] = [
  { width: 97, height: 61, comps: 3 }, // rows of every filter type
  { width: 64, height: 64, comps: 3, filter: 1 },
  { width: 45, height: 70, comps: 3, filter: 4 },
  { width: 81, height: 33, comps: 1, filter: 2 },
  { width: 50, height: 50, comps: 1, filter: 3 },
  { width: 77, height: 58, comps: 1 },
];

describe('images handed to PDFium decoded', () => {
  it('8-bit RGB and grey images with PNG predictors are handed over and drawn exactly as PDFium draws them', async () => {
    const pdf = buildImagesPdf(eligible);
    expect(indexPredictedImages(pdf).size).toBe(eligible.length);
    const r = await both(pdf, 0, 150);
    expect(r.bytes).toBe(eligible.reduce((n, i) => n + i.width * i.height * i.comps, 0));
    expect(r.differ).toBe(0);
    // The images are really drawn (not blank cells): a good share of the page is dark.
    expect(r.decoded.data.filter((v) => v < 128).length).toBeGreaterThan(
      r.decoded.data.length / 20,
    );

    // In bands: each band hands over only the images it draws, and the bands assemble the page
    // PDFium draws in one band by itself (the band transform may round image edges differently
    // from the whole-page render on a page like this one, decoded or not).
    const { width, height } = r.plain;
    const reference = new Uint8Array(width * height);
    const into = new Uint8Array(width * height);
    const [a, b] = [await openDocument(pdf), await openDocument(pdf)];
    try {
      await a.renderBand(
        0,
        { top: 0, rows: height, into: reference },
        { dpi: 150, decodeImages: false },
      );
      let bytes = 0;
      for (let top = 0; top < height; top += 400) {
        const t = timings();
        await b.renderBand(
          0,
          { top, rows: Math.min(400, height - top), into },
          { dpi: 150, timings: t },
        );
        bytes += t.imageBytes ?? 0;
      }
      let differ = 0;
      for (let i = 0; i < into.length; i++) if (into[i] !== reference[i]) differ++;
      expect(differ).toBe(0);
      expect(bytes).toBeGreaterThanOrEqual(r.bytes);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('every other image is left to PDFium: a /Decode, a soft mask, /Interpolate, another colour space, no or a TIFF predictor, bytes shared with another dictionary', async () => {
    const others: SyntheticImage[] = [
      { width: 40, height: 30, comps: 3, dict: '/Decode [1 0 1 0 1 0]' },
      { width: 40, height: 30, comps: 3, smask: true },
      { width: 40, height: 30, comps: 1, dict: '/Interpolate true' },
      {
        width: 40,
        height: 30,
        comps: 3,
        dict: '/ColorSpace [/CalRGB << /WhitePoint [0.9505 1 1.089] >>]',
      },
      { width: 40, height: 30, comps: 3, filter: 'none' },
      { width: 40, height: 30, comps: 3, filter: 'tiff' },
      { width: 40, height: 30, comps: 1, seed: 99 },
      { width: 40, height: 30, comps: 1, sameDataAs: 6, dict: '/Decode [1 0]' },
    ];
    const pdf = buildImagesPdf(others);
    expect(indexPredictedImages(pdf).size).toBe(0);
    const r = await both(pdf, 0, 150);
    expect(r.bytes).toBe(0);
    expect(r.differ).toBe(0);
    // Without its /Decode the first image would be drawn inverted: handing it over would show.
    expect(r.decoded.data.filter((v) => v < 128).length).toBeGreaterThan(
      r.decoded.data.length / 20,
    );
  });

  it('the scanned sheets of the fixtures: the beam proposal’s and the barber house’s RGB tiles are handed over, same pixels', async () => {
    const beam = await both(fixture('20190601_beam-proposal_5-sheets.pdf'), 1, 100);
    expect(beam.bytes).toBeGreaterThan(50_000_000);
    expect(beam.differ).toBe(0);
    const barber = await both(fixture('20130718_barber-house_set_9-sheets.pdf'), 2, 150);
    expect(barber.bytes).toBeGreaterThan(3_000_000);
    expect(barber.differ).toBe(0);
  });

  it('the heap stays bounded over a set: the document is reopened as decoded images pile up in its cache', async () => {
    const doc = await openDocument(fixture('20190601_beam-proposal_5-sheets.pdf'));
    try {
      const sizes: number[] = [];
      let handed = 0;
      for (let round = 0; round < 2; round++)
        for (let i = 0; i < doc.pageCount; i++) {
          const t = timings();
          await doc.renderPage(i, { dpi: 50, timings: t });
          handed += t.imageBytes ?? 0;
          sizes.push(await pdfiumHeapBytes());
        }
      // ~370 MB a round handed over (a reopened document decodes its images again); kept in the
      // cache they would grow the heap by about as much (measured: 159 -> 543 MB).
      expect(sizes.at(-1)! - sizes[0]!).toBeLessThan(96 * 1024 * 1024);
      expect(handed).toBeGreaterThan(600_000_000);
    } finally {
      await doc.close();
    }
  });
});
