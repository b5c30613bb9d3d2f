// PDFium text runs on hand-built pages: every /Rotate with an offset crop box, scaled and rotated text
// matrices, TJ gaps, real spaces. Each page is checked against pdf.js (the text layer the sheet readers
// were built on) and against the raster: a run's box must cover its rendered glyphs.

import { describe, expect, it } from 'vitest';
import type { TextItem } from '../types';
import { openDocument, pixelSize } from './pdf.adapter';
import { openPdfjsText, pdfjsPageText } from './pdfjs-text';
import { pdfiumHeapBytes } from './pdfium.adapter';
import { RunBuilder, runBox, type Glyph } from './pdfium-text';
import { buildPdf, type SyntheticPdfOptions } from './synthetic-inputs';
import { darkFractionIn } from './raster.test-support';

/** PDFium runs (renderPageWithText), pdf.js runs and the raster of page 0 at `dpi`. */
async function read(opts: SyntheticPdfOptions, dpi: number) {
  const bytes = buildPdf(opts);
  const doc = await openDocument(bytes);
  const js = await openPdfjsText(bytes);
  try {
    const { raster, text } = await doc.renderPageWithText(0, { dpi });
    const info = await doc.pageInfo(0);
    const ref = await pdfjsPageText(js, 0, dpi, pixelSize(info.widthPt, info.heightPt, dpi));
    expect(await doc.pageText(0, dpi)).toEqual(text); // same runs with or without the render
    return { raster, text, ref };
  } finally {
    await doc.close();
    await js.destroy();
  }
}

/** Same runs (PDFium may order text objects differently from the content stream: compare sorted). */
function expectSameRuns(pdfium: TextItem[], pdfjs: TextItem[], tol = 0.5): void {
  const order = (p: TextItem, q: TextItem) =>
    p.text.localeCompare(q.text) || p.x - q.x || p.y - q.y;
  const a = [...pdfium].sort(order);
  const b = [...pdfjs].sort(order);
  expect(a.map((t) => t.text)).toEqual(b.map((t) => t.text));
  a.forEach((t, i) => {
    const r = b[i]!;
    for (const k of ['x', 'y', 'width', 'height', 'fontSize'] as const) {
      expect(Math.abs(t[k] - r[k]), `${t.text} ${k}: ${t[k]} vs ${r[k]}`).toBeLessThanOrEqual(tol);
    }
    expect(t.angle).toBe(r.angle);
  });
}

const words =
  'BT /F1 1 Tf 24 0 0 24 100 600 Tm (SHEET TITLE) Tj ET ' + // Tf 1 scaled by the matrix, a real space
  'BT /F1 12 Tf 2 0 0 2 100 500 Tm [(A-) 20 (101) -300 (REV) -2000 (C)] TJ ET ' + // kerning, a TJ space, a TJ gap
  'BT /F1 20 Tf 0 1 -1 0 500 100 Tm (UPWARD) Tj ET ' + // bottom to top
  'BT /F1 20 Tf 0.866 0.5 -0.5 0.866 150 250 Tm (SLANT) Tj ET'; // 30 degrees

describe('PDFium text runs on synthetic pages', () => {
  it.each([0, 90, 180, 270])(
    '/Rotate %i with an offset crop box: same runs as pdf.js, on the rendered glyphs',
    async (rotate) => {
      const { raster, text, ref } = await read(
        { widthPt: 612, heightPt: 792, rotate, cropBox: [40, 30, 580, 700], content: words },
        100,
      );
      const crop = rotate % 180 ? [670, 540] : [540, 670];
      expect([raster.width, raster.height]).toEqual(crop.map((v) => Math.round((v * 100) / 72)));
      expect(text.map((t) => t.text).sort()).toEqual(
        ['A-101 REV', 'C', 'SHEET TITLE', 'SLANT', 'UPWARD'].sort(),
      );
      expectSameRuns(text, ref);
      // Boxes on the glyphs (a slanted run's axis-aligned box is mostly paper).
      for (const t of text) {
        expect(darkFractionIn(raster, t), t.text).toBeGreaterThan(t.text === 'SLANT' ? 0.05 : 0.1);
      }
      const angles = Object.fromEntries(text.map((t) => [t.text, t.angle]));
      // Page rotation turns the text with it (clockwise on the sheet = counter-clockwise angle down).
      expect(angles['SHEET TITLE']).toBe((360 - rotate) % 360);
      expect(angles.UPWARD).toBe((450 - rotate) % 360);
      expect(angles.SLANT).toBeCloseTo((390 - rotate) % 360, 0);
    },
  );

  it('font size and advance follow the text matrix, not the Tf operand alone', async () => {
    const { text } = await read({ content: words }, 72);
    const title = text.find((t) => t.text === 'SHEET TITLE')!;
    expect(title.fontSize).toBeCloseTo(24, 3);
    // Helvetica advances (1/1000 em): S 667 H 722 E 667 E 667 T 611 space 278 T 611 I 278 T 611 L 556 E 667.
    const em = 667 + 722 + 667 + 667 + 611 + 278 + 611 + 278 + 611 + 556 + 667;
    expect(title.width).toBeCloseTo((em / 1000) * 24, 2);
    expect(title.x).toBeCloseTo(100, 3);
    expect(title.y).toBeCloseTo(792 - 600 - 0.8 * 24, 3);
  });

  it('glyphs off the page box are dropped, as pdf.js drops them', async () => {
    const { text, ref } = await read(
      { content: 'BT /F1 12 Tf 700 400 Td (OFFPAGE) Tj ET BT /F1 12 Tf 100 400 Td (ON) Tj ET' },
      72,
    );
    expect(text.map((t) => t.text)).toEqual(['ON']);
    expectSameRuns(text, ref);
  });

  it('frees every text page: the WASM heap stops growing after the first round', async () => {
    const lines = Array.from(
      { length: 1000 },
      (_, i) =>
        `BT /F1 2 Tf ${20 + (i % 10) * 58} ${20 + Math.floor(i / 10) * 7} Td (LINE ${i}) Tj ET`,
    );
    const pdf = buildPdf({ pages: 2, content: lines.join(' ') });
    const sizes: number[] = [];
    for (let round = 0; round < 16; round++) {
      const doc = await openDocument(pdf);
      expect((await doc.renderPageWithText(0, { dpi: 72 })).text).toHaveLength(1000);
      expect(await doc.pageText(1, 72)).toHaveLength(1000);
      await doc.close();
      sizes.push(await pdfiumHeapBytes());
    }
    expect(sizes.at(-1), sizes.join(' ')).toBe(sizes[1]);
  });

  it('a page without text gives no runs', async () => {
    const { text, ref } = await read({}, 72);
    expect(text).toEqual([]);
    expect(ref).toEqual([]);
  });
});

