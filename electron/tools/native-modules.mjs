// Keeps better-sqlite3 loadable by both runtimes that share this checkout's node_modules.
//
// better-sqlite3 12 talks to V8 directly (not N-API), so its compiled addon matches one ABI:
// `npm install` builds it for Node (NODE_MODULE_VERSION 115 on Node 20), while Electron 41
// needs its own (145, see node_modules/electron/abi_version). sharp is N-API and PDFium is WASM;
// both load in both unchanged.
//
// The installed addon stays the Node build (tests, `blueline serve`). An Electron build is made
// once with @electron/rebuild in a scratch copy of the package (it downloads Electron's headers,
// so it needs the network) and cached in node_modules/.cache/blueline-native/abi-<N>/. In
// development the Electron main process loads that file instead of the installed one
// (electron/main/native-binding.ts), so the app, tests and the headless service can run from
// the same node_modules at the same time. Packaged apps do not use any of this:
// electron-builder rebuilds native modules for Electron (`npmRebuild: true`).
//
// CLI: node electron/tools/native-modules.mjs status   what is installed and cached
//      node electron/tools/native-modules.mjs electron build/cache the Electron addon
//      node electron/tools/native-modules.mjs node     repair: make the installed addon Node's
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  cpSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const moduleDir = path.join(repoRoot, 'node_modules', 'better-sqlite3');
export const installedBinary = path.join(moduleDir, 'build', 'Release', 'better_sqlite3.node');
const cacheRoot = path.join(repoRoot, 'node_modules', '.cache', 'blueline-native');

const log = (msg) => console.log(`[native-modules] ${msg}`);

/** Path of the Electron executable, or null when its binary was never downloaded. */
export function electronExecutable() {
  const electronDir = path.join(repoRoot, 'node_modules', 'electron');
  const pathFile = path.join(electronDir, 'path.txt');
  if (!existsSync(pathFile)) return null;
  const exe = path.join(electronDir, 'dist', readFileSync(pathFile, 'utf8').trim());
  return existsSync(exe) ? exe : null;
}

/** `{ version, abi }` of the installed electron package (works without its binary). */
export function electronTarget() {
  const electronDir = path.join(repoRoot, 'node_modules', 'electron');
  const { version } = JSON.parse(readFileSync(path.join(electronDir, 'package.json'), 'utf8'));
  const abi = readFileSync(path.join(electronDir, 'abi_version'), 'utf8').trim();
  return { version, abi };
}

export const cachedBinary = (abi) => path.join(cacheRoot, `abi-${abi}`, 'better_sqlite3.node');

/**
 * NODE_MODULE_VERSION the given addon was built for, found by loading it in a Node child:
 * success means this Node's ABI; a mismatch error names the addon's ABI. null if absent/unknown.
 */
export function addonAbi(file = installedBinary) {
  if (!existsSync(file)) return null;
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(file)})`], {
    encoding: 'utf8',
  });
  if (r.status === 0) return process.versions.modules;
  const m = /compiled against a different Node\.js version using\s+NODE_MODULE_VERSION (\d+)/.exec(
    r.stderr,
  );
  return m ? m[1] : null;
}

/** Copy `from` over `to` atomically (temp file + rename), so no reader sees half a file. */
function installCopy(from, to) {
  mkdirSync(path.dirname(to), { recursive: true });
  const tmp = `${to}.tmp-${process.pid}`;
  copyFileSync(from, tmp);
  renameSync(tmp, to);
}

/** Remember the currently installed addon under its ABI, if it is not cached yet. */
function cacheInstalled() {
  const abi = addonAbi();
  if (abi && !existsSync(cachedBinary(abi))) installCopy(installedBinary, cachedBinary(abi));
  return abi;
}

/** Make node_modules/better-sqlite3 load under this Node (what vitest and `blueline serve` use). */
export function ensureNodeBuild() {
  const want = process.versions.modules;
  const have = cacheInstalled();
  if (have === want) return;
  if (existsSync(cachedBinary(want))) {
    installCopy(cachedBinary(want), installedBinary);
    log(`restored the Node build of better-sqlite3 (ABI ${want}) from the cache`);
  } else {
    log(
      `better-sqlite3 is built for ABI ${have ?? 'unknown'}; recompiling for Node (ABI ${want}), about 2 minutes…`,
    );
    const r = spawnSync('npm', ['rebuild', 'better-sqlite3'], { cwd: repoRoot, stdio: 'inherit' });
    if (r.status !== 0) throw new Error('npm rebuild better-sqlite3 failed');
  }
  if (addonAbi() !== want)
    throw new Error(`better-sqlite3 still does not load under Node (ABI ${want})`);
  cacheInstalled();
}

/**
 * Path of a better-sqlite3 addon built for the installed Electron, building it on first use
 * with @electron/rebuild in a scratch copy of the package (needs the network once, for
 * Electron's headers). Never touches the installed (Node) build.
 */
export function prepareElectronBuild() {
  const { version, abi } = electronTarget();
  const target = cachedBinary(abi);
  if (existsSync(target)) return target;
  if (addonAbi() === abi) {
    cacheInstalled();
    return target;
  }
  const scratch = mkdtempSync(path.join(tmpdir(), 'blueline-electron-rebuild-'));
  try {
    const scratchModule = path.join(scratch, 'node_modules', 'better-sqlite3');
    cpSync(moduleDir, scratchModule, { recursive: true });
    writeFileSync(
      path.join(scratch, 'package.json'),
      JSON.stringify({ name: 'scratch', private: true, dependencies: { 'better-sqlite3': '*' } }),
    );
    // @electron/rebuild 4 needs Node >= 22.12; 3.x runs on Node 20 and builds the same way.
    const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
    const rebuildPkg =
      major > 22 || (major === 22 && minor >= 12) ? '@electron/rebuild@4' : '@electron/rebuild@3';
    log(`building better-sqlite3 for Electron ${version} (ABI ${abi}) with ${rebuildPkg}…`);
    const r = spawnSync(
      'npx',
      [
        '--yes',
        rebuildPkg,
        '--force',
        '--only',
        'better-sqlite3',
        '--version',
        version,
        '--module-dir',
        scratch,
      ],
      { cwd: scratch, stdio: 'inherit' },
    );
    const built = path.join(scratchModule, 'build', 'Release', 'better_sqlite3.node');
    if (r.status !== 0 || !existsSync(built)) {
      throw new Error(
        '@electron/rebuild failed: it installs parts of itself from GitHub and downloads Electron headers from electronjs.org (is the network reachable?)',
      );
    }
    installCopy(built, target);
    return target;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const command = process.argv[2] ?? 'status';
  if (command === 'node') ensureNodeBuild();
  else if (command === 'electron') console.log(prepareElectronBuild());
  else if (command === 'status') {
    const { version, abi } = electronTarget();
    console.log(
      JSON.stringify(
        {
          installedAbi: addonAbi(),
          nodeAbi: process.versions.modules,
          electron: { version, abi, binary: electronExecutable() },
          cached: {
            node: existsSync(cachedBinary(process.versions.modules)),
            electron: existsSync(cachedBinary(abi)),
          },
        },
        null,
        2,
      ),
    );
  } else {
    console.error('usage: node electron/tools/native-modules.mjs node|electron|status');
    process.exit(2);
  }
}
