import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { openInput } from '../input/document';
import { diffStage } from '../compare/compare-pipeline.adapter';
import { renderOverlay } from '../compare/diff';
import { renderOverlayTile, type PageSource } from './deep-tiles';
import { TILE_SIZE } from './tiles.adapter';
import { beamPageSource } from './beam-pair.test-support';

// Issue 19: an overlay's deep tile across filled areas draws its classes (fill, line work, added,
// unchanged) where the renders at the level's scale put their edges, not in the 16-px blocks of the
// 200-dpi overlay enlarged. Before, the tile service passed the stored overlay under the tile
// (`stored`) and each deep pixel took its class from it; the test passes it the same way (today's
// tiles ignore it), so it fails on that code (68–78 % of the boundaries on the grid). The beam proposal pair (fixtures/drawings, 20190601 → 20190602, vector
// PDFs): on S101 (page 0) the new column is drawn at x 3851–3879, y 2554–2590 (200 dpi) over a
// beam filled green (an area fill, the overlay's fill tone) between beams filled blue. The two
// issues share their page frame: the pair's transform is the identity.

const A = beamPageSource('20190601');
const B = beamPageSource('20190602');
const SCALE = 16;
const N = TILE_SIZE / SCALE; // 32 stored pixels a tile side

/**
 * The stored (200-dpi) combined overlay under tile (tx, ty), as the compare makes it: the
 * pipeline's stage on both pages' renders at 200 dpi with their line work, in a window around the
 * tile (the fill split needs the areas around it).
 */
async function storedUnder(tx: number, ty: number) {
  const margin = 160;
  const win = { left: tx * N - margin, top: ty * N - margin, size: N + 2 * margin };
  const render = async (s: PageSource) => {
    const doc = await openInput(new Uint8Array(readFileSync(s.path)), s.contentType, {
      maxPixels: s.maxPixels,
    });
    try {
      return await doc.renderRegion!(0, {
        dpi: 200,
        scale: 1,
        left: win.left,
        top: win.top,
        width: win.size,
        height: win.size,
        colour: 'grey',
        lineWork: true,
      });
    } finally {
      await doc.close();
    }
  };
  const [ra, rb] = await Promise.all([render(A), render(B)]);
  const lw = (r: typeof ra) => r.lineWork && { width: r.width, height: r.height, data: r.lineWork };
  const st = await diffStage(ra, rb, {
    skipRegistration: true,
    lineWork: { a: lw(ra), b: lw(rb) },
  });
  const ov = renderOverlay(st.diff, 'combined', 'standard');
  const data = new Uint8Array(N * N * 3);
  for (let y = 0; y < N; y++) {
    const from = ((margin + y) * win.size + margin) * 3;
    data.set(ov.data.subarray(from, from + N * 3), y * N * 3);
  }
  return { left: tx * N, top: ty * N, width: N, height: N, channels: 3, data };
}

async function deepTile(tx: number, ty: number) {
  const webp = await renderOverlayTile({
    a: A,
    b: B,
    scale: SCALE,
    aOrigin: { x: 0, y: 0 },
    bOrigin: { x: 0, y: 0 },
    transform: [1, 0, 0, 0, 1, 0],
    tile: { left: tx * TILE_SIZE, top: ty * TILE_SIZE, width: TILE_SIZE, height: TILE_SIZE },
    kind: 'combined',
    // What the tile service passed before this change (see the top).
    ...{ stored: await storedUnder(tx, ty) },
  });
  const { data, info } = await sharp(webp)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

/**
 * Class boundaries of a tile: neighbouring pixels (across and down) of clearly different colours
 * (WebP's near-lossless coding moves a colour by a few levels), and how many of them lie on the
 * 16-px grid of the enlarged 200-dpi image (between pixels 16k − 1 and 16k).
 */
function boundaries(img: { data: Buffer; width: number; height: number }) {
  const { data, width, height } = img;
  const differ = (i: number, j: number) =>
    Math.abs(data[i]! - data[j]!) +
      Math.abs(data[i + 1]! - data[j + 1]!) +
      Math.abs(data[i + 2]! - data[j + 2]!) >
    24;
  let all = 0,
    grid = 0;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      if (x + 1 < width && differ(i, i + 3)) {
        all++;
        if ((x + 1) % SCALE === 0) grid++;
      }
      if (y + 1 < height && differ(i, i + width * 3)) {
        all++;
        if ((y + 1) % SCALE === 0) grid++;
      }
    }
  return { all, grid, share: grid / Math.max(1, all) };
}

describe('deep overlay tiles: an area that is ink at 200 dpi is not cut on the sheet-pixel grid', () => {
  it('tile 120/78 at 1,600 %: the blue beam (ink at 200 dpi) is ink whole, no fill rectangle inside it', async () => {
    // The blue beam ending on the green one: a band at y 80–208, x 0–240 of the tile, 8 sheet pixels
    // wide — ink in the 200-dpi overlay but for a corner of 8x8 cells where the fill split took it.
    // Before, the 200-dpi fill's edge (dilated by a sheet pixel) cut the band per sheet pixel: a light
    // fill rectangle at x 112–240, y 91–112 whose bottom and left sides lay on the 16-px grid (235 of
    // the tile's 608 boundary pixels on the grid).
    const { data, width } = await deepTile(120, 78);
    let fill = 0;
    for (let y = 84; y < 204; y++)
      for (let x = 0; x < 236; x++) {
        const i = (y * width + x) * 3;
        if (data[i]! > 200 && data[i]! < 240 && data[i] === data[i + 1] && data[i] === data[i + 2])
          fill++;
      }
    expect(fill).toBeLessThan(100);
  });
});

describe('deep overlay tiles split fills from line work at their own scale', () => {
  // Tiles of level native + 4 (1,600 %): the column over the green beam (120, 80), the green beam
  // with a blue beam ending on it (120, 78), and the column's right side with the beams right of it
  // (121, 81). One 200-dpi pixel is 16 px there; a boundary drawn by the renders falls on the
  // 16-px grid about once in 16 (more where edges are horizontal or vertical lines of the PDF that
  // happen to lie on it); the 200-dpi classes enlarged put nearly every boundary on it.
  for (const [tx, ty] of [
    [120, 80],
    [120, 78],
    [121, 81],
  ] as const) {
    it(`tile ${tx}/${ty} at 1,600 %: class boundaries follow the renders, not the 16-px grid`, async () => {
      const b = boundaries(await deepTile(tx, ty));
      console.info(
        `tile ${tx}/${ty}: ${b.all} boundary pixels, ${b.grid} on the 16-px grid (${(100 * b.share).toFixed(1)} %)`,
      );
      expect(b.all).toBeGreaterThan(200);
      expect(b.share).toBeLessThan(0.3);
    });
  }
});
