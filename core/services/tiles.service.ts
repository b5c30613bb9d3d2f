import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { ApiError } from '../domain/errors';
import { compareRanks } from '../domain/rank';
import type { ObjectStore, StoredObject } from '../blobs/object-store';
import { imageTileKey } from '../blobs/keys';
import {
  decodeForTiles,
  DEEP_LEVELS,
  levelOf,
  renderTile,
  tileGeometry,
  tileRect,
  TILE_SIZE,
  type DecodedImage,
  type TileGeometry,
} from '../vision/tiles/tiles.adapter';
import type { OverlayTilesArgs, PageSource, TileCut } from '../vision/tiles/deep-tiles';
import type { PageKind } from '../vision/input/pdfium.adapter';
import type { DeepTimings } from '../vision/tiles/deep-timings';
import type { DeepSource } from './tiles-source';
import { TileCache } from './tile-cache';

// Serves the tile pyramids of stored images (contract §5) and their description (tiles.json).
//  - Levels up to native_zoom are cut from the stored image: a stored tile is returned as is; a
//    missing one is rendered from the decoded image (a few decoded images are kept, since a viewer
//    asks for many tiles of the same sheet in a burst) and stored for the next request.
//  - Images of vector PDF pages (sheets, block crops, overlays of them) go DEEP_LEVELS deeper:
//    those tiles are rendered from the pages themselves by the worker pool at low priority
//    (`DeepTileRenderer`, wired in service.ts) and stored the same way.
//  - Deep tiles of one level asked for together are made up to REGION x REGION tiles of a level at
//    a time (regionsOf): both revisions' renders and the compare are shared by them (one pool task).
//  - Every stored tile counts against the tile cache's disk bound (tile-cache.ts): the least
//    recently used go first.

/**
 * Where a deep render stands among the others waiting for a worker, and what it still has to make
 * when one takes it (tile-tasks.ts).
 */
export interface RenderOrder {
  /** Lower first, element by element (WorkerPool TaskOptions.rank). */
  rank?: readonly number[];
  /** Called when the render starts: which of its tiles (in its order) are still wanted. */
  wanted?: () => readonly boolean[];
}

/** The pool's side of deep tiles (worker-tasks.ts 'tiles.*'); services do not see the pool. */
export interface DeepTileRenderer {
  /** Renders that can run at once (the pool's workers): a batch is split at least that many ways. */
  workers?: number;
  kind(source: PageSource): Promise<PageKind>;
  /**
   * Tiles of one level of a page (`cuts` in pixels of its raster at `scale`), WebP in their order
   * (undefined: a tile no longer wanted when the render started, `order.wanted`, not made).
   * `signal`: nobody waits for them any more; a render not yet started is dropped. `onTimings`:
   * told where the render's time went in the worker, when it ran.
   */
  page(
    args: { source: PageSource; scale: number; cuts: TileCut[] },
    signal?: AbortSignal,
    onTimings?: (t: DeepTimings) => void,
    order?: RenderOrder,
  ): Promise<(Uint8Array | undefined)[]>;
  /**
   * Tiles of one level of an overlay image, WebP in the order of `args.tiles`; with `args.cells`,
   * A and B rendered once for all of them and each cell compared on its own part (deep-tiles.ts).
   */
  overlay(
    args: OverlayTilesArgs,
    signal?: AbortSignal,
    onTimings?: (t: DeepTimings) => void,
    /** Told the tiles of each cell (from index `first`) as soon as they are made (with cells). */
    onTiles?: (first: number, webps: Uint8Array[]) => void,
    order?: RenderOrder,
  ): Promise<(Uint8Array | undefined)[]>;
}

/**
 * What the tile service reports when traced (TileServiceOptions.trace; `blueline serve` with
 * BLUELINE_TILE_TRACE=1 prints each as a `tile-trace {json}` line; bench/viewer --server-trace
 * sums them). Times are epoch ms.
 *  - `tile`: one request for a tile past native_zoom: when it came, when its tile was stored (or
 *    found stored: `stored`), and whether it was cancelled.
 *  - `region`: one deep render: the tiles it made, when it was asked for (the first tile's request),
 *    when it was handed to the pool (after gathering), the worker's timings (DeepTimings: started,
 *    total, CPU, steps), when the pool returned it and when its tiles were stored.
 *  - `served`: the HTTP side of a deep tile's request: when it came and when its answer was sent.
 */
