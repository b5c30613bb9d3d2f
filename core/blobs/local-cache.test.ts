import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CacheIntegrityError, LocalFileCache } from './local-cache';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let dir: string;
let t = 1_000_000;
const now = () => t;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'blueline-cache-'));
  t = 1_000_000;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function source(b: Buffer, counter?: { n: number }) {
  return async () => {
    if (counter) counter.n++;
    return Readable.from([b.subarray(0, 3), b.subarray(3)]);
  };
}

describe('LocalFileCache', () => {
  it('downloads once per hash, even for concurrent callers, and serves the file after', async () => {
    const cache = new LocalFileCache({ dir, maxBytes: 1000, pinMs: 0, now });
    const b = Buffer.from('some bytes of a sheet');
    const calls = { n: 0 };
    const [p1, p2] = await Promise.all([
      cache.path(sha(b), source(b, calls)),
      cache.path(sha(b), source(b, calls)),
    ]);
    expect(p1).toBe(path.join(dir, sha(b)));
    expect(p2).toBe(p1);
    expect(await cache.path(sha(b), source(b, calls))).toBe(p1);
    expect(calls.n).toBe(1);
    expect(await readFile(p1)).toEqual(b);
    expect(cache.size).toBe(b.length);
  });

  it('evicts the least recently used entries beyond the bound', async () => {
    const cache = new LocalFileCache({ dir, maxBytes: 250, pinMs: 0, now });
    const bufs = [1, 2, 3].map((i) => Buffer.alloc(100, i));
    for (const b of bufs) {
      t += 10;
      await cache.path(sha(b), source(b));
    }
    // 300 bytes > 250: the oldest (1) went.
    expect(cache.has(sha(bufs[0]!))).toBe(false);
    expect(cache.size).toBe(200);
    t += 10;
    await cache.path(sha(bufs[1]!), source(bufs[1]!)); // 2 is now the most recent
    t += 10;
    await cache.path(sha(bufs[0]!), source(bufs[0]!)); // back in: 3 (least recent) goes
    expect(cache.has(sha(bufs[2]!))).toBe(false);
    expect(cache.has(sha(bufs[1]!))).toBe(true);
    expect((await readdir(dir)).sort()).toEqual([sha(bufs[0]!), sha(bufs[1]!)].sort());
  });

  it('never evicts an entry handed out within pinMs (the bound is soft meanwhile)', async () => {
    const cache = new LocalFileCache({ dir, maxBytes: 150, pinMs: 1000, now });
    const a = Buffer.alloc(100, 1);
    const b = Buffer.alloc(100, 2);
    await cache.path(sha(a), source(a));
    t += 500;
    await cache.path(sha(b), source(b));
    expect(cache.size).toBe(200); // a is pinned
    t += 600; // a is 1100 ms old now
    const c = Buffer.alloc(10, 3);
    await cache.path(sha(c), source(c));
    expect(cache.has(sha(a))).toBe(false);
    expect(cache.has(sha(b))).toBe(true);
    expect(cache.size).toBe(110);
  });

  it('refuses bytes of another hash and leaves no file', async () => {
    const cache = new LocalFileCache({ dir, maxBytes: 1000, now });
    const b = Buffer.from('expected');
    await expect(cache.path(sha(b), source(Buffer.from('something else')))).rejects.toBeInstanceOf(
      CacheIntegrityError,
    );
    expect(await readdir(dir)).toEqual([]);
    expect(cache.size).toBe(0);
    await expect(
      cache.path(sha(b), async () => {
        throw new Error('storage down');
      }),
    ).rejects.toThrow('storage down');
    expect(await readdir(dir)).toEqual([]);
  });

  it('adopts entries of an earlier run, drops its temp files and applies the bound', async () => {
    const keep = Buffer.alloc(100, 1);
    const old = Buffer.alloc(100, 2);
    await writeFile(path.join(dir, sha(old)), old);
    await new Promise((r) => setTimeout(r, 20));
    await writeFile(path.join(dir, sha(keep)), keep);
    await writeFile(path.join(dir, '.tmp-abc'), 'partial');
    await writeFile(path.join(dir, 'foreign.txt'), 'not ours');
    const cache = new LocalFileCache({ dir, maxBytes: 150 });
    const calls = { n: 0 };
    expect(await cache.path(sha(keep), source(keep, calls))).toBe(path.join(dir, sha(keep)));
    expect(calls.n).toBe(0);
    expect(cache.has(sha(old))).toBe(false); // the older file went to fit 150 bytes
    expect((await readdir(dir)).sort()).toEqual(['foreign.txt', sha(keep)].sort());
  });
});
