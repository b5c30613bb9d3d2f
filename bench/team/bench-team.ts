// bench/team: a team server's job throughput and queue wait with 1, 2 and 4 `blueline worker`
// processes, and the API's latency meanwhile (issue 21, item 6).
//
// For each worker count: a fresh PostgreSQL database (`blueline migrate`), s3rver on loopback,
// `blueline serve --database --storage --no-workers` (the API) and W `blueline worker` processes
// (--no-warmup, default concurrency = the pool's size). The fixture sets of BENCH_TEAM_SETS are
// uploaded at once (process jobs), then each revision pair is compared (compare jobs, with their
// per-sheet children). Meanwhile one client GETs bench/api's expanded page
// (/v1/overlays?limit=100&expand=…) in a loop. Reported per W: jobs/s of root jobs, p50/p95 queue
// wait (created → started of a job's last claim) and run time, API p50/p99.
//
// On this 2-core machine every worker process shares the same 2 cores with PostgreSQL, s3rver and
// the API: the figures measure the dispatch overhead and contention, not scaling.
//
//   node --import tsx bench/team/bench-team.ts            # W = 1, 2, 4
//   BENCH_TEAM_WORKERS=1,2 node --import tsx bench/team/bench-team.ts
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURES, repoRoot, request, startServe, uploadDrawing } from '../../reliability/lib';
import { startS3rver, TEST_BUCKET, TEST_CREDENTIALS } from '../../core/blobs/s3rver.test-support';
import { createTeamDatabase, until } from '../../core/jobs/team.process.test-support';
import { openPostgres } from '../../core/store/pg-db';

const PAIRS: [string, string][] = [
  ['20190601_beam-proposal_5-sheets.pdf', '20190602_beam-proposal_5-sheets.pdf'],
  [
    '20150115_ASK-003_exterior-west-wall-window-locations.pdf',
    '20150116_ASK-003_exterior-west-wall-window-locations.pdf',
  ],
];
const EXPAND = 'block_a.sheet.drawing,block_b.sheet.drawing,job';
const counts = (process.env.BENCH_TEAM_WORKERS ?? '1,2,4').split(',').map(Number);

