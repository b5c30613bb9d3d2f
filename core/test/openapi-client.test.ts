import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { resolve } from 'node:path';
import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { FIXTURES } from './flows';
import { startTestService, type TestService } from './harness';
import type { paths } from './generated/openapi';

// A client generated from the served document (openapi-typescript types, committed in
// core/test/generated and checked for staleness by npm run check) driving the real service with
// openapi-fetch: everything below is typed from the document alone, without casts.

let t: TestService;

/** `fetch` over the harness's HTTPS agent (it trusts the service's own certificate). */
function httpsFetch(agent: https.Agent): (request: Request) => Promise<Response> {
  return async (request) => {
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    return new Promise((resolvePromise, reject) => {
      const req = https.request(
        request.url,
        { method: request.method, agent, headers: Object.fromEntries(request.headers) },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(res.headers))
              if (value !== undefined)
                headers.set(name, Array.isArray(value) ? value.join(', ') : value);
            const status = res.statusCode ?? 500;
            const bytes = Buffer.concat(chunks);
            resolvePromise(
              new Response(status === 204 || status === 304 ? null : new Uint8Array(bytes), {
                status,
                headers,
              }),
            );
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}

const client = () =>
  createClient<paths>({
    baseUrl: t.origin,
    fetch: httpsFetch(t.agent),
    headers: { Authorization: `Bearer ${t.key}` },
  });

beforeAll(async () => {
  t = await startTestService();
});

afterAll(async () => {
  await t?.stop();
});

describe('a client generated from the OpenAPI document', () => {
  it('creates with an Idempotency-Key, lists and pages with _meta.next, and reads a typed Problem', async () => {
    const api = client();
    const create = () =>
      api.POST('/v1/projects', {
        params: { header: { 'Idempotency-Key': 'typed-client-project' } },
        body: { name: 'Typed client' },
      });
    const first = await create();
    expect(first.response.status).toBe(201);
    if (!first.data) throw new Error(`create failed: ${JSON.stringify(first.error)}`);
    const project = first.data;
    expectTypeOf(project.id).toEqualTypeOf<string>();
    expect(project.name).toBe('Typed client');
    // The replay returns the same project and creates nothing.
    const replay = await create();
    expect(replay.data?.id).toBe(project.id);
    expect(replay.response.headers.get('idempotency-status')).toBe('hit');

    for (const name of ['B', 'C', 'D', 'E'])
      expect((await api.POST('/v1/projects', { body: { name } })).response.status).toBe(201);

    const seen: string[] = [];
    let page = await api.GET('/v1/projects', { params: { query: { limit: 2 } } });
    for (;;) {
      if (!page.data) throw new Error(`list failed: ${JSON.stringify(page.error)}`);
      expect(page.data._meta.limit).toBe(2);
      seen.push(...page.data.data.map((p) => p.id));
      const next = page.data._meta.next;
      if (next === null) break;
      page = await api.GET('/v1/projects', { params: { query: { cursor: next } } });
    }
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);
    expect(seen).toContain(project.id);

    const missing = await api.GET('/v1/projects/{id}', {
      params: { path: { id: 'prj_00000000000000000000' } },
    });
    expect(missing.data).toBeUndefined();
    const problem = missing.error;
    if (problem?.status !== 404) throw new Error(`expected a 404, got ${missing.response.status}`);
    // The 404 of this operation can only be not_found: the type says so.
    expectTypeOf(problem.code).toEqualTypeOf<'not_found'>();
    expect(problem.code).toBe('not_found');
    expect(problem.instance).toBe('/v1/projects/prj_00000000000000000000');
    expect(problem.request_id).toBe(missing.response.headers.get('x-request-id'));

    const bad = await api.GET('/v1/drawings', {
      params: { query: { project_id: project.id, limit: 0 } },
    });
    if (bad.error?.status !== 400) throw new Error(`expected a 400, got ${bad.response.status}`);
    expect(bad.error.code).toBe('invalid_parameter');
  });

  it('uploads a PDF through the signed upload URL', async () => {
    const api = client();
    const project = await api.POST('/v1/projects', { body: { name: 'Upload' } });
    if (!project.data) throw new Error(`create failed: ${JSON.stringify(project.error)}`);
    const bytes = readFileSync(
      resolve(FIXTURES, '20150115_ASK-003_exterior-west-wall-window-locations.pdf'),
    );
    const created = await api.POST('/v1/files', {
      body: {
        project_id: project.data.id,
        filename: 'ask-003.pdf',
        content_type: 'application/pdf',
        size_bytes: bytes.length,
      },
    });
    if (!created.data) throw new Error(`create file failed: ${JSON.stringify(created.error)}`);
    expect(created.data.status).toBe('pending');
    const signed = new URL(created.data.upload_url);
    const expires = signed.searchParams.get('expires');
    const signature = signed.searchParams.get('signature');
    if (expires === null || signature === null) throw new Error('upload_url is not signed');

    const put = await api.PUT('/v1/uploads/{id}', {
      params: { path: { id: created.data.id }, query: { expires, signature } },
      body: new Blob([new Uint8Array(bytes)], { type: 'application/pdf' }),
      bodySerializer: (body) => body,
      headers: { 'Content-Type': 'application/pdf' },
    });
    if (!put.data) throw new Error(`upload failed: ${JSON.stringify(put.error)}`);
    expect(put.data.status).toBe('uploaded');
    expect(put.data.size_bytes).toBe(bytes.length);
    expect(put.data.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));

    // A second upload to the same URL is a typed 409.
    const again = await api.PUT('/v1/uploads/{id}', {
      params: { path: { id: created.data.id }, query: { expires, signature } },
      body: new Blob([new Uint8Array(bytes)]),
      bodySerializer: (body) => body,
      headers: { 'Content-Type': 'application/pdf' },
    });
    if (again.error?.status !== 409) throw new Error(`expected 409, got ${again.response.status}`);
    expect(again.error.code).toBe('conflict');

    const listed = await api.GET('/v1/files', {
      params: { query: { project_id: project.data.id } },
    });
    expect(listed.data?.data.map((f) => f.id)).toEqual([created.data.id]);
  });
});
