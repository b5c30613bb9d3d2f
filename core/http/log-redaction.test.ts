import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../test/harness';
import { REDACTED, redact, redactingLogger, redactString, sanitizeUrl } from './log-redaction';

const KEY = 'sk_' + 'A1b2C3d4E5'.repeat(4);
const SIG = 'pQ7xL2mN9vR4tY6uW8zA1bC3dE5fG7hJ9kL1mN3pQ5r';

describe('redactString / sanitizeUrl', () => {
  it('masks the signature of a signed URL and keeps the path and expiry readable', () => {
    expect(sanitizeUrl(`/v1/blobs/drw_1/sheet.png?expires=1700000000&signature=${SIG}`)).toBe(
      `/v1/blobs/drw_1/sheet.png?expires=1700000000&signature=${REDACTED}`,
    );
    expect(sanitizeUrl(`/v1/files/fil_1/content?signature=${SIG}&expires=1`)).toBe(
      `/v1/files/fil_1/content?signature=${REDACTED}&expires=1`,
    );
    expect(sanitizeUrl(undefined)).toBeUndefined();
  });

  it('masks credentials of third-party URLs, nested encoded URLs, auth schemes, API keys and webhook secrets', () => {
    const s = redactString(
      `POST https://hooks.example.com/in?token=abc123&x=1 ` +
        `redirect=https%3A%2F%2Fa.b%2Fc%3Fsig%3Dzzz999 ` +
        `https://bucket.s3.amazonaws.com/k?X-Amz-Signature=deadbeef&X-Amz-Credential=AKIA/1 ` +
        `Authorization: Bearer ${KEY}, Basic dXNlcjpwYXNz; key ${KEY} secret whsec_c2VjcmV0c2VjcmV0`,
    );
    for (const leaked of [
      'abc123',
      'zzz999',
      'deadbeef',
      'AKIA',
      KEY,
      KEY.slice(3),
      'dXNlcjpwYXNz',
      'c2VjcmV0c2VjcmV0',
    ])
      expect(s, leaked).not.toContain(leaked);
    expect(s).toContain('https://hooks.example.com/in?token=[Redacted]&x=1');
    expect(s).toContain('Bearer [Redacted]');
    expect(s).toContain('sk_[Redacted]');
  });
});

describe('redact', () => {
  it('replaces credential fields at any depth, flattens errors with their extras and cause, survives cycles', () => {
    const cause = new Error(`fetch https://x.test/a?signature=${SIG} failed`);
    const err = Object.assign(new Error('upstream failed', { cause }), {
      code: 'E_UP',
      config: { headers: { Authorization: `Bearer ${KEY}`, Accept: 'json' }, url: `/v?sig=${SIG}` },
    });
    const obj: Record<string, unknown> = {
      err,
      req: { headers: { authorization: `Bearer ${KEY}`, cookie: 'sid=1', host: 'h' } },
      list: [{ token: 't0k3n' }, `?signature=${SIG}`],
      bytes: new Uint8Array(4),
      at: new URL(`https://h/p?signature=${SIG}`),
    };
    obj.self = obj;
    const out = redact(obj) as Record<string, any>;
    const text = JSON.stringify(out);
    expect(text).not.toContain(SIG);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain('t0k3n');
    expect(text).not.toContain('sid=1');
    expect(out.req.headers).toEqual({ authorization: REDACTED, cookie: REDACTED, host: 'h' });
    expect(out.err).toMatchObject({
      name: 'Error',
      message: 'upstream failed',
      code: 'E_UP',
      config: { headers: { Authorization: REDACTED, Accept: 'json' } },
      cause: { message: `fetch https://x.test/a?signature=${REDACTED} failed` },
    });
    expect(out.err.stack).toMatch(/^Error: upstream failed\n\s+at /);
    expect(out.self).toBe('[Circular]');
    expect(out.bytes).toBe('[Uint8Array]');
    expect(obj.req).toEqual({
      headers: { authorization: `Bearer ${KEY}`, cookie: 'sid=1', host: 'h' },
    }); // input untouched
  });

  it('redactingLogger passes redacted fields and message to the wrapped logger, and wraps once', () => {
    const lines: unknown[][] = [];
    const sink = {
      info: (...a: unknown[]) => lines.push(['info', ...a]),
      warn: (...a: unknown[]) => lines.push(['warn', ...a]),
      error: (...a: unknown[]) => lines.push(['error', ...a]),
    };
    const log = redactingLogger(sink);
    expect(redactingLogger(log)).toBe(log);
    log.error({ url: `/v1/blobs/k?expires=1&signature=${SIG}` }, `failed for Bearer ${KEY}`);
    log.info(`plain ${KEY}`);
    expect(lines).toEqual([
      [
        'error',
        { url: `/v1/blobs/k?expires=1&signature=${REDACTED}` },
        `failed for Bearer ${REDACTED}`,
      ],
      ['info', `plain sk_${REDACTED}`],
    ]);
  });
});

