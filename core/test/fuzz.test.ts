import tls from 'node:tls';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness';
import { seedGraph, type SeededGraph } from './seed';
import { ensureOrganization } from '../store/repositories/organizations.repository';

// Hostile input at every route (issue 2 "Must show", issue 7 item 3): random query strings,
// headers (huge, unicode, duplicated, odd Content-Type / Content-Length / Authorization /
// Idempotency-Key / Host / Range) and JSON bodies (random JSON, deep nesting, huge numbers,
// unicode, prototype-pollution keys) thrown at every route of the router's own table, over a raw
// TLS socket so nothing is normalised by an HTTP client. The properties: no response is 5xx, every
// error is Problem Details with `code` and `detail`, nothing hangs, no 5xx is logged, nothing
// pollutes Object.prototype, and the service still answers normally afterwards.

interface RouteEntry {
  method: string;
  url: string;
}

/** Every (method, url) the router serves, parsed from Fastify's route tree print-out. */
function routeTable(printed: string): RouteEntry[] {
  const out: RouteEntry[] = [];
  const stack: string[] = [];
  for (const line of printed.split('\n')) {
    const m = /^(.*?)(?:├── |└── )(.*)$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    const mm = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(m[2]!)!;
    stack.length = depth;
    stack[depth] = mm[1]!;
    if (mm[2])
      for (const method of mm[2].split(',').map((s) => s.trim()))
        out.push({ method, url: stack.join('') });
  }
  return out;
}

interface RawResponse {
  status: number;
  headers: Record<string, string[]>;
  body: Buffer;
}

