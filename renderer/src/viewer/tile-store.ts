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

export type TilePriority = 'low' | 'auto';
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
  bitmap: ImageBitmap | null;
  /** While loading: the fetch's controller and the owners waiting for it. */
  controller: AbortController | null;
  owners: Set<TileOwner>;
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

export class TileStore {
  /** Tiles, least recently drawn first (a draw moves its tile to the end). */
  private readonly cache = new Map<string, TileEntry>();
  private readonly failedUrls = new Set<string>();
  /** Fetches aborted since the store was made (for tests and benches). */
  aborted = 0;

  constructor(
    private readonly load: LoadTile = fetchTileBitmap,
    /** Decoded tiles kept: ~1 MB each (512 px RGBA); several views' worth of every layer. */
    private readonly max = 320,
  ) {}

  bitmap(url: string): ImageBitmap | null {
    return this.cache.get(url)?.bitmap ?? null;
  }

  isReady(url: string): boolean {
    return !!this.cache.get(url)?.bitmap;
  }

  failed(url: string): boolean {
    return this.failedUrls.has(url);
  }

  loading(url: string): boolean {
    const e = this.cache.get(url);
    return !!e && !e.bitmap;
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
    if (this.failedUrls.has(url)) return;
    const have = this.cache.get(url);
    if (have) {
      if (!have.bitmap) have.owners.add(owner);
      return;
    }
    const controller = new AbortController();
    const entry: TileEntry = { bitmap: null, controller, owners: new Set([owner]) };
    this.cache.set(url, entry);
    // Prefetched tiles yield to the tiles of the view (browser fetch priority).
    this.load(url, prefetch ? 'low' : 'auto', controller.signal).then(
      (bitmap) => {
        if (this.cache.get(url) !== entry || controller.signal.aborted) {
          bitmap.close();
          return;
        }
        entry.bitmap = bitmap;
        entry.controller = null;
        const owners = [...entry.owners];
        entry.owners.clear();
        this.evict();
        for (const o of owners) o.landed(url);
      },
      () => {
        // Aborted (the view left the tile) or replaced: nobody is told, nothing is marked.
        if (this.cache.get(url) !== entry || controller.signal.aborted) return;
        this.cache.delete(url);
        this.failedUrls.add(url);
        const owners = [...entry.owners];
        entry.owners.clear();
        for (const o of owners) o.failed(url);
      },
    );
  }

  /**
   * `owner` wants only the tiles in `keep` now (none when null: it is going away). A fetch of a
   * tile left that no other owner waits for is aborted and forgotten.
   */
  release(owner: TileOwner, keep: ReadonlySet<string> | null): void {
    for (const [url, e] of this.cache) {
      if (e.bitmap || !e.owners.has(owner) || keep?.has(url)) continue;
      e.owners.delete(owner);
      if (e.owners.size > 0) continue;
      this.cache.delete(url);
      e.controller?.abort();
      this.aborted++;
    }
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
