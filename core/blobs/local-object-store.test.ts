import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../domain/errors';
import { LocalObjectStore, PUT_SLICE_BYTES } from './local-object-store';
import { InvalidKeyError, ObjectNotFoundError, type ListEntry } from './object-store';

let dataDir: string;
let store: LocalObjectStore;

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'blueline-blobs-'));
  store = new LocalObjectStore({ dataDir });
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function readAll(r: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** Every file under the data dir, relative, sorted. */
async function tree(dir = dataDir): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.push(path.relative(dataDir, path.join(e.parentPath, e.name)));
  return out.sort();
}

/** A stream that yields `chunks` and then fails, like a client that disconnects mid-upload. */
function failingStream(chunks: Buffer[]): Readable {
  let i = 0;
  return new Readable({
    read() {
      if (i < chunks.length) this.push(chunks[i++]);
      else this.destroy(new Error('client went away'));
    },
  });
}

describe('put / get / stat', () => {
  it('stores bytes with size, sha256, strong etag and content type', async () => {
    const bytes = Buffer.from('hello blueline');
    const r = await store.put('projects/prj_a/files/x', bytes, { contentType: 'text/plain' });
    expect(r).toEqual({
      key: 'projects/prj_a/files/x',
      size: 14,
      sha256: sha(bytes),
      etag: `"${sha(bytes)}"`,
    });
    const got = await store.get('projects/prj_a/files/x');
    expect(got).not.toBeNull();
    expect(got!.contentType).toBe('text/plain');
    expect(got!.mtime).toBeInstanceOf(Date);
    expect(await readAll(got!.stream())).toEqual(bytes);
    expect((await readAll(got!.stream({ start: 6, end: 8 }))).toString()).toBe('blu');
    expect(await store.stat('projects/prj_a/files/x')).toMatchObject({
      size: 14,
      sha256: sha(bytes),
    });
    expect(await store.get('projects/prj_a/files/y')).toBeNull();
    expect(await store.stat('nothing/here')).toBeNull();
  });

  it('hashes a stream while writing it', async () => {
    const chunks = Array.from({ length: 50 }, (_, i) => Buffer.alloc(10_000, i));
    const r = await store.put('k/stream', Readable.from(chunks));
    const all = Buffer.concat(chunks);
    expect(r.size).toBe(all.length);
    expect(r.sha256).toBe(sha(all));
    expect(await readFile(await store.localPath('k/stream'))).toEqual(all);
  });

  it('hashes and writes a large Buffer in slices (the HTTP thread gets turns between them)', async () => {
    const big = Buffer.alloc(PUT_SLICE_BYTES * 4 + 123);
    for (let i = 0; i < big.length; i += 4096) big[i] = i & 0xff;
    // Count the file writes of the put: one per slice.
    const fh = await open(path.join(dataDir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(fh) as { write: (...a: unknown[]) => Promise<unknown> };
    await fh.close();
    const original = proto.write;
    let writes = 0;
    proto.write = function (this: unknown, ...a: unknown[]) {
      writes++;
      return original.apply(this, a);
    };
    try {
      const r = await store.put('k/big', big);
      expect(r.size).toBe(big.length);
      expect(r.sha256).toBe(sha(big));
      expect((await readFile(await store.localPath('k/big'))).equals(big)).toBe(true);
      expect(writes).toBeGreaterThanOrEqual(5);
      const empty = await store.put('k/empty', Buffer.alloc(0));
      expect(empty).toMatchObject({ size: 0, sha256: sha(Buffer.alloc(0)) });
    } finally {
      proto.write = original;
    }
  });

  it('replaces atomically and keeps exactly one version on disk', async () => {
    await store.put('a/b', Buffer.from('one'));
    await store.put('a/b', Buffer.from('two'));
    expect((await readAll((await store.get('a/b'))!.stream())).toString()).toBe('two');
    expect(await tree()).toEqual(
      ['objects/a/b@meta', `objects/a/b@${sha(Buffer.from('two'))}`].sort(),
    );
  });

  it('lets a key and a folder of the same name coexist (a and a/b)', async () => {
    await store.put('a', Buffer.from('1'));
    await store.put('a/b', Buffer.from('2'));
    expect((await store.stat('a'))!.size).toBe(1);
    expect((await store.stat('a/b'))!.size).toBe(1);
    const page = await store.list('', { limit: 10, direction: 'forward' });
    expect(page.keys.map((k) => k.key)).toEqual(['a', 'a/b']);
  });

  it('putFile copies a file from disk', async () => {
    const src = path.join(dataDir, 'scratch.bin');
    await writeFile(src, Buffer.alloc(5000, 7));
    const r = await store.putFile('x/y', src, { contentType: 'application/octet-stream' });
    expect(r.size).toBe(5000);
    expect(await readFile(await store.localPath('x/y'))).toEqual(Buffer.alloc(5000, 7));
  });

  it('localPath throws ObjectNotFoundError for a missing key and stays under the root', async () => {
    await expect(store.localPath('no/such')).rejects.toBeInstanceOf(ObjectNotFoundError);
    await store.put('p/q', Buffer.from('x'));
    expect(
      (await store.localPath('p/q')).startsWith(path.join(dataDir, 'objects') + path.sep),
    ).toBe(true);
  });
});

describe('crash safety', () => {
  it('a failing stream leaves no partial object, no temp file and no visible key', async () => {
    await expect(
      store.put('projects/prj_a/files/f1', failingStream([Buffer.alloc(70_000, 1)])),
    ).rejects.toThrow('client went away');
    expect(await store.stat('projects/prj_a/files/f1')).toBeNull();
    expect((await store.list('', { limit: 10, direction: 'forward' })).keys).toEqual([]);
    expect(await tree()).toEqual([]);
  });

  it('a failing replacement keeps the previous version intact', async () => {
    await store.put('k', Buffer.from('original'));
    await expect(store.put('k', failingStream([Buffer.from('partial new')]))).rejects.toThrow();
    expect((await readAll((await store.get('k'))!.stream())).toString()).toBe('original');
    expect(await tree()).toEqual(
      ['objects/k@meta', `objects/k@${sha(Buffer.from('original'))}`].sort(),
    );
  });

  it('concurrent puts to one key leave one complete version', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => Buffer.alloc(50_000 + i * 1000, i + 1));
    await Promise.all(
      bodies.map((b) =>
        store.put('same/key', Readable.from([b.subarray(0, 20_000), b.subarray(20_000)])),
      ),
    );
    const got = await store.get('same/key');
    const bytes = await readAll(got!.stream());
    const winner = bodies.find((b) => b.equals(bytes));
    expect(winner).toBeDefined();
    expect(got!.sha256).toBe(sha(winner!));
    expect(got!.size).toBe(winner!.length);
    expect(await tree()).toEqual(
      ['objects/same/key@meta', `objects/same/key@${got!.sha256}`].sort(),
    );
  });
});

