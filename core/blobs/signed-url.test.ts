import { mkdtemp, readFile, rm, stat, chmod, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateSecret, secretPath } from './secrets';
import { UPLOAD_URL_TTL_SECONDS, UrlSigner } from './signed-url';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'blueline-secrets-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const T0 = Date.parse('2026-11-21T09:30:00.000Z');
const PATH = '/v1/files/fil_abc/content';

function query(url: string): URLSearchParams {
  return new URL(url, 'https://127.0.0.1').searchParams;
}

describe('UrlSigner', () => {
  const signer = new UrlSigner(Buffer.alloc(32, 9));

  it('accepts its own URL until it expires, then says expired', () => {
    const s = signer.sign(PATH, 3600, { now: T0 });
    expect(s.url).toMatch(
      /^\/v1\/files\/fil_abc\/content\?expires=\d+&signature=[A-Za-z0-9_-]{43}$/,
    );
    expect(s.expiresAt).toBe('2026-11-21T10:30:00.000Z');
    expect(signer.verify(PATH, query(s.url), T0 + 3599_000)).toEqual({
      ok: true,
      expiresAt: s.expiresAt,
    });
    const expired = signer.verify(PATH, query(s.url), T0 + 3600_000);
    expect(expired.ok).toBe(false);
    if (!expired.ok) {
      expect(expired.error.code).toBe('invalid_signature');
      expect(expired.error.status).toBe(403);
      expect(expired.error.detail).toContain('expired at 2026-11-21T10:30:00.000Z');
    }
  });

  it('says altered for a tampered path, expiry or signature', () => {
    const s = signer.sign(PATH, 3600, { now: T0 });
    const q = query(s.url);
    const altered = (r: ReturnType<UrlSigner['verify']>) => !r.ok && /altered/.test(r.error.detail);
    expect(altered(signer.verify('/v1/files/fil_abd/content', q, T0))).toBe(true);
    const later = new URLSearchParams(q);
    later.set('expires', String(Number(q.get('expires')) + 86400));
    expect(altered(signer.verify(PATH, later, T0))).toBe(true);
    // An expired URL whose expiry is pushed forward is altered, not expired.
    expect(altered(signer.verify(PATH, later, T0 + 7200_000))).toBe(true);
    const sig = q.get('signature')!;
    const flipped = new URLSearchParams(q);
    flipped.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    expect(altered(signer.verify(PATH, flipped, T0))).toBe(true);
    const short = new URLSearchParams(q);
    short.set('signature', sig.slice(0, 20));
    expect(altered(signer.verify(PATH, short, T0))).toBe(true);
    const doubled = new URLSearchParams(q);
    doubled.append('expires', '1');
    expect(altered(signer.verify(PATH, doubled, T0))).toBe(true);
    expect(altered(new UrlSigner(Buffer.alloc(32, 8)).verify(PATH, q, T0))).toBe(true);
  });

  it('accepts a plain query object and ignores unsigned extras; missing params are "not signed"', () => {
    const s = signer.sign(PATH, 60, { now: T0 });
    const obj = { ...Object.fromEntries(query(s.url)), palette: 'cb' };
    expect(signer.verify(PATH, obj, T0).ok).toBe(true);
    const none = signer.verify(PATH, {}, T0);
    expect(!none.ok && none.error.detail).toMatch(/not signed/);
    expect(() => signer.assertValid(PATH, {}, T0)).toThrow(/not signed/);
  });

  it('binds the method: a download URL cannot upload, HEAD counts as GET', () => {
    const get = signer.sign(PATH, 3600, { now: T0 });
    expect(signer.verify(PATH, query(get.url), T0, 'HEAD').ok).toBe(true);
    expect(signer.verify(PATH, query(get.url), T0, 'PUT').ok).toBe(false);
    const put = signer.sign(PATH, UPLOAD_URL_TTL_SECONDS, { now: T0, method: 'PUT' });
    expect(put.expiresAt).toBe('2026-11-21T09:45:00.000Z');
    expect(signer.verify(PATH, query(put.url), T0, 'PUT').ok).toBe(true);
    expect(signer.verify(PATH, query(put.url), T0, 'GET').ok).toBe(false);
  });

  it('validates its inputs', () => {
    expect(() => signer.sign('v1/x', 60)).toThrow(TypeError);
    expect(() => signer.sign('/v1/x?y=1', 60)).toThrow(TypeError);
    expect(() => signer.sign('/v1/x', 0)).toThrow(RangeError);
    expect(() => new UrlSigner(Buffer.alloc(16))).toThrow(TypeError);
  });
});

describe('loadOrCreateSecret', () => {
  it('creates 32 random bytes with mode 0600 once and returns them after', async () => {
    const a = await loadOrCreateSecret(dataDir, 'url-signing');
    expect(a.length).toBe(32);
    const file = secretPath(dataDir, 'url-signing');
    expect(file).toBe(path.join(dataDir, 'secrets', 'url-signing.key'));
    if (process.platform !== 'win32') expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await loadOrCreateSecret(dataDir, 'url-signing')).toEqual(a);
    const b = await loadOrCreateSecret(dataDir, 'cursor');
    expect(b).not.toEqual(a);
    expect((await readFile(file, 'utf8')).trim()).toBe(a.toString('hex'));
  });

  it('gives every concurrent caller the same secret', async () => {
    const all = await Promise.all(
      Array.from({ length: 8 }, () => loadOrCreateSecret(dataDir, 'race')),
    );
    for (const s of all) expect(s).toEqual(all[0]);
  });

  it('tightens a loosened mode', async () => {
    await loadOrCreateSecret(dataDir, 'url-signing');
    const file = secretPath(dataDir, 'url-signing');
    await chmod(file, 0o644);
    await loadOrCreateSecret(dataDir, 'url-signing');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
  });

  it('refuses a corrupt secret file and bad names', async () => {
    await loadOrCreateSecret(dataDir, 'url-signing');
    await writeFile(secretPath(dataDir, 'url-signing'), 'short\n');
    await expect(loadOrCreateSecret(dataDir, 'url-signing')).rejects.toThrow(/corrupt/);
    expect(() => secretPath(dataDir, '../x')).toThrow(TypeError);
  });
});
