// Objects left by a killed run (issue 21; core/jobs/attempt-objects.ts, migration 16), on
// PostgreSQL + an S3-compatible server (s3rver) with the real command line: `blueline serve
// --no-workers` and a `blueline worker` processing a 9-sheet set. The worker is frozen (SIGSTOP)
// the moment the bucket holds a sheet's objects that no sheet row names yet; if they are still
// unnamed, it is SIGKILLed there (otherwise it goes on, and the next page is tried). So the dead
// run certainly left unnamed objects behind. A second worker completes the job; then no object of
// the dead run's unnamed sheets is left in the bucket, every object a row names is there, and
// every sheet prefix in the bucket belongs to a sheet row. Before attempt-objects, those objects
// stayed until the hour-old orphan sweep.
//
// Needs PostgreSQL: $BLUELINE_TEST_DATABASE (scripts/pg-test-cluster.sh start prints one). Without
// it the file is skipped, saying so, except under CI=true, where it starts a throwaway cluster.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES, repoRoot, request, startServe, uploadDrawing, type Served } from './lib';
import { startS3rver, TEST_BUCKET, TEST_CREDENTIALS } from '../core/blobs/s3rver.test-support';
import { idFromKeySegment } from '../core/blobs/keys';
import {
  createTeamDatabase,
  teamTestServer,
  TEST_QUEUE_ENV,
  until,
} from '../core/jobs/team.process.test-support';
import { openPostgres } from '../core/store/pg-db';
import { referencedObjectKeys } from '../core/store/repositories/maintenance.repository';
import { withMallocTuning } from '../core/jobs/malloc-tuning';

const server = teamTestServer();
if (!server)
  console.warn(
    'team-attempt-objects.test.ts skipped: set BLUELINE_TEST_DATABASE=postgres://… (scripts/pg-test-cluster.sh start prints one) to run it.',
  );

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  server?.stop();
});

const PREFIX = 'ao';
const SHEET_KEY = /^projects\/[^/]+\/drawings\/[^/]+\/sheets\/([^/]+)\//;

