// Moving a project between the desktop and team mode (issue 21, item 4): `blueline backup DIR
// --project ID` from a desktop data dir, `restore` into PostgreSQL + an S3 bucket, backup from
// there and restore into a new desktop data dir. The API answers the same on all three (project,
// drawings, sheets, blocks, comparisons, overlays, changes with their reviews, files, search), and
// every byte behind a signed URL is identical. Then the refusals: an archive of a newer schema, a
// damaged one, a project id that exists in the target.
import { createHash } from 'node:crypto';
import https from 'node:https';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../blobs/local-object-store';
import type { ObjectStore } from '../blobs/object-store';
import { S3ObjectStore } from '../blobs/s3-object-store';
import {
  startS3rver,
  TEST_BUCKET,
  TEST_CREDENTIALS,
  type S3rverProcess,
} from '../blobs/s3rver.test-support';
import { createService, type Service } from '../service';
import {
  backupProject,
  PROJECT_MANIFEST,
  ProjectArchiveError,
  restoreProject,
} from '../services/project-archive.service';
import { openDatabase } from '../store/db';
import {
  createApiKey,
  ensureOrganization,
  grantCredits,
} from '../store/repositories/organizations.repository';
import { createPgTestDatabase, PG_URL } from './backends';
import { uploadDrawing, waitForJob } from './flows';
import { httpsRequest } from './harness';
import { seedGraph } from './seed';

const LONG = 600_000;
const silent = { info: () => {}, warn: () => {}, error: () => {} };

if (!PG_URL) {
  // On CI the PostgreSQL cases run in the PostgreSQL + S3 lane of `npm test` (scripts/test-team.mjs
  // sets BLUELINE_TEST_DATABASE; under CI=true that lane fails rather than skip, and
  // scripts/test-team.test.ts checks this file is in it), so the plain vitest run leaves them out.
  if (process.env.CI === 'true')
    console.warn(
      'project-archive.test.ts: BLUELINE_TEST_DATABASE is not set in this run; the desktop → team → desktop round trip runs in the PostgreSQL + S3 lane (npm run test:team).',
    );
  else
    console.warn(
      'project-archive.test.ts: BLUELINE_TEST_DATABASE is not set; the desktop → PostgreSQL + S3 → desktop round trip is skipped (scripts/pg-test-cluster.sh start prints a URL). The archive checks on SQLite run.',
    );
}

interface Running {
  svc: Service;
  origin: string;
  agent: https.Agent;
  get(path: string, key: string): Promise<{ status: number; body: any }>;
  bytes(uri: string): Promise<Buffer>;
  stop(): Promise<void>;
}

async function run(dataDir: string, objects: ObjectStore, database?: string): Promise<Running> {
  const svc = await createService({
    dataDir,
    objects,
    ...(database ? { database } : {}),
    port: 0,
    workers: 1,
    warmWorkers: false,
    log: process.env.BLUELINE_TEST_LOG ? undefined : silent,
    config: { rateLimits: { document: 100_000, vision: 100_000 } },
  });
  const { origin } = await svc.start();
  const agent = new https.Agent({ ca: svc.caCertPem, keepAlive: true });
  return {
    svc,
    origin,
    agent,
    get: (path, key) => httpsRequest(agent, origin, 'GET', path, { key }),
    bytes: (uri) =>
      new Promise<Buffer>((res, rej) => {
        https
          .get(new URL(uri, origin), { agent }, (r) => {
            const chunks: Buffer[] = [];
            r.on('data', (c: Buffer) => chunks.push(c));
            r.on('end', () =>
              r.statusCode === 200
                ? res(Buffer.concat(chunks))
                : rej(new Error(`${uri}: HTTP ${r.statusCode}`)),
            );
          })
          .on('error', rej);
      }),
    async stop() {
      agent.destroy();
      await svc.stop();
    },
  };
}

/** Every page of a list. */
async function all(s: Running, key: string, path: string): Promise<any[]> {
  const out: any[] = [];
  let url: string | null = path;
  while (url) {
    const r = await s.get(url, key);
    expect(r.status, `${url}: ${JSON.stringify(r.body)}`).toBe(200);
    out.push(...r.body.data);
    const next = r.body._meta?.next;
    url = next ? `${path.split('?')[0]}?cursor=${encodeURIComponent(next)}` : null;
  }
  return out;
}

/**
 * What the service answers about the project, with what legitimately differs between two services
 * taken out: the origin and the signature of signed URLs (each service signs with its own secret).
 * The URLs themselves are collected so their bytes can be compared.
 */
