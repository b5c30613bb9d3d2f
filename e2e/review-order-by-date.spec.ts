// Compare the way people think (issue 18 part 2): the newer set is decided by issue date, not by
// upload order. The ASK-003 re-issue (2015-01-16) is uploaded first and the first issue
// (2015-01-15) second; the compare form must still propose 01-15 → 01-16, say so in words, and a
// swap must warn that additions would show as removals. Set-up through the API; what is checked is
// what the user sees. The file's name sorts after review-flow.spec.ts on purpose: specs run in name
// order on one service, and that spec starts from an empty project list.
import { expect, test } from '@playwright/test';
import { api, key, origin, reviewSizeShots, uploadDrawing, waitForJob } from './api.helpers';

const FIRST = '20150115_ASK-003_exterior-west-wall-window-locations.pdf';
const REISSUE = '20150116_ASK-003_exterior-west-wall-window-locations.pdf';

test('the compare form proposes older → newer by issue date, whatever the upload order', async ({
  page,
  request,
}) => {
  test.setTimeout(6 * 60_000);
  const project = await api<{ id: string }>(request, 'POST', '/projects', {
    name: 'ASK-003 direction',
  });
  // The re-issue first: upload order says the opposite of the dates.
  const reissue = await uploadDrawing(request, project.id, REISSUE, 'ASK-003 re-issue');
  expect((await waitForJob(request, reissue.job_id)).status).toBe('Completed');
  const first = await uploadDrawing(request, project.id, FIRST, 'ASK-003 first issue');
  expect((await waitForJob(request, first.job_id)).status).toBe('Completed');

  await page.goto(`${origin()}/#key=${key()}`);
  // The drawing log: issue dates as processing read them (nobody typed them), newest first,
  // the re-issue marked current although it was uploaded first.
  await page.goto(`${origin()}/#/projects/${project.id}`);
  const rows = page.getByTestId('drawing-row');
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toContainText('ASK-003 re-issue');
  await expect(rows.first().getByTestId('drawing-issued')).toHaveText('2015-01-16');
  await expect(rows.first().getByTestId('current-set')).toHaveText('Current');
  await expect(rows.nth(1)).toContainText('ASK-003 first issue');
  await expect(rows.nth(1).getByTestId('drawing-issued')).toHaveText('2015-01-15');
  await expect(rows.nth(1).getByTestId('current-set')).toHaveCount(0);

  await page.goto(`${origin()}/#/projects/${project.id}/compare`);
  const direction = page.getByTestId('compare-direction');
  await expect(direction).toContainText(
    'ASK-003 first issue → ASK-003 re-issue, issued 2015-01-15 → 2015-01-16',
  );
  await expect(page.getByTestId('compare-newer')).toHaveValue(reissue.id);
  await expect(page.getByTestId('compare-older')).toHaveValue(first.id);
  await expect(page.getByTestId('compare-reversed')).toHaveCount(0);

  // Swapped on purpose: the direction follows, and the form warns.
  await page.getByRole('button', { name: /Swap/ }).click();
  await expect(direction).toContainText(
    'ASK-003 re-issue → ASK-003 first issue, issued 2015-01-16 → 2015-01-15',
  );
  await expect(page.getByTestId('compare-reversed')).toContainText(
    'additions would show as removals',
  );
  await reviewSizeShots(page, '07b-compare-swapped');
  // And back: the warning goes.
  await page.getByRole('button', { name: /Swap/ }).click();
  await expect(page.getByTestId('compare-reversed')).toHaveCount(0);
  await expect(page.getByTestId('compare-newer')).toHaveValue(reissue.id);
});
