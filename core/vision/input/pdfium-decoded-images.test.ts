import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDocument, type RenderTimings } from './pdf.adapter';
import { indexPredictedImages } from './pdf-image-index';
import { pdfiumHeapBytes } from './pdfium.adapter';
import { buildImagesPdf, type SyntheticImage } from './synthetic-inputs';

// Eligible images (8-bit RGB or grey, Flate + PNG predictors, nothing else that changes their
// pixels) are decoded outside PDFium (pdfium.adapter.ts, decodeImages). Drawn near 1:1 or reduced
// they are handed to PDFium decoded, and the raster must be exactly PDFium's own; enlarged 1.5x or
// more, opaque, upright and unclipped, the painter draws them between PDFium's passes, and the raster
// must match PDFium's closely, in content order. Every other image must be left to PDFium.

const FIXTURES = fileURLToPath(new URL('../../../fixtures/drawings/', import.meta.url));
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
    let far = 0;
    let sum = 0;
    for (let i = 0; i < plain.data.length; i++) {
      const d = Math.abs(plain.data[i]! - decoded.data[i]!);
      if (d) differ++;
      if (d > 32) far++;
      sum += d;
    }
    const n = plain.data.length;
    return { plain, decoded, differ, far: far / n, meanAbs: sum / n, bytes: t.imageBytes ?? 0 };
  } finally {
    await Promise.all([off.close(), on.close()]);
  }
}

// Six images in cells of 172 x 172 pt: at 72 dpi each is drawn at 1 to 1.3x, handed over.
const eligible: SyntheticImage[] = [
  { width: 160, height: 150, comps: 3 }, // rows of every filter type
  { width: 170, height: 130, comps: 3, filter: 1 },
  { width: 150, height: 160, comps: 3, filter: 4 },
  { width: 165, height: 140, comps: 1, filter: 2 },
  { width: 140, height: 170, comps: 1, filter: 3 },
  { width: 172, height: 172, comps: 1 },
];

