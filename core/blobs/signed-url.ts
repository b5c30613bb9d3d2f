import { createHmac, timingSafeEqual } from 'node:crypto';
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

export class UrlSigner {
  private readonly secret: Buffer;

  /** `secret`: at least 32 bytes, e.g. `await loadOrCreateSecret(dataDir, 'url-signing')`. */
  constructor(secret: Buffer) {
    if (!Buffer.isBuffer(secret) || secret.length < 32)
      throw new TypeError('Expected a secret of at least 32 bytes for the URL signer.');
    this.secret = Buffer.from(secret);
  }

  /** Signs `path` for `ttlSeconds` (default 1 hour; use UPLOAD_URL_TTL_SECONDS and 'PUT' for uploads). */
  sign(
    path: string,
    ttlSeconds = DOWNLOAD_URL_TTL_SECONDS,
    opts: { method?: SignedMethod; now?: number } = {},
  ): SignedUrl {
    if (typeof path !== 'string' || !PATH_RE.test(path) || path.includes('?') || path.includes('#'))
      throw new TypeError(
        `Expected an absolute path without query or fragment to sign but received '${path}'.`,
      );
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_TTL_SECONDS)
      throw new RangeError(
        `Expected an integer between 1 and ${MAX_TTL_SECONDS} for ttlSeconds but received ${ttlSeconds}.`,
      );
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
    const given = Buffer.from(signature, 'base64url');
    const expected = Buffer.from(this.mac(methodClass(method), path, expires), 'base64url');
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
    return createHmac('sha256', this.secret)
      .update(`blueline-url-v1\n${method}\n${path}\n${expires}`)
      .digest('base64url');
  }
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
