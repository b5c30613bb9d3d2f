import { describe, expect, it } from 'vitest';
import { compareToPng, diffStage } from './compare-pipeline.adapter';
import { overlayPalette, renderAddDelIndexed, renderOverlayIndexed } from './diff';
import { encodeIndexedPngs } from './encode.adapter';
import { blankImage, cloneImage, drawLine, fillRect, strokeRect } from './test-support';

/**
 * A pair with every kind of pixel the 2-bit images draw: strong and faint line work, removed and
 * added lines, a line drawn lighter in B (a style change), a tone (fill) under lines that goes away,
 * and a width that is not a whole number of mask words (the last word's padding bits).
 */
function pair() {
  const a = blankImage(333, 150);
  strokeRect(a, 10, 10, 300, 120, 3);
  drawLine(a, 20, 40, 300, 40, 2, 0); // kept
  drawLine(a, 20, 60, 200, 60, 2, 0); // removed
  drawLine(a, 20, 80, 300, 80, 2, 0); // drawn lighter in B
  drawLine(a, 40, 100, 320, 100, 1, 190); // faint ink
  fillRect(a, 220, 20, 90, 70, 200); // a tone, gone in B
  drawLine(a, 230, 30, 300, 30, 2, 0); // over the tone
  const b = cloneImage(a);
  fillRect(b, 18, 58, 190, 5, 255);
  fillRect(b, 220, 20, 90, 70, 255);
  drawLine(b, 230, 30, 300, 30, 2, 0);
  drawLine(b, 20, 80, 300, 80, 2, 150);
  drawLine(b, 60, 115, 330, 115, 2, 0); // added, to the last column
  drawLine(b, 120, 20, 120, 95, 3, 0); // added
  return { a, b };
}

describe('renderAddDelIndexed', () => {
  it('gives the bytes of the additions and deletions images rendered one at a time', async () => {
    const { a, b } = pair();
    const st = await diffStage(a, b, { skipRegistration: true });
    const d = st.diff;
    // The pair exercises what the two images draw.
    expect(d.stats.added_px).toBeGreaterThan(0);
    expect(d.stats.removed_px).toBeGreaterThan(0);
    expect(d.style).toBeDefined();
    const pair2 = renderAddDelIndexed(d);
    for (const kind of ['additions', 'deletions'] as const) {
      const one = renderOverlayIndexed(d, kind);
      const got = pair2[kind];
      expect([got.width, got.height, got.bitDepth, got.rowBytes]).toEqual([
        one.width,
        one.height,
        one.bitDepth,
        one.rowBytes,
      ]);
      expect(Buffer.from(got.data).equals(Buffer.from(one.data)), kind).toBe(true);
      expect(one.data.some((v) => v !== 0)).toBe(true);
    }
    // Into given (zeroed) arrays, longer than needed.
    const n = pair2.additions.data.length;
    const outs = [new Uint8Array(n + 9), new Uint8Array(n + 9)] as const;
    const into = renderAddDelIndexed(d, outs[0], outs[1]);
    expect(Buffer.from(into.additions.data).equals(Buffer.from(pair2.additions.data))).toBe(true);
    expect(Buffer.from(into.deletions.data).equals(Buffer.from(pair2.deletions.data))).toBe(true);
    expect(() => renderAddDelIndexed(d, new Uint8Array(n - 1))).toThrow(/at least/);
  });

  it('the pipeline writes the same additions and deletions PNGs as one render each', async () => {
    const { a, b } = pair();
    const r = await compareToPng(a, b, {
      skipRegistration: true,
      images: ['combined', 'additions', 'deletions'],
    });
    for (const kind of ['additions', 'deletions'] as const) {
      const [want] = await encodeIndexedPngs(
        renderOverlayIndexed(r.diff, kind),
        [overlayPalette('standard', kind)],
        { compressionLevel: 1 },
      );
      expect(Buffer.compare(r.pngs[kind]!, want!), kind).toBe(0);
    }
  });
});
