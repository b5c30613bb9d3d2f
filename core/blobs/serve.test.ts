import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from './local-object-store';
import { type StoredObject } from './object-store';
import { CACHE_CONTROL, parseRange, serveObject } from './serve';

let dataDir: string;
let obj: StoredObject;
let empty: StoredObject;
const BYTES = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'blueline-serve-'));
  const store = new LocalObjectStore({ dataDir });
  await store.put('o/k', BYTES, { contentType: 'image/png' });
  await store.put('o/empty', Buffer.alloc(0));
  obj = (await store.get('o/k'))!;
  empty = (await store.get('o/empty'))!;
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

async function body(r: Readable | null): Promise<Buffer> {
  expect(r).not.toBeNull();
  const parts: Buffer[] = [];
  for await (const c of r!) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

const get = (headers: Record<string, string> = {}) => serveObject(obj, { method: 'GET', headers });

describe('parseRange', () => {
  it.each([
    ['bytes=0-499', { kind: 'range', range: { start: 0, end: 499 } }],
    ['bytes=500-', { kind: 'range', range: { start: 500, end: 999 } }],
    ['bytes=-100', { kind: 'range', range: { start: 900, end: 999 } }],
    ['bytes=-5000', { kind: 'range', range: { start: 0, end: 999 } }],
    ['bytes=990-5000', { kind: 'range', range: { start: 990, end: 999 } }],
    ['bytes=999-999', { kind: 'range', range: { start: 999, end: 999 } }],
    ['Bytes = 1 - 2', { kind: 'range', range: { start: 1, end: 2 } }],
    ['bytes=0-99999999999999999999', { kind: 'range', range: { start: 0, end: 999 } }],
    ['bytes=1000-', { kind: 'unsatisfiable' }],
    ['bytes=1000-2000', { kind: 'unsatisfiable' }],
    ['bytes=99999999999999999999-', { kind: 'unsatisfiable' }],
    ['bytes=-0', { kind: 'unsatisfiable' }],
    ['bytes=5-1', { kind: 'none' }],
    ['bytes=-', { kind: 'none' }],
    ['bytes=a-b', { kind: 'none' }],
    ['bytes=1-2-3', { kind: 'none' }],
    ['items=0-1', { kind: 'none' }],
    ['0-1', { kind: 'none' }],
    ['bytes=0-1,5-6', { kind: 'none' }],
    ['', { kind: 'none' }],
  ])('%s', (header, expected) => {
    expect(parseRange(header, 1000)).toEqual(expected);
  });

  it('finds nothing satisfiable in an empty representation', () => {
    expect(parseRange('bytes=0-', 0)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-1', 0)).toEqual({ kind: 'unsatisfiable' });
  });
});

describe('serveObject', () => {
  it('answers 200 with the caching and type headers', async () => {
    const r = get();
    expect(r.status).toBe(200);
    expect(r.headers).toMatchObject({
      ETag: obj.etag,
      'Cache-Control': CACHE_CONTROL,
      'Content-Type': 'image/png',
      'Content-Length': '1000',
      'Accept-Ranges': 'bytes',
      'X-Content-Type-Options': 'nosniff',
    });
    expect(r.headers.ETag).toMatch(/^"[0-9a-f]{64}"$/);
    expect(await body(r.body)).toEqual(BYTES);
  });

  it('HEAD has the same headers and no body', () => {
    const r = serveObject(obj, { method: 'HEAD', headers: {} });
    expect(r.status).toBe(200);
    expect(r.headers['Content-Length']).toBe('1000');
    expect(r.body).toBeNull();
  });

  it('206 for a single range, with Content-Range and exactly those bytes', async () => {
    for (const [h, start, end] of [
      ['bytes=10-19', 10, 19],
      ['bytes=-10', 990, 999],
      ['bytes=995-', 995, 999],
    ] as const) {
      const r = get({ range: h });
      expect(r.status).toBe(206);
      expect(r.headers['Content-Range']).toBe(`bytes ${start}-${end}/1000`);
      expect(r.headers['Content-Length']).toBe(String(end - start + 1));
      expect(await body(r.body)).toEqual(BYTES.subarray(start, end + 1));
    }
  });

  it('416 with bytes */size when out of range', () => {
    const r = get({ range: 'bytes=1000-' });
    expect(r.status).toBe(416);
    expect(r.headers['Content-Range']).toBe('bytes */1000');
    expect(r.body).toBeNull();
    expect(serveObject(empty, { method: 'GET', headers: { range: 'bytes=0-' } }).status).toBe(416);
  });

  it('malformed or multiple ranges → 200 with the whole body', async () => {
    for (const h of ['bytes=5-1', 'bytes=abc', 'bytes=0-1,5-6', 'lines=1-2']) {
      const r = get({ range: h });
      expect(r.status).toBe(200);
      expect(r.headers['Content-Range']).toBeUndefined();
      expect((await body(r.body)).length).toBe(1000);
    }
  });

  it('304 when If-None-Match matches (list, weak form or *), 200 otherwise', () => {
    for (const h of [obj.etag, `"nope", ${obj.etag}`, `W/${obj.etag}`, '*']) {
      const r = get({ 'if-none-match': h });
      expect(r.status).toBe(304);
      expect(r.body).toBeNull();
      expect(r.headers.ETag).toBe(obj.etag);
      expect(r.headers['Content-Length']).toBeUndefined();
    }
    expect(get({ 'if-none-match': '"other"' }).status).toBe(200);
    // If-None-Match wins over Range.
    expect(get({ 'if-none-match': obj.etag, range: 'bytes=0-1' }).status).toBe(304);
  });

  it('If-Modified-Since applies only without If-None-Match', () => {
    const later = new Date(obj.mtime.getTime() + 5000).toUTCString();
    const earlier = new Date(obj.mtime.getTime() - 5000).toUTCString();
    expect(get({ 'if-modified-since': later }).status).toBe(304);
    expect(get({ 'if-modified-since': earlier }).status).toBe(200);
    expect(get({ 'if-modified-since': later, 'if-none-match': '"other"' }).status).toBe(200);
  });

  it('If-Range: honoured when the ETag matches, whole body when it does not', () => {
    expect(get({ range: 'bytes=0-9', 'if-range': obj.etag }).status).toBe(206);
    expect(get({ range: 'bytes=0-9', 'if-range': '"old"' }).status).toBe(200);
    expect(get({ range: 'bytes=0-9', 'if-range': `W/${obj.etag}` }).status).toBe(200);
  });

  it('serves an empty object with no body and refuses other methods', () => {
    const r = serveObject(empty, { method: 'GET', headers: {} });
    expect(r.status).toBe(200);
    expect(r.headers['Content-Length']).toBe('0');
    expect(r.headers['Content-Type']).toBe('application/octet-stream');
    expect(() => serveObject(obj, { method: 'PUT', headers: {} })).toThrow(TypeError);
  });
});
