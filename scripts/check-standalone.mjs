#!/usr/bin/env node
// The repository stands alone: no tracked file may point at a folder beside the clone (such as a
// sibling folder named shared, which exists on our build machines but in nobody else's clone) or
// at an absolute path of a build machine (`/work/…`). A relative reference is fine when it resolves
// to a path inside the repository that exists. `npm run check` runs this;
// scripts/check-standalone.test.ts proves it fails on a planted reference.
//
//   node scripts/check-standalone.mjs [repo-root]     exit 1 and a list of file:line when found
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Files that may name the build machine's layout: CI's entry point (if it must), and this check and
 * its test, which name such paths to describe and plant them.
 */
const EXEMPT = new Set([
  '.ci/run',
  'scripts/check-standalone.mjs',
  'scripts/check-standalone.test.ts',
]);
/** One or more `../`, then a folder named shared: a relative path climbing to such a folder. */
const RELATIVE_RE = /((?:\.\.\/)+)shared(\/[\w.\-/]*)?/g;
/** An absolute path into the build machine's work folder. */
const ABSOLUTE_RE = /\/work\/(?:shared|\.library)\b[\w.\-/]*/g;

/** Extensions an import may leave out (`'./bridge'` is `bridge.ts`). */
const IMPLIED = ['', '.ts', '.tsx', '.mts', '.js', '.mjs', '.cjs', '.json', '/index.ts'];

/** Tracked files of the repository at `root` (paths relative to it, `/`-separated). */
function trackedFiles(root) {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  return out.split('\0').filter(Boolean);
}

/**
 * Every reference of a tracked file to something outside the repository:
 * `[{ file, line, text, why }]`, empty when the repository stands alone.
 */
export function findOutsideReferences(root) {
  const problems = [];
  const realRoot = path.resolve(root);
  for (const file of trackedFiles(realRoot)) {
    if (EXEMPT.has(file)) continue;
    const abs = path.join(realRoot, file);
    if (!existsSync(abs)) continue; // deleted in the work tree, not yet staged
    const bytes = readFileSync(abs);
    if (bytes.includes(0)) continue; // binary (PDFs, images): no paths to follow
    const lines = bytes.toString('utf8').split('\n');
    lines.forEach((text, i) => {
      for (const m of text.matchAll(RELATIVE_RE)) {
        const target = path.resolve(path.dirname(abs), m[0]);
        const inside = target === realRoot || target.startsWith(realRoot + path.sep);
        if (!inside)
          problems.push({ file, line: i + 1, text: m[0], why: 'points outside the repository' });
        else if (!IMPLIED.some((ext) => existsSync(target + ext)))
          problems.push({ file, line: i + 1, text: m[0], why: 'names no file of the repository' });
      }
      for (const m of text.matchAll(ABSOLUTE_RE))
        problems.push({
          file,
          line: i + 1,
          text: m[0],
          why: 'is an absolute path of a build machine',
        });
    });
  }
  return problems;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const problems = findOutsideReferences(root);
  for (const p of problems) console.error(`${p.file}:${p.line}: '${p.text}' ${p.why}`);
  if (problems.length > 0) {
    console.error(
      `\n${problems.length} reference(s) outside the repository. A clone must build and test on its own: copy what is needed into the repository (fixtures/, docs/) and point there.`,
    );
    process.exit(1);
  }
  console.log('check-standalone: no tracked file points outside the repository');
}
