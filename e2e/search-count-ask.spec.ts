// Search, count and ask on screen (issue 18 parts 5 and 6), on the beam proposal pair (06-01,
// 06-02) set up through the API. What is checked is what the user sees: a markup word found and
// opened at its highlighted place on the sheet; a symbol boxed on the sheet, counted on both issues
// with the per-sheet change and its instances outlined; an answer whose citation opens its sheet at
// the cited words. Screenshots of the panels at 1600x1000 and 1280x800 go to /tmp/search-shots/.
import { mkdirSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { api, key, origin, uploadDrawing, waitForJob } from './api.helpers';

// BLUELINE_SHOTS_DIR (the review flow's screenshot folder) when set, for looking at all screens.
const SHOTS = process.env.BLUELINE_SHOTS_DIR ?? '/tmp/search-shots';
const SIZES = [
  { width: 1600, height: 1000 },
  { width: 1280, height: 800 },
];

interface Sheet {
  id: string;
  sheet_number: string;
  drawing_id: string;
  width: number;
  height: number;
}

async function shots(page: Page, name: string) {
  mkdirSync(SHOTS, { recursive: true });
  const before = page.viewportSize();
  for (const s of SIZES) {
    await page.setViewportSize(s);
    await page.waitForTimeout(400);
    // A sheet on screen: wait for its tiles, so the picture shows what the user reads.
    const canvas = page.getByTestId('canvas-sheet');
    if (await canvas.count())
      await expect(canvas).toHaveAttribute('data-loaded', 'true', { timeout: 30_000 });
    await page.screenshot({ path: `${SHOTS}/${name}-${s.width}x${s.height}.png` });
  }
  if (before) await page.setViewportSize(before);
}

/** The highlight is on screen, inside the canvas, and large enough to read (zoomed to it). */
async function expectZoomedOn(page: Page, testId: string) {
  const mark = page.getByTestId(testId);
  await expect(mark).toBeVisible();
  const canvas = await page.getByTestId('canvas-sheet').boundingBox();
  const box = await mark.boundingBox();
  expect(canvas && box).toBeTruthy();
  const cx = box!.x + box!.width / 2;
  const cy = box!.y + box!.height / 2;
  // Near the middle of the canvas...
  expect(Math.abs(cx - (canvas!.x + canvas!.width / 2))).toBeLessThan(canvas!.width * 0.15);
  expect(Math.abs(cy - (canvas!.y + canvas!.height / 2))).toBeLessThan(canvas!.height * 0.15);
  // ...and zoomed: the hit is readable, not a speck on the whole sheet (fit is ~16 % here).
  expect(box!.width).toBeGreaterThan(canvas!.width * 0.08);
  const zoom = Number((await page.locator('.zoom-controls .mono').textContent())?.replace('%', ''));
  expect(zoom).toBeGreaterThanOrEqual(50);
}

let projectId = '';
let older: { id: string; job_id: string };
let newer: { id: string; job_id: string };
const sheets: Sheet[] = [];

test.describe.serial('search, count and ask', () => {
  test.beforeAll(async ({ request }) => {
    test.setTimeout(8 * 60_000);
    const p = await api<{ id: string }>(request, 'POST', '/projects', {
      name: 'Aalseth Residence',
    });
    projectId = p.id;
    older = await uploadDrawing(
      request,
      projectId,
      '20190601_beam-proposal_5-sheets.pdf',
      'Beam proposal 06-01',
    );
    newer = await uploadDrawing(
      request,
      projectId,
      '20190602_beam-proposal_5-sheets.pdf',
      'Beam proposal 06-02',
    );
    expect((await waitForJob(request, older.job_id)).status).toBe('Completed');
    expect((await waitForJob(request, newer.job_id)).status).toBe('Completed');
    const list = await api<{ data: Sheet[] }>(
      request,
      'GET',
      `/sheets?project_id=${projectId}&limit=100`,
    );
    sheets.push(...list.data);
  });

  test.afterAll(async ({ request }) => {
    // Leave the service as found (the review flow starts from "No projects yet").
    if (projectId) await api(request, 'DELETE', `/projects/${projectId}`);
  });

  test('a markup word is found once, in its issue, and opens the sheet zoomed to it', async ({
    page,
  }) => {
    await page.goto(`${origin()}/#key=${key()}`);
    await page.goto(`${origin()}/#/projects/${projectId}/search`);
    await page.getByTestId('search-input').fill('column');
    await page.getByRole('search').getByRole('button', { name: 'Search' }).click();
    const results = page.getByTestId('search-results');
    await expect(results).toBeVisible();
    // Grouped by issue: each group names its set and issue date.
    const issue = page.getByTestId('search-issue').filter({ hasText: 'Beam proposal 06-02' });
    await expect(issue).toContainText(/issued \d{4}-\d{2}-\d{2}/);
    const hit = issue.getByTestId('search-hit').filter({ hasText: 'GLULAM COLUMN' });
    await expect(hit).toHaveCount(1);
    await expect(hit).toContainText('Markup');
    await expect(
      issue
        .getByTestId('search-sheet')
        .filter({ has: page.getByText('GLULAM COLUMN') })
        .locator('.sheet-number'),
    ).toHaveText('S101');
    // No hit repeated: every (sheet, text) row appears once per issue.
    const rows = await results
      .getByTestId('search-issue')
      .evaluateAll((groups) =>
        groups.flatMap((g) =>
          [...g.querySelectorAll('[data-testid="search-sheet"]')].flatMap((s) =>
            [...s.querySelectorAll('[data-testid="search-hit"]')].map(
              (h) =>
                `${g.querySelector('.sa-issue-name')?.textContent}|${s.querySelector('.sheet-number')?.textContent}|${h.textContent}`,
            ),
          ),
        ),
      );
    expect(rows.length).toBeGreaterThan(1);
    await shots(page, 'search-panel');

    await hit.click();
    await expect(page).toHaveURL(/\/sheets\/sht_[^?]+\?at=/);
    await expect(page.getByTestId('canvas-sheet')).toHaveAttribute('data-loaded', 'true', {
      timeout: 30_000,
    });
    await expectZoomedOn(page, 'hit-highlight');
    await expect(page.getByTestId('hit-highlight')).toContainText('GLULAM COLUMN');
    await expect(page.locator('.viewer-title')).toContainText('S101');
    await shots(page, 'search-hit-on-sheet');
  });

  test('a symbol boxed on S101 is counted on both issues, with the change per sheet', async ({
    page,
  }) => {
    test.setTimeout(8 * 60_000);
    const s101 = sheets.find((s) => s.sheet_number === 'S101' && s.drawing_id === newer.id)!;
    // A section marker (core/test/parse.test.ts's template, 200 dpi pixels): open the sheet there.
    const k = s101.width / 6800;
    const at = [1410, 218, 140, 165].map((v) => Math.round(v * k)).join(',');
    await page.goto(`${origin()}/#key=${key()}`);
    await page.goto(`${origin()}/#/projects/${projectId}/sheets/${s101.id}?at=${at}`);
    await expect(page.getByTestId('canvas-sheet')).toHaveAttribute('data-loaded', 'true', {
      timeout: 30_000,
    });
    const mark = await page.getByTestId('hit-highlight').boundingBox();
    await page.getByTestId('count-draw').click();
    // The highlight is drawn 6 px outside the place: drag the place itself.
    await page.mouse.move(mark!.x + 6, mark!.y + 6);
    await page.mouse.down();
    await page.mouse.move(mark!.x + mark!.width / 2, mark!.y + mark!.height / 2, { steps: 4 });
    await page.mouse.move(mark!.x + mark!.width - 6, mark!.y + mark!.height - 6, { steps: 4 });
    await page.mouse.up();
    await expect(page.getByTestId('template')).toBeVisible();
    await page.getByTestId('count-label').fill('section marker');
    await expect(page.getByText('Also count in')).toContainText('Beam proposal 06-01');
    await page.getByTestId('count-run').click();
    await expect(page.getByTestId('count-progress')).toBeVisible();
    await expect(page.getByTestId('count-result')).toBeVisible({ timeout: 6 * 60_000 });
    // Counts per sheet of the newer set, with before / after / change against 06-01.
    const rows = page.getByTestId('count-row');
    await expect(rows).toHaveCount(5);
    await expect(page.getByTestId('count-table')).toContainText('Before');
    const s101Row = rows.filter({ hasText: 'S101' });
    const cells = await s101Row.locator('td').allTextContents();
    const [, before, after, delta] = cells;
    expect(Number(after)).toBeGreaterThan(5);
    expect(Number(delta)).toBe(Number(after) - Number(before));
    await expect(page.getByTestId('count-credits')).toHaveText('10 credits used');
    // Every instance on this sheet is outlined on the canvas.
    await expect(page.getByTestId('symbols-on-sheet')).toHaveText(
      `${after} found on this sheet (outlined in orange)`,
    );
    await page.getByRole('button', { name: 'Fit' }).click();
    await shots(page, 'count-panel');
  });

  test('the column added in 06-02 is counted as a change of +1 on S101', async ({ page }) => {
    test.setTimeout(8 * 60_000);
    const s101 = sheets.find((s) => s.sheet_number === 'S101' && s.drawing_id === newer.id)!;
    // The column 06-02 adds (a filled square markup at the GLULAM COLUMN callout's arrow):
    // /Rect [1385.6 650.6 1397.0 665.3] pt on a 2448x1584 pt page, a few px of paper around it.
    const k = s101.width / 2448;
    const box = [1385.6 * k - 6, (1584 - 665.3) * k - 6, 11.4 * k + 12, 14.6 * k + 12];
    await page.goto(`${origin()}/#key=${key()}`);
    await page.goto(
      `${origin()}/#/projects/${projectId}/sheets/${s101.id}?at=${box.map(Math.round).join(',')}`,
    );
    await expect(page.getByTestId('canvas-sheet')).toHaveAttribute('data-loaded', 'true', {
      timeout: 30_000,
    });
    const mark = await page.getByTestId('hit-highlight').boundingBox();
    await page.getByTestId('count-draw').click();
    await page.mouse.move(mark!.x + 6, mark!.y + 6);
    await page.mouse.down();
    await page.mouse.move(mark!.x + mark!.width - 6, mark!.y + mark!.height - 6, { steps: 6 });
    await page.mouse.up();
    await page.getByTestId('count-label').fill('column');
    await page.getByTestId('count-run').click();
    await expect(page.getByTestId('count-result')).toBeVisible({ timeout: 6 * 60_000 });
    const cells = await page
      .getByTestId('count-row')
      .filter({ hasText: 'S101' })
      .locator('td')
      .allTextContents();
    expect(cells[3]).toBe('+1');
    await expect(page.getByTestId('count-delta').filter({ hasText: '+1' })).toHaveCount(1);
    await shots(page, 'count-column-delta');
  });

  test('an answer cites its sources; a citation opens the cited sheet at the cited words', async ({
    page,
  }) => {
    await page.goto(`${origin()}/#key=${key()}`);
    await page.goto(`${origin()}/#/projects/${projectId}/search`);
    await page.getByTestId('ask-input').fill('Where is the cantilever?');
    await page.getByRole('button', { name: 'Ask', exact: true }).click();
    await expect(page.getByTestId('ask-answer')).toContainText('CANTILEVER');
    await expect(page.getByTestId('ask-credits')).toContainText('1 credit used');
    await expect(page.getByTestId('credit-balance')).toContainText('credits left');
    const cite = page.getByTestId('ask-citation').first();
    await expect(cite).toContainText('S102');
    await shots(page, 'ask-panel');
    await cite.click();
    await expect(page).toHaveURL(/\/sheets\/sht_/);
    await expect(page.locator('.viewer-title')).toContainText('S102');
    await expect(page.getByTestId('canvas-sheet')).toHaveAttribute('data-loaded', 'true', {
      timeout: 30_000,
    });
    await expectZoomedOn(page, 'hit-highlight');
    await shots(page, 'ask-citation-on-sheet');
  });
});