async function snapshot(s: Running, key: string, projectId: string, opts = { search: true }) {
  const urls = new Map<string, string>(); // path → signed URL
  const norm = (v: unknown): unknown => {
    if (typeof v === 'string' && v.startsWith(s.origin)) {
      const u = new URL(v);
      urls.set(u.pathname, v);
      return u.pathname;
    }
    if (Array.isArray(v)) return v.map(norm);
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, norm(x)]));
    return v;
  };
  const project = await s.get(`/v1/projects/${projectId}`, key);
  expect(project.status).toBe(200);
  const overlays = await all(s, key, `/v1/overlays?project_id=${projectId}&limit=100`);
  const sheets = await all(s, key, `/v1/sheets?project_id=${projectId}&limit=100`);
  const changes: any[] = [];
  for (const o of overlays)
    changes.push(...(await all(s, key, `/v1/changes?overlay_id=${o.id}&limit=100`)));
  const blocks: any[] = [];
  for (const sh of sheets)
    blocks.push(...(await all(s, key, `/v1/blocks?sheet_id=${sh.id}&limit=100`)));
  let search: unknown[] | undefined;
  if (opts.search) {
    const r = await httpsRequest(s.agent, s.origin, 'POST', `/v1/projects/${projectId}/search`, {
      key,
      body: { query: 'window' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    search = r.body.data;
    expect(search!.length).toBeGreaterThan(0);
  }
  const answers = norm({
    project: project.body,
    drawings: await all(s, key, `/v1/drawings?project_id=${projectId}&limit=100`),
    sheets,
    blocks,
    jobs: await all(s, key, `/v1/jobs?project_id=${projectId}&limit=100`),
    overlays,
    changes,
    files: await all(s, key, `/v1/files?project_id=${projectId}&limit=100`),
    ...(search ? { search } : {}),
  }) as Record<string, unknown[]>;
  const bytes = new Map<string, string>();
  for (const [path, url] of [...urls].sort())
    bytes.set(
      path,
      createHash('sha256')
        .update(await s.bytes(url))
        .digest('hex'),
    );
  return { answers, bytes };
}

let scratch: string;
let s3: S3rverProcess | undefined;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'blueline-project-archive-'));
});
afterAll(async () => {
  await s3?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe('desktop → team (PostgreSQL + S3) → desktop', () => {
  it.skipIf(!PG_URL)(
    'gives the same API answers and byte-identical downloads at each step',
    async () => {
      s3 = await startS3rver();
      // 1. The desktop: two issues of a sheet, processed, compared, one change reviewed, an export.
      const dirA = join(scratch, 'desktop-a');
      const a = await run(dirA, new LocalObjectStore({ dataDir: dirA }));
      let key: string;
      let projectId: string;
      try {
        const org = await ensureOrganization(a.svc.db, 'Test Org');
        await grantCredits(a.svc.db, org.id, 1_000, 'grant');
        key = (await createApiKey(a.svc.db, org.id, 'round trip')).secret;
        const post = (path: string, body: unknown) =>
          httpsRequest(a.agent, a.origin, 'POST', path, { key, body });
        projectId = (await post('/v1/projects', { name: 'Round trip' })).body.id;
        const t = {
          request: (m: string, p: string, o: any = {}) =>
            httpsRequest(a.agent, a.origin, m, p, { ...o, key: o.key === undefined ? key : o.key }),
        } as any;
        const older = await uploadDrawing(
          t,
          projectId,
          '20150115_ASK-003_exterior-west-wall-window-locations.pdf',
          'ASK-003 01-15',
        );
        const newer = await uploadDrawing(
          t,
          projectId,
          '20150116_ASK-003_exterior-west-wall-window-locations.pdf',
          'ASK-003 01-16',
        );
        for (const d of [older, newer])
          expect((await waitForJob(t, d.job_id, LONG)).status).toBe('Completed');
        const cmp = await post(`/v1/drawings/${newer.id}/compare`, {
          compare_to: older.id,
          analyze: true,
        });
        expect(cmp.status).toBe(202);
        expect((await waitForJob(t, cmp.body.job_id, LONG)).status).toBe('Completed');
        const overlays = await all(a, key, `/v1/overlays?project_id=${projectId}`);
        const withChanges = overlays.find((o) => o.change_count > 0);
        expect(withChanges).toBeDefined();
        const change = (await all(a, key, `/v1/changes?overlay_id=${withChanges.id}`))[0];
        const patched = await httpsRequest(a.agent, a.origin, 'PATCH', `/v1/changes/${change.id}`, {
          key,
          body: { review_status: 'flagged', note: 'Window moved 2", check "W-3"' },
        });
        expect(patched.status).toBe(200);
        const exp = await post('/v1/exports', { job_id: cmp.body.job_id, format: 'csv' });
        expect(exp.status).toBe(202);
        expect((await waitForJob(t, exp.body.job_id, LONG)).status).toBe('Completed');
      } catch (err) {
        await a.stop();
        throw err;
      }

      const before = await snapshot(a, key, projectId);
      expect(before.answers.changes!.some((c: any) => c.review_status === 'flagged')).toBe(true);
      expect(before.answers.files!.length).toBe(3); // two PDFs and the export
      expect(before.bytes.size).toBeGreaterThan(5);
      for (const k of ['drawings', 'sheets', 'blocks', 'jobs', 'overlays', 'changes', 'search'])
        expect(before.answers[k]!.length, k).toBeGreaterThan(0);
      console.log(
        `round trip: ${Object.entries(before.answers)
          .map(([k, v]) => `${Array.isArray(v) ? v.length : 1} ${k}`)
          .join(', ')}; ${before.bytes.size} downloads`,
      );
      const archive1 = join(scratch, 'archive-desktop');
      // Backed up while the desktop service runs.
      const m1 = await backupProject(
        { db: a.svc.db, objects: new LocalObjectStore({ dataDir: dirA }) },
        projectId,
        archive1,
      );
      expect(m1.source.dialect).toBe('sqlite');
      expect(m1.missing_objects).toEqual([]);
      await a.stop();

      // 2. Team mode: a fresh PostgreSQL database and a bucket prefix; restored into the running
      // service. The organization is new there: it is created with its keys (hashes), so the
      // desktop's key works.
      const pgDb = await createPgTestDatabase();
      const bucketB = new S3ObjectStore({
        bucket: TEST_BUCKET,
        prefix: 'team-b/',
        endpoint: s3.endpoint,
        credentials: TEST_CREDENTIALS,
        cacheDir: join(scratch, 'cache-b'),
      });
      const b = await run(join(scratch, 'team-b'), bucketB, pgDb.url);
      const archive2 = join(scratch, 'archive-team');
      try {
        const r = await restoreProject({ db: b.svc.db, objects: bucketB }, archive1);
        expect(r.organization).toMatchObject({ name: 'Test Org', created: true });
        expect(r.organization.keys).toBeGreaterThanOrEqual(1);
        // Search on PostgreSQL is not on main yet (POST …/search answers 500 there): the search
        // index's rows are compared here, and search's answers at the desktop end of the trip.
        const inTeam = await snapshot(b, key, projectId, { search: false });
        const { search: _search, ...withoutSearch } = before.answers;
        expect(inTeam.answers).toEqual(withoutSearch);
        expect(
          await b.svc.db
            .prepare('SELECT count(*) AS n FROM search_index WHERE project_id = ?')
            .get(projectId),
        ).toEqual({ n: m1.tables.search_index });
        expect(inTeam.bytes).toEqual(before.bytes);

        // The same archive again: the project exists.
        await expect(restoreProject({ db: b.svc.db, objects: bucketB }, archive1)).rejects.toThrow(
          new RegExp(
            `Project ${projectId} \\('Round trip', created .*\\) already exists in the target store`,
          ),
        );

        const m2 = await backupProject({ db: b.svc.db, objects: bucketB }, projectId, archive2);
        expect(m2.source.dialect).toBe('postgres');
        expect(m2.objects.map((o) => [o.key, o.sha256])).toEqual(
          m1.objects.map((o) => [o.key, o.sha256]),
        );
        expect(m2.tables).toEqual(m1.tables);
      } finally {
        await b.stop();
        bucketB.close();
        await pgDb.drop();
      }

      // 3. Back to a new desktop data dir, restored before its service starts.
      const dirC = join(scratch, 'desktop-c');
      mkdirSync(dirC, { recursive: true });
      const dbC = openDatabase(join(dirC, 'blueline.db'));
      await restoreProject({ db: dbC, objects: new LocalObjectStore({ dataDir: dirC }) }, archive2);
      await dbC.close();
      const c = await run(dirC, new LocalObjectStore({ dataDir: dirC }));
      try {
        const after = await snapshot(c, key, projectId);
        expect(after.answers).toEqual(before.answers);
        expect(after.bytes).toEqual(before.bytes);
      } finally {
        await c.stop();
      }
    },
    LONG,
  );
});

describe('project archives: refusals', () => {
  let dir: string;
  let archive: string;
  let projectId: string;
  const open = (d: string) => ({
    db: (mkdirSync(d, { recursive: true }), openDatabase(join(d, 'blueline.db'))),
    objects: new LocalObjectStore({ dataDir: d }),
  });

  beforeAll(async () => {
    dir = join(scratch, 'refusals-src');
    const src = open(dir);
    const org = (await ensureOrganization(src.db, 'Org')).id;
    const g = await seedGraph(src.db, org);
    projectId = g.projectId;
    await src.objects.put(
      `projects/${projectId.toLowerCase()}/files/seed_${g.fileId.toLowerCase()}`,
      Buffer.from('%PDF-1.4 seeded'),
      { contentType: 'application/pdf' },
    );
    archive = join(scratch, 'refusals-archive');
    await backupProject(src, projectId, archive);
    await src.db.close();
  });

  /** A copy of the archive with `edit` applied to it. */
  function copyWith(name: string, edit: (d: string) => void): string {
    const d = join(scratch, name);
    rmSync(d, { recursive: true, force: true });
    cpSync(archive, d, { recursive: true });
    edit(d);
    return d;
  }

  async function restoreInto(name: string, from: string) {
    const t = open(join(scratch, name));
    try {
      return await restoreProject(t, from);
    } finally {
      await t.db.close();
    }
  }

  it('restores into an empty data dir', async () => {
    const r = await restoreInto('refusals-ok', archive);
    expect(r.projectId).toBe(projectId);
    expect(r.rows).toBeGreaterThan(5);
  });

  it('refuses a project that is already in the target', async () => {
    await expect(restoreInto('refusals-ok', archive)).rejects.toThrow(
      /already exists in the target store; delete it there first/,
    );
  });

  it('refuses an archive of a newer schema, and of an older one', async () => {
    const bump = (by: number) => (d: string) => {
      const f = join(d, PROJECT_MANIFEST);
      const m = JSON.parse(readFileSync(f, 'utf8'));
      m.schema_version += by;
      writeFileSync(f, JSON.stringify(m));
    };
    await expect(restoreInto('refusals-newer', copyWith('a-newer', bump(1)))).rejects.toThrow(
      /made by a newer Blueline \(schema version \d+; this Blueline knows up to \d+\)/,
    );
    await expect(restoreInto('refusals-older', copyWith('a-older', bump(-1)))).rejects.toThrow(
      /is of schema version \d+ and this Blueline's is \d+/,
    );
  });

  it('refuses a damaged archive: records, object bytes, a missing manifest', async () => {
    const flip = (file: string) => {
      const b = readFileSync(file);
      const i = Math.floor(b.length / 2);
      b[i] = b[i]! ^ 0x01;
      writeFileSync(file, b);
    };
    await expect(
      restoreInto(
        'refusals-rec',
        copyWith('a-rec', (d) => flip(join(d, 'records.json'))),
      ),
    ).rejects.toThrow(/is damaged: records.json does not match the sha256/);

    const objDamaged = copyWith('a-obj', (d) => {
      // The object's bytes on disk, wherever the local store's layout keeps them.
      const files = execFileSync('grep', ['-rl', '--null', '-F', '%PDF-1.4 seeded', d])
        .toString()
        .split('\0')
        .filter(Boolean);
      expect(files.length).toBeGreaterThan(0);
      for (const f of files) flip(f);
    });
    const target = join(scratch, 'refusals-obj');
    await expect(restoreInto('refusals-obj', objDamaged)).rejects.toThrow(ProjectArchiveError);
    await expect(restoreInto('refusals-obj', objDamaged)).rejects.toThrow(
      /do not match their sha256 .*archive is damaged/,
    );
    // Nothing of the project was left in the target.
    const t = open(target);
    expect(await t.db.prepare('SELECT count(*) AS n FROM projects').get()).toEqual({ n: 0 });
    expect((await t.objects.list('projects/', { limit: 10, direction: 'forward' })).keys).toEqual(
      [],
    );
    await t.db.close();

    await expect(
      restoreInto(
        'refusals-nomanifest',
        copyWith('a-nomanifest', (d) => rmSync(join(d, PROJECT_MANIFEST))),
      ),
    ).rejects.toThrow(/is not a finished Blueline project backup/);
  });

  it('refuses to back up a project with jobs still running, and a folder that is not empty', async () => {
    const src = open(dir);
    try {
      await src.db
        .prepare(`UPDATE jobs SET status = 'Started' WHERE project_id = ?`)
        .run(projectId);
      await expect(backupProject(src, projectId, join(scratch, 'busy'))).rejects.toThrow(
        /job\(s\) still Queued or Started .* wait for them to end or cancel them/,
      );
      await src.db
        .prepare(`UPDATE jobs SET status = 'Completed' WHERE project_id = ?`)
        .run(projectId);
      await expect(backupProject(src, projectId, archive)).rejects.toThrow(/is not empty/);
      await expect(backupProject(src, 'prj_nothere', join(scratch, 'none'))).rejects.toThrow(
        /No project 'prj_nothere'/,
      );
    } finally {
      await src.db.close();
    }
  });
});

function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/cli/main.ts', ...args], {
      cwd: resolve(import.meta.dirname, '../..'),
      env: {
        ...process.env,
        BLUELINE_DATABASE_URL: '',
        BLUELINE_STORAGE_URL: '',
        BLUELINE_DATA_DIR: '',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => res({ code, stdout, stderr }));
  });
}

