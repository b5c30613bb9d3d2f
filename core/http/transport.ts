import { randomUUID } from 'node:crypto';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import type { TlsMaterial } from './tls';

// One port, HTTPS only (contract §1). A front TCP server peeks at the first byte of each
// connection: 0x16 is a TLS handshake record and goes to the secure server; anything else is
// plain HTTP and gets `403 https_required` with the connection closed. No route is ever served
// over plain HTTP.
//
// The secure server speaks HTTP/2 and HTTP/1.1, chosen by ALPN in the TLS handshake (a client
// that offers no ALPN, or only http/1.1, gets HTTP/1.1). Over HTTP/2 a browser sends every
// request on one connection at once (HTTP/1.1: at most 6 connections per host in Chromium, so
// the viewer's tiles queued behind each other and reached the service one by one). The app's
// handler gets Node's compatibility request/response for HTTP/2 streams and the usual
// IncomingMessage/ServerResponse for HTTP/1.1.

/** HTTP/2 settings the service announces (RFC 9113 §6.5.2). */
export const H2_SETTINGS = {
  // A viewer's zoom step asks for its view's tiles and a prefetch ring at once (~10–60 requests).
  maxConcurrentStreams: 128,
  // Receive window per stream (request bodies: uploads of large PDFs). The connection's window is
  // raised to H2_CONNECTION_WINDOW when a session starts. Downloads are paced by the client's
  // windows (Chromium announces 6 MiB per stream, 15 MiB per connection).
  initialWindowSize: 1024 * 1024,
} as const;
export const H2_CONNECTION_WINDOW = 8 * 1024 * 1024;
/** An HTTP/2 connection with no stream open for this long is closed (GOAWAY). */
export const H2_IDLE_TIMEOUT_MS = 60_000;

export type SecureServer = http2.Http2SecureServer;
export type RequestHandler = (
  req: http.IncomingMessage | http2.Http2ServerRequest,
  res: http.ServerResponse | http2.Http2ServerResponse,
) => void;

