import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPdf } from '../vision/input/synthetic-inputs';
import { startTestService, type TestService } from './harness';
import { uploadDrawing, waitForJob } from './flows';

// A drawing's issue date and revision over HTTPS (contract §4 Drawing, issued_at added 2026-11-27):
// read from the title blocks, else the file name, else the PDF's CreationDate; a person's value
// (PATCH, or POST for the revision) wins and survives re-processing. Where each value came from is
// internal (drawings.issued_at_source / revision_source), read here from the database.

const GENERATED = resolve(import.meta.dirname, '../../fixtures/generated');

let t: TestService;
let projectId: string;
beforeAll(async () => {
  t = await startTestService();
  projectId = (await t.request('POST', '/v1/projects', { body: { name: 'Issue dates' } })).body.id;
});
afterAll(async () => {
  await t.stop();
});

/** Uploads, creates the drawing and waits for its process job to complete; the drawing as read back. */
async function processed(
  file: string | Buffer,
  name: string,
  opts: { filename?: string; revision?: string } = {},
) {
  const d = await uploadDrawing(t, projectId, file, name, opts);
  const job = await waitForJob(t, d.job_id);
  expect(job.status, JSON.stringify(job.error)).toBe('Completed');
  const got = await t.request('GET', `/v1/drawings/${d.id}`);
  expect(got.status).toBe(200);
  return got.body;
}

async function sources(
  id: string,
): Promise<{ issued_at_source: string | null; revision_source: string | null }> {
  return (await t.svc.db
    .prepare('SELECT issued_at_source, revision_source FROM drawings WHERE id = ?')
    .get(id)) as { issued_at_source: string | null; revision_source: string | null };
}

/** Runs the drawing's process job again (what a restart or a re-queue does) and waits for it. */
async function reprocess(drawing: { id: string }) {
  const job = await t.svc.jobs.enqueue({
    organization_id: String(
      (
        (await t.svc.db
          .prepare('SELECT organization_id FROM drawings WHERE id = ?')
          .get(drawing.id)) as {
          organization_id: string;
        }
      ).organization_id,
    ),
    project_id: projectId,
    type: 'process',
    target_type: 'drawing',
    target_id: drawing.id,
    payload: { drawing_id: drawing.id },
  });
  expect((await waitForJob(t, job.id)).status).toBe('Completed');
  return (await t.request('GET', `/v1/drawings/${drawing.id}`)).body;
}

const patch = (id: string, body: unknown) => t.request('PATCH', `/v1/drawings/${id}`, { body });

describe('issued_at read at processing', () => {
  it('barber house: from the file names, 2013-07-18 and 2013-07-24 (their title blocks print no date)', async () => {
    const older = await processed('20130718_barber-house_set_9-sheets.pdf', 'Barber house A', {
      filename: '20130718_barber-house_set_9-sheets.pdf',
    });
    const newer = await processed('20130724_barber-house_set_9-sheets.pdf', 'Barber house B', {
      filename: '20130724_barber-house_set_9-sheets.pdf',
    });
    expect(older.issued_at).toBe('2013-07-18');
    expect(newer.issued_at).toBe('2013-07-24');
    expect((await sources(older.id)).issued_at_source).toBe('file_name');
    expect((await sources(newer.id)).issued_at_source).toBe('file_name');
    // Nothing in these title blocks names a revision.
    expect(older.revision).toBeNull();
  }, 480_000);

  it('a date in the file name wins over the PDF creation date', async () => {
    // The barber PDFs were written on their issue days; named for another day, the name decides.
    const d = await processed('20130718_barber-house_set_9-sheets.pdf', 'Barber renamed', {
      filename: 'Barber House set 2 Aug 2013.pdf',
    });
    expect(d.issued_at).toBe('2013-08-02');
    expect((await sources(d.id)).issued_at_source).toBe('file_name');
  }, 480_000);

  it('beam proposal: from its title blocks, 2019-05-27 (not the file name’s 2019-06-01)', async () => {
    const d = await processed('20190601_beam-proposal_5-sheets.pdf', 'Beam proposal', {
      filename: '20190601_beam-proposal_5-sheets.pdf',
    });
    expect(d.issued_at).toBe('2019-05-27');
    expect((await sources(d.id)).issued_at_source).toBe('title_block');
  }, 480_000);

  it('no date in the title block or the name: the PDF creation date; none at all: null', async () => {
    const withDate = buildPdf({ info: { CreationDate: "D:20110302093000-05'00'" } });
    const d = await processed(Buffer.from(withDate), 'Sketch', { filename: 'sketch.pdf' });
    expect(d.issued_at).toBe('2011-03-02');
    expect((await sources(d.id)).issued_at_source).toBe('pdf_metadata');

    const none = await processed(Buffer.from(buildPdf()), 'Undated', { filename: 'sketch-2.pdf' });
    expect(none.issued_at).toBeNull();
    expect((await sources(none.id)).issued_at_source).toBeNull();
  }, 240_000);
});

