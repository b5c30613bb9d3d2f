import { randomUUID } from 'node:crypto';
import type { SecureServer, RequestHandler } from './transport';
import { Readable, type Duplex } from 'node:stream';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import swagger from '@fastify/swagger';
import { Type } from '@sinclair/typebox';
import { ApiError, JSON_MAX_DEPTH, PROBLEMS } from '../domain/errors';
import { findActiveKey, looksLikeKey } from '../store/repositories/organizations.repository';
import type { Db } from '../store/db';
import type { Logger } from '../services/context';
import { redactingLogger, sanitizeUrl } from './log-redaction';
import { sendProblem, toApiError } from './problem';
import { registerIdempotency } from './plugins/idempotency.plugin';
import { RateLimiter, type RateLimits } from './plugins/rate-limit';
import { addRoute, type RouteConfig } from './router';
import { finishDocument } from './openapi';

// The HTTP app as a factory (no listen): the server bootstrap in service.ts owns the port and
// TLS. Cross-cutting rules live here once: request ids, auth, rate limits, JSON-only bodies,
// idempotency, Problem Details for every error, 404/405.

export const JSON_BODY_LIMIT = 1024 * 1024;

const API_DESCRIPTION = [
  'Local HTTPS API of Blueline: projects, files, drawings, sheets, blocks, overlays, changes, symbols, jobs, credits and webhooks.',
  '',
  '**Authentication.** Every /v1 route needs `Authorization: Bearer <API key>` except the signed URLs (uploads, downloads, tiles: the signature in the query is the credential) and this document.',
  '',
  '**Errors** are RFC 9457 Problem Details (`application/problem+json`) with a stable `code`; `GET /problems/<code>` explains each. Every operation lists the codes it can answer. Besides those, any request may get `405 method_not_allowed` (a method the path does not have; with `Allow`), `403 https_required` (plain HTTP, the connection is closed), `400 validation_error` (a request that is not valid HTTP/1.1, e.g. without `Host`) and `500 internal_error`.',
  '',
  '**Lists** are cursor-paginated, newest first (`created_at`, then `id`, descending): pass `_meta.next` as `cursor` until it is null. A cursor remembers its filters and `limit`. `expand` inlines referenced records next to their `_id` fields (dot paths, at most 3 levels).',
  '',
  '**Idempotency.** Every POST accepts `Idempotency-Key`; a repeat returns the original response with `Idempotency-Status: hit`.',
  '',
  'Every response carries `X-Request-Id`. Ids are `<prefix>_` followed by letters and digits (new ids: a 26-character ULID).',
].join('\n');

const API_TAGS = [
  {
    name: 'projects',
    description: 'Projects hold drawings, files and everything derived from them.',
  },
  {
    name: 'files',
    description: 'Uploads (create, then PUT the bytes to the signed URL) and signed downloads.',
  },
  {
    name: 'drawings',
    description: 'Drawing sets made from an uploaded file; processing makes sheets and blocks.',
  },
  {
    name: 'sheets',
    description: 'Pages of a drawing, with the title-block metadata read from them.',
  },
  { name: 'blocks', description: 'Views found on a sheet (the whole sheet is one block too).' },
  {
    name: 'compare',
    description: 'Comparisons of revisions and change detection (Vision area, credits).',
  },
  { name: 'overlays', description: 'Aligned overlays of two blocks made by a comparison.' },
  {
    name: 'changes',
    description: 'Change regions found by change detection, with their review status.',
  },
  { name: 'symbols', description: 'Symbol detection from templates (Vision area, credits).' },
  { name: 'search', description: 'Search and question answering over a project (Vision area).' },
  { name: 'jobs', description: 'Long-running work: processing, comparison, analysis, parsing.' },
  { name: 'credits', description: 'Credit balance and ledger of the organization.' },
  { name: 'webhooks', description: 'Event subscriptions and their delivery log.' },
  { name: 'meta', description: 'This document and the problem types.' },
];

