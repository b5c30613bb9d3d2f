import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadDrawing, waitForJob } from './flows';
import { startTestService, type TestService } from './harness';

// Search over PDF markups, without duplicates, with each hit's issue (issue 18 part 5), over HTTPS
// on both beam proposal issues: 20190602's S101 carries a FreeText callout "GLULAM COLUMN" (a PDF
// annotation, not the drawing's text); 20190601 has no such markup.

const LONG = 600_000;

interface Hit {
  type: string;
  id: string;
  sheet_id: string;
  sheet_number: string | null;
  drawing_id: string;
  snippet: string;
  bbox: { x: number; y: number; width: number; height: number } | null;
  source?: string;
  drawing_name: string;
  revision: string | null;
  issued_at: string | null;
}

let t: TestService;
let projectId: string;
let older: { id: string; job_id: string };
let newer: { id: string; job_id: string };

async function hits(body: Record<string, unknown>): Promise<Hit[]> {
  const r = await t.request('POST', `/v1/projects/${projectId}/search`, { body });
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

beforeAll(async () => {
  t = await startTestService();
  const p = await t.request('POST', '/v1/projects', { body: { name: 'Search markups' } });
  projectId = p.body.id;
  older = await uploadDrawing(t, projectId, '20190601_beam-proposal_5-sheets.pdf', 'Beam 06-01');
  newer = await uploadDrawing(t, projectId, '20190602_beam-proposal_5-sheets.pdf', 'Beam 06-02');
  expect((await waitForJob(t, older.job_id)).status).toBe('Completed');
  expect((await waitForJob(t, newer.job_id)).status).toBe('Completed');
}, LONG);

afterAll(async () => {
  await t?.stop();
});

describe('search over markups', () => {
  it("finds S101's markup word 'column' in the newer issue, boxed where the callout is", async () => {
    const found = await hits({ query: 'column', limit: 100 });
    const markup = found.filter((h) => h.source === 'markup');
    const glulam = markup.find((h) => /GLULAM COLUMN/.test(h.snippet));
    expect(glulam, JSON.stringify(found, null, 1)).toBeDefined();
    expect(glulam).toMatchObject({ type: 'text', sheet_number: 'S101', drawing_id: newer.id });
    const sheet = await t.request('GET', `/v1/sheets/${glulam!.sheet_id}`);
    const { width, height } = sheet.body;
    const b = glulam!.bbox!;
    expect(b.width).toBeGreaterThan(0);
    expect(b.height).toBeGreaterThan(0);
    expect(b.x + b.width).toBeLessThanOrEqual(width);
    expect(b.y + b.height).toBeLessThanOrEqual(height);
    // A callout's box is a few words wide, not the sheet.
    expect(b.width * b.height).toBeLessThan((width * height) / 50);
    // The callout was added in the newer issue: the older set has no markup saying "GLULAM COLUMN".
    expect(markup.filter((h) => /GLULAM COLUMN/.test(h.snippet)).map((h) => h.drawing_id)).toEqual([
      newer.id,
    ]);
  });

  it('returns one hit per distinct place and text', async () => {
    for (const query of ['column', 'glulam', 'beam', 'S101']) {
      const found = await hits({ query, limit: 100 });
      expect(found.length).toBeGreaterThan(0);
      const keys = found.map((h) =>
        [
          h.type,
          h.sheet_id,
          h.snippet,
          h.bbox ? [h.bbox.x, h.bbox.y].map((v) => Math.round(v / 10)).join(',') : '',
        ].join('|'),
      );
      expect(new Set(keys).size, `${query}: ${keys.join('\n')}`).toBe(keys.length);
    }
  });

  it('says which issue every hit is in', async () => {
    const found = await hits({ query: 'glulam', limit: 100 });
    const names = new Map([
      [older.id, 'Beam 06-01'],
      [newer.id, 'Beam 06-02'],
    ]);
    for (const h of found) {
      expect(h.drawing_name).toBe(names.get(h.drawing_id));
      expect(h.issued_at).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect('revision' in h).toBe(true);
    }
    expect(new Set(found.map((h) => h.drawing_id)).size).toBe(2);
  });
});
