// Main-thread cost of one list page without HTTP or TLS: the list engine (keyset query, expansion
// loads, serialization) and the JSON body, timed per stage over many pages, plus the SQLite query
// plans of the page and expansion queries. Complements bench-api.ts (which measures through real
// HTTPS under concurrency): with 10 connections on one event loop, p99 ≈ queue × this cost.
//
//   node --import tsx bench/api/page-cost.ts            # 10,000 overlays, 300 pages per scenario
//   PAGE_COST_IMAGES=1 …                                # rows carry object keys (URL signing)
//   PAGE_COST_IMAGES=1 PAGE_COST_URL_MEMO=0 …           # … and every URL is signed afresh
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CursorCodec } from '../../core/http/cursor';
import * as engine from '../../core/http/list-engine';
import type { ListEndpoint } from '../../core/http/list-engine';
import { UrlSigner } from '../../core/blobs/signed-url';
import { openDatabase } from '../../core/store/db';
import { ensureOrganization } from '../../core/store/repositories/organizations.repository';
import { seedOverlays } from './seed';

const OVERLAYS = Number(process.env.BENCH_OVERLAYS ?? 10_000);
const PAGES = Number(process.env.PAGE_COST_PAGES ?? 300);
const IMAGES = process.env.PAGE_COST_IMAGES === '1';
const EXPAND = 'block_a.sheet.drawing,block_b.sheet.drawing,job';

const dir = mkdtempSync(join(tmpdir(), 'blueline-page-cost-'));
try {
  const db = openDatabase(join(dir, 'db.sqlite'));
  const org = await ensureOrganization(db, 'Bench');
  await seedOverlays(db, org.id, OVERLAYS, { images: IMAGES });
  const cursorSecret = randomBytes(32);
  const urlSecret = randomBytes(32);
  const cursors = new CursorCodec(cursorSecret);
  // As the service signs `*_uri` fields: `downloadUrl` (expiry on a 5-minute step, memoized
  // signatures) where it exists, `sign` on older checkouts. PAGE_COST_URL_MEMO=0 turns the memo
  // off, so every URL of every page costs a fresh HMAC (the first view of a page).
  const memo = process.env.PAGE_COST_URL_MEMO !== '0';
  const signer = new UrlSigner(urlSecret, memo ? {} : { memoEntries: 0 });
  const origin = 'https://127.0.0.1:7420';
  const download = (signer as unknown as { downloadUrl?: (p: string) => string }).downloadUrl;
  const serialize = {
    signedUrl: (key: string | null | undefined) =>
      key
        ? origin +
          (download
            ? download.call(signer, `/v1/blobs/${key}`)
            : signer.sign(`/v1/blobs/${key}`, 3600).url)
        : null,
  };
  const endpoint: ListEndpoint = {
    path: '/v1/overlays',
    kind: 'overlay',
    filters: {
      project_id: { type: 'id', column: 'project_id', prefix: 'prj' },
      job_id: { type: 'id', column: 'job_id', prefix: 'job' },
    },
  };
  const req = (query: Record<string, unknown>) => ({
    organizationId: org.id,
    query,
    db,
    cursors,
    serialize,
  });
  // The text path (what the list routes send); checkouts from before it existed fall back to the
  // object path + JSON.stringify, so this script also measures the "before" of a change.
  const textPath = (engine as unknown as { runListJson?: unknown }).runListJson as
    ((e: ListEndpoint, r: ReturnType<typeof req>) => string) | undefined;
  const list = async (query: Record<string, unknown>) => await engine.runList(endpoint, req(query));
  const body = async (query: Record<string, unknown>): Promise<string> =>
    textPath ? textPath(endpoint, req(query)) : JSON.stringify(await list(query));

  // A cursor 90 % into the list, for the deep-page scenario.
  let cursor: string | null = null;
  let deep = '';
  for (let i = 0; i < Math.floor(OVERLAYS / 100) * 0.9; i++) {
    const r: { _meta: { next: string | null } } = (await list(
      cursor ? { cursor } : { limit: '100', expand: EXPAND },
    )) as never;
    cursor = r._meta.next;
    deep = cursor ?? deep;
  }

  const scenarios: [string, Record<string, unknown>][] = [
    ['limit=100', { limit: '100' }],
    ['limit=100 + expand', { limit: '100', expand: EXPAND }],
    ['limit=100 + expand, page 91 (cursor)', { cursor: deep }],
  ];
  const rows = [];
  for (const [name, query] of scenarios) {
    const times: number[] = [];
    let bytes = 0;
    let cpu = process.cpuUsage();
    for (let i = 0; i < PAGES + 30; i++) {
      // CPU time is counted over the measured pages only (the first 30 warm up).
      if (i === 30) cpu = process.cpuUsage();
      const t0 = performance.now();
      const text = await body(query);
      const t1 = performance.now();
      if (i >= 30) {
        times.push(t1 - t0);
        bytes = Buffer.byteLength(text);
      }
    }
    const used = process.cpuUsage(cpu);
    times.sort((a, b) => a - b);
    rows.push({
      scenario: name,
      // CPU time of this process per page: less disturbed by other processes than wall time.
      'CPU ms/page': ((used.user + used.system) / 1000 / PAGES).toFixed(2),
      'ms (median)': times[Math.floor(times.length / 2)]!.toFixed(2),
      'ms (p90)': times[Math.floor(times.length * 0.9)]!.toFixed(2),
      'ms (min)': times[0]!.toFixed(2),
      KiB: (bytes / 1024).toFixed(0),
    });
  }
  console.log(
    `${textPath ? 'text path (runListJson)' : 'object path (runList + JSON.stringify)'}: ${OVERLAYS} overlays, ${PAGES} pages per scenario${IMAGES ? `, rows with object keys (signed URLs${memo ? '' : ', no signature memo'})` : ''}; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.table(rows);

  const plan = async (sql: string) =>
    (
      (await db
        .prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .all(...Array.from({ length: sql.split('?').length - 1 }, () => 'x'))) as {
        detail: string;
      }[]
    )
      .map((r) => r.detail)
      .join('; ');
  console.log('query plans:');
  for (const sql of [
    'SELECT id FROM overlays WHERE organization_id = ? ORDER BY created_at DESC, id DESC LIMIT 101',
    'SELECT id FROM overlays WHERE organization_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT 101',
    'SELECT id FROM blocks WHERE organization_id = ? AND id IN (?, ?, ?)',
  ])
    console.log(`  ${sql}\n    → ${await plan(sql)}`);
  await db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
