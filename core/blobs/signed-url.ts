import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { ApiError } from '../domain/errors';

// Signed URLs (contract §5): `<path>?expires=<unix seconds>&signature=<base64url HMAC-SHA256>`,
// usable without an Authorization header. The MAC covers a version tag, the method class, the path
// and the expiry, so neither the path nor the expiry can be changed, and a download URL (GET/HEAD)
// can never be used to upload (PUT) even if both routes share a path. Other query parameters
// (e.g. `?palette=`) are not signed and are left to the route.
//
// `path` is the request's pathname exactly as sent, without the query (`/v1/files/fil_…/content`).
// Tile routes (`<uri>/tiles/{z}/{x}/{y}.webp`) verify against the base image path they extend,
// so one signed image URL authorizes its tile pyramid.

/** Default lifetime of download URLs (`*_uri`): 1 hour. */
export const DOWNLOAD_URL_TTL_SECONDS = 3600;
/** Default lifetime of upload URLs (`upload_url`): 15 minutes. */
export const UPLOAD_URL_TTL_SECONDS = 900;
const MAX_TTL_SECONDS = 7 * 24 * 3600;
/**
 * Download URLs from `downloadUrl` expire on a multiple of this step (unix seconds) plus the TTL:
 * one blob keeps the same URL for up to 5 minutes, so list refetches give the browser URLs it has
 * already cached (images, tile pyramids) and the signer can reuse the signature. Such a URL is
 * valid at least DOWNLOAD_URL_TTL_SECONDS (contract §5: 1 hour) and less than TTL + step.
 */
export const DOWNLOAD_URL_EXPIRY_STEP_SECONDS = 300;
/** Default number of download signatures `downloadUrl` remembers (least recently used go first). */
export const DOWNLOAD_URL_MEMO_ENTRIES = 16_384;

export type SignedMethod = 'GET' | 'HEAD' | 'PUT';

export interface SignedUrl {
  /** The path with `?expires=…&signature=…` appended; prefix it with the origin for a full URL. */
  url: string;
  /** RFC 3339 UTC with milliseconds, e.g. for `upload_expires_at`. */
  expiresAt: string;
}

export type QueryInput = URLSearchParams | Record<string, unknown>;

export type VerifyResult = { ok: true; expiresAt: string } | { ok: false; error: ApiError };

const PATH_RE = /^\/[\x21-\x7e]*$/;

export interface UrlSignerOptions {
  /** Expiry step of `downloadUrl`, seconds (default DOWNLOAD_URL_EXPIRY_STEP_SECONDS; 1 = none). */
  expiryStepSeconds?: number;
  /** Signatures `downloadUrl` remembers (default DOWNLOAD_URL_MEMO_ENTRIES; 0 = none). */
  memoEntries?: number;
}

export class UrlSigner {
  /** One KeyObject for every MAC: createHmac does not re-import the raw secret per signature. */
  private readonly key: KeyObject;
  private readonly stepMs: number;
  /**
   * path → the last download URL signed for it, in two generations (an approximate LRU without
   * per-entry deletion): lookups try `young`, then `old` (a hit there moves up to `young`); when
   * `young` holds half the entries it becomes `old` and the previous `old` is dropped, so at most
   * `memoEntries` are held and a path used within the last half is never dropped. (A Map used as
   * an exact LRU — delete and re-set on each hit, evict `keys().next()` — made every miss ~3.5 µs
   * slower once full: V8 skips the deleted slots at the front on each eviction.) An entry only
   * answers for the same expiry, so it never hands out a URL other than the one `mac` would
   * compute: a memo of a pure function, not of a decision.
   */
  private young = new Map<string, { expires: number; url: string }>();
  private old = new Map<string, { expires: number; url: string }>();
  private readonly generation: number;

  /** `secret`: at least 32 bytes, e.g. `await loadOrCreateSecret(dataDir, 'url-signing')`. */
  constructor(secret: Buffer, opts: UrlSignerOptions = {}) {
    if (!Buffer.isBuffer(secret) || secret.length < 32)
      throw new TypeError('Expected a secret of at least 32 bytes for the URL signer.');
    const step = opts.expiryStepSeconds ?? DOWNLOAD_URL_EXPIRY_STEP_SECONDS;
    if (!Number.isInteger(step) || step < 1 || step > 3600)
      throw new RangeError(
        `Expected an integer between 1 and 3600 for expiryStepSeconds but received ${step}.`,
      );
    const memo = opts.memoEntries ?? DOWNLOAD_URL_MEMO_ENTRIES;
    if (!Number.isInteger(memo) || memo < 0)
      throw new RangeError(`Expected a non-negative integer for memoEntries but received ${memo}.`);
    this.key = createSecretKey(Buffer.from(secret));
    this.stepMs = step * 1000;
    this.generation = Math.floor(memo / 2);
  }