export type TileTraceEvent =
  | {
      ev: 'tile';
      key: string;
      image: string;
      z: number;
      x: number;
      y: number;
      at: number;
      end: number;
      stored: boolean;
      cancelled: boolean;
    }
  | {
      ev: 'region';
      image: string;
      z: number;
      kind: string;
      /** The tiles made ([x, y]). */
      tiles: [number, number][];
      /** Tiles of the render cancelled before it started, not made. */
      cut?: [number, number][];
      at: number;
      queued: number;
      returned: number;
      end: number;
      worker: DeepTimings | null;
    }
  | {
      ev: 'served';
      key: string;
      z: number;
      at: number;
      end: number;
      status: number;
      /** The request's RFC 9218 `priority` header, as sent (Chromium over HTTP/2). */
      priority?: string;
    };

/**
 * The urgency (0 most urgent – 7) of a request's RFC 9218 `priority` header: Chromium sends it over
 * HTTP/2, `u=1, i` for a fetch of priority 'high' or 'auto' and `i` (the default urgency, 3) for
 * 'low' (the viewer's view tiles and its prefetch: tile-store.ts). Without a header (HTTP/1.1) or
 * with an urgency it cannot read: the default, 3.
 */
export function urgencyOf(priority: string | string[] | undefined): number {
  const header = Array.isArray(priority) ? priority.join(',') : (priority ?? '');
  const m = /(?:^|,)\s*u=([0-7])\s*(?:;[^,]*)?(?:,|$)/.exec(header);
  return m ? Number(m[1]) : DEFAULT_URGENCY;
}

/** RFC 9218's default urgency. */
export const DEFAULT_URGENCY = 3;

/**
 * Deep tiles of one image and level asked for within REGION_GATHER_MS of the first make one batch
 * (a zoom step's tiles, asked for in one burst); the batch is made by regions (regionsOf): its tiles
 * in each REGION x REGION cell of the level's tile grid, one pool task each (one pair of PDFium
 * renders and one compare for the cell's tiles asked for). No tile nobody asked for is made.
 *
 * Larger regions were measured and not kept (bench/viewer README, 2026-11-27 evening): the viewer
 * has at most 6 tile requests in flight (HTTP/1.1), so a region's tiles all wait for its slowest,
 * and a zoom step's tiles landed 2–4x later under load.
 */
export const REGION = 2;
export const REGION_GATHER_MS = 4;

/** A batch's tiles (tile coordinates) by REGION x REGION cell of the level, each in rows. */
export function regionsOf(tiles: readonly [number, number][]): [number, number][][] {
  const cells = new Map<string, [number, number][]>();
  for (const t of [...tiles].sort((p, q) => p[1] - q[1] || p[0] - q[0])) {
    const k = `${Math.floor(t[0] / REGION)},${Math.floor(t[1] / REGION)}`;
    cells.set(k, [...(cells.get(k) ?? []), t]);
  }
  return [...cells.values()];
}

/**
 * Most tiles one render makes when a batch's cells are put together (groupsOf): a zoom step's view
 * is 6–9 tiles, split between the pool's workers.
 */
export const GROUP_TILES = 8;

type Cell = [number, number][];

/**
 * The renders of a batch's cells (regionsOf), each a list of cells: while there are no more cells
 * than `workers`, one render each (as the cells alone); else bands of cells (rows or columns of the
 * level's 2 x 2 cells, whichever parts the tiles more evenly) put together into at least `workers`
 * renders (one per worker, so a view's tiles are made by every worker at once) of about equal tiles,
 * up to GROUP_TILES each where the bands allow. One render of A and B then serves several cells
 * (PDFium's cost per call, ~10 ms a side, paid once), each cell still compared on its own (the same
 * tiles as the cell alone). A render's tiles must fill the rectangle around them (a view's bands
 * do): one that would render much more than its tiles is left as its cells.
 *
 * For when a view's tiles reach the service together (HTTP/2): over HTTP/1.1 the viewer's six
 * connections hold them back, a batch is rarely more than a cell, and nothing changes.
 */
