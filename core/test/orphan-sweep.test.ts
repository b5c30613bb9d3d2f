// The boot-time orphan sweep in team mode (issue 21): several processes share one database and one
// bucket, and a job stores its bytes before the row that names them. A process that boots while a
// worker elsewhere sits between the two must not take those bytes: on a shared store an orphan goes
// only once it is older than the grace period, and one process sweeps at a time (a PostgreSQL
// advisory lock). The desktop (its own SQLite file and data dir) still removes orphans at once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { overlayImageKey, sheetImageKey } from '../blobs/keys';
import { LocalObjectStore } from '../blobs/local-object-store';
import type { ObjectStore } from '../blobs/object-store';
import { S3ObjectStore } from '../blobs/s3-object-store';
import {
  startS3rver,
  TEST_BUCKET,
  TEST_CREDENTIALS,
  type S3rverProcess,
} from '../blobs/s3rver.test-support';
import { monotonicNow } from '../domain/clock';
import { newId } from '../domain/ids';
import { ORPHAN_GRACE_MS, reconcile } from '../services/reconcile.service';
import type { Db } from '../store/db';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { ORPHAN_SWEEP_LOCK } from '../store/repositories/maintenance.repository';
import { openTestStore, PG_URL, type TestStore } from './backends';
import { seedGraph, type SeededGraph } from './seed';

const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const HOUR = 60 * 60_000;

if (!PG_URL) {
  // On CI the PostgreSQL cases run in the PostgreSQL + S3 lane of `npm test` (scripts/test-team.mjs
  // sets BLUELINE_TEST_DATABASE; under CI=true that lane fails rather than skip, and
  // scripts/test-team.test.ts checks this file is in it), so the plain vitest run leaves them out.
  if (process.env.CI === 'true')
    console.warn(
      'orphan-sweep.test.ts: BLUELINE_TEST_DATABASE is not set in this run; the PostgreSQL cases run in the PostgreSQL + S3 lane (npm run test:team).',
    );
  else
    console.warn(
      'orphan-sweep.test.ts: BLUELINE_TEST_DATABASE is not set; the PostgreSQL cases are skipped (scripts/pg-test-cluster.sh start prints a URL).',
    );
}

