import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOrCreateSecret } from '../blobs/secrets';
import { UrlSigner } from '../blobs/signed-url';
import { storeFiles } from './backends';
import { startTestService, type TestService } from './harness';

// Security review with tests (issue 7 item 4; isolation and request fuzzing live in
// isolation.test.ts and fuzz.test.ts): signed URLs resist tampering and expire, API keys are
// stored only as hashes, private files are 0600, secrets never reach the log, and error bodies
// never carry a stack trace, SQL or a file path.

const repoRoot = resolve(import.meta.dirname, '../..');
const logLines: string[] = [];
const record = (level: string) => (obj: unknown, msg?: string) => {
  logLines.push(
    `${level} ${msg ?? ''} ${JSON.stringify(obj, (_k, v) => (v instanceof Error ? { message: v.message, stack: v.stack } : v))}`,
  );
};
const log = { info: record('info'), warn: record('warn'), error: record('error') };

// Failure injection: messages carrying exactly what must never reach a client.
const LEAKY_PATH = '/work/main/data/secret-place/blueline.db';
const LEAKY_SQL = "SELECT key_hash FROM api_keys WHERE organization_id = 'org_x'";

let t: TestService;
let projectId: string;
let png: Buffer;

beforeAll(async () => {
  t = await startTestService({
    log,
    workers: 1,
    configureApp: (app, db) => {
      app.get('/v1/test/leaky-error', async () => {
        throw new Error(`SQLITE_ERROR: near "${LEAKY_SQL}" in ${LEAKY_PATH}`);
      });
      app.get(
        '/v1/test/real-sql-error',
        async () => await db.prepare('SELECT * FROM table_that_does_not_exist').all(),
      );
      app.post('/v1/test/type-error', async () => {
        const o: { deep?: { x: number } } = {};
        return o.deep!.x; // TypeError with a stack pointing into this file
      });
    },
  });
  projectId = (await t.request('POST', '/v1/projects', { body: { name: 'Security' } })).body.id;
  png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#ffffff' } })
    .png()
    .toBuffer();
});
afterAll(async () => {
  await t.stop();
});

async function uploadPng(): Promise<{ id: string; uri: string; upload_url: string }> {
  const created = await t.request('POST', '/v1/files', {
    body: {
      project_id: projectId,
      filename: 'a.png',
      content_type: 'image/png',
      size_bytes: png.length,
    },
  });
  expect(created.status).toBe(201);
  expect(
    (
      await t.request('PUT', created.body.upload_url, {
        rawBody: png,
        headers: { 'content-type': 'image/png' },
        key: null,
      })
    ).status,
  ).toBe(200);
  const file = (await t.request('GET', `/v1/files/${created.body.id}`)).body;
  return { id: file.id, uri: file.uri, upload_url: created.body.upload_url };
}

const expectInvalidSignature = async (url: string, method = 'GET', what = url) => {
  const res = await t.request(method, url, {
    key: null,
    ...(method === 'PUT' ? { rawBody: png, headers: { 'content-type': 'image/png' } } : {}),
  });
  expect(res.status, what).toBe(403);
  expect(res.body?.code, what).toBe('invalid_signature');
  return res;
};

