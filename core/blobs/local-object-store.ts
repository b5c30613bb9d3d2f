import { randomBytes } from 'node:crypto';
import { createReadStream, type Dirent } from 'node:fs';
import {
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  rmdir,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { type Readable } from 'node:stream';
import { KeyLock } from './key-lock';
import { PutChecker, iterate, toBuffer } from './put-checks';
import {
  type ListDirection,
  type ListEntry,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  ObjectNotFoundError,
  type PutOptions,
  type PutResult,
  type StoredObject,
  type SweepReport,
  type TokenPosition,
  assertValidKey,
  assertValidPrefix,
  listPage,
} from './object-store';

/**
 * Read size of object downloads. With fs's default 64 KiB a multi-MB sheet image reaches the TLS
 * socket in dozens of small writes, each a turn of the HTTP thread's event loop; 256 KiB measured
 * best (reliability/load.ts on a quiet machine, while a set processes: image download p99 55-58 ms
 * at 64 KiB, 38 ms at 256 KiB, 35 ms at 1 MiB, where list throughput fell ~20 %).
 */
const READ_CHUNK = 256 * 1024;

// Local-filesystem object store under `<dataDir>/objects/`.
//
// Layout: one directory per key segment but the last; the last segment `name` owns two kinds of
// file in its directory:
//   `name@meta`      JSON metadata; the COMMIT POINT: the key exists iff this file exists
//   `name@<sha256>`  the bytes of a version (content-addressed, so `localPath` is stable per content)
// `@` is outside the key charset and keys cannot start a segment with a dot, so neither these
// names nor the temp files (`.tmp-*`) nor the trash (`.trash/`) can collide with a key, and a
// key `a` can coexist with a key `a/b` (the directory `a` holds the latter).
//
// A put writes `.tmp-*` in the key's directory while hashing, fsyncs it, then — under an
// in-process per-key lock — renames it to `name@<sha256>`, writes the new metadata to a temp file
// (fsync) and renames it over `name@meta`, fsyncs the directory, and only then unlinks the
// previous version. A crash at any point leaves the old or the new version whole, plus at most
// temp files and an unreferenced version, which `sweepTemp` removes at boot.
//
// Nothing here joins a string into a path before `assertValidKey`/`assertValidPrefix` accepted
// it, and `fsPath` re-checks that the result stays under the root.

const META_SUFFIX = '@meta';
const TEMP_PREFIX = '.tmp-';
const TRASH_DIR = '.trash';
const VERSION_RE = /@([0-9a-f]{64})$/;
const SEGMENT_NAME_RE = /^[a-z0-9_-][a-z0-9_.-]*$/;
/** Metadata reads run this many at a time while listing. */
const LIST_BATCH = 32;

interface Meta {
  v: 1;
  key: string;
  size: number;
  sha256: string;
  contentType?: string;
  /** ISO 8601, when this version was committed. */
  mtime: string;
}

export interface LocalObjectStoreOptions {
  /** The service's data directory; objects live in `<dataDir>/objects/`. */
  dataDir: string;
}

export function createLocalObjectStore(opts: LocalObjectStoreOptions): LocalObjectStore {
  return new LocalObjectStore(opts);
}

export class LocalObjectStore implements ObjectStore {
  /** Absolute path of `<dataDir>/objects`. */
  readonly root: string;
  private readonly keyLock = new KeyLock();
  /** Temp files this instance is writing right now: `sweepTemp` must not take them. */
  private readonly inflight = new Set<string>();

  constructor(opts: LocalObjectStoreOptions) {
    if (typeof opts.dataDir !== 'string' || opts.dataDir.length === 0)
      throw new TypeError('Expected a non-empty path for dataDir.');
    this.root = path.resolve(opts.dataDir, 'objects');
  }

  // --- put ------------------------------------------------------------------------------------

  async put(key: string, source: Buffer | Readable, opts: PutOptions = {}): Promise<PutResult> {
    assertValidKey(key);
    const checker = new PutChecker(opts);
    const { dir, name } = this.locate(key);

    const { fh, tmp } = await this.openTemp(dir);
    let committed = false;
    try {
      for await (const raw of iterate(source)) {
        const chunk = toBuffer(raw);
        if (chunk.length === 0) continue;
        checker.update(chunk);
        await writeAll(fh, chunk);
      }
      const sha256 = checker.finish();
      const size = checker.size;
      await fh.sync();
      await fh.close();
      const meta: Meta = {
        v: 1,
        key,
        size,
        sha256,
        ...(opts.contentType !== undefined ? { contentType: opts.contentType } : {}),
        mtime: new Date().toISOString(),
      };
      await this.withLock(key, () => this.commit(dir, name, tmp, meta));
      committed = true;
      return { key, size, sha256, etag: etagOf(sha256) };
    } finally {
      this.inflight.delete(tmp);
      if (!committed) {
        await fh.close().catch(() => {});
        await unlink(tmp).catch(() => {});
        await this.pruneEmptyDirs(dir);
      }
    }
  }

  async putFile(key: string, filePath: string, opts: PutOptions = {}): Promise<PutResult> {
    const stream = createReadStream(filePath);
    try {
      return await this.put(key, stream, opts);
    } finally {
      stream.destroy();
    }
  }

  /** Moves a finished temp file into place as the key's current version. Runs under the key lock. */
  private async commit(dir: string, name: string, tmp: string, meta: Meta): Promise<void> {
    // Corrupt metadata is overwritten (its version becomes an orphan for sweepTemp).
    const previous = await this.readMeta(path.join(dir, name + META_SUFFIX), meta.key).catch(
      () => null,
    );
    const versionPath = path.join(dir, `${name}@${meta.sha256}`);
    await rename(tmp, versionPath);
    let metaTmp: string | null = null;
    try {
      metaTmp = await this.writeTempFile(dir, JSON.stringify(meta));
      await rename(metaTmp, path.join(dir, name + META_SUFFIX));
    } catch (err) {
      if (metaTmp !== null) await unlink(metaTmp).catch(() => {});
      // Not committed: drop the new version unless it is byte-identical to the current one.
      if (previous?.sha256 !== meta.sha256) await unlink(versionPath).catch(() => {});
      throw err;
    } finally {
      if (metaTmp !== null) this.inflight.delete(metaTmp);
    }
    await fsyncDir(dir);
    // Only now is the old version unreachable; a crash before this unlink leaves an orphan for sweepTemp.
    if (previous !== null && previous.sha256 !== meta.sha256)
      await unlink(path.join(dir, `${name}@${previous.sha256}`)).catch(ignoreEnoent);
  }

  // --- read -----------------------------------------------------------------------------------

  async stat(key: string): Promise<ObjectInfo | null> {
    assertValidKey(key);
    const { dir, name } = this.locate(key);
    const meta = await this.readMeta(path.join(dir, name + META_SUFFIX), key);
    return meta === null ? null : infoOf(meta);
  }

  async get(key: string): Promise<StoredObject | null> {
    assertValidKey(key);
    const { dir, name } = this.locate(key);
    const meta = await this.readMeta(path.join(dir, name + META_SUFFIX), key);
    if (meta === null) return null;
    const file = path.join(dir, `${name}@${meta.sha256}`);
    return {
      ...infoOf(meta),
      stream: (range) => {
        if (range === undefined) return createReadStream(file, { highWaterMark: READ_CHUNK });
        if (
          !Number.isInteger(range.start) ||
          !Number.isInteger(range.end) ||
          range.start < 0 ||
          range.end < range.start
        )
          throw new RangeError(
            `Expected 0 <= start <= end for a byte range but received ${range.start}-${range.end}.`,
          );
        return createReadStream(file, {
          highWaterMark: READ_CHUNK,
          start: range.start,
          end: Math.min(range.end, meta.size - 1),
        });
      },
    };
  }

  async localPath(key: string): Promise<string> {
    assertValidKey(key);
    const { dir, name } = this.locate(key);
    const meta = await this.readMeta(path.join(dir, name + META_SUFFIX), key);
    if (meta === null) throw new ObjectNotFoundError(key);
    return path.join(dir, `${name}@${meta.sha256}`);
  }

  // --- delete ---------------------------------------------------------------------------------

  async delete(key: string): Promise<boolean> {
    assertValidKey(key);
    const { dir, name } = this.locate(key);
    const removed = await this.withLock(key, async () => {
      const metaPath = path.join(dir, name + META_SUFFIX);
      const meta = await this.readMeta(metaPath, key);
      if (meta === null) return false;
      await unlink(metaPath).catch(ignoreEnoent); // the key is gone from here on
      await unlink(path.join(dir, `${name}@${meta.sha256}`)).catch(ignoreEnoent);
      await fsyncDir(dir);
      return true;
    });
    if (removed) await this.pruneEmptyDirs(dir);
    return removed;
  }

  async deletePrefix(prefix: string): Promise<number> {
    assertValidPrefix(prefix);
    if (prefix === '')
      throw new RangeError('Refusing to delete every object: pass a non-empty prefix.');
    if (prefix.endsWith('/')) {
      // A whole folder (a project, a drawing, an overlay): move it aside in one rename so every
      // key under it disappears at once, then remove it at leisure. A crash leaves it in .trash.
      const dir = this.fsPath(prefix.slice(0, -1).split('/'));
      const trash = path.join(this.root, TRASH_DIR, randomBytes(8).toString('hex'));
      await mkdir(path.dirname(trash), { recursive: true });
      try {
        await rename(dir, trash);
      } catch (err) {
        if (isCode(err, 'ENOENT')) return 0;
        throw err;
      }
      await fsyncDir(path.dirname(dir));
      const count = await countMeta(trash);
      await rm(trash, { recursive: true, force: true });
      await this.pruneEmptyDirs(path.dirname(dir));
      return count;
    }
    // A partial segment ("projects/prj_1/fi"): delete key by key.
    let count = 0;
    const keys: string[] = [];
    for await (const k of this.walk(prefix, 'forward', null)) keys.push(k);
    for (const k of keys) if (await this.delete(k)) count++;
    return count;
  }

  // --- list -----------------------------------------------------------------------------------

  list(prefix: string, opts: ListOptions): Promise<ListPage> {
    return listPage(
      prefix,
      opts,
      (pos, direction, n) => this.collect(this.walk(prefix, direction, pos), n),
      (bound, direction) => this.any(this.walk(prefix, direction, bound)),
    );
  }

  /** Reads metadata of walked keys (skipping keys deleted meanwhile) until `n` are found. */
  private async collect(keys: AsyncGenerator<string>, n: number): Promise<ListEntry[]> {
    const out: ListEntry[] = [];
    let batch: string[] = [];
    const flush = async () => {
      const metas = await Promise.all(
        batch.map((k) => {
          const { dir, name } = this.locate(k);
          return this.readMeta(path.join(dir, name + META_SUFFIX), k);
        }),
      );
      for (const m of metas)
        if (m !== null && out.length < n)
          out.push({ key: m.key, size: m.size, etag: etagOf(m.sha256) });
      batch = [];
    };
    for await (const k of keys) {
      batch.push(k);
      if (batch.length >= Math.min(LIST_BATCH, n - out.length)) await flush();
      if (out.length >= n) {
        await keys.return(undefined);
        break;
      }
    }
    if (batch.length > 0) await flush();
    return out;
  }

  private async any(keys: AsyncGenerator<string>): Promise<boolean> {
    for await (const _ of keys) {
      await keys.return(undefined);
      return true;
    }
    return false;
  }

  /**
   * Keys under `prefix` in key order ('forward' ascending, 'backward' descending), strictly
   * beyond `bound` (or also equal when inclusive). Visits only the directories that can hold such
   * keys, so a page costs one readdir per directory on its path, not a walk of the whole prefix.
   */
  private async *walk(
    prefix: string,
    direction: ListDirection,
    bound: TokenPosition | null,
  ): AsyncGenerator<string> {
    const cut = prefix.lastIndexOf('/') + 1;
    const baseKey = prefix.slice(0, cut);
    const baseDir = cut === 0 ? this.root : this.fsPath(baseKey.slice(0, -1).split('/'));
    yield* this.walkDir(baseDir, baseKey, prefix, direction, bound);
  }

  private async *walkDir(
    dir: string,
    dirKey: string,
    prefix: string,
    direction: ListDirection,
    bound: TokenPosition | null,
  ): AsyncGenerator<string> {
    let dirents: Dirent[];
    try {
      dirents = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (isCode(err, 'ENOENT') || isCode(err, 'ENOTDIR')) return;
      throw err;
    }
    // Sort as full keys would sort: a directory's keys all start with "name/", so it sorts as
    // "name/" ('/' sorts after '-' and '.', before digits and letters).
    const items: { sortKey: string; isDir: boolean }[] = [];
    for (const d of dirents) {
      if (!SEGMENT_NAME_RE.test(d.name.replace(/@meta$/, ''))) continue; // temp, trash, foreign files
      if (d.isDirectory()) items.push({ sortKey: `${dirKey}${d.name}/`, isDir: true });
      else if (d.isFile() && d.name.endsWith(META_SUFFIX))
        items.push({ sortKey: dirKey + d.name.slice(0, -META_SUFFIX.length), isDir: false });
    }
    items.sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0));
    if (direction === 'backward') items.reverse();
    const b = bound?.key;
    for (const it of items) {
      const k = it.sortKey;
      if (it.isDir) {
        if (!k.startsWith(prefix) && !prefix.startsWith(k)) continue;
        if (b !== undefined) {
          // Every key in this subtree starts with k; skip the subtree when all of them are on the
          // wrong side of the bound.
          if (direction === 'forward' && b > k && !b.startsWith(k)) continue;
          if (direction === 'backward' && k >= b) continue;
        }
        yield* this.walkDir(
          path.join(dir, k.slice(dirKey.length, -1)),
          k,
          prefix,
          direction,
          bound,
        );
      } else {
        if (!k.startsWith(prefix)) continue;
        if (b !== undefined) {
          const beyond = direction === 'forward' ? k > b : k < b;
          if (!beyond && !(bound!.inclusive && k === b)) continue;
        }
        yield k;
      }
    }
  }

  // --- reconciliation -------------------------------------------------------------------------

  async sweepTemp(): Promise<SweepReport> {
    const report: SweepReport = { tempFiles: 0, orphanVersions: 0, brokenKeys: [], trash: 0 };
    const trash = path.join(this.root, TRASH_DIR);
    try {
      for (const name of await readdir(trash)) {
        await rm(path.join(trash, name), { recursive: true, force: true });
        report.trash++;
      }
    } catch (err) {
      ignoreEnoent(err);
    }
    await this.sweepDir(this.root, '', report);
    return report;
  }

  private async sweepDir(dir: string, dirKey: string, report: SweepReport): Promise<void> {
    let dirents: Dirent[];
    try {
      dirents = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (isCode(err, 'ENOENT')) return;
      throw err;
    }
    const referenced = new Set<string>();
    for (const d of dirents) {
      if (!d.isFile() || !d.name.endsWith(META_SUFFIX)) continue;
      const name = d.name.slice(0, -META_SUFFIX.length);
      const key = dirKey + name;
      if (this.keyLock.has(key)) {
        // Being written right now: keep every version of it.
        for (const v of dirents) if (v.name.startsWith(`${name}@`)) referenced.add(v.name);
        continue;
      }
      let meta: Meta | null;
      try {
        meta = await this.readMeta(path.join(dir, d.name), key);
      } catch {
        meta = null; // unreadable metadata: the key is broken
      }
      const version = meta === null ? null : `${name}@${meta.sha256}`;
      if (version !== null && dirents.some((v) => v.name === version && v.isFile())) {
        referenced.add(version);
      } else {
        await unlink(path.join(dir, d.name)).catch(ignoreEnoent);
        report.brokenKeys.push(key);
      }
    }
    for (const d of dirents) {
      const p = path.join(dir, d.name);
      if (d.isDirectory()) {
        if (d.name.startsWith('.')) continue; // .trash, handled above
        await this.sweepDir(p, `${dirKey}${d.name}/`, report);
        await rmdir(p).catch(() => {}); // only succeeds when empty
      } else if (d.name.startsWith(TEMP_PREFIX)) {
        if (this.inflight.has(p)) continue;
        await unlink(p).catch(ignoreEnoent);
        report.tempFiles++;
      } else if (VERSION_RE.test(d.name) && !referenced.has(d.name)) {
        const key = dirKey + d.name.replace(VERSION_RE, '');
        if (this.keyLock.has(key)) continue;
        await unlink(p).catch(ignoreEnoent);
        report.orphanVersions++;
      }
    }
  }

  // --- paths and helpers ----------------------------------------------------------------------

  /** Directory and last segment of a validated key. */
  private locate(key: string): { dir: string; name: string } {
    const segments = key.split('/');
    const name = segments.pop()!;
    return { dir: this.fsPath(segments), name };
  }

  /** Joins validated key segments under the root, and proves the result did not leave it. */
  private fsPath(segments: string[]): string {
    const p = path.join(this.root, ...segments);
    if (p !== this.root && !p.startsWith(this.root + path.sep))
      throw new Error('Object path escaped the store root; key validation has a bug.');
    return p;
  }

  /** Creates a temp file in `dir` (creating `dir`); retries when a concurrent prune removed `dir`. */
  private async openTemp(dir: string): Promise<{ fh: FileHandle; tmp: string }> {
    for (let attempt = 0; ; attempt++) {
      await mkdir(dir, { recursive: true });
      const tmp = path.join(dir, TEMP_PREFIX + randomBytes(8).toString('hex'));
      try {
        const fh = await open(tmp, 'wx', 0o644);
        this.inflight.add(tmp);
        return { fh, tmp };
      } catch (err) {
        if (!isCode(err, 'ENOENT') || attempt >= 5) throw err;
      }
    }
  }

  /** Writes `data` to a fresh, fsynced temp file in `dir`; the caller renames it. */
  private async writeTempFile(dir: string, data: string): Promise<string> {
    const { fh, tmp } = await this.openTemp(dir);
    try {
      await writeAll(fh, Buffer.from(data, 'utf8'));
      await fh.sync();
    } catch (err) {
      await fh.close().catch(() => {});
      await unlink(tmp).catch(() => {});
      this.inflight.delete(tmp);
      throw err;
    }
    await fh.close();
    return tmp;
  }

  private async readMeta(metaPath: string, key: string): Promise<Meta | null> {
    let text: string;
    try {
      text = await readFile(metaPath, 'utf8');
    } catch (err) {
      if (isCode(err, 'ENOENT') || isCode(err, 'ENOTDIR')) return null;
      throw err;
    }
    const m = JSON.parse(text) as Partial<Meta>;
    if (
      m.v !== 1 ||
      m.key !== key ||
      typeof m.size !== 'number' ||
      typeof m.sha256 !== 'string' ||
      !/^[0-9a-f]{64}$/.test(m.sha256) ||
      typeof m.mtime !== 'string'
    )
      throw new Error(`Corrupt object metadata for key '${key}'.`);
    return m as Meta;
  }

  /** Removes `dir` and its parents while empty, up to (not including) the root. */
  private async pruneEmptyDirs(dir: string): Promise<void> {
    let d = dir;
    while (d !== this.root && d.startsWith(this.root + path.sep)) {
      try {
        await rmdir(d);
      } catch {
        return; // not empty (or gone): stop
      }
      d = path.dirname(d);
    }
  }

  /** Serializes commits and deletions of one key within this process. */
  private withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.keyLock.run(key, fn);
  }
}

// --- module helpers -----------------------------------------------------------------------------

export const etagOf = (sha256: string): string => `"${sha256}"`;

export { PUT_SLICE_BYTES } from './put-checks';

function infoOf(m: Meta): ObjectInfo {
  return {
    key: m.key,
    size: m.size,
    sha256: m.sha256,
    etag: etagOf(m.sha256),
    contentType: m.contentType,
    mtime: new Date(m.mtime),
  };
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    off += bytesWritten;
  }
}

/** Makes a rename in `dir` durable. Directories cannot be fsynced on Windows; skip there. */
async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function countMeta(dir: string): Promise<number> {
  let n = 0;
  let dirents: Dirent[];
  try {
    dirents = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const d of dirents) {
    if (d.isDirectory()) n += await countMeta(path.join(dir, d.name));
    else if (d.name.endsWith(META_SUFFIX)) n++;
  }
  return n;
}

function isCode(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}

function ignoreEnoent(err: unknown): void {
  if (!isCode(err, 'ENOENT')) throw err;
}