/** One request on its own TLS connection; resolves with the first response on it. */
function rawRequest(
  t: TestService,
  head: string,
  body: Buffer | undefined,
  timeoutMs = 10_000,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = tls.connect(
      { host: '127.0.0.1', port: t.port, ca: t.svc.caCertPem, servername: 'localhost' },
      () => {
        s.write(Buffer.from(head, 'utf8'));
        if (body) s.write(body);
        // No half-close: Node's HTTP server (httpAllowHalfOpen false) aborts requests still being
        // handled when the client ends its side; `Connection: close` makes the server close instead.
      },
    );
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms to: ${head.slice(0, 300)}`));
    }, timeoutMs);
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('error', () => {}); // a reset after the response is fine; no response is caught below
    s.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks), head.startsWith('HEAD ')));
      } catch (err) {
        reject(new Error(`${(err as Error).message} — request: ${head.slice(0, 300)}`));
      }
    });
  });
}

function parseResponse(buf: Buffer, isHead: boolean): RawResponse {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0)
    throw new Error(`the connection closed without a complete response (${buf.length} bytes)`);
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0]!)?.[1]);
  const headers: Record<string, string[]> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    const k = l.slice(0, i).trim().toLowerCase();
    (headers[k] ??= []).push(l.slice(i + 1).trim());
  }
  let rest = buf.subarray(end + 4);
  if (isHead || status === 204 || status === 304) return { status, headers, body: Buffer.alloc(0) };
  if (headers['transfer-encoding']?.[0]?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    for (;;) {
      const nl = rest.indexOf('\r\n');
      if (nl < 0) break;
      const size = parseInt(rest.subarray(0, nl).toString('latin1'), 16);
      if (!size) break;
      parts.push(rest.subarray(nl + 2, nl + 2 + size));
      rest = rest.subarray(nl + 2 + size + 2);
    }
    return { status, headers, body: Buffer.concat(parts) };
  }
  const len = headers['content-length'] ? Number(headers['content-length'][0]) : rest.length;
  return { status, headers, body: rest.subarray(0, len) };
}

let t: TestService;
let graphs: SeededGraph[];
let routes: RouteEntry[];
const loggedErrors: unknown[] = [];
const protoKeysBefore = Object.getOwnPropertyNames(Object.prototype).sort();

beforeAll(async () => {
  t = await startTestService({
    log: { info: () => {}, warn: () => {}, error: (o: unknown) => loggedErrors.push(o) },
  });
  const org = (await ensureOrganization(t.svc.db, 'Test Org')).id;
  graphs = [];
  for (let i = 0; i < 4; i++) graphs.push(await seedGraph(t.svc.db, org));
  routes = routeTable(t.svc.app.printRoutes());
});

afterAll(async () => {
  await t?.stop();
});

const ID_BY_SEGMENT: Record<string, (g: SeededGraph) => string> = {
  projects: (g) => g.projectId,
  files: (g) => g.fileId,
  uploads: (g) => g.fileId,
  drawings: (g) => g.drawingIds[0],
  sheets: (g) => g.sheetIds[0]!,
  blocks: (g) => g.blockIds[0]!,
  overlays: (g) => g.overlayIds[0]!,
  changes: (g) => g.changeIds[0]!,
  symbols: (g) => g.symbolIds[0]!,
  jobs: (g) => g.jobId,
};

const FIELD_NAMES = [
  'name',
  'description',
  'project_id',
  'filename',
  'content_type',
  'size_bytes',
  'review_status',
  'note',
  'type',
  'title',
  'discipline',
  'sheet_number',
  'revision',
  'file_id',
  'compare_to',
  'old_id',
  'new_id',
  'target_id',
  'templates',
  'threshold',
  'analyze',
  'query',
  'question',
  'url',
  'events',
  'limit',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
];
const QUERY_NAMES = [
  'limit',
  'cursor',
  'expand',
  'project_id',
  'drawing_id',
  'sheet_id',
  'block_id',
  'overlay_id',
  'job_id',
  'parent_id',
  'target_id',
  'target_type',
  'status',
  'type',
  'name',
  'discipline',
  'sheet_number',
  'has_changes',
  'kind',
  'category',
  'review_status',
  'label',
  'content_type',
  'created_after',
  'created_before',
  'palette',
  'expires',
  'signature',
  '__proto__',
  'constructor',
  'a[b]',
  'limit[]',
  '',
];

const weirdString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '-1',
    '0',
    '1',
    '100',
    '101',
    '1e309',
    '-0',
    '1.5',
    '99999999999999999999999',
    'NaN',
    'true',
    'false',
    'null',
    'Plan',
    'architectural',
    'Completed',
    'application/pdf',
    '2026-01-01T00:00:00Z',
    '2026-13-45T99:99:99Z',
    '1970-01-01',
    'block_a.sheet.drawing',
    'block_a.sheet.drawing.file',
    'a.b.c.d.e',
    'parent.parent.parent.parent',
    'job,job,job',
    'prj_',
    'prj_0',
    'drw_zzzzzzzzzzzzzzzzzzzz',
    'ovl_' + 'a'.repeat(200),
    '../../etc/passwd',
    '%00',
    '\u0000',
    '💥',
    '\u202e',
    'é',
    'eyJ2IjoxfQ.x',
    'x'.repeat(3000),
  ),
);

/** A path parameter: a real id of the right kind most often, otherwise something hostile. */
const idArb = (segment: string) =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.nat({ max: 3 }).map((i) => ID_BY_SEGMENT[segment]?.(graphs[i]!) ?? 'prj_x'),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'prj_0',
        'job_zz',
        'fil_a',
        'ovl_',
        'x',
        '0',
        'undefined',
        '__proto__',
        'constructor',
      ),
    },
    { weight: 1, arbitrary: weirdString.map((s) => encodeURIComponent(s)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%00',
        '%2e%2e',
        '..%2f..%2f',
        '%2F',
        '%252e%252e',
        '%ff',
        '%',
        '%zz',
        '.',
        '..',
        'a%00b',
        '%E0%A4%A',
        'a'.repeat(499),
        'a'.repeat(501),
        'a'.repeat(5000),
        '%C0%AF',
        'x;y',
        'x,y',
        'job_x%20or%201%3D1',
      ),
    },
  );

const pathArb = (route: RouteEntry) => {
  const segment = /\/v1\/([a-z]+)\//.exec(route.url)?.[1] ?? '';
  const star = fc.oneof(
    fc.constant('projects/prj_x/files/a.pdf'),
    fc.constantFrom(
      '..%2f..%2fblueline.db',
      '../../tls/key.pem',
      '%2e%2e/%2e%2e/tls/key.pem',
      'a'.repeat(600),
      '',
    ),
    weirdString.map((s) => encodeURIComponent(s)),
  );
  const params = route.url.includes(':')
    ? idArb(route.url.includes(':code') ? '' : segment)
    : fc.constant('');
  return fc
    .tuple(
      params,
      star,
      fc.constantFrom('', '', '', '/', '//', '/./', '/../v1/'),
      fc.constantFrom('', '', '', '/', '/.', '//'),
    )
    .map(([p, s, lead, trail]) => {
      let path = route.url.replace(/:[A-Za-z_]+/, p).replace('*', s);
      if (lead === '//') path = path.replace(/\//g, '//');
      else if (lead === '/./') path = path.replace('/v1/', '/v1/./');
      else if (lead === '/../v1/') path = path.replace('/v1/', '/v1/../v1/');
      return path + trail;
    });
};

const queryArb = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...QUERY_NAMES) },
        { weight: 1, arbitrary: weirdString },
      ),
      weirdString,
      fc.boolean(),
    ),
    { maxLength: 6 },
  )
  .map((pairs) =>
    pairs.length === 0
      ? ''
      : '?' +
        pairs
          // Mostly properly encoded; sometimes raw (spaces and '#' would end the request target, so not those).
          .map(([k, v, raw]) =>
            raw
              ? `${k}=${v}`.replace(/[\s#\p{Cc}]/gu, '_')
              : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`,
          )
          .join('&'),
  );

