import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type HttpResult, type TestService } from './harness';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { IDEMPOTENCY_TTL_MS } from '../http/plugins/idempotency.plugin';

// Idempotency for POST (spec "Idempotency", contract §8), over real HTTPS against a temp data dir.
// Failure-injection routes are added with `configureApp`, so the 5xx, cached-4xx and
// still-processing cases run the real plugin exactly as a resource route would.

let t: TestService;
let project: string;
const calls = { boom: 0, flaky: 0, slow: 0 };

beforeAll(async () => {
  t = await startTestService({
    configureApp: (app) => {
      // Fails with a 500 the first time, then succeeds.
      app.post('/v1/test/boom', async (_request, reply) => {
        calls.boom += 1;
        if (calls.boom === 1) throw new Error('injected failure');
        return reply.code(201).send({ attempt: calls.boom });
      });
      // Answers 400 the first time and 201 afterwards: a cached 4xx must never reach it again.
      app.post('/v1/test/flaky4xx', async (request, reply) => {
        calls.flaky += 1;
        if (calls.flaky === 1) {
          return reply
            .code(400)
            .type('application/problem+json')
            .send({ code: 'validation_error', request_id: request.id, attempt: 1 });
        }
        return reply.code(201).send({ attempt: calls.flaky });
      });
      app.post('/v1/test/echo', async (request, reply) =>
        reply.code(201).send({ echo: request.body ?? null }),
      );
      // Slow enough that duplicates arrive while the original is still being handled.
      app.post('/v1/test/slow', async (_request, reply) => {
        calls.slow += 1;
        const n = calls.slow;
        await new Promise((r) => setTimeout(r, 300));
        return reply.code(202).send({ job_id: `job_slow${n}`, status: 'Queued' });
      });
    },
  });
  const p = await t.request('POST', '/v1/projects', { body: { name: 'Files home' } });
  project = p.body.id;
});
afterAll(async () => {
  await t.stop();
});

const post = (path: string, body: unknown, key?: string, apiKey?: string): Promise<HttpResult> =>
  t.request('POST', path, {
    body,
    headers: key === undefined ? {} : { 'idempotency-key': key },
    ...(apiKey ? { key: apiKey } : {}),
  });

const countProjects = async (name: string): Promise<number> =>
  (
    (await t.svc.db.prepare('SELECT count(*) AS n FROM projects WHERE name = ?').get(name)) as {
      n: number;
    }
  ).n;

let seq = 0;
const newKey = () => `key-${Date.now()}-${++seq}_x`;

describe('replay', () => {
  it('POST /projects: miss, then hit with the same status, headers and body and a new X-Request-Id', async () => {
    const key = newKey();
    const first = await post('/v1/projects', { name: 'Idem A', description: 'd' }, key);
    expect(first.status).toBe(201);
    expect(first.headers['idempotency-status']).toBe('miss');
    const second = await post('/v1/projects', { description: 'd', name: 'Idem A' }, key); // same body, other key order
    expect(second.status).toBe(201);
    expect(second.headers['idempotency-status']).toBe('hit');
    expect(second.text).toBe(first.text);
    expect(second.headers.location).toBe(first.headers.location);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(second.headers['x-request-id']).toMatch(/^req_/);
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    // The same route spelled with a trailing slash is the same route.
    const slash = await post('/v1/projects/', { name: 'Idem A', description: 'd' }, key);
    expect(slash.status).toBe(201);
    expect(slash.headers['idempotency-status']).toBe('hit');
    expect(await countProjects('Idem A')).toBe(1);
    // Without a key, nothing is cached: two requests make two records.
    const plain1 = await post('/v1/projects', { name: 'Idem plain' });
    const plain2 = await post('/v1/projects', { name: 'Idem plain' });
    expect(plain1.headers['idempotency-status']).toBeUndefined();
    expect(plain2.body.id).not.toBe(plain1.body.id);
  });

  it('POST /files: the replay returns the original file and upload URL, and no second file', async () => {
    const key = newKey();
    const body = { project_id: project, filename: 'set.pdf', content_type: 'application/pdf' };
    const first = await post('/v1/files', body, key);
    expect(first.status).toBe(201);
    expect(first.headers['idempotency-status']).toBe('miss');
    const second = await post('/v1/files', body, key);
    expect(second.status).toBe(201);
    expect(second.headers['idempotency-status']).toBe('hit');
    expect(second.body).toEqual(first.body);
    expect(second.text).toBe(first.text);
    const n = (
      (await t.svc.db
        .prepare('SELECT count(*) AS n FROM files WHERE project_id = ?')
        .get(project)) as {
        n: number;
      }
    ).n;
    expect(n).toBe(1);
  });

  it('a 4xx original is cached and replayed (its request_id inside), the handler never runs again', async () => {
    const key = newKey();
    const first = await post('/v1/projects', { description: 'no name' }, key);
    expect(first.status).toBe(400);
    expect(first.body.code).toBe('validation_error');
    expect(first.headers['idempotency-status']).toBe('miss');
    expect(first.body.request_id).toBe(first.headers['x-request-id']);
    const again = await post('/v1/projects', { description: 'no name' }, key);
    expect(again.status).toBe(400);
    expect(again.headers['idempotency-status']).toBe('hit');
    expect(again.headers['content-type']).toContain('application/problem+json');
    expect(again.text).toBe(first.text);
    expect(again.body.request_id).toBe(first.body.request_id);
    expect(again.headers['x-request-id']).not.toBe(first.body.request_id);

    const fileKey = newKey();
    const missing = await post(
      '/v1/files',
      {
        project_id: 'prj_0000000000000000000z',
        filename: 'a.pdf',
        content_type: 'application/pdf',
      },
      fileKey,
    );
    expect(missing.status).toBe(404);
    const missingAgain = await post(
      '/v1/files',
      {
        project_id: 'prj_0000000000000000000z',
        filename: 'a.pdf',
        content_type: 'application/pdf',
      },
      fileKey,
    );
    expect(missingAgain.status).toBe(404);
    expect(missingAgain.headers['idempotency-status']).toBe('hit');
    expect(missingAgain.text).toBe(missing.text);

    const flakyKey = newKey();
    const f1 = await post('/v1/test/flaky4xx', { x: 1 }, flakyKey);
    expect(f1.status).toBe(400);
    const f2 = await post('/v1/test/flaky4xx', { x: 1 }, flakyKey);
    expect(f2.status).toBe(400);
    expect(f2.headers['idempotency-status']).toBe('hit');
    expect(f2.text).toBe(f1.text);
    expect(calls.flaky).toBe(1);
    // A new key does reach the handler (which now succeeds): the cache, not the handler, answered.
    expect((await post('/v1/test/flaky4xx', { x: 1 }, newKey())).status).toBe(201);
  });

  it('a 5xx original releases the key: the retry runs and succeeds, then it is cached', async () => {
    const key = newKey();
    const first = await post('/v1/test/boom', { n: 1 }, key);
    expect(first.status).toBe(500);
    expect(first.body.code).toBe('internal_error');
    const retry = await post('/v1/test/boom', { n: 1 }, key);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotency-status']).toBe('miss');
    expect(retry.body).toEqual({ attempt: 2 });
    const replay = await post('/v1/test/boom', { n: 1 }, key);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotency-status']).toBe('hit');
    expect(replay.body).toEqual({ attempt: 2 });
    expect(calls.boom).toBe(2);
  });
});

