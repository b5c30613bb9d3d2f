import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors';
import {
  claimKey,
  completeKey,
  getKey,
  releaseKey,
  type IdempotencyRow,
} from '../../store/repositories/idempotency.repository';
import type { Db } from '../../store/db';

// Idempotency for every POST (spec "Idempotency", contract §8). The key is claimed in one SQLite
// transaction before the handler runs, so concurrent duplicates can never both run: the later ones
// wait for the first to finish and replay its response. 4xx responses are cached; 5xx release the
// key so the request may be retried.

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const KEY_RE = /^[A-Za-z0-9_-]{1,256}$/;
const REPLAYED_HEADERS = ['content-type', 'location'];
const UNSAFE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: { organizationId: string; key: string; settled: boolean };
  }
}

/** Canonical JSON: object keys sorted, so semantically equal bodies hash alike. */
export function canonicalJson(v: unknown): string {
  if (v === undefined) return '';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
}

export function registerIdempotency(app: FastifyInstance, db: Db): void {
  const waiters = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  const waiterKey = (org: string, key: string) => `${org}\u0000${key}`;

  const settle = async (
    request: FastifyRequest,
    response: { status: number; headers: Record<string, string>; body: string } | null,
  ) => {
    const idem = request.idempotency;
    if (!idem || idem.settled) return;
    idem.settled = true;
    if (response && response.status < 500)
      await completeKey(db, idem.organizationId, idem.key, response);
    else await releaseKey(db, idem.organizationId, idem.key);
    const k = waiterKey(idem.organizationId, idem.key);
    waiters.get(k)?.resolve();
    waiters.delete(k);
  };

  const replay = (reply: FastifyReply, row: IdempotencyRow): FastifyReply => {
    const headers = JSON.parse(row.response_headers ?? '{}') as Record<string, string>;
    return reply
      .code(row.response_status ?? 200)
      .headers(headers)
      .header('idempotency-status', 'hit')
      .send(row.response_body ?? '');
  };

  app.addHook('preValidation', async (request, reply) => {
    // Only POST claims keys; PATCH, PUT and DELETE are naturally idempotent, but a key already held
    // by a POST is still refused there (contract §8: another method with the same key is a 409).
    if (!request.auth || !UNSAFE_METHODS.has(request.method)) return;
    const raw = request.headers['idempotency-key'];
    if (raw === undefined) return;
    const key = Array.isArray(raw) ? raw.join(',') : raw;
    if (!KEY_RE.test(key)) {
      throw new ApiError(
        'invalid_idempotency_key',
        key.length === 0
          ? 'The Idempotency-Key header is empty; send 1 to 256 characters from A-Z, a-z, 0-9, hyphen and underscore (a UUID v4 is recommended).'
          : key.length > 256
            ? `The Idempotency-Key header is ${key.length} characters long; at most 256 are allowed.`
            : 'The Idempotency-Key header may contain only A-Z, a-z, 0-9, hyphen and underscore.',
      );
    }
    const organizationId = request.auth.organizationId;
    // The path as the router matched it (duplicate and trailing slashes do not make another route).
    const route = (request.raw.url ?? '')
      .split('?')[0]!
      .replace(/\/{2,}/g, '/')
      .replace(/(.)\/$/, '$1');
    if (request.method !== 'POST') {
      const held = await getKey(db, organizationId, key);
      if (held && held.expires_at > new Date().toISOString()) {
        throw new ApiError(
          'idempotency_key_conflict',
          `This Idempotency-Key was already used with a different method (${held.method} ${held.route}); use a new key for a new request.`,
        );
      }
      return;
    }
    const bodyHash = createHash('sha256').update(canonicalJson(request.body)).digest('hex');

    for (;;) {
      const claim = await claimKey(db, {
        organizationId,
        key,
        method: request.method,
        route,
        bodyHash,
        now: new Date(),
        ttlMs: IDEMPOTENCY_TTL_MS,
      });
      if (claim.outcome === 'claimed') {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        waiters.set(waiterKey(organizationId, key), { promise, resolve });
        request.idempotency = { organizationId, key, settled: false };
        reply.header('idempotency-status', 'miss');
        return;
      }
      const row = claim.row;
      if (row.method !== request.method || row.route !== route || row.body_hash !== bodyHash) {
        const what =
          row.method !== request.method ? 'method' : row.route !== route ? 'route' : 'request body';
        throw new ApiError(
          'idempotency_key_conflict',
          `This Idempotency-Key was already used with a different ${what} (${row.method} ${row.route}); use a new key for a new request.`,
        );
      }
      if (row.state === 'done') return replay(reply, row);
      // The original is still being handled: wait for it, then replay its response (or, if it
      // failed with a 5xx and released the key, claim the key and run this request instead).
      const waiter = waiters.get(waiterKey(organizationId, key));
      if (waiter) await waiter.promise;
      else await new Promise((r) => setTimeout(r, 50));
      const after = await getKey(db, organizationId, key);
      if (after?.state === 'done') {
        if (
          after.body_hash !== bodyHash ||
          after.route !== route ||
          after.method !== request.method
        )
          continue;
        return replay(reply, after);
      }
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.idempotency || request.idempotency.settled) return payload;
    const headers: Record<string, string> = {};
    for (const name of REPLAYED_HEADERS) {
      const v = reply.getHeader(name);
      if (v !== undefined) headers[name] = String(v);
    }
    const body =
      typeof payload === 'string'
        ? payload
        : Buffer.isBuffer(payload)
          ? payload.toString('utf8')
          : '';
    await settle(request, { status: reply.statusCode, headers, body });
    return payload;
  });

  // Whatever happened (aborted connection, error before onSend), never leave a key claimed.
  app.addHook('onResponse', async (request) => await settle(request, null));
  app.addHook('onRequestAbort', async (request) => await settle(request, null));
}
