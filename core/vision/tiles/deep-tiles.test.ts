import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { renderOverlayTile, renderPageTile, pageKindOf, type PageSource } from './deep-tiles';
import { TILE_SIZE } from './tiles.adapter';

// Deep tiles are drawn from the PDF at the level's scale: a line comes out as wide as the PDF says
// times the scale, where the 200-DPI image enlarged would show each of its pixels as a 16x16 block.
//
// The civil plan-profile sheet (fixtures/generated, uncompressed content) draws its profile grid
// with `0.25 w 144 657 m 2052 657 l S`: a 0.25 pt line at y = 657 pt on a 2448 x 1584 pt page, so
// at 200 dpi it lies at raster row (1584 − 657) · 200 / 72 = 2575 and is 0.694 px wide. At 1,600 %
// (level native + 4, 3,200 dpi) it is 0.25 · 3200 / 72 = 11.11 px wide, at row 41,200.

const FILE = path.resolve(
  import.meta.dirname,
  '../../../fixtures/generated/civil_plan-profile_C-301.pdf',
);
const bytes = readFileSync(FILE);
const source = (index = 0): PageSource => ({
  path: FILE,
  bytesKey: createHash('sha256').update(bytes).digest('hex'),
  contentType: 'application/pdf',
  index,
  dpi: 200,
  maxPixels: 300_000_000,
});
const SCALE = 16;
const LINE_PT = 0.25;
const WIDTH_AT_SCALE = (LINE_PT * 200 * SCALE) / 72; // 11.11 px
const LINE_ROW = ((1584 - 657) * 200) / 72; // 2575, at 200 dpi
/** The tile holding the line at 16x: column 100 (x 51,200.. at 16x, 3,200 px at 200 dpi). */
const TX = 100;
const TY = Math.floor((LINE_ROW * SCALE) / TILE_SIZE); // 80: rows 40,960..41,471

