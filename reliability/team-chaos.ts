// Team mode under load and failures (issue 21, item 5), loopback only, bounded in time:
//
// 1. load: 4 worker processes (core/jobs/team-worker.test-support.ts) and ~1,000 mixed synthetic
//    jobs (steps jobs, parents with children, some canceled from the API process meanwhile), while
//    a worker is SIGKILLed and replaced every few seconds. Then: every job terminal, each exactly
//    once (one row of the terminal hook, where credits settle); every Completed steps job stored
//    each step exactly once (fenced writes); no step stored twice anywhere.
// 2. fixtures: the real command line — `blueline migrate --database`, `blueline serve --database
//    --storage --no-workers`, two `blueline worker` processes — on PostgreSQL and s3rver. The beam
//    proposal pair is processed and compared; all workers are SIGKILLed mid-`process` and again
//    mid-`compare`, and new ones started. Then: every job Completed, one sheet per (drawing,
//    page), one overlay per (job, block pair), every object a row names is in the bucket; objects
//    no row names (left by a killed page or pair) are counted and reported.
//
// PostgreSQL: $BLUELINE_TEST_DATABASE, else a throwaway cluster (scripts/pg-test-cluster.sh).
// TEAM_CHAOS_ONLY=load|fixtures runs one part; TEAM_CHAOS_JOBS sets the load's job count (1000).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { FIXTURES, repoRoot, request, startServe, uploadDrawing, type Served } from './lib';
import { startS3rver, TEST_BUCKET, TEST_CREDENTIALS } from '../core/blobs/s3rver.test-support';
import {
  createTeamDatabase,
  spawnTeamWorker,
  TEST_QUEUE_ENV,
  until,
  type SpawnedWorker,
} from '../core/jobs/team.process.test-support';
import { openPostgres } from '../core/store/pg-db';
import { migrateQueueSchema, createBullmqDispatcher } from '../core/jobs/bullmq-dispatcher';
import { createPgJobFeed } from '../core/jobs/pg-job-events';
import { createWorkerPool } from '../core/jobs/worker-pool';
import { createTeamTables, createTeamTestRunner } from '../core/jobs/team.test-support';
import { referencedObjectKeys } from '../core/store/repositories/maintenance.repository';
import { surviveConnectionLoss } from '../core/jobs/pg-connection-loss';
import { withMallocTuning } from '../core/jobs/malloc-tuning';

