// Exports from the comparison page, as a reviewer does them: start a review report and a change
// list, watch each run's progress and status, download the files, and open them with tools that did
// not write them (pdfinfo/pdftotext for the PDF, csv-parse for the CSV). Set-up goes through the
// API (the browser flow of upload and compare is review-flow.spec.ts); the project is deleted at
// the end, so review-flow.spec.ts (after this file) still starts from "No projects yet".
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { parse as parseCsv } from 'csv-parse/sync';
import { api, key, origin, uploadDrawing, waitForJob } from './api.helpers';

const OLD = '20190601_beam-proposal_5-sheets.pdf';
const NEW = '20190602_beam-proposal_5-sheets.pdf';

interface Overlay {
  id: string;
  change_count: number;
  block_a: { type: string; sheet_id: string };
}

/** Clicks an export button, follows its run to the end and returns the downloaded file's path. */
async function exportFrom(page: Page, format: 'pdf_report' | 'csv', dir: string) {
  const runs = page.locator(`[data-testid="export-run"][data-format="${format}"]`);
  const before = await runs.count();
  await page.getByTestId(`export-${format}`).click();
  await expect(runs).toHaveCount(before + 1);
  const run = runs.first();
  // The run's status and its progress as the job reports it, to the last step.
  await expect(run.locator('.badge')).toBeVisible();
  const progress = run.getByTestId('export-progress');
  await expect(progress).toHaveText(/^(\d+) of \1 steps$/, { timeout: 120_000 });
  await expect(run).toContainText('Completed');
  const link = run.getByTestId('export-download');
  await expect(link).toBeVisible();
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  const file = path.join(dir, download.suggestedFilename());
  await download.saveAs(file);
  return { file, name: download.suggestedFilename(), progress: await progress.textContent() };
}

test('exports a comparison from its page: progress, download, and files that open', async ({
  page,
  request,
}) => {
  const project = await api<{ id: string }>(request, 'POST', '/projects', {
    name: 'Beam proposal exports',
  });
  const older = await uploadDrawing(request, project.id, OLD, 'Beam 06-01');
  const newer = await uploadDrawing(request, project.id, NEW, 'Beam 06-02');
  expect((await waitForJob(request, older.job_id)).status).toBe('Completed');
  expect((await waitForJob(request, newer.job_id)).status).toBe('Completed');
  const cmp = await api<{ job_id: string }>(request, 'POST', `/drawings/${newer.id}/compare`, {
    compare_to: older.id,
    analyze: true,
  });
  expect((await waitForJob(request, cmp.job_id)).status).toBe('Completed');

  // What the files must hold, from the API: the changes of the whole-sheet overlays.
  const overlays = await api<{ data: Overlay[] }>(
    request,
    'GET',
    `/overlays?job_id=${cmp.job_id}&limit=100&expand=block_a`,
  );
  const whole = overlays.data.filter((o) => o.block_a.type === 'Sheet');
  expect(whole).toHaveLength(5);
  const changeCount = whole.reduce((t, o) => t + o.change_count, 0);
  expect(changeCount).toBeGreaterThan(0);

  await page.goto(`${origin()}/#key=${key()}`);
  await page.goto(`${origin()}/#/projects/${project.id}/comparisons/${cmp.job_id}`);
  const card = page.getByTestId('exports');
  await expect(card).toBeVisible();
  await card.scrollIntoViewIfNeeded();
  const dir = mkdtempSync(path.join(tmpdir(), 'blueline-e2e-exports-'));

  // The review report: a PDF with a cover, the summary and S101's page (its one change).
  const report = await exportFrom(page, 'pdf_report', dir);
  expect(report.name).toMatch(/_report\.pdf$/);
  // Progress counts the 5 sheet pairs and the document.
  expect(report.progress).toBe('6 of 6 steps');
  const info = execFileSync('pdfinfo', [report.file], { encoding: 'utf8' });
  expect(Number(/Pages:\s+(\d+)/.exec(info)![1])).toBe(3);
  const text = execFileSync('pdftotext', [report.file, '-'], { encoding: 'utf8' });
  for (const s of ['S101', 'S102', 'S103', 'S150', 'S300', 'Revision comparison report'])
    expect(text).toContain(s);
  await page.screenshot({ path: 'e2e/screenshots/exports-report-done.png' });

  // The change list: one row per change, parsed by a real CSV parser.
  const csv = await exportFrom(page, 'csv', dir);
  expect(csv.name).toMatch(/_changes\.csv$/);
  const rows: Record<string, string>[] = parseCsv(readFileSync(csv.file), {
    bom: true,
    columns: true,
  });
  expect(rows).toHaveLength(changeCount);
  expect(
    rows.every((r) => r.link!.startsWith(`${origin()}/#/projects/${project.id}/overlays/`)),
  ).toBe(true);
  expect(rows.map((r) => r.sheet_number)).toContain('S101');
  // Both runs stay listed, newest first.
  await expect(page.getByTestId('export-run')).toHaveCount(2);
  await page.screenshot({ path: 'e2e/screenshots/exports-both-done.png' });

  // Leave the service as found (the other specs start from "No projects yet").
  await api(request, 'DELETE', `/projects/${project.id}`);
});
