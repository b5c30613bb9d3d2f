// Set-up through the HTTP API for specs that test one screen without walking the whole upload
// flow in the browser (review-flow.spec.ts does that): the service's origin and key from the global
// setup, a checked request, a job waited for, a fixture PDF uploaded as a drawing.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, type APIRequestContext, type Page } from '@playwright/test';

export const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/drawings');

export const origin = () => {
  const o = process.env.BLUELINE_ORIGIN;
  if (!o) throw new Error('BLUELINE_ORIGIN not set: global setup did not start the service');
  return o;
};
export const key = () => process.env.BLUELINE_API_KEY ?? '';

/** A request to `/v1<url>` (or an absolute signed URL) that must succeed; its JSON body. */
export async function api<T>(
  request: APIRequestContext,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body?: unknown,
): Promise<T> {
  const res = await request.fetch(url.startsWith('http') ? url : `${origin()}/v1${url}`, {
    method,
    headers: { authorization: `Bearer ${key()}` },
    ...(body !== undefined ? { data: body } : {}),
  });
  expect(res.status(), `${method} ${url}: ${await res.text()}`).toBeLessThan(300);
  return (res.status() === 204 ? undefined : await res.json()) as T;
}

/** The job once it is Completed, Failed or Canceled (at most 5 minutes). */
export async function waitForJob(
  request: APIRequestContext,
  id: string,
): Promise<{ status: string }> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const job = await api<{ status: string }>(request, 'GET', `/jobs/${id}`);
    if (['Completed', 'Failed', 'Canceled'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** A fixture PDF uploaded through a signed upload URL and made a drawing (processing queued). */
export async function uploadDrawing(
  request: APIRequestContext,
  projectId: string,
  file: string,
  name: string,
): Promise<{ id: string; job_id: string }> {
  const bytes = readFileSync(path.join(FIXTURES, file));
  const created = await api<{ id: string; upload_url: string }>(request, 'POST', '/files', {
    project_id: projectId,
    filename: file,
    content_type: 'application/pdf',
    size_bytes: bytes.length,
  });
  const put = await request.fetch(created.upload_url, {
    method: 'PUT',
    headers: { 'content-type': 'application/pdf' },
    data: bytes,
  });
  expect(put.status()).toBe(200);
  return api(request, 'POST', '/drawings', { project_id: projectId, name, file_id: created.id });
}

/**
 * With BLUELINE_SHOTS_DIR set, the page at the two review sizes (1600x1000, 1280x800), for
 * looking at every screen; the viewport is put back afterwards.
 */
export async function reviewSizeShots(page: Page, name: string): Promise<void> {
  const dir = process.env.BLUELINE_SHOTS_DIR;
  if (!dir) return;
  const before = page.viewportSize();
  for (const [width, height] of [
    [1600, 1000],
    [1280, 800],
  ] as const) {
    await page.setViewportSize({ width, height });
    await page.waitForTimeout(400); // relayout
    await page.screenshot({ path: path.join(dir, `${name}-${width}x${height}.png`) });
  }
  if (before) await page.setViewportSize(before);
}
