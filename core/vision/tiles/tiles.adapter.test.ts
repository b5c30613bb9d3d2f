import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { diffImages, overlayPalette, renderOverlayIndexed } from '../compare/diff';
import { encodeIndexedPngs } from '../compare/encode.adapter';
import { blankImage, fillRect } from '../compare/test-support';
import { decodeForTiles, renderTile, tileGeometry, TILE_SIZE } from './tiles.adapter';

// Overlays are 4-bit palette PNGs: their tiles must show the palette's colours like any RGB image.

describe('tiles of an indexed overlay PNG', () => {
  it('decodes to RGB and renders full-resolution and reduced tiles in the overlay colours', async () => {
    const W = 1100,
      H = 700;
    const a: GreyImage = blankImage(W, H);
    const b: GreyImage = blankImage(W, H);
    fillRect(a, 100, 100, 200, 200, 0); // removed (red)
    fillRect(b, 700, 300, 300, 300, 0); // added (green)
    fillRect(a, 400, 500, 100, 100, 0); // unchanged (grey)
    fillRect(b, 400, 500, 100, 100, 0);
    const [png] = await encodeIndexedPngs(renderOverlayIndexed(diffImages(a, b)), [
      overlayPalette('standard'),
    ]);
    const img = await decodeForTiles(png!);
    expect([img.width, img.height, img.channels]).toEqual([W, H, 3]);
    const g = tileGeometry(W, H);
    expect(g.maxZoom).toBe(2);
    const px = async (webp: Buffer, x: number, y: number): Promise<number[]> => {
      const { data, info } = await sharp(webp).raw().toBuffer({ resolveWithObject: true });
      const o = (y * info.width + x) * info.channels;
      return [data[o]!, data[o + 1]!, data[o + 2]!];
    };
    const near = (got: number[], want: number[]) =>
      expect(Math.max(...got.map((v, i) => Math.abs(v - want[i]!)))).toBeLessThanOrEqual(8);
    // Full resolution: tile (0, 0) holds the red square, tile (1, 0) the green one's top left.
    const t00 = await renderTile(img, 2, 0, 0);
    near(await px(t00, 200, 200), [225, 20, 20]);
    near(await px(t00, 450, 510), [70, 70, 70]);
    near(await px(t00, 10, 10), [255, 255, 255]);
    const t10 = await renderTile(img, 2, 1, 0);
    near(await px(t10, 700 + 150 - TILE_SIZE, 450), [0, 170, 0]);
    // Level 0: the whole overlay in one tile, at a quarter of its size.
    const t0 = await renderTile(img, 0, 0, 0);
    const meta = await sharp(t0).metadata();
    expect([meta.width, meta.height]).toEqual([275, 175]);
    near(await px(t0, 50, 50), [225, 20, 20]);
    near(await px(t0, 212, 112), [0, 170, 0]);
  });
});
