import { describe, expect, it } from 'vitest';
import { openDocument, type RenderTimings } from './pdf.adapter';
import { COLOUR_CHROMA, greyFromRgb, keepsColour, COLOUR_MIN_PIXELS } from './pdfium.adapter';
import { rgbToGrey } from './grey-resample';
import { buildImagesPdf, type SyntheticImage } from './synthetic-inputs';
import {
  cloudBoxPx,
  cloudedPlanPdf,
  greyPlanPdf,
  redPixels,
  speckedPlanPdf,
} from './colour.test-support';

// Colour where the drawing has it (issue 17 item 6): the `colour` render option keeps a page's colour
// in `rgb`, derives the grey the comparison reads from the same render, and leaves pages of grey
// objects on the grey render they had before.

const DPI = 200;

describe('greyFromRgb', () => {
  it("gives rgbToGrey's grey for every pixel and counts the coloured ones, from any start", () => {
    const n = 1001;
    const rgb = new Uint8Array(n * 3).fill(255);
    // Ink, greys, colours and white runs mixed, so both the four-pixel white path and the pixel path run.
    for (let p = 0; p < n; p++) {
      if (p % 7 === 0) rgb.set([(p * 37) & 255, (p * 91) & 255, (p * 53) & 255], p * 3);
      if (p % 11 === 0) rgb.set([90, 90, 90], p * 3);
    }
    const want = rgbToGrey(rgb, n);
    let coloured = 0;
    for (let p = 0; p < n; p++) {
      const [r, g, b] = [rgb[3 * p]!, rgb[3 * p + 1]!, rgb[3 * p + 2]!];
      if (Math.max(r, g, b) - Math.min(r, g, b) > COLOUR_CHROMA) coloured++;
    }
    expect(coloured).toBeGreaterThan(50);
    const grey = new Uint8Array(n).fill(7);
    expect(greyFromRgb(rgb, grey, 0, n)).toBe(coloured);
    expect([...grey]).toEqual([...want]);
    // A range that starts and ends off a word boundary writes only its own pixels.
    const part = new Uint8Array(n).fill(7);
    greyFromRgb(rgb, part, 3, 998);
    expect([...part.subarray(3, 998)]).toEqual([...want.subarray(3, 998)]);
    expect([part[2], part[998]]).toEqual([7, 7]);
  });

  it('keeps a page in colour from COLOUR_MIN_PIXELS coloured pixels on', () => {
    expect(keepsColour(COLOUR_MIN_PIXELS - 1)).toBe(false);
    expect(keepsColour(COLOUR_MIN_PIXELS)).toBe(true);
  });
});

