import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadDrawing, waitForJob } from './flows';
import { startTestService, type HttpResult, type TestService } from './harness';
import { ensureOrganization, grantCredits } from '../store/repositories/organizations.repository';

// Change text (issue 17 part 5) end to end on real sheets: a change's text_before / text_after hold
// the words in it that differ between the issues, never the sheet's words wholesale, and its
// description names the change. Sheet comparisons (contract §6) with analyze, read from the overlays.
//   - Barber house A102 (sheet 1 of each set; 11x17, then 22x34 turned): many dimension strings were
//     added to the plan. Before fills are told apart from line work (the layers work) the pixel diff
//     floods most of the plan into one region; a region that large must still list only the words
//     that differ, briefly.
//   - Barber house A103 (sheet 2): in the bathroom the turned dimension 6' - 10 1/2" became 7' - 3 1/2"
//     in place, and the 10' - 8 1/4" and 5' - 1 1/8" strings beside it were deleted with their
//     dimension lines (renders of both issues, and their text layers). One modified dimension change
//     with both values once regions are separable (the fill flooding swallows it into the plan's
//     region on this branch; the description of that region names it already).
//   - Barber house A202 (sheet 4): level lines print lighter in the new issue: style, never removed.
// These are issue 17's Must-show service tests; the beam proposal's (S101's added column and callout,
// S102–S300 unchanged) are in compare.test.ts, whose beam drawings compared they read (the set is
// processed and compared once for both files), and the vision-level ones on the same sheets are in
// core/vision/compare/layers.fixtures.test.ts.

const LONG = 900_000;

let t: TestService;
let projectId: string;

interface Change {
  kind: string;
  category: string;
  text_before: string | null;
  text_after: string | null;
  description: string;
  bbox: { x: number; y: number; width: number; height: number };
  area_px: number;
  overlay: string;
}

interface Compared {
  all: Change[];
  whole: Change[];
  /** The whole-sheet overlay. */
  sheet: any;
}

/** Every change of the overlays (paged), and the whole-sheet overlay's, of `overlays`. */
async function changesOf(overlays: any[]): Promise<Compared> {
  const all: Change[] = [];
  const whole: Change[] = [];
  for (const o of overlays) {
    // Every change, page by page: a sheet can have more than a page of them.
    let url: string | null = `/v1/changes?overlay_id=${o.id}&limit=100`;
    while (url) {
      const page: HttpResult = await t.request('GET', url);
      expect(page.status).toBe(200);
      for (const c of page.body.data) {
        const change = { ...c, overlay: o.block_a.type };
        all.push(change);
        if (o.block_a.type === 'Sheet') whole.push(change);
      }
      url = page.body._meta.next
        ? `/v1/changes?cursor=${encodeURIComponent(page.body._meta.next)}`
        : null;
    }
  }
  return { all, whole, sheet: overlays.find((o) => o.block_a.type === 'Sheet') };
}

/** Every overlay of a comparison job, with block A and its sheet. */
async function overlaysOfJob(jobId: string): Promise<any[]> {
  const out: any[] = [];
  let url: string | null = `/v1/overlays?job_id=${jobId}&limit=100&expand=block_a.sheet`;
  while (url) {
    const r: HttpResult = await t.request('GET', url);
    expect(r.status).toBe(200);
    out.push(...r.body.data);
    url = r.body._meta.next ? `/v1/overlays?cursor=${encodeURIComponent(r.body._meta.next)}` : null;
  }
  return out;
}

const frac = (c: { bbox: { width: number; height: number } }, o: any) =>
  (c.bbox.width * c.bbox.height) / (o.width * o.height);
const overlaps = (
  b: { x: number; y: number; width: number; height: number },
  x: number,
  y: number,
  w: number,
  h: number,
) => b.x < x + w && x < b.x + b.width && b.y < y + h && y < b.y + b.height;

/** Index `index` (0-based page) of a processed drawing. */
async function sheetAt(drawingId: string, index: number) {
  const r = await t.request('GET', `/v1/sheets?drawing_id=${drawingId}&limit=100`);
  expect(r.status).toBe(200);
  return (r.body.data as any[]).find((s) => s.index === index);
}

/** Compares two sheets with analyze; every change of every overlay, and the whole-sheet overlay's. */
async function compareSheets(oldSheet: any, newSheet: any): Promise<Compared> {
  const res = await t.request('POST', '/v1/compare', {
    body: { old_id: oldSheet.id, new_id: newSheet.id, type: 'Sheet', analyze: true },
  });
  expect(res.status).toBe(202);
  const job = await waitForJob(t, res.body.job_id, LONG);
  expect(job.status).toBe('Completed');
  return changesOf(await overlaysOfJob(job.id));
}