function cli(args: string[], env: Record<string, string>): ChildProcess & { out: string[] } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'core/cli/main.ts', ...args], {
    cwd: repoRoot,
    // Not restarted in a child (core/jobs/malloc-tuning.ts): the pid killed is the process's own.
    env: withMallocTuning({ ...process.env, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as ChildProcess & { out: string[] };
  child.out = [];
  const feed = (b: Buffer) => child.out.push(...b.toString().split('\n').filter(Boolean));
  child.stdout!.on('data', feed);
  child.stderr!.on('data', feed);
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

describe.skipIf(!server)('objects of a run killed mid-process (PostgreSQL + S3)', () => {
  it('are deleted when the job is claimed again; nothing a row names is touched', async () => {
    const { url, drop } = await createTeamDatabase(server!.url);
    cleanups.push(drop);
    const s3 = await startS3rver();
    cleanups.push(() => s3.dispose());
    const scratch = mkdtempSync(join(tmpdir(), 'bl-attempt-objects-'));
    cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
    const env = {
      ...TEST_QUEUE_ENV,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
      AWS_REGION: 'us-east-1',
      BLUELINE_DATABASE_URL: '',
      BLUELINE_STORAGE_URL: '',
    };
    const storage = `s3://${TEST_BUCKET}/${PREFIX}?endpoint=${s3.endpoint}`;
    const migrated = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'core/cli/main.ts', 'migrate', '--database', url],
      { cwd: repoRoot, env: { ...process.env, ...env }, encoding: 'utf8' },
    );
    expect(migrated.status, migrated.stderr).toBe(0);
    const serve: Served = await startServe(join(scratch, 'api'), {
      args: ['--database', url, '--storage', storage, '--no-workers', '--no-web', '--no-warmup'],
      env,
      timeoutMs: 120_000,
    });
    cleanups.push(() => {
      serve.child.kill('SIGKILL');
    });
    const key = serve.firstKey!;
    const db = await openPostgres(url, { migrate: false, max: 2 });
    cleanups.push(() => db.close());
    const s3c = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: TEST_CREDENTIALS,
    });
    cleanups.push(() => s3c.destroy());
    const bucketKeys = async (): Promise<string[]> => {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const r = await s3c.send(
          new ListObjectsV2Command({
            Bucket: TEST_BUCKET,
            Prefix: `${PREFIX}/`,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        );
        for (const o of r.Contents ?? []) out.push(o.Key!.slice(PREFIX.length + 1));
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
      return out;
    };
    const sheetRows = async () =>
      new Set(
        ((await db.prepare('SELECT id FROM sheets').all()) as { id: string }[]).map((r) => r.id),
      );
    /** Sheet prefixes in the bucket whose sheet has no row. */
    const unnamedSheetPrefixes = async (): Promise<Set<string>> => {
      const keys = await bucketKeys();
      const rows = await sheetRows();
      const out = new Set<string>();
      for (const k of keys) {
        const m = SHEET_KEY.exec(k);
        if (m && !rows.has(idFromKeySegment(m[1]!))) out.add(m[0]);
      }
      return out;
    };

    const project = await request(serve, 'POST', '/v1/projects', {
      key,
      body: { name: 'Attempt objects' },
    });
    expect(project.status).toBe(201);
    let n = 0;
    const worker = () =>
      cli(
        [
          'worker',
          '--database',
          url,
          '--storage',
          storage,
          '--no-warmup',
          '--data-dir',
          join(scratch, `w${++n}`),
        ],
        env,
      );
    const first = worker();
    const name = '20130718_barber-house_set_9-sheets.pdf';
    const up = await uploadDrawing(
      serve,
      key,
      project.body.id,
      readFileSync(join(FIXTURES, name)),
      name,
    );
    expect(up.drawing?.status, JSON.stringify(up.drawing?.body ?? up.file.body)).toBe(201);
    const jobId = up.drawing!.body.job_id as string;
    const job = async () =>
      (await request(serve, 'GET', `/v1/jobs/${jobId}`, { key })).body as {
        status: string;
        progress: { completed: number; total: number };
      };

    // Freeze the worker when a sheet's objects are up without their row; kill it if they still
    // are (read again once it is dead: a commit it sent just before the freeze counts as named).
    let dead = new Set<string>();
    let current = first;
    for (let tries = 0; dead.size === 0; tries++) {
      if (tries > 0) current = worker();
      expect(tries, 'a worker killed between its objects and their row').toBeLessThan(5);
      const w = current;
      await until(
        "a sheet's objects stored without its row",
        async () => {
          if ((await unnamedSheetPrefixes()).size === 0) return undefined;
          w.kill('SIGSTOP');
          if ((await unnamedSheetPrefixes()).size === 0) {
            w.kill('SIGCONT');
            return undefined;
          }
          w.kill('SIGKILL');
          await new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)));
          return true;
        },
        600_000,
        20,
      );
      dead = await unnamedSheetPrefixes();
    }
    const atKill = await job();
    expect(atKill.status).not.toBe('Completed');
    const deadKeys = (await bucketKeys()).filter((k) => [...dead].some((p) => k.startsWith(p)));
    expect(deadKeys.length).toBeGreaterThan(0);
    console.log(
      `killed at ${atKill.progress.completed}/${atKill.progress.total}: ${dead.size} unnamed sheet prefix(es), ${deadKeys.length} object(s)`,
    );

    worker();
    const done = await until(
      'the process job to end',
      async () => {
        const j = await job();
        return ['Completed', 'Failed', 'Canceled'].includes(j.status) ? j : undefined;
      },
      900_000,
      500,
    );
    expect(done.status).toBe('Completed');

    const keys = await bucketKeys();
    expect(keys.filter((k) => [...dead].some((p) => k.startsWith(p)))).toEqual([]);
    expect([...(await unnamedSheetPrefixes())]).toEqual([]);
    const inBucket = new Set(keys);
    const named = await referencedObjectKeys(db);
    expect(named.filter((k) => !inBucket.has(k))).toEqual([]);
    const sheets = (await db
      .prepare('SELECT page_index, count(*)::int AS n FROM sheets GROUP BY page_index')
      .all()) as { n: number }[];
    expect(sheets).toHaveLength(9);
    expect(sheets.every((s) => s.n === 1)).toBe(true);
    expect(
      Number(
        (
          (await db.prepare('SELECT count(*)::int AS n FROM job_attempt_objects').get()) as {
            n: number;
          }
        ).n,
      ),
    ).toBe(0);
  }, 1_200_000);
});
