import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../blobs/local-object-store';
import { imageTileKey } from '../blobs/keys';
import { TileCache } from './tile-cache';

let dataDir: string;
let store: LocalObjectStore;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'blueline-tile-cache-'));
  store = new LocalObjectStore({ dataDir });
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const IMAGE = 'projects/prj_1/drawings/drw_1/sheets/sht_1/image.png';
const tile = (i: number) => imageTileKey(IMAGE, 14, i, 0);

/** Stores tile i (1 KiB of bytes) and tells the cache. */
async function put(cache: TileCache, i: number) {
  await store.put(tile(i), Buffer.alloc(1024, i), { contentType: 'image/webp' });
  await cache.add(tile(i), 1024);
}

async function stored(): Promise<string[]> {
  const page = await store.list('projects/', { limit: 1000, direction: 'forward' });
  return page.keys.map((k) => k.key).filter((k) => k.includes('.tiles/'));
}

describe('the tile cache', () => {
  it('keeps the tiles on disk under its bound, deleting the least recently used first', async () => {
    const cache = new TileCache(store, 4 * 1024);
    await cache.load();
    for (let i = 0; i < 4; i++) await put(cache, i);
    expect(cache.usage()).toEqual({ bytes: 4096, tiles: 4 });
    cache.touch(tile(0)); // used again: now the most recent
    for (let i = 4; i < 10; i++) await put(cache, i);
    expect(cache.usage()).toEqual({ bytes: 4096, tiles: 4 });
    // Tile 0 was used after 1–3 but before 4–9, so it went once six more came.
    expect((await stored()).sort()).toEqual([6, 7, 8, 9].map(tile).sort());
  });

  it('finds the tiles of an earlier run and holds a smaller bound over them', async () => {
    const first = new TileCache(store, 100 * 1024);
    await first.load();
    for (let i = 0; i < 8; i++) await put(first, i);
    // Other objects are not tiles: never counted, never deleted.
    await store.put(IMAGE, Buffer.alloc(5000), { contentType: 'image/png' });
    const next = new TileCache(store, 3 * 1024);
    await put(next, 8); // a tile made before the listing ends counts as the most recent
    await next.load();
    expect(next.usage()).toEqual({ bytes: 3072, tiles: 3 });
    const left = await stored();
    expect(left).toHaveLength(3);
    expect(left).toContain(tile(8));
    expect(await store.stat(IMAGE)).not.toBeNull();
  });

  it('refuses a bound that is not positive', () => {
    expect(() => new TileCache(store, 0)).toThrow(/positive/);
  });
});