describe('limits and checks', () => {
  it('aborts beyond maxBytes with payload_too_large, leaves nothing, and does not destroy the source', async () => {
    const source = new PassThrough();
    const p = store.put('up/big', source, { maxBytes: 100_000 });
    source.write(Buffer.alloc(60_000));
    source.write(Buffer.alloc(60_000));
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('payload_too_large');
    expect((err as ApiError).detail).toContain('100000');
    expect(source.destroyed).toBe(false); // an HTTP layer can still answer 413 on the connection
    expect(await tree()).toEqual([]);
  });

  it('accepts exactly maxBytes', async () => {
    expect((await store.put('up/exact', Buffer.alloc(1000), { maxBytes: 1000 })).size).toBe(1000);
    await expect(
      store.put('up/over', Buffer.alloc(1001), { maxBytes: 1000 }),
    ).rejects.toMatchObject({
      code: 'payload_too_large',
    });
  });

  it('checks expectedSize both ways', async () => {
    await expect(store.put('s/k', Buffer.alloc(11), { expectedSize: 10 })).rejects.toMatchObject({
      code: 'payload_too_large',
    });
    await expect(store.put('s/k', Buffer.alloc(9), { expectedSize: 10 })).rejects.toMatchObject({
      code: 'validation_error',
    });
    expect((await store.put('s/k', Buffer.alloc(10), { expectedSize: 10 })).size).toBe(10);
  });

  it('checkMagic refuses bytes of another type with 415 and leaves nothing', async () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(3000),
    ]);
    await expect(
      store.put('m/k', Readable.from([png.subarray(0, 5), png.subarray(5)]), {
        contentType: 'application/pdf',
        checkMagic: true,
      }),
    ).rejects.toMatchObject({ code: 'unsupported_media_type' });
    expect(await tree()).toEqual([]);
    // Magic split over tiny chunks still recognised.
    const ok = await store.put(
      'm/k',
      Readable.from([...png.subarray(0, 8)].map((b) => Buffer.from([b]))),
      {
        contentType: 'image/png',
        checkMagic: true,
      },
    );
    expect(ok.size).toBe(8);
  });

  it('refuses header-unsafe content types', async () => {
    await expect(
      store.put('c/t', Buffer.from('x'), { contentType: 'text/plain\r\nX-Evil: 1' }),
    ).rejects.toThrow(TypeError);
  });
});

