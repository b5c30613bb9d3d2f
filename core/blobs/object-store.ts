import { type Readable } from 'node:stream';
import { ApiError } from '../domain/errors';

// The object store: the only place where bytes of files, sheet images, crops and overlays live.
// Keys are built by ./keys (the one module that names objects); this interface validates them
// again so that no string from a request can ever name a file outside the store's root.
//
// Listing is in lexicographic (byte) order of keys, paged with continuation tokens like S3's
// ListObjectsV2: a token is an opaque string derived from a page's last (next) or first (prev) key.
// Because paging is keyset-based, keys inserted while a client pages never shift, duplicate or
// drop keys on the pages it has not seen yet.

/** Key charset: lowercase ASCII letters, digits, `_`, `-`, `.` and `/` as the segment separator. */
export const KEY_MAX_LENGTH = 512;
/** One segment maps to one file or directory name; the store appends at most 70 characters. */
export const KEY_SEGMENT_MAX_LENGTH = 128;

const SEGMENT_RE = /^[a-z0-9_-][a-z0-9_.-]*$/;
// Names Windows reserves for devices, with or without an extension (the desktop app runs there too).
const WINDOWS_DEVICE_RE = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\.|$)/;

/** Why `key` is not a valid object key, or null when it is. */
export function keyProblem(key: unknown): string | null {
  if (typeof key !== 'string') return 'it is not a string';
  if (key.length === 0) return 'it is empty';
  if (key.length > KEY_MAX_LENGTH) return `it is longer than ${KEY_MAX_LENGTH} characters`;
  if (key.startsWith('/')) return 'it starts with a slash';
  if (key.endsWith('/')) return 'it ends with a slash';
  return pathProblem(key);
}

/** Why `prefix` is not a valid listing/deletion prefix ('' or a key start, may end with '/'). */
export function prefixProblem(prefix: unknown): string | null {
  if (typeof prefix !== 'string') return 'it is not a string';
  if (prefix === '') return null;
  if (prefix.length > KEY_MAX_LENGTH) return `it is longer than ${KEY_MAX_LENGTH} characters`;
  if (prefix.startsWith('/')) return 'it starts with a slash';
  // A trailing slash is allowed ("everything in this folder"); a trailing partial segment is too.
  return pathProblem(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix, true);
}

function pathProblem(path: string, partialLast = false): string | null {
  if (path.includes('..')) return "it contains '..'";
  const segments = path.split('/');
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    if (s.length === 0) return 'it has an empty segment (//)';
    if (s.length > KEY_SEGMENT_MAX_LENGTH)
      return `a segment is longer than ${KEY_SEGMENT_MAX_LENGTH} characters`;
    if (!SEGMENT_RE.test(s))
      return s.startsWith('.')
        ? `segment '${printable(s)}' starts with a dot`
        : `segment '${printable(s)}' has a character outside [a-z0-9_.-]`;
    const isPartial = partialLast && i === segments.length - 1;
    if (!isPartial && s.endsWith('.')) return `segment '${s}' ends with a dot`;
    if (!isPartial && WINDOWS_DEVICE_RE.test(s)) return `segment '${s}' is a reserved device name`;
  }
  return null;
}

