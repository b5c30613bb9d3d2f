// The compiled server build (scripts/build-server.mjs): builds core/ into a folder of its own under
// out/, starts `node <build>/cli.js serve` from it — plain node, no tsx — with its objects on S3
// (s3rver on loopback) as a team server would run, and goes through the API over HTTPS: a project,
// a PDF uploaded and processed by the compiled worker thread, the sheet image read back.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startS3rver,
  TEST_BUCKET,
  TEST_CREDENTIALS,
  type S3rverProcess,
} from '../blobs/s3rver.test-support';
import { FIXTURES } from './flows';
import { httpsRequest } from './harness';

const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const outRel = `out/.test-server-${process.pid}`;
const outDir = join(repoRoot, outRel);
let s3: S3rverProcess;
let dataDir: string;
let child: ChildProcessWithoutNullStreams | undefined;

beforeAll(async () => {
  s3 = await startS3rver();
  dataDir = mkdtempSync(join(tmpdir(), 'blueline-bundle-'));
});
afterAll(async () => {
  child?.kill('SIGKILL');
  await s3?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(outDir, { recursive: true, force: true });
});

describe('compiled server build', () => {
  it('bundles core/ for Node with npm packages (native ones included) left external', () => {
    const r = spawnSync(process.execPath, ['scripts/build-server.mjs', '--outdir', outRel], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Server build: .*cli\.js and worker-entry\.js/);
    for (const f of ['cli.js', 'worker-entry.js', 'cli.js.map'])
      expect(existsSync(join(outDir, f))).toBe(true);
    const cli = readFileSync(join(outDir, 'cli.js'), 'utf8');
    // Compiled: no TypeScript loader and no .ts module left to import.
    expect(cli).not.toMatch(/from "tsx|import\("tsx|(from |import\()"[^"]+\.ts"/);
    expect(cli).toMatch(/from "better-sqlite3"/);
    expect(cli).toMatch(/from "sharp"/);
    expect(cli).toMatch(/from "@aws-sdk\/client-s3"/);
    expect(readFileSync(join(outDir, 'worker-entry.js'), 'utf8')).toMatch(/from "sharp"/);
    // The one-off refusal of an outdir outside the checkout.
    const outside = spawnSync(
      process.execPath,
      ['scripts/build-server.mjs', '--outdir', tmpdir()],
      {
        cwd: repoRoot,
        encoding: 'utf8',
      },
    );
    expect(outside.status).not.toBe(0);
    expect(outside.stderr).toContain('is outside the checkout');
  }, 150_000);

  it('runs `serve --storage s3://…` from the bundle and processes a drawing over HTTPS', async () => {
    expect(existsSync(join(outDir, 'cli.js'))).toBe(true);
    const storage = `s3://${TEST_BUCKET}/bundle?endpoint=${s3.endpoint}&region=us-east-1`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    };
    delete env.BLUELINE_DATA_DIR;
    delete env.NODE_OPTIONS; // no loader from the test runner
    const c = spawn(
      process.execPath,
      [
        join(outDir, 'cli.js'),
        'serve',
        '--port',
        '0',
        '--data-dir',
        dataDir,
        '--no-web',
        '--no-warmup',
        '--storage',
        storage,
      ],
      { cwd: tmpdir(), env },
    );
    child = c;
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => c.on('close', (code) => r(code)));
    const deadline = Date.now() + 60_000;
    let m: RegExpExecArray | null = null;
    while (!(m = /Blueline API: (https:\/\/127\.0\.0\.1:\d+)\/v1\n/.exec(stdout))) {
      if (Date.now() > deadline || c.exitCode !== null)
        throw new Error(`serve printed no banner; stdout: ${stdout} stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(stdout).toContain(`Storage: s3://${TEST_BUCKET}/bundle/ at ${s3.endpoint}`);
    const key = /API key \(organization "Default", shown once\): (sk_\w+)/.exec(stdout)![1]!;
    const origin = m[1]!;
    const agent = new https.Agent({ ca: readFileSync(join(dataDir, 'tls', 'cert.pem')) });
    const call = (
      method: string,
      path: string,
      opts: {
        body?: unknown;
        rawBody?: Buffer;
        headers?: Record<string, string>;
        key?: string | null;
      } = {},
    ) => httpsRequest(agent, origin, method, path, { key, ...opts });

    const project = await call('POST', '/v1/projects', { body: { name: 'Compiled' } });
    expect(project.status).toBe(201);
    const pdf = readFileSync(join(FIXTURES, '20150129_A-103_roof-plan.pdf'));
    const file = await call('POST', '/v1/files', {
      body: {
        project_id: project.body.id,
        filename: 'roof.pdf',
        content_type: 'application/pdf',
        size_bytes: pdf.length,
      },
    });
    const put = await call('PUT', file.body.upload_url, {
      rawBody: pdf,
      headers: { 'content-type': 'application/pdf' },
      key: null,
    });
    expect(put.status).toBe(200);
    const drawing = await call('POST', '/v1/drawings', {
      body: { project_id: project.body.id, name: 'Roof', file_id: file.body.id },
    });
    expect(drawing.status).toBe(201);
    let job;
    for (const start = Date.now(); Date.now() - start < 180_000;) {
      job = (await call('GET', `/v1/jobs/${drawing.body.job_id}`)).body;
      if (['Completed', 'Failed', 'Canceled'].includes(job.status)) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(job.status, JSON.stringify(job.error)).toBe('Completed');
    const sheets = await call('GET', `/v1/sheets?drawing_id=${drawing.body.id}`);
    expect(sheets.body.data).toHaveLength(1);
    const img = await call('GET', sheets.body.data[0].uri, { key: null });
    expect(img.status).toBe(200);
    expect(img.headers['content-type']).toBe('image/png');
    agent.destroy();

    c.kill('SIGTERM');
    expect(await exited).toBe(0);
    child = undefined;

    // A bucket that does not answer stops serve at once with the reason (exit 1); a malformed
    // --storage is a usage error (exit 2).
    const run = (storageUrl: string) =>
      spawnSync(
        process.execPath,
        [
          join(outDir, 'cli.js'),
          'serve',
          '--port',
          '0',
          '--data-dir',
          dataDir,
          '--no-web',
          '--storage',
          storageUrl,
        ],
        { env, encoding: 'utf8', timeout: 60_000 },
      );
    const missing = run(`s3://no-such-bucket/x?endpoint=${s3.endpoint}`);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(
      `blueline: The bucket of s3://no-such-bucket/x/ at ${s3.endpoint} does not exist; create it or fix --storage.`,
    );
    const malformed = run('ftp://files.example/x');
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toContain('blueline: --storage takes an s3:// URL');
  }, 240_000);
});
