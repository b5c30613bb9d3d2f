#!/usr/bin/env node
// Runs the steps of deploy/Dockerfile by hand, without Docker (the machine it was written on has
// none), and starts the result against PostgreSQL and an S3-compatible server on loopback:
//
//   node deploy/check-image-steps.mjs --database postgres://postgres@127.0.0.1:54333/postgres \
//     [--node-modules DIR] [--keep]
//
// 1. build stage, in a temp dir: the committed tree (git archive HEAD), `npm ci` (or, with
//    --node-modules, a hard-linked copy of an installed node_modules: no network, no compiling),
//    `npm run build:server`, `npm run build:web`, `npm prune --omit=dev`;
// 2. final stage: package.json, node_modules, out/server, out/web and resources/fonts copied into
//    app/, as the Dockerfile's COPY lines do;
// 3. runs app/out/server/cli.js from there with plain node, the way deploy/README.md says, on a
//    new empty database of that PostgreSQL server and a prefix of s3rver's bucket:
//    `migrate --check` (exit 3) and `worker` (exit 3) before `migrate --database`, then
//    `migrate --database` and `migrate --check` (exit 0); `serve --database … --storage s3://…
//    --no-workers`; two `worker` processes taking the URLs from $BLUELINE_DATABASE_URL and
//    $BLUELINE_STORAGE_URL; the web UI at /; a fixture PDF uploaded through the API and
//    processed by the workers (the API runs no jobs); `backup --project` of that project,
//    `restore` into another new database + prefix and `backup --project` from there (same
//    objects, same sha256); SIGTERM to the API and each worker, each must exit 0.
// s3rver comes from this checkout's node_modules (a devDependency; not in the image).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, cpSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    database: { type: 'string' },
    'node-modules': { type: 'string' },
    keep: { type: 'boolean' },
  },
  strict: true,
});
if (!values.database)
  throw new Error('--database postgres://… is required (scripts/pg-test-cluster.sh start).');

const work = mkdtempSync(path.join(tmpdir(), 'blueline-image-'));
const src = path.join(work, 'src');
const app = path.join(work, 'app');
const t0 = Date.now();
const step = (msg) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${msg}`);

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}`);
}