function pgServer(): { url: string; stop(): void } {
  if (process.env.BLUELINE_TEST_DATABASE)
    return { url: process.env.BLUELINE_TEST_DATABASE, stop() {} };
  const dir = `/tmp/bl-pg-bench-${process.pid}`;
  const script = join(repoRoot, 'scripts/pg-test-cluster.sh');
  const url = spawnSync('bash', [script, 'start', dir, String(57000 + (process.pid % 2000))], {
    encoding: 'utf8',
  }).stdout.trim();
  return { url, stop: () => void spawnSync('bash', [script, 'stop', dir]) };
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const r1 = (x: number) => Math.round(x * 10) / 10;

async function run(server: string, W: number) {
  const { url, drop } = await createTeamDatabase(server);
  const s3 = await startS3rver();
  const scratch = mkdtempSync(join(tmpdir(), 'bl-bench-team-'));
  const env = {
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_REGION: 'us-east-1',
    BLUELINE_DATABASE_URL: '',
    BLUELINE_STORAGE_URL: '',
  };
  const storage = `s3://${TEST_BUCKET}/bench?endpoint=${s3.endpoint}`;
  const m = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'core/cli/main.ts', 'migrate', '--database', url],
    { cwd: repoRoot, env: { ...process.env, ...env }, encoding: 'utf8' },
  );
  if (m.status !== 0) throw new Error(`migrate: ${m.stderr}`);
  const serve = await startServe(join(scratch, 'api'), {
    args: ['--database', url, '--storage', storage, '--no-workers', '--no-web', '--no-warmup'],
    env,
    timeoutMs: 120_000,
  });
  const workers: ChildProcess[] = [];
  for (let i = 0; i < W; i++)
    workers.push(
      spawn(
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
          '--no-warmup',
          '--data-dir',
          join(scratch, `w${i}`),
        ],
        { cwd: repoRoot, env: { ...process.env, ...env }, stdio: 'ignore' },
      ),
    );
  const key = serve.firstKey!;
  const apiMs: number[] = [];
  let measuring = true;
  const prober = (async () => {
    while (measuring) {
      const t = performance.now();
      const r = await request(serve, 'GET', `/v1/overlays?limit=100&expand=${EXPAND}`, { key });
      if (r.status === 200) apiMs.push(performance.now() - t);
      await new Promise((res) => setTimeout(res, 100));
    }
  })();
  try {
    const project = await request(serve, 'POST', '/v1/projects', {
      key,
      body: { name: `bench W=${W}` },
    });
    const t0 = Date.now();
    const drawings: { id: string; job_id: string }[][] = [];
    for (const pair of PAIRS) {
      const two: { id: string; job_id: string }[] = [];
      for (const name of pair) {
        const up = await uploadDrawing(
          serve,
          key,
          project.body.id,
          readFileSync(join(FIXTURES, name)),
          name,
        );
        if (!up.drawing || up.drawing.status >= 300) throw new Error(`upload ${name}`);
        two.push(up.drawing.body);
      }
      drawings.push(two);
    }
    const ended = async (id: string) => {
      const r = (await request(serve, 'GET', `/v1/jobs/${id}`, { key })).body as { status: string };
      return ['Completed', 'Failed', 'Canceled'].includes(r.status) ? r : undefined;
    };
    const compares: string[] = [];
    for (const [a, b] of drawings) {
      for (const d of [a!, b!])
        await until(`process ${d.job_id}`, () => ended(d.job_id), 1_800_000, 500);
      const c = await request(serve, 'POST', `/v1/drawings/${b!.id}/compare`, {
        key,
        body: { compare_to: a!.id },
      });
      compares.push(c.body.job_id);
    }
    for (const id of compares) await until(`compare ${id}`, () => ended(id), 1_800_000, 500);
    const wall = (Date.now() - t0) / 1000;
    measuring = false;
    await prober;
    const db = await openPostgres(url, { migrate: false, max: 2 });
    const rows = (await db
      .prepare(
        `SELECT type, parent_id, status, attempts, created_at, started_at, finished_at FROM jobs`,
      )
      .all()) as {
      type: string;
      parent_id: string | null;
      status: string;
      created_at: string;
      started_at: string;
      finished_at: string;
    }[];
    await db.close();
    const leaf = rows.filter((r) => r.type === 'process' || r.parent_id !== null);
    const wait = leaf.map((r) => Date.parse(r.started_at) - Date.parse(r.created_at));
    const runMs = leaf.map((r) => Date.parse(r.finished_at) - Date.parse(r.started_at));
    const roots = rows.filter((r) => r.parent_id === null);
    const out = {
      workers: W,
      root_jobs: roots.length,
      all_jobs: rows.length,
      not_completed: rows.filter((r) => r.status !== 'Completed').length,
      wall_s: r1(wall),
      root_jobs_per_min: r1((roots.length / wall) * 60),
      queue_wait_ms: { p50: Math.round(pct(wait, 50)), p95: Math.round(pct(wait, 95)) },
      run_ms: { p50: Math.round(pct(runMs, 50)), p95: Math.round(pct(runMs, 95)) },
      api_expanded_page_ms: { n: apiMs.length, p50: r1(pct(apiMs, 50)), p99: r1(pct(apiMs, 99)) },
    };
    console.log(`bench-team ${JSON.stringify(out)}`);
    return out;
  } finally {
    measuring = false;
    await prober.catch(() => {});
    for (const w of workers) w.kill('SIGTERM');
    await Promise.all(
      workers.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))),
    );
    serve.child.kill('SIGTERM');
    await serve.exited;
    await s3.dispose();
    await drop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

const server = pgServer();
try {
  for (const W of counts) await run(server.url, W);
} finally {
  server.stop();
}