describe('images handed to PDFium decoded', () => {
  it('8-bit RGB and grey images with PNG predictors are handed over and drawn exactly as PDFium draws them', async () => {
    const pdf = buildImagesPdf(eligible);
    expect(indexPredictedImages(pdf).size).toBe(eligible.length);
    const r = await both(pdf, 0, 72);
    expect(r.bytes).toBe(eligible.reduce((n, i) => n + i.width * i.height * i.comps, 0));
    expect(r.differ).toBe(0);
    // The images are really drawn (not blank cells): a good share of the page is dark.
    expect(r.decoded.data.filter((v) => v < 128).length).toBeGreaterThan(
      r.decoded.data.length / 40,
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
        { dpi: 72, decodeImages: false },
      );
      let bytes = 0;
      for (let top = 0; top < height; top += 300) {
        const t = timings();
        await b.renderBand(
          0,
          { top, rows: Math.min(300, height - top), into },
          { dpi: 72, timings: t },
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

  it('the scanned sheets of the fixtures: beam proposal tiles (reduced) handed over, same pixels; barber house tiles (enlarged 2x) painted, as PDFium paints them', async () => {
    const beam = await both(fixture('20190601_beam-proposal_5-sheets.pdf'), 1, 100);
    expect(beam.bytes).toBeGreaterThan(50_000_000);
    expect(beam.differ).toBe(0);
    // Barber: measured 0.315 mean grey difference over all 9 sheets, 0.086 % of pixels more than 32
    // apart (scan edges where the two bilinear filters round differently, one row at a tile seam).
    const barber = await both(fixture('20130718_barber-house_set_9-sheets.pdf'), 2, 200);
    expect(barber.bytes).toBeGreaterThan(3_000_000); // 18 RGB tiles of 283 x 275
    expect(barber.meanAbs).toBeLessThan(0.5);
    expect(barber.far).toBeLessThan(0.002);
    const ink = (d: Uint8Array) => d.reduce((n, v) => n + (v < 128 ? 1 : 0), 0);
    expect(Math.abs(ink(barber.decoded.data) / ink(barber.plain.data) - 1)).toBeLessThan(0.002);
  });

  it('enlarged images are painted in content order: what is drawn over them stays on top, what is under them is covered', async () => {
    const images: SyntheticImage[] = [
      { width: 260, height: 230, comps: 3 },
      { width: 300, height: 250, comps: 3, filter: 1 },
      { width: 240, height: 300, comps: 1, filter: 2 },
      { width: 280, height: 280, comps: 1, filter: 4 },
    ];
    // 2 x 2 cells of 262 pt from (36, 36); at 150 dpi each image is drawn 1.75-2.3x enlarged.
    const under = '0 0 0 rg 60 60 100 100 re f'; // inside cell 0, under its image
    const over = 'q 8 w 0 0 0 RG 310 160 m 560 160 l S Q'; // across cell 1, over its image
    const pdf = buildImagesPdf(images, { under, over });
    const r = await both(pdf, 0, 150);
    expect(r.bytes).toBe(images.reduce((n, i) => n + i.width * i.height * i.comps, 0));
    expect(r.meanAbs).toBeLessThan(1.5);
    expect(r.far).toBeLessThan(0.01);
    const at = (d: Uint8Array, xPt: number, yPt: number) =>
      d[Math.round(((792 - yPt) * 150) / 72) * r.plain.width + Math.round((xPt * 150) / 72)]!;
    // The line drawn after the images is on top of image 1, in PDFium's raster and in ours.
    expect(at(r.plain.data, 400, 160)).toBeLessThan(64);
    expect(at(r.decoded.data, 400, 160)).toBeLessThan(64);
    // The rectangle drawn before them is covered by image 0: ours shows the image there, as PDFium.
    expect(Math.abs(at(r.decoded.data, 100, 100) - at(r.plain.data, 100, 100))).toBeLessThan(48);

    // In bands: the painter fills each band's rows only, and the bands assemble the one-band page.
    const { width, height } = r.plain;
    const one = new Uint8Array(width * height);
    const cut = new Uint8Array(width * height);
    const [a, b] = [await openDocument(pdf), await openDocument(pdf)];
    try {
      await a.renderBand(0, { top: 0, rows: height, into: one }, { dpi: 150 });
      for (let top = 0; top < height; top += 333)
        await b.renderBand(0, { top, rows: Math.min(333, height - top), into: cut }, { dpi: 150 });
      let differ = 0;
      for (let i = 0; i < one.length; i++) if (one[i] !== cut[i]) differ++;
      expect(differ).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a white background under the painted images is not drawn, anything else before them is', async () => {
    const images: SyntheticImage[] = [
      { width: 260, height: 230, comps: 3 },
      { width: 240, height: 300, comps: 1, filter: 2 },
    ];
    const dpi = 150;
    const at = (d: Uint8Array, width: number, xPt: number, yPt: number) =>
      d[Math.round(((792 - yPt) * dpi) / 72) * width + Math.round((xPt * dpi) / 72)]!;
    // A page-sized white fill first (skipped: white on the white bitmap), then a black square in
    // the margin (drawn: the first run is not all white), then the images.
    for (const [under, black] of [
      ['1 1 1 rg 0 0 612 792 re f', false],
      ['1 1 1 rg 0 0 612 792 re f 0 0 0 rg 10 10 20 20 re f', true],
    ] as const) {
      const r = await both(buildImagesPdf(images, { under }), 0, dpi);
      expect(r.meanAbs).toBeLessThan(1.5);
      expect(r.far).toBeLessThan(0.01);
      const corner = at(r.decoded.data, r.plain.width, 20, 20);
      expect(corner).toBe(at(r.plain.data, r.plain.width, 20, 20));
      expect(corner).toBe(black ? 0 : 255);
    }
  });

  it('an image placed again is painted from the samples the document kept, with the same pixels', async () => {
    const images: SyntheticImage[] = [
      { width: 260, height: 230, comps: 3, filter: 1 },
      { width: 260, height: 230, comps: 3, filter: 1, sameDataAs: 0 },
      { width: 240, height: 250, comps: 1, filter: 2 },
      { width: 240, height: 250, comps: 1, filter: 2, sameDataAs: 2 },
    ];
    const pdf = buildImagesPdf(images); // 2 x 2 cells of 262 pt: 1.9-2.2x enlarged at 150 dpi
    const fresh = await openDocument(pdf);
    const again = await openDocument(pdf);
    try {
      const t1 = timings();
      const first = await fresh.renderPage(0, { dpi: 150, timings: t1 });
      expect(t1.paintedImages).toBe(4);
      expect(t1.paintedFromCache).toBe(2); // the second placement of each
      await again.renderPage(0, { dpi: 150 });
      const t2 = timings();
      const second = await again.renderPage(0, { dpi: 150, timings: t2 });
      expect(t2.paintedFromCache).toBe(4); // all kept from the first render
      let differ = 0;
      for (let i = 0; i < first.data.length; i++) if (first.data[i] !== second.data[i]) differ++;
      expect(differ).toBe(0);
      // And against PDFium drawing them itself: as close as any painted image.
      const r = await both(pdf, 0, 150);
      expect(r.meanAbs).toBeLessThan(1.5);
      expect(r.far).toBeLessThan(0.01);
    } finally {
      await Promise.all([fresh.close(), again.close()]);
    }
  });

  it('in colour, a grey tile stored as RGB is painted again from its kept grey, a colour tile from its planes alone, as PDFium paints them', async () => {
    const pdf = fixture('20130718_barber-house_set_9-sheets.pdf');
    const [painted, plain] = [await openDocument(pdf), await openDocument(pdf)];
    try {
      const t = timings();
      const ours = await painted.renderPage(2, { dpi: 200, colour: true, timings: t });
      const ref = await plain.renderPage(2, { dpi: 200, colour: true, decodeImages: false });
      expect(t.paintedImages).toBe(24);
      // The blank tile is placed six times: decoded once, five times from the document's grey.
      expect(t.paintedFromCache).toBe(5);
      expect(ours.rgb && ref.rgb).toBeTruthy();
      let sum = 0;
      let far = 0;
      for (let i = 0; i < ref.rgb!.length; i++) {
        const d = Math.abs(ref.rgb![i]! - ours.rgb![i]!);
        sum += d;
        if (d > 32) far++;
      }
      expect(sum / ref.rgb!.length).toBeLessThan(0.5);
      expect(far / ref.rgb!.length).toBeLessThan(0.002);
      // Rendered again: every tile from what the document kept (the colour tiles' planes fit its
      // budget at this size), the same pixels.
      const t2 = timings();
      const again = await painted.renderPage(2, { dpi: 200, colour: true, timings: t2 });
      expect(t2.paintedFromCache).toBeGreaterThan(5);
      expect(Buffer.compare(Buffer.from(again.rgb!), Buffer.from(ours.rgb!))).toBe(0);
      expect(Buffer.compare(Buffer.from(again.data), Buffer.from(ours.data))).toBe(0);
    } finally {
      await Promise.all([painted.close(), plain.close()]);
    }
  });

  it('an enlarged image that is clipped, marked (optional content, spans) or turned is handed over instead: PDFium draws it, same pixels', async () => {
    // Drawn 2-2.2x enlarged (cells of 270 pt at 150 dpi): the painter would take them if it could.
    const base = { width: 270, height: 250, comps: 3 } as const;
    const images: SyntheticImage[] = [
      { ...base, before: '40 40 150 150 re W n' },
      { ...base, before: '/Span << /ActualText (x) >> BDC', after: 'EMC' },
      { ...base, turned: true },
    ];
    const r = await both(buildImagesPdf(images), 0, 150);
    expect(r.bytes).toBe(3 * 270 * 250 * 3);
    expect(r.differ).toBe(0);
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
