#!/usr/bin/env node
// The server build: bundles core/ for Node into out/server/ so that a server deployment runs
// compiled JavaScript, not TypeScript through tsx:
//
//   npm run build:server            → out/server/cli.js, out/server/worker-entry.js (+ .map)
//   node out/server/cli.js serve --storage s3://… --port 8443 --no-web
//
// cli.js is core/cli/main.ts (`blueline`); worker-entry.js is the worker-pool thread, which
// cli.js finds beside itself (core/cli/bundle.ts). Every npm package stays external: native ones
// (better-sqlite3, sharp) cannot be bundled, and the others (the AWS SDK, pdfium's wasm, tesseract's
// data, pdfjs) resolve their own files at run time. So the bundle runs where node_modules is, a
// directory above it: out/server inside a checkout, or an image with `npm ci --omit=dev` beside
// `out/`. Source maps point errors at the TypeScript.
//
// Options: --outdir DIR (default out/server; it must be inside the checkout, see above).
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { outdir: { type: 'string' } }, strict: true });
const outdir = path.resolve(root, values.outdir ?? 'out/server');
if (!outdir.startsWith(root + path.sep))
  throw new Error(
    `--outdir ${outdir} is outside the checkout: the bundle loads its packages from node_modules above it.`,
  );
if (!existsSync(path.join(root, 'node_modules')))
  throw new Error('node_modules is missing: run npm ci first.');

rmSync(outdir, { recursive: true, force: true });
const started = Date.now();
const result = await build({
  absWorkingDir: root,
  entryPoints: {
    cli: 'core/cli/main.ts',
    'worker-entry': 'core/jobs/worker-entry.ts',
  },
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  packages: 'external',
  sourcemap: true,
  // No shared chunks: each entry is one file, so import.meta.url inside it (web-ui.ts's package
  // root, createRequire) means out/server/, as it meant core/<folder>/ in the source.
  logLevel: 'warning',
  metafile: true,
});
const outputs = Object.entries(result.metafile.outputs).filter(([f]) => f.endsWith('.js'));
const bytes = outputs.reduce((n, [, o]) => n + o.bytes, 0);
console.log(
  `Server build: ${path.relative(root, outdir)}/cli.js and worker-entry.js (${outputs.length} files, ${Math.round(bytes / 1024)} KiB) in ${Date.now() - started} ms.`,
);