describe('PDFium colour render', () => {
  it('keeps a red revision cloud red, only where it is, with the grey derived from the same render', async () => {
    const doc = await openDocument(cloudedPlanPdf());
    try {
      const r = await doc.renderPage(0, { dpi: DPI, colour: true });
      expect(r.rgb).toBeDefined();
      expect(r.rgb!.length).toBe(r.width * r.height * 3);
      expect(r.colourPixels).toBeGreaterThanOrEqual(COLOUR_MIN_PIXELS);
      const red = redPixels(r.rgb!, r.width, r.height, 3, cloudBoxPx(DPI, 2));
      // The cloud's 3 pt pen is ~8 px wide at 200 dpi around a 200 x 150 pt box: thousands of pixels.
      expect(red.inside).toBeGreaterThan(5000);
      expect(red.outside).toBe(0);
      // The grey is the colour render's, pixel for pixel.
      expect([...r.data]).toEqual([...rgbToGrey(r.rgb!, r.width * r.height)]);
      // Black line work stays black in colour: the plan's bottom line at y = 72 pt, x = 300 pt.
      const s = DPI / 72;
      const p = Math.round((792 - 72) * s) * r.width + Math.round(300 * s);
      expect([r.rgb![3 * p], r.rgb![3 * p + 1], r.rgb![3 * p + 2]]).toEqual([0, 0, 0]);
    } finally {
      await doc.close();
    }
  });

  it('renders a page of grey objects grey, byte for byte as without the option, with no colour buffer', async () => {
    const doc = await openDocument(greyPlanPdf());
    try {
      const grey = await doc.renderPage(0, { dpi: DPI });
      const asked = await doc.renderPage(0, { dpi: DPI, colour: true });
      // colourPixels is set only by a colour render: none happened.
      expect(asked.colourPixels).toBeUndefined();
      expect(asked.rgb).toBeUndefined();
      expect(Buffer.from(asked.data).equals(Buffer.from(grey.data))).toBe(true);
    } finally {
      await doc.close();
    }
  });

  it('stores a page whose colour is a speck of a few pixels with one channel', async () => {
    const doc = await openDocument(speckedPlanPdf());
    try {
      const r = await doc.renderPage(0, { dpi: DPI, colour: true });
      // Rendered in colour (its objects have colour), but too few coloured pixels to keep.
      expect(r.colourPixels).toBeGreaterThan(0);
      expect(r.colourPixels).toBeLessThan(COLOUR_MIN_PIXELS);
      expect(r.rgb).toBeUndefined();
      expect(r.data.length).toBe(r.width * r.height);
    } finally {
      await doc.close();
    }
  });

  it('assembles the same colour and grey from bands as from the whole page', async () => {
    const doc = await openDocument(cloudedPlanPdf());
    try {
      const whole = await doc.renderPage(0, { dpi: DPI, colour: true });
      const { width, height } = whole;
      const into = new Uint8Array(width * height);
      const rgbInto = new Uint8Array(width * height * 3);
      const cut = Math.floor(height * 0.55); // through the cloud
      let coloured = 0;
      for (const [top, rows] of [
        [0, cut],
        [cut, height - cut],
      ] as const) {
        const { raster } = await doc.renderBand(
          0,
          { top, rows, into, rgbInto },
          { dpi: DPI, colour: true },
        );
        coloured += raster.colourPixels!;
      }
      expect(coloured).toBe(whole.colourPixels);
      expect(Buffer.from(into).equals(Buffer.from(whole.data))).toBe(true);
      expect(Buffer.from(rgbInto).equals(Buffer.from(whole.rgb!))).toBe(true);
      // Without a colour buffer a band renders grey, as before.
      const { raster } = await doc.renderBand(
        0,
        { top: 0, rows: height, into: new Uint8Array(width * height) },
        { dpi: DPI, colour: true },
      );
      expect(raster.colourPixels).toBeUndefined();
    } finally {
      await doc.close();
    }
  });

  it('paints enlarged colour scan tiles in colour and grey ones grey, as PDFium draws them', async () => {
    // 2 cells of 262 pt from (36, 36): at 150 dpi both images are drawn 2.1-2.3x enlarged, the
    // painter's case. Image 0 has colour samples, image 1 is DeviceGray.
    const images: SyntheticImage[] = [
      { width: 260, height: 230, comps: 3, filter: 1 },
      { width: 240, height: 250, comps: 1, filter: 2 },
    ];
    const pdf = buildImagesPdf(images);
    const doc = await openDocument(pdf);
    try {
      const t = { pageMs: 0, renderMs: 0, readbackMs: 0, greyMs: 0 } as RenderTimings;
      const painted = await doc.renderPage(0, { dpi: 150, colour: true, timings: t });
      expect(t.paintedImages).toBe(2);
      const pdfium = await doc.renderPage(0, { dpi: 150, colour: true, decodeImages: false });
      expect(painted.rgb).toBeDefined();
      expect(pdfium.rgb).toBeDefined();
      // The painter's bilinear scaling is PDFium's, channel by channel, to within a few levels
      // (the grey painter's own tolerance, pdfium-decoded-images.test.ts).
      let sum = 0;
      let far = 0;
      for (let i = 0; i < painted.rgb!.length; i++) {
        const d = Math.abs(painted.rgb![i]! - pdfium.rgb![i]!);
        sum += d;
        if (d > 32) far++;
      }
      expect(sum / painted.rgb!.length).toBeLessThan(1.5);
      expect(far / painted.rgb!.length).toBeLessThan(0.01);
      // Both images' places, in pixels: cell k spans x 36 + 270 k .. + 262 pt, y 36 .. 298 pt.
      const s = 150 / 72;
      const inCell = (k: number, f: (p: number) => void) => {
        for (let y = Math.ceil((792 - 298) * s) + 2; y < Math.floor((792 - 36) * s) - 2; y += 3)
          for (
            let x = Math.ceil((36 + 270 * k) * s) + 2;
            x < Math.floor((298 + 270 * k) * s) - 2;
            x += 3
          )
            f(3 * (y * painted.width + x));
      };
      let colouredInColourTile = 0;
      inCell(0, (p) => {
        const [r, g, b] = [painted.rgb![p]!, painted.rgb![p + 1]!, painted.rgb![p + 2]!];
        if (Math.max(r, g, b) - Math.min(r, g, b) > COLOUR_CHROMA) colouredInColourTile++;
      });
      expect(colouredInColourTile).toBeGreaterThan(1000);
      // The grey image has no colour: R = G = B everywhere on it.
      let notGrey = 0;
      inCell(1, (p) => {
        if (painted.rgb![p] !== painted.rgb![p + 1] || painted.rgb![p + 1] !== painted.rgb![p + 2])
          notGrey++;
      });
      expect(notGrey).toBe(0);
    } finally {
      await doc.close();
    }
  });
});
