import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertOverlay, replaceChanges } from '../store/repositories/overlays.repository';
import { checkSearchIndexes } from '../store/repositories/search.repository';
import { newId } from '../domain/ids';
import { uploadDrawing, waitForJob } from './flows';
import { startTestService, type TestService } from './harness';

// POST /projects/{id}/search over HTTPS on real fixtures processed through the real pipeline
// (contract §7): sheet numbers and titles, block titles, text runs with boxes, change
// descriptions and symbol labels; filters; safe query parsing; isolation between organizations.

const LONG = 600_000;

interface Hit {
  type: string;
  id: string;
  sheet_id: string;
  sheet_number: string | null;
  drawing_id: string;
  snippet: string;
  highlights: { start: number; end: number }[];
  bbox: { x: number; y: number; width: number; height: number } | null;
  score: number;
  overlay_id?: string;
}

let t: TestService;
let projectId: string;
let beam: { id: string; job_id: string };
let foundation: { id: string; job_id: string };
const sheets = new Map<
  string,
  {
    id: string;
    sheet_number: string;
    title: string;
    width: number;
    height: number;
    uri: string;
    drawing_id: string;
  }
>();

const search = (body: unknown, key?: string, project = projectId) =>
  t.request('POST', `/v1/projects/${project}/search`, { body, ...(key ? { key } : {}) });
