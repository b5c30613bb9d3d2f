import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script (run by `npm run check`) without type declarations
import { findOutsideReferences } from './check-standalone.mjs';

const SCRIPT = resolve(import.meta.dirname, 'check-standalone.mjs');
const REPO = resolve(import.meta.dirname, '..');

type Problem = { file: string; line: number; text: string; why: string };
let dirs: string[] = [];
afterEach(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

/** A git repository in a temp folder with `files` committed (paths relative to its root). */
function repoWith(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'blueline-standalone-'));
  dirs.push(root);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: root });
  execFileSync('git', ['add', '-A'], { cwd: root });
  return root;
}

// The sibling folder a clone does not have, spelled at run time so this file names no such path.
const SIB = ['..', 'shared'].join('/');

const CLEAN = {
  'README.md': 'Fixtures are in `fixtures/drawings` (see its README).\n',
  'electron/shared/bridge.ts': 'export const X = 1;\n',
  'electron/main/index.ts': `import { X } from '${SIB}/bridge';\n`,
  'core/test/flows.ts': "const F = resolve(import.meta.dirname, '../../fixtures/drawings');\n",
  'fixtures/drawings/README.md': 'licences\n',
};

describe('check-standalone (npm run check)', () => {
  it('passes a repository whose references stay inside it', () => {
    expect(findOutsideReferences(repoWith(CLEAN))).toEqual([]);
  });

  it('fails on a planted reference to the sibling folder, naming the file and line', () => {
    const root = repoWith({
      ...CLEAN,
      'core/vision/x.test.ts': `// fixtures\nconst F = new URL('../../../${SIB}/fixtures/drawings/', import.meta.url);\n`,
    });
    const problems: Problem[] = findOutsideReferences(root);
    expect(problems).toEqual([
      {
        file: 'core/vision/x.test.ts',
        line: 2,
        text: `../../../${SIB}/fixtures/drawings/`,
        why: 'points outside the repository',
      },
    ]);
    const run = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('core/vision/x.test.ts:2:');
  });

  it('fails on a sibling folder named in docs, and on absolute build-machine paths', () => {
    const root = repoWith({
      ...CLEAN,
      'README.md': `The contract is in \`${SIB}/spec/contract.md\`.\n`,
      'core/README.md': 'See /work/shared/guides/architecture.md.\n',
      'core/x.ts': `import { y } from '${SIB}/nothing-here';\n`,
    });
    const found = findOutsideReferences(root).map((p: Problem) => `${p.file}:${p.line} ${p.why}`);
    expect(found.sort()).toEqual([
      'README.md:1 points outside the repository',
      'core/README.md:1 is an absolute path of a build machine',
      'core/x.ts:1 names no file of the repository',
    ]);
  });

  it('ignores untracked files and CI’s entry point', () => {
    const root = repoWith({ ...CLEAN, '.ci/run': `ls ${SIB}\n` });
    writeFileSync(join(root, 'scratch.md'), `see ${SIB}/spec\n`); // not added to git
    expect(findOutsideReferences(root)).toEqual([]);
  });

  it('finds nothing in this repository', () => {
    expect(findOutsideReferences(REPO)).toEqual([]);
  });
});