describe('a 5xx on a signed URL logs neither the signature nor the API key', () => {
  const logLines: string[] = [];
  const record = (level: string) => (obj: unknown, msg?: string) =>
    logLines.push(
      `${level} ${msg ?? ''} ${JSON.stringify(obj, (_k, v) => (v instanceof Error ? { ...v, message: v.message, stack: v.stack } : v))}`,
    );
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService({
      log: { info: record('info'), warn: record('warn'), error: record('error') },
      workers: 1,
      configureApp: (app) => {
        // Failure injection after the signature was accepted: an error that echoes the request
        // the way HTTP clients' errors do (URL in the message, headers in `config`).
        app.addHook('preHandler', async (request) => {
          if (request.headers['x-test-explode'])
            throw Object.assign(
              new Error(
                `upstream GET ${request.raw.url} failed (authorization: ${request.headers.authorization})`,
              ),
              { config: { url: request.raw.url, headers: request.headers } },
            );
        });
      },
    });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('redacts the URL, the error message and the echoed headers of the 500 log line', async () => {
    const project = (await t.request('POST', '/v1/projects', { body: { name: 'Logs' } })).body.id;
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
      .png()
      .toBuffer();
    const created = await t.request('POST', '/v1/files', {
      body: {
        project_id: project,
        filename: 'a.png',
        content_type: 'image/png',
        size_bytes: png.length,
      },
    });
    expect(created.status).toBe(201);
    const put = await t.request('PUT', created.body.upload_url, {
      rawBody: png,
      headers: { 'content-type': 'image/png' },
      key: null,
    });
    expect(put.status).toBe(200);
    const uri = (await t.request('GET', `/v1/files/${created.body.id}`)).body.uri as string;
    const signature = new URL(uri, t.origin).searchParams.get('signature')!;
    expect(signature.length).toBeGreaterThan(20);
    // The signed URL works (so the 500 below is on a URL that carries a live credential).
    expect((await t.request('GET', uri, { key: null })).status).toBe(200);

    const before = logLines.length;
    const res = await t.request('GET', uri, { headers: { 'x-test-explode': '1' } });
    expect(res.status).toBe(500);
    const logged = logLines.slice(before).join('\n');
    // The line is there, findable by request id, with the path and expiry still readable.
    expect(logged).toContain(res.body.request_id);
    expect(logged).toContain('request failed');
    expect(logged).toContain(`${new URL(uri, t.origin).pathname}?expires=`);
    expect(logged).toContain(`signature=${REDACTED}`);
    expect(logged).toContain('"authorization":"[Redacted]"');
    // …and no credential, in any form.
    expect(logged).not.toContain(signature);
    expect(logged).not.toContain(t.key);
    expect(logged).not.toContain(t.key.slice(3));
    expect(logged).not.toMatch(/Bearer sk_[A-Za-z0-9]/);
  });
});
