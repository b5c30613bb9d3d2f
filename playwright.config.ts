// Playwright end-to-end tests: the web UI in Debian's Chromium against a real `blueline serve`
// (temp data dir, `--web-root out/web`), started by e2e/global-setup.ts. Browsers are never
// downloaded: Chromium comes from $CHROMIUM_PATH or /usr/bin/chromium.
import { defineConfig } from '@playwright/test';

export default defineConfig({
  testDir: 'e2e',
  testMatch: /.*\.spec\.ts$/,
  globalSetup: './e2e/global-setup.ts',
  // Two shared cores: one worker; the review flow is one serial story anyway.
  workers: 1,
  fullyParallel: false,
  retries: 0,
  // Processing two 5-sheet 34x22 sets and comparing them takes a while on this machine.
  timeout: 6 * 60_000,
  expect: {
    timeout: 15_000,
    toHaveScreenshot: { maxDiffPixelRatio: 0.03, animations: 'disabled', caret: 'hide' },
  },
  // Canvas baselines live beside the specs, one per name, shared by every platform.
  snapshotPathTemplate: '{testDir}/baselines/{arg}{ext}',
  updateSnapshots: 'missing',
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    browserName: 'chromium',
    ignoreHTTPSErrors: true, // the service's self-signed local certificate
    viewport: { width: 1440, height: 900 },
    deviceScaleFactor: 1,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    },
  },
});
