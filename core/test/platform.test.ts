import net from 'node:net';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness';
import { seedGraph } from './seed';
import { ensureOrganization } from '../store/repositories/organizations.repository';

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.stop();
});

function rawHttp(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d) => (out += d.toString()));
    s.on('end', () => resolve(out));
    s.on('close', () => resolve(out));
    s.on('error', reject);
  });
}

describe('transport', () => {
  it('answers plain HTTP on the HTTPS port with 403 https_required and closes the connection', async () => {
    const out = await rawHttp(t.port, 'GET /v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expect(out).toMatch(/^HTTP\/1\.1 403/);
    expect(out.toLowerCase()).toContain('connection: close');
    expect(out).toContain('application/problem+json');
    const body = JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4)) as {
      code: string;
      type: string;
    };
    expect(body.code).toBe('https_required');
    expect(body.type).toBe('/problems/https_required');
  });

  it('serves HTTPS with the generated certificate (key file 0600)', async () => {
    const res = await t.request('GET', '/v1/projects');
    expect(res.status).toBe(200);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
    expect(statSync(join(t.dataDir, 'tls', 'key.pem')).mode & 0o777).toBe(0o600);
  });
});

describe('auth', () => {
  it('401 with WWW-Authenticate for missing, malformed and unknown keys', async () => {
    for (const key of [null, 'nope', 'sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA']) {
      const res = await t.request('GET', '/v1/projects', { key });
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body.code).toBe('unauthorized');
      expect(res.headers['content-type']).toContain('application/problem+json');
    }
  });
});

describe('errors', () => {
  it('Problem Details with request id, instance and a problem page', async () => {
    const res = await t.request('GET', '/v1/projects/prj_doesnotexist');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({
      type: '/problems/not_found',
      status: 404,
      code: 'not_found',
      instance: '/v1/projects/prj_doesnotexist',
    });
    expect(res.body.request_id).toBe(res.headers['x-request-id']);
    const page = await t.request('GET', '/problems/not_found', { key: null });
    expect(page.status).toBe(200);
    expect(page.body.title).toBe('Not found');
  });

  it('405 with Allow on a known route with the wrong method', async () => {
    const res = await t.request('PUT', '/v1/projects');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toContain('GET');
    expect(res.headers.allow).toContain('POST');
    expect(res.body.code).toBe('method_not_allowed');
  });

  it('invalid JSON, wrong content type and validation errors are precise 4xx', async () => {
    const bad = await t.request('POST', '/v1/projects', {
      rawBody: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('invalid_json');
    // Nesting deep enough to overflow a recursive consumer (idempotency's canonical JSON did) is
    // refused by the parser, with or without an Idempotency-Key; 64 levels are still accepted.
    for (const headers of [{}, { 'idempotency-key': 'deep-body-1' }] as Record<string, string>[]) {
      const deep = await t.request('POST', '/v1/projects', {
        rawBody: '['.repeat(20_000) + ']'.repeat(20_000),
        headers: { 'content-type': 'application/json', ...headers },
      });
      expect(deep.status).toBe(400);
      expect(deep.body.code).toBe('invalid_json');
      expect(deep.body.detail).toContain('more than 64 levels deep');
    }
    const ok64 = await t.request('POST', '/v1/projects', {
      rawBody: JSON.stringify({
        name: 'Deep',
        description: 'x',
        extra: JSON.parse('['.repeat(62) + ']'.repeat(62)),
      }),
      headers: { 'content-type': 'application/json' },
    });
    expect(ok64.body.code).not.toBe('invalid_json');
    const form = await t.request('POST', '/v1/projects', {
      rawBody: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body.code).toBe('unsupported_media_type');
    const missing = await t.request('POST', '/v1/projects', { body: { description: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body.code).toBe('validation_error');
    expect(missing.body.errors[0].field).toBe('/name');
    const extra = await t.request('POST', '/v1/projects', { body: { name: 'x', colour: 'red' } });
    expect(extra.status).toBe(400);
    expect(extra.body.errors[0].field).toBe('/colour');
    const big = await t.request('POST', '/v1/projects', {
      body: { name: 'x', description: 'y'.repeat(1024 * 1024 + 10) },
    });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('payload_too_large');
  });
});

describe('projects', () => {
  it('create, read, patch, list and delete with cascade', async () => {
    const created = await t.request('POST', '/v1/projects', {
      body: { name: 'Lake House', description: 'Kegonsa' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Lake House', description: 'Kegonsa' });
    expect(created.body.id).toMatch(/^prj_/);
    expect(created.headers.location).toBe(`/v1/projects/${created.body.id}`);
    const id = created.body.id as string;
    const patched = await t.request('PATCH', `/v1/projects/${id}`, { body: { name: 'Lake Home' } });
    expect(patched.status).toBe(200);
    expect(patched.body.name).toBe('Lake Home');
    expect(patched.body.description).toBe('Kegonsa');

    const org = await ensureOrganization(t.svc.db, 'Test Org');
    const graph = await seedGraph(t.svc.db, org.id, { projectId: id });
    expect((await t.request('GET', `/v1/overlays/${graph.overlayIds[0]}`)).status).toBe(200);
    const del = await t.request('DELETE', `/v1/projects/${id}`);
    expect(del.status).toBe(204);
    expect((await t.request('GET', `/v1/projects/${id}`)).status).toBe(404);
    for (const [path, ids] of [
      ['drawings', graph.drawingIds],
      ['sheets', graph.sheetIds],
      ['blocks', graph.blockIds],
      ['overlays', graph.overlayIds],
      ['changes', graph.changeIds],
      ['symbols', graph.symbolIds],
      ['jobs', [graph.jobId]],
    ] as const) {
      for (const rid of ids)
        expect((await t.request('GET', `/v1/${path}/${rid}`)).status).toBe(404);
    }
  });
});
