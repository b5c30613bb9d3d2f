import { mkdtemp, readFile, rm, stat, chmod, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadOrCreateSecret, secretPath } from './secrets';
import {
  DOWNLOAD_URL_EXPIRY_STEP_SECONDS,
  DOWNLOAD_URL_TTL_SECONDS,
  UPLOAD_URL_TTL_SECONDS,
  UrlSigner,
} from './signed-url';

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

  it('refuses every one-character change of the signature, the last (partly unused) one too', () => {
    const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = 0; i < 40; i++) {
      const path = `/v1/blobs/k${i}.png`;
      const q = query(signer.sign(path, 3600, { now: T0 }).url);
      const sig = q.get('signature')!;
      for (const pos of [0, 21, 42]) {
        for (const c of B64URL) {
          if (c === sig[pos]) continue;
          const altered = new URLSearchParams(q);
          altered.set('signature', sig.slice(0, pos) + c + sig.slice(pos + 1));
          expect(signer.verify(path, altered, T0).ok, `${sig} @${pos} → ${c}`).toBe(false);
        }
      }
    }
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

describe('UrlSigner.downloadUrl', () => {
  const STEP = DOWNLOAD_URL_EXPIRY_STEP_SECONDS;
  const TTL = DOWNLOAD_URL_TTL_SECONDS;
  const expiresOf = (url: string) => Number(query(url).get('expires'));

  it('is valid at least the TTL (1 hour) and less than TTL + step, over a whole step of issue times', () => {
    const signer = new UrlSigner(Buffer.alloc(32, 9));
    expect(STEP).toBe(300);
    expect(TTL).toBe(3600);
    const base = Math.floor(T0 / (STEP * 1000)) * STEP * 1000;
    // Every 7.3 s across two steps, plus the boundaries themselves and 1 ms either side.
    const times = [base, base + 1, base - 1, base + STEP * 1000, base + STEP * 1000 - 1];
    for (let t = base; t < base + 2 * STEP * 1000; t += 7300) times.push(t);
    for (const now of times) {
      const url = signer.downloadUrl(PATH, now);
      const validMs = expiresOf(url) * 1000 - now;
      expect(validMs).toBeGreaterThanOrEqual(TTL * 1000);
      expect(validMs).toBeLessThan((TTL + STEP) * 1000);
      expect(expiresOf(url) % STEP).toBe(0);
      // verify agrees: valid 1 ms before the expiry, expired at it.
      expect(signer.verify(PATH, query(url), now).ok).toBe(true);
      expect(signer.verify(PATH, query(url), now + TTL * 1000 - 1).ok).toBe(true);
      const at = signer.verify(PATH, query(url), expiresOf(url) * 1000);
      expect(!at.ok && at.error.detail).toMatch(/expired/);
    }
  });

  it('gives one path the same URL within a step and a new one after it; signatures match sign()', () => {
    const signer = new UrlSigner(Buffer.alloc(32, 9));
    const base = Math.ceil(T0 / (STEP * 1000)) * STEP * 1000;
    const a = signer.downloadUrl(PATH, base + 1);
    expect(signer.downloadUrl(PATH, base + STEP * 1000)).toBe(a);
    const b = signer.downloadUrl(PATH, base + STEP * 1000 + 1);
    expect(b).not.toBe(a);
    expect(expiresOf(b) - expiresOf(a)).toBe(STEP);
    // The same MAC as sign(): a fresh signer (no memo) signing for that exact expiry agrees.
    const exact = new UrlSigner(Buffer.alloc(32, 9)).sign(PATH, TTL, {
      now: (expiresOf(a) - TTL) * 1000,
    });
    expect(exact.url).toBe(a);
    // Without a step, the expiry is the next whole second plus the TTL.
    const unstepped = new UrlSigner(Buffer.alloc(32, 9), { expiryStepSeconds: 1 });
    expect(expiresOf(unstepped.downloadUrl(PATH, T0 + 250))).toBe(T0 / 1000 + 1 + TTL);
    expect(expiresOf(unstepped.downloadUrl(PATH, T0))).toBe(T0 / 1000 + TTL);
  });

  it('refuses tampered memoized URLs as it refuses any other', () => {
    const signer = new UrlSigner(Buffer.alloc(32, 9));
    signer.downloadUrl(PATH, T0);
    const url = signer.downloadUrl(PATH, T0); // from the memo
    const q = query(url);
    const altered = (r: ReturnType<UrlSigner['verify']>) => !r.ok && /altered/.test(r.error.detail);
    expect(signer.verify(PATH, q, T0).ok).toBe(true);
    expect(altered(signer.verify('/v1/files/fil_abd/content', q, T0))).toBe(true);
    const later = new URLSearchParams(q);
    later.set('expires', String(expiresOf(url) + STEP));
    expect(altered(signer.verify(PATH, later, T0))).toBe(true);
    const sig = q.get('signature')!;
    const flipped = new URLSearchParams(q);
    flipped.set('signature', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1));
    expect(altered(signer.verify(PATH, flipped, T0))).toBe(true);
    // A download URL never authorizes an upload, memoized or not.
    expect(signer.verify(PATH, q, T0, 'PUT').ok).toBe(false);
    expect(altered(new UrlSigner(Buffer.alloc(32, 8)).verify(PATH, q, T0))).toBe(true);
  });

  it('keeps its memo bounded, dropping paths not used recently first', () => {
    const signer = new UrlSigner(Buffer.alloc(32, 9), { memoEntries: 4 });
    const uncached = new UrlSigner(Buffer.alloc(32, 9), { memoEntries: 0 });
    const macs = vi.spyOn(signer as unknown as { mac: () => string }, 'mac');
    const p = (i: number) => `/v1/blobs/k${i}.png`;
    const signs = (fn: () => void) => {
      const before = macs.mock.calls.length;
      fn();
      return macs.mock.calls.length - before;
    };
    expect(signs(() => [0, 1].forEach((i) => signer.downloadUrl(p(i), T0)))).toBe(2);
    expect(signs(() => [0, 1].forEach((i) => signer.downloadUrl(p(i), T0)))).toBe(0); // memo
    signer.downloadUrl(p(2), T0);
    signer.downloadUrl(p(0), T0); // p0 used again: p1 is now the least recently used
    expect(signs(() => signer.downloadUrl(p(3), T0))).toBe(1);
    expect(signer.memoSize).toBeLessThanOrEqual(4);
    expect(signs(() => signer.downloadUrl(p(0), T0))).toBe(0);
    expect(signs(() => signer.downloadUrl(p(1), T0))).toBe(1); // dropped
    // A new expiry step signs again, memo or not.
    expect(signs(() => signer.downloadUrl(p(0), T0 + STEP * 1000))).toBe(1);
    for (let i = 4; i < 500; i++) signer.downloadUrl(p(i), T0 + (i % 3) * STEP * 1000);
    expect(signer.memoSize).toBeLessThanOrEqual(4);
    expect(uncached.memoSize).toBe(0);
    // Whatever was dropped or replaced, every answer is the URL a memo-less signer gives.
    for (let i = 0; i < 60; i++)
      for (const t of [T0, T0 + 600_000])
        expect(signer.downloadUrl(p(i % 7), t)).toBe(uncached.downloadUrl(p(i % 7), t));
    expect(signer.memoSize).toBeLessThanOrEqual(4);
    const big = new UrlSigner(Buffer.alloc(32, 9), { memoEntries: 1000 });
    for (let i = 0; i < 5000; i++) big.downloadUrl(p(i), T0);
    expect(big.memoSize).toBeLessThanOrEqual(1000);
    expect(big.memoSize).toBeGreaterThanOrEqual(500);
  });

  it('validates its inputs, memo or not', () => {
    const signer = new UrlSigner(Buffer.alloc(32, 9));
    signer.downloadUrl(PATH, T0);
    expect(() => signer.downloadUrl('v1/x', T0)).toThrow(TypeError);
    expect(() => signer.downloadUrl('/v1/x?y=1', T0)).toThrow(TypeError);
    expect(() => signer.downloadUrl(PATH, T0, 0)).toThrow(RangeError);
    expect(() => signer.downloadUrl(PATH, T0, 7 * 24 * 3600)).toThrow(RangeError);
    expect(() => signer.downloadUrl(PATH, Number.NaN)).toThrow(RangeError);
    expect(() => new UrlSigner(Buffer.alloc(32), { expiryStepSeconds: 0 })).toThrow(RangeError);
    expect(() => new UrlSigner(Buffer.alloc(32), { memoEntries: -1 })).toThrow(RangeError);
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
