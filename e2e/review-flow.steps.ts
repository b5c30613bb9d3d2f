// The reviewer's story as reusable steps, driven by the browser spec (review-flow.spec.ts) and
// the Electron spec (electron-flow.spec.ts): create a project, upload the beam proposal pair,
// watch processing finish, compare, open S101's overlay, step through its changes, accept one,
// reload and see it kept, then the other viewer modes, the palette and the jobs panel.
//
// Only S101 changes between the two issues (fixtures README): the other four sheets are
// pixel-identical and must show as nearly identical. Every assertion is on what the user sees.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page } from '@playwright/test';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..');
export const fixtures = path.resolve(repoRoot, 'fixtures/drawings');
export const OLDER = '20190601_beam-proposal_5-sheets';
export const NEWER = '20190602_beam-proposal_5-sheets';
const shots = path.join(here, 'screenshots');

/** Selects the <option> whose text contains `text` (labels also carry revision and sheet count). */
async function selectContaining(page: Page, testId: string, text: string): Promise<void> {
  const select = page.getByTestId(testId);
  const value = await select.evaluate((el, t) => {
    const opt = Array.from((el as HTMLSelectElement).options).find((o) => o.text.includes(t));
    return opt?.value ?? null;
  }, text);
  expect(value, `an option containing ${text}`).not.toBeNull();
  await select.selectOption(value as string);
}

export interface FlowOptions {
  /** Prefix for screenshot files, e.g. '' for the browser and 'electron-' for the desktop app. */
  shotPrefix: string;
  /** Compare the fitted S101 canvas with the stored baseline (browser run only: one renderer). */
  baseline: boolean;
}

export class ReviewFlow {
  projectUrl = '';
  overlayUrl = '';
  comparisonUrl = '';
  constructor(
    readonly page: Page,
    readonly opts: FlowOptions,
  ) {}

  /** Waits until every canvas on screen has drawn its images (tiles can take a moment the first time). */
  async canvasesLoaded(): Promise<void> {
    await expect(this.page.locator('.sheet-canvas').first()).toBeVisible();
    await expect(this.page.locator('.sheet-canvas[data-loaded="false"]')).toHaveCount(0, {
      timeout: 60_000,
    });
  }

  async shot(name: string): Promise<void> {
    await this.page.screenshot({ path: path.join(shots, `${this.opts.shotPrefix}${name}.png`) });
    // BLUELINE_SHOTS_DIR: also at the two review sizes (1600x1000, 1280x800), for looking at.
    const dir = process.env.BLUELINE_SHOTS_DIR;
    if (!dir) return;
    const before = this.page.viewportSize();
    for (const [w, h] of [
      [1600, 1000],
      [1280, 800],
    ] as const) {
      await this.page.setViewportSize({ width: w, height: h });
      await this.page.waitForTimeout(400); // relayout, canvas resize and redraw
      // The tiles the new size asks for, so the picture shows what the user reads.
      await expect(this.page.locator('.sheet-canvas[data-loaded="false"]')).toHaveCount(0, {
        timeout: 60_000,
      });
      await this.page.screenshot({
        path: path.join(dir, `${this.opts.shotPrefix}${name}-${w}x${h}.png`),
      });
    }
    if (before) await this.page.setViewportSize(before);
  }

