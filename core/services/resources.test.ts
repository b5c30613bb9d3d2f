import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../store/db';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { seedGraph } from '../test/seed';
import { RESOURCES, type ResourceKind, type Row } from './resources';

// Lists and expansions read only `columns` of each resource: toApi must never read another one
// (it would silently become undefined/null on list pages while single reads, which load whole rows,
// still show it).

let dir: string;
let db: Db;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'blueline-resources-'));
  db = openDatabase(join(dir, 'db.sqlite'));
  const org = (await ensureOrganization(db, 'A')).id;
  const g = await seedGraph(db, org, { overlays: 2 });
  const t = '2026-01-01T00:00:00.000Z';
  await db
    .prepare(
      `INSERT INTO credit_ledger (id, organization_id, amount, reason, job_id, created_at) VALUES ('led_1', ?, -3, 'compare', ?, ?)`,
    )
    .run(org, g.jobId, t);
  await db
    .prepare(
      `INSERT INTO webhooks (id, organization_id, url, events, secret, created_at, updated_at) VALUES ('whk_1', ?, 'https://x', '["job.completed"]', 's', ?, ?)`,
    )
    .run(org, t, t);
  await db
    .prepare(
      `INSERT INTO webhook_events (id, organization_id, type, payload, created_at) VALUES ('evt_1', ?, 'job.completed', '{}', ?)`,
    )
    .run(org, t);
  await db
    .prepare(
      `INSERT INTO webhook_deliveries (id, organization_id, webhook_id, event_id, type, status, attempts, last_status_code, last_error, created_at, updated_at)
     VALUES ('whd_1', ?, 'whk_1', 'evt_1', 'job.completed', 'failed', 2, 500, 'boom', ?, ?)`,
    )
    .run(org, t, t);
  // A file without a stored size reads declared_size; a pending one no object key.
  await db
    .prepare(
      `INSERT INTO files (id, organization_id, project_id, filename, content_type, declared_size, status, object_key, created_at, updated_at)
     VALUES ('fil_pending', ?, ?, 'a.pdf', 'application/pdf', 10, 'pending', 'k/a.pdf', ?, ?)`,
    )
    .run(org, g.projectId, t, t);
});

afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctx = { signedUrl: (key: string | null | undefined) => (key ? `u:${key}` : null) };

describe('RESOURCES columns', () => {
  it('name real columns of each table and include id, created_at and every relation column', async () => {
    for (const def of Object.values(RESOURCES)) {
      const names = (
        (await db.prepare(`PRAGMA table_info(${def.table})`).all()) as { name: string }[]
      ).map((c) => c.name);
      for (const c of def.columns) expect(names, `${def.kind}.${c}`).toContain(c);
      expect(def.columns).toContain('id');
      expect(def.columns).toContain('created_at');
      for (const rel of Object.values(def.relations)) expect(def.columns).toContain(rel.column);
    }
  });

  it('cover every column toApi reads, on real rows of every resource', async () => {
    for (const kind of Object.keys(RESOURCES) as ResourceKind[]) {
      const def = RESOURCES[kind];
      const rows = (await db.prepare(`SELECT * FROM ${def.table}`).all()) as Row[];
      expect(rows.length, kind).toBeGreaterThan(0);
      for (const row of rows) {
        const read = new Set<string>();
        const spy = new Proxy(row, {
          get: (target, prop) => {
            if (typeof prop === 'string') read.add(prop);
            return target[prop as string];
          },
        });
        const full = def.toApi(spy, ctx);
        for (const c of read) expect(def.columns, `${kind} reads ${c}`).toContain(c);
        const narrow = Object.fromEntries(def.columns.map((c) => [c, row[c]])) as Row;
        expect(def.toApi(narrow, ctx), kind).toEqual(full);
      }
    }
  });

  it('leave out internal columns', () => {
    for (const def of Object.values(RESOURCES))
      expect(def.columns).not.toContain('organization_id');
    expect(RESOURCES.webhook.columns).not.toContain('secret');
  });
});