const failures: string[] = [];
const fail = (m: string) => {
  failures.push(m);
  console.error(`FAIL ${m}`);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pgServer(): { url: string; stop(): void } {
  if (process.env.BLUELINE_TEST_DATABASE)
    return { url: process.env.BLUELINE_TEST_DATABASE, stop() {} };
  const dir = `/tmp/bl-pg-chaos-${process.pid}`;
  const script = join(repoRoot, 'scripts/pg-test-cluster.sh');
  const url = spawnSync('bash', [script, 'start', dir, String(56000 + (process.pid % 3000))], {
    encoding: 'utf8',
  }).stdout.trim();
  return { url, stop: () => void spawnSync('bash', [script, 'stop', dir]) };
}

/** This process as the API on a fresh team database: the queue's schema, the test tables, and a
 * runner that enqueues jobs and follows their events. */
async function apiProcess(url: string) {
  const db = await openPostgres(url, { max: 4 });
  await migrateQueueSchema(url);
  await createTeamTables(db);
  const api = createTeamTestRunner({
    db,
    pool: createWorkerPool({ size: 1 }),
    dispatcher: createBullmqDispatcher({ url, poolMax: 3 }),
    feed: createPgJobFeed(url),
    concurrency: 1,
    sweepIntervalMs: 2000,
  });
  return { db, api };
}

async function load(server: string): Promise<void> {
  const N = Number(process.env.TEAM_CHAOS_JOBS ?? 1000);
  const { url, drop } = await createTeamDatabase(server);
  const { db, api } = await apiProcess(url);
  const completedEvents = new Map<string, number>();
  api.events.on('job', (j) => {
    if (j.status === 'Completed') completedEvents.set(j.id, (completedEvents.get(j.id) ?? 0) + 1);
  });
  await api.start({ work: false });
  const workers: SpawnedWorker[] = [];
  const spawnOne = () => {
    const w = spawnTeamWorker(url, { TEAM_CONCURRENCY: '4' });
    workers.push(w);
    return w;
  };
  const live = () =>
    workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  for (let i = 0; i < 4; i++) spawnOne();
  await Promise.all(workers.map((w) => w.waitFor((l) => l.ready !== undefined, 120_000)));
  const t0 = Date.now();
  const ids: string[] = [];
  const parents = Math.round(N / 50); // each with 5 children: N/50 * 6 rows
  const plain = N - parents * 6;
  for (let i = 0; i < plain; i++) {
    const row = await api.enqueue({
      organization_id: 'org_chaos',
      type: 'steps',
      target_type: 'drawing',
      target_id: `d${i}`,
      payload: { steps: 1 + (i % 3), ms: 5 + (i % 4) * 10 },
    });
    ids.push(row.id);
  }
  for (let i = 0; i < parents; i++) {
    const row = await api.enqueue({
      organization_id: 'org_chaos',
      type: 'parent',
      target_type: 'drawing',
      target_id: `p${i}`,
      payload: { children: 5, steps: 1, ms: 10 },
    });
    ids.push(row.id);
  }
  console.log(
    `load: ${ids.length} jobs enqueued in ${Date.now() - t0} ms (parents add ${parents * 5} children)`,
  );
  // Chaos: a worker SIGKILLed and replaced every 4 s; 30 jobs canceled from the API meanwhile.
  let kills = 0;
  let canceled = 0;
  const chaos = (async () => {
    for (let round = 0; round < 6; round++) {
      await sleep(4000);
      const open = Number(
        (
          (await db
            .prepare(`SELECT count(*) AS n FROM jobs WHERE status IN ('Queued','Started')`)
            .get()) as { n: number }
        ).n,
      );
      if (open === 0) break;
      const victims = live();
      const v = victims[Math.floor(Math.random() * victims.length)];
      if (v) {
        v.kill('SIGKILL');
        kills++;
        spawnOne();
      }
      for (let k = 0; k < 5; k++) {
        const id = ids[Math.floor(Math.random() * ids.length)]!;
        try {
          await api.cancel('org_chaos', id);
          canceled++;
        } catch {
          // already terminal
        }
      }
    }
  })();
  await until(
    'every job to end',
    async () =>
      Number(
        (
          (await db
            .prepare(`SELECT count(*) AS n FROM jobs WHERE status IN ('Queued','Started')`)
            .get()) as { n: number }
        ).n,
      ) === 0,
    600_000,
    500,
  );
  const seconds = (Date.now() - t0) / 1000;
  await chaos;
  const rows = (await db.prepare('SELECT id, type, status, attempts, payload FROM jobs').all()) as {
    id: string;
    type: string;
    status: string;
    attempts: number;
    payload: string;
  }[];
  const terminalCount = new Map<string, number>();
  for (const r of (await db.prepare('SELECT job_id FROM team_terminal').all()) as {
    job_id: string;
  }[])
    terminalCount.set(r.job_id, (terminalCount.get(r.job_id) ?? 0) + 1);
  const effects = new Map<string, number[]>();
  for (const e of (await db.prepare('SELECT job_id, step FROM team_effects').all()) as {
    job_id: string;
    step: number;
  }[]) {
    const list = effects.get(e.job_id) ?? [];
    list.push(Number(e.step));
    effects.set(e.job_id, list);
  }
  const byStatus: Record<string, number> = {};
  let maxAttempts = 0;
  let reclaimed = 0;
  for (const r of rows) {
    byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    maxAttempts = Math.max(maxAttempts, Number(r.attempts));
    if (Number(r.attempts) > 1) reclaimed++;
    if (terminalCount.get(r.id) !== 1)
      fail(`load: job ${r.id} (${r.status}) has ${terminalCount.get(r.id) ?? 0} terminal rows`);
    if ((completedEvents.get(r.id) ?? 0) > 1)
      fail(`load: job ${r.id} announced Completed ${completedEvents.get(r.id)} times`);
    const steps = effects.get(r.id) ?? [];
    if (new Set(steps).size !== steps.length)
      fail(`load: job ${r.id} stored a step twice: ${steps.join(',')}`);
    if (r.type === 'steps' && r.status === 'Completed') {
      const want = (JSON.parse(r.payload) as { steps: number }).steps;
      if (steps.length !== want)
        fail(`load: job ${r.id} Completed with ${steps.length} of ${want} steps`);
    }
    if (r.status === 'Failed') fail(`load: job ${r.id} Failed`);
  }
  console.log(
    `load summary ${JSON.stringify({ jobs: rows.length, seconds, jobs_per_s: Math.round((rows.length / seconds) * 10) / 10, by_status: byStatus, worker_kills: kills, cancels: canceled, jobs_claimed_more_than_once: reclaimed, max_attempts: maxAttempts, workers_started: workers.length })}`,
  );
  for (const w of workers) w.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  await api.stop();
  await db.close();
  await drop();
}

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
  return child;
}