describe('conflicts', () => {
  it('the same key with a different body, route or method is 409 idempotency_key_conflict', async () => {
    const key = newKey();
    const first = await post('/v1/projects', { name: 'Idem C' }, key);
    expect(first.status).toBe(201);
    const body = await post('/v1/projects', { name: 'Idem C2' }, key);
    expect(body.status).toBe(409);
    expect(body.body.code).toBe('idempotency_key_conflict');
    expect(body.headers['content-type']).toContain('application/problem+json');
    const extra = await post('/v1/projects', { name: 'Idem C', description: null }, key);
    expect(extra.status).toBe(409);
    const noBody = await post('/v1/projects', undefined, key);
    expect(noBody.status).toBe(409);
    const route = await post(
      '/v1/files',
      { project_id: project, filename: 'c.pdf', content_type: 'application/pdf' },
      key,
    );
    expect(route.status).toBe(409);
    expect(route.body.code).toBe('idempotency_key_conflict');
    // Same body, another route.
    const sameBody = await post('/v1/test/echo', { name: 'Idem C' }, key);
    expect(sameBody.status).toBe(409);
    expect(sameBody.body.code).toBe('idempotency_key_conflict');
    const method = await t.request('PATCH', `/v1/projects/${first.body.id}`, {
      body: { name: 'Idem C' },
      headers: { 'idempotency-key': key },
    });
    expect(method.status).toBe(409);
    expect(method.body.code).toBe('idempotency_key_conflict');
    expect((await t.request('GET', `/v1/projects/${first.body.id}`)).body.name).toBe('Idem C');
    const del = await t.request('DELETE', `/v1/projects/${first.body.id}`, {
      headers: { 'idempotency-key': key },
    });
    expect(del.status).toBe(409);
    expect(await countProjects('Idem C')).toBe(1);
    expect(await countProjects('Idem C2')).toBe(0);
    // The original is still replayed afterwards.
    const replay = await post('/v1/projects', { name: 'Idem C' }, key);
    expect(replay.headers['idempotency-status']).toBe('hit');
    expect(replay.text).toBe(first.text);
    // PATCH and DELETE with a fresh key are simply processed (they are naturally idempotent).
    const patch = await t.request('PATCH', `/v1/projects/${first.body.id}`, {
      body: { description: 'x' },
      headers: { 'idempotency-key': newKey() },
    });
    expect(patch.status).toBe(200);
  });
});

