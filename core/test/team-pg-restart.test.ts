// Team mode with PostgreSQL restarted mid-run (issue 21, Must show: "PostgreSQL restarted mid-run —
// workers and SSE recover"). In the PostgreSQL + S3 lane of `npm test` (it needs the PostgreSQL
// binaries, hence BLUELINE_TEST_DATABASE), on a throwaway cluster of its own — the restart must
// not break the other test files, which share the lane's cluster.
//
// The processes of a team server: the API is `blueline serve --database … --storage … --no-workers`
// (a child process, as deployed); two worker processes (team-worker.test-support.ts: Blueline's
// job runner with the BullMQ dispatcher and the LISTEN feed, running synthetic `steps` jobs that
// record each step behind the fencing check and each terminal status in test tables). 200 short
// jobs and 3 long ones; SSE clients follow the long ones through the API; once each long job has
// stored a step, `pg_ctl restart -m fast` ends every connection of every process. Then:
// - every job ends Completed, terminal exactly once (one row of the terminal hook, where credits
//   settle), each step stored exactly once;
// - both workers and the API process are alive, and the API still serves;
// - each SSE client connected before the restart hears events after it and ends with Completed —
//   on the same connection, or after a clean end by reconnecting with Last-Event-ID (the stream
//   starts with the job as it is, so nothing is missed); a client connecting after the restart
//   hears the job too.
// Waits are on states with generous bounds (the machine may be loaded); no timing is asserted.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startS3rver,
  TEST_BUCKET,
  TEST_CREDENTIALS,
  type S3rverProcess,
} from '../blobs/s3rver.test-support';
import { createBullmqDispatcher, migrateQueueSchema } from '../jobs/bullmq-dispatcher';
import { createPgJobFeed } from '../jobs/pg-job-events';
import { createWorkerPool } from '../jobs/worker-pool';
import { createTeamTables, createTeamTestRunner } from '../jobs/team.test-support';
import {
  createTeamDatabase,
  spawnTeamWorker,
  TEST_QUEUE_ENV,
  until,
  type SpawnedWorker,
} from '../jobs/team.process.test-support';
import { openPostgres, type PgDb } from '../store/pg-db';
import { request, startServe, type Served } from '../../reliability/lib';
import { PG_URL } from './backends';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CLUSTER = path.join(ROOT, 'scripts/pg-test-cluster.sh');
const SHORT_JOBS = 200;
const LONG_JOBS = 3;
const LONG = { steps: 40, ms: 300 };

if (!PG_URL)
  console.warn(
    `team-pg-restart.test.ts: BLUELINE_TEST_DATABASE is not set; skipped here — it runs in the PostgreSQL + S3 lane (npm run test:team)${process.env.CI === 'true' ? ', which CI runs' : ''}.`,
  );

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function pgBin(): string {
  return spawnSync('bash', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1'], {
    encoding: 'utf8',
  }).stdout.trim();
}

/** Runs `cmd` as the cluster's owner (`postgres` when we are root: initdb refuses root). */
function asOwner(cmd: string) {
  return process.getuid?.() === 0
    ? spawnSync('su', ['postgres', '-s', '/bin/bash', '-c', cmd], { encoding: 'utf8' })
    : spawnSync('bash', ['-c', cmd], { encoding: 'utf8' });
}

interface SseEvent {
  id?: string;
  status: string;
  completed: number;
  at: number;
}

/**
 * A client of GET /v1/jobs/{id}/events that follows the job to a terminal status: when the server
 * ends the stream earlier, it connects again with Last-Event-ID, as EventSource does.
 */