describe('blueline backup --project / restore (the command line)', () => {
  it(
    'moves a project from a data dir to another (through PostgreSQL + S3 where PostgreSQL is), and says what is wrong',
    async () => {
      const src = join(scratch, 'cli-src');
      mkdirSync(src, { recursive: true });
      const db = openDatabase(join(src, 'blueline.db'));
      const g = await seedGraph(db, (await ensureOrganization(db, 'Cli Org')).id);
      await db.close();

      const a1 = join(scratch, 'cli-archive-1');
      const b = await cli(['backup', a1, '--project', g.projectId, '--data-dir', src]);
      expect(b.stderr + b.stdout).toMatch(
        new RegExp(`Backed up project ${g.projectId} \\('Seeded project'\\) of the data dir`),
      );
      expect(b.code).toBe(0);

      let last = a1;
      if (PG_URL) {
        s3 ??= await startS3rver();
        const pgDb = await createPgTestDatabase();
        const team = [
          '--database',
          pgDb.url,
          '--storage',
          `s3://${TEST_BUCKET}/cli/?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1`,
        ];
        const creds = {
          AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
          AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
        };
        try {
          const r = await cli(['restore', a1, ...team], creds);
          expect(r.stderr + r.stdout).toMatch(
            /Restored project .* into PostgreSQL .*: \d+ records, \d+ objects; organization 'Cli Org' \(created, 0 API keys came along\)/,
          );
          expect(r.code).toBe(0);
          const again = await cli(['restore', a1, ...team], creds);
          expect(again.code).toBe(1);
          expect(again.stderr).toMatch(/already exists in the target store/);
          last = join(scratch, 'cli-archive-2');
          const b2 = await cli(['backup', last, '--project', g.projectId, ...team], creds);
          expect(b2.stderr + b2.stdout).toMatch(/Backed up project .* of PostgreSQL/);
          expect(b2.code).toBe(0);
        } finally {
          await pgDb.drop();
        }
      }
      const dest = join(scratch, 'cli-dest');
      const r = await cli(['restore', last, '--data-dir', dest, '--organization', 'Other Org']);
      expect(r.stderr + r.stdout).toMatch(/organization 'Other Org' \(created/);
      expect(r.code).toBe(0);
      const back = openDatabase(join(dest, 'blueline.db'));
      expect(
        await back
          .prepare('SELECT o.name FROM projects p JOIN organizations o ON o.id = p.organization_id')
          .all(),
      ).toEqual([{ name: 'Other Org' }]);
      expect(
        await back
          .prepare(
            'SELECT count(*) AS n FROM sheets WHERE organization_id != (SELECT organization_id FROM projects)',
          )
          .get(),
      ).toEqual({ n: 0 });
      await back.close();

      // Usage: team mode needs both URLs; a data-dir backup does not go into team mode.
      const noStorage = await cli(['restore', last, '--database', 'postgres://x@127.0.0.1:1/db']);
      expect(noStorage.code).toBe(2);
      expect(noStorage.stderr).toMatch(/--database needs --storage s3:\/\//);
      const teamWhole = await cli([
        'backup',
        join(scratch, 'x'),
        '--database',
        'postgres://x@h/db',
      ]);
      expect(teamWhole.code).toBe(2);
      expect(teamWhole.stderr).toMatch(/back up one project at a time \(--project ID\)/);
    },
    LONG,
  );
});