/** A header value that cannot break the request framing (no CR or LF). */
const headerValue = weirdString.map((s) => s.replace(/[\r\n]/g, ''));

const headerArb = fc.oneof(
  fc.tuple(
    fc.constant('Content-Type'),
    fc.oneof(
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'APPLICATION/JSON',
        'application/json;;',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/pdf',
        'image/png',
        'application/octet-stream',
        '',
        'application/json, text/plain',
        'application/problem+json',
        'application/jsonx',
      ),
      headerValue,
    ),
  ),
  fc.tuple(
    fc.constant('Idempotency-Key'),
    fc.oneof(
      fc.constantFrom(
        '',
        'a',
        'k'.repeat(256),
        'k'.repeat(257),
        'has space',
        'ünïcode',
        'a/b',
        '../x',
      ),
      fc.uuid(),
      headerValue,
    ),
  ),
  fc.tuple(
    fc.constant('Host'),
    fc.oneof(
      fc.constantFrom(
        '',
        'evil.example',
        'localhost:1',
        '[::1]:9',
        'a'.repeat(300),
        '127.0.0.1:99999',
        'host with space',
        'ünï',
      ),
      headerValue,
    ),
  ),
  fc.tuple(
    fc.constant('Range'),
    fc.oneof(
      fc.constantFrom(
        'bytes=0-1',
        'bytes=-5',
        'bytes=5-1',
        'bytes=0-1,2-3',
        'chars=1-2',
        'bytes=99999999999999999999-',
        'bytes=-0',
        'bytes=abc',
      ),
      headerValue,
    ),
  ),
  fc.tuple(
    fc.constantFrom(
      'If-None-Match',
      'If-Range',
      'If-Modified-Since',
      'Accept',
      'Accept-Encoding',
      'X-Request-Id',
      'Origin',
      'Cookie',
      'Expect',
      'X-Forwarded-For',
      'Accept-Version',
    ),
    headerValue,
  ),
  fc.tuple(
    fc.constant('X-Huge'),
    fc.nat({ max: 20_000 }).map((n) => 'h'.repeat(n)),
  ),
);