async function fixtures(server: string): Promise<void> {
  const { url, drop } = await createTeamDatabase(server);
  const s3 = await startS3rver();
  const scratch = mkdtempSync(join(tmpdir(), 'bl-team-chaos-'));
  const env = {
    ...TEST_QUEUE_ENV,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    BLUELINE_DATABASE_URL: '',
    BLUELINE_STORAGE_URL: '',
  };
  const storage = `s3://${TEST_BUCKET}/chaos?endpoint=${s3.endpoint}`;
  const refused = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      'core/cli/main.ts',
      'worker',
      '--database',
      url,
      '--storage',
      storage,
      '--data-dir',
      join(scratch, 'w0'),
    ],
    { cwd: repoRoot, env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  console.log(
    `worker on an unmigrated database: exit ${refused.status}: ${refused.stderr.trim().split('\n').pop()}`,
  );
  if (refused.status !== 3)
    fail(`worker on an unmigrated database exited ${refused.status}, not 3`);
  const migrated = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'core/cli/main.ts', 'migrate', '--database', url],
    { cwd: repoRoot, env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  console.log(`migrate: exit ${migrated.status}: ${migrated.stdout.trim()}`);
  if (migrated.status !== 0) fail(`migrate exited ${migrated.status}: ${migrated.stderr}`);
  let serve: Served | undefined;
  const workers: (ChildProcess & { out: string[] })[] = [];
  let n = 0;
  const startWorkers = (k: number) => {
    for (let i = 0; i < k; i++)
      workers.push(
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
        ),
      );
  };
  const killWorkers = async () => {
    const alive = workers.filter((w) => w.exitCode === null && w.signalCode === null);
    for (const w of alive) w.kill('SIGKILL');
    await Promise.all(
      alive.map(
        (w) =>
          new Promise((r) =>
            w.exitCode !== null || w.signalCode !== null ? r(null) : w.once('exit', r),
          ),
      ),
    );
    return alive.length;
  };
  try {
    serve = await startServe(join(scratch, 'api'), {
      args: ['--database', url, '--storage', storage, '--no-workers', '--no-web', '--no-warmup'],
      env,
      timeoutMs: 120_000,
    });
    const key = serve.firstKey!;
    startWorkers(2);
    const project = await request(serve, 'POST', '/v1/projects', {
      key,
      body: { name: 'Team chaos' },
    });
    const names = ['20190601_beam-proposal_5-sheets.pdf', '20190602_beam-proposal_5-sheets.pdf'];
    const drawings: { id: string; job_id: string }[] = [];
    for (const name of names) {
      const up = await uploadDrawing(
        serve,
        key,
        project.body.id,
        readFileSync(join(FIXTURES, name)),
        name,
      );
      if (!up.drawing || up.drawing.status >= 300)
        throw new Error(`upload ${name}: ${JSON.stringify(up.drawing?.body ?? up.file.body)}`);
      drawings.push(up.drawing.body);
    }
    const job = async (id: string) =>
      (await request(serve!, 'GET', `/v1/jobs/${id}`, { key })).body as {
        status: string;
        progress: { completed: number; total: number };
        attempts?: number;
      };
    // Mid-process: once a page of the first set is stored, every worker dies.
    await until(
      'a stored page',
      async () => (await job(drawings[0]!.job_id)).progress.completed >= 1,
      600_000,
      300,
    );
    const killed1 = await killWorkers();
    const stateAtKill = await job(drawings[0]!.job_id);
    console.log(
      `mid-process: SIGKILLed ${killed1} workers at ${stateAtKill.progress.completed}/${stateAtKill.progress.total} (${stateAtKill.status})`,
    );
    startWorkers(2);
    for (const d of drawings) {
      const j = await until(
        `process job ${d.job_id}`,
        async () => {
          const r = await job(d.job_id);
          return ['Completed', 'Failed', 'Canceled'].includes(r.status) ? r : undefined;
        },
        900_000,
        500,
      );
      if (j.status !== 'Completed') fail(`process job ${d.job_id} ended ${j.status}`);
    }
    const cmp = await request(serve, 'POST', `/v1/drawings/${drawings[1]!.id}/compare`, {
      key,
      body: { compare_to: drawings[0]!.id },
    });
    if (cmp.status !== 202) throw new Error(`compare: ${cmp.status} ${JSON.stringify(cmp.body)}`);
    const cmpId = cmp.body.job_id as string;
    await until(
      'a compared pair',
      async () => (await job(cmpId)).progress.completed >= 1,
      600_000,
      300,
    );
    const killed2 = await killWorkers();
    const cmpAtKill = await job(cmpId);
    console.log(
      `mid-compare: SIGKILLed ${killed2} workers at ${cmpAtKill.progress.completed}/${cmpAtKill.progress.total} (${cmpAtKill.status})`,
    );
    startWorkers(2);
    const cmpDone = await until(
      'the compare job',
      async () => {
        const r = await job(cmpId);
        return ['Completed', 'Failed', 'Canceled'].includes(r.status) ? r : undefined;
      },
      900_000,
      500,
    );
    if (cmpDone.status !== 'Completed') fail(`compare job ended ${cmpDone.status}`);
    // The store: one sheet per page, one overlay per pair, every named object present.
    const db = await openPostgres(url, { migrate: false, max: 2 });
    const dupSheets = await db
      .prepare(
        'SELECT drawing_id, page_index, count(*) AS n FROM sheets GROUP BY drawing_id, page_index HAVING count(*) > 1',
      )
      .all();
    const dupOverlays = await db
      .prepare(
        'SELECT job_id, block_a_id, block_b_id, count(*) AS n FROM overlays GROUP BY job_id, block_a_id, block_b_id HAVING count(*) > 1',
      )
      .all();
    const sheets = Number(
      ((await db.prepare('SELECT count(*) AS n FROM sheets').get()) as { n: number }).n,
    );
    const overlays = Number(
      ((await db.prepare('SELECT count(*) AS n FROM overlays').get()) as { n: number }).n,
    );
    const attempts = (await db
      .prepare(
        `SELECT type, attempts, status FROM jobs WHERE parent_id IS NULL ORDER BY created_at`,
      )
      .all()) as { type: string; attempts: number; status: string }[];
    // Credits charged once: one ledger row at most per job, each job's charge equal to its ledger
    // rows, nothing left reserved, and every organization's ledger sum = balance + reserved.
    const ledgerTwice = await db
      .prepare(
        'SELECT job_id, count(*) AS n FROM credit_ledger WHERE job_id IS NOT NULL GROUP BY job_id HAVING count(*) > 1',
      )
      .all();
    const chargeMismatch = await db
      .prepare(
        `SELECT j.id, j.credits_charged AS charged, coalesce(-sum(l.amount), 0) AS ledger
         FROM jobs j LEFT JOIN credit_ledger l ON l.job_id = j.id
         GROUP BY j.id, j.credits_charged HAVING j.credits_charged <> coalesce(-sum(l.amount), 0)`,
      )
      .all();
    const books = (await db
      .prepare(
        `SELECT o.id, o.credit_balance AS balance, o.credit_reserved AS reserved,
           (SELECT coalesce(sum(l.amount), 0) FROM credit_ledger l WHERE l.organization_id = o.id) AS ledger
         FROM organizations o`,
      )
      .all()) as { id: string; balance: number; reserved: number; ledger: number }[];
    const charged = Number(
      (
        (await db.prepare('SELECT coalesce(sum(credits_charged), 0) AS n FROM jobs').get()) as {
          n: number;
        }
      ).n,
    );
    if (ledgerTwice.length) fail(`credits charged twice: ${JSON.stringify(ledgerTwice)}`);
    if (chargeMismatch.length)
      fail(`job charge differs from its ledger rows: ${JSON.stringify(chargeMismatch)}`);
    for (const o of books) {
      if (Number(o.reserved) !== 0) fail(`organization ${o.id} still holds ${o.reserved} reserved`);
      if (Number(o.ledger) !== Number(o.balance) + Number(o.reserved))
        fail(
          `organization ${o.id}: ledger ${o.ledger} ≠ balance ${o.balance} + reserved ${o.reserved}`,
        );
    }
    if (charged <= 0) fail('no credits were charged: the check above proved nothing');
    console.log(
      `credits: ${charged} charged over the jobs, ledger rows once per job, books balanced for ${books.length} organizations`,
    );
    const referenced = new Set(await referencedObjectKeys(db));
    await db.close();
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: TEST_CREDENTIALS,
    });
    const inBucket = new Set<string>();
    let token: string | undefined;
    do {
      const r = await client.send(
        new ListObjectsV2Command({
          Bucket: TEST_BUCKET,
          Prefix: 'chaos/',
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const o of r.Contents ?? []) inBucket.add(o.Key!.slice('chaos/'.length));
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    client.destroy();
    const missing = [...referenced].filter((k) => !inBucket.has(k));
    const unreferenced = [...inBucket].filter((k) => !referenced.has(k));
    if (dupSheets.length) fail(`duplicate sheets: ${JSON.stringify(dupSheets)}`);
    if (dupOverlays.length) fail(`duplicate overlays: ${JSON.stringify(dupOverlays)}`);
    if (missing.length)
      fail(`objects named by rows but missing: ${missing.slice(0, 5).join(', ')}`);
    console.log(
      `fixtures summary ${JSON.stringify({ sheets, overlays, duplicate_sheets: dupSheets.length, duplicate_overlays: dupOverlays.length, objects_in_bucket: inBucket.size, objects_named_by_rows: referenced.size, named_but_missing: missing.length, unreferenced_objects: unreferenced.length, unreferenced_examples: unreferenced.slice(0, 3), root_jobs: attempts })}`,
    );
  } finally {
    await killWorkers();
    if (failures.length > 0)
      for (const w of workers)
        for (const l of w.out.filter((x) => /error|fail/i.test(x)).slice(0, 20))
          console.error(`worker ${w.pid}: ${l.slice(0, 2000)}`);
    if (serve) {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    await s3.dispose();
    await drop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * 3. pg-restart: a throwaway cluster of its own, 2 workers, 300 steps jobs; PostgreSQL restarted
 * (`pg_ctl restart -m fast`) while they run. Then: every job terminal exactly once, and the API
 * process still hears job changes (its feed reconnected): Completed events of jobs that ended
 * after the restart.
 */
async function pgRestart(): Promise<void> {
  // This process is the API here: it survives the restart as `serve` does.
  surviveConnectionLoss({
    info() {},
    warn: (o, m) => console.log(`api: ${m} ${JSON.stringify(o)}`),
    error() {},
  });
  const dir = `/tmp/bl-pg-restart-${process.pid}`;
  const script = join(repoRoot, 'scripts/pg-test-cluster.sh');
  const started = spawnSync('bash', [script, 'start', dir, String(58000 + (process.pid % 1000))], {
    encoding: 'utf8',
  });
  const base = started.stdout.trim();
  if (!base) throw new Error(`pg-test-cluster.sh start: ${started.stderr}`);
  const pgbin = spawnSync('bash', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1'], {
    encoding: 'utf8',
  }).stdout.trim();
  const asOwner = (cmd: string) =>
    process.getuid?.() === 0
      ? spawnSync('su', ['postgres', '-s', '/bin/bash', '-c', cmd], { encoding: 'utf8' })
      : spawnSync('bash', ['-c', cmd], { encoding: 'utf8' });
  try {
    const { url } = await createTeamDatabase(base);
    const { db, api } = await apiProcess(url);
    let restartedAt = Infinity;
    const completedAfter = new Set<string>();
    api.events.on('job', (j) => {
      if (j.status === 'Completed' && Date.now() > restartedAt) completedAfter.add(j.id);
    });
    await api.start({ work: false });
    const workers = [spawnTeamWorker(url), spawnTeamWorker(url)];
    await Promise.all(workers.map((w) => w.waitFor((l) => l.ready !== undefined, 120_000)));
    const ids: string[] = [];
    for (let i = 0; i < 300; i++)
      ids.push(
        (
          await api.enqueue({
            organization_id: 'org_restart',
            type: 'steps',
            target_type: 'drawing',
            target_id: `r${i}`,
            payload: { steps: 2, ms: 40 },
          })
        ).id,
      );
    const open = async () =>
      Number(
        (
          (await db
            .prepare(`SELECT count(*) AS n FROM jobs WHERE status IN ('Queued','Started')`)
            .get()) as { n: number }
        ).n,
      );
    await until('some jobs done', async () => (await open()) < 250, 300_000, 500);
    restartedAt = Date.now();
    // The restarted server must not inherit our pipes (spawnSync would wait for it to exit).
    const r = asOwner(
      `'${pgbin}/pg_ctl' -D '${dir}/data' -l '${dir}/log' -m fast -w restart > /dev/null 2>&1`,
    );
    console.log(
      `pg-restart: restarted with ${await open().catch(() => -1)} jobs open (pg_ctl exit ${r.status})`,
    );
    if (r.status !== 0) fail(`pg_ctl restart: ${r.stderr}`);
    await until(
      'every job to end after the restart',
      async () => (await open().catch(() => 1)) === 0,
      600_000,
      1000,
    );
    const terminal = (await db
      .prepare('SELECT job_id, count(*) AS n FROM team_terminal GROUP BY job_id')
      .all()) as { job_id: string; n: number }[];
    const once = terminal.filter((t) => Number(t.n) === 1).length;
    if (terminal.length !== ids.length || once !== ids.length)
      fail(
        `pg-restart: ${terminal.length} jobs with terminal rows, ${once} exactly once, of ${ids.length}`,
      );
    const failed = Number(
      (
        (await db.prepare(`SELECT count(*) AS n FROM jobs WHERE status <> 'Completed'`).get()) as {
          n: number;
        }
      ).n,
    );
    if (failed) fail(`pg-restart: ${failed} jobs not Completed`);
    if (completedAfter.size === 0)
      fail('pg-restart: the API heard no Completed event after the restart');
    const alive = workers.filter(
      (w) => w.child.exitCode === null && w.child.signalCode === null,
    ).length;
    console.log(
      `pg-restart summary ${JSON.stringify({ jobs: ids.length, terminal_once: once, not_completed: failed, completed_events_heard_after_restart: completedAfter.size, workers_alive: alive })}`,
    );
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    await api.stop();
    await db.close();
  } finally {
    spawnSync('bash', [script, 'stop', dir]);
    rmSync(dir, { recursive: true, force: true });
  }
}

const only = process.env.TEAM_CHAOS_ONLY;
const server = only === 'pg-restart' ? { url: '', stop() {} } : pgServer();
try {
  if (!only || only === 'load') await load(server.url);
  if (!only || only === 'fixtures') await fixtures(server.url);
  if (!only || only === 'pg-restart') await pgRestart();
} catch (err) {
  fail(`crashed: ${(err as Error).stack ?? String(err)}`);
} finally {
  server.stop();
}
console.log(failures.length === 0 ? 'team-chaos: pass' : `team-chaos: ${failures.length} failures`);
process.exit(failures.length === 0 ? 0 : 1);
