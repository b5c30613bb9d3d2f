import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness';
import { seedGraph, type SeededGraph } from './seed';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { monotonicNow } from '../domain/clock';
import { newId } from '../domain/ids';
import { CursorCodec, CURSOR_TTL_MS } from '../http/cursor';
import { loadOrCreateSecret } from '../blobs/secrets';

// The one list engine and the one expansion engine, over real HTTPS against a temp data dir
// (spec "Pagination", "Filtering", "Expansion"; contract §2). Every check here is aimed at one rule
// and fails when that rule breaks.

let t: TestService;
let org: string;
/** A project graph with 150 overlays (for clamping and long walks) and a second, small one. */
let g: SeededGraph;
let g2: SeededGraph;
/** A second organization with its own records (cursor and filter isolation). */
let otherKey: string;
let otherGraph: SeededGraph;

type Item = { id: string; created_at: string } & Record<string, any>;
type Page = { data: Item[]; _meta: { next: string | null; prev: string | null; limit: number } };

beforeAll(async () => {
  t = await startTestService();
  org = (await ensureOrganization(t.svc.db, 'Test Org')).id;
  g = await seedMany(org, 150);
  g2 = await seedMany(org, 3);
  otherKey = await t.newOrgKey('Other Org');
  otherGraph = await seedMany((await ensureOrganization(t.svc.db, 'Other Org')).id, 30);
});
afterAll(async () => {
  await t.stop();
});

async function page(path: string, key?: string): Promise<Page> {
  const res = await t.request<Page>('GET', path, key ? { key } : {});
  expect(res.status, `${path} → ${res.text.slice(0, 300)}`).toBe(200);
  return res.body;
}

async function problem(
  path: string,
  key?: string,
): Promise<{ status: number; code: string; detail: string }> {
  const res = await t.request('GET', path, key ? { key } : {});
  return { status: res.status, code: res.body?.code, detail: res.body?.detail };
}

const withCursor = (base: string, cursor: string, extra = '') =>
  `${base}?cursor=${encodeURIComponent(cursor)}${extra}`;

/** Ids of a table for the test organization, in the API's order (created_at DESC, id DESC). */
async function dbOrder(table: string, where = '', ...params: unknown[]): Promise<string[]> {
  return (
    (await t.svc.db
      .prepare(
        `SELECT id FROM ${table} WHERE organization_id = ? ${where} ORDER BY created_at DESC, id DESC`,
      )
      .all(org, ...params)) as { id: string }[]
  ).map((r) => r.id);
}

/** A new block on sheet `side` (0 or 1) of the graph's drawings. */
async function insertBlock(orgId: string, graph: SeededGraph, side: 0 | 1): Promise<string> {
  const id = newId('block');
  const now = monotonicNow();
  await t.svc.db
    .prepare(
      `INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'Plan', '{"x":0,"y":0,"width":10,"height":10}', ?, ?)`,
    )
    .run(id, orgId, graph.projectId, graph.drawingIds[side], graph.sheetIds[side], now, now);
  return id;
}

/**
 * seedGraph plus `n - 1` more overlays of the same comparison job. Each overlay compares its own
 * block pair (A on the first drawing's sheet, B on the second's), as a real comparison job would:
 * one overlay per block pair.
 */
async function seedMany(orgId: string, n: number): Promise<SeededGraph> {
  const graph = await seedGraph(t.svc.db, orgId, { overlays: 1 });
  for (let i = 1; i < n; i++) graph.overlayIds.push(await insertOverlay(graph, i % 2, orgId));
  return graph;
}

async function insertOverlay(graph: SeededGraph, hasChanges = 0, orgId = org): Promise<string> {
  const blockA = await insertBlock(orgId, graph, 0);
  const blockB = await insertBlock(orgId, graph, 1);
  const id = newId('overlay');
  const now = monotonicNow();
  await t.svc.db
    .prepare(
      `INSERT INTO overlays (id, organization_id, project_id, job_id, block_a_id, block_b_id, score, has_changes, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 0.5, ?, ?, ?)`,
    )
    .run(id, orgId, graph.projectId, graph.jobId, blockA, blockB, hasChanges, now, now);
  return id;
}