const ProblemType = Type.Object(
  {
    type: Type.String({ description: '/problems/<code>' }),
    code: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    description: Type.String({ description: 'what it means and what to do about it' }),
  },
  { $id: 'ProblemType' },
);

/** Headers HTTP/2 forbids in a response (RFC 9113 §8.2.2). */
export const H2_CONNECTION_HEADERS = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
] as const;

/** The nesting depth of JSON text once it exceeds `limit` (strings skipped), else -1. Linear. */
export function jsonDepthOver(text: string, limit: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > limit) return depth;
    } else if (c === 93 || c === 125) depth--;
  }
  return -1;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: { organizationId: string; keyId: string };
  }
}

export interface AppOptions {
  db: Db;
  log: Logger;
  rateLimits: RateLimits;
  /** The server the app runs on: HTTP/2 with HTTP/1.1 fallback (transport.ts). */
  serverFactory: (handler: RequestHandler) => SecureServer;
  /** True once shutdown has begun: new requests get 503. */
  isShuttingDown: () => boolean;
}

export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  // Every line this app logs is redacted (signed-URL signatures, Authorization, API keys), also
  // when the Logger it was given is not wrapped yet (idempotent when it is).
  const log = redactingLogger(opts.log);
  const app = Fastify({
    serverFactory: opts.serverFactory as never,
    bodyLimit: JSON_BODY_LIMIT,
    // Contract §1: X-Request-Id is echoed from the request when given (a sane token only, so no
    // header or log injection), else generated.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && /^[A-Za-z0-9._:-]{1,200}$/.test(given)
        ? given
        : `req_${randomUUID().replaceAll('-', '')}`;
    },
    requestIdHeader: false,
    logger: false,
    return503OnClosing: false,
    ajv: {
      customOptions: {
        coerceTypes: false,
        removeAdditional: false,
        allErrors: true,
        useDefaults: true,
      },
    },
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, maxParamLength: 500 },
    // Router-level failures (bad percent-encoding, over-long path parameters) and requests Node's
    // HTTP parser rejects answer Problem Details too (contract §3: every error), not Fastify's JSON.
    frameworkErrors: (error, request, reply) => {
      const code = (error as { code?: string }).code;
      const detail =
        code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'No record has an id that long.'
          : code === 'FST_ERR_BAD_URL'
            ? 'No route matches this path: it is not valid percent-encoded UTF-8.'
            : 'No route matches this request.';
      reply.header('x-request-id', request.id);
      return sendProblem(reply, request, new ApiError('not_found', detail));
    },
    clientErrorHandler: (err, socket) =>
      writeClientErrorProblem(err as NodeJS.ErrnoException, socket),
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Blueline API',
        version: '1.0.0',
        description: API_DESCRIPTION,
        license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      },
      servers: [{ url: '/', description: 'The service itself (https://<host>:<port>)' }],
      tags: API_TAGS,
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key of the organization: Authorization: Bearer sk_…',
          },
        },
      },
    },
    // Routes bring their own operation (router.ts, swaggerTransform); the rest are hidden.
    transformObject: (document) =>
      finishDocument(app, 'openapiObject' in document ? document.openapiObject : {}) as never,
  });

  const limiter = new RateLimiter(opts.rateLimits);
  const routes: { method: string; re: RegExp }[] = [];
  app.addHook('onRoute', (r) => {
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    const re = new RegExp(
      `^${r.url
        .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
        .replace(/\/:[^/]+/g, '/[^/]+')
        .replace(/\/\*$/, '/.*')}/?$`,
    );
    for (const m of methods) routes.push({ method: m, re });
  });

  // JSON bodies only (the raw upload route adds its own parsers). Empty body = no body.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'buffer', bodyLimit: JSON_BODY_LIMIT },
    (req, body, done) => {
      // A raw-upload route judges the Content-Type itself (415 when it is not the declared type):
      // hand it the bytes instead of failing them as JSON.
      if ((req.routeOptions.config as RouteConfig | undefined)?.rawBody)
        return done(null, Readable.from([body as Buffer]));
      const text = (body as Buffer).toString('utf8');
      if (text.trim() === '') return done(null, undefined);
      if (jsonDepthOver(text, JSON_MAX_DEPTH) !== -1)
        return done(
          new ApiError(
            'invalid_json',
            `The request body nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep; send at most ${JSON_MAX_DEPTH}.`,
          ),
          undefined,
        );
      try {
        done(null, JSON.parse(text));
      } catch {
        done(
          new ApiError('invalid_json', 'The request body is not valid JSON; send a JSON object.'),
          undefined,
        );
      }
    },
  );
  for (const type of [
    'application/pdf',
    'image/png',
    'image/jpeg',
    'image/tiff',
    'application/octet-stream',
  ]) {
    app.addContentTypeParser(type, (_req, payload, done) => done(null, payload));
  }

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    if (opts.isShuttingDown()) {
      throw new ApiError('unavailable', 'The service is shutting down; retry shortly.', {
        headers: { 'retry-after': '5' },
      });
    }
    if (request.raw.httpVersion === '1.1' && !request.headers.host) {
      // RFC 9112 §3.2: a 400; the transport lets it through (requireHostHeader: false) so it is a Problem.
      throw new ApiError('validation_error', 'HTTP/1.1 requests must carry a Host header.');
    }
    // (HTTP/2 carries the host in :authority; a stream with neither it nor Host is reset by the
    // protocol layer before it reaches the app: transport.test.ts.)
    const config = (request.routeOptions.config ?? {}) as RouteConfig;
    // Decide by the route that matched, not the raw path: the router ignores duplicate slashes, so
    // `//v1//projects` reaches an authenticated route although its raw path does not start with /v1/.
    const routeUrl = request.routeOptions.url;
    const path = (request.raw.url ?? '/').split('?')[0]!.replace(/\/{2,}/g, '/');
    const needsAuth = !config.public && (routeUrl ?? path).startsWith('/v1/');
    if (!needsAuth) return;
    await authenticate(request, opts.db);
    const headers = limiter.take(request.auth!.keyId, config.area ?? 'document');
    reply.headers(headers);
  });

  app.addHook('preValidation', async (request) => {
    const config = (request.routeOptions.config ?? {}) as RouteConfig;
    const body = request.body as unknown;
    if (!config.rawBody && body && typeof (body as { pipe?: unknown }).pipe === 'function') {
      (body as NodeJS.ReadableStream).resume();
      throw new ApiError(
        'unsupported_media_type',
        'This route accepts only Content-Type: application/json.',
      );
    }
  });

  // HTTP/2 forbids connection-specific headers (RFC 9113 §8.2.2; Node's compatibility layer
  // throws ERR_HTTP2_INVALID_CONNECTION_HEADERS when a response carries one): none is sent on an
  // HTTP/2 stream, whatever a route or hook set.
  app.addHook('onSend', async (request, reply) => {
    if (request.raw.httpVersionMajor !== 2) return;
    for (const name of H2_CONNECTION_HEADERS) if (reply.hasHeader(name)) reply.removeHeader(name);
  });

  registerIdempotency(app, opts.db);

  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.status >= 500) {
      // The URL without credentials: a signed URL's signature is valid for up to an hour.
      log.error(
        {
          err: error,
          request_id: request.id,
          method: request.method,
          url: sanitizeUrl(request.raw.url),
        },
        'request failed',
      );
    }
    return sendProblem(reply, request, apiError);
  });

  app.setNotFoundHandler(async (request, reply) => {
    const path = (request.raw.url ?? '/').split('?')[0]!;
    const allowed = [...new Set(routes.filter((r) => r.re.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      return sendProblem(
        reply,
        request,
        new ApiError(
          'method_not_allowed',
          `${request.method} is not allowed on ${path.slice(0, 200)}; allowed: ${allowed.join(', ')}.`,
          {
            headers: { allow: allowed.join(', ') },
          },
        ),
      );
    }
    return sendProblem(
      reply,
      request,
      new ApiError('not_found', `No route ${request.method} ${path.slice(0, 200)} exists.`),
    );
  });

  // Problem type documentation (contract §3): GET /problems/<code>, no auth.
  addRoute(app, {
    operationId: 'getProblemType',
    method: 'GET',
    url: '/problems/:code',
    summary: 'Explain a problem type (the `type` of a Problem Details body)',
    tags: ['meta'],
    public: true,
    params: Type.Object({ code: Type.String({ description: 'a problem code, e.g. not_found' }) }),
    responses: { 200: ProblemType },
    handler: async (request, reply) => {
      const { code } = request.params as { code: string };
      if (!Object.hasOwn(PROBLEMS, code))
        throw new ApiError('not_found', `No problem type '${code.slice(0, 100)}' exists.`);
      const def = PROBLEMS[code as keyof typeof PROBLEMS];
      return reply.send({
        type: `/problems/${code}`,
        code,
        title: def.title,
        status: def.status,
        description: def.description,
      });
    },
  });

  addRoute(app, {
    operationId: 'getOpenApiDocument',
    method: 'GET',
    url: '/v1/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    tags: ['meta'],
    public: true,
    responses: {
      200: {
        description: 'The OpenAPI 3.1 document of this API',
        content: { 'application/json': Type.Object({}, { additionalProperties: true }) },
      },
    },
    handler: async () => app.swagger(),
  });

  return app;
}

/** Node's HTTP parser rejected the request (malformed header, bad Content-Length, headers over 16 KiB). */
function writeClientErrorProblem(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed || !socket.writable || socket.writableEnded) {
    if (!socket.writableEnded) socket.destroy();
    return;
  }
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const code = tooLarge ? 'payload_too_large' : 'validation_error';
  const requestId = `req_${randomUUID().replaceAll('-', '')}`;
  const body = JSON.stringify({
    type: `/problems/${code}`,
    title: PROBLEMS[code].title,
    status: PROBLEMS[code].status,
    detail: tooLarge
      ? 'The request headers are larger than the 16 KiB limit.'
      : 'The request is not valid HTTP/1.1 (for example a malformed header or Content-Length); it was not processed.',
    instance: '/',
    code,
    request_id: requestId,
  });
  // Keep reading what the client is still sending: closing with unread bytes makes the kernel send
  // a RST, which discards the response before the client reads it (e.g. after headers over 16 KiB).
  socket.on('data', () => {});
  socket.resume();
  setTimeout(() => socket.destroy(), 5000).unref();
  socket.end(
    `HTTP/1.1 ${PROBLEMS[code].status} ${tooLarge ? 'Content Too Large' : 'Bad Request'}\r\n` +
      `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

async function authenticate(request: FastifyRequest, db: Db): Promise<void> {
  const header = request.headers.authorization;
  const fail = (detail: string) =>
    new ApiError('unauthorized', detail, {
      headers: { 'www-authenticate': 'Bearer realm="blueline", error="invalid_token"' },
    });
  if (!header) {
    throw new ApiError('unauthorized', 'Send your API key as Authorization: Bearer <key>.', {
      headers: { 'www-authenticate': 'Bearer realm="blueline"' },
    });
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) throw fail('The Authorization header must be "Bearer <key>".');
  const secret = m[1]!;
  if (!looksLikeKey(secret))
    throw fail('The API key is malformed; keys look like sk_ followed by 40 letters and digits.');
  const key = await findActiveKey(db, secret);
  if (!key) throw fail('The API key is unknown or has been revoked.');
  request.auth = { organizationId: key.organization_id, keyId: key.id };
}
