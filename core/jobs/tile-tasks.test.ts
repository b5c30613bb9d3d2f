import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { beamPageSource } from '../vision/tiles/beam-pair.test-support';
import { TILE_SIZE } from '../vision/tiles/tiles.adapter';
import { poolTileRenderer } from './tile-tasks';
import { createWorkerPool } from './worker-pool';

// Deep overlay tiles on the real pool (worker-tasks.ts 'tiles.overlay'): a render of several cells
// (tiles.service.ts groupsOf) hands each cell's tiles over as soon as they are made (taskProgress),
// and its answer still gives every tile, in order.

const pool = createWorkerPool({ size: 1 });
afterAll(() => pool.close());

describe('poolTileRenderer', () => {
  it('a render of two cells hands the first cell on before it ends, and answers every tile', async () => {
    const renderer = poolTileRenderer(pool);
    expect(renderer.workers).toBe(1);
    // 1,600 %, around S101's new column: a cell of 1 tile, then one of 2 (x 119 | 120–121, y 80).
    const tile = (x: number) => ({
      left: x * TILE_SIZE,
      top: 80 * TILE_SIZE,
      width: TILE_SIZE,
      height: TILE_SIZE,
    });
    const early: [number, Uint8Array[]][] = [];
    const tiles = await renderer.overlay(
      {
        a: beamPageSource('20190601'),
        b: beamPageSource('20190602'),
        scale: 16,
        aOrigin: { x: 0, y: 0 },
        bOrigin: { x: 0, y: 0 },
        transform: [1, 0, 0, 0, 1, 0],
        tiles: [tile(119), tile(120), tile(121)],
        cells: [1, 2],
        kind: 'combined',
      },
      undefined,
      undefined,
      (first, webps) => early.push([first, webps]),
    );
    expect(early.map(([first, w]) => [first, w.length])).toEqual([
      [0, 1],
      [1, 2],
    ]);
    expect(tiles).toHaveLength(3);
    for (const [first, w] of early) w.forEach((t, j) => expect(tiles[first + j]).toBe(t));
    for (const t of tiles) {
      const meta = await sharp(t).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', TILE_SIZE, TILE_SIZE]);
    }
  });
});
