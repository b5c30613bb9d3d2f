import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http2 from 'node:http2';
import https from 'node:https';
import type { ClientRequest } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness';
import { FIXTURES, uploadDrawing, waitForJob } from './flows';
import type { DeepTileRenderer } from '../services/tiles.service';

// The API over both protocols the service speaks (transport.ts: HTTP/2 by ALPN, HTTP/1.1
// otherwise): one request matrix over the route families whose behaviour could differ between
// them — JSON, Problem Details, uploads (with and without a length), downloads with Range and
// validators, the SSE stream of a job, deep tiles and their cancellation. The other service
// suites speak HTTP/1.1 (the harness's https agent offers no ALPN).

type Protocol = 'http/1.1' | 'h2';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
  text: string;
  body: any;
  version: string;
}

interface Sent {
  headers?: Record<string, string>;
  body?: Buffer | string | object;
  /** HTTP/1.1: sent chunked; HTTP/2: no content-length (the stream's end ends the body). */
  noLength?: boolean;
  key?: string | null;
}

let t: TestService;
let session: http2.ClientHttp2Session;
/** Deep renders held by the test (when `holding`), with the signal each was given. */
let holding = false;
const held: { signal: AbortSignal | undefined; release: () => void }[] = [];
let pdf: Buffer;
let sheet: { id: string; uri: string; width: number; height: number };
let fileId: string;
let projectId: string;

function holdRenders(r: DeepTileRenderer): DeepTileRenderer {
  const hold = <F extends (...a: never[]) => Promise<unknown>>(f: F): F =>
    ((...a: Parameters<F>) => {
      if (!holding) return f(...a);
      const signal = a[1] as AbortSignal | undefined;
      return new Promise<unknown>((resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason));
        held.push({ signal, release: () => void f(...a).then(resolve, reject) });
      });
    }) as F;
  return {
    workers: r.workers,
    kind: (s) => r.kind(s),
    page: hold(r.page.bind(r)),
    overlay: hold(r.overlay.bind(r)),
  };
}

beforeAll(async () => {
  t = await startTestService({ wrapTileRenderer: holdRenders, configureApp: testRoutes });
  session = http2.connect(t.origin, { ca: t.svc.caCertPem });
  await new Promise<void>((ok, fail) => {
    session.once('connect', () => ok());
    session.once('error', fail);
  });
  pdf = readFileSync(resolve(FIXTURES, '20190321_A600_schedules.pdf'));
  const project = await t.request('POST', '/v1/projects', { body: { name: 'Over HTTP/2' } });
  projectId = project.body.id;
  const drawing = await uploadDrawing(t, projectId, pdf, 'Schedules');
  expect((await waitForJob(t, drawing.job_id)).status).toBe('Completed');
  const sheets = await t.request('GET', `/v1/sheets?drawing_id=${drawing.id}`);
  sheet = sheets.body.data[0];
  fileId = (await t.request('GET', `/v1/drawings/${drawing.id}`)).body.file_id;
}, 240_000);

afterAll(async () => {
  session?.close();
  await t?.stop();
});

/** A route that sets connection-specific headers (HTTP/2 forbids them). */
function testRoutes(app: FastifyInstance) {
  app.get('/test/connection-headers', async (_request, reply) => {
    reply.header('connection', 'keep-alive');
    reply.header('keep-alive', 'timeout=5');
    reply.header('x-kept', 'yes');
    return { ok: true };
  });
}

