// Runs redirectBetterSqliteAddon in a fresh Node process (the patch is process-wide) and checks
// that better-sqlite3 really loads the override: a copy of the addon works, a missing file fails
// with that file's path in the error, and without an override the installed addon is used.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { cachedAddonPath } from './native-binding';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../..');
const installed = path.join(
  repoRoot,
  'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
);
const scratch = mkdtempSync(path.join(tmpdir(), 'blueline-native-binding-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Child: patch with appRoot = scratch (no cache there), then open a database. */
function openWithOverride(override: string | undefined) {
  const script = `
    import { redirectBetterSqliteAddon } from ${JSON.stringify(path.join(here, 'native-binding.ts'))};
    import { createRequire } from 'node:module';
    const used = redirectBetterSqliteAddon(${JSON.stringify(scratch)});
    const require = createRequire(${JSON.stringify(path.join(repoRoot, 'package.json'))});
    const Database = require('better-sqlite3');
    const db = new Database(':memory:');
    console.log(JSON.stringify({ used, one: db.prepare('SELECT 1 AS one').get().one }));
  `;
  const env = { ...process.env };
  if (override === undefined) delete env.BLUELINE_SQLITE_BINDING;
  else env.BLUELINE_SQLITE_BINDING = override;
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: repoRoot,
    env,
    encoding: 'utf8',
  });
}

describe('redirectBetterSqliteAddon', () => {
  it('loads the override addon instead of the installed one', () => {
    const copy = path.join(scratch, 'copy-of-addon.node');
    copyFileSync(installed, copy);
    const r = openWithOverride(copy);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ used: copy, one: 1 });
  });

  it('really dlopens the override: a missing file fails with its path', () => {
    const missing = path.join(scratch, 'no-such-addon.node');
    const r = openWithOverride(missing);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(missing);
  });

  it('leaves loading alone without an override or cache', () => {
    const r = openWithOverride(undefined);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ used: null, one: 1 });
  });

  it('looks for the cache per ABI', () => {
    expect(cachedAddonPath('/app', '145')).toBe(
      path.join('/app', 'node_modules/.cache/blueline-native/abi-145/better_sqlite3.node'),
    );
  });
});
