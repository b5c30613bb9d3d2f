import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { openInput, type InputDocument } from '../vision/input/document';
import type { GreyImage } from '../vision/types';
import { compareToPng } from '../vision/compare/compare-pipeline.adapter';
import { fixture } from '../vision/compare/test-support';
import { changeRegions } from './compare-tasks';
import { categorize } from './handlers/analyze.job';

// Change detection as the analyze job runs it (the worker task compare.regions, then categorize) on
// barber A102, 20130724 against 20130718: the old issue's background tones and shadows are `fill`
// changes (issue 17), and no change region is a sheet-sized slab.

const docs: InputDocument[] = [];
async function page(file: string, index: number): Promise<GreyImage> {
  const doc = await openInput(
    new Uint8Array(readFileSync(fixture(file))),
    'application/pdf',
    {} as never,
  );
  docs.push(doc);
  return doc.renderPage(index, { dpi: 200 });
}
afterAll(async () => {
  for (const d of docs) await d.close();
});

const png = async (img: GreyImage) =>
  new Uint8Array(
    await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 1 } })
      .png({ compressionLevel: 1 })
      .toBuffer(),
  );

describe('change detection with layers (barber A102)', () => {
  it('reports the old tones as fill changes, apart from the line work, none over 10 % of the sheet', async () => {
    const A = await page('20130718_barber-house_set_9-sheets.pdf', 0);
    const B = await page('20130724_barber-house_set_9-sheets.pdf', 0);
    const reg = await compareToPng(A, B, { images: [] });
    const whole = { x: 0, y: 0, width: A.width, height: A.height };
    const out = await changeRegions({
      a: { path: '', png: await png(A) },
      b: { path: '', png: await png(B) },
      aBox: whole,
      sheetTransform: [...reg.transform],
      alignmentConfidence: reg.alignment.confidence,
    });
    const cats = out.regions.map((g) => ({ g, c: categorize(g, g.bbox, [], null, null) }));
    const fill = cats.filter((x) => x.c === 'fill');
    expect(fill.length).toBeGreaterThan(0);
    const removed = (xs: typeof cats) => xs.reduce((s, x) => s + x.g.removed_px, 0);
    expect(removed(fill)).toBeGreaterThan(10 * removed(cats.filter((x) => x.c !== 'fill')));
    for (const { g } of cats)
      expect((g.bbox.width * g.bbox.height) / (A.width * A.height)).toBeLessThanOrEqual(0.1);
  }, 600_000);
});