function send(
  protocol: Protocol,
  method: string,
  path: string,
  opts: Sent = {},
  onStream?: (s: http2.ClientHttp2Stream | ClientRequest) => void,
): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  let payload: Buffer | undefined;
  if (Buffer.isBuffer(opts.body) || typeof opts.body === 'string') payload = Buffer.from(opts.body);
  else if (opts.body !== undefined) {
    payload = Buffer.from(JSON.stringify(opts.body));
    headers['content-type'] ??= 'application/json';
  }
  if (payload && !opts.noLength) headers['content-length'] = String(payload.length);
  const key = opts.key === undefined ? t.key : opts.key;
  if (key) headers.authorization = `Bearer ${key}`;
  const url = new URL(path, t.origin);
  const finish = (
    status: number,
    h: Answer['headers'],
    chunks: Buffer[],
    version: string,
  ): Answer => {
    const bytes = Buffer.concat(chunks);
    const text = bytes.toString('utf8');
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status, headers: h, bytes, text, body, version };
  };
  return new Promise((ok, fail) => {
    if (protocol === 'h2') {
      const stream = session.request({
        ':method': method,
        ':path': url.pathname + url.search,
        ...headers,
      });
      onStream?.(stream);
      const chunks: Buffer[] = [];
      let h: http2.IncomingHttpHeaders = {};
      stream.on('response', (r) => (h = r));
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => ok(finish(Number(h[':status']), h, chunks, '2.0')));
      stream.on('error', fail);
      if (payload) writeInPieces(stream, payload);
      else stream.end();
      return;
    }
    if (opts.noLength && payload) headers['transfer-encoding'] = 'chunked';
    const req = https.request(url, { method, agent: t.agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok(finish(res.statusCode ?? 0, res.headers, chunks, res.httpVersion)));
      res.on('error', fail);
    });
    onStream?.(req);
    req.on('error', fail);
    if (payload) writeInPieces(req, payload);
    else req.end();
  });
}

/** Writes a body in 64 KiB pieces, as a streaming client does. */
function writeInPieces(w: NodeJS.WritableStream, payload: Buffer) {
  for (let o = 0; o < payload.length; o += 65536) w.write(payload.subarray(o, o + 65536));
  w.end();
}

const CONNECTION_HEADERS = ['connection', 'keep-alive', 'transfer-encoding', 'upgrade'];

