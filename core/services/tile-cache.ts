import type { ObjectStore } from '../blobs/object-store';

// The disk bound of the tiles the tile service stores (tiles.service.ts): every tile is a cache
// entry that can be made again, so once their bytes pass `maxBytes` the least recently used are
// deleted. Recency is kept in memory; tiles stored by an earlier run are found by one listing of
// the store on first use (as least recent, in key order), so the bound holds across restarts.

/** Default bound of the tile cache on disk: 2 GiB. */
export const DEFAULT_TILE_CACHE_BYTES = 2 * 1024 ** 3;

/** A key the tile service stores a tile under (blobs/keys.ts imageTileKey). */
export const isTileKey = (key: string) => /\.tiles\/\d+\/\d+\/\d+\.webp$/.test(key);

export class TileCache {
  /** Tile key → bytes, least recently used first (a Map keeps insertion order). */
  private entries = new Map<string, number>();
  private total = 0;
  private loaded: Promise<void> | undefined;
  private evicting: Promise<void> = Promise.resolve();

  constructor(
    private readonly objects: ObjectStore,
    readonly maxBytes: number = DEFAULT_TILE_CACHE_BYTES,
    /** Where tiles live: the listing at first use walks this prefix. */
    private readonly prefix = 'projects/',
  ) {
    if (!(maxBytes > 0))
      throw new RangeError(`Expected a positive tile cache bound, got ${maxBytes}.`);
  }

  /** Bytes and count of the tiles stored, as known (after load()). */
  usage(): { bytes: number; tiles: number } {
    return { bytes: this.total, tiles: this.entries.size };
  }

  /** Finds the tiles already stored (once; later calls wait for the same walk). */
  load(): Promise<void> {
    this.loaded ??= (async () => {
      const found: [string, number][] = [];
      let token: string | null = null;
      do {
        const page = await this.objects.list(this.prefix, {
          limit: 1000,
          direction: 'forward',
          ...(token ? { token } : {}),
        });
        for (const e of page.keys) if (isTileKey(e.key)) found.push([e.key, e.size]);
        token = page.nextToken;
      } while (token);
      // Older than anything used since start: in front of the entries made meanwhile.
      const since = [...this.entries];
      this.entries = new Map();
      this.total = 0;
      for (const [k, n] of [...found, ...since]) this.set(k, n);
      await this.evict();
    })();
    return this.loaded;
  }

  /** A stored tile was used: it becomes the most recent. */
  touch(key: string): void {
    const n = this.entries.get(key);
    if (n === undefined) return;
    this.entries.delete(key);
    this.entries.set(key, n);
  }

  /** A tile was stored: counted as the most recent; the least recent go while over the bound. */
  async add(key: string, bytes: number): Promise<void> {
    this.set(key, bytes);
    await this.evict();
  }

  /** Forgets a tile deleted with its image (no delete issued). */
  forget(key: string): void {
    const n = this.entries.get(key);
    if (n === undefined) return;
    this.entries.delete(key);
    this.total -= n;
  }

  private set(key: string, bytes: number): void {
    this.forget(key);
    this.entries.set(key, bytes);
    this.total += bytes;
  }

  /** Deletes least recent tiles until the bound holds (never the newest one). One run at a time. */
  private evict(): Promise<void> {
    this.evicting = this.evicting.then(async () => {
      while (this.total > this.maxBytes && this.entries.size > 1) {
        const [key, n] = this.entries.entries().next().value!;
        this.entries.delete(key);
        this.total -= n;
        // Already gone (its drawing or overlay was deleted): nothing more to free.
        await this.objects.delete(key).catch(() => false);
      }
    });
    return this.evicting;
  }
}
