import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { openDocument } from './pdf.adapter';

// The text of PDF markup annotations (readMarkups in pdfium.adapter.ts): the beam proposal of
// 2019-06-02 has Bluebeam FreeText callouts on S101 (page 1), "GLULAM COLUMN" among them, which the
// 06-01 issue lacks. They come with the page's text, flagged `markup`, boxed by the annotation's
// /Rect in sheet pixels; links (the sheet's many /Link annotations) are not markups.

const FIXTURES = fileURLToPath(new URL('../../../fixtures/drawings/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(FIXTURES + name));

describe('markup annotations', () => {
  it('reads FreeText callouts as flagged items boxed on the sheet', async () => {
    const doc = await openDocument(fixture('20190602_beam-proposal_5-sheets.pdf'));
    try {
      const { raster, text } = await doc.renderPageWithText(0, { dpi: 50 });
      const markups = text.filter((t) => t.markup);
      const texts = markups.map((t) => t.text);
      expect(texts).toContain('GLULAM COLUMN');
      expect(texts).toContain('OPTION 2 WOULD INCLUDE A COLUMN HERE');
      // UTF-16 contents (a BOM and a carriage return) read as plain words.
      expect(texts.some((s) => s.startsWith('BEAM SIZE? CAN SOME TYPE OF W10 WORK HERE?'))).toBe(
        true,
      );
      for (const m of markups) {
        expect(m.x).toBeGreaterThanOrEqual(0);
        expect(m.y).toBeGreaterThanOrEqual(0);
        expect(m.x + m.width).toBeLessThanOrEqual(raster.width);
        expect(m.y + m.height).toBeLessThanOrEqual(raster.height);
        expect(m.width * m.height).toBeLessThan((raster.width * raster.height) / 20);
      }
      // The drawing's own text is still there, unflagged.
      expect(text.filter((t) => !t.markup).length).toBeGreaterThan(100);
    } finally {
      await doc.close();
    }
    const older = await openDocument(fixture('20190601_beam-proposal_5-sheets.pdf'));
    try {
      const { text } = await older.renderPageWithText(0, { dpi: 50 });
      expect(text.filter((t) => t.markup).map((t) => t.text)).not.toContain('GLULAM COLUMN');
    } finally {
      await older.close();
    }
  });
});
