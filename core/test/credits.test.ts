import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOrganization, grantCredits } from '../store/repositories/organizations.repository';
import { FIXTURES, waitForJob as waitJob } from './flows';
import { startTestService, type HttpResult, type TestService } from './harness';

// Credits (contract §7) over HTTPS: reservation at creation under concurrency, settlement when the
// job ends, refund when it fails through no fault of the request, no charge on an idempotent replay,
// and a ledger that always adds up to balance + reserved.

const LONG = 600_000;

let t: TestService;
let orgId: string;
let projectId: string;
let blocks: { id: string; sheet_id: string }[];
let sheetImageKey: string;

const waitForJob = (jobId: string) => waitJob(t, jobId, LONG);

async function ledger() {
  const out: any[] = [];
  let url: string | null = '/v1/credits/ledger?limit=100';
  while (url) {
    const r: HttpResult = await t.request('GET', url);
    expect(r.status).toBe(200);
    out.push(...r.body.data);
    url = r.body._meta.next
      ? `/v1/credits/ledger?cursor=${encodeURIComponent(r.body._meta.next)}`
      : null;
  }
  return out;
}

async function expectLedgerConsistent() {
  const credits = (await t.request('GET', '/v1/credits')).body;
  const entries = await ledger();
  expect(entries.reduce((s, e) => s + e.amount, 0)).toBe(credits.balance + credits.reserved);
  return { credits, entries };
}

beforeAll(async () => {
  t = await startTestService({ workers: 2 });
  orgId = (await ensureOrganization(t.svc.db, 'Test Org')).id;
  projectId = (await t.request('POST', '/v1/projects', { body: { name: 'Credits' } })).body.id;
  const bytes = readFileSync(
    resolve(FIXTURES, '20150115_ASK-003_exterior-west-wall-window-locations.pdf'),
  );
  const file = await t.request('POST', '/v1/files', {
    body: {
      project_id: projectId,
      filename: 'ask.pdf',
      content_type: 'application/pdf',
      size_bytes: bytes.length,
    },
  });
  await t.request('PUT', file.body.upload_url, {
    rawBody: bytes,
    headers: { 'content-type': 'application/pdf' },
    key: null,
  });
  const drawing = await t.request('POST', '/v1/drawings', {
    body: { project_id: projectId, name: 'ASK-003', file_id: file.body.id },
  });
  expect((await waitForJob(drawing.body.job_id)).status).toBe('Completed');
  const sheets = await t.request('GET', `/v1/sheets?drawing_id=${drawing.body.id}`);
  blocks = (await t.request('GET', `/v1/blocks?sheet_id=${sheets.body.data[0].id}&limit=100`)).body
    .data;
  sheetImageKey = String(
    (
      (await t.svc.db
        .prepare('SELECT image_key FROM sheets WHERE id = ?')
        .get(sheets.body.data[0].id)) as {
        image_key: string;
      }
    ).image_key,
  );
  expect(blocks.length).toBeGreaterThanOrEqual(1);
}, LONG);

afterAll(async () => {
  await t?.stop();
});