describe('signed URLs (contract §5)', () => {
  it('a genuine URL works without a key; every alteration is 403 invalid_signature', async () => {
    const a = await uploadPng();
    const b = await uploadPng();
    const ok = await t.request('GET', a.uri, { key: null });
    expect(ok.status).toBe(200);
    const u = new URL(a.uri, t.origin);
    const path = u.pathname;
    const expires = u.searchParams.get('expires')!;
    const sig = u.searchParams.get('signature')!;
    const flip = (s: string, i: number) =>
      s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const bPath = new URL(b.uri, t.origin).pathname;
    const variants: [string, string][] = [
      ['another object, same signature', `${bPath}?expires=${expires}&signature=${sig}`],
      ['later expiry', `${path}?expires=${Number(expires) + 1}&signature=${sig}`],
      ['far-future expiry', `${path}?expires=99999999999&signature=${sig}`],
      ['first signature character changed', `${path}?expires=${expires}&signature=${flip(sig, 0)}`],
      [
        'last signature character changed',
        `${path}?expires=${expires}&signature=${flip(sig, sig.length - 1)}`,
      ],
      ['signature truncated', `${path}?expires=${expires}&signature=${sig.slice(0, -2)}`],
      ['signature extended', `${path}?expires=${expires}&signature=${sig}AA`],
      ['no signature', `${path}?expires=${expires}`],
      ['no expiry', `${path}?signature=${sig}`],
      ['no query', path],
      [
        'signature of hex/base64 lookalike',
        `${path}?expires=${expires}&signature=${encodeURIComponent(sig.replace(/-/g, '+').replace(/_/g, '/'))}=`,
      ],
      [
        'duplicated signature',
        `${path}?expires=${expires}&signature=${flip(sig, 3)}&signature=${sig}`,
      ],
      ['path with a trailing slash', `${path}/?expires=${expires}&signature=${sig}`],
      [
        'path case changed',
        `${path.replace('/v1/blobs/', '/v1/BLOBS/')}?expires=${expires}&signature=${sig}`,
      ],
    ];
    for (const [what, url] of variants) {
      const res = await t.request('GET', url, { key: null });
      // Refused (403, or 401/404 when the altered path names no signed route) — never the bytes.
      expect([401, 403, 404], `${what}: ${url}`).toContain(res.status);
      if (res.status === 403) expect(res.body.code, what).toBe('invalid_signature');
      expect(res.headers['content-type'], what).toMatch(/problem\+json/);
    }
    // The most direct tampering cases must be the signature error, not a 404.
    await expectInvalidSignature(variants[0]![1], 'GET', 'another object');
    await expectInvalidSignature(variants[1]![1], 'GET', 'later expiry');
    await expectInvalidSignature(variants[3]![1], 'GET', 'changed signature');
    // An API key is no substitute for the signature.
    const withKey = await t.request('GET', `${path}?expires=${expires}&signature=${flip(sig, 5)}`);
    expect(withKey.status).toBe(403);
  });

  it('an authentic URL past its expiry is 403 invalid_signature, and says it expired', async () => {
    const a = await uploadPng();
    const path = new URL(a.uri, t.origin).pathname;
    // Signed with the service's own secret, one hour and one second ago: genuine but expired.
    const signer = new UrlSigner(await loadOrCreateSecret(t.dataDir, 'url-signing'));
    const genuineNow = signer.sign(path, 60);
    expect((await t.request('GET', genuineNow.url, { key: null })).status).toBe(200); // the signer is the service's
    const expired = signer.sign(path, 3600, { now: Date.now() - 3601_000 });
    const res = await expectInvalidSignature(expired.url, 'GET', 'expired');
    expect(res.body.detail).toMatch(/expired/i);
    // Even a one-second URL stops working once its second has passed.
    const short = signer.sign(path, 1);
    await new Promise((r) => setTimeout(r, 2100));
    await expectInvalidSignature(short.url, 'GET', 'one-second URL after 2 s');
    // The method is signed too: a genuine download-class signature of the upload path is no upload URL.
    const created = await t.request('POST', '/v1/files', {
      body: { project_id: projectId, filename: 'b.png', content_type: 'image/png' },
    });
    const uploadPath = new URL(created.body.upload_url, t.origin).pathname;
    await expectInvalidSignature(
      signer.sign(uploadPath, 600, { method: 'GET' }).url,
      'PUT',
      'PUT with a GET-class signature',
    );
    expect((await t.request('GET', `/v1/files/${created.body.id}`)).body.status).toBe('pending'); // nothing stored
    // An expired upload URL uploads nothing either.
    await expectInvalidSignature(
      signer.sign(uploadPath, 900, { method: 'PUT', now: Date.now() - 901_000 }).url,
      'PUT',
      'expired upload URL',
    );
    expect((await t.request('GET', `/v1/files/${created.body.id}`)).body.status).toBe('pending');
    // The genuine upload URL still works afterwards.
    expect(
      (
        await t.request('PUT', created.body.upload_url, {
          rawBody: png,
          headers: { 'content-type': 'image/png' },
          key: null,
        })
      ).status,
    ).toBe(200);
  });
});

