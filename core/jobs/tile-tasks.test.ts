import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { beamPageSource } from '../vision/tiles/beam-pair.test-support';
import { TILE_SIZE } from '../vision/tiles/tiles.adapter';
import { cutOverlayArgs, poolTileRenderer } from './tile-tasks';
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

  it('a render whose tiles were cancelled while it waited makes only those still wanted when it starts', async () => {
    const renderer = poolTileRenderer(pool);
    const tile = (x: number) => ({
      left: x * TILE_SIZE,
      top: 80 * TILE_SIZE,
      width: TILE_SIZE,
      height: TILE_SIZE,
    });
    const args = {
      a: beamPageSource('20190601'),
      b: beamPageSource('20190602'),
      scale: 16,
      aOrigin: { x: 0, y: 0 },
      bOrigin: { x: 0, y: 0 },
      transform: [1, 0, 0, 0, 1, 0] as [number, number, number, number, number, number],
      tiles: [tile(119), tile(120), tile(121)],
      cells: [1, 2],
      kind: 'combined' as const,
    };
    // Asked while the render waits (the worker is busy): the middle tile is no longer wanted.
    let asked = 0;
    const wanted = [true, true, true];
    const busy = pool.run('tiles.kind', beamPageSource('20190601'));
    const early: number[] = [];
    const made = renderer.overlay(
      args,
      undefined,
      undefined,
      (first, webps) => webps.forEach((_, i) => early.push(first + i)),
      { rank: [1, -1, 0], wanted: () => (asked++, wanted) },
    );
    wanted[1] = false;
    await busy;
    const tiles = await made;
    expect(asked).toBe(1);
    expect(tiles.map((t) => t !== undefined)).toEqual([true, false, true]);
    // Told by their places in the render as asked (0 and 2), each cell once made.
    expect(early).toEqual([0, 2]);
    for (const t of tiles.filter((w) => w !== undefined)) {
      const meta = await sharp(t).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['webp', TILE_SIZE, TILE_SIZE]);
    }
    // The page's tiles the same way.
    const page = await renderer.page(
      { source: beamPageSource('20190602'), scale: 16, cuts: [tile(119), tile(120)] },
      undefined,
      undefined,
      { wanted: () => [false, true] },
    );
    expect(page.map((t) => t !== undefined)).toEqual([false, true]);
  });

  it('cutOverlayArgs: the tiles kept, each cell with its own, empty cells gone', () => {
    const t = (x: number) => ({ left: x, top: 0, width: 1, height: 1 });
    const args = {
      a: beamPageSource('20190601'),
      b: beamPageSource('20190602'),
      scale: 16,
      aOrigin: { x: 0, y: 0 },
      bOrigin: { x: 0, y: 0 },
      transform: [1, 0, 0, 0, 1, 0] as [number, number, number, number, number, number],
      tiles: [t(0), t(1), t(2), t(3), t(4)],
      cells: [2, 1, 2],
      kind: 'combined' as const,
    };
    expect(cutOverlayArgs(args, [0, 1, 2, 3, 4])).toBe(args);
    expect(cutOverlayArgs(args, [1, 3, 4])).toMatchObject({
      tiles: [t(1), t(3), t(4)],
      cells: [1, 2],
    });
    const one = cutOverlayArgs(args, [3, 4]);
    expect(one.tiles).toEqual([t(3), t(4)]);
    expect(one.cells).toBeUndefined();
  });
});
