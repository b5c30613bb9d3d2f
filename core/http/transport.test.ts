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