const wordCount = (s: string | null) => (s ? s.trim().split(/\s+/).length : 0);

beforeAll(async () => {
  t = await startTestService({ workers: 2 });
  await grantCredits(
    t.svc.db,
    (await ensureOrganization(t.svc.db, 'Test Org')).id,
    10_000,
    'grant',
  );
  projectId = (await t.request('POST', '/v1/projects', { body: { name: 'Change text' } })).body.id;
}, LONG);

afterAll(async () => {
  await t?.stop();
});

describe('barber house 20130718 → 20130724', () => {
  let a102: Compared;
  let a103: Compared;
  let a202: Compared;

  beforeAll(async () => {
    const older = await uploadDrawing(
      t,
      projectId,
      '20130718_barber-house_set_9-sheets.pdf',
      'Barber 07-18',
    );
    const newer = await uploadDrawing(
      t,
      projectId,
      '20130724_barber-house_set_9-sheets.pdf',
      'Barber 07-24',
    );
    expect((await waitForJob(t, older.job_id, LONG)).status).toBe('Completed');
    expect((await waitForJob(t, newer.job_id, LONG)).status).toBe('Completed');
    const [o102, n102, o103, n103, o202, n202] = await Promise.all([
      sheetAt(older.id, 0),
      sheetAt(newer.id, 0),
      sheetAt(older.id, 1),
      sheetAt(newer.id, 1),
      sheetAt(older.id, 3),
      sheetAt(newer.id, 3),
    ]);
    expect([o102, n102, o103, n103, o202, n202].map((x: any) => x.sheet_number as string)).toEqual([
      'A102',
      'A102',
      'A103',
      'A103',
      'A202',
      'A202',
    ]);
    a102 = await compareSheets(o102, n102);
    a103 = await compareSheets(o103, n103);
    a202 = await compareSheets(o202, n202);
  }, LONG);

  it('A102: no change holds the sheet words — at most ~40 words before or after, 200 chars', () => {
    expect(a102.whole.length).toBeGreaterThan(0);
    for (const c of a102.all) {
      expect(wordCount(c.text_before), JSON.stringify(c)).toBeLessThanOrEqual(40);
      expect(wordCount(c.text_after), JSON.stringify(c)).toBeLessThanOrEqual(40);
      expect((c.text_before ?? '').length).toBeLessThanOrEqual(200);
      expect((c.text_after ?? '').length).toBeLessThanOrEqual(200);
    }
  });

  it('A102: the new dimensions are listed, not the words printed in both issues', () => {
    const all = JSON.stringify(a102.whole, null, 1);
    // The plan's new dimension strings (22x34 issue), among them 32'-2 1/2" across the top.
    const dims = a102.whole.filter((c) => /32'-2 1\/2"/.test(c.text_after ?? ''));
    expect(dims.length, all).toBeGreaterThanOrEqual(1);
    for (const c of dims) expect(c.category, all).toBe('dimension');
    // Words on the plan in both issues — the equipment labels, the section and elevation marks —
    // are not listed by any change.
    for (const c of a102.all)
      for (const w of ['GAS DRYER', 'UTILITY', 'WATER HEATER', 'FURANCE', 'A304', 'A306', 'A201'])
        expect(`${c.text_before ?? ''} ${c.text_after ?? ''}`, JSON.stringify(c)).not.toContain(w);
    // What the description says is short enough for the list, and not "N changed px".
    for (const c of a102.all) {
      expect(c.description.length, JSON.stringify(c)).toBeLessThanOrEqual(200);
      expect(c.description).not.toMatch(/changed px/);
    }
  });

  it("A103: the bathroom dimension's new value is named, and the strings deleted beside it", () => {
    const all = JSON.stringify(a103.whole, null, 1);
    const named = a103.whole.filter((c) =>
      c.description.includes(`Dimension 6'-10 1/2" → 7'-3 1/2"`),
    );
    expect(named, all).toHaveLength(1);
    expect(named[0]!.kind).toBe('modified');
    // 10' - 8 1/4" (and 5' - 1 1/8") went with their dimension lines: before, never after.
    expect(
      a103.whole.some((c) => (c.text_before ?? '').includes(`10'-8 1/4"`)),
      all,
    ).toBe(true);
    expect(
      a103.whole.some((c) => (c.text_after ?? '').includes(`10'-8 1/4"`)),
      all,
    ).toBe(false);
  });

  // Pending the layers branch (fill and line work apart): on this branch the new fills flood the plan
  // into one region of most of the sheet, so the bathroom's changes are not a region of their own and
  // this fails; it passes once they are (on the layers branch: a 320 x 224 px region of the bathroom's
  // line work, which also holds the deleted strings beside the changed one).
  it('A103: the bathroom dimension 6\'-10 1/2" → 7\'-3 1/2" is a modified dimension change of the bathroom', () => {
    const all = JSON.stringify(a103.whole, null, 1);
    const bath = a103.whole.filter(
      (c) =>
        c.category === 'dimension' &&
        c.description.startsWith(`Dimension 6'-10 1/2" → 7'-3 1/2"`) &&
        (c.text_before ?? '').includes(`6'-10 1/2"`) &&
        (c.text_after ?? '').includes(`7'-3 1/2"`),
    );
    expect(bath, all).toHaveLength(1);
    expect(bath[0]!.kind).toBe('modified');
    // Found as a region of the bathroom (~2 x 1.5 in at 200 dpi), not of the plan or the sheet.
    expect(bath[0]!.bbox.width, all).toBeLessThan(400);
    expect(bath[0]!.bbox.height, all).toBeLessThan(400);
  });

  it('A102 and A103: no change covers more than 10 % of the sheet; the old tones are fill changes, not line-work removals', () => {
    for (const [num, r] of [
      ['A102', a102],
      ['A103', a103],
    ] as const) {
      const all = JSON.stringify(r.whole, null, 1);
      expect(r.sheet, num).toBeDefined();
      for (const c of r.whole)
        expect(frac(c, r.sheet), `${num} ${JSON.stringify(c)}`).toBeLessThanOrEqual(0.1);
      // The old plan's background tones (about a quarter of the sheet) went: fill changes, removed,
      // covering together more than 10 % of the sheet.
      const fills = r.whole.filter((c) => c.category === 'fill');
      const fillPx = fills.filter((c) => c.kind !== 'added').reduce((n, c) => n + c.area_px, 0);
      expect(fillPx, `${num} ${all}`).toBeGreaterThan(0.1 * r.sheet.width * r.sheet.height);
      // No line-work change removes anything near as much (before issue 17: one region of ~1.7 M px).
      const lineRemoved = r.whole.filter(
        (c) => c.category !== 'fill' && c.category !== 'noise' && c.kind === 'removed',
      );
      for (const c of lineRemoved)
        expect(c.area_px, `${num} ${JSON.stringify(c)}`).toBeLessThan(0.1 * fillPx);
    }
  });

  it(`A103: the bathroom dimension 10'-8 1/4" → 7'-3 1/2" is its own change, under 1 % of the sheet, naming both values`, () => {
    const all = JSON.stringify(a103.whole, null, 1);
    const bath = a103.whole.filter(
      (c) =>
        c.category === 'dimension' &&
        (c.text_before ?? '').includes(`10'-8 1/4"`) &&
        (c.text_after ?? '').includes(`7'-3 1/2"`),
    );
    expect(bath, all).toHaveLength(1);
    expect(frac(bath[0]!, a103.sheet), all).toBeLessThan(0.01);
    expect(bath[0]!.description).toContain(`7'-3 1/2"`);
  });

  it('A202: the level lines printed lighter in the new issue are style changes or nothing, never removed line work', () => {
    const all = JSON.stringify(a202.whole, null, 1);
    // Level lines of the east elevation, left of the building: y ≈ 613, 655 and 778, x 260–420 of
    // the 11x17 sheet at 200 dpi (layers.fixtures.test.ts).
    for (const [x, y, w, h] of [
      [260, 605, 160, 16],
      [260, 647, 160, 16],
      [260, 770, 160, 16],
    ] as const) {
      const hit = a202.whole.filter(
        (c) =>
          overlaps(c.bbox, x, y, w, h) &&
          c.kind === 'removed' &&
          !['style', 'fill', 'noise'].includes(c.category),
      );
      expect(hit, `${x},${y} ${all}`).toEqual([]);
    }
    for (const c of a202.whole)
      expect(frac(c, a202.sheet), JSON.stringify(c)).toBeLessThanOrEqual(0.1);
  });

  it('A103: no change dumps the sheet text either', () => {
    for (const c of a103.all) {
      expect(wordCount(c.text_before), JSON.stringify(c)).toBeLessThanOrEqual(40);
      expect(wordCount(c.text_after), JSON.stringify(c)).toBeLessThanOrEqual(40);
    }
  });
});
