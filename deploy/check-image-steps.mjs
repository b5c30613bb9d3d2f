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
// 3. runs app/out/server/cli.js from there with plain node: `serve` (with --database when this
//    build has it, else SQLite in the data dir) with its objects in s3rver, the web UI at /, a
//    fixture PDF uploaded and processed by the compiled worker, then `backup --project` of that
//    project and `restore` into PostgreSQL + the bucket and back out (`backup` from there): the
//    production dependency tree does everything the image's roles need.
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
  const help = run(['--help']).out;
  const teamServe = /serve[^\n]*--database/.test(help);
  const dataDir = path.join(work, 'data');
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
    ...(teamServe ? ['--database', values.database] : []),
    '--storage',
    storage(teamServe ? 'team' : 'serve'),
  ];
  step(
    `node out/server/cli.js ${serveArgs.join(' ')}${teamServe ? '' : '   (this build has no serve --database: SQLite in the data dir)'}`,
  );
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
    `processed by the compiled worker: ${sheets.length} sheet(s), ${sheets[0].sheet_number ?? '(no number)'}, image HTTP ${img.status} (${img.text.length} chars)`,
  );
  if (img.status !== 200) throw new Error('sheet image not served');

  // Project backup from the serve store, restore into PostgreSQL + bucket, and back out.
  const from = teamServe
    ? ['--database', values.database, '--storage', storage('team')]
    : ['--data-dir', dataDir, '--storage', storage('serve')];
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
  server.kill('SIGTERM');
  const code = await new Promise((r) => server.once('exit', r));
  step(`serve stopped on SIGTERM with exit code ${code}`);
  step('all steps passed');
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await s3?.dispose();
  if (!values.keep) rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
