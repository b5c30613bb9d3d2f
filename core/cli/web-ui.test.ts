import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureWebUi, PACKAGE_ROOT, webUiIsFresh } from './web-ui';

// serve's web UI: built from this repository's renderer into a temp folder (Vite, ~1.5 s), reused
// while fresh, rebuilt when its sources are newer, and served as shipped where it cannot be built.

let dirs: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'blueline-webui-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

describe('ensureWebUi', () => {
  it('builds a missing bundle, keeps a fresh one, and rebuilds a stale one', () => {
    const outDir = join(temp(), 'web');
    const lines: string[] = [];
    const log = (l: string) => lines.push(l);

    const first = ensureWebUi({ outDir, log });
    expect(first).toEqual({ root: outDir, built: true });
    expect(readFileSync(join(outDir, 'index.html'), 'utf8')).toContain('<div id="root">');
    expect(lines[0]).toMatch(/building it into .* \(first start only\)/);
    expect(webUiIsFresh(PACKAGE_ROOT, outDir)).toBe(true);

    expect(ensureWebUi({ outDir, log })).toEqual({ root: outDir, built: false });

    // A build older than its sources (as after a `git pull`): rebuilt, in place.
    utimesSync(join(outDir, 'index.html'), new Date(1_000), new Date(1_000));
    expect(webUiIsFresh(PACKAGE_ROOT, outDir)).toBe(false);
    expect(ensureWebUi({ outDir, log })).toEqual({ root: outDir, built: true });
    expect(lines.some((l) => /rebuilding .* sources changed/.test(l))).toBe(true);
    expect(webUiIsFresh(PACKAGE_ROOT, outDir)).toBe(true);
  }, 120_000);

  it('serves a shipped bundle as it is where it cannot build, and says why when there is none', () => {
    const pkg = temp(); // no renderer/, no node_modules/vite: an installed package
    const outDir = join(pkg, 'out', 'web');
    const none = ensureWebUi({ packageRoot: pkg });
    expect(none.root).toBeNull();
    expect(none).toMatchObject({
      reason: expect.stringMatching(/not built .*no renderer sources/),
    });

    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'index.html'), '<!doctype html><div id="root"></div>');
    expect(ensureWebUi({ packageRoot: pkg })).toEqual({ root: outDir, built: false });
  });
});
