import { describe, expect, it } from 'vitest';
import {
  backdropToDraw,
  levelForScale,
  pyramidFromTilesJson,
  ringAroundView,
  servicePyramid,
  tilesForView,
  tilesJsonUrl,
  type TileRef,
} from './tiles';

const pyramid = {
  url_template: '/t/{z}/{x}/{y}.webp?sig=1',
  tile_size: 256,
  max_level: 6,
  width: 10200,
  height: 6600,
};

describe('tiles', () => {
  it('picks full resolution at 100 % and halves per level below', () => {
    expect(levelForScale(1, pyramid)).toBe(6);
    expect(levelForScale(0.5, pyramid)).toBe(5);
    expect(levelForScale(0.3, pyramid)).toBe(5); // needs ≥ 0.3 → 0.5
    expect(levelForScale(0.25, pyramid)).toBe(4);
    expect(levelForScale(4, pyramid)).toBe(6);
    expect(levelForScale(0.0001, pyramid)).toBe(0);
    expect(levelForScale(0.5, pyramid, 2)).toBe(6);
  });

  it('covers exactly the visible part at full resolution', () => {
    // Viewport 512x256 at scale 1 showing image pixels [256, 768) x [0, 256).
    const tiles = tilesForView({ scale: 1, x: -256, y: 0 }, { width: 512, height: 256 }, pyramid);
    expect(tiles.map((t) => `${t.z}/${t.x}/${t.y}`)).toEqual(['6/1/0', '6/2/0']);
    expect(tiles[0]?.url).toBe('/t/6/1/0.webp?sig=1');
    expect(tiles[1]?.rect).toEqual({ x: 512, y: 0, width: 256, height: 256 });
  });

  it('clips edge tiles to the image and never asks for tiles outside it', () => {
    // Whole sheet at 1/64: level 0, one tile of 16384 image px covers it all.
    const tiles = tilesForView({ scale: 1 / 64, x: 0, y: 0 }, { width: 800, height: 600 }, pyramid);
    expect(tiles).toHaveLength(1);
    expect(tiles[0]?.rect).toEqual({ x: 0, y: 0, width: 10200, height: 6600 });
    const none = tilesForView({ scale: 1, x: 20000, y: 0 }, { width: 800, height: 600 }, pyramid);
    expect(none).toEqual([]);
  });
});

describe('servicePyramid', () => {
  it('derives the documented pyramid from a signed image URL', () => {
    const p = servicePyramid(
      'https://127.0.0.1:7420/v1/blobs/projects/p/sheet.png?expires=9&signature=abc&palette=colorblind',
      6800,
      4400,
    );
    expect(p).toEqual({
      url_template:
        'https://127.0.0.1:7420/v1/blobs/projects/p/sheet.png/tiles/{z}/{x}/{y}.webp?expires=9&signature=abc&palette=colorblind',
      tile_size: 512,
      max_level: 4, // 6800 / 512 = 13.3 → 2^4 = 16 ≥ 13.3
      min_level: 0,
      width: 6800,
      height: 4400,
    });
    // Level 0 holds the whole image in one tile.
    expect(
      tilesForView({ scale: 1 / 16, x: 0, y: 0 }, { width: 800, height: 600 }, p!, 1, 400, 0),
    ).toHaveLength(1);
  });

  it('keeps relative URLs relative and refuses images without a size', () => {
    expect(servicePyramid('/v1/blobs/a.png?s=1', 512, 300)?.url_template).toBe(
      '/v1/blobs/a.png/tiles/{z}/{x}/{y}.webp?s=1',
    );
    expect(servicePyramid('/v1/blobs/a.png?s=1', 512, 300)?.max_level).toBe(0);
    expect(servicePyramid('/v1/blobs/a.png', 0, 300)).toBeNull();
  });
});

