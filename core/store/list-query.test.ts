import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from './db';
import { ensureOrganization } from './repositories/organizations.repository';
import { seedGraph, type SeededGraph } from '../test/seed';
import { fetchPage, getRows } from './list-query';

let dir: string;
let db: Db;
let org: string;
let g: SeededGraph;
let other: SeededGraph;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'blueline-list-query-'));
  db = openDatabase(join(dir, 'db.sqlite'));
  org = (await ensureOrganization(db, 'A')).id;
  g = await seedGraph(db, org, { overlays: 700 });
  other = await seedGraph(db, (await ensureOrganization(db, 'B')).id, { overlays: 4 });
});

afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('getRows', () => {
  it('loads any number of ids of the organization in one query, and nothing of another organization', async () => {
    const ids = async (sql: string, ...params: unknown[]) =>
      ((await db.prepare(sql).all(...params)) as { id: string }[]).map((r) => r.id);
    const all = (await ids('SELECT id FROM overlays')).concat('ovl_nope');
    expect(all.length).toBeGreaterThan(500);
    const rows = await getRows<{ id: string; organization_id: string }>(db, 'overlays', org, [
      ...all,
      ...all,
    ]);
    const mine = await ids('SELECT id FROM overlays WHERE organization_id = ?', org);
    expect([...rows.keys()].sort()).toEqual([...mine].sort());
    expect(rows.has(other.overlayIds[0]!)).toBe(false);
    expect([...rows.values()].every((r) => r.organization_id === org)).toBe(true);
    expect((await getRows(db, 'blocks', org, [])).size).toBe(0);
  });

  it('reads only the given columns', async () => {
    const rows = await getRows<Record<string, unknown> & { id: string }>(
      db,
      'blocks',
      org,
      g.blockIds,
      ['id', 'bbox'],
    );
    expect(Object.keys(rows.get(g.blockIds[0]!)!)).toEqual(['id', 'bbox']);
  });

  it('seeks each id by primary key, not through the organization index', async () => {
    const plan = (
      (await db
        .prepare(
          `EXPLAIN QUERY PLAN SELECT id FROM blocks WHERE id IN (SELECT value FROM json_each(?)) AND +organization_id = ?`,
        )
        .all('[]', org)) as { detail: string }[]
    )
      .map((r) => r.detail)
      .join('; ');
    expect(plan).toMatch(
      /SEARCH blocks USING (COVERING )?INDEX sqlite_autoindex_blocks_1 \(id=\?\)/,
    );
    expect(plan).not.toContain('blocks_org_created');
  });
});

describe('fetchPage', () => {
  it('returns the same rows with a column list as with all columns, newest first', async () => {
    const q = {
      table: 'overlays',
      organizationId: org,
      conditions: [],
      limit: 50,
      direction: 'after' as const,
      key: null,
    };
    const all = await fetchPage<Record<string, unknown>>(db, q);
    const some = await fetchPage<Record<string, unknown>>(db, {
      ...q,
      columns: ['id', 'created_at', 'score'],
    });
    expect(all.more).toBe(true);
    expect(all.rows).toHaveLength(50);
    expect(some.rows).toEqual(
      all.rows.map((r) => ({ id: r.id, created_at: r.created_at, score: r.score })),
    );
    const direct = await db
      .prepare(
        'SELECT * FROM overlays WHERE organization_id = ? ORDER BY created_at DESC, id DESC LIMIT 50',
      )
      .all(org);
    expect(all.rows).toEqual(direct);
  });
});

describe('statement cache', () => {
  it('prepares each SQL text once per handle; all and get read the same rows', async () => {
    const sql = 'SELECT id FROM projects WHERE organization_id = ?';
    expect(db.prepare(sql)).toBe(db.prepare(sql));
    expect(await db.prepare(sql).all(org)).toEqual([{ id: g.projectId }]);
    expect(await db.prepare(sql).get(org)).toEqual({ id: g.projectId });
    expect(await db.prepare(sql).all('org_none')).toEqual([]);
  });
});