let s3;
const children = [];
const dropDatabases = [];
try {
  // --- build stage -------------------------------------------------------------------------
  step(`build stage in ${src}`);
  mkdirSync(src);
  sh('bash', ['-c', `git -C "${root}" archive HEAD | tar -x -C "${src}"`]);
  const env = { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' };
  if (values['node-modules']) {
    step(`node_modules: hard-linked copy of ${values['node-modules']} (stands in for npm ci)`);
    sh('cp', ['-al', path.resolve(values['node-modules']), path.join(src, 'node_modules')]);
  } else {
    step('npm ci');
    sh('npm', ['ci'], { cwd: src, env });
  }
  step('npm run build:server');
  sh('npm', ['run', '--silent', 'build:server'], { cwd: src, env });
  step('npm run build:web');
  sh('npm', ['run', '--silent', 'build:web'], {
    cwd: src,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  step('npm prune --omit=dev');
  sh('npm', ['prune', '--omit=dev', '--no-audit', '--no-fund'], { cwd: src, env });

  // --- final stage -------------------------------------------------------------------------
  step(`final stage in ${app}`);
  mkdirSync(path.join(app, 'out'), { recursive: true });
  mkdirSync(path.join(app, 'resources'));
  cpSync(path.join(src, 'package.json'), path.join(app, 'package.json'));
  sh('cp', ['-a', path.join(src, 'node_modules'), path.join(app, 'node_modules')]);
  sh('cp', ['-a', path.join(src, 'out/server'), path.join(app, 'out/server')]);
  sh('cp', ['-a', path.join(src, 'out/web'), path.join(app, 'out/web')]);
  sh('cp', ['-a', path.join(src, 'resources/fonts'), path.join(app, 'resources/fonts')]);
  rmSync(src, { recursive: true, force: true }); // nothing of the source tree is left to lean on
  const cli = path.join(app, 'out/server/cli.js');

  // --- run -----------------------------------------------------------------------------------
  const { startS3rver, TEST_BUCKET } = await import(
    path.join(root, 'node_modules/tsx/dist/esm/api/index.mjs')
  ).then(async ({ tsImport }) =>
    tsImport(path.join(root, 'core/blobs/s3rver.test-support.ts'), import.meta.url),
  );
  s3 = await startS3rver();
  step(`s3rver at ${s3.endpoint}`);
  const storage = (prefix) =>
    `s3://${TEST_BUCKET}/${prefix}/?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1`;
  const runEnv = {
    PATH: process.env.PATH,
    HOME: work,
    AWS_ACCESS_KEY_ID: 'S3RVER',
    AWS_SECRET_ACCESS_KEY: 'S3RVER',
    NODE_ENV: 'production',
  };
  const run = (args) => {
    const r = spawnSync(process.execPath, [cli, ...args], {
      cwd: app,
      env: runEnv,
      encoding: 'utf8',
    });
    const out = `${r.stdout}${r.stderr}`;
    const summary = out.split('\n').find((l) => /^(Backed up|Restored)/.test(l)) ?? out.trim();
    return { code: r.status, out, summary };
  };
  const dataDir = path.join(work, 'data');
  // A database of its own, empty (dropped at the end), so the run starts from `migrate`.
  const teamName = `bl_image_team_${process.pid}`;
  const made = spawnSync('psql', [values.database, '-Atc', `CREATE DATABASE ${teamName}`], {
    encoding: 'utf8',
  });
  if (made.status !== 0) throw new Error(`psql: ${made.stderr}`);
  dropDatabases.push(teamName);
  const teamUrlObj = new URL(values.database);
  teamUrlObj.pathname = `/${teamName}`;
  const teamUrl = teamUrlObj.toString();
  // The guide's order (deploy/README.md §1): the schema first, then the API without workers,
  // then worker processes; every one of them on the same PostgreSQL database and bucket.
  const pending = run(['migrate', '--check', '--database', teamUrl]);
  step(`migrate --check on the empty database: exit ${pending.code}: ${pending.out.trim()}`);
  if (pending.code !== 3) throw new Error(`expected exit 3 (pending):\n${pending.out}`);
  const early = run(['worker', '--database', teamUrl, '--storage', storage('team')]);
  step(`worker before migrate: exit ${early.code}: ${early.out.trim().split('\n')[0]}`);
  if (early.code !== 3) throw new Error(`expected exit 3 (not migrated):\n${early.out}`);
  const migrated = run(['migrate', '--database', teamUrl]);
  step(`migrate --database: exit ${migrated.code}: ${migrated.out.trim()}`);
  if (migrated.code !== 0) throw new Error(migrated.out);
  const current = run(['migrate', '--check', '--database', teamUrl]);
  step(`migrate --check: exit ${current.code}: ${current.out.trim()}`);
  if (current.code !== 0) throw new Error(current.out);
  const serveArgs = [
    'serve',
    '--data-dir',
    dataDir,
    '--host',
    '127.0.0.1',
    '--port',
    '18443',
    '--web-root',
    path.join(app, 'out/web'),
    '--no-warmup',
    '--database',
    teamUrl,
    '--storage',
    storage('team'),
    '--no-workers',
  ];
  step(`node out/server/cli.js ${serveArgs.join(' ')}`);
  const server = spawn(process.execPath, [cli, ...serveArgs], { cwd: app, env: runEnv });
  children.push(server);
  let banner = '';
  const key = await new Promise((resolve, reject) => {
    const onData = (b) => {
      banner += b.toString();
      const m = /API key[^:]*: (sk_\w+)/.exec(banner);
      if (m && /Blueline API: /.test(banner)) resolve(m[1]);
    };
    server.stdout.on('data', onData);
    server.stderr.on('data', (b) => (banner += b.toString()));
    server.once('exit', (c) => reject(new Error(`serve exited ${c}:\n${banner}`)));
    setTimeout(() => reject(new Error(`serve did not start in 120 s:\n${banner}`)), 120_000);
  });
  step(`serve is up: ${banner.split('\n').find((l) => l.startsWith('Blueline API'))}`);
  const agent = new https.Agent({ rejectUnauthorized: false });
  const req = (method, url, body, raw) =>
    new Promise((resolve, reject) => {
      const u = new URL(url, 'https://127.0.0.1:18443');
      const payload = raw ?? (body !== undefined ? Buffer.from(JSON.stringify(body)) : undefined);
      const r = https.request(
        u,
        {
          method,
          agent,
          headers: {
            ...(u.pathname.startsWith('/v1/') && !u.searchParams.has('signature')
              ? { authorization: `Bearer ${key}` }
              : {}),
            ...(payload ? { 'content-length': payload.length } : {}),
            ...(raw
              ? { 'content-type': 'application/pdf' }
              : body
                ? { 'content-type': 'application/json' }
                : {}),
          },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let json;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined; // not JSON (the web UI, a blob)
            }
            resolve({ status: res.statusCode, text, body: json });
          });
        },
      );
      r.on('error', reject);
      if (payload) r.write(payload);
      r.end();
    });
  const ui = await req('GET', '/');
  if (ui.status !== 200 || !/<html/i.test(ui.text)) throw new Error(`web UI: HTTP ${ui.status}`);
  step('web UI served at /');
  // Workers as the guide starts them: the URLs from the environment, no HTTP, own data dirs.
  const workers = [];
  for (const n of [1, 2]) {
    const args = ['worker', '--concurrency', '1', '--no-warmup'];
    step(`BLUELINE_DATABASE_URL=… BLUELINE_STORAGE_URL=… node out/server/cli.js ${args.join(' ')}`);
    const w = spawn(process.execPath, [cli, ...args], {
      cwd: app,
      env: {
        ...runEnv,
        BLUELINE_DATA_DIR: path.join(work, `worker-${n}`),
        BLUELINE_DATABASE_URL: teamUrl,
        BLUELINE_STORAGE_URL: storage('team'),
      },
    });
    children.push(w);
    const log = { text: '' };
    w.stdout.on('data', (b) => (log.text += b.toString()));
    w.stderr.on('data', (b) => (log.text += b.toString()));
    await new Promise((resolve, reject) => {
      const timer = setInterval(() => {
        if (/Blueline worker \d+: running jobs/.test(log.text)) {
          clearInterval(timer);
          resolve();
        }
      }, 100);
      w.once('exit', (c) => {
        clearInterval(timer);
        reject(new Error(`worker exited ${c}:\n${log.text}`));
      });
    });
    step(`worker ${n} is up: ${log.text.split('\n').find((l) => l.startsWith('Blueline worker'))}`);
    workers.push({ w, log });
  }
  const pdf = readFileSync(path.join(root, 'fixtures/drawings/20150129_A-103_roof-plan.pdf'));
  const prj = (await req('POST', '/v1/projects', { name: 'Image check' })).body;
  const file = (
    await req('POST', '/v1/files', {
      project_id: prj.id,
      filename: 'roof.pdf',
      content_type: 'application/pdf',
      size_bytes: pdf.length,
    })
  ).body;
  const put = await req('PUT', file.upload_url, undefined, pdf);
  if (put.status !== 200) throw new Error(`upload: HTTP ${put.status} ${put.text}`);
  const drawing = (
    await req('POST', '/v1/drawings', { project_id: prj.id, name: 'Roof', file_id: file.id })
  ).body;
  let job;
  for (const started = Date.now(); ;) {
    job = (await req('GET', `/v1/jobs/${drawing.job_id}`)).body;
    if (['Completed', 'Failed', 'Canceled'].includes(job.status)) break;
    if (Date.now() - started > 300_000) throw new Error(`process job still ${job.status}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  if (job.status !== 'Completed')
    throw new Error(`process job ${job.status}: ${JSON.stringify(job.error)}`);
  const sheets = (await req('GET', `/v1/sheets?drawing_id=${drawing.id}`)).body.data;
  const img = await req('GET', sheets[0].uri);
  step(
    `processed by the workers (serve runs --no-workers): ${sheets.length} sheet(s), ${sheets[0].sheet_number ?? '(no number)'}, image HTTP ${img.status} (${img.text.length} chars)`,
  );
  if (img.status !== 200) throw new Error('sheet image not served');
  // Connections one API and two workers hold (deploy/README.md §3 sizes max_connections by it).
  const conns = spawnSync(
    'psql',
    [
      values.database,
      '-Atc',
      `SELECT count(*) FROM pg_stat_activity WHERE datname = '${teamName}'`,
    ],
    { encoding: 'utf8' },
  ).stdout.trim();
  step(`PostgreSQL connections to ${teamName} (1 serve, 2 workers, idle): ${conns}`);

  // Project backup from the serve store, restore into PostgreSQL + bucket, and back out.
  const from = ['--database', teamUrl, '--storage', storage('team')];
  const a1 = path.join(work, 'archive-1');
  const b1 = run(['backup', a1, '--project', prj.id, ...from]);
  step(`backup --project: exit ${b1.code}: ${b1.summary}`);
  if (b1.code !== 0) throw new Error(b1.out);
  const created = spawnSync(
    'psql',
    [values.database, '-Atc', `CREATE DATABASE bl_image_check_${process.pid}`],
    { encoding: 'utf8' },
  );
  if (created.status !== 0) throw new Error(`psql: ${created.stderr}`);
  const teamDb = new URL(values.database);
  teamDb.pathname = `/bl_image_check_${process.pid}`;
  try {
    const team = ['--database', teamDb.toString(), '--storage', storage('restored')];
    const r = run(['restore', a1, ...team]);
    step(`restore into PostgreSQL + bucket: exit ${r.code}: ${r.summary}`);
    if (r.code !== 0) throw new Error(r.out);
    const a2 = path.join(work, 'archive-2');
    const b2 = run(['backup', a2, '--project', prj.id, ...team]);
    step(`backup --project from PostgreSQL + bucket: exit ${b2.code}: ${b2.summary}`);
    if (b2.code !== 0) throw new Error(b2.out);
    const objs = (d) =>
      JSON.parse(readFileSync(path.join(d, 'blueline-project.json'), 'utf8')).objects.map(
        (o) => `${o.key} ${o.sha256}`,
      );
    if (JSON.stringify(objs(a1)) !== JSON.stringify(objs(a2)))
      throw new Error('object lists differ');
    step(`both archives list the same ${objs(a1).length} objects with the same sha256`);
  } finally {
    spawnSync('psql', [
      values.database,
      '-Atc',
      `DROP DATABASE IF EXISTS bl_image_check_${process.pid} WITH (FORCE)`,
    ]);
  }
  for (const [name, p] of [
    ['serve', server],
    ...workers.map(({ w }, i) => [`worker ${i + 1}`, w]),
  ]) {
    const exited = new Promise((r) => p.once('exit', (c, sig) => r(c ?? sig)));
    p.kill('SIGTERM');
    const code = await exited;
    step(`${name} stopped on SIGTERM with exit code ${code}`);
    if (code !== 0) throw new Error(`${name} exited ${code} on SIGTERM`);
  }
  step('all steps passed');
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  for (const name of dropDatabases)
    spawnSync('psql', [values.database, '-Atc', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]);
  await s3?.dispose();
  if (!values.keep) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
