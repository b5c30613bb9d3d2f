// A change that reaches beyond the overlay's image, seen by the user. Change regions are found on
// the whole sheet and reported whole by one overlay; on the ASK-003 pair (one 11x17 sketch,
// re-issued the next day) the main view's box ends before the new window tags at the right edge,
// so their change continues past the overlay image. The list says so and the outline stops at the
// image's edge instead of framing blank canvas. Set-up goes through the API (the browser flow of
// upload and compare is review-flow.spec.ts); what is checked is what the user sees.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type APIRequestContext } from '@playwright/test';

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/drawings');
const OLD = '20150115_ASK-003_exterior-west-wall-window-locations.pdf';
const NEW = '20150116_ASK-003_exterior-west-wall-window-locations.pdf';

const origin = () => {
  const o = process.env.BLUELINE_ORIGIN;
  if (!o) throw new Error('BLUELINE_ORIGIN not set: global setup did not start the service');
  return o;
};
const key = () => process.env.BLUELINE_API_KEY ?? '';

async function api<T>(
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

async function waitForJob(request: APIRequestContext, id: string): Promise<{ status: string }> {
  const deadline = Date.now() + 5 * 60_000;
  for (;;) {
    const job = await api<{ status: string }>(request, 'GET', `/jobs/${id}`);
    if (['Completed', 'Failed', 'Canceled'].includes(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function uploadDrawing(
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

interface Overlay {
  id: string;
  width: number;
  height: number;
}
interface Change {
  bbox: { x: number; y: number; width: number; height: number };
}

test('a change continuing past the overlay image is listed as such and outlined up to its edge', async ({
  page,
  request,
}) => {
  const project = await api<{ id: string }>(request, 'POST', '/projects', { name: 'Aalseth Lane' });
  const older = await uploadDrawing(request, project.id, OLD, 'ASK-003 2015-01-15');
  const newer = await uploadDrawing(request, project.id, NEW, 'ASK-003 2015-01-16');
  expect((await waitForJob(request, older.job_id)).status).toBe('Completed');
  expect((await waitForJob(request, newer.job_id)).status).toBe('Completed');
  const started = await api<{ job_id: string }>(request, 'POST', `/drawings/${newer.id}/compare`, {
    compare_to: older.id,
    analyze: true,
  });
  expect((await waitForJob(request, started.job_id)).status).toBe('Completed');

  // The overlay holding a change that reaches past its image (the service's data, not the UI's).
  const overlays = await api<{ data: Overlay[] }>(
    request,
    'GET',
    `/overlays?job_id=${started.job_id}&limit=100`,
  );
  let target: { overlay: Overlay; beyond: number; total: number } | null = null;
  for (const o of overlays.data) {
    const changes = await api<{ data: Change[] }>(
      request,
      'GET',
      `/changes?overlay_id=${o.id}&limit=100`,
    );
    const beyond = changes.data.filter(
      ({ bbox: b }) => b.x < 0 || b.y < 0 || b.x + b.width > o.width || b.y + b.height > o.height,
    ).length;
    if (
      beyond > 0 &&
      (!target || o.width * o.height > target.overlay.width * target.overlay.height)
    )
      target = { overlay: o, beyond, total: changes.data.length };
  }
  expect(target, 'ASK-003 has a change straddling the main view box').not.toBeNull();
  const { overlay, beyond, total } = target!;

  await page.goto(`${origin()}/#key=${key()}`);
  await page.goto(
    `${origin()}/#/projects/${project.id}/overlays/${overlay.id}?job=${started.job_id}`,
  );
  await expect(page.getByTestId('change-count')).toHaveText(String(total));
  const notes = page.getByTestId('change-outside');
  await expect(notes).toHaveCount(beyond);
  await expect(notes.first()).toHaveText(/continues beyond this view|beside this view \(/);
  // Selecting it zooms to the part on the image; the viewer stays usable.
  await notes.first().click();
  await expect(page.locator('.change-item.selected')).toContainText(/beyond|beside/);
  await page.screenshot({ path: 'e2e/screenshots/changes-beyond-view.png' });

  // Leave the service as found (the other specs start from "No projects yet").
  await api(request, 'DELETE', `/projects/${project.id}`);
});
