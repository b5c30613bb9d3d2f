// Decoded tiles shared by every tiled layer on screen, outside React: fetched and decoded into
// ImageBitmaps off the main thread (createImageBitmap of the blob) and only drawn once decoded, so
// a frame never pays for a decode. An <img> after `img.decode()` was not enough: the 2D canvas
// still decoded it lazily inside the frame's commit (bench/viewer's trace: `Decode LazyPixelRef`
// under `LayerTreeHost::DoUpdateLayers`, 20–70 ms per tile, frames of 100–240 ms on a loaded
// machine).
//
// Each layer (an owner) says which tiles it wants; a fetch no owner wants any more (the view left
// it) is aborted, which also drops the tile's render from the service's queue if it has not
// started. An abort is silent: no owner is told, nothing is marked failed, so it causes no state
// update and no redraw (the tile is fetched again if a later view wants it).
//

// Fetches are scheduled here, not left to the browser. Over HTTP/1.1 Chromium opens at most 6
// connections to a host and every other request (the API's JSON) waits behind tiles that hold
// them: at most `maxInFlight` (5) tile fetches run at once (a connection stays free for the API).
// The service speaks HTTP/2 when the client offers it (ALPN): every request shares one
// connection, so once a landed tile or API response says so (Resource Timing `nextHopProtocol`
// of the tiles' origin: h2 or h3) a step's tiles all go at once (`multiplexed.maxInFlight`) —
// the service then gets them together and renders each 2x2 cell once — and prefetch may use more
// (`multiplexed.maxPrefetchInFlight`). Either way the next one started is the most urgent queued:
//  1. tiles of a view before prefetch (the ring around the view), which starts only when no view
//     tile is queued and holds at most `maxPrefetchInFlight` connections;
//  2. the newest view's tiles first (a zoom step's tiles before those of the step before, which
//     the view may still want: a view left behind releases them);
//  3. in the order asked for (the caller sorts: backdrop that keeps the sheet on screen, then the
//     tiles nearest the viewport's centre);
//  4. with the other queued tiles of its 2x2 cell of the level at once (as many as connections
//     allow): the service renders the tiles of one cell asked for together in one render (api.md
//     §6), and a cell's tiles asked for apart cost a render each.
// Tiles of a view are fetched with priority 'high', prefetch with 'low'.

export type TilePriority = 'high' | 'low' | 'auto';
export type LoadTile = (
  url: string,
  priority: TilePriority,
  signal: AbortSignal,
) => Promise<ImageBitmap>;

/** A layer using tiles: told when a tile it asked for lands or fails (not when one is aborted). */
export interface TileOwner {
  landed(url: string): void;
  failed(url: string): void;
}

interface TileEntry {
  url: string;
  bitmap: ImageBitmap | null;
  /** While its fetch runs: its controller. Null while queued and once here. */
  controller: AbortController | null;
  /** Owners waiting for it (queued or loading). */
  owners: Set<TileOwner>;
  /** Queued: not fetched yet. */
  queued: boolean;
  /** Asked for only as prefetch (a view's request upgrades it). */
  prefetch: boolean;
  /** The request batch that last asked for it (higher: newer view), and its place in it. */
  batch: number;
  seq: number;
}

export async function fetchTileBitmap(
  url: string,
  priority: TilePriority,
  signal: AbortSignal,
): Promise<ImageBitmap> {
  const res = await fetch(url, { priority, signal } as RequestInit);
  if (!res.ok) throw new Error(`tile ${res.status}`);
  return createImageBitmap(await res.blob());
}

export interface TileStoreOptions {
  /** Decoded tiles kept: ~1 MB each (512 px RGBA); several views' worth of every layer. */
  max?: number;
  /** Tile fetches running at once over HTTP/1.1 (6 connections per host in Chromium). */
  maxInFlight?: number;
  /** Of those, prefetch fetches at most. */
  maxPrefetchInFlight?: number;
  /** The same over a multiplexed connection (HTTP/2, HTTP/3): a step's view tiles all at once. */
  multiplexed?: { maxInFlight?: number; maxPrefetchInFlight?: number };
  /**
   * The protocol the browser last used for requests to a URL's origin, when known (default:
   * `nextHopProtocol`, from Resource Timing).
   */
  protocolOf?: (url: string) => string | undefined;
  /** Tiles the service renders together when asked together (default: tileCell). */
  cellOf?: (url: string) => string;
}

/**
 * The service's render cell of a tile URL (`…/tiles/{z}/{x}/{y}.webp?…`): its 2x2 cell of level z
 * (api.md §6: tiles of one 2x2 cell asked for together share one render). Other URLs: their own.
 */
export function tileCell(url: string): string {
  const m = /^(.*\/tiles\/)(\d+)\/(\d+)\/(\d+)(\.[a-z]+)(\?.*)?$/.exec(url);
  if (!m) return url;
  return `${m[1]}${m[2]}/${Number(m[3]) >> 1}/${Number(m[4]) >> 1}${m[6] ?? ''}`;
}

