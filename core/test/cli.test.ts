import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { httpsRequest } from './harness';

// The `blueline` command line (contract §11) as a user runs it: real child processes on a temp data
// dir, the service reached over HTTPS with the certificate it generated. Every spawn is bounded;
// tests get 150 s because each `node --import tsx` start takes seconds on a loaded 2-core machine.

const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const dirs: string[] = [];
const children = new Set<ChildProcessWithoutNullStreams>();

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'blueline-cli-'));
  dirs.push(d);
  return d;
}

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  if (!extra.BLUELINE_DATA_DIR) delete env.BLUELINE_DATA_DIR;
  return env;
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a one-shot command (`keys …`, `credits …`) and waits for it, killing it after `timeoutMs`. */
function cli(
  args: string[],
  opts: { env?: Record<string, string>; viaNpm?: boolean; timeoutMs?: number } = {},
): Promise<Run> {
  const [cmd, argv] = opts.viaNpm
    ? ['npm', ['run', '--silent', 'blueline', '--', ...args]]
    : [process.execPath, ['--import', 'tsx', 'core/cli/main.ts', ...args]];
  return new Promise((resolveRun, reject) => {
    const child = spawn(cmd, argv, { cwd: repoRoot, env: cleanEnv(opts.env) });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`blueline ${args.join(' ')} did not finish in time; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      children.delete(child);
      resolveRun({ code, signal, stdout, stderr });
    });
  });
}

interface Served {
  child: ChildProcessWithoutNullStreams;
  baseUrl: string;
  origin: string;
  out: () => string;
  agent: https.Agent;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `blueline serve --port 0` (plus `extra`) and waits for its banner. */
async function serve(dataDir: string, extra: string[] = []): Promise<Served> {
  const cli = ['--import', 'tsx', 'core/cli/main.ts', 'serve', '--port', '0', '--data-dir'];
  const child = spawn(process.execPath, [...cli, dataDir, ...extra], {
    cwd: repoRoot,
    env: cleanEnv(),
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('close', (code, signal) => {
      children.delete(child);
      r({ code, signal });
    }),
  );
  const deadline = Date.now() + 45_000;
  let m: RegExpMatchArray | null = null;
  while (!(m = /Blueline API: (https:\/\/127\.0\.0\.1:(\d+))\/v1\n/.exec(stdout))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`serve printed no banner; stdout: ${stdout} stderr: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // The lines after the banner are written in the same tick; give the pipe a moment.
  await new Promise((r) => setTimeout(r, 300));
  const agent = new https.Agent({
    ca: readFileSync(join(dataDir, 'tls', 'cert.pem')),
    keepAlive: false,
  });
  return { child, baseUrl: `${m[1]}/v1`, origin: m[1]!, out: () => stdout, agent, exited };
}

async function stop(s: Served): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  s.child.kill('SIGTERM');
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(() => {
      s.child.kill('SIGKILL');
      reject(new Error('serve did not exit within 15 s of SIGTERM'));
    }, 15_000),
  );
  return Promise.race([s.exited, timeout]);
}

const get = (s: Served, path: string, key: string | null) =>
  httpsRequest(s.agent, s.origin, 'GET', path, { key });

const KEY_LINE = /^API key \(organization "Default", shown once\): (sk_[A-Za-z0-9]+)$/m;