describe('concurrency', () => {
  it('10 concurrent duplicates create exactly one project and all get the same body', async () => {
    const key = newKey();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => post('/v1/projects', { name: 'Idem Concurrent' }, key)),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotency-status'] === 'miss')).toHaveLength(1);
    expect(results.filter((r) => r.headers['idempotency-status'] === 'hit')).toHaveLength(9);
    expect(await countProjects('Idem Concurrent')).toBe(1);
  });

  it('duplicates arriving while the original is still processing wait and get its response (202, same job_id)', async () => {
    const key = newKey();
    const first = post('/v1/test/slow', { a: 1 }, key);
    await new Promise((r) => setTimeout(r, 50));
    const dupes = Array.from({ length: 9 }, () => post('/v1/test/slow', { a: 1 }, key));
    const results = await Promise.all([first, ...dupes]);
    expect(calls.slow).toBe(1);
    for (const r of results) {
      expect(r.status).toBe(202);
      expect(r.body).toEqual({ job_id: 'job_slow1', status: 'Queued' });
    }
    expect(results.filter((r) => r.headers['idempotency-status'] === 'hit')).toHaveLength(9);
    // A conflicting body during processing is refused at once, not queued behind the original.
    const key2 = newKey();
    const orig = post('/v1/test/slow', { a: 1 }, key2);
    await new Promise((r) => setTimeout(r, 50));
    const clash = await post('/v1/test/slow', { a: 2 }, key2);
    expect(clash.status).toBe(409);
    expect((await orig).status).toBe(202);
  });
});

describe('keys', () => {
  it('are scoped per organization: the same key in two organizations makes two records', async () => {
    const otherKey = await t.newOrgKey('Idem Other Org');
    const key = newKey();
    const a = await post('/v1/projects', { name: 'Idem Scoped' }, key);
    const b = await post('/v1/projects', { name: 'Idem Scoped' }, key, otherKey);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.headers['idempotency-status']).toBe('miss');
    expect(b.body.id).not.toBe(a.body.id);
    expect(await countProjects('Idem Scoped')).toBe(2);
    // And a different body under the same key in the other organization is no conflict either.
    const otherOrgId = (await ensureOrganization(t.svc.db, 'Idem Other Org')).id;
    const rows = (await t.svc.db
      .prepare('SELECT organization_id FROM idempotency_keys WHERE idem_key = ?')
      .all(key)) as { organization_id: string }[];
    expect(rows.map((r) => r.organization_id).sort()).toEqual(
      [(await ensureOrganization(t.svc.db, 'Test Org')).id, otherOrgId].sort(),
    );
    expect(
      (await post('/v1/projects', { name: 'Idem Scoped' }, key, otherKey)).headers[
        'idempotency-status'
      ],
    ).toBe('hit');
  });

  it('an empty key, one over 256 characters or with other characters is 400 invalid_idempotency_key', async () => {
    for (const bad of [
      '',
      'a'.repeat(257),
      'has space',
      'dot.ted',
      'slash/key',
      'colon:key',
      'plus+key',
      'uni\u00e9',
    ]) {
      const r = await post('/v1/projects', { name: 'Idem Bad' }, bad);
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.code).toBe('invalid_idempotency_key');
    }
    expect(await countProjects('Idem Bad')).toBe(0);
    const max = await post('/v1/projects', { name: 'Idem Max' }, 'A-z_9'.repeat(51) + 'x');
    expect(max.status).toBe(201);
    expect(max.headers['idempotency-status']).toBe('miss');
    const uuid = await post(
      '/v1/projects',
      { name: 'Idem Uuid' },
      '3b241101-e2bb-4255-8caf-4136c566a962',
    );
    expect(uuid.status).toBe(201);
  });

  it('expire after 24 hours, after which the key can be reused', async () => {
    const key = newKey();
    const first = await post('/v1/projects', { name: 'Idem Exp 1' }, key);
    expect(first.status).toBe(201);
    const row = (await t.svc.db
      .prepare('SELECT created_at, expires_at FROM idempotency_keys WHERE idem_key = ?')
      .get(key)) as { created_at: string; expires_at: string };
    expect(Date.parse(row.expires_at) - Date.parse(row.created_at)).toBe(IDEMPOTENCY_TTL_MS);
    expect(IDEMPOTENCY_TTL_MS).toBe(24 * 60 * 60 * 1000);
    // Not yet expired a minute before the end: still a conflict.
    await t.svc.db
      .prepare('UPDATE idempotency_keys SET expires_at = ? WHERE idem_key = ?')
      .run(new Date(Date.now() + 60_000).toISOString(), key);
    expect((await post('/v1/projects', { name: 'Idem Exp 2' }, key)).status).toBe(409);
    // Past its lifetime: processed as new, with a new record.
    await t.svc.db
      .prepare('UPDATE idempotency_keys SET expires_at = ? WHERE idem_key = ?')
      .run(new Date(Date.now() - 1000).toISOString(), key);
    const reused = await post('/v1/projects', { name: 'Idem Exp 2' }, key);
    expect(reused.status).toBe(201);
    expect(reused.headers['idempotency-status']).toBe('miss');
    expect(reused.body.id).not.toBe(first.body.id);
    expect(await countProjects('Idem Exp 2')).toBe(1);
    const replay = await post('/v1/projects', { name: 'Idem Exp 2' }, key);
    expect(replay.headers['idempotency-status']).toBe('hit');
    expect(replay.body.id).toBe(reused.body.id);
  });
});