/** Escapes control and non-ASCII characters so an error message can show what was rejected. */
function printable(s: string): string {
  return s.replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`).slice(0, 80);
}

/** A key or prefix the store refuses. A bug in the caller (keys come from ./keys), hence not an ApiError. */
export class InvalidKeyError extends Error {
  readonly code = 'invalid_key';
  constructor(what: 'key' | 'prefix', problem: string) {
    super(`Invalid object ${what}: ${problem}.`);
    this.name = 'InvalidKeyError';
  }
}

export function assertValidKey(key: string): void {
  const p = keyProblem(key);
  if (p !== null) throw new InvalidKeyError('key', p);
}

export function assertValidPrefix(prefix: string): void {
  const p = prefixProblem(prefix);
  if (p !== null) throw new InvalidKeyError('prefix', p);
}

/**
 * An object the database says exists but the store does not have (lost bytes): a 500, not a 404
 * for the client, because the record is there. Routes that look up by key use `get`/`stat`,
 * which return null instead.
 */
export class ObjectNotFoundError extends Error {
  readonly code = 'object_not_found';
  constructor(readonly key: string) {
    super(`No object is stored under key '${key}'.`);
    this.name = 'ObjectNotFoundError';
  }
}

/**
 * The backend holding the bytes cannot be reached or refused to serve them (an S3 endpoint that is
 * down, times out, throttles, or rejects the credentials). An ApiError `unavailable`, so the HTTP
 * layer answers 503 Problem Details with Retry-After and a job that hits it fails with that
 * problem instead of an internal error. `retryable` is false when only an operator can fix it
 * (no such bucket, credentials refused).
 */
export class ObjectStoreUnavailableError extends ApiError {
  constructor(
    detail: string,
    readonly retryable: boolean,
    options: { cause?: unknown; retryAfterSeconds?: number } = {},
  ) {
    super('unavailable', detail, {
      headers: { 'Retry-After': String(options.retryAfterSeconds ?? 5) },
    });
    this.name = 'ObjectStoreUnavailableError';
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

// --- Types --------------------------------------------------------------------------------------

export interface PutOptions {
  /** MIME type stored with the object and served as Content-Type. */
  contentType?: string;
  /** Abort with 413 payload_too_large once more than this many bytes arrive; nothing is left behind. */
  maxBytes?: number;
  /**
   * Exact size the client declared (File.size_bytes): more aborts with 413 payload_too_large as
   * soon as it is exceeded, fewer fails with 400 validation_error at the end; nothing is left behind.
   */
  expectedSize?: number;
  /**
   * Check the first bytes' magic number against `contentType` (./magic) and abort with
   * 415 unsupported_media_type when they differ; nothing is left behind.
   */
  checkMagic?: boolean;
}

export interface PutResult {
  key: string;
  /** Bytes stored. */
  size: number;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  /** Strong HTTP entity tag, quoted (`"<sha256>"`), ready for an ETag header. */
  etag: string;
}

export interface ObjectInfo extends PutResult {
  contentType: string | undefined;
  /** When this version was committed. */
  mtime: Date;
}

/** Inclusive byte range, offsets from 0 (like HTTP's `bytes=start-end`). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface StoredObject extends ObjectInfo {
  /**
   * A stream of this version's bytes, or of `range` (inclusive, clamped by the caller). It errors
   * (ENOENT) if the object was replaced or deleted between `get` and this call.
   */
  stream(range?: ByteRange): Readable;
}

export interface ListEntry {
  key: string;
  size: number;
  /**
   * The backend's version tag of the object: it changes whenever the bytes change. The local store
   * gives the same `"<sha256>"` as `stat`; S3 gives its own ETag (an MD5, or a hash of the part
   * hashes after a multipart upload), because a listing carries no metadata. Compare it only with
   * another listing's; for the sha256, call `stat`.
   */
  etag: string;
}

export type ListDirection = 'forward' | 'backward';

export interface ListOptions {
  /** Page size, 1 to 1000. */
  limit: number;
  /**
   * `nextToken` (with 'forward') or `prevToken` (with 'backward') of an earlier page. A backward
   * page costs the local store one directory read per level; S3 lists forward only, so there it
   * costs a forward listing from the prefix's start up to the token (one request per 1,000 keys).
   */
  token?: string | null;
  direction: ListDirection;
}

export interface ListPage {
  /** Keys of this page in ascending key order, whichever the direction. */
  keys: ListEntry[];
  /** Token for the keys after this page (pass with 'forward'); null when there are none. */
  nextToken: string | null;
  /** Token for the keys before this page (pass with 'backward'); null on the first page. */
  prevToken: string | null;
}

export interface SweepReport {
  /** Temp files left by interrupted writes. */
  tempFiles: number;
  /** Data versions no metadata points to (a crash between a commit and its clean-up). */
  orphanVersions: number;
  /** Keys whose metadata pointed at missing bytes; their metadata was removed. */
  brokenKeys: string[];
  /** Leftovers of interrupted prefix deletions. */
  trash: number;
}

export interface ObjectStore {
  /**
   * Stores `source` under `key`, replacing any previous version atomically: readers see the
   * old bytes or the new ones, never a mix; a failure (source error, limit, crash) leaves the
   * previous version, or no key, and no partial file. Streamed: the bytes are hashed as written.
   */
  put(key: string, source: Buffer | Readable, opts?: PutOptions): Promise<PutResult>;
  /** `put` from a file on disk (e.g. a sharp output in a scratch folder). */
  putFile(key: string, filePath: string, opts?: PutOptions): Promise<PutResult>;
  /** The object with a lazy byte stream, or null when no such key. */
  get(key: string): Promise<StoredObject | null>;
  stat(key: string): Promise<ObjectInfo | null>;
  /** True when something was deleted. */
  delete(key: string): Promise<boolean>;
  /** Deletes every key starting with `prefix` ('' is refused); returns how many keys went. */
  deletePrefix(prefix: string): Promise<number>;
  list(prefix: string, opts: ListOptions): Promise<ListPage>;
  /**
   * Path of the current version's file, for sharp or pdfjs. Read-only: never write to it. The
   * file stays readable through an open handle even if the key is replaced meanwhile.
   * Throws ObjectNotFoundError when there is no such key.
   */
  localPath(key: string): Promise<string>;
  /** Boot-time reconciliation: removes what interrupted writes and deletions left behind. */
  sweepTemp(): Promise<SweepReport>;
}

// --- Continuation tokens ------------------------------------------------------------------------

/**
 * Position a token stands for. `k` is a boundary key; a forward page lists keys after it (`>`),
 * a backward page keys before it (`<`); `i` makes the bound inclusive, used when the page the
 * token comes from was empty (its neighbours were deleted) so that no key is skipped.
 */
interface TokenPayload {
  v: 1;
  /** The prefix listed: a token is valid only for the listing that issued it. */
  p: string;
  k: string;
  i?: 1;
}

export interface TokenPosition {
  key: string;
  inclusive: boolean;
}

const TOKEN_MAX_LENGTH = 2048;

export function encodeToken(prefix: string, pos: TokenPosition): string {
  const payload: TokenPayload = { v: 1, p: prefix, k: pos.key, ...(pos.inclusive ? { i: 1 } : {}) };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/** The position in `token`; 400 invalid_cursor when it is malformed or from another listing. */
export function decodeToken(prefix: string, token: string): TokenPosition {
  const invalid = (why: string) =>
    new ApiError(
      'invalid_cursor',
      `The continuation token ${why}; start again from the first page.`,
    );
  if (token.length === 0 || token.length > TOKEN_MAX_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token))
    throw invalid('is malformed');
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('is malformed');
  }
  const p = payload as Partial<TokenPayload> | null;
  if (
    typeof p !== 'object' ||
    p === null ||
    p.v !== 1 ||
    typeof p.p !== 'string' ||
    typeof p.k !== 'string' ||
    (p.i !== undefined && p.i !== 1)
  )
    throw invalid('is malformed');
  if (p.p !== prefix) throw invalid('belongs to another listing');
  if (!p.k.startsWith(prefix) || keyProblem(p.k) !== null) throw invalid('is malformed');
  return { key: p.k, inclusive: p.i === 1 };
}

export const LIST_MAX_LIMIT = 1000;

export function assertListLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_MAX_LIMIT)
    throw new RangeError(
      `Expected an integer between 1 and ${LIST_MAX_LIMIT} for limit but received ${limit}.`,
    );
}

/**
 * One page of a keyset-paged listing, the same for every backend: validates the options, reads
 * the page through `read` and sets the tokens. `read(pos, direction, n)` returns up to `n` entries
 * after `pos` (null: from the start) in `direction`'s order (backward: last key first).
 * `anyBeyond(bound, direction)` says whether some key lies past `bound` in `direction` — it
 * decides whether the side the caller came from still has a token (keys there may have been
 * deleted meanwhile).
 */
export async function listPage(
  prefix: string,
  opts: ListOptions,
  read: (pos: TokenPosition | null, direction: ListDirection, n: number) => Promise<ListEntry[]>,
  anyBeyond: (bound: TokenPosition, direction: ListDirection) => Promise<boolean>,
): Promise<ListPage> {
  assertValidPrefix(prefix);
  assertListLimit(opts.limit);
  if (opts.direction !== 'forward' && opts.direction !== 'backward')
    throw new TypeError(
      `Expected 'forward' or 'backward' for direction but received '${String(opts.direction)}'.`,
    );
  const pos = opts.token != null ? decodeToken(prefix, opts.token) : null;
  const forward = opts.direction === 'forward';
  const found = await read(pos, opts.direction, opts.limit + 1);
  const hasMore = found.length > opts.limit;
  const page = found.slice(0, opts.limit);
  if (!forward) page.reverse();
  const first = page[0];
  const last = page[page.length - 1];

  // The token the caller came with bounds the far side; when the page is empty (neighbours
  // deleted meanwhile) the way back is "up to and including" that boundary.
  let farSide: TokenPosition | null = null;
  if (pos !== null) {
    const edge = forward ? first : last;
    farSide =
      edge !== undefined
        ? { key: edge.key, inclusive: false }
        : { key: pos.key, inclusive: !pos.inclusive };
    if (!(await anyBeyond(farSide, forward ? 'backward' : 'forward'))) farSide = null;
  }
  const nearSide: TokenPosition | null = hasMore
    ? { key: (forward ? last : first)!.key, inclusive: false }
    : null;
  const nextPos = forward ? nearSide : farSide;
  const prevPos = forward ? farSide : nearSide;
  return {
    keys: page,
    nextToken: nextPos === null ? null : encodeToken(prefix, nextPos),
    prevToken: prevPos === null ? null : encodeToken(prefix, prevPos),
  };
}
