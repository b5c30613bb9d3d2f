// The same review flow in the desktop app, through Playwright's `_electron`. It needs Electron's
// binary (downloaded by `npm install` on a laptop; absent where downloads are blocked) and the
// desktop build (`npx electron-vite build`, which `npm run test:e2e` runs when the binary exists).
// Without the binary the whole file is skipped with the reason printed.
//
// The app starts its own service with data in the OS's per-user folder; XDG_CONFIG_HOME points
// that at a temp dir so every run starts empty (Linux; elsewhere the test uses the real folder
// only if BLUELINE_E2E_ELECTRON_DIRTY=1 says that is acceptable).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  _electron as electron,
  expect,
  test,
  type ElectronApplication,
  type Page,
} from '@playwright/test';
import { ReviewFlow } from './review-flow.steps';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function electronBinary(): string | null {
  const pathTxt = path.join(repoRoot, 'node_modules/electron/path.txt');
  if (!existsSync(pathTxt)) return null;
  const bin = path.join(
    repoRoot,
    'node_modules/electron/dist',
    readFileSync(pathTxt, 'utf8').trim(),
  );
  return existsSync(bin) ? bin : null;
}

const binary = electronBinary();
const built = existsSync(path.join(repoRoot, 'out/main/index.js'));
const skipReason = !binary
  ? "Electron's binary is not installed here (node_modules/electron/path.txt missing): run `npm install` where github.com is reachable, then `npm run test:e2e`."
  : !built
    ? 'The desktop app is not built: run `npx electron-vite build` (npm run test:e2e does this when the binary exists).'
    : process.platform !== 'linux' && !process.env.BLUELINE_E2E_ELECTRON_DIRTY
      ? 'Only Linux can give the app a throw-away data folder (XDG_CONFIG_HOME); set BLUELINE_E2E_ELECTRON_DIRTY=1 to run against the real one.'
      : null;
if (skipReason) console.log(`[e2e] electron-flow skipped: ${skipReason}`);

test.describe.serial('review a revised beam proposal (Electron)', () => {
  test.skip(!!skipReason, skipReason ?? '');
  let app: ElectronApplication;
  let page: Page;
  let flow: ReviewFlow;
  let configHome = '';

  test.beforeAll(async () => {
    configHome = mkdtempSync(path.join(os.tmpdir(), 'blueline-electron-e2e-'));
    app = await electron.launch({
      executablePath: binary as string,
      // Root (CI containers) cannot use Chromium's sandbox.
      args: [...(process.getuid?.() === 0 ? ['--no-sandbox'] : []), repoRoot],
      cwd: repoRoot,
      env: { ...process.env, XDG_CONFIG_HOME: configHome } as Record<string, string>,
    });
    page = await app.firstWindow();
    page.on('pageerror', (err) => console.log(`[page error] ${err.message}`));
    flow = new ReviewFlow(page, { shotPrefix: 'electron-', baseline: false });
  });
  test.afterAll(async () => {
    await app?.close();
    if (configHome) rmSync(configHome, { recursive: true, force: true });
  });

  test('opens on an empty project list with the bridge signed in', async () => {
    await expect(page.getByRole('heading', { name: 'Projects', level: 1 })).toBeVisible({
      timeout: 60_000,
    });
    expect(await page.evaluate(() => typeof window.blueline?.apiKey)).toBe('string');
    await expect(page.getByText('No projects yet')).toBeVisible();
    await flow.createProject();
  });
  test('uploads both issues', () => flow.uploadBoth());
  test('shows processing finish', () => flow.waitForProcessing());
  test('compares the issues', () => flow.compare());
  test("reviews S101's changes", () => flow.reviewS101());
  test('keeps the review after a reload', () => flow.reloadKeepsReview());
  test('walks every change of the set, sheet by sheet, and finishes a sheet', () =>
    flow.walkTheSet());
  test('offers the other viewer modes', () => flow.otherModes());
  test('keeps a drawing log by issue date and revision, with sheet history', () =>
    flow.drawingLog());
  test('deletes a comparison, a set and the project after saying what goes', () => flow.deletes());
});
