import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

// `blueline serve` shows the web UI without a flag (contract §11: "runs the headless service and
// the web UI"). The UI is the renderer's static bundle, built by Vite into `out/web`. A checkout
// may not have built it yet, or may hold a build older than its sources (after a `git pull`), so
// serve builds it when it is missing or stale: about 1.5 s with Vite 8 here. `--web-root DIR`
// serves a bundle the user built elsewhere, as is; `--no-web` serves the API alone.

/** The repository (or installed package) root: core/cli/ is two levels down. */
export const PACKAGE_ROOT = resolve(import.meta.dirname, '../..');
/** Where `npm run build:web` and serve put the bundle. */
export const DEFAULT_WEB_ROOT = join(PACKAGE_ROOT, 'out', 'web');

/** What serve will serve at `/`: a directory with index.html, or why there is none. */
export type WebUi = { root: string; built: boolean } | { root: null; reason: string };

interface EnsureOptions {
  /** Package root holding renderer/ and node_modules/vite (tests use a copy). */
  packageRoot?: string;
  /** Output folder (default `<packageRoot>/out/web`). */
  outDir?: string;
  log?: (line: string) => void;
}

/** Inputs of the bundle: when any is newer than the built index.html, the build is stale. */
function newestSourceMtime(packageRoot: string): number {
  let newest = 0;
  const visit = (path: string) => {
    let st;
    try {
      st = statSync(path);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(path)) if (name !== 'node_modules') visit(join(path, name));
    } else newest = Math.max(newest, st.mtimeMs);
  };
  visit(join(packageRoot, 'renderer'));
  // The renderer imports wire types from core/contract; the lock file pins the libraries bundled.
  visit(join(packageRoot, 'core', 'contract'));
  visit(join(packageRoot, 'package-lock.json'));
  return newest;
}

/** Whether `outDir` holds a bundle at least as new as its sources. */
export function webUiIsFresh(packageRoot: string, outDir: string): boolean {
  const index = join(outDir, 'index.html');
  if (!existsSync(index)) return false;
  return statSync(index).mtimeMs >= newestSourceMtime(packageRoot);
}

/**
 * The bundle to serve from `outDir`, built first when missing or stale. The build goes to a
 * temporary sibling folder and replaces `outDir` by rename, so a service already serving the old
 * bundle (or a second serve starting at the same moment) never sees a half-written one. Where the
 * sources or Vite are absent (an installed package that shipped its bundle) the bundle found is
 * served as it is.
 */
export function ensureWebUi(opts: EnsureOptions = {}): WebUi {
  const packageRoot = opts.packageRoot ?? PACKAGE_ROOT;
  const outDir = opts.outDir ?? join(packageRoot, 'out', 'web');
  const log = opts.log ?? (() => {});
  const haveIndex = existsSync(join(outDir, 'index.html'));
  const config = join(packageRoot, 'renderer', 'vite.config.ts');
  const vite = join(packageRoot, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(config) || !existsSync(vite)) {
    return haveIndex
      ? { root: outDir, built: false }
      : {
          root: null,
          reason: `the web UI is not built and cannot be built here (no ${existsSync(config) ? 'vite in node_modules' : 'renderer sources'}); run \`npm install && npm run build:web\` in ${packageRoot}`,
        };
  }
  if (webUiIsFresh(packageRoot, outDir)) return { root: outDir, built: false };

  log(
    haveIndex
      ? `Web UI: rebuilding ${outDir} (its sources changed since the last build)…`
      : `Web UI: building it into ${outDir} (first start only)…`,
  );
  mkdirSync(dirname(outDir), { recursive: true });
  const tmp = `${outDir}.build-${process.pid}-${Date.now()}`;
  const started = Date.now();
  const run = spawnSync(
    process.execPath,
    [vite, 'build', '--config', config, '--outDir', tmp, '--emptyOutDir', '--logLevel', 'warn'],
    { cwd: packageRoot, encoding: 'utf8', timeout: 180_000 },
  );
  if (run.status !== 0 || !existsSync(join(tmp, 'index.html'))) {
    rmSync(tmp, { recursive: true, force: true });
    const why = (run.stderr || run.stdout || String(run.error ?? '')).trim().split('\n').slice(-5);
    if (haveIndex) {
      log(`Web UI: the rebuild failed; serving the previous build. ${why.join(' ')}`);
      return { root: outDir, built: false };
    }
    return { root: null, reason: `building the web UI failed: ${why.join(' ')}` };
  }
  // Swap: old bundle aside, new one in, old one gone. Another serve may have swapped in its own
  // build meanwhile; either bundle is complete, so losing that race is fine.
  const old = `${outDir}.old-${process.pid}-${Date.now()}`;
  try {
    if (existsSync(outDir)) renameSync(outDir, old);
    renameSync(tmp, outDir);
  } catch {
    // (no-op: the other build won)
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    rmSync(old, { recursive: true, force: true });
  }
  log(`Web UI: built in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
  return existsSync(join(outDir, 'index.html'))
    ? { root: outDir, built: true }
    : { root: null, reason: 'building the web UI left no index.html' };
}
