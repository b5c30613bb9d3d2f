import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOrganization, grantCredits } from '../store/repositories/organizations.repository';
import { RESOURCES, type ResourceKind } from '../services/resources';
import { FIXTURES } from './flows';
import {
  startTestService,
  type HttpResult,
  type RequestOptions,
  type TestService,
} from './harness';
import { OpenApiValidator } from './openapi-validator';

/** The URL with its signature's first character changed to one it is not (an 'A' stayed 'A'). */
const tamperSignature = (url: string) =>
  url.replace(/signature=(.)/, (_m, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`);

/** A well-formed id of the same kind that names nothing: the last character changed (an id that
 * already ends in `0` must not become itself, or the 404 checks would pass a real id). */
function otherId(id: string): string {
  return id.slice(0, -1) + (id.endsWith('0') ? '1' : '0');
}

// Every response the service gives on a walk through every documented operation — a project, a
// signed upload of a fixture PDF, processing, comparison, change detection, symbol detection,
// search, webhooks, signed downloads and tiles, and deletes — and through bad input that earns
// Problem Details, is checked against the served OpenAPI document: the status is documented for
// the operation and the body matches the declared schema (Ajv, compiled from the document).

const OLD = '20150115_ASK-003_exterior-west-wall-window-locations.pdf';
const NEW = '20150116_ASK-003_exterior-west-wall-window-locations.pdf';

let t: TestService;
let validator: OpenApiValidator;
const violations: string[] = [];

/** A request whose response is checked against the document; `expectStatus` guards the walk. */
async function call(
  method: string,
  url: string,
  expectStatus: number,
  opts: RequestOptions = {},
): Promise<HttpResult> {
  const res = await t.request(method, url, opts);
  violations.push(
    ...validator.check({
      method,
      url,
      status: res.status,
      contentType: header(res, 'content-type'),
      body: res.text,
    }),
  );
  expect(res.status, `${method} ${url}: ${res.text.slice(0, 300)}`).toBe(expectStatus);
  return res;
}

const header = (res: HttpResult, name: string): string | undefined => {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

async function waitFor(jobId: string): Promise<any> {
  for (const started = Date.now(); Date.now() - started < 240_000;) {
    const job = await call('GET', `/v1/jobs/${jobId}`, 200);
    if (['Completed', 'Failed', 'Canceled'].includes(job.body.status)) return job.body;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`job ${jobId} did not end`);
}

async function upload(projectId: string, file: string): Promise<string> {
  const bytes = readFileSync(resolve(FIXTURES, file));
  const created = await call('POST', '/v1/files', 201, {
    body: {
      project_id: projectId,
      filename: file,
      content_type: 'application/pdf',
      size_bytes: bytes.length,
    },
  });
  await call('PUT', created.body.upload_url, 200, {
    rawBody: bytes,
    headers: { 'content-type': 'application/pdf' },
    key: null,
  });
  return created.body.id;
}

beforeAll(async () => {
  t = await startTestService();
  const doc = await t.request('GET', '/v1/openapi.json', { key: null });
  validator = new OpenApiValidator(doc.body);
});

afterAll(async () => {
  await t?.stop();
});

describe('the OpenAPI validator', () => {
  it('refuses an undocumented operation, an undocumented status, a wrong media type and a body that breaks its schema', () => {
    const ok = {
      method: 'GET',
      url: '/v1/credits',
      status: 200,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({ balance: 1, reserved: 0 }),
    };
    expect(validator.check(ok)).toEqual([]);
    expect(validator.check({ ...ok, method: 'DELETE' })[0]).toMatch(/no documented operation/);
    expect(validator.check({ ...ok, status: 418 })[0]).toMatch(
      /status 418 is not documented for getCredits/,
    );
    expect(validator.check({ ...ok, contentType: 'text/html' })[0]).toMatch(/media type/);
    expect(validator.check({ ...ok, body: JSON.stringify({ balance: 'x' }) })[0]).toMatch(
      /does not match getCredits's 200 schema/,
    );
    // A Problem with a code the operation does not declare is refused too.
    const problem = (code: string) =>
      JSON.stringify({
        type: `/problems/${code}`,
        title: 't',
        status: 404,
        detail: 'd',
        instance: '/v1/projects/prj_1',
        code,
        request_id: 'req_1',
      });
    const notFound = {
      method: 'GET',
      url: '/v1/projects/prj_1',
      status: 404,
      contentType: 'application/problem+json',
      body: problem('not_found'),
    };
    expect(validator.check(notFound)).toEqual([]);
    expect(validator.check({ ...notFound, body: problem('conflict') })[0]).toMatch(/code/);
    // No body where the document declares none (a 204).
    expect(
      validator.check({ method: 'DELETE', url: '/v1/projects/prj_1', status: 204, body: '{}' })[0],
    ).toMatch(/declares no body/);
    // Blob keys span segments; tiles are their own operation.
    expect(validator.operation('GET', '/v1/blobs/a/b/c.png?expires=1')?.operationId).toBe(
      'downloadBlob',
    );
    expect(validator.operation('GET', '/v1/blobs/a/b/c.png/tiles/0/0/0.webp')?.operationId).toBe(
      'getBlobTile',
    );
    expect(validator.operation('GET', '/v1/blobs/a/b/c.png/tiles.json')?.operationId).toBe(
      'getBlobTilesJson',
    );
  });
});

describe('the component schemas', () => {
  it('declare every expandable field of their resource (expand adds it next to its _id)', async () => {
    const doc = (await t.request('GET', '/v1/openapi.json', { key: null })).body;
    const component: Record<ResourceKind, string> = {
      project: 'Project',
      file: 'File',
      drawing: 'Drawing',
      sheet: 'Sheet',
      block: 'Block',
      overlay: 'Overlay',
      change: 'Change',
      symbol: 'Symbol',
      job: 'Job',
      ledger: 'LedgerEntry',
      webhook: 'Webhook',
      webhook_delivery: 'WebhookDelivery',
    };
    for (const [kind, def] of Object.entries(RESOURCES)) {
      const schema = doc.components.schemas[component[kind as ResourceKind]];
      for (const [field, relation] of Object.entries(def.relations)) {
        expect(schema.properties, `${kind}.${field}`).toHaveProperty(field);
        expect(schema.required ?? [], `${kind}.${field} is optional`).not.toContain(field);
        expect(JSON.stringify(schema.properties[field]), `${kind}.${field}`).toContain(
          `#/components/schemas/${component[relation.kind]}`,
        );
      }
    }
  });
});

