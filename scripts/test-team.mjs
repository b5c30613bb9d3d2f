// `npm run test:team`: the team lane of `npm test` — the service and store tests again, on
// PostgreSQL with the objects on S3 (issue 21: one suite over both stores and both object stores).
//
// - Starts a throwaway PostgreSQL cluster on a free loopback port (scripts/pg-test-cluster.sh: the
//   newest /usr/lib/postgresql/*/bin; as root the cluster belongs to the `postgres` user), runs the
//   selected vitest files with BLUELINE_TEST_DATABASE=<its URL> and BLUELINE_TEST_STORAGE=s3 (the
//   harness starts s3rver on loopback itself), then stops the cluster and removes it, whatever
//   the tests did.
// - Which files: every test file that starts its services through core/test/harness.ts or opens
//   its stores through core/test/backends.ts — those follow the two variables; the rest (pixel
//   work, pure units, tests that build their own SQLite service) would only run a second time
//   unchanged. Left out as well: cli.test.ts and server-bundle.test.ts, whose `blueline serve`
//   child processes run on their data dir's SQLite whatever the variables say, and backup.test.ts,
//   the desktop data dir's backup (its services are pinned to SQLite + local files).
// - Without PostgreSQL it says so and skips the lane — except under CI=true, where a missing
//   PostgreSQL fails the run: CI must not pass without the team lane.
// - Extra arguments go to vitest (e.g. `npm run test:team -- core/test/search.test.ts` runs only
//   that file, still on PostgreSQL + S3).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => console.log(`[test-team] ${msg}`);

/** Files whose services run on SQLite whatever the variables say (see above). */
const NOT_IN_LANE = new Set([
  'core/test/cli.test.ts',
  'core/test/server-bundle.test.ts',
  // `blueline backup --data-dir` of a desktop data dir: its services are SQLite + local files.
  'core/test/backup.test.ts',
]);

const USES_BACKENDS = /from '(?:\.{1,2}\/)+(?:core\/)?(?:test\/)?(?:harness|backends)(?:\.ts)?'/;

/** The test files of the lane, relative to the repository, sorted. */
export function laneFiles(root = repoRoot) {
  const out = [];
  for (const top of ['core', 'reliability']) {
    const dir = path.join(root, top);
    if (!existsSync(dir)) continue;
    for (const d of readdirSync(dir, { withFileTypes: true, recursive: true })) {
      if (!d.isFile() || !d.name.endsWith('.test.ts')) continue;
      const file = path.join(d.parentPath ?? d.path, d.name);
      const rel = path.relative(root, file).split(path.sep).join('/');
      if (NOT_IN_LANE.has(rel)) continue;
      if (USES_BACKENDS.test(readFileSync(file, 'utf8'))) out.push(rel);
    }
  }
  return out.sort();
}

/** The newest PostgreSQL bin dir (as scripts/pg-test-cluster.sh picks it), or null. */
function postgresBin() {
  const base = process.env.BLUELINE_PG_LIB ?? '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => existsSync(path.join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length ? path.join(base, versions[versions.length - 1], 'bin') : null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function main() {
  const ci = !!process.env.CI && process.env.CI !== 'false';
  const bin = postgresBin();
  if (!bin) {
    if (ci) {
      console.error(
        '[test-team] PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb), and CI=true: ' +
          'the PostgreSQL + S3 lane may not be skipped in CI. Install it (apt-get install -y postgresql) — .ci/run does.',
      );
      process.exit(1);
    }
    say(
      'SKIPPED: the PostgreSQL + S3 lane did not run — PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb). ' +
        'Install it (apt-get install -y postgresql) to run it; CI always does.',
    );
    return;
  }
  const files = process.argv.slice(2).length ? process.argv.slice(2) : laneFiles();
  const port = await freePort();
  // Not created here: as root the script makes it for the `postgres` user (install -d -o).
  const dir = `/tmp/bl-pg-team-${process.pid}-${randomBytes(4).toString('hex')}`;
  const cluster = path.join(repoRoot, 'scripts', 'pg-test-cluster.sh');
  const started = Date.now();
  const up = spawnSync('bash', [cluster, 'start', dir, String(port)], { encoding: 'utf8' });
  if (up.status !== 0) {
    console.error(`[test-team] could not start PostgreSQL:\n${up.stdout}${up.stderr}`);
    spawnSync('bash', [cluster, 'stop', dir], { stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
    process.exit(1);
  }
  const url = up.stdout.trim().split('\n').pop();
  say(`PostgreSQL (${bin}) on 127.0.0.1:${port} in ${Date.now() - started} ms; ${url}`);
  say(`${files.length} test files on PostgreSQL + S3 (s3rver): ${files.join(' ')}`);
  let code = 1;
  try {
    code = await new Promise((resolve) => {
      const child = spawn(
        process.execPath,
        [path.join(repoRoot, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...files],
        {
          cwd: repoRoot,
          stdio: 'inherit',
          env: { ...process.env, BLUELINE_TEST_DATABASE: url, BLUELINE_TEST_STORAGE: 's3' },
        },
      );
      const forward = (sig) => child.kill(sig);
      process.on('SIGINT', forward);
      process.on('SIGTERM', forward);
      child.on('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0)));
    });
  } finally {
    spawnSync('bash', [cluster, 'stop', dir], { stdio: 'inherit' });
    rmSync(dir, { recursive: true, force: true });
  }
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  say(`PostgreSQL + S3 lane ${code === 0 ? 'passed' : 'FAILED'} in ${minutes} min`);
  process.exit(code);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
