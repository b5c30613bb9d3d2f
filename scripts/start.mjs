// `npm start`: run Blueline the best way this machine allows.
//
// - Electron's binary present (node_modules/electron/path.txt): build main, preload and
//   renderer with electron-vite, make sure better-sqlite3 has an Electron build in the cache
//   (first time only: @electron/rebuild, see electron/tools/native-modules.mjs; the Node build
//   in node_modules stays as it is for tests), and launch the desktop app.
// - Binary missing (its download from github.com failed or was skipped): say so and run the
//   headless service, which serves the web UI (`blueline serve` builds out/web when it is missing
//   or older than its sources). It prints `Blueline API: https://…/v1`, the API key of a new data
//   dir, and the web UI's address.
//
// Options: --web forces browser mode; anything after `--` goes to `blueline serve`
// (e.g. `npm start -- --port 8443 --data-dir /tmp/bl`).
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  electronExecutable,
  ensureNodeBuild,
  prepareElectronBuild,
} from '../electron/tools/native-modules.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const forceWeb = args.includes('--web');
const serveArgs = args.filter((a) => a !== '--web' && a !== '--');

const say = (msg) => console.log(`[blueline start] ${msg}`);
const bin = (name) => path.join(repoRoot, 'node_modules', '.bin', name);

function run(cmd, cmdArgs, what) {
  say(`${what}…`);
  const r = spawnSync(cmd, cmdArgs, { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`[blueline start] ${what} failed (exit ${r.status ?? r.signal}).`);
    process.exit(r.status ?? 1);
  }
}

/** Run a long-lived child, forward termination signals to it, resolve with its exit code. */
function supervise(cmd, cmdArgs, env = process.env) {
  const child = spawn(cmd, cmdArgs, { cwd: repoRoot, stdio: 'inherit', env });
  const forward = (signal) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

async function startDesktop(electron) {
  run(bin('electron-vite'), ['build'], 'Building the desktop app (electron-vite build)');
  try {
    say(`better-sqlite3 for Electron: ${prepareElectronBuild()}`);
  } catch (err) {
    console.error(
      `[blueline start] Could not build better-sqlite3 for Electron: ${err.message}\n` +
        '[blueline start] Falling back to browser mode.',
    );
    return startBrowser();
  }
  say('Launching the desktop app');
  // Clear ELECTRON_RUN_AS_NODE in case the shell has it: the app must start as Electron.
  const { ELECTRON_RUN_AS_NODE: _ignored, ...env } = process.env;
  // glibc's malloc settings of the service's process (core/jobs/malloc-tuning.ts MALLOC_ENV: freed
  // buffers of 1 MiB or more go back to the system), read by glibc only at start-up; the headless
  // `blueline serve` restarts itself with them, the app gets them here. A value already set stays.
  if (process.platform === 'linux' && env.BLUELINE_MALLOC_TUNING !== '0')
    env.MALLOC_MMAP_THRESHOLD_ ??= String(1 << 20);
  return supervise(electron, ['.'], env);
}

async function startBrowser() {
  ensureNodeBuild();
  say('Starting the service with the web UI. Open the address it prints below in a browser and');
  say('paste the API key; the certificate is local and self-signed, so the browser asks you to');
  say('trust it once.');
  return supervise(process.execPath, [
    '--import',
    'tsx',
    'core/cli/main.ts',
    'serve',
    ...serveArgs,
  ]);
}

const electron = forceWeb ? null : electronExecutable();
if (!electron && !forceWeb) {
  say(
    "Electron's binary is missing (node_modules/electron/path.txt does not exist: its download " +
      'from github.com failed or was skipped with ELECTRON_SKIP_BINARY_DOWNLOAD).',
  );
  say(
    'Falling back to browser mode. To get the desktop app, run `npm install` (or ' +
      '`node scripts/ensure-electron.cjs`) on a network that reaches github.com.',
  );
}
process.exitCode = electron ? await startDesktop(electron) : await startBrowser();
