import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, type TestService } from './harness';
import { createApiKey, ensureOrganization } from '../store/repositories/organizations.repository';

// Rate limits per API key (contract §9, §3 `429 rate_limited`), over real HTTPS with small limits:
// 5 requests per minute in the document area, 2 in the Vision area.

let t: TestService;
let visionCalls = 0;

beforeAll(async () => {
  t = await startTestService({
    config: { rateLimits: { document: 5, vision: 2 } },
    configureApp: (app) => {
      // Stands in for a Vision-area route (search, ask, parse): same hook, other bucket.
      app.route({
        method: 'GET',
        url: '/v1/test/vision',
        config: { area: 'vision' },
        handler: async () => ({ ok: ++visionCalls }),
      });
    },
  });
});
afterAll(async () => {
  await t.stop();
});
afterEach(() => {
  vi.useRealTimers();
});

const sameOrgKey = async () =>
  (await createApiKey(t.svc.db, (await ensureOrganization(t.svc.db, 'Test Org')).id)).secret;

describe('rate limits', () => {
  it('sends RateLimit-* headers and answers the 6th request in a minute with 429 rate_limited and Retry-After', async () => {
    const key = await sameOrgKey();
    for (let i = 0; i < 5; i++) {
      const r = await t.request('GET', '/v1/projects', { key });
      expect(r.status).toBe(200);
      expect(r.headers['ratelimit-limit']).toBe('5');
      expect(r.headers['ratelimit-remaining']).toBe(String(4 - i));
      expect(r.headers['ratelimit-policy']).toBe('5;w=60');
      const reset = Number(r.headers['ratelimit-reset']);
      expect(Number.isInteger(reset) && reset >= 1 && reset <= 60).toBe(true);
    }
    const limited = await t.request('GET', '/v1/projects', { key });
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toContain('application/problem+json');
    expect(limited.body).toMatchObject({
      code: 'rate_limited',
      status: 429,
      type: '/problems/rate_limited',
    });
    const retry = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retry) && retry >= 1 && retry <= 60).toBe(true);
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-limit']).toBe('5');
    // Still limited, whatever the route or method.
    expect((await t.request('POST', '/v1/projects', { key, body: { name: 'over' } })).status).toBe(
      429,
    );
    expect((await t.request('GET', '/v1/jobs', { key })).status).toBe(429);
  });

  it('counts per key: another key of the same organization and another organization are unaffected', async () => {
    const exhausted = await sameOrgKey();
    for (let i = 0; i < 5; i++)
      expect((await t.request('GET', '/v1/projects', { key: exhausted })).status).toBe(200);
    expect((await t.request('GET', '/v1/projects', { key: exhausted })).status).toBe(429);
    const sibling = await sameOrgKey();
    const s = await t.request('GET', '/v1/projects', { key: sibling });
    expect(s.status).toBe(200);
    expect(s.headers['ratelimit-remaining']).toBe('4');
    const other = await t.request('GET', '/v1/projects', {
      key: await t.newOrgKey('Rate Other Org'),
    });
    expect(other.status).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe('4');
  });

  it('keeps the Vision area in its own, smaller bucket', async () => {
    const key = await sameOrgKey();
    for (let i = 0; i < 5; i++)
      expect((await t.request('GET', '/v1/projects', { key })).status).toBe(200);
    expect((await t.request('GET', '/v1/projects', { key })).status).toBe(429);
    const v1 = await t.request('GET', '/v1/test/vision', { key });
    expect(v1.status).toBe(200);
    expect(v1.headers['ratelimit-limit']).toBe('2');
    expect(v1.headers['ratelimit-remaining']).toBe('1');
    expect((await t.request('GET', '/v1/test/vision', { key })).status).toBe(200);
    const before = visionCalls;
    const v3 = await t.request('GET', '/v1/test/vision', { key });
    expect(v3.status).toBe(429);
    expect(v3.body.code).toBe('rate_limited');
    expect(v3.headers['retry-after']).toBeDefined();
    expect(visionCalls).toBe(before); // the handler never ran
  });

  it('error responses carry the headers too, and the window resets after a minute', async () => {
    const key = await sameOrgKey();
    const missing = await t.request('GET', '/v1/projects/prj_0000000000000000000z', { key });
    expect(missing.status).toBe(404);
    expect(missing.headers['ratelimit-remaining']).toBe('4');
    for (let i = 0; i < 4; i++)
      expect((await t.request('GET', '/v1/projects', { key })).status).toBe(200);
    expect((await t.request('GET', '/v1/projects', { key })).status).toBe(429);
    // Only the clock is faked (timers and I/O stay real), so the server sees a minute pass.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 61_000);
    const after = await t.request('GET', '/v1/projects', { key });
    expect(after.status).toBe(200);
    expect(after.headers['ratelimit-remaining']).toBe('4');
  });

  it('requests without a valid key are 401, not counted against anyone', async () => {
    const key = await sameOrgKey();
    for (let i = 0; i < 8; i++)
      expect((await t.request('GET', '/v1/projects', { key: null })).status).toBe(401);
    expect((await t.request('GET', '/v1/projects', { key })).headers['ratelimit-remaining']).toBe(
      '4',
    );
  });
});
