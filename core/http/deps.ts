import type { FastifyRequest } from 'fastify';
import type { UrlSigner } from '../blobs/signed-url';
import type { Db } from '../store/db';
import type { SerializeContext } from '../services/resources';
import type { CursorCodec } from './cursor';
import type { ListReader } from './list-reader';

// What route modules receive from the service bootstrap.
export interface HttpDeps {
  db: Db;
  cursors: CursorCodec;
  /** Signs an object key into an absolute HTTPS URL on the request's origin. */
  signedUrl(origin: string, key: string): string;
  /**
   * The list reader thread, when the service runs one: list pages are built there from a
   * read-only handle, and the HTTP thread only parses, authenticates and writes (list-reader.ts).
   * Without it (or while it starts) pages are built on the HTTP thread: the same bytes either way.
   */
  lists?: ListReader;
}

/**
 * `HttpDeps.signedUrl` over a signer: `<origin>/v1/blobs/<key>?expires=…&signature=…`, a download
 * URL whose expiry is on the signer's step (so a blob keeps its URL across list refetches).
 * The list reader thread signs with the same function and an equal signer, so both give one URL.
 */
export function blobUrlSigner(signer: UrlSigner): HttpDeps['signedUrl'] {
  return (origin, key) => origin + signer.downloadUrl(`/v1/blobs/${key}`);
}

const HOST_RE = /^[A-Za-z0-9.\-[\]:]{1,255}$/;

export function requestOrigin(request: FastifyRequest): string {
  const host = request.headers.host;
  const local = request.socket.localPort;
  return `https://${host && HOST_RE.test(host) ? host : `127.0.0.1:${local}`}`;
}

export function serializeContext(deps: HttpDeps, request: FastifyRequest): SerializeContext {
  return originContext(deps.signedUrl, requestOrigin(request));
}

/** The serialize context of one request origin (also built by the list reader thread). */
export function originContext(signedUrl: HttpDeps['signedUrl'], origin: string): SerializeContext {
  return { signedUrl: (key) => (key ? signedUrl(origin, key) : null) };
}

export function orgOf(request: FastifyRequest): string {
  if (!request.auth) throw new Error('route reached without authentication');
  return request.auth.organizationId;
}