let scratch: string;
let s3: S3rverProcess;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'blueline-orphan-sweep-'));
  s3 = await startS3rver();
});
afterAll(async () => {
  await s3?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

let serial = 0;
function s3Store(): S3ObjectStore {
  return new S3ObjectStore({
    bucket: TEST_BUCKET,
    prefix: `sweep-${++serial}/`,
    endpoint: s3.endpoint,
    credentials: TEST_CREDENTIALS,
    cacheDir: join(scratch, `cache-${serial}`),
  });
}

/** A sheet image a worker has stored and whose sheet row it has not committed yet. */
async function inFlightSheetImage(
  objects: ObjectStore,
  g: SeededGraph,
): Promise<{ key: string; sheetId: string }> {
  const sheetId = newId('sheet');
  const key = sheetImageKey(g.projectId, g.drawingIds[0], sheetId);
  await objects.put(key, png, { contentType: 'image/png' });
  return { key, sheetId };
}

async function setup(store: TestStore) {
  const org = (await ensureOrganization(store.db, 'Org')).id;
  const g = await seedGraph(store.db, org);
  return { org, g };
}

async function commitSheetRow(
  db: Db,
  g: SeededGraph,
  org: string,
  { key, sheetId }: { key: string; sheetId: string },
): Promise<void> {
  const t = monotonicNow();
  await db
    .prepare(
      `INSERT INTO sheets (id, organization_id, project_id, drawing_id, page_index, width, height, dpi, image_key, created_at, updated_at)
       VALUES (?, ?, ?, ?, 7, 100, 100, 150, ?, ?, ?)`,
    )
    .run(sheetId, org, g.projectId, g.drawingIds[0], key, t, t);
}

/** The two team-mode combinations that run everywhere (S3) or where PostgreSQL is (PG + local). */
const TEAM: { name: string; kind: 'sqlite' | 'postgres'; objects: () => ObjectStore }[] = [
  { name: 'SQLite + S3 bucket', kind: 'sqlite', objects: s3Store },
  {
    name: 'PostgreSQL + local objects',
    kind: 'postgres',
    objects: () => new LocalObjectStore({ dataDir: mkdtempSync(join(scratch, 'objs-')) }),
  },
  { name: 'PostgreSQL + S3 bucket', kind: 'postgres', objects: s3Store },
];

describe.each(TEAM)('orphan sweep on a shared store: $name', ({ kind, objects: make }) => {
  const skip = kind === 'postgres' && !PG_URL;

  it.skipIf(skip)(
    'keeps bytes another process stored but has not recorded yet; removes them once older than the grace period',
    async () => {
      const store = await openTestStore(kind);
      const objects = make();
      try {
        const { org, g } = await setup(store);
        const inFlight = await inFlightSheetImage(objects, g);
        // A compare job elsewhere, between its overlay image and its overlay row:
        const overlayKey = overlayImageKey(g.projectId, newId('overlay'), 'combined');
        await objects.put(overlayKey, png, { contentType: 'image/png' });

        // Another process boots now (the default grace of a shared store applies).
        const r1 = await reconcile({ db: store.db, objects });
        expect(await objects.stat(inFlight.key)).not.toBeNull();
        expect(await objects.stat(overlayKey)).not.toBeNull();
        expect(r1.swept).toBe(true);
        expect(r1.youngOrphans).toBe(2);
        expect(r1.orphanObjects).toBe(0);

        // The worker commits its sheet row: the image is a keeper from now on, at any age.
        await commitSheetRow(store.db, g, org, inFlight);
        // The overlay's worker died instead: its bytes stay orphans, gone once old enough.
        const later = () => Date.now() + ORPHAN_GRACE_MS + HOUR;
        const r2 = await reconcile({ db: store.db, objects, now: later });
        expect(await objects.stat(inFlight.key)).not.toBeNull();
        expect(await objects.stat(overlayKey)).toBeNull();
        expect(r2.orphanObjects).toBe(1);
        expect(r2.youngOrphans).toBe(0);
      } finally {
        if (objects instanceof S3ObjectStore) objects.close();
        await store.cleanup();
      }
    },
  );
});

describe('orphan sweep: one sweeper at a time on PostgreSQL', () => {
  it.skipIf(!PG_URL)(
    'a process that boots while another holds the sweep lock leaves the orphans to it',
    async () => {
      const store = await openTestStore('postgres');
      const objects = new LocalObjectStore({ dataDir: mkdtempSync(join(scratch, 'objs-')) });
      const holder = new pg.Client({ connectionString: store.location });
      await holder.connect();
      try {
        const { g } = await setup(store);
        const { key } = await inFlightSheetImage(objects, g);
        const later = () => Date.now() + ORPHAN_GRACE_MS + HOUR;
        await holder.query('SELECT pg_advisory_lock($1)', [ORPHAN_SWEEP_LOCK]);
        const r1 = await reconcile({ db: store.db, objects, now: later });
        expect(r1.swept).toBe(false);
        expect(await objects.stat(key)).not.toBeNull();
        await holder.query('SELECT pg_advisory_unlock($1)', [ORPHAN_SWEEP_LOCK]);
        const r2 = await reconcile({ db: store.db, objects, now: later });
        expect(r2.swept).toBe(true);
        expect(await objects.stat(key)).toBeNull();
        expect(r2.orphanObjects).toBe(1);
      } finally {
        await holder.end();
        await store.cleanup();
      }
    },
  );
});

describe('orphan sweep on the desktop (its own SQLite file and data dir)', () => {
  it('removes an orphan at once, as before', async () => {
    const store = await openTestStore('sqlite');
    const objects = new LocalObjectStore({ dataDir: mkdtempSync(join(scratch, 'objs-')) });
    try {
      const { g } = await setup(store);
      const { key } = await inFlightSheetImage(objects, g);
      const r = await reconcile({ db: store.db, objects });
      expect(await objects.stat(key)).toBeNull();
      expect(r.orphanObjects).toBe(1);
    } finally {
      await store.cleanup();
    }
  });
});
