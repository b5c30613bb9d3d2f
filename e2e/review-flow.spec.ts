// The review flow in Debian's Chromium against `blueline serve` (started by global-setup.ts).
// The steps live in review-flow.steps.ts, shared with the Electron spec.
import { expect, test, type Page } from '@playwright/test';
import { ReviewFlow } from './review-flow.steps';

const origin = () => {
  const o = process.env.BLUELINE_ORIGIN;
  if (!o) throw new Error('BLUELINE_ORIGIN not set: global setup did not start the service');
  return o;
};

test.describe.serial('review a revised beam proposal (browser)', () => {
  let page: Page;
  let flow: ReviewFlow;

  test.beforeAll(async ({ browser }) => {
    page = await browser.newPage();
    page.on('pageerror', (err) => console.log(`[page error] ${err.message}`));
    flow = new ReviewFlow(page, { shotPrefix: '', baseline: true });
  });
  test.afterAll(async () => {
    await page.close();
  });

  test('signs in from the banner link and creates a project', async () => {
    await page.goto(`${origin()}/#key=${process.env.BLUELINE_API_KEY ?? ''}`);
    await expect(page.getByRole('heading', { name: 'Projects', level: 1 })).toBeVisible();
    // The key leaves the address bar as soon as it has been read.
    expect(page.url()).not.toContain('sk_');
    await expect(page.getByText('No projects yet')).toBeVisible();
    await flow.createProject();
  });
  test('uploads both issues with upload progress', () => flow.uploadBoth());
  test('shows processing finish and both sets as sheets', () => flow.waitForProcessing());
  test('compares the newer issue with the older one', () => flow.compare());
  test("opens S101's overlay, steps through its changes and accepts one", () => flow.reviewS101());
  test('keeps the review after a reload', () => flow.reloadKeepsReview());
  test('zooms a change to 1,600 % without ever showing the Loading status', () =>
    flow.deepZoomNeverLoading());
  test('walks every change of the set, sheet by sheet, and finishes a sheet', () =>
    flow.walkTheSet());
  test('offers side-by-side, swipe and blink, the colour-blind palette and the jobs panel', () =>
    flow.otherModes());
  test('keeps a drawing log by issue date and revision, with sheet history', () =>
    flow.drawingLog());
  test('deletes a comparison, a set and the project after saying what goes', () => flow.deletes());
});
