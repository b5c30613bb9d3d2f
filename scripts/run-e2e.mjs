// `npm run test:e2e`: Playwright specs in e2e/ against the real service, in Debian's Chromium.
//
// - Never downloads browsers (`npx playwright install` is not used): the system Chromium is
//   taken from $CHROMIUM_PATH, else /usr/bin/chromium (`apt-get install chromium`), and passed
//   to playwright.config.ts through CHROMIUM_PATH.
// - Builds the web UI (out/web) first, because the specs run `blueline serve --web-root out/web`.
//   Where Electron's binary exists it also builds the desktop app (out/main …) for the
//   `_electron` specs; those specs skip themselves with a printed reason elsewhere.
// - Extra arguments go to `playwright test` (e.g. `npm run test:e2e -- --grep overlay`).
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { electronExecutable } from '../electron/tools/native-modules.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const e2eDir = path.join(repoRoot, 'e2e');
const say = (msg) => console.log(`[run-e2e] ${msg}`);

function findSpecs(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && /\.(spec|e2e)\.[cm]?[jt]s$/.test(d.name))
    .map((d) => path.join(d.parentPath ?? d.path, d.name));
}

function run(cmd, args, env = process.env) {
  const r = spawnSync(cmd, args, { cwd: repoRoot, stdio: 'inherit', env });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const specs = findSpecs(e2eDir);
if (specs.length === 0) {
  say('no Playwright specs in e2e/ yet; nothing to run.');
  process.exit(0);
}

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.error(
    `[run-e2e] Chromium not found at ${chromium}. Install it with \`apt-get install -y chromium\` ` +
      '(as .ci/run does) or set CHROMIUM_PATH. Playwright browser downloads are not used.',
  );
  process.exit(1);
}

say(`${specs.length} spec file(s); Chromium: ${chromium}`);
// better-sqlite3 must be the Node build for `blueline serve` (an interrupted `npm start` may
// have left the Electron build in place).
run(process.execPath, [path.join(repoRoot, 'electron/tools/native-modules.mjs'), 'node']);
run('npm', ['run', '--silent', 'build:web']);
if (electronExecutable()) {
  say('Electron binary present: building the desktop app for the _electron specs');
  run(path.join(repoRoot, 'node_modules/.bin/electron-vite'), ['build']);
}

const extra = process.argv.slice(2).filter((a) => a !== '--');
run(path.join(repoRoot, 'node_modules/.bin/playwright'), ['test', ...extra], {
  ...process.env,
  CHROMIUM_PATH: chromium,
  // out/web was just built; e2e/global-setup.ts need not build it again.
  BLUELINE_E2E_SKIP_BUILD: '1',
});
