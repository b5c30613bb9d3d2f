import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UrlSigner } from '../blobs/signed-url';
import { ApiError } from '../domain/errors';
import { openDatabase, type Db } from '../store/db';
import { openReadOnlyDatabase } from '../store/read-only-db';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { seedGraph, type SeededGraph } from '../test/seed';
import { CursorCodec } from './cursor';
import { blobUrlSigner, originContext, type HttpDeps } from './deps';
import { runListJson, type ListEndpoint } from './list-engine';
import { createListReader, listBody, ListReaderUnavailable, type ListReader } from './list-reader';
import { LIST_ENDPOINTS } from './routes/catalog.routes';

// The list reader thread against the same list engine on this thread: the same bytes for every
// list endpoint, expansion, filter and cursor; the same errors; writes visible at once; a thread
// that dies costs no request.

const CURSOR_SECRET = Buffer.alloc(32, 3);
const URL_SECRET = Buffer.alloc(32, 4);
const ORIGIN = 'https://127.0.0.1:7420';
const STEP_MS = 300_000;

let dir: string;
let db: Db;
let org: string;
let otherOrg: string;
let g: SeededGraph;
let reader: ListReader;
const cursors = new CursorCodec(CURSOR_SECRET);
const signedUrl = blobUrlSigner(new UrlSigner(URL_SECRET));

const PROJECTS: ListEndpoint = { path: '/v1/projects', kind: 'project', filters: {} };
const endpoint = (path: string): ListEndpoint => {
  const e = LIST_ENDPOINTS.find((x) => x.path === path);
  if (!e) throw new Error(`no list endpoint ${path}`);
  return e;
};

function inline(e: ListEndpoint, query: Record<string, unknown>, organizationId = org): string {
  return runListJson(e, {
    organizationId,
    query,
    db,
    cursors,
    serialize: originContext(signedUrl, ORIGIN),
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The reader's page (waiting for the thread to start on the first call). */
async function viaReader(
  e: ListEndpoint,
  query: Record<string, unknown>,
  organizationId = org,
): Promise<string> {
  for (let i = 0; ; i++) {
    const job = reader.run(e, { organizationId, query, origin: ORIGIN });
    if (job) return await job;
    if (i > 1000) throw new Error('the list reader thread did not start within 20 s');
    await sleep(20);
  }
}

async function errorOf(p: Promise<unknown> | (() => unknown)): Promise<unknown> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

/**
 * The reader's body equals the inline one: `data` byte for byte, and `_meta` with cursors that
 * decode to the same payload (a cursor carries its expiry in ms, taken when it was made).
 */
function expectSamePage(fromReader: string, here: string): void {
  const split = (s: string) => {
    const at = s.lastIndexOf(',"_meta":');
    return {
      data: s.slice(0, at),
      meta: JSON.parse(s.slice(at + 9, -1)) as Record<string, unknown>,
    };
  };
  const a = split(fromReader);
  const b = split(here);
  expect(a.data).toBe(b.data);
  expect(a.meta.limit).toBe(b.meta.limit);
  for (const k of ['next', 'prev'] as const) {
    expect(a.meta[k] === null).toBe(b.meta[k] === null);
    if (typeof a.meta[k] === 'string') {
      const payload = (c: string) => {
        const { t, ...rest } = JSON.parse(
          Buffer.from(c.slice(0, c.indexOf('.')), 'base64url').toString('utf8'),
        ) as { t: number };
        return { rest, t };
      };
      const pa = payload(a.meta[k] as string);
      const pb = payload(b.meta[k] as string);
      expect(pa.rest).toEqual(pb.rest);
      expect(Math.abs(pa.t - pb.t)).toBeLessThan(60_000);
    }
  }
}

/** Runs `check` again if a URL expiry step ended while it ran (the URLs then differ, rightly). */
async function withinOneStep(check: () => Promise<void>): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const step = Math.floor(Date.now() / STEP_MS);
    try {
      await check();
      return;
    } catch (err) {
      if (attempt > 0 || Math.floor(Date.now() / STEP_MS) === step) throw err;
    }
  }
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'blueline-list-reader-'));
  db = openDatabase(join(dir, 'blueline.db'));
  org = ensureOrganization(db, 'Reader Org').id;
  otherOrg = ensureOrganization(db, 'Other Org').id;
  g = seedGraph(db, org, { overlays: 40 });
  seedGraph(db, otherOrg, { overlays: 5 });
  // Object keys everywhere, so pages carry signed URLs too; and text that JSON must escape.
  db.exec(`UPDATE blocks SET image_key = 'projects/' || project_id || '/blocks/' || id || '.png'`);
  db.exec(
    `UPDATE sheets SET image_key = 'projects/' || project_id || '/sheets/' || id || '.png',
                       thumbnail_key = 'projects/' || project_id || '/sheets/' || id || '-t.png'`,
  );
  db.exec(
    `UPDATE overlays SET images = json_object('combined', 'projects/' || project_id || '/o/' || id || '.png',
       'addition', 'projects/' || project_id || '/o/' || id || '-a.png')`,
  );
  db.prepare('UPDATE projects SET description = ? WHERE id = ?').run(
    'quote " backslash \\ line\u2028sep tab\t',
    g.projectId,
  );
  reader = createListReader({
    dbFile: join(dir, 'blueline.db'),
    cursorSecret: CURSOR_SECRET,
    urlSecret: URL_SECRET,
  })!;
});

