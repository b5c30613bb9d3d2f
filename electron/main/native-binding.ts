// Development only: load better-sqlite3's Electron build without replacing its Node build.
//
// better-sqlite3 12 is compiled against one V8 ABI. In a checkout, node_modules holds the Node
// build (tests and `blueline serve` need it), and electron/tools/native-modules.mjs keeps an
// Electron build in node_modules/.cache/blueline-native/abi-<N>/. Here the main process
// redirects the one dlopen of better-sqlite3's addon to that file, so the app, the tests and the
// headless service can all run from the same node_modules at the same time.
//
// Packaged apps skip this: electron-builder rebuilt the addon for Electron in place.
// No Electron import, so it is tested under Node (native-binding.test.ts).
import { existsSync } from 'node:fs';
import path from 'node:path';

const ADDON_PATH = /[\\/]better-sqlite3[\\/]build[\\/]Release[\\/]better_sqlite3\.node$/;

/** Where native-modules.mjs caches the addon for the running ABI (process.versions.modules). */
export function cachedAddonPath(appRoot: string, abi: string = process.versions.modules): string {
  return path.join(
    appRoot,
    'node_modules',
    '.cache',
    'blueline-native',
    `abi-${abi}`,
    'better_sqlite3.node',
  );
}

/**
 * From now on, loading better-sqlite3's default addon loads `override` instead (must run
 * before the first `new Database()`; better-sqlite3 loads its addon lazily). The override is
 * $BLUELINE_SQLITE_BINDING, else the cached build for this ABI if it exists. Returns the file
 * used, or null when nothing was redirected.
 */
export function redirectBetterSqliteAddon(
  appRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): string | null {
  const cached = cachedAddonPath(appRoot);
  const override = env.BLUELINE_SQLITE_BINDING || (existsSync(cached) ? cached : null);
  if (!override) return null;
  const dlopen = process.dlopen.bind(process);
  process.dlopen = (module: object, filename: string, flags?: number) => {
    const file = ADDON_PATH.test(filename) ? override : filename;
    // Passing `flags` as undefined is not the same as omitting it ("invalid mode for dlopen").
    if (flags === undefined) dlopen(module, file);
    else dlopen(module, file, flags);
  };
  return override;
}
