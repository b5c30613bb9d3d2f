import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../blobs/local-object-store';
import { imageTileKey } from '../blobs/keys';
import { compareRanks } from '../domain/rank';
import type { PageKind } from '../vision/input/pdfium.adapter';
import type { OverlayTilesArgs, PageSource, TileCut } from '../vision/tiles/deep-tiles';
import {
  groupsOf,
  regionsOf,
  TileService,
  urgencyOf,
  type DeepTileRenderer,
  type RenderOrder,
  type TileTraceEvent,
} from './tiles.service';
import type { DeepSource } from './tiles-source';

// The tile service's levels: the stored image up to native_zoom, deeper levels from the renderer
// (the pool, in service.ts) only for images of vector pages. A fake renderer records its calls.

let dataDir: string;
let store: LocalObjectStore;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'blueline-tiles-service-'));
  store = new LocalObjectStore({ dataDir });
});
/** Services of the test: their stores finish before the data dir goes. */
const made: TileService[] = [];
afterEach(async () => {
  for (const t of made.splice(0)) await t.whenStored();
  await rm(dataDir, { recursive: true, force: true });
});

const SHEET = 'projects/prj_1/drawings/drw_1/sheets/sht_1/image.png';
const BLOCK = 'projects/prj_1/drawings/drw_1/sheets/sht_1/blocks/blk_1.png';
const page: PageSource = {
  path: '/nowhere.pdf',
  bytesKey: 'abc',
  contentType: 'application/pdf',
  index: 0,
  dpi: 200,
  maxPixels: 1e8,
};

function fakeRenderer(kind: PageKind) {
  const calls: { kind: number; page: { source: PageSource; scale: number; cuts: TileCut[] }[] } = {
    kind: 0,
    page: [],
  };
  const webp = () =>
    sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
      .webp()
      .toBuffer()
      .then((b) => new Uint8Array(b));
  const renderer: DeepTileRenderer = {
    kind: async () => {
      calls.kind++;
      return kind;
    },
    page: async (args) => {
      calls.page.push(args);
      return Promise.all(args.cuts.map(() => webp()));
    },
    overlay: async (args: OverlayTilesArgs) => Promise.all(args.tiles.map(() => webp())),
  };
  return { renderer, calls };
}

async function service(kind: PageKind, trace?: (e: TileTraceEvent) => void) {
  // A 1100 x 700 image: native_zoom 2 (1100 / 512 → 4 tiles wide at level 2).
  await store.put(
    SHEET,
    await sharp({ create: { width: 1100, height: 700, channels: 3, background: '#fff' } })
      .png()
      .toBuffer(),
    { contentType: 'image/png' },
  );
  const fake = fakeRenderer(kind);
  const sources: Record<string, DeepSource> = {
    [SHEET]: { kind: 'page', width: 1100, height: 700, source: page, origin: { x: 0, y: 0 } },
    [BLOCK]: { kind: 'page', width: 300, height: 200, source: page, origin: { x: 400, y: 100 } },
  };
  const tiles = new TileService(store, {
    resolve: async (key) => sources[key] ?? null,
    renderer: fake.renderer,
    cacheMaxBytes: 1e9,
    ...(trace ? { trace } : {}),
  });
  made.push(tiles);
  return { tiles, ...fake };
}

