// A change that reaches beyond the overlay's image, seen by the user. Change regions are found on
// the whole sheet and reported whole by one overlay; on the ASK-003 pair (one 11x17 sketch,
// re-issued the next day) the main view's box ends before the new window tags at the right edge,
// so their change continues past the overlay image. The list says so and the outline stops at the
// image's edge instead of framing blank canvas. Set-up goes through the API (the browser flow of
// upload and compare is review-flow.spec.ts); what is checked is what the user sees.
import { expect, test } from '@playwright/test';
import { api, key, origin, uploadDrawing, waitForJob } from './api.helpers';

const OLD = '20150115_ASK-003_exterior-west-wall-window-locations.pdf';
const NEW = '20150116_ASK-003_exterior-west-wall-window-locations.pdf';

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