afterAll(async () => {
  await reader?.close();
  db?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('list reader thread', () => {
  it('starts on demand and gives the same page as this thread, for every list endpoint', async () => {
    expect(reader).toBeDefined();
    expect(reader.run(PROJECTS, { organizationId: org, query: {}, origin: ORIGIN })).toBe(
      undefined,
    );
    await withinOneStep(async () => {
      for (const e of [PROJECTS, ...LIST_ENDPOINTS]) {
        const query = e.required?.includes('project_id') ? { project_id: g.projectId } : {};
        for (const q of [query, { ...query, limit: '7' }, { ...query, limit: '100' }])
          expectSamePage(await viaReader(e, q), inline(e, q));
      }
    });
  }, 30_000);

  it('same bytes with every overlay expansion, filters and a walk by cursor both ways', async () => {
    const e = endpoint('/v1/overlays');
    await withinOneStep(async () => {
      for (const expand of [
        'block_a.sheet.drawing,block_b.sheet.drawing,job',
        'block_a,job',
        'block_b.sheet',
      ]) {
        const q = { project_id: g.projectId, limit: '6', expand };
        let a = await viaReader(e, q);
        expectSamePage(a, inline(e, q));
        // Walk forward by the reader's cursors, each page compared with this thread's.
        const seen: string[] = [];
        for (;;) {
          const page = JSON.parse(a) as { data: { id: string }[]; _meta: { next: string | null } };
          seen.push(...page.data.map((o) => o.id));
          if (!page._meta.next) break;
          const cq = { cursor: page._meta.next };
          a = await viaReader(e, cq);
          expectSamePage(a, inline(e, cq));
        }
        expect(new Set(seen).size).toBe(40);
        // And back from the last page.
        const prev = (JSON.parse(a) as { _meta: { prev: string | null } })._meta.prev!;
        expectSamePage(await viaReader(e, { cursor: prev }), inline(e, { cursor: prev }));
      }
      for (const q of [
        { has_changes: 'true', limit: '100' },
        { job_id: g.jobId, expand: 'job' },
        { created_after: '2000-01-01T00:00:00Z', limit: '3' },
      ])
        expectSamePage(await viaReader(e, q), inline(e, q));
      // Escapes and U+2028 in a project's text.
      const text = await viaReader(PROJECTS, {});
      expectSamePage(text, inline(PROJECTS, {}));
      expect(text).toContain('quote \\" backslash \\\\ line\u2028sep tab\\t');
    });
  }, 30_000);

  it('gives the same errors (code, status, detail, field errors) as this thread', async () => {
    const e = endpoint('/v1/overlays');
    const drawings = endpoint('/v1/drawings');
    const cases: [ListEndpoint, Record<string, unknown>][] = [
      [e, { cursor: 'not-a-cursor' }],
      [e, { expand: 'block_a.nope' }],
      [e, { expand: 'block_a.sheet.drawing.project' }],
      [e, { limit: 'abc' }],
      [e, { project_id: 'prj_doesnotexist' }],
      [e, { has_changes: 'maybe' }],
      [e, { limit: ['1', '2'] }],
      [drawings, {}],
    ];
    for (const [ep, q] of cases) {
      const here = await errorOf(() => inline(ep, q));
      const there = await errorOf(viaReader(ep, q));
      expect(here).toBeInstanceOf(ApiError);
      expect(there).toBeInstanceOf(ApiError);
      const pick = (x: ApiError) => ({
        code: x.code,
        status: x.status,
        detail: x.detail,
        errors: x.errors,
        extra: x.extra,
        headers: x.headers,
      });
      expect(pick(there as ApiError)).toEqual(pick(here as ApiError));
    }
    // A cursor of another organization is refused by the reader too.
    const page = JSON.parse(await viaReader(e, { limit: '2' }, otherOrg)) as {
      _meta: { next: string };
    };
    const foreign = await errorOf(viaReader(e, { cursor: page._meta.next }));
    expect((foreign as ApiError).code).toBe('invalid_cursor');
  }, 30_000);

  it('sees a write committed on the writer handle in its next page, and cannot write', async () => {
    const e = PROJECTS;
    const before = JSON.parse(await viaReader(e, { limit: '100' })) as { data: { id: string }[] };
    const id = `prj_${'z'.repeat(20)}`;
    db.prepare(
      'INSERT INTO projects (id, organization_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    ).run(id, org, 'fresh', '2999-01-01T00:00:00.000Z', '2999-01-01T00:00:00.000Z');
    const after = JSON.parse(await viaReader(e, { limit: '100' })) as { data: { id: string }[] };
    expect(after.data[0]!.id).toBe(id);
    expect(after.data.length).toBe(before.data.length + 1);
    const ro = openReadOnlyDatabase(join(dir, 'blueline.db'));
    try {
      expect(() => ro.prepare('DELETE FROM projects').run()).toThrow(/readonly|query_only/i);
    } finally {
      ro.close();
    }
  }, 30_000);

  it('a thread that dies costs no request: listBody builds the page here; stats count it', async () => {
    const crashing = createListReader({
      dbFile: join(dir, 'blueline.db'),
      cursorSecret: CURSOR_SECRET,
      urlSecret: URL_SECRET,
      workerUrl: new URL('./list-reader.crash.test-support.ts', import.meta.url),
    })!;
    try {
      const deps: HttpDeps = { db, cursors, signedUrl, lists: crashing };
      const request = {
        query: { limit: '5' },
        auth: { organizationId: org },
        headers: { host: '127.0.0.1:7420' },
        socket: { localPort: 7420 },
      } as unknown as FastifyRequest;
      const e = endpoint('/v1/overlays');
      // Until the thread is ready, pages are built here.
      expectSamePage(await listBody(deps, e, request), inline(e, { limit: '5' }));
      let job: Promise<string> | undefined;
      for (let i = 0; i < 1000 && !job; i++) {
        job = crashing.run(e, { organizationId: org, query: { limit: '5' }, origin: ORIGIN });
        if (!job) await sleep(20);
      }
      expect(await errorOf(job!)).toBeInstanceOf(ListReaderUnavailable);
      expect(crashing.stats.crashed).toBe(1);
      // Right after a crash the thread is not restarted at once: pages are built here.
      expectSamePage(await listBody(deps, e, request), inline(e, { limit: '5' }));
      // A page in flight when the thread dies is rebuilt here as well.
      await sleep(1100);
      expectSamePage(await listBody(deps, e, request), inline(e, { limit: '5' })); // starts it again
      for (let i = 0; i < 1000 && !crashing.ready; i++) await sleep(20);
      expect(crashing.ready).toBe(true);
      expectSamePage(await listBody(deps, e, request), inline(e, { limit: '5' }));
      expect(crashing.stats.crashed).toBe(2);
      expect(crashing.ready).toBe(false);
      expect(crashing.stats.served).toBe(0);
    } finally {
      await crashing.close();
    }
    expect(
      crashing.run(endpoint('/v1/overlays'), { organizationId: org, query: {}, origin: ORIGIN }),
    ).toBe(undefined);
  }, 30_000);

  it('listBody takes the page from the thread once it is ready', async () => {
    const deps: HttpDeps = { db, cursors, signedUrl, lists: reader };
    const request = {
      query: { limit: '3', expand: 'block_a.sheet' },
      auth: { organizationId: org },
      headers: { host: '127.0.0.1:7420' },
      socket: { localPort: 7420 },
    } as unknown as FastifyRequest;
    await viaReader(PROJECTS, {}); // started and ready
    expect(reader.ready).toBe(true);
    const served = reader.stats.served;
    const e = endpoint('/v1/overlays');
    await withinOneStep(async () => {
      expectSamePage(await listBody(deps, e, request), inline(e, request.query as never));
    });
    expect(reader.stats.served).toBeGreaterThan(served);
  }, 30_000);

  it('close() refuses new pages and fails those in flight as unavailable', async () => {
    const r = createListReader({
      dbFile: join(dir, 'blueline.db'),
      cursorSecret: CURSOR_SECRET,
      urlSecret: URL_SECRET,
    })!;
    const e = endpoint('/v1/overlays');
    let job: Promise<string> | undefined;
    for (let i = 0; i < 1000 && !job; i++) {
      job = r.run(e, { organizationId: org, query: { limit: '100' }, origin: ORIGIN });
      if (!job) await sleep(20);
    }
    const closing = r.close();
    expect(await errorOf(job!)).toBeInstanceOf(ListReaderUnavailable);
    await closing;
    expect(r.run(e, { organizationId: org, query: {}, origin: ORIGIN })).toBe(undefined);
    expect(r.stats.crashed).toBe(0);
  }, 30_000);
});
