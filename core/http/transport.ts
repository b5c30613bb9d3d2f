import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { TlsMaterial } from './tls';

// One port, HTTPS only (contract §1). A front TCP server peeks at the first byte of each
// connection: 0x16 is a TLS handshake record and goes to the HTTPS server; anything else is
// plain HTTP and gets `403 https_required` with the connection closed. No route is ever served
// over plain HTTP.

export interface Transport {
  readonly httpsServer: https.Server;
  listen(host: string, port: number): Promise<number>;
  close(): Promise<void>;
}

export function createTransport(
  tls: TlsMaterial,
  handler: http.RequestListener,
  opts: { requestTimeoutMs?: number; keepAliveTimeoutMs?: number } = {},
): Transport {
  const httpsServer = https.createServer(
    {
      cert: tls.cert,
      key: tls.key,
      minVersion: 'TLSv1.2',
      requestTimeout: opts.requestTimeoutMs ?? 0,
      // The app answers a missing Host with a Problem Details 400 (Node's own 400 has no body).
      requireHostHeader: false,
    },
    handler,
  );
  // An Expect other than 100-continue would get Node's bare 417 (no Problem Details body); the
  // expectation is ignored instead (RFC 9110 §10.1.1 allows it) and the request is served.
  httpsServer.on('checkExpectation', handler);
  httpsServer.keepAliveTimeout = opts.keepAliveTimeoutMs ?? 5000;
  httpsServer.headersTimeout = 30_000;
  // Keep-alive under a stalled event loop. Node's server destroys a connection whose keep-alive
  // timer fired, and timers run before the poll phase that reads the sockets: when the loop was
  // stalled (load, a long synchronous stretch) after a client reused the connection — within the
  // `Keep-Alive: timeout=5` we advertise — the overdue timer destroyed it with that request unread
  // in its receive buffer, and the client saw `read ECONNRESET` (Node issue 43456). With a
  // 'timeout' listener Node leaves the socket to us: it is closed two loop turns later only if no
  // byte arrived and no response is under way — the first turn's poll phase reads what waited
  // through the stall; the second's what a client in this process (tests, an embedding app) sent
  // while reading an answer that the stall held back. A request that did arrive resets the
  // keep-alive state, and its answer re-arms the timer.
  httpsServer.on('timeout', (socket: net.Socket) => {
    const read = socket.bytesRead;
    const closeIfIdle = () => {
      const busy = (socket as net.Socket & { _httpMessage?: unknown })._httpMessage;
      if (!socket.destroyed && socket.bytesRead === read && !busy) socket.destroy();
    };
    setImmediate(() => setImmediate(closeIfIdle));
  });

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
          resolve((front.address() as net.AddressInfo).port);
        });
      }),
    close: () =>
      new Promise((resolve) => {
        front.close(() => resolve());
        httpsServer.closeIdleConnections();
        plainServer.closeIdleConnections();
        // Give in-flight requests a moment to drain, then drop whatever is left.
        setTimeout(() => {
          httpsServer.closeAllConnections();
          for (const s of sockets) s.destroy();
        }, 2000).unref();
      }),
  };
}
