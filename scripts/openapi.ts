// The served OpenAPI document and what is generated from it (issue 16).
//
//   node --import tsx scripts/openapi.ts write   docs/openapi.json, the client types, docs/api-reference.html
//   node --import tsx scripts/openapi.ts check   fails when any of them is stale, or when Redocly's
//                                                linter finds an error in the served document
//
// The document comes from the service itself: a service built by the factory in a temp data dir,
// asked for GET /v1/openapi.json through Fastify's inject (no port is opened).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { createService } from '../core/service';

const ROOT = resolve(import.meta.dirname, '..');
export const DOCUMENT_FILE = join(ROOT, 'docs/openapi.json');
export const TYPES_FILE = join(ROOT, 'core/test/generated/openapi.d.ts');
const HTML_FILE = join(ROOT, 'docs/api-reference.html');
const REDOCLY = join(ROOT, 'node_modules/.bin/redocly');
const REDOCLY_ENV = {
  ...process.env,
  REDOCLY_TELEMETRY: 'off',
  REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
};

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** The document as the service serves it, as the text committed in docs/openapi.json. */
export async function servedDocument(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'blueline-openapi-'));
  try {
    const svc = await createService({
      dataDir,
      port: 0,
      warmWorkers: false,
      workers: 1,
      log: silent,
    });
    try {
      const res = await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' });
      if (res.statusCode !== 200)
        throw new Error(`GET /v1/openapi.json answered ${res.statusCode}`);
      return `${JSON.stringify(JSON.parse(res.body), null, 2)}\n`;
    } finally {
      await svc.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const BLOB = ts.factory.createTypeReferenceNode(ts.factory.createIdentifier('Blob'));

/** TypeScript types of the document for openapi-fetch (binary bodies are Blobs). */
export async function clientTypes(document: string): Promise<string> {
  const ast = await openapiTS(JSON.parse(document) as never, {
    transform: (schema) => (schema.format === 'binary' ? BLOB : undefined),
  });
  return (
    '// Generated from docs/openapi.json by `npm run openapi:write`; do not edit.\n' +
    astToString(ast)
  );
}

/** Redocly's lint of `file` (recommended rules): its totals, printed problems on stderr. */
export function lint(file: string): { errors: number; warnings: number } {
  const run = spawnSync(REDOCLY, ['lint', file, '--format=json'], {
    encoding: 'utf8',
    env: REDOCLY_ENV,
  });
  const start = run.stdout.indexOf('{');
  if (start < 0) throw new Error(`redocly lint printed no report:\n${run.stdout}${run.stderr}`);
  const report = JSON.parse(run.stdout.slice(start)) as {
    totals: { errors: number; warnings: number };
    problems: {
      ruleId: string;
      severity: string;
      message: string;
      location: { pointer?: string }[];
    }[];
  };
  for (const p of report.problems)
    console.error(`  ${p.severity} ${p.ruleId}: ${p.message} (${p.location[0]?.pointer ?? ''})`);
  return report.totals;
}

function buildHtml(documentFile: string, out: string): void {
  const run = spawnSync(
    REDOCLY,
    ['build-docs', documentFile, '-o', out, '--inlineBundle', '--title', 'Blueline API reference'],
    { encoding: 'utf8', env: REDOCLY_ENV },
  );
  if (run.status !== 0) throw new Error(`redocly build-docs failed:\n${run.stdout}${run.stderr}`);
}

async function main(mode: string | undefined): Promise<number> {
  const document = await servedDocument();
  const types = await clientTypes(document);
  if (mode === 'write') {
    writeFileSync(DOCUMENT_FILE, document);
    writeFileSync(TYPES_FILE, types);
    buildHtml(DOCUMENT_FILE, HTML_FILE);
    for (const f of [DOCUMENT_FILE, TYPES_FILE, HTML_FILE])
      console.log(`wrote ${relative(ROOT, f)}`);
  } else if (mode !== 'check') {
    console.error('usage: scripts/openapi.ts write|check');
    return 2;
  }
  const stale = [
    [DOCUMENT_FILE, document],
    [TYPES_FILE, types],
  ].filter(([file, text]) => readOr(file!) !== text);
  for (const [file] of stale)
    console.error(`${relative(ROOT, file!)} is stale: run npm run openapi:write and commit it.`);
  const dir = mkdtempSync(join(tmpdir(), 'blueline-openapi-lint-'));
  try {
    const served = join(dir, 'openapi.json');
    writeFileSync(served, document);
    const { errors, warnings } = lint(served);
    console.log(`redocly lint of the served document: ${errors} errors, ${warnings} warnings`);
    // The reference page is rebuilt from the served document (the build is deterministic).
    if (mode === 'check') {
      buildHtml(served, join(dir, 'api-reference.html'));
      if (readOr(join(dir, 'api-reference.html')) !== readOr(HTML_FILE)) {
        console.error(`${relative(ROOT, HTML_FILE)} is stale: run npm run docs:api and commit it.`);
        return 1;
      }
    }
    return errors > 0 || stale.length > 0 ? 1 : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

process.exitCode = await main(process.argv[2]);
