import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, stat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

// A bounded on-disk cache of object bytes, for pixel work that needs a local file (sharp, pdfium,
// pdfjs read paths). Used by S3ObjectStore.localPath.
//
// Entries are named by the SHA-256 of their bytes (`<dir>/<sha256>`): a name never changes
// content, so there is nothing to invalidate, and two keys holding the same bytes share one file.
// A download goes to a temp file (`.tmp-*`), is hashed on the way and renamed into place only when
// the hash matches, so a reader never sees a partial entry.
//
// The bound is on bytes. After each insertion the least recently used entries go until the total
// fits, except entries handed out within the last `pinMs` (a caller may not have opened its path
// yet; once it has, Unix keeps the unlinked file readable through the open handle). So the cache
// may overshoot its bound while more than `maxBytes` were handed out within `pinMs`, and shrinks
// back at the next insertion after that.

export interface LocalFileCacheOptions {
  dir: string;
  /** Most bytes kept on disk (soft: see the header). */
  maxBytes: number;
  /** An entry handed out within this many ms is never evicted. Default 10 minutes. */
  pinMs?: number;
  /** Clock (tests). */
  now?: () => number;
}

interface Entry {
  size: number;
  lastUsed: number;
}

export class CacheIntegrityError extends Error {
  constructor(expected: string, got: string) {
    super(`Downloaded bytes hash to ${got}, not the expected ${expected}.`);
    this.name = 'CacheIntegrityError';
  }
}

const SHA_RE = /^[0-9a-f]{64}$/;
const TEMP_PREFIX = '.tmp-';

export class LocalFileCache {
  readonly dir: string;
  readonly maxBytes: number;
  private readonly pinMs: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<string>>();
  private total = 0;
  private ready: Promise<void> | null = null;

  constructor(opts: LocalFileCacheOptions) {
    if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 0)
      throw new RangeError(
        `Expected a non-negative integer for maxBytes but received ${opts.maxBytes}.`,
      );
    this.dir = path.resolve(opts.dir);
    this.maxBytes = opts.maxBytes;
    this.pinMs = opts.pinMs ?? 10 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** Bytes currently on disk. */
  get size(): number {
    return this.total;
  }

  has(sha256: string): boolean {
    return this.entries.has(sha256);
  }

  /**
   * Path of the entry for `sha256`, downloading it with `fetch` first when absent. Concurrent
   * calls for one hash share one download. `fetch` returns the bytes as a stream.
   */
  async path(sha256: string, fetch: () => Promise<Readable>): Promise<string> {
    if (!SHA_RE.test(sha256)) throw new TypeError(`Expected a sha256 hex digest, got '${sha256}'.`);
    await this.init();
    const hit = this.entries.get(sha256);
    const file = path.join(this.dir, sha256);
    if (hit) {
      hit.lastUsed = this.now();
      // Refresh the time on disk too, so that a restart keeps the recently used entries.
      await utimes(file, new Date(), new Date()).catch(() => {});
      return file;
    }
    const pending = this.loading.get(sha256);
    if (pending) return pending;
    const p = this.download(sha256, fetch).finally(() => this.loading.delete(sha256));
    this.loading.set(sha256, p);
    return p;
  }

  private async download(sha256: string, fetch: () => Promise<Readable>): Promise<string> {
    const tmp = path.join(this.dir, TEMP_PREFIX + randomBytes(8).toString('hex'));
    const hash = createHash('sha256');
    let size = 0;
    try {
      const source = await fetch();
      await pipeline(
        source,
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const c of chunks) {
            hash.update(c);
            size += c.length;
            yield c;
          }
        },
        createWriteStream(tmp, { flags: 'wx' }),
      );
      const got = hash.digest('hex');
      if (got !== sha256) throw new CacheIntegrityError(sha256, got);
      const file = path.join(this.dir, sha256);
      await rename(tmp, file);
      this.entries.set(sha256, { size, lastUsed: this.now() });
      this.total += size;
      await this.evict(sha256);
      return file;
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw err;
    }
  }

  /** Drops least recently used entries, never `keep` nor one handed out within pinMs. */
  private async evict(keep: string): Promise<void> {
    if (this.total <= this.maxBytes) return;
    const cutoff = this.now() - this.pinMs;
    const candidates = [...this.entries]
      .filter(([sha, e]) => sha !== keep && e.lastUsed < cutoff)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [sha, e] of candidates) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(sha);
      this.total -= e.size;
      await unlink(path.join(this.dir, sha)).catch(() => {});
    }
  }

  /** Reads what an earlier run left (entries by their file times) and removes its temp files. */
  private init(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const found: [string, Entry][] = [];
      for (const name of await readdir(this.dir)) {
        const p = path.join(this.dir, name);
        if (name.startsWith(TEMP_PREFIX)) {
          await unlink(p).catch(() => {});
          continue;
        }
        if (!SHA_RE.test(name)) continue;
        const st = await stat(p).catch(() => null);
        if (!st?.isFile()) continue;
        // Left by an earlier run: evictable at once, oldest first.
        found.push([name, { size: st.size, lastUsed: st.mtimeMs - this.pinMs }]);
      }
      found.sort((a, b) => a[1].lastUsed - b[1].lastUsed);
      for (const [sha, e] of found) {
        this.entries.set(sha, e);
        this.total += e.size;
      }
      if (this.total > this.maxBytes) await this.evict('');
    })();
    return this.ready;
  }
}