/** Protocols that carry every request on one connection at once. */
const MULTIPLEXED = new Set(['h2', 'h3']);

const hopByOrigin = new Map<string, string>();
let observing = false;

function originOf(url: string): string {
  try {
    return new URL(url, globalThis.location?.href).origin;
  } catch {
    return url;
  }
}

/**
 * The `nextHopProtocol` of the newest resource (fetch, image, API response) loaded from `url`'s
 * origin, from Resource Timing: 'h2', 'http/1.1', …; undefined before any has landed, or where
 * the browser does not say (another origin without Timing-Allow-Origin gives '').
 */
export function nextHopProtocol(url: string): string | undefined {
  if (!observing) observeResources();
  return hopByOrigin.get(originOf(url));
}

function observeResources(): void {
  observing = true;
  if (typeof PerformanceObserver === 'undefined') return;
  const record = (entries: PerformanceEntryList) => {
    for (const e of entries) {
      const p = (e as PerformanceResourceTiming).nextHopProtocol;
      if (p) hopByOrigin.set(originOf(e.name), p);
    }
  };
  try {
    // An observer sees every entry, also once the timeline's buffer (250) is full; `buffered`
    // brings those that landed before (the page's API calls).
    new PerformanceObserver((list) => record(list.getEntries())).observe({
      type: 'resource',
      buffered: true,
    });
  } catch {
    // No Resource Timing here: HTTP/1.1 limits stay.
  }
}

export class TileStore {
  /** Tiles, least recently drawn first (a draw moves its tile to the end). */
  private readonly cache = new Map<string, TileEntry>();
  private readonly failedUrls = new Set<string>();
  private readonly max: number;
  private readonly limits: {
    h1: { inFlight: number; prefetch: number };
    mux: { inFlight: number; prefetch: number };
  };
  private readonly protocolOf: (url: string) => string | undefined;
  /** The connection to the tiles' origin carries requests at once (h2), as last seen. */
  private mux = false;
  private lastUrl: string | null = null;
  private readonly cellOf: (url: string) => string;
  private running = 0;
  private runningPrefetch = 0;
  private batch = 0;
  private batchOpen = false;
  private seq = 0;
  /** Fetches aborted since the store was made (for tests and benches). */
  aborted = 0;
  /** Queued requests dropped unfetched because no view wanted them any more. */
  dropped = 0;

  constructor(
    private readonly load: LoadTile = fetchTileBitmap,
    opts: TileStoreOptions | number = {},
  ) {
    const o = typeof opts === 'number' ? { max: opts } : opts;
    this.max = o.max ?? 320;
    const limits = (inFlight: number, prefetch: number) => {
      const n = Math.max(1, inFlight);
      return { inFlight: n, prefetch: Math.max(1, Math.min(n, prefetch)) };
    };
    this.limits = {
      h1: limits(o.maxInFlight ?? 5, o.maxPrefetchInFlight ?? 4),
      mux: limits(o.multiplexed?.maxInFlight ?? 64, o.multiplexed?.maxPrefetchInFlight ?? 16),
    };
    this.protocolOf = o.protocolOf ?? nextHopProtocol;
    this.cellOf = o.cellOf ?? tileCell;
  }

  /** Tile fetches allowed at once on the connection as last seen. */
  get maxInFlight(): number {
    return (this.mux ? this.limits.mux : this.limits.h1).inFlight;
  }

  private get maxPrefetchInFlight(): number {
    return (this.mux ? this.limits.mux : this.limits.h1).prefetch;
  }

  /** The protocol to the tiles' origin as last seen (undefined before any response landed). */
  get protocol(): string | undefined {
    return this.lastUrl === null ? undefined : this.protocolOf(this.lastUrl);
  }

  bitmap(url: string): ImageBitmap | null {
    return this.cache.get(url)?.bitmap ?? null;
  }

  isReady(url: string): boolean {
    return !!this.cache.get(url)?.bitmap;
  }

  failed(url: string): boolean {
    return this.failedUrls.has(url);
  }

  /** Asked for and not here yet (queued or on its way). */
  loading(url: string): boolean {
    const e = this.cache.get(url);
    return !!e && !e.bitmap;
  }

  /** Its fetch is running (not only queued). */
  fetching(url: string): boolean {
    return !!this.cache.get(url)?.controller;
  }

  /** Tile fetches running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Marks a tile as just drawn (moves it to the end of the eviction order). */
  touch(url: string): void {
    const e = this.cache.get(url);
    if (!e?.bitmap) return;
    this.cache.delete(url);
    this.cache.set(url, e);
  }

  /** Starts loading `url` for `owner` unless it is here, failed, or on its way (then waits too). */
  request(url: string, owner: TileOwner, prefetch: boolean): void {
    this.requestAll([url], owner, prefetch);
  }

