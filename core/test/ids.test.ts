import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ID_BODY_PATTERN } from '../contract/schemas';
import { ID_BODY_SOURCE, idTimeMs } from '../domain/ids';
import { startTestService, type TestService } from './harness';
import { FIXTURES } from './flows';

// Contract §2 over real HTTPS: new ids are `<prefix>_<ULID>` and sort in creation order; ids
// stored before ULIDs (prefix + 20 lowercase characters) stay valid and routable, their files'
// bytes included.

const ULID_ID = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;
const PDF = readFileSync(
  resolve(FIXTURES, '20150115_ASK-003_exterior-west-wall-window-locations.pdf'),
);

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.stop();
});

describe('ids', () => {
  it('have one body pattern in domain and in the request schemas', () => {
    expect(ID_BODY_PATTERN).toBe(ID_BODY_SOURCE);
  });

  it('are ULIDs whose order is the order of creation', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await t.request('POST', '/v1/projects', { body: { name: `P${i}` } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.id).toMatch(ULID_ID);
      // The id's time part is its creation time (created_at comes from a monotonic clock that
      // may run a few ms ahead when records are made in one ms; never seconds).
      expect(Math.abs(idTimeMs(res.body.id)! - Date.parse(res.body.created_at))).toBeLessThan(50);
      ids.push(res.body.id);
    }
    // Created later sorts after created earlier, as plain strings.
    expect([...ids].sort()).toEqual(ids);
    // So the list order (created_at desc, id desc) is the reverse order of creation.
    const list = await t.request('GET', '/v1/projects?limit=12');
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([...ids].reverse());
  });

  it('stored before ULIDs stay routable, with their files', async () => {
    const created = await t.request('POST', '/v1/projects', { body: { name: 'Legacy' } });
    const legacy = 'prj_0a1b2c3d4e5f6g7h8j9k';
    await t.svc.db.prepare('UPDATE projects SET id = ? WHERE id = ?').run(legacy, created.body.id);

    const got = await t.request('GET', `/v1/projects/${legacy}`);
    expect(got.status, got.text).toBe(200);
    expect(got.body.id).toBe(legacy);
    const patched = await t.request('PATCH', `/v1/projects/${legacy}`, {
      body: { description: 'kept' },
    });
    expect(patched.status, patched.text).toBe(200);

    // A file of the legacy project: its new ULID lives in a key under the legacy project's prefix.
    const file = await t.request('POST', '/v1/files', {
      body: { project_id: legacy, filename: 'ASK-003.pdf', content_type: 'application/pdf' },
    });
    expect(file.status, file.text).toBe(201);
    const up = await t.request('PUT', file.body.upload_url, {
      key: null,
      rawBody: PDF,
      headers: { 'content-type': 'application/pdf' },
    });
    expect(up.status, up.text).toBe(200);
    const files = await t.request('GET', `/v1/files?project_id=${legacy}`);
    expect(files.status, files.text).toBe(200);
    expect(files.body.data.map((f: { id: string }) => f.id)).toEqual([file.body.id]);
    const bytes = await t.request('GET', files.body.data[0].uri, { key: null });
    expect(bytes.status).toBe(200);

    // The wrong prefix is still 404 (contract §2), for old and new shapes alike.
    expect((await t.request('GET', `/v1/drawings/${legacy}`)).status).toBe(404);
    expect((await t.request('GET', `/v1/drawings/${file.body.id}`)).status).toBe(404);

    const del = await t.request('DELETE', `/v1/projects/${legacy}`);
    expect(del.status, del.text).toBe(204);
    expect((await t.request('GET', `/v1/projects/${legacy}`)).status).toBe(404);
  });
});