describe('backdropToDraw', () => {
  const tile = (z: number, x: number, y: number, span: number): TileRef => ({
    z,
    x,
    y,
    url: `t/${z}/${x}/${y}`,
    rect: { x: x * span, y: y * span, width: span, height: span },
  });
  // One coarse tile (span 1024) under a 2x2 block of current tiles (span 512), plus a second
  // coarse tile to the right under current tiles (2,0) and (2,1).
  const backdrop = [tile(1, 0, 0, 1024), tile(1, 1, 0, 1024)];
  const current = [0, 1, 2].flatMap((x) => [0, 1].map((y) => tile(2, x, y, 512)));

  it('keeps every backdrop tile while nothing is ready', () => {
    expect(backdropToDraw(backdrop, current, () => false)).toEqual(backdrop);
  });

  it('drops a backdrop tile once every current tile over it is ready, and only that one', () => {
    const ready = (t: TileRef) => t.x < 2; // the left 2x2 block has arrived
    expect(backdropToDraw(backdrop, current, ready).map((t) => t.url)).toEqual(['t/1/1/0']);
  });

  it('draws no backdrop when the current level is complete', () => {
    expect(backdropToDraw(backdrop, current, () => true)).toEqual([]);
  });

  it('keeps the backdrop when the current list was capped (coverage unknown)', () => {
    expect(backdropToDraw(backdrop, current, () => true, false)).toEqual(backdrop);
  });

  it('does not count tiles that only touch an edge as overlapping', () => {
    const ready = (t: TileRef) => !(t.x === 2 && t.y === 0);
    // (2,0) starts at x=1024: it touches coarse tile (0,0) only along its right edge.
    expect(backdropToDraw(backdrop, current, ready).map((t) => t.url)).toEqual(['t/1/1/0']);
  });
});

describe('deep levels (tiles.json, contract §5)', () => {
  const uri = 'https://127.0.0.1:7420/v1/blobs/projects/p/sheet.png?expires=9&signature=abc';
  const json = { tile_size: 512, width: 6800, height: 4400, native_zoom: 4, max_zoom: 8 };

  it('finds tiles.json beside the image under the same query', () => {
    expect(tilesJsonUrl(uri)).toBe(
      'https://127.0.0.1:7420/v1/blobs/projects/p/sheet.png/tiles.json?expires=9&signature=abc',
    );
    expect(tilesJsonUrl('/v1/blobs/a.png?s=1')).toBe('/v1/blobs/a.png/tiles.json?s=1');
  });

  it('takes the levels of a vector page from tiles.json: native 4, deepest 8', () => {
    const p = pyramidFromTilesJson(uri, 6800, 4400, json)!;
    expect(p).toMatchObject({ native_level: 4, max_level: 8, tile_size: 512 });
    expect(levelForScale(1, p)).toBe(4); // 100 %: the stored image
    expect(levelForScale(8, p)).toBe(7); // 800 %
    expect(levelForScale(16, p)).toBe(8); // 1,600 %: the deepest
    expect(levelForScale(40, p)).toBe(8);
    expect(levelForScale(0.25, p)).toBe(2);
    // At 1,600 % a tile covers 32 image pixels: the view 1440 px wide at x 3200 shows 90 of them.
    const tiles = tilesForView(
      { scale: 16, x: -3200 * 16, y: -2000 * 16 },
      { width: 1440, height: 900 },
      p,
    );
    expect(tiles[0]).toMatchObject({ z: 8, x: 100, y: 62 });
    expect(tiles[0]!.rect).toEqual({ x: 3200, y: 1984, width: 32, height: 32 });
    expect(tiles[0]!.url).toBe(
      'https://127.0.0.1:7420/v1/blobs/projects/p/sheet.png/tiles/8/100/62.webp?expires=9&signature=abc',
    );
    expect(tiles).toHaveLength(3 * 3); // 1440/512 → 3 columns (+ partial), 900/512 → 2 rows (+ partial)
  });

  it('ignores a description of another image and scans that stop at native', () => {
    expect(pyramidFromTilesJson(uri, 6800, 4401, json)).toBeNull();
    expect(pyramidFromTilesJson(uri, 6800, 4400, { ...json, native_zoom: 3 })).toBeNull();
    const scan = pyramidFromTilesJson(uri, 6800, 4400, { ...json, max_zoom: 4 })!;
    expect(levelForScale(16, scan)).toBe(4);
  });

  it('prefetches the ring of tiles around the view, not the view itself', () => {
    const p = pyramidFromTilesJson(uri, 6800, 4400, json)!;
    const view = { scale: 16, x: -3200 * 16, y: -1984 * 16 }; // on tile edges
    const inside = tilesForView(view, { width: 1024, height: 1024 }, p, 1, 400, 8);
    const ring = ringAroundView(view, { width: 1024, height: 1024 }, p, 1, 8, 1, 100);
    expect(inside).toHaveLength(4);
    expect(ring).toHaveLength(16 - 4);
    expect(ring.some((r) => inside.some((t) => t.url === r.url))).toBe(false);
  });
});