  /**
   * Asks for `urls`, most urgent first, for `owner`. Requests made in one task (one React commit's
   * effects) form one batch, newer than every batch before.
   */
  requestAll(urls: readonly string[], owner: TileOwner, prefetch: boolean): void {
    if (!this.batchOpen) {
      this.batch++;
      this.batchOpen = true;
      queueMicrotask(() => (this.batchOpen = false));
    }
    for (const url of urls) {
      this.lastUrl = url;
      if (this.failedUrls.has(url)) continue;
      const have = this.cache.get(url);
      if (have) {
        if (have.bitmap) continue;
        have.owners.add(owner);
        if (have.queued) {
          // Still wanted, by the newest view: its turn moves up.
          if (!prefetch) have.prefetch = false;
          if (!prefetch || have.prefetch) {
            have.batch = this.batch;
            have.seq = this.seq++;
          }
        }
        continue;
      }
      this.cache.set(url, {
        url,
        bitmap: null,
        controller: null,
        owners: new Set([owner]),
        queued: true,
        prefetch,
        batch: this.batch,
        seq: this.seq++,
      });
    }
    this.pump();
  }

  /** The most urgent queued tile that may start now, if any. */
  private next(): TileEntry | null {
    let best: TileEntry | null = null;
    let bestPrefetch: TileEntry | null = null;
    const before = (a: TileEntry, b: TileEntry | null) =>
      !b || a.batch > b.batch || (a.batch === b.batch && a.seq < b.seq);
    for (const e of this.cache.values()) {
      if (!e.queued) continue;
      if (!e.prefetch) {
        if (before(e, best)) best = e;
      } else if (before(e, bestPrefetch)) bestPrefetch = e;
    }
    if (best) return best;
    return this.runningPrefetch < this.maxPrefetchInFlight ? bestPrefetch : null;
  }

  private pump(): void {
    const protocol = this.protocol;
    if (protocol !== undefined) this.mux = MULTIPLEXED.has(protocol);
    while (this.running < this.maxInFlight) {
      const e = this.next();
      if (!e) return;
      this.start(e);
      // Its cell's other queued tiles of the same kind with it, while connections allow.
      const cell = this.cellOf(e.url);
      const mates = [...this.cache.values()]
        .filter((m) => m.queued && m.prefetch === e.prefetch && this.cellOf(m.url) === cell)
        .sort((a, b) => b.batch - a.batch || a.seq - b.seq);
      for (const m of mates) {
        if (this.running >= this.maxInFlight) break;
        if (m.prefetch && this.runningPrefetch >= this.maxPrefetchInFlight) break;
        this.start(m);
      }
    }
  }

  private start(entry: TileEntry): void {
    const { url } = entry;
    const controller = new AbortController();
    const prefetch = entry.prefetch;
    entry.queued = false;
    entry.controller = controller;
    this.running++;
    if (prefetch) this.runningPrefetch++;
    let counted = true;
    const finish = () => {
      if (!counted) return;
      counted = false;
      this.running--;
      if (prefetch) this.runningPrefetch--;
    };
    controller.signal.addEventListener('abort', finish);
    this.load(url, prefetch ? 'low' : 'high', controller.signal).then(
      (bitmap) => {
        finish();
        if (this.cache.get(url) !== entry || controller.signal.aborted) {
          bitmap.close();
          return;
        }
        entry.bitmap = bitmap;
        entry.controller = null;
        const owners = [...entry.owners];
        entry.owners.clear();
        this.evict();
        this.pump();
        for (const o of owners) o.landed(url);
      },
      () => {
        finish();
        // Aborted (the view left the tile) or replaced: nobody is told, nothing is marked.
        if (this.cache.get(url) !== entry || controller.signal.aborted) return;
        this.cache.delete(url);
        this.failedUrls.add(url);
        const owners = [...entry.owners];
        entry.owners.clear();
        this.pump();
        for (const o of owners) o.failed(url);
      },
    );
  }

  /**
   * `owner` wants only the tiles in `keep` now (none when null: it is going away). A tile left
   * that no other owner waits for is forgotten: its fetch aborted, or its queued request dropped.
   */
  release(owner: TileOwner, keep: ReadonlySet<string> | null): void {
    for (const [url, e] of this.cache) {
      if (e.bitmap || !e.owners.has(owner) || keep?.has(url)) continue;
      e.owners.delete(owner);
      if (e.owners.size > 0) continue;
      this.cache.delete(url);
      if (e.controller) {
        e.controller.abort();
        this.aborted++;
      } else this.dropped++;
    }
    this.pump();
  }

  /**
   * Forgets the least recently drawn decoded tiles beyond the cap. Their bitmaps are not closed:
   * a Konva node on screen may still hold one (drawing a closed bitmap throws), and the garbage
   * collector frees those no node holds.
   */
  private evict(): void {
    for (const [url, e] of this.cache) {
      if (this.cache.size <= this.max) break;
      if (e.bitmap) this.cache.delete(url); // a tile still loading belongs to its loader
    }
  }
}

/** The store of the app's viewers. */
export const tileStore = new TileStore();