describe('TileService levels', () => {
  it('a vector page goes 4 levels deeper; its deep tiles come from the page at the level scale', async () => {
    const { tiles, calls } = await service('vector');
    expect(await tiles.tilesJson(SHEET)).toEqual({
      tile_size: 512,
      width: 1100,
      height: 700,
      native_zoom: 2,
      max_zoom: 6,
    });
    // Level 6 = 16x: tile (3, 2) covers level pixels [1536, 2048) x [1024, 1536).
    const key = await tiles.tileKey(SHEET, 6, 3, 2);
    expect(key).toBe(imageTileKey(SHEET, 6, 3, 2));
    const at = (left: number, top: number, width = 512, height = 512) => ({
      left,
      top,
      width,
      height,
    });
    expect(calls.page).toEqual([{ source: page, scale: 16, cuts: [at(1536, 1024)] }]);
    // Tiles of one 2 x 2 cell of the level asked for together are rendered in one call (in rows),
    // one call per cell (regionsOf), and each is stored; no other tile is made.
    await Promise.all([
      tiles.tileKey(SHEET, 6, 3, 5),
      tiles.tileKey(SHEET, 6, 2, 5),
      tiles.tileKey(SHEET, 6, 3, 6),
      tiles.tileKey(SHEET, 6, 2, 6),
    ]);
    await tiles.whenStored();
    expect(calls.page.slice(1)).toEqual([
      { source: page, scale: 16, cuts: [at(1024, 2560), at(1536, 2560)] },
      { source: page, scale: 16, cuts: [at(1024, 3072), at(1536, 3072)] },
    ]);
    for (const [x, y] of [
      [2, 5],
      [3, 5],
      [2, 6],
      [3, 6],
    ] as const)
      expect(await store.stat(imageTileKey(SHEET, 6, x, y))).toBeTruthy();
    expect(await store.stat(imageTileKey(SHEET, 6, 3, 4))).toBeNull();
    calls.page.splice(0, 2);
    // A block crop's level pixels start at its bbox origin on the sheet, times the scale (its
    // native_zoom is 0: 300 x 200 fits one tile, so level 3 is 8x, 2400 x 1600); edge tiles are
    // cut at the level's size, and a region at the edge holds only the level's tiles.
    await tiles.tileKey(BLOCK, 3, 2, 1);
    expect(calls.page[1]).toEqual({
      source: page,
      scale: 8,
      cuts: [at(400 * 8 + 1024, 100 * 8 + 512)],
    });
    await Promise.all([tiles.tileKey(BLOCK, 3, 4, 2), tiles.tileKey(BLOCK, 3, 4, 3)]);
    expect(calls.page[2]!.cuts).toEqual([
      at(400 * 8 + 2048, 100 * 8 + 1024, 2400 - 2048, 512),
      at(400 * 8 + 2048, 100 * 8 + 1536, 2400 - 2048, 1600 - 1536),
    ]);
    // Stored: asked again, nothing is rendered.
    await tiles.tileKey(SHEET, 6, 3, 2);
    await tiles.tileKey(SHEET, 6, 2, 5);
    expect(calls.page).toHaveLength(3);
    await expect(tiles.tileKey(SHEET, 7, 0, 0)).rejects.toThrow(/levels 0–6, 2 at the image/);
  });

  it("a scan stops at native_zoom, and tiles up to native never wait for the page's kind", async () => {
    const { tiles, calls } = await service('scan');
    await tiles.tileKey(SHEET, 2, 1, 1);
    await tiles.tileKey(SHEET, 0, 0, 0);
    expect(calls.kind).toBe(0);
    expect((await tiles.tilesJson(SHEET)).max_zoom).toBe(2);
    expect(calls.kind).toBe(1);
    await expect(tiles.tileKey(SHEET, 3, 0, 0)).rejects.toThrow(/levels 0–2;/);
    expect(calls.page).toHaveLength(0);
  });

  it('requests for one tile share its render; when every one is cancelled, the render is dropped', async () => {
    const { tiles, renderer } = await service('vector');
    // A renderer that holds each render until released, and reports the signal it was given.
    const held: { signal: AbortSignal | undefined; release: () => void }[] = [];
    const original = renderer.page;
    renderer.page = (args, signal) =>
      new Promise<(Uint8Array | undefined)[]>((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason));
        held.push({ signal, release: () => void original(args).then(resolve, reject) });
      });
    const until = async (n: number) => {
      while (held.length < n) await new Promise((r) => setImmediate(r));
    };
    const first = new AbortController();
    const second = new AbortController();
    const a = tiles.tileKey(SHEET, 6, 1, 1, first.signal);
    a.catch(() => undefined);
    await until(1);
    // Asked for again while it renders: joins that render.
    const b = tiles.tileKey(SHEET, 6, 1, 1, second.signal);
    b.catch(() => undefined);
    // One render for both requests; one cancelled, the other still waits: it goes on.
    first.abort(new Error('moved on'));
    expect(held[0]!.signal!.aborted).toBe(false);
    // The last one cancelled: the render's signal aborts (the pool drops a queued task).
    second.abort(new Error('moved on again'));
    expect(held[0]!.signal!.aborted).toBe(true);
    await expect(b).rejects.toThrow('moved on again');
    await expect(a).rejects.toThrow('moved on again');
    // A later request for the tile renders it afresh, and it is stored.
    const c = tiles.tileKey(SHEET, 6, 1, 1);
    await until(2);
    expect(held[1]!.signal!.aborted).toBe(false);
    held[1]!.release();
    expect(await c).toBe(imageTileKey(SHEET, 6, 1, 1));
    await tiles.whenStored();
    expect(await store.stat(imageTileKey(SHEET, 6, 1, 1))).toBeTruthy();
    // An already cancelled request renders nothing.
    const late = new AbortController();
    late.abort(new Error('gone'));
    await expect(tiles.tileKey(SHEET, 6, 0, 0, late.signal)).rejects.toThrow('gone');
    expect(held).toHaveLength(2);
  });

  it('the tiles of one region share one render; it goes on while any of them is still wanted', async () => {
    const { tiles, renderer } = await service('vector');
    const held: { signal: AbortSignal | undefined; cuts: number; release: () => void }[] = [];
    const original = renderer.page;
    renderer.page = (args, signal) =>
      new Promise<(Uint8Array | undefined)[]>((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason));
        held.push({
          signal,
          cuts: args.cuts.length,
          release: () => void original(args).then(resolve, reject),
        });
      });
    const until = async (n: number) => {
      while (held.length < n) await new Promise((r) => setImmediate(r));
    };
    // Four tiles of level 6 asked for together: two regions, the 2 x 2 cells (4–5, 6–7) and
    // (4–5, 8–9), one render each.
    const ctl = [0, 1, 2, 3].map(() => new AbortController());
    const [a, b, c, d] = (
      [
        [4, 6],
        [5, 6],
        [4, 8],
        [5, 8],
      ] as const
    ).map(([x, y], i) => {
      const p = tiles.tileKey(SHEET, 6, x, y, ctl[i]!.signal);
      p.catch(() => undefined);
      return p;
    });
    await until(2);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(held.map((h) => h.cuts)).toEqual([2, 2]);
    // (4, 6) cancelled: (5, 6) still waits for the same region, which goes on.
    ctl[0]!.abort(new Error('moved on'));
    await expect(a).rejects.toThrow('moved on');
    expect(held[0]!.signal!.aborted).toBe(false);
    // Both tiles of the other region cancelled: its render is dropped.
    ctl[2]!.abort(new Error('left'));
    expect(held[1]!.signal!.aborted).toBe(false);
    ctl[3]!.abort(new Error('left too'));
    expect(held[1]!.signal!.aborted).toBe(true);
    await expect(c).rejects.toThrow('left');
    await expect(d).rejects.toThrow('left too');
    held[0]!.release();
    expect(await b).toBe(imageTileKey(SHEET, 6, 5, 6));
    // The cancelled tile was stored with its region; the dropped region stored nothing; a tile
    // asked for once the batch has started gets a render of its own.
    await tiles.whenStored();
    expect(await store.stat(imageTileKey(SHEET, 6, 4, 6))).toBeTruthy();
    expect(await store.stat(imageTileKey(SHEET, 6, 4, 8))).toBeNull();
    const e = tiles.tileKey(SHEET, 6, 4, 7);
    await until(3);
    expect(held[2]!.cuts).toBe(1);
    held[2]!.release();
    expect(await e).toBe(imageTileKey(SHEET, 6, 4, 7));
  });

  it("renders are ranked by the request's urgency, then the newest batch, then the order asked for; a tile cancelled before its render starts is not made", async () => {
    const events: TileTraceEvent[] = [];
    const { tiles, renderer } = await service('vector', (e) => events.push(e));
    // The tiles are not stored: no store lookups, so the requests reach their batches in order.
    store.stat = async () => null;
    await tiles.tilesJson(SHEET);
    // A renderer that holds each render, then makes only the tiles still wanted when released
    // (as the pool does when a worker takes it: tile-tasks.ts).
    const held: { tiles: string; order: RenderOrder | undefined; release: () => void }[] = [];
    const original = renderer.page;
    renderer.page = (args, signal, _timings, order) =>
      new Promise<(Uint8Array | undefined)[]>((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason));
        held.push({
          tiles: args.cuts.map((c) => `${c.left / 512},${c.top / 512}`).join(' '),
          order,
          release: () => {
            const wanted = order?.wanted?.() ?? args.cuts.map(() => true);
            const cuts = args.cuts.filter((_, i) => wanted[i]);
            void original({ ...args, cuts }).then((webps) => {
              let j = 0;
              resolve(wanted.map((w) => (w ? webps[j++] : undefined)));
            }, reject);
          },
        });
      });
    const until = async (n: number) => {
      while (held.length < n) await new Promise((r) => setImmediate(r));
    };
    const ctl = new Map<string, AbortController>();
    const ask = (x: number, y: number, urgency: number) => {
      const c = new AbortController();
      ctl.set(`${x},${y}`, c);
      const p = tiles.tileKey(SHEET, 6, x, y, c.signal, urgency);
      p.catch(() => undefined);
      return p;
    };
    // A step's view tiles (urgency 1: Chromium's 'high'), centre first, and its prefetch (3).
    const view1 = [ask(5, 5, 1), ask(2, 2, 1), ask(3, 2, 1)];
    const prefetch = ask(0, 0, 3);
    await until(3);
    // The next step's view tile, after the first step's renders were queued.
    const view2 = ask(7, 7, 1);
    await until(4);
    // One render per cell (a renderer without a worker count), handed over in rows.
    expect(held.map((h) => h.tiles).sort()).toEqual(['0,0', '2,2 3,2', '5,5', '7,7']);
    const byRank = [...held].sort((a, b) => compareRanks(a.order!.rank!, b.order!.rank!));
    // The newest step's view, then the first step's view centre first, then the prefetch.
    expect(byRank.map((h) => h.tiles)).toEqual(['7,7', '5,5', '2,2 3,2', '0,0']);
    // A tile cancelled while its render waits: the render goes on for the other, without it.
    ctl.get('3,2')!.abort(new Error('left the view'));
    await expect(view1[2]).rejects.toThrow('left the view');
    expect(byRank[2]!.order!.wanted!()).toEqual([true, false]);
    for (const h of byRank) h.release();
    expect(await view2).toBe(imageTileKey(SHEET, 6, 7, 7));
    expect(await view1[0]).toBe(imageTileKey(SHEET, 6, 5, 5));
    expect(await view1[1]).toBe(imageTileKey(SHEET, 6, 2, 2));
    expect(await prefetch).toBe(imageTileKey(SHEET, 6, 0, 0));
    await tiles.whenStored();
    expect(tiles.freshTile(imageTileKey(SHEET, 6, 3, 2))).toBeNull();
    const region = events.find((e) => e.ev === 'region' && String(e.tiles) === '2,2');
    expect(region).toMatchObject({ tiles: [[2, 2]], cut: [[3, 2]] });
    delete (store as { stat?: unknown }).stat;
    expect(await store.stat(imageTileKey(SHEET, 6, 3, 2))).toBeNull();
    expect(await store.stat(imageTileKey(SHEET, 6, 2, 2))).toBeTruthy();
  });

  it('less urgent renders (prefetch) hold at most all but one worker once a more urgent request was seen', async () => {
    const { tiles, renderer } = await service('vector');
    store.stat = async () => null;
    await tiles.tilesJson(SHEET);
    renderer.workers = 2;
    const held: { tiles: string; release: () => void }[] = [];
    const original = renderer.page;
    renderer.page = (args, signal) =>
      new Promise<(Uint8Array | undefined)[]>((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason));
        held.push({
          tiles: args.cuts.map((c) => `${c.left / 512},${c.top / 512}`).join(' '),
          release: () => void original(args).then(resolve, reject),
        });
      });
    const until = async (n: number) => {
      while (held.length < n) await new Promise((r) => setImmediate(r));
    };
    const settle = () => new Promise((r) => setTimeout(r, 20));
    // Before any urgent request, urgency 3 is the most urgent: not held (HTTP/1.1's case).
    const plain = [
      tiles.tileKey(SHEET, 6, 0, 0, undefined, 3),
      tiles.tileKey(SHEET, 6, 4, 0, undefined, 3),
    ];
    await until(2);
    for (const h of held.splice(0)) h.release();
    await Promise.all(plain);
    // A view tile (urgency 1) was asked for: prefetch renders, one at a time for 2 workers.
    const view = tiles.tileKey(SHEET, 6, 8, 8, undefined, 1);
    await until(1);
    const pre = [
      tiles.tileKey(SHEET, 6, 0, 8, undefined, 3),
      tiles.tileKey(SHEET, 6, 4, 8, undefined, 3),
      tiles.tileKey(SHEET, 6, 12, 8, undefined, 3),
    ];
    await until(2);
    await settle();
    expect(held.map((h) => h.tiles)).toEqual(['8,8', '0,8']);
    // The view's render returning frees nothing for prefetch; the prefetch one returning does.
    held[0]!.release();
    expect(await view).toBe(imageTileKey(SHEET, 6, 8, 8));
    await settle();
    expect(held).toHaveLength(2);
    held[1]!.release();
    await until(3);
    await settle();
    expect(held.map((h) => h.tiles)).toEqual(['8,8', '0,8', '4,8']);
    held[2]!.release();
    await until(4);
    held[3]!.release();
    expect(await Promise.all(pre)).toHaveLength(3);
  });

  it("urgencyOf: RFC 9218's urgency of the priority header, 3 without one", () => {
    expect(urgencyOf('u=1, i')).toBe(1);
    expect(urgencyOf('i')).toBe(3);
    expect(urgencyOf(undefined)).toBe(3);
    expect(urgencyOf('u=0')).toBe(0);
    expect(urgencyOf('i, u=5')).toBe(5);
    expect(urgencyOf('u=9')).toBe(3);
    expect(urgencyOf('u=12')).toBe(3);
    expect(urgencyOf(['u=2', 'i'])).toBe(2);
  });

  it('regionsOf: the tiles of each 2 x 2 cell of the level, in rows', () => {
    expect(regionsOf([])).toEqual([]);
    expect(
      regionsOf([
        [3, 5],
        [2, 5],
        [2, 4],
        [4, 4],
        [5, 5],
        [9, 9],
      ]),
    ).toEqual([
      [
        [2, 4],
        [2, 5],
        [3, 5],
      ],
      [
        [4, 4],
        [5, 5],
      ],
      [[9, 9]],
    ]);
  });

  it('groupsOf: cells one render each up to the workers, else bands of cells, one render per worker at least', () => {
    /** The tiles of a cols x rows view whose top-left tile is (x, y), in rows. */
    const view = (x: number, y: number, cols: number, rows: number) =>
      Array.from({ length: rows }, (_, j) =>
        Array.from({ length: cols }, (_, i) => [x + i, y + j] as [number, number]),
      ).flat();
    /** Each render's tiles, in rows. */
    const tilesOf = (groups: [number, number][][][]) =>
      groups.map((g) => g.flat().sort((p, q) => p[1] - q[1] || p[0] - q[0]));
    expect(groupsOf([], 2)).toEqual([]);
    // No more cells than workers: as the cells alone.
    const two = regionsOf(view(2, 2, 4, 2));
    expect(groupsOf(two, 2)).toEqual(two.map((c) => [c]));
    // A 3 x 2 view over 4 cells (x 3 is in one cell column, 4–5 in the next): two rows of 3.
    expect(tilesOf(groupsOf(regionsOf(view(3, 5, 3, 2)), 2))).toEqual([
      view(3, 5, 3, 1),
      view(3, 6, 3, 1),
    ]);
    // A 3 x 3 view over 4 cells (1 + 2 + 2 + 4 tiles): rows 1 and 2–3 or columns 1 and 2–3 part
    // it 3 / 6 either way; never a render of tiles around a corner (its rectangle holds the view).
    const nine = groupsOf(regionsOf(view(1, 1, 3, 3)), 2);
    expect(tilesOf(nine)).toEqual([view(1, 1, 3, 1), view(1, 2, 3, 2)]);
    // A 4 x 3 view over 2 cell columns (x 2–3, 4–5) and 2 cell rows (y 1, 2–3): the columns part
    // it 6 / 6 (the rows 4 / 8).
    expect(tilesOf(groupsOf(regionsOf(view(2, 1, 4, 3)), 2))).toEqual([
      [...view(2, 1, 2, 3)].sort((p, q) => p[1] - q[1] || p[0] - q[0]),
      [...view(4, 1, 2, 3)].sort((p, q) => p[1] - q[1] || p[0] - q[0]),
    ]);
    // 8 x 4 tiles (32) on 2 workers: up to GROUP_TILES (8) a render, bands of 8: 4 renders.
    expect(tilesOf(groupsOf(regionsOf(view(0, 0, 8, 4)), 2))).toHaveLength(4);
    // 5 x 6 tiles: bands of 10 (rows) or 12 (columns) tiles, more than GROUP_TILES: the cells.
    const big = regionsOf(view(0, 0, 5, 6));
    expect(groupsOf(big, 2)).toEqual(big.map((c) => [c]));
    // Cells around a corner (an L of 3 cells): a render that would draw tiles nobody asked for is
    // left as its cells.
    const ell = regionsOf([...view(0, 0, 4, 2), ...view(0, 2, 2, 2)]);
    for (const g of groupsOf(ell, 2)) {
      const xy = g.flat();
      const w = Math.max(...xy.map((t) => t[0])) - Math.min(...xy.map((t) => t[0])) + 1;
      const h = Math.max(...xy.map((t) => t[1])) - Math.min(...xy.map((t) => t[1])) + 1;
      expect(w * h).toBe(xy.length);
    }
    // Every cell once, whatever the split, every render with a cell.
    for (const w of [1, 2, 3])
      for (const [x, y, c, r] of [
        [0, 0, 3, 3],
        [1, 0, 5, 2],
        [3, 3, 2, 5],
        [1, 1, 6, 4],
      ] as const) {
        const cells = regionsOf(view(x, y, c, r));
        const groups = groupsOf(cells, w);
        expect(groups.flat().sort()).toEqual([...cells].sort());
        expect(groups.every((g) => g.length > 0)).toBe(true);
        expect(groups.length).toBeGreaterThanOrEqual(Math.min(cells.length, w));
      }
  });

  it('a view of overlay tiles asked for together is made by one render per worker, each cell compared alone', async () => {
    const { tiles, renderer } = await service('vector');
    const OVERLAY = 'projects/prj_1/compare/cmp_1/overlay/combined.png';
    const overlays: OverlayTilesArgs[] = [];
    const tile = () =>
      sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
        .webp()
        .toBuffer()
        .then((b) => new Uint8Array(b));
    renderer.workers = 2;
    renderer.overlay = async (args) => {
      overlays.push(args);
      return Promise.all(args.tiles.map(tile));
    };
    const sources: Record<string, DeepSource> = {
      [OVERLAY]: {
        kind: 'overlay',
        width: 1100,
        height: 700,
        a: page,
        b: { ...page, bytesKey: 'def' },
        aOrigin: { x: 0, y: 0 },
        bOrigin: { x: 0, y: 0 },
        transform: [1, 0, 0, 0, 1, 0],
        imageKind: 'combined',
      },
    };
    const t2 = new TileService(store, {
      resolve: async (key) => sources[key] ?? null,
      renderer,
      cacheMaxBytes: 1e9,
    });
    made.push(t2, tiles);
    // A 3 x 2 view of level 6 at (3..5, 5..6): cells (2–3, 4–5) [3,5], (4–5, 4–5) [4,5 5,5],
    // (2–3, 6–7) [3,6], (4–5, 6–7) [4,6 5,6]: 4 cells, two renders of 3 tiles.
    const view = [3, 4, 5].flatMap((x) => [5, 6].map((y) => [x, y] as const));
    const keys = await Promise.all(view.map(([x, y]) => t2.tileKey(OVERLAY, 6, x, y)));
    expect(keys).toEqual(view.map(([x, y]) => imageTileKey(OVERLAY, 6, x, y)));
    const at = (x: number, y: number) => ({ left: x * 512, top: y * 512, width: 512, height: 512 });
    expect(overlays.map((o) => [o.tiles, o.cells])).toEqual([
      [
        [at(3, 5), at(4, 5), at(5, 5)],
        [1, 2],
      ],
      [
        [at(3, 6), at(4, 6), at(5, 6)],
        [1, 2],
      ],
    ]);
    // Two tiles of one cell: one render, no cells (as before).
    await Promise.all([t2.tileKey(OVERLAY, 6, 0, 0), t2.tileKey(OVERLAY, 6, 1, 0)]);
    expect(overlays[2]!.tiles).toEqual([at(0, 0), at(1, 0)]);
    expect(overlays[2]!.cells).toBeUndefined();
    await t2.whenStored();
    // A render that sends its first cell's tiles early (onTiles) and holds the rest: those tiles
    // are answered, from memory, before the render ends.
    const finish: (() => void)[] = [];
    renderer.overlay = async (args, _signal, _t, onTiles) => {
      const webps = await Promise.all(args.tiles.map(tile));
      onTiles?.(0, webps.slice(0, args.cells![0]));
      await new Promise<void>((r) => finish.push(r));
      return webps;
    };
    const view2 = [3, 4, 5].flatMap((x) => [9, 10].map((y) => [x, y] as const));
    const asked = view2.map(([x, y]) => {
      const p = t2.tileKey(OVERLAY, 6, x, y).then((k) => ({ k, fresh: t2.freshTile(k) !== null }));
      p.catch(() => undefined);
      return p;
    });
    // (3, 9) alone is the first cell of the first render (y 9: cells (2–3, 8–9), (4–5, 8–9)); the
    // second render's first cell is (3, 10).
    expect((await asked[0]!).k).toBe(imageTileKey(OVERLAY, 6, 3, 9));
    expect((await asked[1]!).k).toBe(imageTileKey(OVERLAY, 6, 3, 10));
    let others = 0;
    for (const i of [2, 3, 4, 5]) void asked[i]!.then(() => others++);
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(others).toBe(0);
    expect(finish).toHaveLength(2);
    for (const f of finish) f();
    const all = await Promise.all(asked);
    expect(all.map((a) => a.k)).toEqual(view2.map(([x, y]) => imageTileKey(OVERLAY, 6, x, y)));
    await t2.whenStored();
    for (const [x, y] of view2)
      expect(await store.stat(imageTileKey(OVERLAY, 6, x, y))).toBeTruthy();
  });

  it('traced, it reports each deep tile request and render with the worker timings', async () => {
    const events: TileTraceEvent[] = [];
    const { tiles, renderer } = await service('vector', (e) => events.push(e));
    const original = renderer.page;
    const worker = {
      startedAt: Date.now(),
      totalMs: 12,
      cpuMs: 10,
      steps: { render: 8, encode: 4 },
    };
    renderer.page = async (args, signal, onTimings) => {
      onTimings?.(worker);
      return original(args, signal);
    };
    // Native tiles are not reported; deep ones are, rendered or found stored.
    await tiles.tileKey(SHEET, 2, 0, 0);
    await Promise.all([tiles.tileKey(SHEET, 6, 2, 4), tiles.tileKey(SHEET, 6, 3, 4)]);
    await tiles.tileKey(SHEET, 6, 2, 4);
    await tiles.whenStored();
    const regions = events.filter((e) => e.ev === 'region');
    // Two tiles of one cell asked for together: one region.
    expect(regions.map((e) => e.ev === 'region' && String(e.tiles))).toEqual(['2,4,3,4']);
    const r = regions[0]!;
    if (r.ev !== 'region') throw new Error('not a region');
    expect(r).toMatchObject({ image: SHEET, z: 6, kind: 'page', worker });
    expect(r.at).toBeLessThanOrEqual(r.queued);
    expect(r.queued).toBeLessThanOrEqual(r.returned);
    expect(r.returned).toBeLessThanOrEqual(r.end);
    const t = events.filter((e) => e.ev === 'tile');
    const seen = t.map((e) => e.ev === 'tile' && String([e.x, e.y, e.stored, e.cancelled]));
    expect(seen.slice(0, 2).sort()).toEqual(['2,4,false,false', '3,4,false,false']);
    expect(seen[2]).toBe('2,4,true,false');
    expect(t[2]).toMatchObject({ key: imageTileKey(SHEET, 6, 2, 4), z: 6 });
    // The HTTP side is reported by the route through traceServed.
    expect(tiles.traced).toBe(true);
    tiles.traceServed(imageTileKey(SHEET, 6, 2, 4), 6, 1, 200);
    expect(events.at(-1)).toMatchObject({ ev: 'served', z: 6, at: 1, status: 200 });
  });

  it('a deep tile just made is served from memory until stored, as the store then gives it', async () => {
    const { tiles } = await service('vector');
    // A store whose puts of tiles wait until released.
    const puts: (() => void)[] = [];
    const put = store.put.bind(store);
    store.put = (key, src, opts) =>
      new Promise((resolve, reject) =>
        puts.push(() => void put(key, src, opts).then(resolve, reject)),
      );
    const key = await tiles.tileKey(SHEET, 6, 1, 1);
    expect(await store.stat(key)).toBeNull();
    const fresh = tiles.freshTile(key)!;
    expect(fresh).toMatchObject({ key, contentType: 'image/webp' });
    const bytes = async (r: NodeJS.ReadableStream) => {
      const chunks: Buffer[] = [];
      for await (const c of r) chunks.push(c as Buffer);
      return Buffer.concat(chunks);
    };
    const body = await bytes(fresh.stream());
    expect(body.byteLength).toBe(fresh.size);
    expect((await bytes(fresh.stream({ start: 2, end: 5 }))).equals(body.subarray(2, 6))).toBe(
      true,
    );
    // Asked again meanwhile: nothing rendered again, the same tile.
    expect(await tiles.tileKey(SHEET, 6, 1, 1)).toBe(key);
    while (puts.length === 0) await new Promise((r) => setImmediate(r));
    puts.shift()!();
    await tiles.whenStored();
    expect(tiles.freshTile(key)).toBeNull();
    const stored = (await store.get(key))!;
    expect(stored.etag).toBe(fresh.etag);
    expect((await bytes(stored.stream())).equals(body)).toBe(true);
  });
});
