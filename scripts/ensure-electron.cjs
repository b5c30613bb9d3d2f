// Retries Electron's own binary download after `npm install`, without ever failing the install.
// package.json's `allowScripts` keeps npm from running electron's postinstall (which would abort
// the whole install on machines that cannot reach github.com); this script runs it instead and
// only warns when the download is impossible. Honours ELECTRON_SKIP_BINARY_DOWNLOAD.
const { spawnSync } = require('node:child_process');
if (process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) process.exit(0);
let script;
try {
  script = require.resolve('electron/install.js');
} catch {
  process.exit(0);
}
const r = spawnSync(process.execPath, [script], { stdio: 'inherit', timeout: 10 * 60 * 1000 });
if (r.status !== 0) {
  console.warn(
    '[ensure-electron] Electron binary download failed; install, build, headless mode and tests still work. ' +
      '`npm start` will fall back to `blueline serve` + the web UI.',
  );
}
process.exit(0);