function followJob(served: Served, key: string, jobId: string) {
  const events: SseEvent[] = [];
  let reconnects = 0;
  let lastId: string | undefined;
  const done = new Promise<void>((resolve, reject) => {
    const connect = () => {
      const headers: Record<string, string> = {
        authorization: `Bearer ${key}`,
        accept: 'text/event-stream',
        ...(lastId ? { 'last-event-id': lastId } : {}),
      };
      const req = https.request(
        new URL(`/v1/jobs/${jobId}/events`, served.origin),
        { agent: served.agent, headers },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new Error(`SSE ${jobId}: HTTP ${res.statusCode}`));
            return;
          }
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buf += chunk;
            let i: number;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              let id: string | undefined;
              let data = '';
              for (const line of block.split('\n')) {
                if (line.startsWith('id: ')) id = line.slice(4);
                else if (line.startsWith('data: ')) data += line.slice(6);
              }
              if (!data) continue; // a keep-alive comment
              const job = JSON.parse(data) as {
                status: string;
                progress: { completed: number };
              };
              if (id) lastId = id;
              events.push({
                ...(id ? { id } : {}),
                status: job.status,
                completed: job.progress.completed,
                at: Date.now(),
              });
            }
          });
          res.on('end', () => {
            if (['Completed', 'Failed', 'Canceled'].includes(events.at(-1)?.status ?? ''))
              resolve();
            else {
              reconnects++;
              setTimeout(connect, 500);
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', () => {
        reconnects++;
        setTimeout(connect, 500);
      });
      req.end();
    };
    connect();
  });
  return {
    events,
    done,
    get reconnects() {
      return reconnects;
    },
  };
}

