// The HTTPS transport's keep-alive under a stalled event loop. A client may reuse a connection
// while it is inside the advertised `Keep-Alive: timeout=N`; when the service's event loop is
// stalled (load, a long synchronous stretch) right after such a request arrives, the keep-alive
// timer is overdue when the loop comes back, and Node's server runs timers before it reads the
// socket: it used to destroy the connection with the request unread, and the client saw
// `read ECONNRESET` (core/test/backup.test.ts did once under CI load). The stall here is a
// synchronous busy-wait, so the order of events is the same on every run.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http2, {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
} from 'node:http2';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateTls } from './tls';
import { createTransport, type Transport } from './transport';

const KEEP_ALIVE_MS = 300;
/** Node's server waits its keepAliveTimeout plus 1 s (HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER). */
const SERVER_CLOSES_AFTER_MS = KEEP_ALIVE_MS + 1000;

let dir: string;
let transport: Transport;
let port: number;
let served = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'blueline-transport-'));
  const material = await loadOrCreateTls(dir);
  transport = createTransport(
    material,
    (req, res) => {
      served++;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
      // The loop stalls after the answer is written (its keep-alive timer armed) and before the
      // client, in this same process, has read it.
      if (req.url === '/stall-after') setImmediate(() => busyWait(SERVER_CLOSES_AFTER_MS + 500));
    },
    { keepAliveTimeoutMs: KEEP_ALIVE_MS },
  );
  port = await transport.listen('127.0.0.1', 0);
});
afterAll(async () => {
  await transport?.close();
  rmSync(dir, { recursive: true, force: true });
});

const REQUEST = 'GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n';

/** A raw keep-alive connection: no agent logic between the test and the socket. */
async function connect() {
  const socket = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  let buffered = '';
  const events: string[] = [];
  socket.on('data', (d: Buffer) => (buffered += d.toString('latin1')));
  socket.on('error', (e: NodeJS.ErrnoException) => events.push(`error ${e.code ?? e.message}`));
  socket.on('end', () => events.push('end'));
  socket.on('close', () => events.push('close'));
  /** Resolves with the next complete response's status line, or the socket's fate. */
  const next = () =>
    new Promise<string>((resolve) => {
      const check = () => {
        const end = buffered.indexOf('\r\n\r\nok');
        if (end !== -1) {
          const status = buffered.slice(0, buffered.indexOf('\r\n'));
          buffered = buffered.slice(end + 6);
          resolve(status);
        } else if (events.length > 0) resolve(events.join(', '));
        else setTimeout(check, 5);
      };
      check();
    });
  return { socket, events, next, buffered: () => buffered };
}

function busyWait(ms: number) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    /* the event loop is stalled */
  }
}

describe('keep-alive', () => {
  it('a request that arrived before a stalled loop comes back is served, not reset', async () => {
    const c = await connect();
    c.socket.write(REQUEST);
    expect(await c.next()).toBe('HTTP/1.1 200 OK');
    // Reuse the connection, then stall the loop past the keep-alive: the request is in the
    // server's receive buffer when its keep-alive timer fires.
    const before = served;
    c.socket.write(REQUEST);
    busyWait(SERVER_CLOSES_AFTER_MS + 500);
    expect(await c.next()).toBe('HTTP/1.1 200 OK');
    expect(served).toBe(before + 1);
    c.socket.destroy();
  });

  it('a request sent at once on the answer of a stalled loop is served, not reset', async () => {
    // The same process as client (the test harness's agent against an in-process service): the
    // client reads the answer only after the stall, and reuses the connection at once. The
    // server's timer is overdue by then; it must not close before it has read that request.
    const c = await connect();
    const before = served;
    let sent = false;
    c.socket.on('data', () => {
      if (!sent && c.buffered().includes('\r\n\r\nok')) {
        sent = true;
        c.socket.write(REQUEST); // in the callback that read the answer, as an agent does
      }
    });
    c.socket.write(REQUEST.replace('/x', '/stall-after'));
    expect(await c.next()).toBe('HTTP/1.1 200 OK');
    expect(await c.next()).toBe('HTTP/1.1 200 OK');
    expect(served).toBe(before + 2);
    c.socket.destroy();
  });

  it('still closes a connection that stays idle past the keep-alive', async () => {
    const c = await connect();
    c.socket.write(REQUEST);
    expect(await c.next()).toBe('HTTP/1.1 200 OK');
    // Idle (the loop runs): the server ends the connection by itself.
    expect(await c.next()).toMatch(/^end/);
  });
});

// HTTP/2 (ALPN h2) on the same port, with HTTP/1.1 for clients that do not offer it.

/** A transport whose handler holds each request until the test answers it. */
async function heldTransport(opts: { h2IdleTimeoutMs?: number } = {}) {
  const arrived: { req: Http2ServerRequest; res: Http2ServerResponse }[] = [];
  const waiters: (() => void)[] = [];
  const tr = createTransport(
    await loadOrCreateTls(dir),
    (req, res) => {
      arrived.push({ req: req as Http2ServerRequest, res: res as Http2ServerResponse });
      for (const w of waiters.splice(0)) w();
    },
    opts,
  );
  const p = await tr.listen('127.0.0.1', 0);
  const next = async (n: number) => {
    while (arrived.length < n) await new Promise<void>((r) => waiters.push(r));
    return arrived[n - 1]!;
  };
  return { tr, port: p, arrived, next };
}

