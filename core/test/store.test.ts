import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monotonicNow } from '../domain/clock';
import { JobsRepository } from '../jobs/jobs.repository';
import { openTestStore, STORES, type TestStore } from './backends';
import { seedGraph, type SeededGraph } from './seed';
import { getRows } from '../store/list-query';
import { MIGRATIONS } from '../store/migrations/index';
import { PG_MIGRATIONS } from '../store/migrations/postgres';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { insertProject } from '../store/repositories/projects.repository';

// The store's contract on every engine it runs on (core/test/backends.ts: SQLite always,
// PostgreSQL with BLUELINE_TEST_DATABASE): transactions, savepoints, placeholders, the schema's
// version, and the per-dialect statements (batch loads, the job claim).

it('PostgreSQL migrations are numbered and named exactly as the SQLite ones', () => {
  expect(PG_MIGRATIONS.map((m) => [m.version, m.name])).toEqual(
    MIGRATIONS.map((m) => [m.version, m.name]),
  );
});

describe.each(STORES)('store on %s', (kind) => {
  let s: TestStore;
  let org: string;
  let g: SeededGraph;

  beforeAll(async () => {
    s = await openTestStore(kind);
    org = (await ensureOrganization(s.db, 'Store org')).id;
    g = await seedGraph(s.db, org, { overlays: 5 });
  });
  afterAll(async () => await s?.cleanup());

  const count = async (table: string) =>
    ((await s.db.prepare(`SELECT count(*) AS n FROM ${table}`).get()) as { n: number }).n;

  it('records every migration it applied', async () => {
    const rows = (await s.db
      .prepare('SELECT version, name FROM schema_migrations ORDER BY version')
      .all()) as { version: number; name: string }[];
    expect(rows.map((r) => [Number(r.version), r.name])).toEqual(
      MIGRATIONS.map((m) => [m.version, m.name]),
    );
  });

  it('commits a transaction that resolves and rolls back one that throws', async () => {
    const before = await count('projects');
    const p = await s.db.transaction(async (tx) => await insertProject(tx, org, 'kept', null));
    await expect(
      s.db.transaction(async (tx) => {
        await insertProject(tx, org, 'dropped', null);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await count('projects')).toBe(before + 1);
    expect(p).toMatchObject({ name: 'kept', organization_id: org });
  });

  it('a nested transaction that throws rolls back only its own writes', async () => {
    const before = await count('projects');
    await s.db.transaction(async (tx) => {
      await insertProject(tx, org, 'outer', null);
      await expect(
        tx.transaction(async (inner) => {
          await insertProject(inner, org, 'inner', null);
          throw new Error('inner');
        }),
      ).rejects.toThrow('inner');
    });
    expect(await count('projects')).toBe(before + 1);
  });

  it('a query outside a transaction sees its writes only after the commit', async () => {
    const before = await count('projects');
    let inserted!: () => void;
    const written = new Promise<void>((r) => (inserted = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = s.db.transaction(async (t) => {
      await insertProject(t, org, 'pending', null);
      inserted();
      await gate;
    });
    await written;
    const seenDuring = count('projects');
    if (kind === 'postgres') {
      // Another connection: it reads the last committed state at once.
      expect(await seenDuring).toBe(before);
      release();
    } else {
      // SQLite's one connection belongs to the transaction: the read waits for the commit.
      release();
      expect(await seenDuring).toBe(before + 1);
    }
    await tx;
    expect(await count('projects')).toBe(before + 1);
  });

  it('binds ? and @name placeholders, and reads integers and text back as SQLite does', async () => {
    const row = (await s.db
      .prepare('SELECT count(*) AS n, min(name) AS first FROM projects WHERE organization_id = ?')
      .get(org)) as { n: number; first: string };
    expect(typeof row.n).toBe('number');
    const named = (await s.db
      .prepare('SELECT id FROM projects WHERE organization_id = @org AND id = @id')
      .get({ org, id: g.projectId })) as { id: string };
    expect(named.id).toBe(g.projectId);
  });

  it('loads many rows by id in one query, and none of another organization', async () => {
    const other = (await ensureOrganization(s.db, 'Other org')).id;
    const og = await seedGraph(s.db, other, { overlays: 2 });
    const rows = await getRows<{ id: string }>(s.db, 'overlays', org, [
      ...g.overlayIds,
      ...og.overlayIds,
      'ovl_nope',
    ]);
    expect([...rows.keys()].sort()).toEqual([...g.overlayIds].sort());
  });

  it('claims the oldest Queued job of a handled type once, however many claim at once', async () => {
    const repo = new JobsRepository(s.db);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const { row } = await repo.insert({
        organization_id: org,
        project_id: g.projectId,
        type: i % 2 ? 'claim-b' : 'claim-a',
        target_type: 'drawing',
        target_id: `drw_${i}`,
      });
      ids.push(row.id);
    }
    const claims = await Promise.all(
      Array.from({ length: 8 }, () => repo.claimNext(['claim-a', 'claim-b'], { boot: null })),
    );
    const got = claims.filter((c) => c !== undefined).map((c) => c.id);
    expect(got.sort()).toEqual([...ids].sort());
    expect(new Set(got).size).toBe(6);
    expect(await repo.claimNext(['claim-a'])).toBeUndefined();
    const done = await repo.complete(ids[0]!, { ok: true });
    expect(done).toMatchObject({ status: 'Completed', result: '{"ok":true}' });
    expect(done!.finished_at! >= monotonicNow().slice(0, 4)).toBe(true);
  });
});