async function insertJob(fields: {
  projectId: string;
  type?: string;
  status?: string;
  targetType?: string;
  targetId: string;
  parentId?: string;
}): Promise<string> {
  const id = newId('job');
  const now = monotonicNow();
  await t.svc.db
    .prepare(
      `INSERT INTO jobs (id, organization_id, project_id, type, status, target_type, target_id, parent_id, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      id,
      org,
      fields.projectId,
      fields.type ?? 'compare',
      fields.status ?? 'Completed',
      fields.targetType ?? 'drawing',
      fields.targetId,
      fields.parentId ?? null,
      now,
      now,
    );
  return id;
}

const ids = (p: Page) => p.data.map((d) => d.id);
const sorted = (xs: string[]) => [...xs].sort();

function expectNewestFirst(items: Item[]): void {
  for (let i = 1; i < items.length; i++) {
    const a = items[i - 1]!;
    const b = items[i]!;
    expect(
      a.created_at > b.created_at || (a.created_at === b.created_at && a.id > b.id),
      `${a.id} before ${b.id}`,
    ).toBe(true);
  }
}

describe('keyset paging', () => {
  it('walks forward and back over projects with no duplicates or gaps while other requests insert', async () => {
    for (let i = 0; i < 45; i++) {
      const r = await t.request('POST', '/v1/projects', { body: { name: `Walk ${i}` } });
      expect(r.status).toBe(201);
    }
    const snapshot = await dbOrder('projects');
    let inserted = 0;
    const insert = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const r = await t.request('POST', '/v1/projects', {
          body: { name: `Concurrent ${inserted++}` },
        });
        expect(r.status).toBe(201);
      }
    };

    // Forward: every page after the first runs concurrently with inserts.
    const forward: Item[] = [];
    let p = await page('/v1/projects?limit=7');
    expect(p._meta.prev).toBeNull();
    expect(p._meta.limit).toBe(7);
    forward.push(...p.data);
    const pages: Page[] = [p];
    while (p._meta.next) {
      const [next] = await Promise.all([page(withCursor('/v1/projects', p._meta.next)), insert(3)]);
      p = next;
      expect(p._meta.prev).not.toBeNull();
      pages.push(p);
      forward.push(...p.data);
    }
    expect(p._meta.next).toBeNull();
    expect(inserted).toBeGreaterThan(10);
    expectNewestFirst(forward);
    // Exactly the records that existed when the walk began: nothing new, nothing twice, nothing dropped.
    expect(forward.map((d) => d.id)).toEqual(snapshot);

    // Backward from the last page, still inserting: the snapshot comes back once each, in order,
    // and records created meanwhile appear only above it; the page reached last is the first page.
    const backwardPages: Page[] = [];
    let b = p;
    while (b._meta.prev) {
      const [prev] = await Promise.all([page(withCursor('/v1/projects', b._meta.prev)), insert(2)]);
      b = prev;
      backwardPages.push(b);
    }
    expect(b._meta.prev).toBeNull();
    expect(b._meta.next).not.toBeNull();
    // The pages before the last one reproduce the forward pages exactly (same boundaries).
    const lastIdx = pages.length - 1;
    for (let i = 0; i < lastIdx; i++)
      expect(ids(backwardPages[i]!)).toEqual(ids(pages[lastIdx - 1 - i]!));
    const backward = [...backwardPages].reverse().flatMap((x) => x.data);
    expectNewestFirst(backward);
    const top = backward[0]!;
    const all = await dbOrder('projects');
    const expected = all.slice(all.indexOf(top.id), all.indexOf(p.data[0]!.id));
    expect(backward.map((d) => d.id)).toEqual(expected);
    expect(new Set(backward.map((d) => d.id)).size).toBe(backward.length);
    for (const id of snapshot.slice(0, snapshot.indexOf(p.data[0]!.id)))
      expect(backward.map((d) => d.id)).toContain(id);
  });

  it('walks overlays with a filter while records are inserted between pages', async () => {
    const filter = `project_id=${g.projectId}`;
    const snapshot = await dbOrder('overlays', 'AND project_id = ?', g.projectId);
    const seen: string[] = [];
    let p = await page(`/v1/overlays?${filter}&limit=17`);
    seen.push(...ids(p));
    const fresh: string[] = [];
    while (p._meta.next) {
      fresh.push(await insertOverlay(g), await insertOverlay(g));
      p = await page(withCursor('/v1/overlays', p._meta.next));
      seen.push(...ids(p));
    }
    expect(seen).toEqual(snapshot);
    for (const f of fresh) expect(seen).not.toContain(f);
    // The new records are there for a client that starts again.
    const again = await page(`/v1/overlays?${filter}&limit=5`);
    expect(ids(again)).toEqual(
      (await dbOrder('overlays', 'AND project_id = ?', g.projectId)).slice(0, 5),
    );
    expect(fresh).toContain(again.data[0]!.id);
  });

  it('the first page has prev null however it is reached, the last has next null', async () => {
    const path = `/v1/overlays?project_id=${g2.projectId}`; // 3 overlays in g2
    const only = await page(`${path}&limit=3`);
    expect(only._meta).toMatchObject({ next: null, prev: null, limit: 3 });

    const p1 = await page(`/v1/overlays?project_id=${g.projectId}&limit=20`);
    const p2 = await page(withCursor('/v1/overlays', p1._meta.next!));
    const back = await page(withCursor('/v1/overlays', p2._meta.prev!));
    expect(ids(back)).toEqual(ids(p1));
    expect(back._meta.prev).toBeNull();
    expect(back._meta.next).not.toBeNull();
    // With a smaller limit, the backward page stops short of the top: prev continues, then is null.
    const back15 = await page(withCursor('/v1/overlays', p2._meta.prev!, '&limit=15'));
    expect(ids(back15)).toEqual(ids(p1).slice(5));
    expect(back15._meta.prev).not.toBeNull();
    const top = await page(withCursor('/v1/overlays', back15._meta.prev!));
    expect(ids(top)).toEqual(ids(p1).slice(0, 5));
    expect(top._meta.prev).toBeNull();

    // A page reached by next becomes the first page once everything above it is deleted.
    const key = await t.newOrgKey('Paging Org');
    for (let i = 0; i < 6; i++)
      expect(
        (await t.request('POST', '/v1/projects', { key, body: { name: `p${i}` } })).status,
      ).toBe(201);
    const q1 = await page('/v1/projects?limit=3', key);
    expect(q1._meta.prev).toBeNull();
    for (const id of ids(q1))
      expect((await t.request('DELETE', `/v1/projects/${id}`, { key })).status).toBe(204);
    const q2 = await page(withCursor('/v1/projects', q1._meta.next!), key);
    expect(q2.data).toHaveLength(3);
    expect(q2._meta).toMatchObject({ prev: null, next: null });

    const empty = await page(
      `/v1/drawings?project_id=${(await t.request('POST', '/v1/projects', { body: { name: 'empty' } })).body.id}`,
    );
    expect(empty).toEqual({ data: [], _meta: { next: null, prev: null, limit: 20 } });
  });
});

describe('limit', () => {
  it('defaults to 20 and clamps above 100 to 100', async () => {
    const d = await page(`/v1/overlays?project_id=${g.projectId}`);
    expect(d.data).toHaveLength(20);
    expect(d._meta.limit).toBe(20);
    for (const raw of ['101', '1000', '99999999999999999999']) {
      const c = await page(`/v1/overlays?project_id=${g.projectId}&limit=${raw}`);
      expect(c.data).toHaveLength(100);
      expect(c._meta.limit).toBe(100);
    }
    const one = await page(`/v1/overlays?project_id=${g.projectId}&limit=1`);
    expect(one.data).toHaveLength(1);
  });

  it('limit below 1 or not an integer is 400 invalid_parameter', async () => {
    for (const raw of ['0', '-1', 'abc', '1.5', '', '1e2', '0x10']) {
      const p = await problem(`/v1/projects?limit=${encodeURIComponent(raw)}`);
      expect(p, `limit=${raw}`).toMatchObject({ status: 400, code: 'invalid_parameter' });
    }
    const twice = await problem('/v1/projects?limit=5&limit=6');
    expect(twice).toMatchObject({ status: 400, code: 'invalid_parameter' });
  });

  it('a limit beside a cursor overrides the remembered one, which the next cursor remembers', async () => {
    const p1 = await page(`/v1/overlays?project_id=${g.projectId}&limit=5`);
    const p2 = await page(withCursor('/v1/overlays', p1._meta.next!));
    expect(p2.data).toHaveLength(5);
    expect(p2._meta.limit).toBe(5);
    const p2b = await page(withCursor('/v1/overlays', p1._meta.next!, '&limit=12'));
    expect(p2b._meta.limit).toBe(12);
    expect(ids(p2b).slice(0, 5)).toEqual(ids(p2));
    const p3 = await page(withCursor('/v1/overlays', p2b._meta.next!));
    expect(p3._meta.limit).toBe(12);
    expect(p3.data).toHaveLength(12);
    const bad = await problem(withCursor('/v1/overlays', p1._meta.next!, '&limit=0'));
    expect(bad).toMatchObject({ status: 400, code: 'invalid_parameter' });
  });
});

describe('cursors', () => {
  it('remember the filters: paging with only the cursor keeps filtering', async () => {
    const expected = await dbOrder(
      'overlays',
      'AND project_id = ? AND has_changes = 1',
      g.projectId,
    );
    expect(expected.length).toBeGreaterThan(30);
    const seen: Item[] = [];
    let p = await page(`/v1/overlays?project_id=${g.projectId}&has_changes=true&limit=10`);
    seen.push(...p.data);
    while (p._meta.next) {
      p = await page(withCursor('/v1/overlays', p._meta.next));
      seen.push(...p.data);
    }
    expect(seen.map((d) => d.id)).toEqual(expected);
    expect(seen.every((d) => d.has_changes === true && d.project_id === g.projectId)).toBe(true);
    // Walking back from the end keeps the filter too.
    const back = await page(withCursor('/v1/overlays', p._meta.prev!));
    expect(back.data.every((d) => d.has_changes === true)).toBe(true);
  });

  it('a filter repeated beside a cursor must equal the remembered one', async () => {
    const p1 = await page(`/v1/overlays?project_id=${g.projectId}&has_changes=true&limit=10`);
    const same = await page(
      withCursor('/v1/overlays', p1._meta.next!, `&has_changes=true&project_id=${g.projectId}`),
    );
    expect(same.data).toHaveLength(10);
    for (const extra of [
      '&has_changes=false',
      `&project_id=${g2.projectId}`,
      `&job_id=${g.jobId}`,
      '&created_after=2020-01-01T00:00:00Z',
    ]) {
      const p = await problem(withCursor('/v1/overlays', p1._meta.next!, extra));
      expect(p, extra).toMatchObject({ status: 400, code: 'invalid_cursor' });
    }
  });

  it('tampered, foreign, malformed and expired cursors are 400 invalid_cursor', async () => {
    const p1 = await page(`/v1/overlays?project_id=${g.projectId}&limit=5`);
    const cursor = p1._meta.next!;
    const [body, sig] = cursor.split('.') as [string, string];
    const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const flip = (s: string, i: number) =>
      s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    // Each character position of the signature, including the last one whose low bits base64
    // leaves unused (a decoder ignores them, so only a strict comparison catches that flip).
    const tampered = [
      `${flip(body, 10)}.${sig}`,
      `${flip(body, body.length - 1)}.${sig}`,
      `${body}.${flip(sig, 0)}`,
      `${body}.${flip(sig, sig.length - 1)}`,
      `${body}.${sig.slice(0, -1)}${B64[B64.indexOf(sig.at(-1)!) ^ 1]}`,
      `${body}.${sig}!`,
      `${body}.${sig}=`,
      `${body}x.${sig}`,
      `${body}`,
      `.${sig}`,
    ];
    for (const c of tampered) {
      const p = await problem(withCursor('/v1/overlays', c));
      expect(p, c).toMatchObject({ status: 400, code: 'invalid_cursor' });
    }
    // A payload re-signed by someone without the secret.
    const forged = new CursorCodec(Buffer.alloc(32, 1)).encode({
      e: '/v1/overlays',
      o: org,
      f: {},
      l: 5,
      k: ['9999', 'ovl_x'],
      d: 'a',
    });
    expect(await problem(withCursor('/v1/overlays', forged))).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
    for (const m of ['', 'abc', 'a.b', '!!!.???', '%%%', 'x'.repeat(5000)]) {
      const p = await problem(`/v1/overlays?cursor=${encodeURIComponent(m)}`);
      expect(p, m.slice(0, 20)).toMatchObject({ status: 400, code: 'invalid_cursor' });
    }
    // From another endpoint.
    const sheetsPage = await page(`/v1/sheets?project_id=${g.projectId}&limit=1`);
    expect(sheetsPage._meta.next).not.toBeNull();
    expect(await problem(withCursor('/v1/overlays', sheetsPage._meta.next!))).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
    expect(await problem(withCursor('/v1/sheets', cursor))).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
    // Of another organization: valid for its owner, refused for us.
    const theirs = await page(`/v1/overlays?limit=5`, otherKey);
    expect(
      (await page(withCursor('/v1/overlays', theirs._meta.next!), otherKey)).data,
    ).toHaveLength(5);
    expect(await problem(withCursor('/v1/overlays', theirs._meta.next!))).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
    expect(await problem(withCursor('/v1/overlays', cursor), otherKey)).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
  });

  it('expire after 24 hours', async () => {
    const codec = new CursorCodec(await loadOrCreateSecret(t.dataDir, 'cursor'));
    const p1 = await page(`/v1/overlays?project_id=${g.projectId}&limit=5`);
    const last = p1.data[4]!;
    const payload = {
      e: '/v1/overlays',
      o: org,
      f: { project_id: g.projectId },
      l: 5,
      k: [last.created_at, last.id] as [string, string],
      d: 'a' as const,
    };
    // Control: the same cursor minted now with the service's own secret works like _meta.next.
    const fresh = codec.encode(payload);
    expect(ids(await page(withCursor('/v1/overlays', fresh)))).toEqual(
      ids(await page(withCursor('/v1/overlays', p1._meta.next!))),
    );
    const almost = codec.encode(payload, Date.now() - CURSOR_TTL_MS + 60_000);
    expect((await page(withCursor('/v1/overlays', almost))).data).toHaveLength(5);
    const expired = codec.encode(payload, Date.now() - CURSOR_TTL_MS - 1000);
    const p = await problem(withCursor('/v1/overlays', expired));
    expect(p).toMatchObject({ status: 400, code: 'invalid_cursor' });
    expect(p.detail).toMatch(/expired/);
  });
});

describe('filters', () => {
  it('created_after and created_before are strict', async () => {
    const all = (await page(`/v1/overlays?project_id=${g2.projectId}`)).data; // 3, newest first
    expect(all).toHaveLength(3);
    const [newest, middle, oldest] = all as [Item, Item, Item];
    const q = (s: string) => page(`/v1/overlays?project_id=${g2.projectId}&${s}`);
    expect(ids(await q(`created_after=${encodeURIComponent(middle.created_at)}`))).toEqual([
      newest.id,
    ]);
    expect(ids(await q(`created_before=${encodeURIComponent(middle.created_at)}`))).toEqual([
      oldest.id,
    ]);
    expect(
      ids(
        await q(
          `created_after=${encodeURIComponent(oldest.created_at)}&created_before=${encodeURIComponent(newest.created_at)}`,
        ),
      ),
    ).toEqual([middle.id]);
    // Another zone spelling of the same instant is the same boundary.
    const ms = Date.parse(middle.created_at);
    const plus2 = new Date(ms + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect(ids(await q(`created_after=${encodeURIComponent(plus2)}`))).toEqual([newest.id]);
    expect(
      ids(await q(`created_after=${encodeURIComponent(new Date(ms - 1).toISOString())}`)),
    ).toEqual([newest.id, middle.id]);
  });

  it('bad datetimes are 400 invalid_parameter', async () => {
    for (const raw of [
      'yesterday',
      '2026-13-01T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-01-01T10:00:00',
      '2026-01-01T25:00:00Z',
      '1700000000',
      '',
    ]) {
      for (const name of ['created_after', 'created_before']) {
        const p = await problem(`/v1/projects?${name}=${encodeURIComponent(raw)}`);
        expect(p, `${name}=${raw}`).toMatchObject({ status: 400, code: 'invalid_parameter' });
      }
    }
    expect((await page('/v1/projects?created_after=2026-02-28T00:00:00Z')).data).toBeDefined();
    expect(
      (await page('/v1/projects?created_before=2024-02-29T00:00:00.000%2B01:00')).data,
    ).toEqual([]);
  });

  it('drawings: project_id is required, name is a case-insensitive substring', async () => {
    expect(await problem('/v1/drawings')).toMatchObject({ status: 400, code: 'missing_parameter' });
    expect(await problem('/v1/drawings?name=Issue')).toMatchObject({
      status: 400,
      code: 'missing_parameter',
    });
    const d = (s: string) => page(`/v1/drawings?project_id=${g.projectId}${s}`).then(ids);
    expect(sorted(await d(''))).toEqual(sorted(g.drawingIds));
    expect(await d('&name=ISSUE%202')).toEqual([g.drawingIds[1]]);
    expect(await d('&name=sue%201')).toEqual([g.drawingIds[0]]);
    expect(sorted(await d('&name=ssu'))).toEqual(sorted(g.drawingIds));
    expect(await d('&name=%25')).toEqual([]);
    expect(await d('&name=_')).toEqual([]);
    expect(await d('&name=Rev')).toEqual([]);
    expect(await problem('/v1/drawings?project_id=drw_abc')).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
  });

  it('a parent named in a filter that the caller cannot see is 404 not_found', async () => {
    const theirs = otherGraph;
    for (const path of [
      `/v1/drawings?project_id=${theirs.projectId}`,
      `/v1/sheets?drawing_id=${theirs.drawingIds[0]}`,
      `/v1/sheets?project_id=${theirs.projectId}`,
      `/v1/blocks?sheet_id=${theirs.sheetIds[0]}`,
      `/v1/overlays?project_id=${theirs.projectId}`,
      `/v1/overlays?job_id=${theirs.jobId}`,
      `/v1/overlays?drawing_id=${theirs.drawingIds[0]}`,
      `/v1/jobs?project_id=${theirs.projectId}`,
      `/v1/changes?overlay_id=${theirs.overlayIds[0]}`,
      `/v1/drawings?project_id=prj_0000000000000000000z`,
    ]) {
      expect(await problem(path), path).toMatchObject({ status: 404, code: 'not_found' });
    }
    // The owner sees them.
    expect((await page(`/v1/overlays?job_id=${theirs.jobId}`, otherKey)).data).toHaveLength(20);
  });

  it('sheets: drawing_id, project_id, discipline, sheet_number (exact)', async () => {
    await t.svc.db
      .prepare(`UPDATE sheets SET discipline = 'structural', sheet_number = 'S-201' WHERE id = ?`)
      .run(g.sheetIds[1]);
    const s = (q: string) => page(`/v1/sheets?${q}`).then(ids);
    expect(await s(`drawing_id=${g.drawingIds[0]}`)).toEqual([g.sheetIds[0]]);
    expect(await s(`drawing_id=${g.drawingIds[1]}`)).toEqual([g.sheetIds[1]]);
    expect(sorted(await s(`project_id=${g.projectId}`))).toEqual(sorted(g.sheetIds));
    expect(await s(`project_id=${g.projectId}&discipline=structural`)).toEqual([g.sheetIds[1]]);
    expect(await s(`project_id=${g.projectId}&discipline=architectural`)).toEqual([g.sheetIds[0]]);
    expect(await s(`project_id=${g.projectId}&discipline=civil`)).toEqual([]);
    expect(await s(`project_id=${g.projectId}&sheet_number=S-201`)).toEqual([g.sheetIds[1]]);
    expect(await s(`project_id=${g.projectId}&sheet_number=S-20`)).toEqual([]);
    expect(await s(`project_id=${g.projectId}&sheet_number=s-201`)).toEqual([]);
    expect(sorted(await s(`sheet_number=A-101`))).toEqual(sorted([g.sheetIds[0]!, ...g2.sheetIds]));
    expect(await s(`drawing_id=${g.drawingIds[0]}&discipline=structural`)).toEqual([]);
    expect(await problem('/v1/sheets?discipline=bogus')).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
  });

  it('blocks: sheet_id, type', async () => {
    await t.svc.db.prepare(`UPDATE blocks SET type = 'Detail' WHERE id = ?`).run(g.blockIds[1]);
    const b = (q: string) => page(`/v1/blocks?${q}`).then(ids);
    const onSheet = async (i: 0 | 1) => await dbOrder('blocks', 'AND sheet_id = ?', g.sheetIds[i]);
    expect((await onSheet(0)).length).toBeGreaterThan(20);
    expect(await onSheet(0)).toContain(g.blockIds[0]);
    const all = async (q: string) => {
      const out: string[] = [];
      let p = await page(`/v1/blocks?${q}&limit=100`);
      out.push(...ids(p));
      while (p._meta.next) {
        p = await page(withCursor('/v1/blocks', p._meta.next));
        out.push(...ids(p));
      }
      return out;
    };
    expect(await all(`sheet_id=${g.sheetIds[0]}`)).toEqual(await onSheet(0));
    expect(await all(`sheet_id=${g.sheetIds[1]}`)).toEqual(await onSheet(1));
    expect(await all(`sheet_id=${g.sheetIds[1]}&type=Plan`)).toEqual(
      (await onSheet(1)).filter((id) => id !== g.blockIds[1]),
    );
    expect(await b(`sheet_id=${g.sheetIds[1]}&type=Detail`)).toEqual([g.blockIds[1]]);
    const details = await page('/v1/blocks?type=Detail');
    expect(ids(details)).toEqual([g.blockIds[1]]);
    expect(await problem('/v1/blocks?type=Bogus')).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
    expect(await problem('/v1/blocks?type=plan')).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
  });

  it('overlays: project_id, job_id, drawing_id, has_changes', async () => {
    const all = async (q: string) => {
      const out: string[] = [];
      let p = await page(`/v1/overlays?${q}&limit=100`);
      out.push(...ids(p));
      while (p._meta.next) {
        p = await page(withCursor('/v1/overlays', p._meta.next));
        out.push(...ids(p));
      }
      return out;
    };
    const inG = await dbOrder('overlays', 'AND project_id = ?', g.projectId);
    expect(await all(`project_id=${g.projectId}`)).toEqual(inG);
    expect(await all(`job_id=${g.jobId}`)).toEqual(inG);
    expect(await all(`job_id=${g2.jobId}`)).toEqual(
      await dbOrder('overlays', 'AND project_id = ?', g2.projectId),
    );
    expect(await all(`drawing_id=${g.drawingIds[0]}`)).toEqual(inG);
    expect(await all(`drawing_id=${g2.drawingIds[1]}`)).toEqual(
      await dbOrder('overlays', 'AND project_id = ?', g2.projectId),
    );
    expect(await all(`project_id=${g.projectId}&has_changes=true`)).toEqual(
      await dbOrder('overlays', 'AND project_id = ? AND has_changes = 1', g.projectId),
    );
    expect(await all(`project_id=${g.projectId}&has_changes=false`)).toEqual(
      await dbOrder('overlays', 'AND project_id = ? AND has_changes = 0', g.projectId),
    );
    expect(await all(`drawing_id=${g.drawingIds[0]}&has_changes=false`)).toEqual(
      await dbOrder('overlays', 'AND project_id = ? AND has_changes = 0', g.projectId),
    );
    expect(await all(`project_id=${g2.projectId}&job_id=${g.jobId}`)).toEqual([]);
    for (const bad of ['yes', 'maybe', 'TRUEISH', '']) {
      expect(await problem(`/v1/overlays?has_changes=${bad}`), bad).toMatchObject({
        status: 400,
        code: 'invalid_parameter',
      });
    }
    expect(await problem('/v1/overlays?job_id=prj_abc')).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
  });

  it('jobs: project_id, status, type, target_type, target_id, parent_id', async () => {
    const parent = await insertJob({
      projectId: g2.projectId,
      status: 'Started',
      targetId: g2.drawingIds[1],
    });
    const child1 = await insertJob({
      projectId: g2.projectId,
      status: 'Canceled',
      targetType: 'sheet',
      targetId: g2.sheetIds[1]!,
      parentId: parent,
    });
    const child2 = await insertJob({
      projectId: g2.projectId,
      status: 'Failed',
      type: 'analyze',
      targetType: 'overlay',
      targetId: g2.overlayIds[0]!,
      parentId: parent,
    });
    const j = (q: string) => page(`/v1/jobs?${q}`).then(ids);
    expect(await j(`project_id=${g2.projectId}`)).toEqual([child2, child1, parent, g2.jobId]);
    expect(await j(`project_id=${g2.projectId}&status=Canceled`)).toEqual([child1]);
    expect(await j(`project_id=${g2.projectId}&status=Completed`)).toEqual([g2.jobId]);
    expect(await j(`project_id=${g2.projectId}&type=analyze`)).toEqual([child2]);
    expect(await j(`project_id=${g2.projectId}&type=compare`)).toEqual([child1, parent, g2.jobId]);
    expect(await j(`project_id=${g2.projectId}&target_type=sheet`)).toEqual([child1]);
    expect(await j(`target_id=${g2.overlayIds[0]}`)).toEqual([child2]);
    expect(await j(`target_id=${g2.drawingIds[1]}`)).toEqual([parent, g2.jobId]);
    expect(await j(`parent_id=${parent}`)).toEqual([child2, child1]);
    expect(await j(`parent_id=${parent}&status=Failed&type=analyze&target_type=overlay`)).toEqual([
      child2,
    ]);
    for (const bad of [
      'status=Running',
      'status=queued',
      'type=bogus',
      'target_type=file',
      'parent_id=prj_abc',
    ]) {
      expect(await problem(`/v1/jobs?${bad}`), bad).toMatchObject({
        status: 400,
        code: 'invalid_parameter',
      });
    }
  });

  it('files: project_id is required', async () => {
    expect(await problem('/v1/files')).toMatchObject({ status: 400, code: 'missing_parameter' });
    expect(await problem('/v1/files?content_type=application/pdf')).toMatchObject({
      status: 400,
      code: 'missing_parameter',
    });
    expect(await problem('/v1/files?project_id=abc')).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
    expect((await page(`/v1/files?project_id=${g.projectId}`))._meta.limit).toBe(20);
  });
});

describe('expansion', () => {
  it('expands every path of the spec table on overlays, keeping the _id fields', async () => {
    const paths = [
      'block_a',
      'block_b',
      'job',
      'block_a.sheet',
      'block_b.sheet',
      'block_a.sheet.drawing',
      'block_b.sheet.drawing',
    ];
    const p = await page(`/v1/overlays?project_id=${g2.projectId}&expand=${paths.join(',')}`);
    expect(p.data).toHaveLength(3);
    expect(p.data.at(-1)!.block_a_id).toBe(g2.blockIds[0]);
    expect(new Set(p.data.map((o) => o.block_a_id)).size).toBe(3);
    for (const o of p.data) {
      expect(o.job_id).toBe(g2.jobId);
      expect(o.block_a).toMatchObject({
        id: o.block_a_id,
        sheet_id: g2.sheetIds[0],
        type: 'Plan',
      });
      expect(o.block_b).toMatchObject({ id: o.block_b_id, sheet_id: g2.sheetIds[1] });
      expect(o.job).toMatchObject({ id: g2.jobId, type: 'compare', status: 'Completed' });
      expect(o.block_a.sheet).toMatchObject({
        id: g2.sheetIds[0],
        drawing_id: g2.drawingIds[0],
        sheet_number: 'A-101',
      });
      expect(o.block_b.sheet).toMatchObject({ id: g2.sheetIds[1], drawing_id: g2.drawingIds[1] });
      expect(o.block_a.sheet.drawing).toMatchObject({ id: g2.drawingIds[0], name: 'Issue 1' });
      expect(o.block_b.sheet.drawing).toMatchObject({ id: g2.drawingIds[1], name: 'Issue 2' });
      // Nested objects keep their own _id fields.
      expect(o.block_a.sheet.drawing_id).toBe(g2.drawingIds[0]);
    }
    // Only what was asked for.
    const one = await page(`/v1/overlays?project_id=${g2.projectId}&expand=block_a`);
    expect(one.data[0]!.block_a).toBeDefined();
    expect(one.data[0]!.block_a.sheet).toBeUndefined();
    expect(one.data[0]!.block_b).toBeUndefined();
    expect(one.data[0]!.job).toBeUndefined();
    const none = await page(`/v1/overlays?project_id=${g2.projectId}`);
    expect(Object.keys(none.data[0]!)).not.toContain('block_a');
    // The deepest path alone implies its ancestors.
    const deep = await page(
      `/v1/overlays?project_id=${g2.projectId}&expand=block_b.sheet.drawing&limit=1`,
    );
    expect(deep.data[0]!.block_b.sheet.drawing.id).toBe(g2.drawingIds[1]);
  });

  it('expands sheet.drawing, block.sheet(.drawing), drawing.file and job.parent', async () => {
    const sheets = await page(`/v1/sheets?drawing_id=${g2.drawingIds[1]}&expand=drawing`);
    expect(sheets.data[0]).toMatchObject({
      drawing_id: g2.drawingIds[1],
      drawing: { id: g2.drawingIds[1], name: 'Issue 2' },
    });
    const blocks = await page(`/v1/blocks?sheet_id=${g2.sheetIds[0]}&expand=sheet.drawing`);
    expect(blocks.data[0]).toMatchObject({
      sheet_id: g2.sheetIds[0],
      sheet: { id: g2.sheetIds[0], drawing: { id: g2.drawingIds[0] } },
    });
    const blocks1 = await page(`/v1/blocks?sheet_id=${g2.sheetIds[0]}&expand=sheet`);
    expect(blocks1.data[0]!.sheet.id).toBe(g2.sheetIds[0]);
    expect(blocks1.data[0]!.sheet.drawing).toBeUndefined();
    const drawings = await page(`/v1/drawings?project_id=${g2.projectId}&expand=file`);
    expect(drawings.data).toHaveLength(2);
    for (const d of drawings.data)
      expect(d).toMatchObject({
        file_id: g2.fileId,
        file: { id: g2.fileId, content_type: 'application/pdf' },
      });
    const parent = await insertJob({ projectId: g.projectId, targetId: g.drawingIds[0] });
    const child = await insertJob({
      projectId: g.projectId,
      targetId: g.sheetIds[0]!,
      targetType: 'sheet',
      parentId: parent,
    });
    const jobs = await page(`/v1/jobs?project_id=${g.projectId}&expand=parent&limit=3`);
    const byId = new Map(jobs.data.map((j) => [j.id, j]));
    expect(byId.get(child)).toMatchObject({
      parent_id: parent,
      parent: { id: parent, parent_id: null },
    });
    expect(byId.get(parent)).toMatchObject({ parent_id: null, parent: null });
  });

  it('expansion works on GET one too', async () => {
    const o = await t.request(
      'GET',
      `/v1/overlays/${g2.overlayIds[0]}?expand=block_a.sheet.drawing,job`,
    );
    expect(o.status).toBe(200);
    expect(o.body).toMatchObject({
      block_a_id: g2.blockIds[0],
      block_a: { id: g2.blockIds[0], sheet: { drawing: { id: g2.drawingIds[0] } } },
      job: { id: g2.jobId },
    });
    const s = await t.request('GET', `/v1/sheets/${g2.sheetIds[0]}?expand=drawing`);
    expect(s.body.drawing.id).toBe(g2.drawingIds[0]);
    const b = await t.request('GET', `/v1/blocks/${g2.blockIds[1]}?expand=sheet.drawing`);
    expect(b.body.sheet.drawing.id).toBe(g2.drawingIds[1]);
    const d = await t.request('GET', `/v1/drawings/${g2.drawingIds[0]}?expand=file`);
    expect(d.body.file.id).toBe(g2.fileId);
    const deep = await t.request(
      'GET',
      `/v1/overlays/${g2.overlayIds[0]}?expand=block_a.sheet.drawing.file`,
    );
    expect(deep.status).toBe(400);
    expect(deep.body.code).toBe('expand_too_deep');
    const unknown = await t.request('GET', `/v1/sheets/${g2.sheetIds[0]}?expand=block`);
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('invalid_expand');
  });

  it('more than 3 levels is 400 expand_too_deep; an unknown field is 400 invalid_expand listing the allowed ones', async () => {
    const deep = await problem(`/v1/overlays?expand=block_a.sheet.drawing.file`);
    expect(deep).toMatchObject({ status: 400, code: 'expand_too_deep' });
    expect(await problem(`/v1/overlays?expand=a.b.c.d`)).toMatchObject({
      status: 400,
      code: 'expand_too_deep',
    });
    const unknown = await problem(`/v1/overlays?expand=block_c`);
    expect(unknown).toMatchObject({ status: 400, code: 'invalid_expand' });
    for (const f of ['block_a', 'block_b', 'job']) expect(unknown.detail).toContain(f);
    const nested = await problem(`/v1/overlays?expand=block_a.drawingz`);
    expect(nested).toMatchObject({ status: 400, code: 'invalid_expand' });
    expect(nested.detail).toContain('sheet');
    for (const bad of [
      'block_a_id',
      'sheet',
      'job.parent.parent.parent',
      '__proto__',
      'constructor',
      'constructor.x',
      '__proto__.x.y',
      'toString',
      'block_a.__proto__',
      'block_a..sheet',
    ]) {
      const p = await problem(`/v1/overlays?expand=${encodeURIComponent(bad)}`);
      expect(p.status, bad).toBe(400);
      expect(['invalid_expand', 'expand_too_deep'], bad).toContain(p.code);
    }
    expect(await problem(`/v1/projects?expand=anything`)).toMatchObject({
      status: 400,
      code: 'invalid_expand',
    });
    expect(await problem(`/v1/jobs?expand=job`)).toMatchObject({
      status: 400,
      code: 'invalid_expand',
    });
  });

  it('a cursor keeps the expansion of the first page', async () => {
    const p1 = await page(`/v1/overlays?project_id=${g.projectId}&expand=block_a.sheet&limit=2`);
    const p2 = await page(withCursor('/v1/overlays', p1._meta.next!));
    expect(p2.data.every((o) => o.block_a?.sheet?.id === g.sheetIds[0])).toBe(true);
  });

  it('loads in batches: the number of queries does not grow with the page size', async () => {
    // Count every statement execution that reads the expanded tables while one request runs (the
    // store's statements: core/store/db.ts).
    const proto = Object.getPrototypeOf(t.svc.db.prepare('SELECT 1')) as Record<
      string,
      (...a: unknown[]) => unknown
    >;
    const original = { all: proto.all!, get: proto.get! };
    let count = 0;
    const counting = (name: keyof typeof original) =>
      function (this: { sql: string }, ...args: unknown[]) {
        if (/\bFROM\s+(blocks|sheets|drawings|jobs|files)\b/i.test(this.sql)) count++;
        return original[name].apply(this, args);
      };
    proto.all = counting('all');
    proto.get = counting('get');
    const measure = async (limit: number) => {
      count = 0;
      const p = await page(
        `/v1/overlays?project_id=${g.projectId}&limit=${limit}&expand=block_a.sheet.drawing,block_b.sheet.drawing,job`,
      );
      expect(p.data).toHaveLength(limit);
      expect(
        p.data.every((o) => o.block_b.sheet.drawing.id === g.drawingIds[1] && o.job.id === g.jobId),
      ).toBe(true);
      return count;
    };
    try {
      const small = await measure(2);
      const large = await measure(100);
      expect(small).toBeGreaterThan(0);
      expect(large).toBeLessThanOrEqual(small + 2);
      expect(large).toBeLessThanOrEqual(12);
    } finally {
      Object.assign(proto, original);
    }
  });
});

describe('GET /files (keyset over the stored files)', () => {
  const PDF = Buffer.from('%PDF-1.4\n%%EOF\n');
  const PNG = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.alloc(16),
  ]);

  async function upload(
    projectId: string,
    name: string,
    type: 'application/pdf' | 'image/png',
  ): Promise<string> {
    const created = await t.request('POST', '/v1/files', {
      body: { project_id: projectId, filename: name, content_type: type },
    });
    expect(created.status).toBe(201);
    const url = new URL(created.body.upload_url as string);
    const put = await t.request('PUT', url.pathname + url.search, {
      key: null,
      rawBody: type === 'application/pdf' ? PDF : PNG,
      headers: { 'content-type': type },
    });
    expect(put.status, put.text).toBe(200);
    return created.body.id as string;
  }

  it('pages stored files newest first with next/prev, filters by content_type, skips pending files', async () => {
    const projectId = (await t.request('POST', '/v1/projects', { body: { name: 'Files list' } }))
      .body.id as string;
    const uploaded: string[] = [];
    for (let i = 0; i < 5; i++)
      uploaded.push(await upload(projectId, `f${i}`, i % 2 ? 'image/png' : 'application/pdf'));
    const pending = await t.request('POST', '/v1/files', {
      body: { project_id: projectId, filename: 'pending.pdf', content_type: 'application/pdf' },
    });
    expect(pending.status).toBe(201);
    const newestFirst = [...uploaded].reverse();

    const seen: string[] = [];
    const pages: Page[] = [];
    let p = await page(`/v1/files?project_id=${projectId}&limit=2`);
    expect(p._meta).toMatchObject({ prev: null, limit: 2 });
    pages.push(p);
    seen.push(...ids(p));
    const late: string[] = [];
    while (p._meta.next) {
      late.push(await upload(projectId, 'late', 'application/pdf')); // created while paging
      p = await page(withCursor('/v1/files', p._meta.next));
      expect(p._meta.prev).not.toBeNull();
      pages.push(p);
      seen.push(...ids(p));
    }
    expect(seen).toEqual(newestFirst);
    expect(seen).not.toContain(pending.body.id);
    for (const l of late) expect(seen).not.toContain(l);
    // Back from the last page: the same pages, the first with prev null.
    let b = p;
    for (let i = pages.length - 2; i >= 0; i--) {
      b = await page(withCursor('/v1/files', b._meta.prev!));
      expect(ids(b)).toEqual(ids(pages[i]!));
    }
    // Above the original first page: the files uploaded while paging, then the real first page.
    const above: string[] = [];
    while (b._meta.prev) {
      b = await page(withCursor('/v1/files', b._meta.prev));
      above.unshift(...ids(b));
    }
    expect(b._meta.prev).toBeNull();
    expect(above).toEqual([...late].reverse());

    const pngs = await page(`/v1/files?project_id=${projectId}&content_type=image/png&limit=1`);
    expect(pngs.data.every((f) => f.content_type === 'image/png')).toBe(true);
    const next = await page(withCursor('/v1/files', pngs._meta.next!));
    const pngIds = [...ids(pngs), ...ids(next)];
    // With a content_type filter the route cannot tell, without reading further, that no more
    // matches follow: the walk may end with an empty page whose next is null.
    let tail = next;
    while (tail._meta.next) {
      tail = await page(withCursor('/v1/files', tail._meta.next));
      pngIds.push(...ids(tail));
    }
    expect(pngIds).toEqual([uploaded[3], uploaded[1]]);
    expect(
      await problem('/v1/files?project_id=' + projectId + '&content_type=text/plain'),
    ).toMatchObject({ status: 400, code: 'invalid_parameter' });
    expect(
      await problem(withCursor('/v1/files', pngs._meta.next!, '&content_type=application/pdf')),
    ).toMatchObject({ status: 400, code: 'invalid_cursor' });
    expect(await problem(withCursor('/v1/projects', pngs._meta.next!))).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
    });
    const [body, sig] = pngs._meta.next!.split('.') as [string, string];
    expect(
      await problem(
        withCursor(
          '/v1/files',
          `${body.slice(0, 5)}${body[5] === 'A' ? 'B' : 'A'}${body.slice(6)}.${sig}`,
        ),
      ),
    ).toMatchObject({ status: 400, code: 'invalid_cursor' });
    // A cursor of the object-store listing GET /files once paged (a continuation token, no row):
    // refused with a way out, never read as a position.
    const codec = new CursorCodec(await loadOrCreateSecret(t.dataDir, 'cursor'));
    const org = (
      (await t.svc.db
        .prepare('SELECT organization_id FROM projects WHERE id = ?')
        .get(projectId)) as {
        organization_id: string;
      }
    ).organization_id;
    const legacy = codec.encode({
      e: '/v1/files',
      o: org,
      f: { project_id: projectId },
      l: 2,
      k: ['', ''],
      s: 'eyJ2IjoxfQ',
      d: 'a',
    } as Parameters<CursorCodec['encode']>[0]);
    expect(await problem(withCursor('/v1/files', legacy))).toMatchObject({
      status: 400,
      code: 'invalid_cursor',
      detail:
        'The cursor was issued by an older version of this list; start again from the first page.',
    });
    const clamped = await page(`/v1/files?project_id=${projectId}&limit=500`);
    expect(clamped._meta.limit).toBe(100);
    expect(await problem(`/v1/files?project_id=${projectId}&limit=0`)).toMatchObject({
      status: 400,
      code: 'invalid_parameter',
    });
  });
});