describe('credits', () => {
  it('starts at zero and refuses a compare with 402, required and available', async () => {
    expect((await t.request('GET', '/v1/credits')).body).toEqual({ balance: 0, reserved: 0 });
    const res = await t.request('POST', '/v1/compare', {
      body: { old_id: blocks[0]!.id, new_id: blocks[0]!.id, type: 'Block', analyze: true },
    });
    expect(res.status).toBe(402);
    expect(res.body).toMatchObject({ code: 'insufficient_credits', required: 2, available: 0 });
    expect((await t.request('GET', '/v1/jobs?type=compare')).body.data).toEqual([]);
  });

  it(
    'accepts exactly 10 of 50 concurrent compares against a balance for 10, and charges what they used',
    async () => {
      await grantCredits(t.svc.db, orgId, 10, 'grant');
      const b = blocks[0]!.id;
      const results = await Promise.all(
        Array.from({ length: 50 }, () =>
          t.request('POST', '/v1/compare', { body: { old_id: b, new_id: b, type: 'Block' } }),
        ),
      );
      const accepted = results.filter((r) => r.status === 202);
      const refused = results.filter((r) => r.status === 402);
      expect(accepted).toHaveLength(10);
      expect(refused).toHaveLength(40);
      for (const r of refused)
        expect(r.body).toMatchObject({ code: 'insufficient_credits', required: 1, available: 0 });
      expect(new Set(accepted.map((r) => r.body.job_id)).size).toBe(10);
      const during = await expectLedgerConsistent();
      expect(during.credits.balance).toBe(0);

      for (const r of accepted) {
        const job = await waitForJob(r.body.job_id);
        expect(job.status).toBe('Completed');
        expect(job.credits_charged).toBe(1);
      }
      const after = await expectLedgerConsistent();
      expect(after.credits).toEqual({ balance: 0, reserved: 0 });
      const charges = after.entries.filter((e) => e.amount < 0);
      expect(charges).toHaveLength(10);
      expect(new Set(charges.map((e) => e.job_id))).toEqual(
        new Set(accepted.map((r) => r.body.job_id)),
      );
      for (const e of charges) expect(e).toMatchObject({ amount: -1, reason: 'compare' });
    },
    LONG,
  );

  it(
    'charges nothing for an idempotent replay',
    async () => {
      await grantCredits(t.svc.db, orgId, 5, 'grant');
      const body = { old_id: blocks[0]!.id, new_id: blocks[0]!.id, type: 'Block' };
      const first = await t.request('POST', '/v1/compare', {
        body,
        headers: { 'idempotency-key': 'credits-replay-1' },
      });
      expect(first.status).toBe(202);
      expect((await t.request('GET', '/v1/credits')).body).toEqual({ balance: 4, reserved: 1 });
      const replay = await t.request('POST', '/v1/compare', {
        body,
        headers: { 'idempotency-key': 'credits-replay-1' },
      });
      expect(replay.status).toBe(202);
      expect(replay.headers['idempotency-status']).toBe('hit');
      expect(replay.body.job_id).toBe(first.body.job_id);
      expect((await t.request('GET', '/v1/credits')).body).toEqual({ balance: 4, reserved: 1 });
      expect((await waitForJob(first.body.job_id)).credits_charged).toBe(1);
      const again = await t.request('POST', '/v1/compare', {
        body,
        headers: { 'idempotency-key': 'credits-replay-1' },
      });
      expect(again.body.job_id).toBe(first.body.job_id);
      const { credits, entries } = await expectLedgerConsistent();
      expect(credits).toEqual({ balance: 4, reserved: 0 });
      expect(entries.filter((e) => e.job_id === first.body.job_id)).toHaveLength(1);
    },
    LONG,
  );

  it(
    'refunds everything when the job fails through no fault of the request',
    async () => {
      const before = (await t.request('GET', '/v1/credits')).body;
      // The stored sheet image is damaged in the store (the data dir's file, or the object in
      // the bucket in team mode): the service's fault, not the request's.
      const good = readFileSync(await t.objects.localPath(sheetImageKey));
      await t.objects.put(sheetImageKey, Buffer.from('not a png at all'));
      try {
        const res = await t.request('POST', '/v1/compare', {
          body: { old_id: blocks[0]!.id, new_id: blocks[0]!.id, type: 'Block', analyze: true },
        });
        expect(res.status).toBe(202);
        const job = await waitForJob(res.body.job_id);
        expect(job.status).toBe('Failed');
        expect(job.error.code).toBe('internal_error');
        expect(job.credits_charged).toBe(0);
      } finally {
        await t.objects.put(sheetImageKey, good);
      }
      const { credits, entries } = await expectLedgerConsistent();
      expect(credits).toEqual(before);
      expect(entries.filter((e) => e.amount < 0)).toHaveLength(11);
    },
    LONG,
  );
});