function h2connect(p: number): Promise<ClientHttp2Session> {
  const session = http2.connect(`https://127.0.0.1:${p}`, { rejectUnauthorized: false });
  return new Promise((resolve, reject) => {
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

function readAll(stream: ClientHttp2Stream) {
  return new Promise<{ status: number; headers: IncomingHttpHeaders; body: string }>(
    (resolve, reject) => {
      let headers: IncomingHttpHeaders = {};
      let body = '';
      stream.on('response', (h) => (headers = h));
      stream.on('data', (d: Buffer) => (body += d.toString()));
      stream.on('end', () => resolve({ status: Number(headers[':status']), headers, body }));
      stream.on('error', reject);
    },
  );
}

describe('HTTP/2', () => {
  it('is chosen by ALPN; a client offering only http/1.1 (or no ALPN, above) gets HTTP/1.1', async () => {
    const session = await h2connect(port);
    expect(session.alpnProtocol).toBe('h2');
    const res = await readAll(session.request({ ':path': '/x' }));
    expect(res.status).toBe(200);
    expect(res.body).toBe('ok');
    session.close();

    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      rejectUnauthorized: false,
      ALPNProtocols: ['http/1.1'],
    });
    await new Promise((r) => socket.once('secureConnect', r));
    expect(socket.alpnProtocol).toBe('http/1.1');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.write('GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await new Promise((r) => socket.once('end', r));
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    socket.destroy();
  });

  it('many requests run at once on one connection', async () => {
    const held = await heldTransport();
    const session = await h2connect(held.port);
    const streams = Array.from({ length: 40 }, (_, i) =>
      readAll(session.request({ ':path': `/t/${i}` })),
    );
    // All 40 reach the handler before any is answered (HTTP/1.1 from a browser: 6 at a time).
    await held.next(40);
    for (const { req, res } of held.arrived) res.end(req.url);
    const answers = await Promise.all(streams);
    expect(answers.map((a) => a.body)).toEqual(Array.from({ length: 40 }, (_, i) => `/t/${i}`));
    session.close();
    await held.tr.close();
  });

  it('a stream the client resets closes its response unended (routes cancel their work on it)', async () => {
    const held = await heldTransport();
    const session = await h2connect(held.port);
    const stream = session.request({ ':path': '/tile' });
    stream.on('error', () => {});
    const { req, res } = await held.next(1);
    const closed = new Promise<boolean>((r) => res.once('close', () => r(res.writableEnded)));
    const reqClosed = new Promise<void>((r) => req.once('close', () => r()));
    stream.close(http2.constants.NGHTTP2_CANCEL);
    expect(await closed).toBe(false);
    await reqClosed;
    session.close();
    await held.tr.close();
  });

  it('a request with neither :authority nor Host is reset by the protocol layer', async () => {
    // Raw frames: Node's client always sends :authority. HPACK literals without indexing.
    const socket = tls.connect({
      host: '127.0.0.1',
      port,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
    });
    await new Promise((r) => socket.once('secureConnect', r));
    const literal = (n: string, v: string) =>
      Buffer.concat([
        Buffer.from([0, n.length]),
        Buffer.from(n),
        Buffer.from([v.length]),
        Buffer.from(v),
      ]);
    const frame = (type: number, flags: number, id: number, payload: Buffer) => {
      const h = Buffer.alloc(9);
      h.writeUIntBE(payload.length, 0, 3);
      h[3] = type;
      h[4] = flags;
      h.writeUInt32BE(id, 5);
      return Buffer.concat([h, payload]);
    };
    const before = served;
    let got = Buffer.alloc(0);
    const rst = new Promise<number>((resolve) => {
      socket.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        for (let o = 0; o + 9 <= got.length; o += 9 + got.readUIntBE(o, 3)) {
          // RST_STREAM (type 3) on stream 1: its error code.
          if (got[o + 3] === 3 && got.readUInt32BE(o + 5) === 1 && o + 13 <= got.length)
            resolve(got.readUInt32BE(o + 9));
        }
      });
    });
    const block = Buffer.concat([
      literal(':method', 'GET'),
      literal(':scheme', 'https'),
      literal(':path', '/x'),
    ]);
    socket.write(
      Buffer.concat([
        Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
        frame(4, 0, 0, Buffer.alloc(0)), // SETTINGS
        frame(1, 0x5, 1, block), // HEADERS, END_STREAM | END_HEADERS
      ]),
    );
    expect(await rst).toBe(http2.constants.NGHTTP2_PROTOCOL_ERROR);
    expect(served).toBe(before);
    socket.destroy();
  });

  it('an idle connection is closed with a GOAWAY', async () => {
    const held = await heldTransport({ h2IdleTimeoutMs: 200 });
    const session = await h2connect(held.port);
    const stream = readAll(session.request({ ':path': '/once' }));
    (await held.next(1)).res.end('done');
    expect((await stream).body).toBe('done');
    // No stream open: the server sends GOAWAY (NO_ERROR) and the session ends.
    const code = await new Promise<number>((r) => session.once('goaway', (c) => r(c)));
    expect(code).toBe(http2.constants.NGHTTP2_NO_ERROR);
    await new Promise((r) => session.once('close', r));
    await held.tr.close();
  });

  it('close() lets a stream under way finish, then ends the connection', async () => {
    const held = await heldTransport();
    const session = await h2connect(held.port);
    session.on('error', () => {});
    const stream = readAll(session.request({ ':path': '/slow' }));
    const { res } = await held.next(1);
    const goaway = new Promise<void>((r) => session.once('goaway', () => r()));
    const closing = held.tr.close();
    await goaway;
    res.end('finished');
    expect(await stream).toMatchObject({ status: 200, body: 'finished' });
    await closing;
  });
});