  /**
   * A download (GET/HEAD) URL for `path`: `<path>?expires=…&signature=…`, as `sign(path)` gives,
   * but the expiry is the next multiple of the expiry step at or after `now`, plus the TTL (default
   * 1 hour). The URL is therefore valid at least `ttlSeconds` and less than `ttlSeconds` + step,
   * and the same path gets the same URL for a whole step — the browser can reuse cached images
   * and tiles across list refetches, and the signature comes from the memo. For the `*_uri` fields
   * of API objects (contract §5); use `sign` where the exact expiry is shown (`upload_expires_at`).
   */
  downloadUrl(path: string, now = Date.now(), ttlSeconds = DOWNLOAD_URL_TTL_SECONDS): string {
    if (!Number.isFinite(now))
      throw new RangeError(`Expected a finite time in ms for now but received ${now}.`);
    // The step is added on top of the TTL, so the TTL leaves room for it under the maximum.
    checkTtl(ttlSeconds, MAX_TTL_SECONDS - this.stepMs / 1000);
    const expires = Math.ceil(now / this.stepMs) * (this.stepMs / 1000) + ttlSeconds;
    const hit = this.young.get(path);
    if (hit !== undefined && hit.expires === expires) return hit.url;
    const older = hit === undefined ? this.old.get(path) : undefined;
    if (older !== undefined && older.expires === expires) {
      this.remember(path, older);
      return older.url;
    }
    // A hit's path was checked when it was signed; a miss is checked now.
    checkPath(path);
    const url = `${path}?expires=${expires}&signature=${this.mac('GET', path, String(expires))}`;
    this.remember(path, { expires, url });
    return url;
  }

  private remember(path: string, entry: { expires: number; url: string }): void {
    if (this.generation === 0) return;
    if (this.young.size >= this.generation && !this.young.has(path)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(path, entry);
  }

  /** Number of signatures `downloadUrl` holds now (at most `memoEntries`). */
  get memoSize(): number {
    return this.young.size + this.old.size;
  }

  /** Signs `path` for `ttlSeconds` (default 1 hour; use UPLOAD_URL_TTL_SECONDS and 'PUT' for uploads). */
  sign(
    path: string,
    ttlSeconds = DOWNLOAD_URL_TTL_SECONDS,
    opts: { method?: SignedMethod; now?: number } = {},
  ): SignedUrl {
    checkPath(path);
    checkTtl(ttlSeconds);
    const now = opts.now ?? Date.now();
    const expires = Math.floor(now / 1000) + ttlSeconds;
    const signature = this.mac(methodClass(opts.method ?? 'GET'), path, String(expires));
    return {
      url: `${path}?expires=${expires}&signature=${signature}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  /**
   * Checks a request against its signature. The detail tells an expired URL (authentic but past
   * its time) from an altered one (path, expiry or signature changed, or not issued by us).
   */
  verify(
    path: string,
    query: QueryInput,
    now = Date.now(),
    method: SignedMethod = 'GET',
  ): VerifyResult {
    const fail = (detail: string): VerifyResult => ({
      ok: false,
      error: new ApiError('invalid_signature', detail),
    });
    const expires = single(query, 'expires');
    const signature = single(query, 'signature');
    if (expires === undefined && signature === undefined)
      return fail(
        'The URL is not signed: it has no expires and signature parameters. Fetch the resource again for a fresh URL.',
      );
    if (
      typeof expires !== 'string' ||
      typeof signature !== 'string' ||
      !/^\d{1,12}$/.test(expires) ||
      !/^[A-Za-z0-9_-]{43}$/.test(signature) ||
      typeof path !== 'string'
    )
      return fail(
        'The URL was altered: its expires or signature parameter is malformed. Fetch the resource again for a fresh URL.',
      );
    // Compared as text, not as decoded bytes: base64url decoding ignores the 2 unused low bits of
    // the 43rd character, so a signature ending in 'B' instead of 'A' would decode to the same MAC
    // (an alteration accepted in ~6 % of URLs; the cursor codec compares text for the same reason).
    const given = Buffer.from(signature, 'latin1');
    const expected = Buffer.from(this.mac(methodClass(method), path, expires), 'latin1');
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return fail(
        'The URL was altered or not issued by this service: its signature does not match its path and expiry. Fetch the resource again for a fresh URL.',
      );
    const expiresMs = Number(expires) * 1000;
    const expiresAt = new Date(expiresMs).toISOString();
    if (now >= expiresMs)
      return fail(
        `The signed URL expired at ${expiresAt}. Fetch the resource again for a fresh URL.`,
      );
    return { ok: true, expiresAt };
  }

  /** `verify` that throws the ApiError (403 invalid_signature). */
  assertValid(
    path: string,
    query: QueryInput,
    now = Date.now(),
    method: SignedMethod = 'GET',
  ): void {
    const r = this.verify(path, query, now, method);
    if (!r.ok) throw r.error;
  }

  private mac(method: string, path: string, expires: string): string {
    return createHmac('sha256', this.key)
      .update(`blueline-url-v1\n${method}\n${path}\n${expires}`)
      .digest('base64url');
  }
}

function checkPath(path: string): void {
  if (typeof path !== 'string' || !PATH_RE.test(path) || path.includes('?') || path.includes('#'))
    throw new TypeError(
      `Expected an absolute path without query or fragment to sign but received '${path}'.`,
    );
}

function checkTtl(ttlSeconds: number, max = MAX_TTL_SECONDS): void {
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > max)
    throw new RangeError(
      `Expected an integer between 1 and ${max} for ttlSeconds but received ${ttlSeconds}.`,
    );
}

/** HEAD reads what GET reads. */
const methodClass = (m: SignedMethod): string => (m === 'HEAD' ? 'GET' : m);

/** The one value of `name`; null when it is repeated (a repeated parameter is an alteration). */
function single(query: QueryInput, name: string): string | null | undefined {
  if (query instanceof URLSearchParams) {
    const all = query.getAll(name);
    return all.length === 0 ? undefined : all.length === 1 ? all[0] : null;
  }
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  return null;
}