describe.each<Protocol>(['http/1.1', 'h2'])('over %s', (protocol) => {
  const version = protocol === 'h2' ? '2.0' : '1.1';

  it('JSON: create and read a project; X-Request-Id echoed; no connection headers on h2', async () => {
    const created = await send(protocol, 'POST', '/v1/projects', {
      body: { name: `P ${protocol}` },
      headers: { 'x-request-id': `req-${protocol.replace('/', '')}` },
    });
    expect(created.version).toBe(version);
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toMatch(/^application\/json/);
    expect(created.headers['x-request-id']).toBe(`req-${protocol.replace('/', '')}`);
    expect(created.body).toMatchObject({ name: `P ${protocol}` });
    const read = await send(protocol, 'GET', `/v1/projects/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    if (protocol === 'h2')
      for (const h of CONNECTION_HEADERS) expect(read.headers[h]).toBeUndefined();
    else expect(read.headers['keep-alive']).toMatch(/^timeout=\d+/);
    // A route that sets connection headers: dropped on HTTP/2 (Node throws on them), kept on 1.1.
    const raw = await send(protocol, 'GET', '/test/connection-headers', { key: null });
    expect(raw.status).toBe(200);
    expect(raw.body).toEqual({ ok: true });
    expect(raw.headers['x-kept']).toBe('yes');
    if (protocol === 'h2') expect(raw.headers.connection).toBeUndefined();
  });

  it('Problem Details: 401, 404, 405 with Allow, 415, invalid JSON', async () => {
    const problem = (a: Answer, status: number, code: string) => {
      expect(a.status).toBe(status);
      expect(a.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(a.body).toMatchObject({ status, code, type: `/problems/${code}` });
      expect(a.body.request_id).toBe(a.headers['x-request-id']);
    };
    const noKey = await send(protocol, 'GET', '/v1/projects', { key: null });
    problem(noKey, 401, 'unauthorized');
    expect(noKey.headers['www-authenticate']).toBe('Bearer realm="blueline"');
    problem(await send(protocol, 'GET', '/v1/nowhere'), 404, 'not_found');
    const wrong = await send(protocol, 'PUT', '/v1/projects');
    problem(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.allow).toBe('GET, HEAD, POST');
    problem(
      await send(protocol, 'POST', '/v1/projects', {
        body: 'name=x',
        headers: { 'content-type': 'text/plain' },
      }),
      415,
      'unsupported_media_type',
    );
    const bad = await send(protocol, 'POST', '/v1/projects', {
      body: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    problem(bad, 400, 'invalid_json');
  });

  it('upload (with and without a length) and download: whole, Range, HEAD, If-None-Match', async () => {
    for (const noLength of [false, true]) {
      const created = await send(protocol, 'POST', '/v1/files', {
        body: {
          project_id: projectId,
          filename: 'schedules.pdf',
          content_type: 'application/pdf',
          size_bytes: pdf.length,
        },
      });
      expect(created.status).toBe(201);
      // Signed URLs name the origin the request came to (HTTP/2: its :authority).
      expect(String(created.body.upload_url).startsWith(`${t.origin}/v1/`)).toBe(true);
      const put = await send(protocol, 'PUT', created.body.upload_url, {
        body: pdf,
        headers: { 'content-type': 'application/pdf' },
        key: null,
        noLength,
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        status: 'uploaded',
        size_bytes: pdf.length,
        sha256: createHash('sha256').update(pdf).digest('hex'),
      });
      const uri = String(put.body.uri);
      expect(uri.startsWith(`${t.origin}/v1/blobs/`)).toBe(true);
      const whole = await send(protocol, 'GET', uri, { key: null });
      expect(whole.status).toBe(200);
      expect(whole.bytes.equals(pdf)).toBe(true);
      expect(whole.headers['content-length']).toBe(String(pdf.length));
      const part = await send(protocol, 'GET', uri, {
        key: null,
        headers: { range: 'bytes=1000-1999' },
      });
      expect(part.status).toBe(206);
      expect(part.headers['content-range']).toBe(`bytes 1000-1999/${pdf.length}`);
      expect(part.bytes.equals(pdf.subarray(1000, 2000))).toBe(true);
      const head = await send(protocol, 'HEAD', uri, { key: null });
      expect(head.status).toBe(200);
      expect(head.headers['content-length']).toBe(String(pdf.length));
      expect(head.bytes.length).toBe(0);
      const etag = String(whole.headers.etag);
      const same = await send(protocol, 'GET', uri, {
        key: null,
        headers: { 'if-none-match': etag },
      });
      expect(same.status).toBe(304);
      expect(same.bytes.length).toBe(0);
    }
  });

  it('a 24 MiB upload and its download, whole and a range at its end (flow-control windows)', async () => {
    const big = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      Buffer.alloc(24 * 1024 * 1024 - 9, Math.floor(Math.random() * 256)),
    ]);
    for (let i = 9; i < big.length; i += 4093) big[i] = i & 0xff;
    const created = await send(protocol, 'POST', '/v1/files', {
      body: {
        project_id: projectId,
        filename: 'big.pdf',
        content_type: 'application/pdf',
        size_bytes: big.length,
      },
    });
    expect(created.status).toBe(201);
    const put = await send(protocol, 'PUT', created.body.upload_url, {
      body: big,
      headers: { 'content-type': 'application/pdf' },
      key: null,
    });
    expect(put.status).toBe(200);
    expect(put.body.sha256).toBe(createHash('sha256').update(big).digest('hex'));
    const whole = await send(protocol, 'GET', put.body.uri, { key: null });
    expect(whole.status).toBe(200);
    expect(whole.bytes.length).toBe(big.length);
    expect(whole.bytes.equals(big)).toBe(true);
    const tail = await send(protocol, 'GET', put.body.uri, {
      key: null,
      headers: { range: 'bytes=-70000' },
    });
    expect(tail.status).toBe(206);
    expect(tail.bytes.equals(big.subarray(big.length - 70000))).toBe(true);
  });

  it('an upload over the limit of its declared size is a Problem, and the connection still serves', async () => {
    const created = await send(protocol, 'POST', '/v1/files', {
      body: {
        project_id: projectId,
        filename: 'short.pdf',
        content_type: 'application/pdf',
        size_bytes: 1000,
      },
    });
    const put = await send(protocol, 'PUT', created.body.upload_url, {
      body: pdf,
      headers: { 'content-type': 'application/pdf' },
      key: null,
      noLength: true,
    });
    expect(put.status).toBeGreaterThanOrEqual(400);
    expect(put.status).toBeLessThan(500);
    expect(put.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((await send(protocol, 'GET', '/v1/projects')).status).toBe(200);
  });

  it("SSE: a processing job's event stream, ending at its terminal status", async () => {
    const drawing = await send(protocol, 'POST', '/v1/drawings', {
      body: { project_id: projectId, name: `Again ${protocol}`, file_id: fileId },
    });
    expect(drawing.status).toBe(201);
    const events = await send(protocol, 'GET', `/v1/jobs/${drawing.body.job_id}/events`);
    expect(events.status).toBe(200);
    expect(events.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const data = [...events.text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!));
    expect(data.length).toBeGreaterThanOrEqual(1);
    expect(data.every((j) => j.id === drawing.body.job_id)).toBe(true);
    expect(data.at(-1).status).toBe('Completed');
  });

  it('tiles: tiles.json, a stored tile, a deep tile; a deep tile cancelled by the client drops its render', async () => {
    const described = await send(protocol, 'GET', sheet.uri.replace('?', '/tiles.json?'), {
      key: null,
    });
    expect(described.status).toBe(200);
    const { native_zoom: native, max_zoom: max } = described.body;
    expect(max).toBe(native + 4);
    const tile = (z: number, x: number, y: number) =>
      sheet.uri.replace('?', `/tiles/${z}/${x}/${y}.webp?`);
    const stored = await send(protocol, 'GET', tile(native, 0, 0), { key: null });
    expect(stored.status).toBe(200);
    expect(stored.headers['content-type']).toBe('image/webp');

    // A deep tile whose render the test holds: the client gives up (HTTP/2: RST_STREAM CANCEL;
    // HTTP/1.1: the connection closes), and the render's signal aborts.
    holding = true;
    const x = protocol === 'h2' ? 20 : 21;
    let cancel: () => void = () => {};
    const gone = send(protocol, 'GET', tile(max, x, 10), { key: null }, (s) => {
      cancel =
        protocol === 'h2'
          ? () => (s as http2.ClientHttp2Stream).close(http2.constants.NGHTTP2_CANCEL)
          : () => (s as ClientRequest).destroy();
    });
    gone.catch(() => undefined);
    while (held.length === 0) await new Promise((r) => setImmediate(r));
    const render = held.shift()!;
    expect(render.signal?.aborted).toBe(false);
    const aborted = new Promise<void>((r) => render.signal!.addEventListener('abort', () => r()));
    cancel();
    await aborted;
    expect(render.signal!.aborted).toBe(true);
    holding = false;
    // Asked for again: rendered and served.
    const deep = await send(protocol, 'GET', tile(max, x, 10), { key: null });
    expect(deep.status).toBe(200);
    expect(deep.headers['content-type']).toBe('image/webp');
    expect(deep.bytes.subarray(8, 12).toString('latin1')).toBe('WEBP');
  });
});

describe('HTTP/2 only', () => {
  it("a zoom step's tiles go out at once on one connection, all answered", async () => {
    const d = await send('h2', 'GET', sheet.uri.replace('?', '/tiles.json?'), { key: null });
    const z = d.body.native_zoom + 2;
    const urls: string[] = [];
    for (let y = 4; y < 7; y++)
      for (let x = 8; x < 12; x++) urls.push(sheet.uri.replace('?', `/tiles/${z}/${x}/${y}.webp?`));
    const answers = await Promise.all(urls.map((u) => send('h2', 'GET', u, { key: null })));
    expect(answers.map((a) => a.status)).toEqual(urls.map(() => 200));
    expect(answers.every((a) => a.version === '2.0')).toBe(true);
  });
});