describe('key validation', () => {
  const bad = [
    '',
    '../escape',
    'a/../../escape',
    'a/..',
    '..',
    '/etc/passwd',
    'a\\..\\b',
    'a\\b',
    'a\0b',
    'a//b',
    'a/b/',
    'a/./b',
    '.hidden',
    'a/.tmp-x',
    'A/b',
    'a b',
    'a/b@meta',
    'a%2f..%2fb',
    '\uff0e\uff0e/x', // fullwidth dots
    'a\u2215b', // division slash
    'caf\u00e9',
    '\u0430bc', // Cyrillic a
    'a/b\u200b', // zero-width space
    'con',
    'a/nul.txt',
    'a/b.',
    'x'.repeat(513),
    `a/${'y'.repeat(129)}`,
  ];
  it.each(bad.map((k) => [JSON.stringify(k), k]))('rejects %s', async (_label, key) => {
    await expect(store.put(key, Buffer.from('x'))).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(store.get(key)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(store.stat(key)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(store.delete(key)).rejects.toBeInstanceOf(InvalidKeyError);
    await expect(store.localPath(key)).rejects.toBeInstanceOf(InvalidKeyError);
  });

  it('wrote nothing anywhere for rejected keys', async () => {
    for (const key of bad) await store.put(key, Buffer.from('x')).catch(() => {});
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('rejects bad prefixes for list and deletePrefix', async () => {
    for (const p of ['../', '/abs/', 'a//', 'a/../', 'A/']) {
      await expect(store.list(p, { limit: 1, direction: 'forward' })).rejects.toBeInstanceOf(
        InvalidKeyError,
      );
      await expect(store.deletePrefix(p)).rejects.toBeInstanceOf(InvalidKeyError);
    }
    await expect(store.deletePrefix('')).rejects.toThrow(RangeError);
  });
});

describe('list', () => {
  const pad = (n: number) => String(n).padStart(4, '0');

  async function putMany(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 25)
      await Promise.all(keys.slice(i, i + 25).map((k) => store.put(k, Buffer.from(k))));
  }

  async function pageAll(
    prefix: string,
    limit: number,
    direction: 'forward' | 'backward',
  ): Promise<string[][]> {
    const pages: string[][] = [];
    let token: string | null = null;
    for (;;) {
      const page = await store.list(prefix, { limit, direction, token });
      pages.push(page.keys.map((k) => k.key));
      token = direction === 'forward' ? page.nextToken : page.prevToken;
      if (token === null) return pages;
      expect(pages.length).toBeLessThan(1000);
    }
  }

  it('pages forward and backward over 300 keys with no duplicates or gaps', async () => {
    const keys = Array.from(
      { length: 300 },
      (_, i) => `projects/prj_a/files/${pad((i * 7919) % 10_000)}`,
    );
    await putMany([...keys, 'projects/prj_b/files/0001', 'projects/prj_a/other']);
    const sorted = [...keys].sort();

    const fwd = await pageAll('projects/prj_a/files/', 23, 'forward');
    expect(fwd.flat()).toEqual(sorted);
    expect(fwd.slice(0, -1).every((p) => p.length === 23)).toBe(true);

    const bwd = await pageAll('projects/prj_a/files/', 23, 'backward');
    expect(bwd.reverse().flat()).toEqual(sorted);

    const first = await store.list('projects/prj_a/files/', { limit: 23, direction: 'forward' });
    expect(first.prevToken).toBeNull();
    expect(first.keys[0]).toEqual<ListEntry>({
      key: sorted[0]!,
      size: sorted[0]!.length,
      etag: `"${sha(Buffer.from(sorted[0]!))}"`,
    });
  });

  it('goes forward, then back with prev tokens to the same pages, the first with prev null', async () => {
    const keys = Array.from({ length: 100 }, (_, i) => `d/${pad(i)}`);
    await putMany(keys);
    const p1 = await store.list('d/', { limit: 10, direction: 'forward' });
    const p2 = await store.list('d/', { limit: 10, direction: 'forward', token: p1.nextToken });
    const p3 = await store.list('d/', { limit: 10, direction: 'forward', token: p2.nextToken });
    expect(p3.keys.map((k) => k.key)).toEqual(keys.slice(20, 30));
    const b2 = await store.list('d/', { limit: 10, direction: 'backward', token: p3.prevToken });
    expect(b2.keys.map((k) => k.key)).toEqual(keys.slice(10, 20));
    expect(b2.nextToken).not.toBeNull();
    const b1 = await store.list('d/', { limit: 10, direction: 'backward', token: b2.prevToken });
    expect(b1.keys.map((k) => k.key)).toEqual(keys.slice(0, 10));
    expect(b1.prevToken).toBeNull();
    const again = await store.list('d/', { limit: 10, direction: 'forward', token: b1.nextToken });
    expect(again.keys.map((k) => k.key)).toEqual(keys.slice(10, 20));
    const last = await store.list('d/', { limit: 10, direction: 'backward' });
    expect(last.keys.map((k) => k.key)).toEqual(keys.slice(90));
    expect(last.nextToken).toBeNull();
  });

  it('walks nested folders in key order under a partial prefix', async () => {
    const keys = [
      'p/a',
      'p/a-b',
      'p/a.c',
      'p/a/b',
      'p/a/c/d',
      'p/a0',
      'p/ab',
      'p/b/x',
      'p/b_',
      'q/a',
      'p2/x',
    ];
    await putMany(keys);
    const all = (await pageAll('p', 2, 'forward')).flat();
    expect(all).toEqual(keys.filter((k) => k.startsWith('p')).sort());
    expect((await pageAll('p/a', 3, 'backward')).reverse().flat()).toEqual(
      keys.filter((k) => k.startsWith('p/a')).sort(),
    );
    expect((await pageAll('', 4, 'forward')).flat()).toEqual([...keys].sort());
  });

  it('never duplicates or drops existing keys while new keys are inserted between pages', async () => {
    const initial = Array.from({ length: 200 }, (_, i) => `ins/${pad(i * 10 + 5)}`);
    await putMany(initial);
    const seen: string[] = [];
    let token: string | null = null;
    let n = 0;
    do {
      const page = await store.list('ins/', { limit: 17, direction: 'forward', token });
      seen.push(...page.keys.map((k) => k.key));
      token = page.nextToken;
      // New keys before, inside and after the current position.
      await putMany([`ins/${pad(n)}`, `ins/${pad(1000 + n * 7)}`, `ins/${pad(9000 + n)}`]);
      n++;
    } while (token !== null);
    for (let i = 1; i < seen.length; i++) expect(seen[i]! > seen[i - 1]!).toBe(true);
    for (const k of initial) expect(seen).toContain(k);
  });

  it('an empty page (neighbours deleted) leads back without skipping', async () => {
    await putMany(Array.from({ length: 30 }, (_, i) => `e/${pad(i)}`));
    const p1 = await store.list('e/', { limit: 10, direction: 'forward' });
    for (let i = 10; i < 30; i++) await store.delete(`e/${pad(i)}`);
    const p2 = await store.list('e/', { limit: 10, direction: 'forward', token: p1.nextToken });
    expect(p2.keys).toEqual([]);
    expect(p2.nextToken).toBeNull();
    const back = await store.list('e/', { limit: 10, direction: 'backward', token: p2.prevToken });
    expect(back.keys.map((k) => k.key)).toEqual(
      Array.from({ length: 10 }, (_, i) => `e/${pad(i)}`),
    );
    expect(back.prevToken).toBeNull();
  });

  it('refuses tokens that are tampered or belong to another prefix', async () => {
    await putMany(['t/1', 't/2', 't/3', 'u/1']);
    const p = await store.list('t/', { limit: 1, direction: 'forward' });
    const other = await store
      .list('u/', { limit: 1, direction: 'forward', token: p.nextToken })
      .catch((e: unknown) => e);
    expect(other).toMatchObject({ code: 'invalid_cursor' });
    for (const bad of [
      '!!!',
      'abc',
      Buffer.from('{"v":1,"p":"t/","k":"../x"}').toString('base64url'),
    ])
      await expect(
        store.list('t/', { limit: 1, direction: 'forward', token: bad }),
      ).rejects.toMatchObject({
        code: 'invalid_cursor',
      });
    await expect(store.list('t/', { limit: 0, direction: 'forward' })).rejects.toThrow(RangeError);
  });

  it('lists an absent prefix as empty', async () => {
    expect(await store.list('none/', { limit: 5, direction: 'forward' })).toEqual({
      keys: [],
      nextToken: null,
      prevToken: null,
    });
  });
});

describe('delete and deletePrefix', () => {
  it('delete removes the key and its empty folders', async () => {
    await store.put('x/y/z', Buffer.from('1'));
    expect(await store.delete('x/y/z')).toBe(true);
    expect(await store.delete('x/y/z')).toBe(false);
    expect(await readdir(path.join(dataDir, 'objects'))).toEqual([]);
  });

  it('deletePrefix of a folder removes everything under it and nothing else', async () => {
    const a = Array.from(
      { length: 40 },
      (_, i) => `projects/prj_a/${i % 3 === 0 ? 'files' : 'drawings/d'}/${i}`,
    );
    for (const k of a) await store.put(k, Buffer.from(k));
    await store.put('projects/prj_ab/files/1', Buffer.from('keep'));
    await store.put('projects/prj_b/files/1', Buffer.from('keep'));
    expect(await store.deletePrefix('projects/prj_a/')).toBe(40);
    expect(
      (await store.list('projects/', { limit: 100, direction: 'forward' })).keys.map((k) => k.key),
    ).toEqual(['projects/prj_ab/files/1', 'projects/prj_b/files/1']);
    expect(await store.deletePrefix('projects/prj_a/')).toBe(0);
    expect((await tree()).filter((f) => f.includes('trash'))).toEqual([]);
    await expect(stat(path.join(dataDir, 'objects/projects/prj_a'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('deletePrefix of a partial segment deletes key by key', async () => {
    for (const k of ['p/ab', 'p/ac/1', 'p/b', 'p/a']) await store.put(k, Buffer.from(k));
    expect(await store.deletePrefix('p/a')).toBe(3);
    expect(
      (await store.list('p/', { limit: 10, direction: 'forward' })).keys.map((k) => k.key),
    ).toEqual(['p/b']);
  });
});

describe('sweepTemp', () => {
  it('removes crash leftovers but not a write in flight', async () => {
    await store.put('s/ok', Buffer.from('fine'));
    await store.put('s/broken', Buffer.from('gone'));
    const objects = path.join(dataDir, 'objects');
    await writeFile(path.join(objects, 's/.tmp-deadbeef'), 'partial');
    await writeFile(path.join(objects, `s/ok@${'a'.repeat(64)}`), 'orphan version');
    await rm(path.join(objects, `s/broken@${sha(Buffer.from('gone'))}`));
    await mkdir(path.join(objects, '.trash/123/x'), { recursive: true });
    await writeFile(path.join(objects, '.trash/123/x/y@meta'), '{}');
    await mkdir(path.join(objects, 'empty/dir'), { recursive: true });

    const inflight = new PassThrough();
    const pending = store.put('s/inflight', inflight);
    inflight.write(Buffer.alloc(1000, 1));
    await new Promise((r) => setTimeout(r, 50));

    const report = await store.sweepTemp();
    expect(report).toEqual({ tempFiles: 1, orphanVersions: 1, brokenKeys: ['s/broken'], trash: 1 });

    inflight.end(Buffer.alloc(1000, 2));
    expect((await pending).size).toBe(2000);
    expect(
      (await store.list('', { limit: 10, direction: 'forward' })).keys.map((k) => k.key),
    ).toEqual(['s/inflight', 's/ok']);
    const files = await tree();
    expect(
      files.some((f) => f.includes('.tmp-') || f.includes('trash') || f.includes('empty')),
    ).toBe(false);
    expect(await store.sweepTemp()).toEqual({
      tempFiles: 0,
      orphanVersions: 0,
      brokenKeys: [],
      trash: 0,
    });
  });
});
