import { type Readable } from 'node:stream';
import { type ByteRange, type StoredObject } from './object-store';

// Answers a GET or HEAD for a stored object (contract §5), independent of the HTTP framework:
// the route verifies the signature, looks the object up, calls `serveObject`, and copies
// status, headers and body to its reply.
//
// - ETag: strong, from the SHA-256 of the bytes. `If-None-Match` (weak comparison, `*` too) → 304;
//   without it, `If-Modified-Since` is honoured.
// - `Range: bytes=a-b | a- | -n` → 206 with Content-Range; a range starting at or beyond the end,
//   or `-0`, → 416 with `Content-Range: bytes */<size>`; a malformed header, another unit, or
//   `b < a` is ignored → 200 with the whole body (RFC 9110 lets a server ignore Range).
// - Several ranges (`bytes=0-1,5-6`) → 200 with the whole body: we never send
//   multipart/byteranges; viewers such as PDF.js ask for one range at a time.
// - `If-Range` (an ETag or the Last-Modified date) that no longer matches → 200 with the whole body.
// - 416 has no body here; the route may send an empty one or a Problem Details body.

export const CACHE_CONTROL = 'private, max-age=3600, immutable';

export type HeaderBag = Record<string, string | string[] | undefined>;

export interface ServeRequest {
  method: string;
  /** Request headers with lowercase names (Node's IncomingHttpHeaders, Fastify's request.headers). */
  headers: HeaderBag;
}

export interface ServeResult {
  status: 200 | 206 | 304 | 416;
  headers: Record<string, string>;
  /** The bytes to send; null for HEAD, 304 and 416. */
  body: Readable | null;
}

export type RangeResult =
  { kind: 'none' } | { kind: 'range'; range: ByteRange } | { kind: 'unsatisfiable' };

export function serveObject(
  obj: StoredObject,
  req: ServeRequest,
  opts: { cacheControl?: string; headers?: Record<string, string> } = {},
): ServeResult {
  const method = req.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD')
    throw new TypeError(`serveObject answers GET and HEAD, not ${req.method}.`);
  const lastModified = new Date(Math.floor(obj.mtime.getTime() / 1000) * 1000);
  const validators: Record<string, string> = {
    ETag: obj.etag,
    'Cache-Control': opts.cacheControl ?? CACHE_CONTROL,
    'Last-Modified': lastModified.toUTCString(),
    ...opts.headers,
  };

  const ifNoneMatch = header(req.headers, 'if-none-match');
  if (ifNoneMatch !== undefined) {
    if (etagListMatches(ifNoneMatch, obj.etag))
      return { status: 304, headers: validators, body: null };
  } else {
    const ims = Date.parse(header(req.headers, 'if-modified-since') ?? '');
    if (Number.isFinite(ims) && lastModified.getTime() <= ims)
      return { status: 304, headers: validators, body: null };
  }

  const base: Record<string, string> = {
    ...validators,
    'Content-Type': obj.contentType ?? 'application/octet-stream',
    'Accept-Ranges': 'bytes',
    // The bytes are user uploads: never let a browser reinterpret them as another type.
    'X-Content-Type-Options': 'nosniff',
  };
  const rangeHeader = header(req.headers, 'range');
  let parsed: RangeResult =
    rangeHeader === undefined ? { kind: 'none' } : parseRange(rangeHeader, obj.size);
  if (
    parsed.kind !== 'none' &&
    !ifRangeHolds(header(req.headers, 'if-range'), obj.etag, lastModified)
  )
    parsed = { kind: 'none' };

  if (parsed.kind === 'unsatisfiable')
    return {
      status: 416,
      headers: { ...base, 'Content-Range': `bytes */${obj.size}`, 'Content-Length': '0' },
      body: null,
    };
  if (parsed.kind === 'range') {
    const { start, end } = parsed.range;
    return {
      status: 206,
      headers: {
        ...base,
        'Content-Range': `bytes ${start}-${end}/${obj.size}`,
        'Content-Length': String(end - start + 1),
      },
      body: method === 'HEAD' ? null : obj.stream(parsed.range),
    };
  }
  return {
    status: 200,
    headers: { ...base, 'Content-Length': String(obj.size) },
    body: method === 'HEAD' || obj.size === 0 ? null : obj.stream(),
  };
}

/** Parses a Range header for a representation of `size` bytes (RFC 9110 §14.1.2). */
export function parseRange(value: string, size: number): RangeResult {
  const m = /^\s*bytes\s*=\s*(.*)$/i.exec(value);
  if (!m) return { kind: 'none' };
  const specs = m[1]!.split(',').map((s) => s.trim());
  // Several ranges: the whole body is served (see the header comment); no multipart/byteranges.
  if (specs.length !== 1) return { kind: 'none' };
  const spec = /^(\d*)\s*-\s*(\d*)$/.exec(specs[0]!);
  if (!spec || (spec[1] === '' && spec[2] === '')) return { kind: 'none' };
  const [, a, b] = spec as unknown as [string, string, string];
  if (a === '') {
    // Suffix range: the last n bytes.
    const n = toInt(b);
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', range: { start: Math.max(0, size - n), end: size - 1 } };
  }
  const start = toInt(a);
  const end = b === '' ? Infinity : toInt(b);
  if (end < start) return { kind: 'none' }; // invalid range-spec: ignore the header
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', range: { start, end: Math.min(end, size - 1) } };
}

/** Digits to a number; absurdly long ones become Infinity (beyond any size). */
const toInt = (digits: string): number => {
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : Infinity;
};

function header(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/** If-None-Match: `*` or a list of entity tags, compared weakly (W/ ignored). */
function etagListMatches(list: string, etag: string): boolean {
  if (list.trim() === '*') return true;
  const want = opaque(etag);
  return (list.match(/(W\/)?"[^"]*"/g) ?? []).some((t) => opaque(t) === want);
}

const opaque = (tag: string): string => tag.trim().replace(/^W\//, '');

/** If-Range: a strong ETag equal to ours, or the exact Last-Modified date. Absent → true. */
function ifRangeHolds(ifRange: string | undefined, etag: string, lastModified: Date): boolean {
  if (ifRange === undefined) return true;
  const v = ifRange.trim();
  if (v.startsWith('W/')) return false; // weak tags never validate a range
  if (v.startsWith('"')) return v === etag;
  const t = Date.parse(v);
  return Number.isFinite(t) && t === lastModified.getTime();
}
