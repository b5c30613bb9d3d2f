// Builds the web UI, starts `blueline serve` on a free loopback port with a temp data dir and
// `--web-root out/web`, reads the API base URL and the printed key from its output, and hands
// them to the specs through environment variables. Returns the teardown (stop + delete dir).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Waits for the banner: `Blueline API: https://H:P/v1` and a key `sk_…` (maybe in a `#key=` link). */
function waitForBanner(
  child: ChildProcess,
  timeoutMs: number,
): Promise<{ baseUrl: string; apiKey: string }> {
  return new Promise((resolve, reject) => {
    let out = '';
    let baseUrl: string | null = null;
    let apiKey: string | null = null;
    const timer = setTimeout(() => {
      reject(
        new Error(
          `blueline serve printed no API URL and key within ${timeoutMs} ms. Output:\n${out}`,
        ),
      );
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      baseUrl ??= /Blueline API:\s*(https:\/\/\S+?\/v1)\b/.exec(out)?.[1] ?? null;
      apiKey ??= /\b(sk_[A-Za-z0-9_-]{8,})/.exec(out)?.[1] ?? null;
      if (baseUrl && apiKey) {
        clearTimeout(timer);
        resolve({ baseUrl, apiKey });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(
        new Error(`blueline serve exited with code ${code} before it was ready. Output:\n${out}`),
      );
    });
  });
}

export default async function globalSetup(): Promise<() => Promise<void>> {
  const cli = path.join(repoRoot, 'core/cli/main.ts');
  if (!existsSync(cli)) {
    throw new Error('core/cli/main.ts does not exist yet: the e2e flow needs `blueline serve`.');
  }
  if (!process.env.BLUELINE_E2E_SKIP_BUILD) {
    execFileSync(
      process.execPath,
      [
        path.join(repoRoot, 'node_modules/vite/bin/vite.js'),
        'build',
        '--config',
        'renderer/vite.config.ts',
        '--logLevel',
        'warn',
      ],
      {
        cwd: repoRoot,
        stdio: 'inherit',
      },
    );
  }
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'blueline-e2e-'));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      cli,
      'serve',
      '--data-dir',
      dataDir,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--web-root',
      'out/web',
    ],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BLUELINE_DATA_DIR: dataDir },
    },
  );
  const log: string[] = [];
  child.stdout?.on('data', (c: Buffer) => log.push(c.toString()));
  child.stderr?.on('data', (c: Buffer) => log.push(c.toString()));
  let ready: { baseUrl: string; apiKey: string };
  try {
    ready = await waitForBanner(child, 90_000);
  } catch (err) {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  process.env.BLUELINE_BASE_URL = ready.baseUrl;
  process.env.BLUELINE_ORIGIN = new URL(ready.baseUrl).origin;
  process.env.BLUELINE_API_KEY = ready.apiKey;
  console.log(`[e2e] blueline serve at ${ready.baseUrl} (data dir ${dataDir})`);

  return async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          resolve();
        }, 10_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    if (process.env.BLUELINE_E2E_KEEP_LOG) console.log(log.join(''));
    rmSync(dataDir, { recursive: true, force: true });
  };
}