  /** On an empty project list, creates the project and lands on its page. */
  async createProject(): Promise<void> {
    const page = this.page;
    await this.shot('01-projects-empty');

    await page.getByLabel('Name').fill('Beam proposal review');
    await page
      .getByLabel('Description (optional)')
      .fill('OpeningDesign beam proposal, issues of 1 and 2 June 2019');
    await page.getByRole('button', { name: 'Create project' }).click();
    await expect(page.getByRole('heading', { name: 'Beam proposal review' })).toBeVisible();
    await expect(page.getByText('No drawing sets yet')).toBeVisible();
    this.projectUrl = page.url();

    await page.goto(page.url().replace(/#.*$/, '#/'));
    await expect(
      page.getByTestId('project-table').getByRole('link', { name: 'Beam proposal review' }),
    ).toBeVisible();
    await this.shot('02-projects');
  }

  /** Uploads both issues; each becomes a drawing (or the test stops with the API detail). */
  async uploadBoth(): Promise<void> {
    const page = this.page;
    await page.goto(this.projectUrl);
    await expect(page.getByTestId('dropzone')).toBeVisible();
    await page
      .getByTestId('file-input')
      .setInputFiles([path.join(fixtures, `${OLDER}.pdf`), path.join(fixtures, `${NEWER}.pdf`)]);
    const items = page.getByTestId('upload-item');
    await expect(items).toHaveCount(2);
    // Both files reach the service and become drawings (phase moves past uploading/registering).
    // A failed upload stops the test at once with the API's detail, as the user sees it.
    for (const name of [OLDER, NEWER]) {
      const item = items.filter({ hasText: name });
      await expect(item, `${name} uploaded`).toHaveAttribute(
        'data-phase',
        /processing|ready|failed/,
        { timeout: 60_000 },
      );
      if ((await item.getAttribute('data-phase')) === 'failed') {
        throw new Error(
          `upload of ${name} failed: ${await item.locator('.state-error-inline').textContent()}`,
        );
      }
    }
    const rows = page.getByTestId('drawing-row');
    await expect(rows).toHaveCount(2);
    await expect(rows.filter({ hasText: OLDER })).toBeVisible();
    await expect(rows.filter({ hasText: NEWER })).toBeVisible();
    await this.shot('03-uploading');
  }

  /** Processing finishes; ten sheets, filters, one sheet opened. */
  async waitForProcessing(): Promise<void> {
    const page = this.page;
    const rows = page.getByTestId('drawing-row');
    await expect(rows.filter({ hasText: OLDER })).toHaveAttribute('data-status', 'Ready', {
      timeout: 4 * 60_000,
    });
    await expect(rows.filter({ hasText: NEWER })).toHaveAttribute('data-status', 'Ready', {
      timeout: 4 * 60_000,
    });
    await expect(page.getByTestId('upload-item').filter({ hasText: 'Ready' })).toHaveCount(2);
    for (const r of await rows.all()) await expect(r.locator('td.num')).toHaveText('5');

    const cards = page.getByTestId('sheet-card');
    await expect(cards).toHaveCount(10);
    await this.shot('04-drawings-and-sheets');

    // Sheet-number filter: exactly the two S101s.
    await page.getByTestId('sheet-number-filter').fill('S101');
    await page.getByTestId('sheet-number-filter').press('Enter');
    await expect(cards).toHaveCount(2);
    await expect(cards.first()).toContainText('S101');
    // Discipline filter: all are structural.
    await page.getByTestId('discipline-filter').selectOption('structural');
    await expect(cards).toHaveCount(2);
    await this.shot('05-sheets-filtered');

    await cards.first().click();
    await expect(page.getByTestId('sheet-viewer')).toBeVisible();
    await expect(page.getByTestId('meta-number')).toHaveValue('S101');
    await this.canvasesLoaded();
    // The sheet's views in words: the title block called so, no block type names or stray "F.".
    const views = page.getByTestId('sheet-view');
    await expect(views.filter({ hasText: 'Title block' })).toHaveCount(1);
    await expect(views.filter({ hasText: /TitleBlock|F\.$/ })).toHaveCount(0);
    await expect(page.getByTestId('sheet-viewer')).toContainText('text read from the PDF');
    await this.shot('06-sheet');

    // Correct the title by hand: saved through PATCH /sheets/{id}, still there after a reload,
    // then put back so the comparison below sees the extracted title.
    const title = page.getByTestId('meta-title');
    const original = await title.inputValue();
    await title.fill('FRAMING - FIRST FLOOR (checked)');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Sheet details saved')).toBeVisible();
    await page.reload();
    await expect(page.getByTestId('meta-title')).toHaveValue('FRAMING - FIRST FLOOR (checked)');
    await page.getByTestId('meta-title').fill(original);
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByText('Sheet details saved').first()).toBeVisible();
    await expect(page.getByTestId('meta-title')).toHaveValue(original);
    await page.goBack();
    // Filters are UI state (the reload above reset them); either way all ten sheets come back.
    const clear = page.getByRole('button', { name: 'Clear', exact: true });
    if (await clear.isVisible()) await clear.click();
    await expect(page.getByTestId('sheet-card')).toHaveCount(10);
  }

  /** Compares newer with older; five pairs, S101 first, nothing added or removed. */
  async compare(): Promise<void> {
    const page = this.page;
    await page.goto(this.projectUrl.replace(/\/?$/, '') + '/compare');
    await selectContaining(page, 'compare-newer', NEWER);
    await selectContaining(page, 'compare-older', OLDER);
    await this.shot('07-compare-pick');
    await page.getByTestId('start-compare').click();

    const status = page.getByTestId('compare-status');
    const refused = page.getByRole('alert');
    await expect(status.or(refused)).toBeVisible();
    if (await refused.isVisible())
      throw new Error(`the comparison did not start: ${await refused.textContent()}`);
    await expect(page.getByTestId('compare-job-status')).toHaveAttribute(
      'data-status',
      /Completed|Failed|Canceled/,
      {
        timeout: 5 * 60_000,
      },
    );
    const final = await page.getByTestId('compare-job-status').getAttribute('data-status');
    if (final !== 'Completed')
      throw new Error(`the comparison ended ${final}: ${await status.textContent()}`);

    const pairs = page.getByTestId('pair-row');
    await expect(pairs).toHaveCount(5);
    // Sorted by similarity, most changed first: S101 is the only sheet that changed (a column
    // and its callout in one small region, so its score may still be in the top band); the
    // other four are pixel-identical and show no change regions.
    await expect(pairs.first()).toHaveAttribute('data-sheet', 'S101');
    const s101Changes = pairs.first().getByTestId('pair-change-count');
    await expect(s101Changes).not.toHaveText('0');
    await expect(s101Changes).not.toHaveText('—');
    for (const n of ['S102', 'S103', 'S150', 'S300']) {
      const row = page.locator(`[data-testid="pair-row"][data-sheet="${n}"]`);
      await expect(row).toContainText('Nearly identical');
      await expect(row.getByTestId('pair-change-count')).toHaveText('0');
    }
    await expect(page.getByTestId('pairs-summary')).toContainText('1 changed · 4 unchanged');
    // Plain words: S101 is changed and nothing is reviewed yet; no ids or method names.
    const s101 = pairs.first();
    await expect(s101.getByTestId('pair-status')).toHaveText('Changed');
    await expect(s101.getByTestId('score-words')).not.toContainText('Nearly identical');
    await expect(s101.getByTestId('pair-review')).toHaveText(/^0 of \d+ reviewed$/);
    await expect(page.getByTestId('set-progress')).toContainText(/0 of \d+ changes? reviewed/);
    await expect(page.getByTestId('set-progress')).toContainText('across 1 changed sheet');
    await expect(page.getByTestId('pair-table')).not.toContainText('phase-correlation');
    await expect(page.getByTestId('compare-status')).not.toContainText(/job_|[0-9a-f]{8}-/);
    // Nothing added or removed: no rows for sheets in only one issue.
    await expect(page.getByTestId('unpaired-row')).toHaveCount(0);
    this.comparisonUrl = page.url();
    await this.shot('08-comparison');
  }

  /** Opens S101's overlay, steps through changes, accepts the first. */
  async reviewS101(): Promise<void> {
    const page = this.page;
    await page
      .locator('[data-testid="pair-row"][data-sheet="S101"]')
      .getByTestId('open-overlay')
      .click();
    await expect(page.getByTestId('overlay-viewer')).toBeVisible();
    await expect(page.getByTestId('viewer-sheet-number')).toHaveText('S101');
    // The viewer opens on the whole sheet, its views listed by name to jump to.
    await expect(page.getByTestId('overlay-view-name')).toHaveText('Whole sheet');
    await expect(page.getByTestId('viewer-view-title')).toContainText('Whole sheet');
    await expect(page.getByTestId('sheet-position')).toHaveText('Sheet 1 of 5');
    await expect(page.getByTestId('alignment-words')).toContainText('Aligned');
    const count = page.getByTestId('change-count');
    await expect(count).not.toHaveText('0');
    const n = Number(await count.textContent());
    expect(n).toBeGreaterThan(0);
    this.overlayUrl = page.url();

    // The whole sheet at "fit", compared to the stored baseline with a tolerance.
    await page.keyboard.press('0');
    await page.waitForTimeout(500); // the fit animation lasts 320 ms
    await this.canvasesLoaded();
    if (this.opts.baseline) {
      await expect(page.getByTestId('canvas-main')).toHaveScreenshot('s101-overlay-fit.png', {
        maxDiffPixelRatio: 0.03,
      });
    }
    await this.shot('09-overlay');

    const detail = page.getByTestId('change-detail');
    const zoomAtFit = await page.getByTestId('zoom-pct').textContent();
    await page.keyboard.press('j');
    await expect(detail).toContainText(`Change 1 of ${n}`);
    // Selecting a change zooms in on its region.
    await expect(page.getByTestId('zoom-pct')).not.toHaveText(zoomAtFit ?? '');
    await page.waitForTimeout(400); // let the 320 ms zoom animation finish
    await this.canvasesLoaded();
    await this.shot('10-overlay-change-1');
    // Words that read the same before and after are context, never shown struck out as an edit.
    for (const del of await detail.locator('del').all()) {
      const before = (await del.textContent()) ?? '';
      await expect(detail.locator('ins')).not.toHaveText(before);
    }
    if (n > 1) {
      await page.keyboard.press('j');
      await expect(detail).toContainText(`Change 2 of ${n}`);
      await page.keyboard.press('k');
    }
    await expect(detail).toContainText(`Change 1 of ${n}`);

    const saved = page.waitForResponse(
      (r) => r.request().method() === 'PATCH' && r.url().includes('/v1/changes/') && r.ok(),
    );
    await page.keyboard.press('a');
    await saved;
    await expect(page.getByTestId('change-status')).toHaveText('Accepted');
    await expect(page.getByTestId('reviewed-count')).toHaveText(`1 of ${n} reviewed`);
    await this.shot('11-overlay-accepted');
  }

  /** After a reload the accepted change is still accepted. */
  async reloadKeepsReview(): Promise<void> {
    const page = this.page;
    await page.reload();
    await expect(page.getByTestId('overlay-viewer')).toBeVisible();
    await expect(page.getByTestId('reviewed-count')).toContainText('1 of');
    await page.keyboard.press('j');
    await expect(page.getByTestId('change-detail')).toContainText('Change 1 of');
    await expect(page.getByTestId('change-status')).toHaveText('Accepted');
    expect(page.url()).toBe(this.overlayUrl);
  }

  /**
   * Issue 19: zooming in on a change to 1,600 % never shows the "Loading drawing…" status: while
   * each step's deep tiles render (from the PDFs, on first request) the enlarged lower level
   * shows. A MutationObserver counts every time the status enters the main canvas, however
   * briefly, so the check does not depend on when it looks.
   */
  async deepZoomNeverLoading(): Promise<void> {
    const page = this.page;
    await page.keyboard.press('j');
    await expect(page.getByTestId('change-detail')).toContainText('Change 1 of');
    await page.waitForTimeout(400); // the 320 ms zoom animation to the change
    await this.canvasesLoaded();
    await page.keyboard.press('Escape'); // the selection's fill would tint the view
    const canvas = page.getByTestId('canvas-main');
    await page.evaluate(() => {
      const w = window as unknown as { __loadingSeen: number };
      w.__loadingSeen = 0;
      const seen = () => {
        if (document.querySelector('[data-testid="canvas-main"] .canvas-status .spinner'))
          w.__loadingSeen++;
      };
      seen();
      new MutationObserver(seen).observe(document.body, { subtree: true, childList: true });
      // The protocol each deep tile came over (the service speaks HTTP/2 by ALPN).
      const p = window as unknown as { __tileProtocols: string[] };
      p.__tileProtocols = [];
      new PerformanceObserver((list) => {
        for (const e of list.getEntries())
          if (e.name.includes('/tiles/'))
            p.__tileProtocols.push((e as PerformanceResourceTiming).nextHopProtocol);
      }).observe({ type: 'resource' });
    });
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    const pct = () =>
      page
        .getByTestId('zoom-pct')
        .textContent()
        .then((t) => Number((t ?? '').replace(/[^0-9]/g, '')));
    for (let i = 0; i < 8 && (await pct()) < 1600; i++) {
      // One step: x2 (wheel factor e^(-0.0015 deltaY)).
      await page.mouse.wheel(0, -Math.log(2) / 0.0015);
      await expect(canvas).toHaveAttribute('data-loaded', 'true', { timeout: 60_000 });
    }
    expect(await pct()).toBe(1600);
    expect(await page.evaluate(() => (window as any).__loadingSeen)).toBe(0);
    // Every tile of the steps that came over the network came over HTTP/2 (one connection: a
    // step's tiles go at once); '' is a tile the browser's cache answered.
    const protocols: string[] = await page.evaluate(() => (window as any).__tileProtocols);
    const fetched = protocols.filter((p) => p !== '');
    expect(fetched.length).toBeGreaterThan(0);
    expect([...new Set(fetched)]).toEqual(['h2']);
    // And back out: the coarser levels are here already.
    await page.keyboard.press('0');
    await page.waitForTimeout(500);
    await this.canvasesLoaded();
  }

  /**
   * `j`/`k` walk every change of the set across sheets, `[`/`]` go sheet by sheet, Shift+A
   * finishes a sheet (with undo), and the comparison page shows the review progress.
   */
  async walkTheSet(): Promise<void> {
    const page = this.page;
    const n = Number(await page.getByTestId('change-count').textContent());
    const detail = page.getByTestId('change-detail');
    await page.keyboard.press('Escape');
    await expect(detail).toHaveCount(0);
    // Walk every change of S101; the change label is words, never an id.
    for (let i = 1; i <= n; i++) {
      await page.keyboard.press('j');
      await expect(detail).toContainText(`Change ${i} of ${n}`);
      await expect(page.getByTestId('change-label')).not.toHaveText(/chg_|[0-9a-f]{8}-|^\s*$/);
    }
    // S101 is the only changed sheet: past its last change is the end of the set.
    await page.keyboard.press('j');
    await expect(page.getByText('That was the last change in this comparison.')).toBeVisible();
    await this.shot('16-overlay-last-change');

    // ] opens the next sheet (S102, unchanged), on its whole sheet.
    await page.keyboard.press(']');
    await expect(page.getByTestId('viewer-sheet-number')).not.toHaveText('S101');
    await expect(page.getByTestId('sheet-position')).toHaveText('Sheet 2 of 5');
    await expect(page.getByTestId('overlay-view-name')).toHaveText('Whole sheet');
    await expect(page.getByTestId('score-words')).toContainText('Nearly identical');
    // k from there crosses back to S101's last change.
    await page.keyboard.press('k');
    await expect(page.getByTestId('viewer-sheet-number')).toHaveText('S101');
    await expect(detail).toContainText(`Change ${n} of ${n}`);

    // Shift+A accepts the rest of the sheet; u undoes it. Reopen the selected change first so
    // at least one is open whatever S101's count.
    await page.keyboard.press('o');
    await expect(page.getByTestId('change-status')).toHaveText('Open');
    const reviewed = page.getByTestId('reviewed-count');
    const before = Number(((await reviewed.textContent()) ?? '').split(' ')[0]);
    const open = n - before;
    await page.keyboard.press('Shift+A');
    await expect(reviewed).toHaveText(`${n} of ${n} reviewed`);
    await expect(page.getByTestId('accept-rest-note')).toContainText(
      `${open} change${open === 1 ? '' : 's'} marked accepted`,
    );
    await this.shot('17-overlay-sheet-finished');
    await page.keyboard.press('u');
    await expect(reviewed).toHaveText(`${before} of ${n} reviewed`);
    // Accept the selected one again: one reviewed change for the comparison page.
    await page.keyboard.press('a');
    await expect(reviewed).toHaveText(`${before + 1} of ${n} reviewed`);
    const done = before + 1;

    // The comparison page shows the sheet's and the set's progress.
    await page.goto(this.comparisonUrl);
    const s101 = page.locator('[data-testid="pair-row"][data-sheet="S101"]');
    await expect(s101.getByTestId('pair-review')).toContainText(`${done} of ${n} reviewed`);
    await expect(page.getByTestId('set-progress')).toContainText(
      `${done} of ${n} change${n === 1 ? '' : 's'} reviewed`,
    );
    await this.shot('18-comparison-progress');

    // Exports from the comparison page: the change list as CSV, ready as a download link.
    const exports = page.getByTestId('exports');
    await exports.getByTestId('export-csv').click();
    const run = exports.getByTestId('export-run').filter({ hasText: 'Change list (CSV)' });
    await expect(run.getByTestId('export-download')).toContainText(/Download .+\.csv$/, {
      timeout: 60_000,
    });
    await exports.scrollIntoViewIfNeeded();
    await this.shot('18b-exports');
    await page.goto(this.overlayUrl);
    await expect(page.getByTestId('overlay-viewer')).toBeVisible();
  }

  /**
   * The drawing log: both issues carry the title blocks' date; the architect records each set's
   * revision and issue date, and the log lists the sets newest first with the current one marked,
   * and each sheet's history with a one-click comparison against its previous revision.
   */
  async drawingLog(): Promise<void> {
    const page = this.page;
    const jobs = page.getByRole('complementary', { name: 'Jobs' });
    if (await jobs.isVisible())
      await page.getByRole('button', { name: 'Jobs', exact: true }).click();
    await page.goto(this.projectUrl);
    const rows = page.getByTestId('drawing-row');
    await expect(rows).toHaveCount(2);
    // As read from the title blocks, both issues print 2019-05-27: the same day, so the upload
    // order decides, and files dropped together become sets in name order (06-01, then 06-02).
    for (const r of await rows.all())
      await expect(r.getByTestId('drawing-issued')).toHaveText('2019-05-27');
    await expect(rows.filter({ hasText: NEWER }).getByTestId('current-set')).toHaveText('Current');
    await expect(rows.filter({ hasText: OLDER }).getByTestId('current-set')).toHaveCount(0);
    for (const [name, rev, date] of [
      [OLDER, 'A', '2019-06-01'],
      [NEWER, 'B', '2019-06-02'],
    ] as const) {
      const row = rows.filter({ hasText: name });
      await row.getByTestId('edit-drawing').click();
      await row.getByTestId('drawing-edit-revision').fill(rev);
      await row.getByTestId('drawing-edit-issued').fill(date);
      await row.getByTestId('save-drawing').click();
      await expect(row.getByTestId('drawing-issued')).toHaveText(date);
      await expect(row.getByTestId('drawing-revision')).toHaveText(rev);
    }
    // Newest issue first, and it is the current set.
    await expect(rows.first()).toContainText(NEWER);
    await expect(rows.first()).toContainText('2019-06-02');
    await expect(rows.first().getByTestId('current-set')).toHaveText('Current');
    await expect(rows.nth(1).getByTestId('current-set')).toHaveCount(0);
    await expect(rows.nth(1)).toContainText('2019-06-01');

    // Sheet history: one row per sheet, a column per set (oldest first, by revision and date).
    const history = page.getByTestId('sheet-history');
    await expect(history.locator('thead')).toContainText('Rev A2019-06-01');
    await expect(history.locator('thead')).toContainText('Rev B2019-06-02');
    await expect(history.getByTestId('history-row')).toHaveCount(5);
    const s101 = history.locator('[data-testid="history-row"][data-sheet="S101"]');
    // What changed since the previous revision, from the comparison already made.
    await expect(s101.getByTestId('history-change')).toHaveText(/^\d+ changes?$/);
    await expect(
      history
        .locator('[data-testid="history-row"][data-sheet="S102"]')
        .getByTestId('history-change'),
    ).toHaveText('no changes');
    await history.scrollIntoViewIfNeeded();
    await this.shot('19-drawing-log');
    // S101 was compared already: one click opens that comparison on the whole sheet.
    await s101.getByTestId('open-previous-comparison').click();
    await expect(page.getByTestId('overlay-viewer')).toBeVisible();
    await expect(page.getByTestId('viewer-sheet-number')).toHaveText('S101');
    await expect(page.getByTestId('overlay-view-name')).toHaveText('Whole sheet');
  }

  /**
   * Deletes, each behind a confirmation saying what goes with it: the comparison (its overlays
   * and changes), a set (its sheets), then the project.
   */
  async deletes(): Promise<void> {
    const page = this.page;
    const dialog = page.getByTestId('confirm-dialog');
    await page.goto(this.projectUrl.replace(/\/?$/, '') + '/compare');
    const items = page.getByTestId('comparison-item');
    await expect(items).toHaveCount(1);
    await items.first().getByTestId('delete-comparison').click();
    await expect(dialog).toContainText('Delete this comparison?');
    await expect(dialog.getByTestId('delete-counts')).toContainText(
      /\d+ overlays? in 1 comparison/,
    );
    await expect(dialog.getByTestId('delete-counts')).toContainText(/\d+ detected changes?/);
    await this.shot('20-delete-comparison');
    // Cancel keeps it; confirming removes it from the list.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(items).toHaveCount(1);
    await items.first().getByTestId('delete-comparison').click();
    await dialog.getByTestId('confirm-delete').click();
    await expect(page.getByText('No comparisons yet')).toBeVisible();

    await page.goto(this.projectUrl);
    const rows = page.getByTestId('drawing-row');
    await rows.filter({ hasText: OLDER }).getByTestId('delete-drawing').click();
    await expect(dialog).toContainText(`Delete the set ${OLDER}?`);
    await expect(dialog.getByTestId('delete-counts')).toContainText('5 sheets and their views');
    await expect(dialog.getByTestId('delete-counts')).toContainText('0 overlays in 0 comparisons');
    await dialog.getByTestId('confirm-delete').click();
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText(NEWER);
    await expect(page.getByTestId('sheet-card')).toHaveCount(5);

    await page.getByTestId('delete-project').click();
    await expect(dialog).toContainText('Delete the project Beam proposal review?');
    await expect(dialog.getByTestId('delete-counts')).toContainText('1 drawing set with 5 sheets');
    await this.shot('21-delete-project');
    await dialog.getByTestId('confirm-delete').click();
    await expect(page.getByRole('heading', { name: 'Projects', level: 1 })).toBeVisible();
    await expect(page.getByText('No projects yet')).toBeVisible();
  }

  /** Side by side, swipe, the colour-blind palette and the jobs panel. */
  async otherModes(): Promise<void> {
    const page = this.page;
    await page.keyboard.press('0');
    await page.getByRole('radio', { name: 'Side by side' }).click();
    await expect(page.getByTestId('canvas-old')).toBeVisible();
    await expect(page.getByTestId('canvas-new')).toBeVisible();
    await this.canvasesLoaded();
    await this.shot('12-side-by-side');

    await page.keyboard.press('5');
    await expect(page.locator('.swipe-handle')).toBeVisible();
    await this.canvasesLoaded();
    await this.shot('13-swipe');

    // Blink alternates old and new on its own; the corner label says which is showing.
    await page.keyboard.press('6');
    const label = page.getByTestId('canvas-main').locator('.canvas-label');
    await expect(label).toHaveText('OLD');
    await expect(label).toHaveText('NEW');
    await this.shot('13b-blink');

    await page.keyboard.press('1');
    await page.getByTestId('palette-toggle').click();
    await expect(page.getByTestId('palette-toggle')).toHaveText(/CB-safe colours/);
    await this.canvasesLoaded();
    await this.shot('14-overlay-colorblind');
    await page.getByTestId('palette-toggle').click();

    await page.getByRole('button', { name: 'Jobs' }).click();
    await expect(page.getByRole('complementary', { name: 'Jobs' })).toBeVisible();
    await expect(page.getByTestId('job-row').first()).toBeVisible();
    // Jobs in words: what each did, no ids.
    await expect(page.getByRole('complementary', { name: 'Jobs' })).not.toContainText(/job_/);
    await this.shot('15-jobs-panel');
  }
}
