// Secrets never reach a log line (contract §3, issue 7): signed URLs carry a credential valid for
// up to an hour in their `signature` query parameter, requests carry API keys in Authorization,
// webhook endpoints may carry tokens in their query, and errors from libraries often echo the URL
// or headers they were given. The service's Logger is pino-shaped (structured fields first,
// message second) but not pino, and Fastify's own logger is off (app.ts), so pino's `redact` paths
// and serializers are done here once, as a wrapper around any Logger:
//  - fields named like a credential (authorization, cookie, x-api-key, signature, token, secret,
//    password …) at any depth are replaced by "[Redacted]" — the equivalent of pino's redact paths
//    `*.authorization`, `headers.authorization`, `req.headers.cookie`, …, without listing each path;
//  - every string, at any depth (messages, stacks, URLs, error causes), has signed-URL query values,
//    `Bearer`/`Basic` credentials, API keys (`sk_…`) and webhook secrets (`whsec_…`) masked —
//    the URL-sanitizing serializer, applied to whatever field a URL ends up in;
//  - Error objects become { name, message, stack, code, cause } with the same masking (they do not
//    serialize to JSON on their own).
// Wrap the Logger where it is created (createService) so job, webhook and HTTP logs all pass here.

import type { Logger } from '../services/context';

export const REDACTED = '[Redacted]';

/** Field names whose value is a credential wherever they appear (compared case-insensitively). */
const SECRET_KEYS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
  'api_key',
  'apikey',
  'signature',
  'sig',
  'token',
  'access_token',
  'refresh_token',
  'secret',
  'client_secret',
  'password',
  'passwd',
]);

/**
 * Query parameters whose value is a credential: ours (`signature`; `expires` stays readable) and
 * the usual names in third-party URLs (webhook endpoints, pre-signed cloud URLs).
 */
const SECRET_PARAMS = [
  'signature',
  'sig',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'apikey',
  'key',
  'secret',
  'client_secret',
  'password',
  'auth',
  'code',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'x-goog-signature',
  'x-goog-credential',
].join('|');
// Also matches the percent-encoded form (`%3Fsignature%3D…`) of a URL nested in another's query.
const QUERY_SECRET_RE = new RegExp(
  `((?:[?&;]|%3F|%26)(?:${SECRET_PARAMS})(?:=|%3D))[^&#\\s"'<>]*`,
  'gi',
);
const AUTH_SCHEME_RE = /\b(Bearer|Basic|Token|Digest)\s+[A-Za-z0-9._~+/=:-]{4,}/gi;
const API_KEY_RE = /\bsk_[A-Za-z0-9]{8,}/g;
const WEBHOOK_SECRET_RE = /\bwhsec_[A-Za-z0-9+/=_-]{8,}/g;

/** Masks every credential found in a free-form string (URL, message, stack). */
export function redactString(s: string): string {
  return s
    .replace(QUERY_SECRET_RE, `$1${REDACTED}`)
    .replace(AUTH_SCHEME_RE, `$1 ${REDACTED}`)
    .replace(API_KEY_RE, `sk_${REDACTED}`)
    .replace(WEBHOOK_SECRET_RE, `whsec_${REDACTED}`);
}

/**
 * A request URL as it may be logged: the path and the query with credential values masked
 * (`/v1/blobs/x?expires=1700000000&signature=[Redacted]`). Non-strings pass through.
 */
export function sanitizeUrl<T>(url: T): T | string {
  return typeof url === 'string' ? redactString(url) : url;
}

const MAX_DEPTH = 8;

/** A copy of `v` safe to log: credential fields replaced, strings masked, Errors flattened. */
export function redact(v: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof v === 'string') return redactString(v);
  if (v === null || typeof v !== 'object') return v;
  if (seen.has(v)) return '[Circular]';
  if (depth >= MAX_DEPTH) return '[Truncated]';
  seen.add(v);
  try {
    if (v instanceof Error) {
      const e = v as Error & { code?: unknown; cause?: unknown };
      const out: Record<string, unknown> = {
        name: e.name,
        message: redactString(e.message),
        ...(e.stack ? { stack: redactString(e.stack) } : {}),
      };
      if (e.code !== undefined) out.code = redact(e.code, depth + 1, seen);
      if (e.cause !== undefined) out.cause = redact(e.cause, depth + 1, seen);
      // Own enumerable extras (e.g. an HTTP client's `config.headers`, `url`, `response`).
      for (const [k, x] of Object.entries(e)) {
        if (k in out) continue;
        out[k] = SECRET_KEYS.has(k.toLowerCase()) ? REDACTED : redact(x, depth + 1, seen);
      }
      return out;
    }
    if (Array.isArray(v)) return v.map((x) => redact(x, depth + 1, seen));
    if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer) return `[${v.constructor.name}]`;
    if (v instanceof URL) return redactString(v.href);
    if (v instanceof Map) return redact(Object.fromEntries(v), depth + 1, seen);
    if (typeof (v as { toJSON?: unknown }).toJSON === 'function' && !(v instanceof Date))
      return redact((v as { toJSON(): unknown }).toJSON(), depth + 1, seen);
    if (v instanceof Date) return v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = SECRET_KEYS.has(k.toLowerCase()) ? REDACTED : redact(x, depth + 1, seen);
    }
    return out;
  } finally {
    seen.delete(v);
  }
}

const WRAPPED = Symbol('redacting');

/**
 * `log` with every line redacted before it is written. Idempotent: wrapping a wrapped logger
 * returns it unchanged.
 */
export function redactingLogger(log: Logger): Logger {
  if ((log as { [WRAPPED]?: true })[WRAPPED]) return log;
  const level =
    (fn: Logger['info']) =>
    (obj: object | string, msg?: string): void => {
      const o = redact(obj) as object | string;
      if (msg === undefined) fn.call(log, o);
      else fn.call(log, o, redactString(msg));
    };
  return Object.assign(
    { info: level(log.info), warn: level(log.warn), error: level(log.error) },
    { [WRAPPED]: true as const },
  );
}