export function groupsOf(cells: readonly Cell[], workers: number): Cell[][] {
  if (cells.length <= Math.max(1, workers)) return cells.map((c) => [c]);
  const total = cells.reduce((n, c) => n + c.length, 0);
  const want = Math.max(workers, Math.ceil(total / GROUP_TILES));
  let best: Cell[][] | null = null;
  let bestMax = Infinity;
  for (const axis of [1, 0] as const) {
    // Bands of cells along the axis (cell rows: by y; cell columns: by x), in order.
    const bands = new Map<number, Cell[]>();
    for (const c of cells) {
      const k = Math.floor(c[0]![axis] / REGION);
      bands.set(k, [...(bands.get(k) ?? []), c]);
    }
    const list = [...bands.entries()].sort((p, q) => p[0] - q[0]).map(([, b]) => b);
    if (list.length < Math.min(workers, cells.length)) continue;
    const groups = splitEvenly(list, Math.min(want, list.length)).map((g) => g.flat());
    const max = Math.max(...groups.map((g) => g.reduce((n, c) => n + c.length, 0)));
    if (max < bestMax) [best, bestMax] = [groups, max];
  }
  if (!best) return cells.map((c) => [c]);
  // A render whose rectangle holds many tiles nobody asked for, or more than GROUP_TILES (a band
  // of a large batch; a pool task stays short: a job's task waits for the tile tasks running): its
  // cells alone instead.
  return best.flatMap((g) => {
    const xy = g.flat();
    if (xy.length > GROUP_TILES) return g.map((c) => [c]);
    const w = Math.max(...xy.map((t) => t[0])) - Math.min(...xy.map((t) => t[0])) + 1;
    const h = Math.max(...xy.map((t) => t[1])) - Math.min(...xy.map((t) => t[1])) + 1;
    return w * h > xy.length + 1 ? g.map((c) => [c]) : [g];
  });
}

/** `items` (lists of tiles) in order into `count` runs of about equal tiles, none empty. */
function splitEvenly<T>(items: readonly T[][][], count: number): T[][][][] {
  const size = (i: T[][]) => i.reduce((n, c) => n + c.length, 0);
  const total = items.reduce((n, i) => n + size(i), 0);
  const out: T[][][][] = [];
  let i = 0,
    taken = 0;
  for (let g = 0; g < count; g++) {
    const run: T[][][] = [];
    const end = (total * (g + 1)) / count;
    // Items while the run gets closer to its share, leaving one at least for each run after.
    while (
      i < items.length &&
      items.length - i > count - g - 1 &&
      (run.length === 0 ||
        g === count - 1 ||
        Math.abs(taken + size(items[i]!) - end) <= Math.abs(taken - end))
    ) {
      taken += size(items[i]!);
      run.push(items[i++]!);
    }
    out.push(run);
  }
  return out;
}

/**
 * The tiles of one image and level asked for together (REGION_GATHER_MS) with one urgency, then
 * their regions.
 */
interface Batch {
  /** Tiles ("x,y") asked for and still wanted while it gathers, in the order asked for. */
  ids: Set<string>;
  /** Made after every batch with a lower number (TileService.batchCount). */
  number: number;
  started: boolean;
  /** When its first tile was asked for (epoch ms). */
  at: number;
  /** Settles when it stops gathering and its regions are made (partOf set). */
  start: Promise<void>;
  /** Each tile's region once started. */
  partOf: Map<string, Rendering>;
}

/** A tile being made, shared by every request for it (TileService.tileKey). */
interface Rendering {
  done: Promise<void>;
  /** A deep render of several tiles: each tile's own, settled once it is made (before `done`). */
  ready?: Map<string, Promise<void>>;
  /** Requests waiting for it; when the last one is cancelled, `cancel` drops a queued render. */
  waiters: number;
  cancel: AbortController;
  /** A deep render of several tiles: those still wanted ("x,y"; a cancelled tile leaves it). */
  wanted?: Set<string>;
}

export interface TilesJson {
  tile_size: number;
  width: number;
  height: number;
  native_zoom: number;
  max_zoom: number;
}

export interface TileServiceOptions {
  /** What a stored image was made from (tiles-source.ts); without it no image goes deeper. */
  resolve?: (imageKey: string) => Promise<DeepSource | null>;
  renderer?: DeepTileRenderer;
  /** Disk bound of the stored tiles, bytes (tile-cache.ts DEFAULT_TILE_CACHE_BYTES). */
  cacheMaxBytes?: number;
  /** Decoded stored images kept for cutting tiles. Default 3. */
  maxDecoded?: number;
  /** Told where deep tiles' time goes (TileTraceEvent); off when absent. */
  trace?: (e: TileTraceEvent) => void;
}

