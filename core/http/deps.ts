import type { FastifyRequest } from 'fastify';
import type { UrlSigner } from '../blobs/signed-url';
import type { Db } from '../store/db';
import type { SerializeContext } from '../services/resources';
import type { CursorCodec } from './cursor';

// What route modules receive from the service bootstrap.
export interface HttpDeps {
  db: Db;
  cursors: CursorCodec;
  /** Signs an object key into an absolute HTTPS URL on the request's origin. */
  signedUrl(origin: string, key: string): string;
}

/**
 * `HttpDeps.signedUrl` over a signer: `<origin>/v1/blobs/<key>?expires=…&signature=…`, a download
 * URL whose expiry is on the signer's step (so a blob keeps its URL across list refetches).
 */
export function blobUrlSigner(signer: UrlSigner): HttpDeps['signedUrl'] {
  return (origin, key) => origin + signer.downloadUrl(`/v1/blobs/${key}`);
}

const HOST_RE = /^[A-Za-z0-9.\-[\]:]{1,255}$/;

export function requestOrigin(request: FastifyRequest): string {
  // HTTP/1.1: Host; HTTP/2: the :authority pseudo-header (Host only if the client sent one).
  const given = request.headers.host ?? request.headers[':authority'];
  const host = typeof given === 'string' ? given : undefined;
  const local = request.socket.localPort;
  return `https://${host && HOST_RE.test(host) ? host : `127.0.0.1:${local}`}`;
}

export function serializeContext(deps: HttpDeps, request: FastifyRequest): SerializeContext {
  const origin = requestOrigin(request);
  return { signedUrl: (key) => (key ? deps.signedUrl(origin, key) : null) };
}

export function orgOf(request: FastifyRequest): string {
  if (!request.auth) throw new Error('route reached without authentication');
  return request.auth.organizationId;
}
