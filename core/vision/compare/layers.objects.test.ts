import { describe, expect, it } from 'vitest';
import { openDocument } from '../input/pdf.adapter';
import { buildPdf } from '../input/synthetic-inputs';
import type { PageRaster } from '../types';
import { compareToPng } from './compare-pipeline.adapter';
import { objectClassGrey } from './layers';

// Fills by object on vector pages (issue 17, item 1), end to end: two PDF issues rendered by PDFium
// with their object classes (as processing stores them), compared. At 100 dpi a point is 100/72 px;
// raster y = (792 − PDF y) · 100/72.

const DPI = 100;
const px = (pt: number) => Math.round((pt * DPI) / 72);

async function render(content: string): Promise<PageRaster> {
  const doc = await openDocument(buildPdf({ content }));
  try {
    return (await doc.renderPageWithText(0, { dpi: DPI })).raster;
  } finally {
    await doc.close();
  }
}
const classesOf = (r: PageRaster) =>
  objectClassGrey(r.width, r.height, r.lineWork!, r.fillWork, r.annotWork);

// A room plan: walls (stroked), a floor tone (a light grey area fill, 200 x 150 pt: under a tenth of
// the sheet, one change) under a dimension line and its text, and a band of tone 20 pt tall below.
const walls = '0 G 2 w 100 400 200 150 re S';
const tone = '0.8 g 100 400 200 150 re f 0.7 g 100 360 200 20 re f';
const dims = '0 G 0.5 w 120 450 m 280 450 l S 0 g BT /F1 9 Tf 180 454 Td (12\'-6") Tj ET';

describe('fills by object on vector pages', () => {
  it('a removed tone is a fill change apart from the line work; the lines over it are unchanged; a line added over it is its own change', async () => {
    const A = await render(`${tone} ${walls} ${dims}`);
    // The new issue: no tone, the same walls and dimension, a new wall across the room.
    const B = await render(`${walls} ${dims} 0 G 2 w 250 400 m 250 550 l S`);
    expect(A.fillWork).toBeDefined();
    expect(B.fillWork).toBeUndefined();
    const r = await compareToPng(A, B, {
      images: ['combined'],
      lineWork: { a: classesOf(A), b: classesOf(B) },
    });
    const fills = r.regions.filter((g) => g.layer === 'fill');
    const lines = r.regions.filter((g) => g.layer !== 'fill');
    expect(fills.length).toBeGreaterThan(0);
    for (const f of fills) expect(f.kind).toBe('removed');
    // The fill changes cover the tone (both areas), and the thin band too.
    const fillPx = fills.reduce((n, g) => n + g.removed_px, 0);
    expect(fillPx).toBeGreaterThan(0.9 * (px(200) * px(150) + px(200) * px(20)));
    const band = fills.filter(
      (g) => g.bbox.y < px(792 - 360) && g.bbox.y + g.bbox.height > px(792 - 380),
    );
    expect(band.length, JSON.stringify(fills)).toBeGreaterThan(0);
    // The only line-work change is the new wall: a thin vertical region at x = 250 pt, added.
    expect(lines, JSON.stringify(r.regions)).toHaveLength(1);
    const wall = lines[0]!;
    expect(wall.kind).toBe('added');
    expect(wall.bbox.width).toBeLessThan(px(10));
    expect(Math.abs(wall.bbox.x + wall.bbox.width / 2 - px(250))).toBeLessThan(px(3));
    expect(wall.removed_px).toBe(0);
    // The dimension line and its text over the tone are not changed: no line-work pixel went.
    expect(r.stats.removed_px).toBe(0);
  });

  it('a tone changed in place (lighter) under unchanged line work changes no line work', async () => {
    const A = await render(`${tone} ${walls} ${dims}`);
    const B = await render(`0.55 g 100 400 200 150 re f ${walls} ${dims}`);
    const r = await compareToPng(A, B, {
      images: [],
      lineWork: { a: classesOf(A), b: classesOf(B) },
    });
    expect(r.stats.removed_px + r.stats.added_px).toBe(0);
    // Only the band (gone in B) is a fill change; the room's tone is a fill in both.
    for (const g of r.regions) expect(g.layer).toBe('fill');
    expect(r.regions.length).toBeGreaterThan(0);
  });
});