describe('every response of a walk through the API matches the OpenAPI document', () => {
  it('walks every documented operation, with bad input too', async () => {
    const org = (await ensureOrganization(t.svc.db, 'Test Org')).id;

    // --- meta, authentication, generic errors ------------------------------------------------
    await call('GET', '/v1/openapi.json', 200, { key: null });
    await call('GET', '/problems/not_found', 200, { key: null });
    await call('GET', '/problems/no_such_code', 404, { key: null });
    await call('GET', '/v1/projects', 401, { key: null });
    await call('GET', '/v1/projects', 401, { key: 'sk_not_a_key' });

    // --- projects ------------------------------------------------------------------------------
    const project = (await call('POST', '/v1/projects', 201, { body: { name: 'Walk' } })).body;
    const spare = (await call('POST', '/v1/projects', 201, { body: { name: 'Spare' } })).body;
    await call('POST', '/v1/projects', 400, { body: { name: '' } });
    await call('POST', '/v1/projects', 400, {
      rawBody: '{"name":',
      headers: { 'content-type': 'application/json' },
    });
    await call('POST', '/v1/projects', 415, {
      rawBody: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    await call('POST', '/v1/projects', 400, {
      body: { name: 'x' },
      headers: { 'idempotency-key': 'not valid!' },
    });
    const key = { 'idempotency-key': 'walk-project-1' };
    await call('POST', '/v1/projects', 201, { body: { name: 'Once' }, headers: key });
    await call('POST', '/v1/projects', 201, { body: { name: 'Once' }, headers: key });
    await call('POST', '/v1/projects', 409, { body: { name: 'Other' }, headers: key });
    const page1 = await call('GET', '/v1/projects?limit=1', 200);
    await call('GET', `/v1/projects?cursor=${encodeURIComponent(page1.body._meta.next)}`, 200);
    await call('GET', '/v1/projects?limit=0', 400);
    await call('GET', '/v1/projects?cursor=garbage', 400);
    await call('GET', `/v1/projects/${project.id}`, 200);
    await call('GET', `/v1/projects/${project.id}?expand=nothing`, 400);
    await call('GET', '/v1/projects/prj_00000000000000000000', 404);
    await call('PATCH', `/v1/projects/${project.id}`, 200, { body: { description: 'walk' } });
    await call('PATCH', `/v1/projects/${project.id}`, 400, { body: { color: 'red' } });

    // --- files and signed uploads ------------------------------------------------------------
    const oldFile = await upload(project.id, OLD);
    const newFile = await upload(project.id, NEW);
    const pending = (
      await call('POST', '/v1/files', 201, {
        body: { project_id: project.id, filename: 'p.pdf', content_type: 'application/pdf' },
      })
    ).body;
    await call('POST', '/v1/files', 404, {
      body: {
        project_id: otherId(spare.id),
        filename: 'a.pdf',
        content_type: 'application/pdf',
      },
    });
    await call('POST', '/v1/files', 413, {
      body: {
        project_id: project.id,
        filename: 'huge.pdf',
        content_type: 'application/pdf',
        size_bytes: 2 ** 50,
      },
    });
    const pdf = readFileSync(resolve(FIXTURES, OLD));
    await call('PUT', pending.upload_url, 415, {
      rawBody: pdf,
      headers: { 'content-type': 'image/png' },
      key: null,
    });
    await call('PUT', tamperSignature(pending.upload_url), 403, {
      rawBody: pdf,
      headers: { 'content-type': 'application/pdf' },
      key: null,
    });
    await call('PUT', pending.upload_url, 415, {
      rawBody: Buffer.from('not a pdf at all'),
      headers: { 'content-type': 'application/pdf' },
      key: null,
    });
    const files = await call('GET', `/v1/files?project_id=${project.id}&limit=1`, 200);
    expect(files.body._meta.next).toBeTypeOf('string');
    await call('GET', `/v1/files?cursor=${encodeURIComponent(files.body._meta.next)}`, 200);
    await call('GET', '/v1/files', 400);
    await call('GET', `/v1/files?project_id=${project.id}&content_type=text/html`, 400);
    await call('GET', `/v1/files/${pending.id}`, 200);
    await call('GET', `/v1/files/${oldFile}?expand=project`, 200);
    await call('DELETE', `/v1/files/${pending.id}`, 204);
    await call('DELETE', `/v1/files/${pending.id}`, 404);

    // --- drawings, processing, sheets, blocks --------------------------------------------------
    const unready = (
      await call('POST', '/v1/files', 201, {
        body: { project_id: project.id, filename: 'u.pdf', content_type: 'application/pdf' },
      })
    ).body;
    await call('POST', '/v1/drawings', 409, {
      body: { project_id: project.id, name: 'Unready', file_id: unready.id },
    });
    await call('POST', '/v1/drawings', 400, { body: { project_id: project.id, name: 'No file' } });
    const older = (
      await call('POST', '/v1/drawings', 201, {
        body: { project_id: project.id, name: 'ASK-003', file_id: oldFile, revision: 'A' },
      })
    ).body;
    const newer = (
      await call('POST', '/v1/drawings', 201, {
        body: { project_id: project.id, name: 'ASK-003', file_id: newFile, revision: 'B' },
      })
    ).body;
    expect((await waitFor(older.job_id)).status).toBe('Completed');
    expect((await waitFor(newer.job_id)).status).toBe('Completed');
    await call('GET', `/v1/drawings?project_id=${project.id}&expand=file,job.parent`, 200);
    await call('GET', '/v1/drawings', 400);
    await call('GET', `/v1/drawings?project_id=${project.id}&expand=file.project.a.b`, 400);
    await call('GET', `/v1/drawings?project_id=${project.id}&expand=sheets`, 400);
    await call('GET', `/v1/drawings?project_id=${otherId(spare.id)}`, 404);
    await call('GET', `/v1/drawings/${newer.id}?expand=file,project`, 200);
    await call('PATCH', `/v1/drawings/${newer.id}`, 200, { body: { name: 'ASK-003 (rev B)' } });

    const sheets = (await call('GET', `/v1/sheets?drawing_id=${newer.id}&expand=drawing.file`, 200))
      .body.data;
    const oldSheets = (await call('GET', `/v1/sheets?drawing_id=${older.id}`, 200)).body.data;
    await call('GET', '/v1/sheets?discipline=astrology', 400);
    await call('GET', '/v1/sheets?created_after=yesterday', 400);
    const sheet = (await call('GET', `/v1/sheets/${sheets[0].id}?expand=drawing`, 200)).body;
    await call('PATCH', `/v1/sheets/${sheet.id}`, 200, { body: { discipline: 'architectural' } });
    const blocks = (await call('GET', `/v1/blocks?sheet_id=${sheet.id}&expand=sheet.drawing`, 200))
      .body.data;
    const oldBlocks = (await call('GET', `/v1/blocks?sheet_id=${oldSheets[0].id}`, 200)).body.data;
    await call('GET', '/v1/blocks?type=Painting', 400);
    await call('GET', `/v1/blocks/${blocks[0].id}?expand=drawing`, 200);
    await call('PATCH', `/v1/blocks/${blocks[0].id}`, 200, { body: { title: 'Whole sheet' } });

    // --- signed downloads and tiles ------------------------------------------------------------
    const uri = new URL(sheet.uri);
    const blob = `${uri.pathname}${uri.search}`;
    const got = await call('GET', blob, 200, { key: null });
    await call('HEAD', blob, 200, { key: null });
    await call('GET', blob, 206, { key: null, headers: { range: 'bytes=0-99' } });
    await call('GET', blob, 304, {
      key: null,
      headers: { 'if-none-match': String(got.headers.etag) },
    });
    await call('GET', blob, 416, { key: null, headers: { range: 'bytes=999999999-' } });
    await call('GET', tamperSignature(blob), 403, { key: null });
    await call('GET', `${blob}&palette=sepia`, 400, { key: null });
    await call('GET', `${uri.pathname}/tiles/0/0/0.webp${uri.search}`, 200, { key: null });
    await call('GET', `${uri.pathname}/tiles/0/9/9.webp${uri.search}`, 404, { key: null });
    await call('GET', `${uri.pathname}/tiles.json${uri.search}`, 200, { key: null });

    // --- credits, comparison, change detection -------------------------------------------------
    await call('GET', '/v1/credits', 200);
    await call('POST', `/v1/drawings/${newer.id}/compare`, 402, {
      body: { compare_to: older.id },
    });
    await grantCredits(t.svc.db, org, 1000, 'grant');
    await call('GET', '/v1/credits/ledger?expand=job', 200);
    await call('POST', `/v1/drawings/${newer.id}/compare`, 400, {
      body: { compare_to: sheet.id },
    });
    await call('POST', `/v1/drawings/${newer.id}/compare`, 404, {
      body: { compare_to: otherId(older.id) },
    });
    const compared = await call('POST', `/v1/drawings/${newer.id}/compare`, 202, {
      body: { compare_to: older.id, analyze: true },
    });
    const compareJob = await waitFor(compared.body.job_id);
    expect(compareJob.status).toBe('Completed');

    // --- exports (a generated CSV is a File of its own content type) ----------------------------
    const exported = await call('POST', '/v1/exports', 202, {
      body: { job_id: compareJob.id, format: 'csv' },
    });
    const exportJob = await waitFor(exported.body.job_id);
    expect(exportJob.status).toBe('Completed');
    await call('GET', `/v1/jobs/${exportJob.id}`, 200);
    const csvFile = await call('GET', `/v1/files/${exportJob.result.file_id}`, 200);
    expect(csvFile.body.content_type).toBe('text/csv');
    await call('POST', '/v1/exports', 400, { body: { job_id: compareJob.id, format: 'docx' } });
    await call('POST', '/v1/exports', 400, { body: { job_id: older.job_id, format: 'csv' } });
    await call('POST', '/v1/exports', 404, {
      body: { job_id: 'job_01ARZ3NDEKTSV4RRFFQ69G5FAV', format: 'csv' },
    });
    const blockCompare = await call('POST', '/v1/compare', 202, {
      body: { old_id: oldBlocks[0].id, new_id: blocks[0].id, type: 'Block' },
    });
    await waitFor(blockCompare.body.job_id);
    await call('POST', '/v1/compare', 400, {
      body: { old_id: older.id, new_id: newer.id, type: 'Page' },
    });
    const overlays = (
      await call(
        'GET',
        `/v1/overlays?job_id=${compareJob.id}&expand=block_a.sheet.drawing,block_b,job`,
        200,
      )
    ).body.data;
    expect(overlays.length).toBeGreaterThan(0);
    await call('GET', `/v1/overlays?has_changes=maybe`, 400);
    const overlay = (
      await call('GET', `/v1/overlays/${overlays[0].id}?expand=block_a,project`, 200)
    ).body;
    const combined = new URL(overlay.uri);
    await call('GET', `${combined.pathname}${combined.search}&palette=colorblind`, 200, {
      key: null,
    });
    const analyzed = await call('POST', `/v1/overlays/${overlay.id}/analyze`, 202);
    await waitFor(analyzed.body.job_id);
    const changes = (await call('GET', `/v1/changes?overlay_id=${overlay.id}&expand=overlay`, 200))
      .body.data;
    await call('GET', '/v1/changes?review_status=maybe', 400);
    if (changes.length > 0) {
      await call('GET', `/v1/changes/${changes[0].id}?expand=overlay.block_a`, 200);
      await call('PATCH', `/v1/changes/${changes[0].id}`, 200, {
        body: { review_status: 'accepted', note: 'checked' },
      });
    } else {
      await call('GET', '/v1/changes/chg_00000000000000000000', 404);
      await call('PATCH', '/v1/changes/chg_00000000000000000000', 404, { body: { note: 'x' } });
    }
    await call('PATCH', `/v1/changes/${changes[0]?.id ?? 'chg_0'}`, 400, {
      body: { review_status: 'maybe' },
    });

    // --- symbols -------------------------------------------------------------------------------
    const template = {
      label: 'mark',
      source_id: sheet.id,
      bbox: { x: 40, y: 40, width: 60, height: 60 },
    };
    await call('POST', '/v1/parse', 400, { body: { target_id: sheet.id, templates: [] } });
    const parsed = await call('POST', '/v1/parse', 202, {
      body: { target_id: sheet.id, templates: [template] },
    });
    await waitFor(parsed.body.job_id);
    const symbols = (
      await call('GET', `/v1/symbols?job_id=${parsed.body.job_id}&expand=sheet,job`, 200)
    ).body.data;
    await call(
      'GET',
      `/v1/symbols/${symbols[0]?.id ?? 'sym_00000000000000000000'}`,
      symbols.length > 0 ? 200 : 404,
    );

    // --- jobs ----------------------------------------------------------------------------------
    const children = (
      await call('GET', `/v1/jobs?parent_id=${compareJob.id}&expand=parent,project`, 200)
    ).body.data;
    await call('GET', `/v1/jobs?project_id=${project.id}&status=Done`, 400);
    await call('GET', `/v1/jobs/${children[0]?.id ?? compareJob.id}?expand=parent`, 200);
    await call('GET', `/v1/jobs/${compareJob.id}/events`, 200);
    await call('POST', `/v1/jobs/${compareJob.id}/cancel`, 409);
    await call('POST', '/v1/jobs/job_00000000000000000000/cancel', 404);

    // --- search and ask ------------------------------------------------------------------------
    await call('POST', `/v1/projects/${project.id}/search`, 200, {
      body: { query: 'window', limit: 5 },
    });
    await call('POST', `/v1/projects/${project.id}/search`, 400, { body: { query: '' } });
    await call('POST', `/v1/projects/${project.id}/ask`, 200, {
      body: { question: 'Which windows moved?' },
    });
    await call('POST', `/v1/projects/${project.id}/ask`, 400, { body: {} });

    // --- webhooks ------------------------------------------------------------------------------
    const hook = (
      await call('POST', '/v1/webhooks', 201, {
        body: { url: 'https://127.0.0.1:9/hook', events: ['job.completed'] },
      })
    ).body;
    await call('POST', '/v1/webhooks', 400, {
      body: { url: 'ftp://x', events: ['job.completed'] },
    });
    await call('GET', '/v1/webhooks', 200);
    await call('GET', `/v1/webhooks/${hook.id}`, 200);
    await call('GET', `/v1/webhooks/${hook.id}/deliveries?expand=webhook`, 200);
    await call('GET', `/v1/webhooks/${hook.id}/deliveries?status=lost`, 400);

    // --- deletes -------------------------------------------------------------------------------
    await call('DELETE', `/v1/webhooks/${hook.id}`, 204);
    await call('DELETE', `/v1/overlays/${overlay.id}`, 204);
    await call('DELETE', `/v1/files/${oldFile}`, 409);
    await call('DELETE', `/v1/drawings/${older.id}`, 204);
    await call('DELETE', `/v1/files/${oldFile}`, 204);
    await call('DELETE', `/v1/projects/${spare.id}`, 204);
    await call('DELETE', `/v1/projects/${project.id}`, 204);
    await call('GET', `/v1/drawings/${newer.id}`, 404);

    // Every documented operation was called, and every response matched the document.
    const missing = validator.operations
      .map((op) => op.operationId)
      .filter((id) => !validator.seen.has(id));
    const statuses = [...validator.seen.values()].reduce((n, s) => n + s.size, 0);
    console.log(
      `OpenAPI conformance: ${validator.seen.size}/${validator.operations.length} operations, ` +
        `${validator.responsesChecked} responses checked (${statuses} distinct operation/status pairs)`,
    );
    expect(missing, 'operations the walk never called').toEqual([]);
    expect(violations).toEqual([]);
  }, 300_000);
});