describe.skipIf(!PG_URL)('team mode: PostgreSQL restarted mid-run', () => {
  const dir = `/tmp/bl-pg-restart-${process.pid}-${randomBytes(3).toString('hex')}`;
  let base: string;
  let url: string;
  let s3: S3rverProcess;
  let scratch: string;
  let served: Served | undefined;
  const workers: SpawnedWorker[] = [];

  beforeAll(async () => {
    const port = await freePort();
    const up = spawnSync('bash', [CLUSTER, 'start', dir, String(port)], { encoding: 'utf8' });
    if (up.status !== 0) throw new Error(`pg-test-cluster.sh start: ${up.stderr}`);
    base = up.stdout.trim().split('\n').pop()!;
    url = (await createTeamDatabase(base)).url;
    // `blueline migrate` does the same: the store's migrations, then the queue's schema.
    const db = await openPostgres(url, { max: 2 });
    await migrateQueueSchema(url);
    await createTeamTables(db);
    await db.close();
    s3 = await startS3rver();
    scratch = mkdtempSync(path.join(tmpdir(), 'blueline-pg-restart-'));
  }, 120_000);

  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    if (served) {
      served.child.kill('SIGKILL');
      await served.exited;
    }
    await s3?.dispose();
    spawnSync('bash', [CLUSTER, 'stop', dir]);
    rmSync(dir, { recursive: true, force: true });
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }, 120_000);

  it('every job ends Completed exactly once; workers, the API and its SSE clients carry on', async () => {
    served = await startServe(path.join(scratch, 'api'), {
      args: [
        '--database',
        url,
        '--storage',
        `s3://${TEST_BUCKET}/restart?endpoint=${s3.endpoint}`,
        '--no-workers',
        '--no-web',
        '--no-warmup',
      ],
      env: {
        ...TEST_QUEUE_ENV,
        AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
        AWS_REGION: 'us-east-1',
        BLUELINE_DATABASE_URL: '',
        BLUELINE_STORAGE_URL: '',
      },
      timeoutMs: 180_000,
    });
    const key = served.firstKey!;
    expect(key).toMatch(/^sk_/);
    for (let i = 0; i < 2; i++) workers.push(spawnTeamWorker(url));
    await Promise.all(workers.map((w) => w.waitFor((l) => l.ready !== undefined, 180_000)));

    // Jobs of the API key's organization, enqueued as an API process does (row, then the queue).
    let db: PgDb = await openPostgres(url, { migrate: false, max: 2 });
    const org = (
      (await db.prepare(`SELECT id FROM organizations WHERE name = 'Default'`).get()) as {
        id: string;
      }
    ).id;
    const producer = createTeamTestRunner({
      db,
      pool: createWorkerPool({ size: 1 }),
      dispatcher: createBullmqDispatcher({ url, poolMax: 2 }),
      feed: createPgJobFeed(url),
      concurrency: 1,
    });
    await producer.start({ work: false });
    const enqueue = async (target: string, payload: { steps: number; ms: number }) =>
      (
        await producer.enqueue({
          organization_id: org,
          type: 'steps',
          target_type: 'drawing',
          target_id: target,
          payload,
        })
      ).id;
    const long: string[] = [];
    for (let i = 0; i < LONG_JOBS; i++) long.push(await enqueue(`long${i}`, LONG));
    const ids = [...long];
    for (let i = 0; i < SHORT_JOBS; i++) ids.push(await enqueue(`s${i}`, { steps: 2, ms: 20 }));
    // This process holds no connection through the restart (it is no part of the server).
    await producer.stop();
    await db.close();

    // SSE clients follow the long jobs through the API; the restart comes once each has a step.
    const followers = long.map((id) => followJob(served!, key, id));
    await until(
      'every long job to store a step',
      async () => followers.every((f) => f.events.some((e) => e.completed >= 1)),
      300_000,
    );
    const pgbin = pgBin();
    // The restarted server must not inherit our pipes (spawnSync would wait for it to exit).
    const restart = asOwner(
      `'${pgbin}/pg_ctl' -D '${dir}/data' -l '${dir}/log' -m fast -w restart > /dev/null 2>&1`,
    );
    expect(restart.status, restart.stderr).toBe(0);
    const restartedAt = Date.now();
    const before = followers.map((f) => f.events.length);

    db = await until(
      'PostgreSQL to accept connections again',
      async () => {
        try {
          return await openPostgres(url, { migrate: false, max: 2 });
        } catch {
          return undefined;
        }
      },
      60_000,
    );
    // A client that connects after the restart hears the job too.
    const late = followJob(served, key, long[LONG_JOBS - 1]!);
    try {
      const open = async () =>
        Number(
          (
            (await db
              .prepare(`SELECT count(*) AS n FROM jobs WHERE status IN ('Queued','Started')`)
              .get()) as { n: number }
          ).n,
        );
      await until('every job to end after the restart', async () => (await open()) === 0, 600_000);
      const rows = (await db.prepare('SELECT id, status FROM jobs').all()) as {
        id: string;
        status: string;
      }[];
      expect(rows).toHaveLength(ids.length);
      expect(rows.filter((r) => r.status !== 'Completed')).toEqual([]);
      const terminal = (await db
        .prepare('SELECT job_id, count(*) AS n FROM team_terminal GROUP BY job_id')
        .all()) as { job_id: string; n: number }[];
      expect(terminal).toHaveLength(ids.length);
      expect(terminal.filter((t) => Number(t.n) !== 1)).toEqual([]);
      const steps = (await db
        .prepare(
          'SELECT job_id, count(*) AS n, count(DISTINCT step) AS d FROM team_effects GROUP BY job_id',
        )
        .all()) as { job_id: string; n: number; d: number }[];
      const stepsOf = new Map(steps.map((s) => [s.job_id, s]));
      for (const id of ids) {
        const want = long.includes(id) ? LONG.steps : 2;
        expect(Number(stepsOf.get(id)?.n), id).toBe(want);
        expect(Number(stepsOf.get(id)?.d), id).toBe(want);
      }
    } finally {
      await db.close();
    }

    // The SSE clients: events after the restart, ending with Completed.
    await Promise.all([...followers, late].map((f) => f.done));
    const report = followers.map((f, i) => ({
      events: f.events.length,
      after_restart: f.events.filter((e) => e.at > restartedAt).length,
      reconnects: f.reconnects,
      last: f.events.at(-1)?.status,
      before_restart: before[i],
    }));
    for (const f of [...followers, late]) {
      expect(
        f.events.filter((e) => e.at > restartedAt).length,
        JSON.stringify(report),
      ).toBeGreaterThan(0);
      expect(f.events.at(-1)!.status).toBe('Completed');
      expect(f.events.at(-1)!.completed).toBe(LONG.steps);
      // Progress never goes backwards across the restart (or a reconnection).
      const progress = f.events.map((e) => e.completed);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
    }

    // Every process of the server is alive; the API still answers from the database.
    for (const w of workers) expect(w.child.exitCode, `worker ${w.pid}`).toBeNull();
    expect(served.child.exitCode).toBeNull();
    const job = await request(served, 'GET', `/v1/jobs/${long[0]}`, { key });
    expect(job.status).toBe(200);
    expect(job.body.status).toBe('Completed');
    console.log(
      `team-pg-restart: ${JSON.stringify({ jobs: ids.length, sse_clients: report, late_client_events: late.events.length, workers_alive: workers.filter((w) => w.child.exitCode === null).length })}`,
    );
  }, 900_000);
});
