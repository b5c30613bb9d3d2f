// The combined render's list of inked words (diff.ts InkedWords) and renderAddDelIndexed visiting only
// those: the same bytes as the full pass, whichever order finishStage is asked for the images in.
import { describe, expect, it } from 'vitest';
import { compareToPng } from './compare-pipeline.adapter';
import { diffImages, renderAddDelIndexed, renderOverlayIndexed } from './diff';
import { blankImage, cloneImage, drawLine, fillRect, rng, speckledImage } from './test-support';

describe('inked words of the combined overlay', () => {
  it('lists the words with line work, and the 2-bit images from them are the full pass’s bytes', () => {
    const r = rng(41);
    for (const [W, H, p] of [
      [37, 9, 0.02],
      [64, 12, 0.3],
      [133, 20, 0.05],
    ] as const) {
      const d = diffImages(speckledImage(r, W, H, p, 250), speckledImage(r, W, H, p, 250));
      const inked = { words: new Uint32Array(d.stride * d.height), n: 0 };
      renderOverlayIndexed(d, 'combined', undefined, inked);
      const want: number[] = [];
      const tail = W & 31 ? 2 ** (W & 31) - 1 : 0xffffffff;
      for (let i = 0; i < d.stride * d.height; i++) {
        const mask = i % d.stride === d.stride - 1 ? tail : 0xffffffff;
        if (((d.weakA[i]! | d.weakB[i]!) & mask) !== 0) want.push(i);
      }
      expect(want.length).toBeGreaterThan(3);
      expect([...inked.words.subarray(0, inked.n)]).toEqual(want);
      const full = renderAddDelIndexed(d);
      const listed = renderAddDelIndexed(d, undefined, undefined, inked);
      for (const k of ['additions', 'deletions'] as const)
        expect(Buffer.from(listed[k].data).equals(Buffer.from(full[k].data)), k).toBe(true);
    }
    const d = diffImages(blankImage(40, 4), blankImage(40, 4));
    expect(() =>
      renderOverlayIndexed(d, 'additions', undefined, { words: new Uint32Array(8), n: 0 }),
    ).toThrow(/'combined'/);
    expect(() =>
      renderOverlayIndexed(d, 'combined', undefined, { words: new Uint32Array(7), n: 0 }),
    ).toThrow(/room for 8/);
  });

  it('finishStage gives the same PNGs with the 2-bit images asked before or after the combined one', async () => {
    const a = blankImage(203, 90);
    drawLine(a, 10, 20, 190, 20, 2, 0);
    drawLine(a, 10, 50, 150, 50, 2, 0);
    fillRect(a, 120, 60, 60, 25, 200);
    const b = cloneImage(a);
    fillRect(b, 8, 48, 150, 5, 255);
    drawLine(b, 30, 75, 200, 75, 2, 0);
    const opts = { skipRegistration: true } as const;
    const first = await compareToPng(a, b, {
      ...opts,
      images: ['combined', 'additions', 'deletions'],
    });
    const last = await compareToPng(a, b, {
      ...opts,
      images: ['additions', 'deletions', 'combined'],
    });
    for (const k of ['combined', 'additions', 'deletions'] as const) {
      expect(first.pngs[k]!.length).toBeGreaterThan(0);
      expect(Buffer.compare(first.pngs[k]!, last.pngs[k]!), k).toBe(0);
    }
  });
});