interface Described {
  width: number;
  height: number;
  source: DeepSource | null;
}

/** Descriptions kept (image key → size and source): a viewer asks for many tiles of few images. */
const MAX_DESCRIBED = 64;

export class TileService {
  private decoded = new Map<string, Promise<DecodedImage>>();
  private rendering = new Map<string, Rendering>();
  /** Deep tile batches (deepRegion) by image and level: the latest, gathering or being made. */
  private batches = new Map<string, Batch>();
  /** Deep tile batches made so far: a newer batch's renders go before an older one's. */
  private batchCount = 0;
  /** The most urgent request's urgency seen (urgencyOf): less urgent ones are held (poolSlot). */
  private mostUrgent = DEFAULT_URGENCY;
  /** Renders of less urgent requests handed to the pool and not returned yet. */
  private lessUrgentInPool = 0;
  /** Renders of less urgent requests waiting for a place in the pool (poolSlot), by rank. */
  private lessUrgentWaiting: { rank: readonly number[]; go: () => void }[] = [];
  private described = new Map<string, Promise<Described>>();
  /** Deep tiles made and being stored, by key (storeFresh, freshTile). */
  private fresh = new Map<string, { buf: Buffer; sha256: string; mtime: Date }>();
  private storing = new Set<Promise<void>>();
  /** Page kind by file bytes and page: asked of the pool once per page. */
  private kinds = new Map<string, Promise<PageKind>>();
  readonly cache: TileCache;
  private readonly maxDecoded: number;

  constructor(
    private readonly objects: ObjectStore,
    private readonly opts: TileServiceOptions = {},
  ) {
    this.cache = new TileCache(objects, opts.cacheMaxBytes);
    this.maxDecoded = opts.maxDecoded ?? 3;
  }

  /** The pyramid of `imageKey` (contract §5 tiles.json); 404 when the image is gone. */
  async tilesJson(imageKey: string): Promise<TilesJson> {
    const g = await this.geometry(await this.describe(imageKey), true);
    return {
      tile_size: TILE_SIZE,
      width: g.width,
      height: g.height,
      native_zoom: g.nativeZoom,
      max_zoom: g.maxZoom,
    };
  }

  /**
   * Ensures tile (z, x, y) of `imageKey` is stored and returns its key; 404 outside the pyramid.
   * `signal`: the request was cancelled (the viewer moved on). Requests for the same tile share one
   * render; once every one of them is cancelled, a deep render still queued in the pool is dropped
   * (one already running finishes and is stored). `urgency`: the request's (urgencyOf; lower
   * first): a deep tile's render waits for those of more urgent requests.
   */
  async tileKey(
    imageKey: string,
    z: number,
    x: number,
    y: number,
    signal?: AbortSignal,
    urgency: number = DEFAULT_URGENCY,
  ): Promise<string> {
    signal?.throwIfAborted();
    void this.cache.load();
    const at = Date.now();
    this.mostUrgent = Math.min(this.mostUrgent, urgency);
    const key = imageTileKey(imageKey, z, x, y);
    // A tile being made is joined at once (before any await: a request cancelled right after
    // arriving never leaves the render to others by mistake).
    let job = this.rendering.get(key);
    if (!job && (this.fresh.has(key) || (await this.objects.stat(key)))) {
      this.cache.touch(key);
      this.traceTile(imageKey, z, x, y, at, true, false);
      return key;
    }
    job ??= this.rendering.get(key);
    if (!job) {
      const cancel = new AbortController();
      const made: Rendering = {
        waiters: 0,
        cancel,
        done: this.render(imageKey, key, z, x, y, cancel.signal, urgency).finally(() => {
          if (this.rendering.get(key) === made) this.rendering.delete(key);
        }),
      };
      made.done.catch(() => undefined);
      this.rendering.set(key, made);
      job = made;
    }
    const shared = job;
    shared.waiters++;
    let waiting = true;
    const leave = () => {
      if (!waiting) return;
      waiting = false;
      if (--shared.waiters > 0 || !signal?.aborted) return;
      // The last one waiting is gone: a later request starts afresh.
      if (this.rendering.get(key) === shared) this.rendering.delete(key);
      shared.cancel.abort(signal.reason);
    };
    signal?.addEventListener('abort', leave, { once: true });
    try {
      await shared.done;
    } catch (e) {
      this.traceTile(imageKey, z, x, y, at, false, signal?.aborted === true);
      throw e;
    } finally {
      signal?.removeEventListener('abort', leave);
      leave();
    }
    this.traceTile(imageKey, z, x, y, at, false, false);
    return key;
  }