async function rgb(webp: Uint8Array) {
  const { data, info } = await sharp(webp)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

describe('deep tiles rendered from the PDF', () => {
  it('a 1,600 % tile draws a 0.25 pt line 11 px wide (PDF width x scale), not as 16-px blocks', async () => {
    expect(await pageKindOf(source())).toBe('vector');
    const tile = await renderPageTile(source(), {
      scale: SCALE,
      left: TX * TILE_SIZE,
      top: TY * TILE_SIZE,
      width: TILE_SIZE,
      height: TILE_SIZE,
    });
    const img = await rgb(tile);
    expect([img.width, img.height, img.channels]).toEqual([TILE_SIZE, TILE_SIZE, 3]);
    // Per column: the line's ink (coverage: 1 for black, 0 for paper) summed over the rows, and
    // its extent (rows with any visible ink).
    const widths: number[] = [];
    const extents: number[] = [];
    for (let x = 0; x < TILE_SIZE; x += 7) {
      let ink = 0;
      let rows = 0;
      for (let y = 0; y < TILE_SIZE; y++) {
        const v = img.data[(y * TILE_SIZE + x) * 3]!;
        ink += (255 - v) / 255;
        if (v < 230) rows++;
      }
      widths.push(ink);
      extents.push(rows);
    }
    const width = median(widths);
    expect(Math.abs(width - WIDTH_AT_SCALE)).toBeLessThanOrEqual(1);
    expect(median(extents)).toBeLessThanOrEqual(Math.ceil(WIDTH_AT_SCALE) + 2);
    // Where the line is: row 41,200 of the level, row 240 of this tile.
    const centre = LINE_ROW * SCALE - TY * TILE_SIZE;
    expect(img.data[(centre * TILE_SIZE + 256) * 3]!).toBeLessThan(64);

    // The 200-dpi image of the same place (the stored sheet's pixels), enlarged 16x: every pixel
    // the line touches becomes a 16-px block, so the line is at least 16 px thick, and blocky.
    const native = await renderPageTile(source(), {
      scale: 1,
      left: (TX * TILE_SIZE) / SCALE,
      top: (TY * TILE_SIZE) / SCALE,
      width: TILE_SIZE / SCALE,
      height: TILE_SIZE / SCALE,
    });
    const small = await rgb(native);
    let touched = 0;
    for (let y = 0; y < small.height; y++)
      if (small.data[(y * small.width + 16) * 3]! < 230) touched++;
    const enlarged = touched * SCALE;
    expect(enlarged).toBeGreaterThanOrEqual(16);
    expect(enlarged).toBeGreaterThan(median(extents) + 3);
    console.info(
      `0.25 pt line at 1,600 %: ${width.toFixed(2)} px of ink (PDF width x scale = ${WIDTH_AT_SCALE.toFixed(2)}), ` +
        `${median(extents)} rows with ink; the 200-dpi image enlarged: ${enlarged} rows`,
    );
  });

  it('a 1,600 % overlay tile composes both revisions at that scale: each line 11 px wide, in the overlay colours', async () => {
    // A against itself with B moved down 3 px (at 200 dpi) by the pair's transform: the line shows
    // as removed (red, where A has it) and added (green, 48 px lower at 16x), each as wide as the
    // PDF says times the scale.
    const webp = await renderOverlayTile({
      a: source(),
      b: source(),
      scale: SCALE,
      aOrigin: { x: 0, y: 0 },
      bOrigin: { x: 0, y: 0 },
      transform: [1, 0, 0, 0, 1, 3],
      tile: { left: TX * TILE_SIZE, top: TY * TILE_SIZE, width: TILE_SIZE, height: TILE_SIZE },
      kind: 'combined',
    });
    const img = await rgb(webp);
    expect([img.width, img.height]).toEqual([TILE_SIZE, TILE_SIZE]);
    const near = (o: number, c: [number, number, number]) =>
      Math.abs(img.data[o]! - c[0]) +
        Math.abs(img.data[o + 1]! - c[1]) +
        Math.abs(img.data[o + 2]! - c[2]) <
      60;
    const red: number[] = [];
    const green: number[] = [];
    const redTop: number[] = [];
    const greenTop: number[] = [];
    for (let x = 0; x < TILE_SIZE; x += 7) {
      let r = 0,
        g = 0,
        rt = -1,
        gt = -1;
      for (let y = 0; y < TILE_SIZE; y++) {
        const o = (y * TILE_SIZE + x) * 3;
        if (near(o, [225, 20, 20])) {
          r++;
          if (rt < 0) rt = y;
        }
        if (near(o, [0, 170, 0])) {
          g++;
          if (gt < 0) gt = y;
        }
      }
      red.push(r);
      green.push(g);
      redTop.push(rt);
      greenTop.push(gt);
    }
    // The masks keep ink darker than the ink threshold (160 of 255): the line's fully and mostly
    // covered rows, i.e. its width to within a pixel.
    expect(Math.abs(median(red) - WIDTH_AT_SCALE)).toBeLessThanOrEqual(1);
    expect(Math.abs(median(green) - WIDTH_AT_SCALE)).toBeLessThanOrEqual(1);
    expect(median(greenTop) - median(redTop)).toBe(3 * SCALE);
    // New mode's image (aligned B) at the same tile: B in colour, through the same transform, so
    // its line is where the added one is and as wide.
    const aligned = await rgb(
      await renderOverlayTile({
        a: source(),
        b: source(),
        scale: SCALE,
        aOrigin: { x: 0, y: 0 },
        bOrigin: { x: 0, y: 0 },
        transform: [1, 0, 0, 0, 1, 3],
        tile: { left: TX * TILE_SIZE, top: TY * TILE_SIZE, width: TILE_SIZE, height: TILE_SIZE },
        kind: 'aligned_b',
      }),
    );
    expect(aligned.channels).toBe(3);
    const column = Array.from(
      { length: TILE_SIZE },
      (_, y) => aligned.data[(y * TILE_SIZE + 256) * 3]!,
    );
    const firstInk = column.findIndex((v) => v < 128);
    expect(Math.abs(firstInk - median(greenTop))).toBeLessThanOrEqual(1);
    expect(Math.abs(column.filter((v) => v < 128).length - WIDTH_AT_SCALE)).toBeLessThanOrEqual(1);
    console.info(
      `overlay at 1,600 %: removed line ${median(red)} px, added line ${median(green)} px (PDF width x scale = ${WIDTH_AT_SCALE.toFixed(2)}), ${median(greenTop) - median(redTop)} px apart`,
    );
  });
});
