import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../store/db';
import { newId } from '../domain/ids';
import { searchProject, parseQuery } from '../services/search.service';
import { insertOverlay, replaceChanges } from '../store/repositories/overlays.repository';
import {
  checkSearchIndexes,
  searchBlocks,
  searchChanges,
  searchSheets,
  searchSymbols,
  searchText,
  type SearchScope,
} from '../store/repositories/search.repository';
import { openTestStore, PG_URL, type StoreKind, type TestStore } from './backends';
import { uploadDrawing, waitForJob } from './flows';
import { startTestService, type TestService } from './harness';

// Search gives the same results on SQLite (FTS5) and PostgreSQL (tsvector/tsquery, migration 14)
// for the fixture sets. The sets go through the real pipeline once, on whichever store the test
// services run on (SQLite by default; PostgreSQL in the team lane, BLUELINE_TEST_DATABASE); their
// searchable rows are then copied into a store of the other engine, and every query below runs on
// both: each source's whole match set (ranking differs between bm25 and ts_rank, so sets are
// compared, never scores or order) and, where the query's hits fit in one page, the service's
// answer as a set. Without PostgreSQL only the service's store is checked (the expectations on
// sheet numbers below still hold and still run).

const LONG = 600_000;

const SETS: [string, string][] = [
  ['20150129_A-101_first-floor.pdf', 'A-101'],
  ['20150129_S-101_structural-basement-second-floor-framing.pdf', 'S-101'],
  ['20190321_A600_schedules.pdf', 'A600'],
  ['20190414_foundation-details_3-sheets.pdf', 'Foundation'],
];

const QUERIES = [
  // Sheet numbers: whole, the digits alone, with or without the separator, prefixes.
  '101',
  'A-101',
  'A101',
  'S-101',
  'a-10',
  'ASK-03',
  'ASK03',
  'A600',
  '600',
  'S-1',
  // Title and body words, phrases, prefixes, accents, case.
  'first floor',
  'FLOOR PLAN',
  'floo',
  '"floor plan"',
  'anchor bolt',
  'door schedule',
  'window',
  'wind',
  'framing',
  'basement',
  'foundation',
  'footing',
  'concrete',
  'détail',
  'Café',
  'steel column',
  'hold-down',
  'W8X31',
  'note removed',
  // Punctuation and operator characters are only separators.
  'NEAR(door',
  '"door',
  'door OR',
  '(window)',
  "door'; DROP TABLE sheets; --",
  'x+601',
  '1/2',
  // Broad: one or two characters.
  '1',
  'in',
  'x',
];

const TABLES = [
  'organizations',
  'projects',
  'files',
  'drawings',
  'sheets',
  'blocks',
  'overlays',
  'changes',
  'symbols',
];

let t: TestService;
let other: TestStore | undefined;
let projectId: string;
let org: string;
const sheets = new Map<string, string>();