export interface Transport {
  /** The server the app runs on (HTTP/2 with HTTP/1.1 fallback); it never listens itself. */
  readonly httpsServer: SecureServer;
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

export function createTransport(
  tls: TlsMaterial,
  handler: RequestHandler,
  opts: { requestTimeoutMs?: number; keepAliveTimeoutMs?: number; h2IdleTimeoutMs?: number } = {},
): Transport {
  const httpsServer = http2.createSecureServer(
    {
      cert: tls.cert,
      key: tls.key,
      minVersion: 'TLSv1.2',
      allowHTTP1: true,
      settings: { ...H2_SETTINGS },
      // Buffers of one connection (the default 10 MB is less than the connection window above
      // plus the streams' headers and answers queued); beyond it new streams are refused.
      maxSessionMemory: 64,
    },
    handler as never,
  );
  // HTTP/1.1 connections on this server read their options from it (Node's http server options;
  // http2.createSecureServer does not take them): the app answers a missing Host with a Problem
  // Details 400 (Node's own 400 has no body), so requireHostHeader stays off (unset is off here).
  const h1 = httpsServer as SecureServer & {
    keepAliveTimeout: number;
    headersTimeout: number;
    requestTimeout: number;
  };
  h1.requestTimeout = opts.requestTimeoutMs ?? 0;
  h1.keepAliveTimeout = opts.keepAliveTimeoutMs ?? 5000;
  h1.headersTimeout = 30_000;
  // An Expect other than 100-continue would get Node's bare 417 (no Problem Details body); the
  // expectation is ignored instead (RFC 9110 §10.1.1 allows it) and the request is served. The
  // HTTP/2 compatibility layer emits the same event for such a request.
  httpsServer.on('checkExpectation', handler as never);
  // Keep-alive under a stalled event loop (HTTP/1.1). Node's server destroys a connection whose
  // keep-alive timer fired, and timers run before the poll phase that reads the sockets: when the
  // loop was stalled (load, a long synchronous stretch) after a client reused the connection —
  // within the `Keep-Alive: timeout=5` we advertise — the overdue timer destroyed it with that
  // request unread in its receive buffer, and the client saw `read ECONNRESET` (Node issue
  // 43456). With a 'timeout' listener Node leaves the socket to us: it is closed two loop turns
  // later only if no byte arrived and no response is under way — the first turn's poll phase reads
  // what waited through the stall; the second's what a client in this process (tests, an
  // embedding app) sent while reading an answer that the stall held back. A request that did
  // arrive resets the keep-alive state, and its answer re-arms the timer. (HTTP/2 sessions never
  // reach this listener: their idle close is a GOAWAY naming the last stream served, so a client
  // knows which requests to send again; see 'session' below.)
  httpsServer.on('timeout', (socket: net.Socket) => {
    if (!(socket instanceof net.Socket)) return;
    const read = socket.bytesRead;
    const closeIfIdle = () => {
      const busy = (socket as net.Socket & { _httpMessage?: unknown })._httpMessage;
      if (!socket.destroyed && socket.bytesRead === read && !busy) socket.destroy();
    };
    setImmediate(() => setImmediate(closeIfIdle));
  });

  // HTTP/2 connections: a larger connection window, closed when idle (no stream open for a while),
  // and closed gracefully (GOAWAY: streams under way finish) when the transport closes.
  const sessions = new Set<http2.ServerHttp2Session>();
  const idleMs = opts.h2IdleTimeoutMs ?? H2_IDLE_TIMEOUT_MS;
  httpsServer.on('session', (session: http2.ServerHttp2Session) => {
    sessions.add(session);
    let open = 0;
    session.on('close', () => sessions.delete(session));
    // A session error (protocol error, reset connection) ends that session only.
    session.on('error', () => session.destroy());
    session.on('stream', (stream: http2.ServerHttp2Stream) => {
      open++;
      stream.once('close', () => open--);
    });
    session.setTimeout(idleMs, () => {
      if (open === 0 && !session.closed) session.close();
    });
    session.once('connect', () => {
      try {
        session.setLocalWindowSize(H2_CONNECTION_WINDOW);
      } catch {
        // The session went away meanwhile.
      }
    });
  });
  // The HTTP/1.1 side's connection tracking (request and headers timeouts, closeIdleConnections)
  // starts when the server listens; this one never does (the front server owns the port), so it
  // starts when the front server listens.
  const startTracking = () => httpsServer.emit('listening');

  const plainServer = http.createServer((req, res) => {
    const host = /^[A-Za-z0-9.\-[\]:]{1,255}$/.test(req.headers.host ?? '')
      ? req.headers.host
      : 'this host';
    const requestId = `req_${randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify({
      type: '/problems/https_required',
      title: 'HTTPS required',
      status: 403,
      detail: `This port only speaks HTTPS; use https://${host}${(req.url ?? '/').slice(0, 200).replace(/[^\x21-\x7e]/g, '')} instead.`,
      instance: (req.url ?? '/').split('?')[0]!.slice(0, 200),
      code: 'https_required',
      request_id: requestId,
    });
    res.writeHead(403, {
      'content-type': 'application/problem+json',
      'content-length': Buffer.byteLength(body),
      'x-request-id': requestId,
      connection: 'close',
    });
    res.end(body);
  });
  plainServer.headersTimeout = 10_000;

  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(30_000, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.unshift(chunk);
      socket.setTimeout(0);
      // The TLS server takes over the socket's handle (and sees the unshifted bytes); resuming
      // the plain socket here would race it for the handle's data and stall the handshake.
      if (chunk[0] === 0x16) httpsServer.emit('connection', socket);
      else {
        plainServer.emit('connection', socket);
        socket.resume();
      }
    });
  });

  return {
    httpsServer,
    listen: (host, port) =>
      new Promise((resolve, reject) => {
        front.once('error', reject);
        front.listen({ host, port }, () => {
          front.off('error', reject);
          startTracking();
          resolve((front.address() as net.AddressInfo).port);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        front.close(() => resolve());
        // Closes the HTTP/1.1 side's idle connections and stops its timeout checks.
        httpsServer.close();
        plainServer.closeIdleConnections();
        // HTTP/2: GOAWAY; the streams under way finish, no new one is accepted.
        for (const s of sessions) if (!s.closed) s.close();
        // Give in-flight requests a moment to drain, then drop whatever is left.
        setTimeout(() => {
          (httpsServer as unknown as http.Server).closeAllConnections?.();
          for (const s of sessions) s.destroy();
          for (const s of sockets) s.destroy();
        }, 2000).unref();
      }),
  };
}