  /** Reports a request for a deep tile (TileTraceEvent `tile`) when traced. */
  private traceTile(
    image: string,
    z: number,
    x: number,
    y: number,
    at: number,
    stored: boolean,
    cancelled: boolean,
  ): void {
    const trace = this.opts.trace;
    if (!trace) return;
    const d = this.described.get(image);
    // Only deep tiles (past the stored image's own resolution): those are the ones rendered.
    if (!d) return;
    void d.then(
      (desc) => {
        if (z <= tileGeometry(desc.width, desc.height).nativeZoom) return;
        const key = imageTileKey(image, z, x, y);
        trace({ ev: 'tile', key, image, z, x, y, at, end: Date.now(), stored, cancelled });
      },
      () => undefined,
    );
  }

  /** Reports the HTTP side of a tile's request (TileTraceEvent `served`) when traced. */
  traceServed(key: string, z: number, at: number, status: number, priority?: string): void {
    this.opts.trace?.({
      ev: 'served',
      key,
      z,
      at,
      end: Date.now(),
      status,
      ...(priority === undefined ? {} : { priority }),
    });
  }

  /** Whether the service reports where tiles' time goes (TileServiceOptions.trace). */
  get traced(): boolean {
    return this.opts.trace !== undefined;
  }

  private async render(
    imageKey: string,
    key: string,
    z: number,
    x: number,
    y: number,
    signal: AbortSignal,
    urgency: number,
  ): Promise<void> {
    const described = await this.describe(imageKey);
    const { source } = described;
    // Only a tile past the image's own resolution waits for the page's kind (a pool task).
    const g = await this.geometry(
      described,
      z > tileGeometry(described.width, described.height).nativeZoom,
    );
    const level = levelOf(g, z, x, y);
    if (!level) {
      throw new ApiError(
        'not_found',
        `Tile ${z}/${x}/${y} is outside this image's pyramid (levels 0–${g.maxZoom}${g.maxZoom > g.nativeZoom ? `, ${g.nativeZoom} at the image's own resolution` : ''}; tiles.json gives each level's size).`,
      );
    }
    if (z > g.nativeZoom) return this.deepRegion(imageKey, source!, g, z, x, y, signal, urgency);
    const webp = await renderTile(await this.decode(imageKey), z, x, y);
    await this.store(key, webp);
  }

  private async store(key: string, webp: Uint8Array): Promise<void> {
    const buf = Buffer.from(webp.buffer, webp.byteOffset, webp.byteLength);
    await this.objects.put(key, buf, { contentType: 'image/webp' });
    await this.cache.add(key, buf.byteLength);
  }

  /**
   * Makes deep tile (z, x, y) with the tiles of its level asked for with it: it joins the batch of
   * its image and level still gathering (else starts one), and is made by its region of the batch
   * (regionsOf). `signal` is the tile's: once aborted the tile's wait ends; a tile cancelled while
   * the batch gathers is left out of it, a region whose every tile was cancelled is dropped if
   * still queued in the pool (one already rendering finishes and is stored), and one with some
   * tiles cancelled before it starts makes only the others (RenderOrder.wanted).
   *
   * The order the pool runs renders in (RenderOrder.rank): the more urgent requests' first (the
   * viewer's view tiles before its prefetch: `urgency`, one batch per urgency), then the newest
   * batch's (the zoom step on screen now), then in the order its tiles were asked for (the viewer
   * asks for the tiles nearest the view's centre first): a render's place is its first tile's.
   */
  private async deepRegion(
    imageKey: string,
    source: DeepSource,
    g: TileGeometry,
    z: number,
    x: number,
    y: number,
    signal: AbortSignal,
    urgency: number,
  ): Promise<void> {
    signal.throwIfAborted();
    const bkey = `${imageKey}\n${z}\n${urgency}`;
    const id = `${x},${y}`;
    let batch = this.batches.get(bkey);
    if (!batch || batch.started) {
      const made: Batch = {
        ids: new Set(),
        number: ++this.batchCount,
        started: false,
        at: Date.now(),
        partOf: new Map(),
        start: new Promise<void>((r) => setTimeout(r, REGION_GATHER_MS)).then(() => {
          made.started = true;
          if (this.batches.get(bkey) === made) this.batches.delete(bkey);
          const asked = [...made.ids];
          const place = new Map(asked.map((t, i) => [t, i]));
          const tiles = asked.map((t) => t.split(',').map(Number) as [number, number]);
          // A renderer that does not say how many renders it runs at once: each cell alone.
          const workers = this.opts.renderer?.workers ?? Infinity;
          for (const cells of groupsOf(regionsOf(tiles), workers)) {
            const cancel = new AbortController();
            const ids = cells.flat().map(([px, py]) => `${px},${py}`);
            const wanted = new Set(ids);
            const rank = [urgency, -made.number, Math.min(...ids.map((t) => place.get(t) ?? 0))];
            // Each tile's own promise, settled when its cell's pixels come back (onTiles).
            const made1 = new Map<string, () => void>();
            const ready = new Map<string, Promise<void>>();
            for (const t of ids) ready.set(t, new Promise<void>((r) => made1.set(t, r)));
            const region: Rendering = {
              waiters: ids.length,
              cancel,
              ready,
              wanted,
              done: this.renderRegion(
                imageKey,
                source,
                g,
                z,
                cells,
                cancel.signal,
                made.at,
                (x, y) => made1.get(`${x},${y}`)?.(),
                { rank, wanted },
              ),
            };
            region.done.catch(() => undefined);
            for (const t of ids) made.partOf.set(t, region);
          }
        }),
      };
      this.batches.set(bkey, made);
      batch = made;
    }
    batch.ids.add(id);
    const shared = batch;
    let region: Rendering | undefined;
    let waiting = true;
    // Leaves the batch (while it gathers) or the tile's region; the region's last one gone (every
    // tile of it cancelled) drops its render if still queued.
    const leave = () => {
      if (!waiting) return;
      waiting = false;
      if (!shared.started) {
        shared.ids.delete(id);
        return;
      }
      region ??= shared.partOf.get(id);
      if (!region || !signal.aborted) {
        if (region) region.waiters--;
        return;
      }
      // Not made if its render has not started (RenderOrder.wanted).
      region.wanted?.delete(id);
      if (--region.waiters === 0) region.cancel.abort(signal.reason);
    };
    // The tile's wait ends as soon as its own request is cancelled (as a tile's render does when
    // the pool drops it), while its region goes on for the other tiles still wanted.
    await new Promise<void>((resolve, reject) => {
      const cancelled = () => {
        leave();
        reject(signal.reason);
      };
      signal.addEventListener('abort', cancelled, { once: true });
      const fail = (e: unknown) => {
        signal.removeEventListener('abort', cancelled);
        leave();
        reject(e);
      };
      shared.start.then(() => {
        if (!waiting) return;
        region = shared.partOf.get(id)!;
        // The tile's own pixels (a render of several cells sends each cell's when made), else
        // the whole render.
        const own = region.ready?.get(id);
        (own ? Promise.race([own, region.done]) : region.done).then(() => {
          signal.removeEventListener('abort', cancelled);
          leave();
          resolve();
        }, fail);
      }, fail);
    });
  }

  /**
   * Deep tiles of level z (one render's: its cells of tiles), rendered by the pool in one task
   * and stored.
   */
  private async renderRegion(
    imageKey: string,
    source: DeepSource,
    g: TileGeometry,
    z: number,
    cells: [number, number][][],
    signal: AbortSignal,
    at: number,
    made?: (x: number, y: number) => void,
    place?: { rank: readonly number[]; wanted: ReadonlySet<string> },
  ): Promise<void> {
    const queued = Date.now();
    let worker: DeepTimings | null = null;
    const onTimings = (t: DeepTimings) => (worker = t);
    const tiles: { x: number; y: number; cut: TileCut }[] = [];
    const sizes: number[] = [];
    let scale = 1;
    for (const xy of cells) {
      let n = 0;
      for (const [x, y] of [...xy].sort((p, q) => p[1] - q[1] || p[0] - q[0])) {
        const level = levelOf(g, z, x, y);
        if (!level) continue;
        scale = level.scale;
        tiles.push({ x, y, cut: tileRect(level, x, y) });
        n++;
      }
      if (n > 0) sizes.push(n);
    }
    const r = this.opts.renderer!;
    const order: RenderOrder | undefined = place && {
      rank: place.rank,
      wanted: () => tiles.map((t) => place.wanted.has(`${t.x},${t.y}`)),
    };
    // Tiles made before the render ends (one cell of several at a time): served and stored at once.
    const early = new Map<number, Promise<void>>();
    const onTiles = (first: number, ws: Uint8Array[]) =>
      ws.forEach((w, i) => {
        const t = tiles[first + i];
        if (!t || early.has(first + i)) return;
        early.set(first + i, this.storeFresh(imageTileKey(imageKey, z, t.x, t.y), w));
        made?.(t.x, t.y);
      });
    let webps: (Uint8Array | undefined)[];
    const release = await this.poolSlot(place?.rank, signal);
    try {
      if (source.kind === 'page') {
        const o = source.origin;
        webps = await r.page(
          {
            source: source.source,
            scale,
            cuts: tiles.map(({ cut }) => ({
              ...cut,
              left: o.x * scale + cut.left,
              top: o.y * scale + cut.top,
            })),
          },
          signal,
          onTimings,
          order,
        );
      } else {
        webps = await r.overlay(
          {
            a: source.a,
            b: source.b,
            scale,
            aOrigin: source.aOrigin,
            bOrigin: source.bOrigin,
            transform: source.transform,
            tiles: tiles.map((t) => t.cut),
            ...(sizes.length > 1 ? { cells: sizes } : {}),
            kind: source.imageKind,
          },
          signal,
          onTimings,
          onTiles,
          order,
        );
      }
    } finally {
      release();
    }
    const returned = Date.now();
    // The tiles are served from memory at once (freshTile) while they are stored: a store waits for
    // fsyncs, which take 2 ms at the median but up to ~200 ms while other processes write.
    // A tile cancelled before the render started was not made (RenderOrder.wanted).
    const kept = tiles.filter((_, i) => early.has(i) || webps[i]);
    const stored = Promise.all(
      tiles.map((t, i) => {
        const w = webps[i];
        return early.get(i) ?? (w && this.storeFresh(imageTileKey(imageKey, z, t.x, t.y), w));
      }),
    );
    void stored.then(() =>
      this.opts.trace?.({
        ev: 'region',
        image: imageKey,
        z,
        kind: source.kind === 'page' ? 'page' : source.imageKind,
        tiles: kept.map((t) => [t.x, t.y]),
        ...(kept.length < tiles.length
          ? { cut: tiles.filter((t) => !kept.includes(t)).map((t) => [t.x, t.y]) }
          : {}),
        at,
        queued,
        returned,
        end: Date.now(),
        worker,
      }),
    );
  }

  /**
   * A place in the pool for a render of `rank`: at once for the most urgent requests seen (the
   * viewer's view tiles; every request when none says more, as over HTTP/1.1); a less urgent one
   * (its prefetch) waits while renders of less urgent requests hold all but one of the pool's
   * workers, so a view tile arriving finds a worker free or soon free (a running render is never
   * interrupted). Waiting ones go by rank. Resolves to the place's release; rejects when `signal`
   * aborts first.
   */
  private poolSlot(rank: readonly number[] | undefined, signal: AbortSignal): Promise<() => void> {
    if (!rank || rank[0]! <= this.mostUrgent) return Promise.resolve(() => undefined);
    const limit = Math.max(1, (this.opts.renderer?.workers ?? Infinity) - 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.lessUrgentInPool--;
      this.lessUrgentWaiting.shift()?.go();
    };
    if (this.lessUrgentInPool < limit) {
      this.lessUrgentInPool++;
      return Promise.resolve(release);
    }
    signal.throwIfAborted();
    return new Promise((resolve, reject) => {
      const waiter = {
        rank,
        go: () => {
          signal.removeEventListener('abort', onAbort);
          this.lessUrgentInPool++;
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.lessUrgentWaiting.indexOf(waiter);
        if (i >= 0) this.lessUrgentWaiting.splice(i, 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const at = this.lessUrgentWaiting.findIndex((w) => compareRanks(rank, w.rank) < 0);
      this.lessUrgentWaiting.splice(at < 0 ? this.lessUrgentWaiting.length : at, 0, waiter);
    });
  }

  /**
   * Stores a deep tile just made, keeping its bytes in memory (freshTile) until it is stored. A
   * store that fails leaves the tile unstored: the next request for it makes it again.
   */
  private storeFresh(key: string, webp: Uint8Array): Promise<void> {
    const buf = Buffer.from(webp.buffer, webp.byteOffset, webp.byteLength);
    const sha256 = createHash('sha256').update(buf).digest('hex');
    const entry = { buf, sha256, mtime: new Date() };
    this.fresh.set(key, entry);
    const done = this.store(key, buf)
      .catch(() => undefined)
      .finally(() => {
        if (this.fresh.get(key) === entry) this.fresh.delete(key);
        this.storing.delete(done);
      });
    this.storing.add(done);
    return done;
  }

  /**
   * A deep tile made but not stored yet, as the object store would give it (same ETag: the sha256
   * of its bytes), or null: the route serves it from memory instead of waiting for the store.
   */
  freshTile(key: string): StoredObject | null {
    const f = this.fresh.get(key);
    if (!f) return null;
    return {
      key,
      size: f.buf.byteLength,
      sha256: f.sha256,
      etag: `"${f.sha256}"`,
      contentType: 'image/webp',
      mtime: f.mtime,
      stream: (range) =>
        Readable.from([range ? f.buf.subarray(range.start, range.end + 1) : f.buf], {
          objectMode: false,
        }),
    };
  }

  /** Settles once every tile made so far is stored (or failed to be). */
  async whenStored(): Promise<void> {
    while (this.storing.size > 0) await Promise.all([...this.storing]);
  }

  /** The pyramid: with deep levels when `deep` is asked about and the image's pages are vector. */
  private async geometry(d: Described, deep: boolean): Promise<TileGeometry> {
    const vector = deep && d.source !== null && (await this.isVector(d.source));
    return tileGeometry(d.width, d.height, vector ? DEEP_LEVELS : 0);
  }

  /** The image's size and what it was made from (null: nothing deeper than the image). */
  private describe(imageKey: string): Promise<Described> {
    let p = this.described.get(imageKey);
    if (p) {
      this.described.delete(imageKey);
      this.described.set(imageKey, p);
      return p;
    }
    p = (async () => {
      const source = (this.opts.renderer && (await this.opts.resolve?.(imageKey))) || null;
      let width: number, height: number;
      if (source) ({ width, height } = source);
      else ({ width, height } = await this.storedSize(imageKey));
      return { width, height, source };
    })();
    p.catch(() => this.described.delete(imageKey));
    this.described.set(imageKey, p);
    while (this.described.size > MAX_DESCRIBED)
      this.described.delete(this.described.keys().next().value!);
    return p;
  }

  /** Vector pages go deeper; scans keep their own resolution as the deepest level. */
  private async isVector(source: DeepSource): Promise<boolean> {
    const pages = source.kind === 'page' ? [source.source] : [source.a, source.b];
    const kinds = await Promise.all(pages.map((s) => this.pageKind(s)));
    return kinds.every((k) => k === 'vector');
  }

  private pageKind(s: PageSource): Promise<PageKind> {
    const id = `${s.bytesKey}:${s.index}`;
    let p = this.kinds.get(id);
    if (!p) {
      p = this.opts.renderer!.kind(s);
      p.catch(() => this.kinds.delete(id));
      this.kinds.set(id, p);
    }
    return p;
  }

  private async storedSize(imageKey: string): Promise<{ width: number; height: number }> {
    const bytes = await this.read(imageKey);
    const meta = await sharp(bytes, { limitInputPixels: 400_000_000 }).metadata();
    if (!meta.width || !meta.height)
      throw new ApiError('not_found', 'The object behind this URL is not an image.');
    return { width: meta.width, height: meta.height };
  }

  private async read(imageKey: string): Promise<Buffer> {
    const obj = await this.objects.get(imageKey);
    if (!obj) throw new ApiError('not_found', 'The image behind this URL no longer exists.');
    const chunks: Buffer[] = [];
    for await (const c of obj.stream()) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  }

  private decode(imageKey: string): Promise<DecodedImage> {
    let p = this.decoded.get(imageKey);
    if (p) {
      // Refresh its place in the LRU order.
      this.decoded.delete(imageKey);
      this.decoded.set(imageKey, p);
      return p;
    }
    p = this.read(imageKey).then(decodeForTiles);
    p.catch(() => this.decoded.delete(imageKey));
    this.decoded.set(imageKey, p);
    while (this.decoded.size > this.maxDecoded)
      this.decoded.delete(this.decoded.keys().next().value!);
    return p;
  }
}