const authArb = (key: string): fc.Arbitrary<string[]> =>
  fc.oneof(
    { weight: 8, arbitrary: fc.constant<string[]>([`Bearer ${key}`]) },
    { weight: 1, arbitrary: fc.constant<string[]>([]) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        fc.constantFrom<string[]>(
          [`bearer ${key}`],
          [`Bearer  ${key}  `],
          [`Bearer ${key} extra`],
          ['Basic dXNlcjpwYXNz'],
          ['Bearer '],
          ['Bearer'],
          [`Bearer ${key}`, `Bearer ${key}`],
          [`Bearer ${key}`, 'Bearer sk_bogus'],
          [`Bearer ${key.slice(0, -1)}`],
          ['Bearer sk_' + 'A'.repeat(40)],
          ['Bearer sk_' + 'A'.repeat(5000)],
        ),
        headerValue.map((v) => [v]),
      ),
    },
  );

/** Deeply nested JSON that a recursive parser or validator could choke on. */
const deep = fc
  .nat({ max: 20_000 })
  .chain((n) =>
    fc.constantFrom(
      `${'['.repeat(n)}${']'.repeat(n)}`,
      `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`,
      `{"name":${'['.repeat(n)}${']'.repeat(n)}}`,
    ),
  );

const bodyArb = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  {
    weight: 4,
    arbitrary: fc
      .dictionary(
        fc.constantFrom(...FIELD_NAMES),
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          weirdString,
          fc.double(),
          fc.bigInt().map((b) => Number(b)),
        ),
        { maxKeys: 5 },
      )
      .map((o) => JSON.stringify(o)),
  },
  { weight: 1, arbitrary: deep },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"__proto__":{"polluted":"yes"},"name":"x"}',
      '{"constructor":{"prototype":{"polluted":"yes"}},"name":"x"}',
      '{"name":"x","__proto__":null}',
      '{"name":1e999}',
      '{"name":-1e-999}',
      '{"size_bytes":1e308}',
      '{"size_bytes":123456789012345678901234567890}',
      '{"name":"\\ud800"}',
      '{"name":"\\u0000"}',
      '{"name":"x","name":"y"}',
      '{"name":',
      '{',
      '[',
      '"',
      'null',
      'true',
      '0',
      '\ufeff{"name":"bom"}',
      '{"name":"x"} trailing',
      '  ',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) },
);

type ContentLengthMode =
  'correct' | 'invalid' | 'duplicate-different' | 'zero-with-body' | 'omitted';
const clArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant<ContentLengthMode>('correct') },
  {
    weight: 1,
    arbitrary: fc.constantFrom<ContentLengthMode>(
      'invalid',
      'duplicate-different',
      'zero-with-body',
      'omitted',
    ),
  },
);

function checkResponse(res: RawResponse, method: string, what: string): void {
  expect(res.status, what).toBeGreaterThanOrEqual(100);
  expect(
    res.status,
    `${what} → ${res.status} ${res.body.toString('utf8').slice(0, 300)}`,
  ).toBeLessThan(500);
  if (res.status >= 400 && method !== 'HEAD') {
    expect(res.headers['content-type']?.[0], `${what} → ${res.status}`).toContain(
      'application/problem+json',
    );
    const problem = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
    expect(typeof problem.code, what).toBe('string');
    expect(typeof problem.detail, what).toBe('string');
    expect(problem.status, what).toBe(res.status);
    expect(problem.type, what).toBe(`/problems/${String(problem.code)}`);
    // No stack trace, SQL or file path in any response (contract §3).
    const text = res.body.toString('utf8');
    expect(text, what).not.toMatch(
      /\bat .+\.(ts|js):\d+|SQLITE_|SELECT .* FROM|\/work\/|node_modules|blueline-test-/,
    );
  }
}