describe('API keys (contract §11: stored only as SHA-256 hashes)', () => {
  it('the plain key appears nowhere in the database files, only its hash', async () => {
    const secret = await t.svc.createSessionKey('security test');
    expect(secret).toMatch(/^sk_/);
    expect((await t.request('GET', '/v1/projects', { key: secret })).status).toBe(200); // used: last_used_at written
    expect((await t.request('GET', '/v1/projects', { key: t.key })).status).toBe(200);
    const rows = (await t.svc.db.prepare('SELECT * FROM api_keys').all()) as Record<
      string,
      unknown
    >[];
    const mine = rows.find((r) => r.key_hash === createHash('sha256').update(secret).digest('hex'));
    expect(mine).toBeDefined();
    for (const r of rows)
      for (const v of Object.values(r)) expect(String(v)).not.toContain(secret.slice(3));
    // The raw bytes of the database, its WAL and shared memory (on PostgreSQL: the database's
    // files and the server's WAL): no key, in any form we know.
    const files = await storeFiles(t.svc.db, t.dataDir);
    if (t.svc.db.dialect === 'sqlite') expect(files).toContain(join(t.dataDir, 'blueline.db'));
    else expect(files.length).toBeGreaterThan(10);
    for (const f of files) {
      const bytes = readFileSync(f);
      for (const k of [secret, t.key]) {
        expect(bytes.includes(Buffer.from(k)), `${f} holds a plain key`).toBe(false);
        expect(bytes.includes(Buffer.from(k.slice(3))), `${f} holds a key body`).toBe(false);
        expect(bytes.includes(Buffer.from(k, 'utf16le')), `${f} holds a UTF-16 key`).toBe(false);
      }
    }
  });

  it('the CLI prints a new key once on stdout, lists keys without secrets, and never logs it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blueline-keys-'));
    const cli = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((res) => {
        const c = spawn(
          process.execPath,
          ['--import', 'tsx', 'core/cli/main.ts', ...args, '--data-dir', dir],
          { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
        );
        let stdout = '';
        let stderr = '';
        c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        c.on('exit', (code) => res({ code, stdout, stderr }));
      });
    try {
      const created = await cli(['keys', 'create', '--org', 'Acme']);
      expect(created.code, created.stderr).toBe(0);
      const key = created.stdout.trim();
      expect(key).toMatch(/^sk_[A-Za-z0-9]{20,100}$/);
      expect(created.stderr).not.toContain(key);
      const listed = await cli(['keys', 'list']);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('Acme');
      expect(listed.stdout + listed.stderr).not.toContain(key.slice(3, -4));
      for (const f of readdirSync(dir).filter((n) => n.startsWith('blueline.db')))
        expect(readFileSync(join(dir, f)).includes(Buffer.from(key))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('private files', () => {
  it('the TLS private key and the signing secrets are 0600, their folders and the data dir 0700', () => {
    if (process.platform === 'win32') return;
    const mode = (p: string) => statSync(join(t.dataDir, p)).mode & 0o777;
    expect(mode('.')).toBe(0o700);
    expect(mode('tls')).toBe(0o700);
    expect(mode('tls/key.pem')).toBe(0o600);
    expect(mode('secrets')).toBe(0o700);
    const secrets = readdirSync(join(t.dataDir, 'secrets'));
    expect(secrets.sort()).toEqual(['cursor.key', 'url-signing.key']);
    for (const s of secrets) expect(mode(`secrets/${s}`), s).toBe(0o600);
  });

  it('a secret whose mode was loosened (a copy, a restore) is tightened again on load', async () => {
    if (process.platform === 'win32') return;
    const file = join(t.dataDir, 'secrets', 'cursor.key');
    chmodSync(file, 0o644);
    await loadOrCreateSecret(t.dataDir, 'cursor');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

describe('errors never leak internals (contract §3)', () => {
  it('a 500 carries only a generic detail; the real message goes to the log with the request id', async () => {
    for (const [method, path] of [
      ['GET', '/v1/test/leaky-error'],
      ['GET', '/v1/test/real-sql-error'],
      ['POST', '/v1/test/type-error'],
    ] as const) {
      const before = logLines.length;
      const res = await t.request(method, path, method === 'POST' ? { body: {} } : {});
      expect(res.status, path).toBe(500);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body).toMatchObject({
        code: 'internal_error',
        status: 500,
        type: '/problems/internal_error',
        instance: path,
      });
      expect(res.body.request_id).toBe(res.headers['x-request-id']);
      expect(Object.keys(res.body).sort()).toEqual([
        'code',
        'detail',
        'instance',
        'request_id',
        'status',
        'title',
        'type',
      ]);
      expect(res.text, path).not.toMatch(
        /SQLITE|SELECT|api_keys|table_that_does_not_exist|\/work\/|secret-place|\.ts:\d+|\bat [\w.<>]+ \(|node_modules|TypeError|Cannot read/,
      );
      // The log has the real cause and the request id to find it.
      const logged = logLines.slice(before).join('\n');
      expect(logged, path).toContain(res.body.request_id);
      // SQLite says "no such table", PostgreSQL 'relation "…" does not exist'.
      expect(logged, path).toMatch(
        /SQLITE_ERROR|no such table|does not exist|Cannot read|TypeError/,
      );
    }
  });

  it('4xx bodies name the problem without internals', async () => {
    const cases: [
      string,
      string,
      { body?: unknown; rawBody?: string; headers?: Record<string, string>; key?: string | null },
    ][] = [
      ['GET', '/v1/projects/prj_00000000000000000000', {}],
      [
        'POST',
        '/v1/projects',
        { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } },
      ],
      ['POST', '/v1/projects', { body: { name: 42 } }],
      ['GET', '/v1/projects', { key: 'sk_notarealkey0000000000000000' }],
      ['GET', '/v1/projects?limit=abc', {}],
      ['GET', '/v1/projects?cursor=eyJhIjoxfQ.AAAA', {}],
      ['GET', `/v1/files?project_id=${projectId}&cursor=${'A'.repeat(3000)}`, {}],
      ['GET', '/v1/nowhere/../../etc/passwd', {}],
    ];
    for (const [method, path, opts] of cases) {
      const res = await t.request(method, path, opts);
      expect(res.status, path).toBeGreaterThanOrEqual(400);
      expect(res.status, path).toBeLessThan(500);
      expect(typeof res.body?.code, path).toBe('string');
      expect(res.text, path).not.toMatch(
        /SQLITE|SELECT |\/work\/|blueline-test-|\.ts:\d+|\bat [\w.<>]+ \(|node_modules/,
      );
    }
  });
});

describe('secrets never logged', () => {
  it('no API key, signing secret or signature appears in the service log', async () => {
    // Exercise what touches secrets: key creation, good and bad keys, signed URLs good and bad, uploads, 5xx.
    const fresh = await t.svc.createSessionKey('log check');
    const bogus = 'sk_' + 'Q'.repeat(40);
    await t.request('GET', '/v1/projects', { key: fresh });
    await t.request('GET', '/v1/projects', { key: bogus });
    await t.request('GET', '/v1/projects', {
      key: null,
      headers: { authorization: `Basic ${Buffer.from(`user:${fresh}`).toString('base64')}` },
    });
    const a = await uploadPng();
    await t.request('GET', a.uri, { key: null });
    await t.request('GET', a.uri.replace(/signature=./, 'signature=Z'), { key: null });
    await t.request('GET', '/v1/test/leaky-error', { key: fresh });
    expect(logLines.length).toBeGreaterThan(0); // the capture works (the 5xx above was logged)
    const all = logLines.join('\n');
    const urlSecret = readFileSync(join(t.dataDir, 'secrets/url-signing.key'), 'utf8').trim();
    const cursorSecret = readFileSync(join(t.dataDir, 'secrets/cursor.key'), 'utf8').trim();
    const tlsKey = readFileSync(join(t.dataDir, 'tls/key.pem'), 'utf8').split('\n')[1]!;
    for (const [what, s] of [
      ['session key', fresh],
      ['session key body', fresh.slice(3)],
      ['harness key', t.key],
      ['rejected key', bogus],
      ['url-signing secret', urlSecret],
      ['cursor secret', cursorSecret],
      ['tls private key', tlsKey],
      ['base64 Basic credentials', Buffer.from(`user:${fresh}`).toString('base64')],
    ] as const)
      expect(all.includes(s), `${what} in the log`).toBe(false);
  });
});