describe('RunBuilder (pdf.js grouping rules)', () => {
  const glyph = (text: string, x: number, over: Partial<Glyph> = {}): Glyph => ({
    text,
    x,
    y: 100,
    ux: 1,
    uy: 0,
    vx: 0,
    vy: -1,
    size: 10,
    advance: 5,
    font: 1,
    fontSize: 10,
    ...over,
  });
  const run = (build: (b: RunBuilder) => void) => {
    const b = new RunBuilder();
    build(b);
    return b.runs().map((t) => t.text);
  };

  it('joins tracking gaps, puts one space for 0.102-0.6 em and splits beyond', () => {
    expect(run((b) => ['A', 'B'].forEach((c, i) => b.add(glyph(c, i * 6))))).toEqual(['AB']); // 0.1 em
    expect(run((b) => ['A', 'B'].forEach((c, i) => b.add(glyph(c, i * 8))))).toEqual(['A B']); // 0.3 em
    expect(run((b) => ['A', 'B'].forEach((c, i) => b.add(glyph(c, i * 12))))).toEqual(['A', 'B']); // 0.7 em
    expect(run((b) => ['A', 'B'].forEach((c, i) => b.add(glyph(c, 50 - i * 10))))).toEqual([
      'A',
      'B',
    ]); // step back
  });

  it('a real space glyph becomes a space; one that leaves only 0.03-0.102 em splits the run', () => {
    expect(
      run((b) => {
        b.add(glyph('A', 0));
        b.space();
        b.add(glyph('B', 8)); // 0.3 em: the space's own advance
      }),
    ).toEqual(['A B']);
    expect(
      run((b) => {
        b.add(glyph('A', 0));
        b.space();
        b.add(glyph('B', 5.5)); // 0.05 em
      }),
    ).toEqual(['A', 'B']);
    expect(
      run((b) => {
        b.add(glyph('A', 0));
        b.space();
        b.add(glyph('B', 5.1)); // 0.01 em: not a space
      }),
    ).toEqual(['AB']);
  });

  it('splits on a new line, a baseline shift over 0.25 em, a font change or a turn', () => {
    expect(run((b) => [glyph('A', 0), glyph('B', 5, { y: 112 })].forEach((g) => b.add(g)))).toEqual(
      ['A', 'B'],
    );
    expect(run((b) => [glyph('A', 0), glyph('B', 5, { y: 103 })].forEach((g) => b.add(g)))).toEqual(
      ['A', 'B'],
    );
    expect(run((b) => [glyph('A', 0), glyph('B', 5, { y: 101 })].forEach((g) => b.add(g)))).toEqual(
      ['AB'],
    );
    expect(
      run((b) => [glyph('A', 0), glyph('B', 5, { font: 2 })].forEach((g) => b.add(g))),
    ).toEqual(['A', 'B']);
    expect(
      run((b) => [glyph('A', 0), glyph('B', 5, { fontSize: 12 })].forEach((g) => b.add(g))),
    ).toEqual(['A', 'B']);
    expect(
      run((b) =>
        [glyph('A', 0), glyph('B', 5, { ux: 0, uy: -1, vx: -1, vy: 0 })].forEach((g) => b.add(g)),
      ),
    ).toEqual(['A', 'B']);
  });

  it('normalises ligatures as pdf.js does and drops whitespace-only runs', () => {
    expect(run((b) => ['\ufb01', 'x'].forEach((c, i) => b.add(glyph(c, i * 5))))).toEqual(['fix']);
    expect(run((b) => b.add(glyph('\u00a0', 0)))).toEqual([]);
  });

  it('runBox spans 0.2 em below to 0.8 em above the baseline along the advance', () => {
    expect(runBox(10, 100, 1, 0, 0, -1, 50, 10)).toEqual({
      x: 10,
      y: 92,
      width: 50,
      height: 10,
      fontSize: 10,
      angle: 0,
    });
    const up = runBox(10, 100, 0, -1, 1, 0, 50, 10); // bottom to top: glyph tops towards +x
    expect(up.angle).toBe(90);
    expect([up.x, up.y, up.width, up.height]).toEqual([8, 50, 10, 50]);
  });
});