function buildHead(method: string, path: string, headers: [string, string][]): string {
  return `${method} ${path} HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}Connection: close\r\n\r\n`;
}

describe('fuzz: hostile requests at every route', () => {
  it('no 5xx, Problem Details on every error, nothing hangs', async () => {
    expect(routes.length).toBeGreaterThan(40);
    let sent = 0;
    const statuses = new Map<number, number>();
    const routesHit = new Set<string>();
    const requestArb = fc.constantFrom(...routes).chain((route) =>
      fc.record({
        route: fc.constant(route),
        path: pathArb(route),
        query: queryArb,
        auth: authArb(t.key),
        headers: fc.array(headerArb, { maxLength: 4 }),
        body: bodyArb,
        cl: clArb,
        jsonType: fc.boolean(),
      }),
    );
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    const outcome = await fc.check(
      fc.asyncProperty(requestArb, async (r) => {
        const headers: [string, string][] = [];
        // Host first unless the fuzzer supplies its own (then possibly none, or a duplicate).
        if (!r.headers.some(([k]) => k === 'Host')) headers.push(['Host', `127.0.0.1:${t.port}`]);
        for (const a of r.auth) headers.push(['Authorization', a]);
        const body =
          r.body === undefined
            ? undefined
            : Buffer.isBuffer(r.body)
              ? r.body
              : Buffer.from(r.body, 'utf8');
        if (body && r.jsonType && !r.headers.some(([k]) => k === 'Content-Type'))
          headers.push(['Content-Type', 'application/json']);
        headers.push(...r.headers);
        let sendBody = body;
        if (body) {
          switch (r.cl) {
            case 'correct':
              headers.push(['Content-Length', String(body.length)]);
              break;
            case 'invalid':
              headers.push([
                'Content-Length',
                fc.sample(
                  fc.constantFrom('abc', '-1', '1,1', '+5', '0x10', '99999999999999999999999'),
                  1,
                )[0]!,
              ]);
              break;
            case 'duplicate-different':
              headers.push(
                ['Content-Length', String(body.length)],
                ['Content-Length', String(body.length + 1)],
              );
              break;
            case 'zero-with-body':
              headers.push(['Content-Length', '0']);
              break;
            case 'omitted':
              sendBody = undefined; // a body without a length would be read as the next request
              break;
          }
        }
        const path = r.path + r.query;
        const head = buildHead(r.route.method, path, headers);
        const what = `${r.route.method} ${path.slice(0, 200)} [${headers.map(([k, v]) => `${k}: ${v.slice(0, 40)}`).join('; ')}] body=${body?.toString('utf8').slice(0, 120)}`;
        const res = await rawRequest(t, head, sendBody);
        sent++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        routesHit.add(`${r.route.method} ${r.route.url}`);
        checkResponse(res, r.route.method, what);
      }),
      { numRuns: 700, seed, endOnFailure: true },
    );
    // Report the failing request briefly (fast-check would print multi-kilobyte header values).
    if (outcome.failed) {
      const cause =
        outcome.errorInstance instanceof Error
          ? outcome.errorInstance.message
          : String(outcome.errorInstance);
      throw new Error(
        `fuzz property failed (replay with FUZZ_SEED=${seed}): ${cause.slice(0, 3000)}`,
      );
    }
    expect(sent).toBe(700);
    // The run reached most routes and got past auth and validation often enough to mean something.
    expect(routesHit.size).toBeGreaterThan(routes.length * 0.7);
    expect([...statuses.keys()].some((s) => s >= 200 && s < 300)).toBe(true);
    expect(loggedErrors, 'errors logged (5xx) during the fuzz run').toEqual([]);
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(protoKeysBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The service is still up and answers normally.
    const ok = await t.request('GET', '/v1/projects?limit=1');
    expect(ok.status).toBe(200);
  });

  it('path tricks: traversal, encoded dots, double slashes, long ids and NUL bytes', async () => {
    const key = t.key;
    const auth: [string, string][] = [
      ['Host', `127.0.0.1:${t.port}`],
      ['Authorization', `Bearer ${key}`],
    ];
    const paths = [
      '/v1/../v1/projects',
      '/v1/%2e%2e/v1/projects',
      '/v1/%2E%2E/%2E%2E/etc/passwd',
      '//v1//projects',
      '///v1///projects///',
      '/v1/./projects',
      '/v1/projects/%00',
      '/v1/projects/prj_%00',
      `/v1/projects/${'a'.repeat(5000)}`,
      `/v1/projects/${'a'.repeat(500)}`,
      '/v1/projects/..%2f..%2fetc%2fpasswd',
      '/V1/PROJECTS',
      '/v1/projects?%',
      '/v1/projects?limit=%ff',
      '/%ff',
      '/v1/projects/%E0%A4%A',
      '/v1/blobs/..%2f..%2fblueline.db',
      '/v1/blobs/../../tls/key.pem?expires=9999999999&signature=' + 'A'.repeat(43),
      '/v1/blobs/',
      '/v1/blobs',
      '/v1/uploads/fil_x?expires=1&signature=x',
      '/problems/%00',
      '/problems/__proto__',
      '/problems/constructor',
      '/v1/jobs/%2e%2e/cancel',
      '/v1/openapi.json/..',
      '/v1',
      '/',
      '*',
    ];
    for (const path of paths) {
      for (const method of ['GET', 'POST', 'DELETE', 'OPTIONS']) {
        const res = await rawRequest(t, buildHead(method, path, auth), undefined);
        checkResponse(res, method, `${method} ${path.slice(0, 100)}`);
      }
    }
    // Normalised paths still need the key: a duplicate-slash path is no way around authentication.
    const noKey = await rawRequest(
      t,
      buildHead('GET', '//v1//projects', [['Host', 'localhost']]),
      undefined,
    );
    expect(noKey.status).toBe(401);
    const withKey = await rawRequest(t, buildHead('GET', '//v1//projects', auth), undefined);
    expect(withKey.status).toBe(200);
    // A request Node's parser rejects, a missing Host and huge headers are Problem Details too.
    const badLength = await rawRequest(
      t,
      buildHead('POST', '/v1/projects', [
        ...auth,
        ['Content-Type', 'application/json'],
        ['Content-Length', 'abc'],
      ]),
      Buffer.from('{}'),
    );
    checkResponse(badLength, 'POST', 'bad Content-Length');
    expect(badLength.status).toBe(400);
    const noHost = await rawRequest(
      t,
      buildHead('GET', '/v1/projects', [['Authorization', `Bearer ${key}`]]),
      undefined,
    );
    checkResponse(noHost, 'GET', 'no Host');
    expect(noHost.status).toBe(400);
    const huge = await rawRequest(
      t,
      buildHead('GET', '/v1/projects', [...auth, ['X-Huge', 'h'.repeat(40_000)]]),
      undefined,
    );
    checkResponse(huge, 'GET', 'huge header');
    expect(loggedErrors).toEqual([]);
    expect((await t.request('GET', '/v1/projects?limit=1')).status).toBe(200);
  });

  it('echoes a sane X-Request-Id and generates one otherwise', async () => {
    const echoed = await t.request('GET', '/v1/projects', {
      headers: { 'x-request-id': 'client-trace-42' },
    });
    expect(echoed.headers['x-request-id']).toBe('client-trace-42');
    const unsafe = await t.request('GET', '/v1/nope', {
      headers: { 'x-request-id': 'bad id <script>' },
    });
    expect(unsafe.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
    expect(unsafe.body.request_id).toBe(unsafe.headers['x-request-id']);
  });
});
