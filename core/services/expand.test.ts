import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../store/db';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { seedGraph, type SeededGraph } from '../test/seed';
import { fetchPage, getRow } from '../store/list-query';
import {
  parseExpand,
  serializeWithExpansion,
  serializeWithExpansionJson,
  type JsonCache,
} from './expand';
import { RESOURCES, type ResourceKind, type Row } from './resources';

// The text path of the expansion engine (what list routes send) must equal JSON.stringify of the
// object path byte for byte, for every resource and every expand path up to 3 levels.

let dir: string;
let db: Db;
let org: string;
let g: SeededGraph;
let other: SeededGraph;
const ctx = {
  signedUrl: (key: string | null | undefined) => (key ? `https://h/b/${key}?sig=1` : null),
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'blueline-expand-'));
  db = openDatabase(join(dir, 'db.sqlite'));
  org = (await ensureOrganization(db, 'A')).id;
  const otherOrg = (await ensureOrganization(db, 'B')).id;
  g = await seedGraph(db, org, { overlays: 9 });
  other = await seedGraph(db, otherOrg, { overlays: 1 });
  // Values JSON must escape, nested JSON columns with odd spacing, a float that is no short decimal,
  // object keys that sign URLs, a null reference and a reference into another organization.
  await db
    .prepare(
      `UPDATE sheets SET title = ?, revision = ?, image_key = 'k/s.png', thumbnail_key = 'k/t.png' WHERE id = ?`,
    )
    .run('Plan \u2028 "quoted"\n\ttab \u0001 \ud83d\ude00 \ud800', 'R\u00e9v \\ B', g.sheetIds[0]);
  await db
    .prepare(
      `UPDATE overlays SET transform = '[ 1, 0, 0.5 ,0, 1, 1e-7 ]', stats = '{"added_px": 12}', score = 0.1 + 0.2,
       images = '{"combined":"k/c.png","addition":"k/a.png"}' WHERE id = ?`,
    )
    .run(g.overlayIds[1]);
  await db.prepare(`UPDATE overlays SET job_id = NULL WHERE id = ?`).run(g.overlayIds[2]);
  await db.prepare(`UPDATE overlays SET job_id = ? WHERE id = ?`).run(other.jobId, g.overlayIds[3]);
  await db
    .prepare(`UPDATE jobs SET result = '{"a": [1, {"b": null}]}', parent_id = ? WHERE id = ?`)
    .run(g.jobId, g.jobId);
});

afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every expand path of `kind` up to 3 levels, one at a time and all together. */
function expandPaths(kind: ResourceKind): string[] {
  const paths: string[] = [];
  const walk = (k: ResourceKind, prefix: string, depth: number) => {
    if (depth === 3) return;
    for (const [field, rel] of Object.entries(RESOURCES[k].relations)) {
      const p = prefix ? `${prefix}.${field}` : field;
      paths.push(p);
      walk(rel.kind, p, depth + 1);
    }
  };
  walk(kind, '', 0);
  return paths.length ? ['', ...paths, paths.join(',')] : [''];
}

async function rowsOf(kind: ResourceKind): Promise<Row[]> {
  return (
    await fetchPage<Row>(db, {
      table: RESOURCES[kind].table,
      organizationId: org,
      conditions: [],
      limit: 100,
      direction: 'after',
      key: null,
    })
  ).rows;
}

describe('serializeWithExpansionJson', () => {
  it('equals JSON.stringify of serializeWithExpansion for every resource and expand path', async () => {
    let compared = 0;
    for (const kind of Object.keys(RESOURCES) as ResourceKind[]) {
      const rows = await rowsOf(kind);
      for (const path of expandPaths(kind)) {
        const tree = parseExpand(kind, path || undefined);
        const objects = await serializeWithExpansion(db, org, kind, rows, tree, ctx);
        const texts = await serializeWithExpansionJson(db, org, kind, rows, tree, ctx);
        expect(texts, `${kind} expand=${path}`).toEqual(objects.map((o) => JSON.stringify(o)));
        compared += texts.length;
      }
    }
    expect(compared).toBeGreaterThan(200);
  });

  it('expands a missing or foreign reference to null and keeps the _id field', async () => {
    const rows: Row[] = [];
    for (const id of [g.overlayIds[2], g.overlayIds[3]])
      rows.push((await getRow<Row>(db, 'overlays', org, id!))!);
    const [nullJob, foreignJob] = (
      await serializeWithExpansionJson(
        db,
        org,
        'overlay',
        rows,
        parseExpand('overlay', 'job,block_a.sheet'),
        ctx,
      )
    ).map((t) => JSON.parse(t) as Record<string, unknown>);
    expect(nullJob).toMatchObject({ job_id: null, job: null });
    expect(foreignJob).toMatchObject({ job_id: other.jobId, job: null });
    expect((foreignJob!.block_a as { sheet: { id: string } }).sheet.id).toBe(g.sheetIds[0]);
  });

  it('takes a record already serialized on the page from the cache instead of loading it again', async () => {
    const rows = await rowsOf('overlay');
    const cache: JsonCache = new Map([
      ['drawing:{}', new Map([[g.drawingIds[0], '{"cached":true}']])],
    ]);
    const items = (
      await serializeWithExpansionJson(
        db,
        org,
        'overlay',
        rows,
        parseExpand('overlay', 'block_a.sheet.drawing,block_b.sheet.drawing'),
        ctx,
        cache,
      )
    ).map((t) => JSON.parse(t) as { block_a: any; block_b: any });
    expect(items.length).toBe(rows.length);
    // Side A's drawing came from the cache; side B's was loaded, serialized and added to it.
    expect(items.every((o) => o.block_a.sheet.drawing.cached === true)).toBe(true);
    expect(items.every((o) => o.block_b.sheet.drawing.id === g.drawingIds[1])).toBe(true);
    expect(cache.get('drawing:{}')!.get(g.drawingIds[1])).toBe(
      JSON.stringify(items[0]!.block_b.sheet.drawing),
    );
    // One sheet per side, each serialized once with its drawing spliced in.
    expect([...cache.get('sheet:{"drawing":{}}')!.keys()].sort()).toEqual([...g.sheetIds].sort());
  });
});