/** The other engine's store, filled with the service's searchable rows. */
async function copyInto(from: Db, to: Db): Promise<void> {
  const generated = new Set(['search_tsv', 'tsv']);
  const copy = async (table: string, rows: Record<string, unknown>[]) => {
    for (const row of rows) {
      const cols = Object.keys(row).filter((c) => !generated.has(c));
      await to
        .prepare(
          `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
        )
        .run(...cols.map((c) => row[c]));
    }
  };
  await to.transaction(async (tx) => {
    to = tx;
    for (const table of TABLES)
      await copy(
        table,
        (await from.prepare(`SELECT * FROM ${table} ORDER BY created_at, id`).all()) as Record<
          string,
          unknown
        >[],
      );
    const runs =
      from.dialect === 'sqlite'
        ? 'SELECT rowid, * FROM search_index'
        : 'SELECT * FROM search_index';
    await copy(
      'search_index',
      (await from.prepare(`${runs} ORDER BY rowid`).all()) as Record<string, unknown>[],
    );
  });
}

/** Change regions and a symbol, written as the analyze and parse jobs write them. */
async function addChangesAndSymbols(db: Db) {
  const block = (await db
    .prepare("SELECT id FROM blocks WHERE sheet_id = ? AND type = 'Sheet'")
    .get(sheets.get('A-101'))) as { id: string };
  const overlay = await insertOverlay(db, {
    organizationId: org,
    projectId,
    jobId: newId('job'),
    blockAId: block.id,
    blockBId: block.id,
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
    {
      bbox: { x: 1, y: 1, width: 5, height: 5 },
      kind: 'removed',
      category: 'text',
      areaPx: 25,
      confidence: 0.8,
      textBefore: 'OLD NOTE <FIRE> x+601',
      textAfter: null,
      description: 'Note removed at Café détail',
    },
  ]);
  const now = new Date().toISOString();
  await db
    .prepare(
      `INSERT INTO symbols (id, organization_id, project_id, job_id, sheet_id, block_id, label, bbox, confidence, rotation, created_at, updated_at)
       VALUES (?, ?, ?, NULL, ?, NULL, 'Hold-down anchor', '{"x":1,"y":2,"width":3,"height":4}', 0.91, 90, ?, ?)`,
    )
    .run(newId('symbol'), org, projectId, sheets.get('S-101'), now, now);
}

beforeAll(async () => {
  t = await startTestService();
  const p = await t.request('POST', '/v1/projects', { body: { name: 'Search parity' } });
  projectId = p.body.id;
  const drawings = [];
  for (const [file, name] of SETS) drawings.push(await uploadDrawing(t, projectId, file, name));
  for (const d of drawings) {
    const job = await waitForJob(t, d.job_id);
    expect(job.status, JSON.stringify(job.error)).toBe('Completed');
  }
  const list = await t.request('GET', `/v1/sheets?project_id=${projectId}&limit=100`);
  for (const s of list.body.data) sheets.set(s.sheet_number, s.id);
  org = (
    (await t.svc.db
      .prepare('SELECT organization_id FROM projects WHERE id = ?')
      .get(projectId)) as {
      organization_id: string;
    }
  ).organization_id;
  await addChangesAndSymbols(t.svc.db);
  if (PG_URL) {
    const kind: StoreKind = t.svc.db.dialect === 'sqlite' ? 'postgres' : 'sqlite';
    other = await openTestStore(kind);
    await copyInto(t.svc.db, other.db);
  }
}, LONG);

afterAll(async () => {
  await other?.cleanup();
  await t?.stop();
});

const scope = (): SearchScope => ({
  organizationId: org,
  projectId,
  drawingId: null,
  discipline: null,
});

/** Every record each source matches, as sorted "source:id" strings (no limit in effect). */
async function matchSets(db: Db, query: string, mode: 'all' | 'any'): Promise<string[]> {
  const parsed = parseQuery(query)!;
  const wide = mode === 'all' ? parsed.all : parsed.any;
  const narrow = mode === 'all' ? parsed.allNarrow : parsed.anyNarrow;
  const n = 1_000_000;
  const out = [
    ...(await searchSheets(db, scope(), wide, n)).map((r) => `sheet:${r.id}`),
    ...(await searchBlocks(db, scope(), narrow, n)).map((r) => `block:${r.id}`),
    ...(await searchChanges(db, scope(), narrow, n)).map((r) => `change:${r.id}`),
    ...(await searchSymbols(db, scope(), narrow, n)).map((r) => `symbol:${r.id}`),
    ...(await searchText(db, scope(), narrow, n)).map((r) => `text:${r.rid}:${r.text}`),
  ];
  return out.sort();
}

const hitKey = (h: { type: string; id: string; snippet: string; bbox: unknown }) =>
  `${h.type}:${h.id}:${h.snippet}:${JSON.stringify(h.bbox)}`;

describe('search parity between SQLite FTS5 and PostgreSQL', () => {
  it('finds sheet numbers by their digits and in every written form', async () => {
    const stores = [t.svc.db, ...(other ? [other.db] : [])];
    for (const db of stores) {
      const numbers = async (query: string) =>
        (await searchProject(db, org, projectId, { query, types: ['sheet'], limit: 100 })).hits
          .map((h) => h.sheet_number)
          .sort();
      expect(await numbers('101'), db.dialect).toEqual(['A-101', 'S-101']);
      expect(await numbers('A-101'), db.dialect).toEqual(['A-101']);
      expect(await numbers('A101'), db.dialect).toEqual(['A-101']);
      expect(await numbers('ASK03'), db.dialect).toEqual(['ASK-03']);
      const first = (await searchProject(db, org, projectId, { query: 'A-101' })).hits[0]!;
      expect(first, db.dialect).toMatchObject({ type: 'sheet', sheet_number: 'A-101' });
      expect(first.score, db.dialect).toBeGreaterThanOrEqual(6);
    }
  });

  it.runIf(PG_URL)('every source matches the same records on both engines', async () => {
    for (const query of QUERIES) {
      for (const mode of ['all', 'any'] as const) {
        const mine = await matchSets(t.svc.db, query, mode);
        const theirs = await matchSets(other!.db, query, mode);
        expect(theirs, `${query} (${mode})`).toEqual(mine);
      }
    }
    // The list is not vacuous: most queries match something, and the broad ones many records.
    const sizes = await Promise.all(
      QUERIES.map(async (q) => (await matchSets(t.svc.db, q, 'all')).length),
    );
    expect(sizes.filter((n) => n > 0).length).toBeGreaterThan(QUERIES.length * 0.8);
    expect(Math.max(...sizes)).toBeGreaterThan(100);
  });

  it.runIf(PG_URL)('the service answers the same hits on both engines', async () => {
    let compared = 0;
    for (const query of QUERIES) {
      const a = (await searchProject(t.svc.db, org, projectId, { query, limit: 100 })).hits;
      const b = (await searchProject(other!.db, org, projectId, { query, limit: 100 })).hits;
      // A page cut by the limit may cut two rankings at different records; compare whole answers.
      if (a.length >= 100 || b.length >= 100) continue;
      expect(b.map(hitKey).sort(), query).toEqual(a.map(hitKey).sort());
      compared++;
    }
    expect(compared).toBeGreaterThan(QUERIES.length * 0.8);
  });

  it('indexes agree with their records after writes and deletes', async () => {
    for (const db of [t.svc.db, ...(other ? [other.db] : [])]) {
      await expect(checkSearchIndexes(db)).resolves.toBeUndefined();
    }
  });
});