describe('revision read from the title block', () => {
  const E1 = readFileSync(resolve(GENERATED, 'shop_tekla-erection_E1.pdf'));

  it('is the title block’s label when no person gave one, and the POSTed label when one did', async () => {
    const read = await processed(E1, 'Erection E1', { filename: 'E1.pdf' });
    expect(read.revision).toBe('B');
    expect(read.issued_at).toBe('2024-03-14');
    expect(await sources(read.id)).toEqual({
      issued_at_source: 'title_block',
      revision_source: 'title_block',
    });

    const given = await processed(E1, 'Erection E1 (labelled)', {
      filename: 'E1.pdf',
      revision: 'For approval',
    });
    expect(given.revision).toBe('For approval');
    expect((await sources(given.id)).revision_source).toBe('person');
  }, 240_000);
});

describe('PATCH /drawings/{id} issued_at and revision', () => {
  let drawing: { id: string };
  let control: { id: string };
  beforeAll(async () => {
    const E1 = readFileSync(resolve(GENERATED, 'shop_tekla-erection_E1.pdf'));
    drawing = await processed(E1, 'Erection E1 (patched)', { filename: 'E1.pdf' });
    control = await processed(E1, 'Erection E1 (control)', { filename: 'E1.pdf' });
  }, 240_000);

  it('re-processing re-reads what no person set (the control for the tests below)', async () => {
    // Values that processing itself wrote are replaced by what it reads again.
    await t.svc.db
      .prepare(`UPDATE drawings SET issued_at = '1999-09-09', revision = 'Z' WHERE id = ?`)
      .run(control.id);
    const again = await reprocess(control);
    expect(again.issued_at).toBe('2024-03-14');
    expect(again.revision).toBe('B');
  }, 240_000);

  it('a person’s values win and survive re-processing', async () => {
    const before = (await t.request('GET', `/v1/drawings/${drawing.id}`)).body;
    const r = await patch(drawing.id, { issued_at: '2024-03-20', revision: 'C' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ issued_at: '2024-03-20', revision: 'C' });
    expect(r.body.updated_at > before.updated_at).toBe(true);
    expect(await sources(drawing.id)).toEqual({
      issued_at_source: 'person',
      revision_source: 'person',
    });

    const again = await reprocess(drawing);
    expect(again).toMatchObject({ issued_at: '2024-03-20', revision: 'C' });
  }, 240_000);

  it('null says "none" and survives re-processing too', async () => {
    const r = await patch(drawing.id, { issued_at: null, revision: null });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ issued_at: null, revision: null });
    const again = await reprocess(drawing);
    expect(again).toMatchObject({ issued_at: null, revision: null });
    // And a date set afterwards is kept as well.
    expect((await patch(drawing.id, { issued_at: '2024-02-29' })).body.issued_at).toBe(
      '2024-02-29',
    );
  }, 240_000);

  const CALENDAR = /^must be a calendar date as YYYY-MM-DD \(e\.g\. 2013-07-18\) or null$/;
  it.each([
    ['2013-02-30', 'not a calendar day', CALENDAR],
    ['2023-02-29', 'not a leap year', CALENDAR],
    ['2013-7-18', 'unpadded', CALENDAR],
    ['18/07/2013', 'not ISO', CALENDAR],
    ['2013-07-18T00:00:00Z', 'a timestamp, not a date', CALENDAR],
    ['', 'empty', CALENDAR],
    [20130718, 'a number', /^must be string or null$/],
  ] as [unknown, string, RegExp][])(
    'refuses issued_at %j (%s) with one precise 400 validation_error',
    async (value, _why, message) => {
      const r = await patch(drawing.id, { issued_at: value });
      expect(r.status).toBe(400);
      expect(r.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(r.body.code).toBe('validation_error');
      // One error for the field: not also "must be null" and "must match a schema in anyOf".
      expect(r.body.errors).toEqual([
        { field: '/issued_at', code: expect.any(String), message: expect.stringMatching(message) },
      ]);
      expect(r.body.detail).toBe(`Body field '/issued_at' ${r.body.errors[0].message}.`);
    },
  );

  it('refuses a revision that is not a string of at most 100 characters', async () => {
    for (const value of [7, 'x'.repeat(101)]) {
      const r = await patch(drawing.id, { revision: value });
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_error');
      expect(r.body.errors[0].field).toBe('/revision');
    }
    // Nothing was written by the refused requests.
    expect((await t.request('GET', `/v1/drawings/${drawing.id}`)).body.issued_at).toBe(
      '2024-02-29',
    );
  });
});