async function hits(body: Record<string, unknown>): Promise<Hit[]> {
  const r = await search(body);
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

beforeAll(async () => {
  t = await startTestService();
  const p = await t.request('POST', '/v1/projects', { body: { name: 'Search' } });
  projectId = p.body.id;
  beam = await uploadDrawing(
    t,
    projectId,
    '20190601_beam-proposal_5-sheets.pdf',
    'Beam proposal 06-01',
  );
  foundation = await uploadDrawing(
    t,
    projectId,
    '20190414_foundation-details_3-sheets.pdf',
    'Foundation details',
  );
  expect((await waitForJob(t, beam.job_id)).status).toBe('Completed');
  expect((await waitForJob(t, foundation.job_id)).status).toBe('Completed');
  const list = await t.request('GET', `/v1/sheets?project_id=${projectId}&limit=100`);
  for (const s of list.body.data) sheets.set(s.sheet_number, s);
  expect([...sheets.keys()].sort()).toEqual([
    'ASK-02',
    'ASK-03',
    'ASK-04',
    'S101',
    'S102',
    'S103',
    'S150',
    'S300',
  ]);
}, LONG);

afterAll(async () => {
  await t?.stop();
});

describe('search', () => {
  it('finds a sheet by its number, exact and as a prefix, with or without the separator', async () => {
    const exact = await hits({ query: 'S102' });
    expect(exact[0]).toMatchObject({
      type: 'sheet',
      id: sheets.get('S102')!.id,
      sheet_id: sheets.get('S102')!.id,
      sheet_number: 'S102',
      drawing_id: beam.id,
      bbox: null,
    });
    expect(exact[0]!.score).toBeGreaterThanOrEqual(6);
    expect(
      exact[0]!.snippet.slice(exact[0]!.highlights[0]!.start, exact[0]!.highlights[0]!.end),
    ).toBe('S102');

    const prefix = await hits({ query: 'S10', types: ['sheet'] });
    expect(prefix.map((h) => h.sheet_number).sort()).toEqual(['S101', 'S102', 'S103']);

    // "ASK-0" is the prefix of ASK-02…04; "ASK03" (no separator) finds "ASK-03".
    const ask = await hits({ query: 'ASK-0', types: ['sheet'] });
    expect(ask.map((h) => h.sheet_number).sort()).toEqual(['ASK-02', 'ASK-03', 'ASK-04']);
    const joined = await hits({ query: 'ASK03', types: ['sheet'] });
    expect(joined.map((h) => h.sheet_number)).toEqual(['ASK-03']);
    const response = await search({ query: 'S10' });
    expect(response.body._meta).toEqual({ next: null, prev: null, limit: 20 });
  });

  it('finds a sheet by title words and ranks title hits above body text', async () => {
    const res = await hits({ query: 'anchor bolt' });
    expect(res[0]).toMatchObject({ type: 'sheet', sheet_number: 'ASK-03' });
    expect(res[0]!.snippet).toContain('ANCHOR BOLT PLACEMENT');
    const firstText = res.findIndex((h) => h.type === 'text');
    const lastTitle = res.map((h) => h.type).lastIndexOf('sheet');
    expect(firstText).toBeGreaterThan(lastTitle);
    // Word order and case do not matter; the last word is a prefix.
    const roof = await hits({ query: 'roof fram' });
    expect(roof[0]).toMatchObject({ type: 'sheet', sheet_number: 'S103' });
    expect(roof.filter((h) => h.type === 'block').every((h) => /ROOF/i.test(h.snippet))).toBe(true);
  });

  it('finds a text run with a box inside its sheet, where the word is printed', async () => {
    const res = await hits({ query: 'cantilever' });
    expect(res.length).toBeGreaterThanOrEqual(1);
    const s102 = sheets.get('S102')!;
    for (const h of res) {
      expect(h).toMatchObject({
        type: 'text',
        sheet_id: s102.id,
        id: s102.id,
        sheet_number: 'S102',
        drawing_id: beam.id,
      });
      expect(h.snippet.slice(h.highlights[0]!.start, h.highlights[0]!.end)).toBe('CANTILEVER');
      const b = h.bbox!;
      expect(b.x).toBeGreaterThanOrEqual(0);
      expect(b.y).toBeGreaterThanOrEqual(0);
      expect(b.x + b.width).toBeLessThanOrEqual(s102.width);
      expect(b.y + b.height).toBeLessThanOrEqual(s102.height);
      expect(b.width).toBeGreaterThan(b.height); // one line of horizontal text
    }
    // The box is in sheet pixels: the sheet image has ink there (the printed word), and the same
    // box shifted far away does not hold the same ink.
    const raw = await fetchBytes(s102.uri);
    const b = res[0]!.bbox!;
    const region = await sharp(raw)
      .extract({
        left: Math.round(b.x),
        top: Math.round(b.y),
        width: Math.round(b.width),
        height: Math.round(b.height),
      })
      .greyscale()
      .raw()
      .toBuffer();
    const darkIn = region.filter((v) => v < 128).length / region.length;
    expect(darkIn).toBeGreaterThan(0.02);
    // The same box moved into the sheet's empty top-left margin holds (almost) no ink.
    const margin = await sharp(raw)
      .extract({ left: 5, top: 5, width: Math.round(b.width), height: Math.round(b.height) })
      .greyscale()
      .raw()
      .toBuffer();
    expect(margin.filter((v) => v < 128).length / margin.length).toBeLessThan(darkIn / 4);
  });

  it('filters by drawing, discipline and type, and honours limit', async () => {
    const all = await hits({ query: 'ASK', limit: 100 });
    expect(new Set(all.map((h) => h.drawing_id))).toEqual(new Set([beam.id, foundation.id]));
    const onlyFoundation = await hits({ query: 'ASK', drawing_id: foundation.id, limit: 100 });
    expect(onlyFoundation.length).toBeGreaterThan(0);
    expect(onlyFoundation.every((h) => h.drawing_id === foundation.id)).toBe(true);
    // The beam sheets are structural, the foundation sketches architectural (read from the title blocks).
    const structural = await hits({ query: 'ASK', discipline: 'structural', limit: 100 });
    expect(structural.length).toBeGreaterThan(0);
    expect(structural.every((h) => h.drawing_id === beam.id)).toBe(true);
    expect(await hits({ query: 'S102', discipline: 'electrical' })).toEqual([]);
    const blocks = await hits({ query: 'framing', types: ['block'], limit: 100 });
    expect(blocks.length).toBeGreaterThan(0);
    expect(
      blocks.every((h) => h.type === 'block' && h.bbox !== null && /framing/i.test(h.snippet)),
    ).toBe(true);
    const limited = await search({ query: 'framing', limit: 2 });
    expect(limited.body.data).toHaveLength(2);
    expect(limited.body._meta).toEqual({ next: null, prev: null, limit: 2 });
  });

  it('never passes user text to FTS5 syntax', async () => {
    for (const query of [
      '"cantilever',
      'NEAR(cantilever',
      'text:cantilever',
      'cantilever*',
      'NOT cantilever',
      'cantilever OR',
      '^cantilever',
      '(cantilever)',
      "cantilever'; DROP TABLE sheets; --",
    ]) {
      const r = await search({ query });
      expect(r.status, `${query}: ${r.text}`).toBe(200);
      expect(r.body.data.length, query).toBeGreaterThan(0);
      expect(
        r.body.data.some((h: Hit) => h.sheet_number === 'S102'),
        query,
      ).toBe(true);
    }
    expect((await search({ query: 'AND OR NOT' })).status).toBe(200);
  });

  it('answers bad requests with 400 validation_error', async () => {
    for (const body of [
      { query: '' },
      { query: '   ' },
      { query: '*"()' },
      {},
      { query: 'x', types: [] },
      { query: 'x', types: ['page'] },
      { query: 'x', limit: 0 },
      { query: 'x', limit: 101 },
      { query: 'x', discipline: 'astrology' },
      { query: 'x', drawing_id: sheets.get('S101')!.id },
      { query: 'x', extra: true },
    ]) {
      const r = await search(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code, JSON.stringify(body)).toBe('validation_error');
      expect(r.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    const empty = await search({ query: '  ' });
    expect(empty.body.errors[0].field).toBe('/query');
  });

  it('shows another organization nothing: its project is 404, and so is its drawing as a filter', async () => {
    const other = await t.newOrgKey('Search other org');
    const r = await search({ query: 'S102' }, other);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not_found');
    const own = await t.request('POST', '/v1/projects', { body: { name: 'Theirs' }, key: other });
    const viaFilter = await search({ query: 'S102', drawing_id: beam.id }, other, own.body.id);
    expect(viaFilter.status).toBe(404);
    const nothing = await search({ query: 'S102' }, other, own.body.id);
    expect(nothing.status).toBe(200);
    expect(nothing.body.data).toEqual([]);
    expect((await search({ query: 'S102' }, undefined, 'prj_doesnotexist')).status).toBe(404);
  });

  it('follows corrections, change descriptions and symbol labels as they are written', async () => {
    const s103 = sheets.get('S103')!;
    const patched = await t.request('PATCH', `/v1/sheets/${s103.id}`, {
      body: { title: 'Rafter layout' },
    });
    expect(patched.status).toBe(200);
    expect((await hits({ query: 'rafter', types: ['sheet'] })).map((h) => h.id)).toEqual([s103.id]);
    expect(
      (await hits({ query: 'roof framing', types: ['sheet'] })).map((h) => h.sheet_number),
    ).not.toContain('S103');

    // A change region and a detected symbol, written the way the analyze and parse jobs write them.
    const db = t.svc.db;
    const blocks = (
      await t.request('GET', `/v1/blocks?sheet_id=${sheets.get('S101')!.id}&limit=100`)
    ).body.data as { id: string; bbox: { x: number; y: number } }[];
    const blockA = blocks[0]!;
    const org = (
      (await db.prepare('SELECT organization_id FROM projects WHERE id = ?').get(projectId)) as {
        organization_id: string;
      }
    ).organization_id;
    const overlay = await insertOverlay(db, {
      organizationId: org,
      projectId,
      jobId: newId('job'),
      blockAId: blockA.id,
      blockBId: blockA.id,
      score: 0.97,
      width: 100,
      height: 100,
      transform: [1, 0, 0, 0, 1, 0],
      alignment: {},
      stats: {},
      images: {},
    });
    await replaceChanges(db, overlay, [
      {
        bbox: { x: 10, y: 20, width: 30, height: 40 },
        kind: 'added',
        category: 'geometry',
        areaPx: 1200,
        confidence: 0.9,
        textBefore: null,
        textAfter: 'W8X31',
        description: 'Steel column added at grid C-4',
      },
    ]);
    const ch = await hits({ query: 'steel column grid' });
    expect(ch[0]).toMatchObject({
      type: 'change',
      sheet_id: sheets.get('S101')!.id,
      overlay_id: overlay.id,
    });
    expect(ch[0]!.id).toMatch(/^chg_/);
    expect(ch[0]!.bbox).toEqual({
      x: blockA.bbox.x + 10,
      y: blockA.bbox.y + 20,
      width: 30,
      height: 40,
    });
    expect((await hits({ query: 'W8X31', types: ['change'] })).length).toBe(1);
    // Re-analysis replaces the regions: the old description leaves the index.
    await replaceChanges(db, overlay, [
      {
        bbox: { x: 1, y: 1, width: 5, height: 5 },
        kind: 'removed',
        category: 'text',
        areaPx: 25,
        confidence: 0.8,
        textBefore: 'OLD NOTE',
        textAfter: null,
        description: 'Note removed',
      },
    ]);
    expect(await hits({ query: 'steel column grid', types: ['change'] })).toEqual([]);
    expect((await hits({ query: 'note removed', types: ['change'] })).length).toBe(1);

    const symId = newId('symbol');
    const now = new Date().toISOString();
    await db
      .prepare(
        `INSERT INTO symbols (id, organization_id, project_id, job_id, sheet_id, block_id, label, bbox, confidence, rotation, created_at, updated_at)
       VALUES (?, ?, ?, NULL, ?, NULL, 'Hold-down anchor', ?, 0.91, 90, ?, ?)`,
      )
      .run(
        symId,
        org,
        projectId,
        sheets.get('S102')!.id,
        JSON.stringify({ x: 500, y: 600, width: 40, height: 40 }),
        now,
        now,
      );
    const sym = await hits({ query: 'hold-down', types: ['symbol'] });
    expect(sym).toEqual([
      expect.objectContaining({
        type: 'symbol',
        id: symId,
        sheet_number: 'S102',
        bbox: { x: 500, y: 600, width: 40, height: 40 },
      }),
    ]);

    // Deleting the drawing takes its sheets, blocks, overlays, changes and symbols out of search.
    expect((await t.request('DELETE', `/v1/drawings/${beam.id}`)).status).toBe(204);
    expect(await hits({ query: 'hold-down' })).toEqual([]);
    expect(await hits({ query: 'note removed' })).toEqual([]);
    expect(await hits({ query: 'S102' })).toEqual([]);
    // Every index still agrees with its records (FTS5's integrity check; on PostgreSQL, the
    // generated tsvectors against their rows' text).
    await expect(checkSearchIndexes(db)).resolves.toBeUndefined();
    expect((await hits({ query: 'ASK-03' }))[0]).toMatchObject({
      type: 'sheet',
      sheet_number: 'ASK-03',
    });
  });
});

async function fetchBytes(uri: string): Promise<Buffer> {
  const https = await import('node:https');
  return new Promise((resolveP, reject) => {
    https
      .get(uri, { agent: t.agent }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolveP(Buffer.concat(chunks)));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