describe('blueline serve', () => {
  it('warms its workers up after the banner, unless --no-warmup', async () => {
    const warm = await serve(tempDir());
    const quiet = await serve(tempDir(), ['--no-warmup']);
    try {
      const deadline = Date.now() + 60_000;
      while (!/workers warmed up .*"workers":\d/.test(warm.out()) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      expect(warm.out()).toMatch(/workers warmed up .*"workers":\d/);
      expect(warm.out().indexOf('workers warmed up')).toBeGreaterThan(
        warm.out().indexOf('Blueline API:'),
      );
      expect(quiet.out()).not.toMatch(/warm/);
      expect(await stop(warm)).toEqual({ code: 0, signal: null });
      expect(await stop(quiet)).toEqual({ code: 0, signal: null });
    } finally {
      warm.child.kill('SIGKILL');
      quiet.child.kill('SIGKILL');
    }
  }, 150_000);

  it('prints the base URL and, on a new data dir only, one API key that works; SIGTERM exits 0', async () => {
    const dataDir = tempDir();
    const first = await serve(dataDir);
    try {
      const m = KEY_LINE.exec(first.out());
      expect(m, first.out()).not.toBeNull();
      const key = m![1]!;
      expect(first.out().split('sk_').length - 1).toBe(1);
      const ok = await get(first, '/v1/projects', key);
      expect(ok.status).toBe(200);
      expect(ok.body).toEqual({ data: [], _meta: { next: null, prev: null, limit: 20 } });
      expect((await get(first, '/v1/projects', null)).status).toBe(401);
      expect(await stop(first)).toEqual({ code: 0, signal: null });

      const second = await serve(dataDir);
      expect(second.out()).not.toContain('sk_');
      expect(second.out()).not.toMatch(/API key/);
      // The first key still works after the restart (keys persist, hashed).
      expect((await get(second, '/v1/projects', key)).status).toBe(200);
      expect(await stop(second)).toEqual({ code: 0, signal: null });
      const db = new Database(join(dataDir, 'blueline.db'), { readonly: true });
      try {
        const rows = db.prepare('SELECT key_hash FROM api_keys').all() as { key_hash: string }[];
        expect(rows).toHaveLength(1);
        expect(rows[0]!.key_hash).not.toContain(key);
        expect(rows[0]!.key_hash).toMatch(/^[0-9a-f]{64}$/);
      } finally {
        db.close();
      }
    } finally {
      first.child.kill('SIGKILL');
    }
  }, 150_000);

  it('serves the web UI at / without a flag (built when missing), the API alone with --no-web', async () => {
    const withUi = await serve(tempDir(), ['--no-warmup']);
    const apiOnly = await serve(tempDir(), ['--no-warmup', '--no-web']);
    try {
      const key = KEY_LINE.exec(withUi.out())![1]!;
      expect(withUi.out()).toContain(`Web UI: ${withUi.origin}/  (sign in with the API key above)`);
      expect(withUi.out().split(key).length - 1).toBe(1); // the key is printed once
      const page = await get(withUi, '/', null);
      expect(page.status).toBe(200);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toContain('<div id="root">');
      // Its script is served too, and the API beside it is unchanged.
      const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(page.text)![1]!;
      const js = await get(withUi, `/${script}`, null);
      expect(js.status).toBe(200);
      expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect((await get(withUi, '/v1/projects', key)).status).toBe(200);

      expect(apiOnly.out()).not.toContain('Web UI:');
      const none = await get(apiOnly, '/', null);
      expect(none.status).toBe(404);
      expect(none.body.code).toBe('not_found');
      expect(await stop(withUi)).toEqual({ code: 0, signal: null });
      expect(await stop(apiOnly)).toEqual({ code: 0, signal: null });
    } finally {
      withUi.child.kill('SIGKILL');
      apiOnly.child.kill('SIGKILL');
    }
  }, 150_000);

  it('refuses --web-root without a built UI, and --web-root with --no-web', async () => {
    const empty = tempDir();
    const a = await cli(['serve', '--port', '0', '--data-dir', tempDir(), '--web-root', empty]);
    expect(a.code).toBe(2);
    expect(a.stderr).toContain(`--web-root ${empty} holds no index.html`);
    const b = await cli(['serve', '--port', '0', '--web-root', empty, '--no-web']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('--web-root and --no-web contradict each other');
  });

  it('SIGTERM lets an in-flight request finish, then exits 0', async () => {
    const dataDir = tempDir();
    const s = await serve(dataDir);
    try {
      const key = KEY_LINE.exec(s.out())![1]!;
      const project = await httpsRequest(s.agent, s.origin, 'POST', '/v1/projects', {
        key,
        body: { name: 'Drain' },
      });
      expect(project.status).toBe(201);
      const pdf = Buffer.concat([
        Buffer.from('%PDF-1.4\n'),
        Buffer.alloc(64 * 1024, 0x20),
        Buffer.from('\n%%EOF\n'),
      ]);
      const file = await httpsRequest(s.agent, s.origin, 'POST', '/v1/files', {
        key,
        body: {
          project_id: project.body.id,
          filename: 'drain.pdf',
          content_type: 'application/pdf',
          size_bytes: pdf.length,
        },
      });
      expect(file.status).toBe(201);
      // Start the upload, send half of it, then SIGTERM, then the rest.
      const upload = new Promise<{ status: number; body: string }>((resolveUpload, reject) => {
        const req = https.request(file.body.upload_url as string, {
          method: 'PUT',
          agent: s.agent,
          headers: { 'content-type': 'application/pdf', 'content-length': String(pdf.length) },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolveUpload({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write(pdf.subarray(0, 32 * 1024));
        setTimeout(() => {
          s.child.kill('SIGTERM');
          setTimeout(() => req.end(pdf.subarray(32 * 1024)), 400);
        }, 300);
      });
      const done = await upload;
      expect(done.status, done.body).toBe(200);
      expect(JSON.parse(done.body)).toMatchObject({ status: 'uploaded', size_bytes: pdf.length });
      const exit = await Promise.race([
        s.exited,
        new Promise((r) => setTimeout(() => r('timeout'), 15_000)),
      ]);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(s.out()).toContain('SIGTERM');
    } finally {
      s.child.kill('SIGKILL');
    }
  }, 150_000);
});

describe('blueline keys and credits', () => {
  it('keys create is one transaction: a failure at the key leaves no organization, grant or key behind', async () => {
    const dataDir = tempDir();
    // A first command creates and migrates the data dir's store.
    expect((await cli(['keys', 'list', '--data-dir', dataDir])).code).toBe(0);
    const file = join(dataDir, 'blueline.db');
    const withStore = <T>(fn: (db: Database.Database) => T): T => {
      const db = new Database(file);
      try {
        return fn(db);
      } finally {
        db.close();
      }
    };
    // The key's INSERT fails after the organization and the grant were written.
    withStore((db) =>
      db.exec(
        "CREATE TRIGGER test_fail_key BEFORE INSERT ON api_keys BEGIN SELECT RAISE(ABORT, 'injected key failure'); END;",
      ),
    );
    const failed = await cli([
      'keys',
      'create',
      '--org',
      'Fresh Co',
      '--credits',
      '50',
      '--data-dir',
      dataDir,
    ]);
    expect(failed.code).not.toBe(0);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain('injected key failure');
    const count = (sql: string) => withStore((db) => (db.prepare(sql).get() as { n: number }).n);
    expect(count("SELECT count(*) AS n FROM organizations WHERE name = 'Fresh Co'")).toBe(0);
    expect(count('SELECT count(*) AS n FROM credit_ledger')).toBe(0);
    expect(count('SELECT count(*) AS n FROM api_keys')).toBe(0);

    withStore((db) => db.exec('DROP TRIGGER test_fail_key'));
    const ok = await cli([
      'keys',
      'create',
      '--org',
      'Fresh Co',
      '--credits',
      '50',
      '--data-dir',
      dataDir,
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^sk_[A-Za-z0-9]{40}\n$/);
    expect(count("SELECT credit_balance AS n FROM organizations WHERE name = 'Fresh Co'")).toBe(50);
    expect(count('SELECT count(*) AS n FROM credit_ledger')).toBe(1);
    expect(count('SELECT count(*) AS n FROM api_keys')).toBe(1);
  }, 150_000);

  it('create prints only a key that authenticates; list never shows a secret; revoke makes it 401; credits grant adds', async () => {
    const dataDir = tempDir();
    const s = await serve(dataDir);
    try {
      const defaultKey = KEY_LINE.exec(s.out())![1]!;
      // The documented form: npm run --silent blueline -- keys create ...
      const created = await cli(
        ['keys', 'create', '--org', 'Acme Builders', '--credits', '5', '--data-dir', dataDir],
        { viaNpm: true, timeoutMs: 60_000 },
      );
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^sk_[A-Za-z0-9]{40}\n$/);
      const acmeKey = created.stdout.trim();
      const acme = await get(s, '/v1/projects', acmeKey);
      expect(acme.status).toBe(200);
      // A second key for the same organization: same organization, not a new one.
      const again = await cli(['keys', 'create', '--org', 'Acme Builders', '--data-dir', dataDir]);
      expect(again.code).toBe(0);
      const acmeKey2 = again.stdout.trim();
      expect(acmeKey2).toMatch(/^sk_[A-Za-z0-9]{40}$/);
      expect(acmeKey2).not.toBe(acmeKey);
      const p = await httpsRequest(s.agent, s.origin, 'POST', '/v1/projects', {
        key: acmeKey,
        body: { name: 'Acme HQ' },
      });
      expect(p.status).toBe(201);
      expect((await get(s, `/v1/projects/${p.body.id}`, acmeKey2)).status).toBe(200);
      expect((await get(s, `/v1/projects/${p.body.id}`, defaultKey)).status).toBe(404);

      // keys list, here through $BLUELINE_DATA_DIR.
      const list = await cli(['keys', 'list'], { env: { BLUELINE_DATA_DIR: dataDir } });
      expect(list.code, list.stderr).toBe(0);
      const lines = list.stdout.trim().split('\n');
      expect(lines).toHaveLength(3);
      for (const secret of [defaultKey, acmeKey, acmeKey2]) {
        expect(list.stdout).not.toContain(secret);
        expect(list.stdout).not.toContain(secret.slice(3, 20));
      }
      const acmeLines = lines.filter((l) => l.includes('Acme Builders'));
      expect(acmeLines).toHaveLength(2);
      const line = acmeLines.find((l) => l.includes(acmeKey.slice(-4)))!;
      expect(line).toBeDefined();
      const keyId = /\b(key_[0-9A-Za-z]+)\b/.exec(line)![1]!;

      const revoked = await cli(['keys', 'revoke', keyId, '--data-dir', dataDir]);
      expect(revoked.code, revoked.stderr).toBe(0);
      const after = await get(s, '/v1/projects', acmeKey);
      expect(after.status).toBe(401);
      expect(after.body.code).toBe('unauthorized');
      expect((await get(s, '/v1/projects', acmeKey2)).status).toBe(200);
      const listed = await cli(['keys', 'list', '--data-dir', dataDir]);
      expect(listed.stdout.split('\n').find((l) => l.includes(keyId))).toMatch(/revoked/);
      const twice = await cli(['keys', 'revoke', keyId, '--data-dir', dataDir]);
      expect(twice.code).not.toBe(0);

      const granted = await cli([
        'credits',
        'grant',
        '--org',
        'Acme Builders',
        '--amount',
        '7',
        '--data-dir',
        dataDir,
      ]);
      expect(granted.code, granted.stderr).toBe(0);
      expect(granted.stdout).toContain('12');
      const db = new Database(join(dataDir, 'blueline.db'), { readonly: true });
      try {
        const org = db
          .prepare('SELECT credit_balance FROM organizations WHERE name = ?')
          .get('Acme Builders') as { credit_balance: number };
        expect(org.credit_balance).toBe(12);
      } finally {
        db.close();
      }

      for (const bad of [
        ['keys', 'create', '--data-dir', dataDir],
        ['credits', 'grant', '--org', 'Acme Builders', '--amount', '0', '--data-dir', dataDir],
      ]) {
        const r = await cli(bad);
        expect(r.code, bad.join(' ')).toBe(2);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(/blueline:/);
      }
      expect(await stop(s)).toEqual({ code: 0, signal: null });
    } finally {
      s.child.kill('SIGKILL');
    }
  }, 150_000);
});
