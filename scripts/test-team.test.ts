import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script (run by `npm test`) without type declarations
import { laneFiles } from './test-team.mjs';

// The team lane of `npm test` (scripts/test-team.mjs): which files it runs, and what it does
// without PostgreSQL — skip with a clear message locally, fail under CI=true.

const SCRIPT = resolve(import.meta.dirname, 'test-team.mjs');

function run(env: Record<string, string | undefined>) {
  const clean = { ...process.env };
  delete clean.CI;
  return spawnSync(process.execPath, [SCRIPT], {
    encoding: 'utf8',
    env: { ...clean, BLUELINE_PG_LIB: '/nonexistent/postgresql', ...env },
  });
}

describe('npm run test:team', () => {
  it('runs the files that follow the test store and storage variables, and only those', () => {
    const files = laneFiles() as string[];
    for (const f of [
      'core/test/search.test.ts',
      'core/test/search-parity.test.ts',
      'core/test/store.test.ts',
      'core/test/files.test.ts',
      'core/test/credits.test.ts',
      'core/test/webhooks.test.ts',
      // Their PostgreSQL cases run only here on CI (the plain vitest run has no database).
      'core/test/project-archive.test.ts',
      'core/test/orphan-sweep.test.ts',
      // Team-mode failure tests that need PostgreSQL.
      'core/test/team-s3-outage.test.ts',
      'core/test/team-pg-restart.test.ts',
    ])
      expect(files).toContain(f);
    // SQLite-only children, pixel work and plain units are not run twice.
    for (const f of [
      'core/test/cli.test.ts',
      'core/test/server-bundle.test.ts',
      'core/test/backup.test.ts',
      'core/test/reconcile.test.ts',
      'core/vision/compare/align-colour.test.ts',
      'core/domain/ids.test.ts',
      'core/blobs/object-store.conformance.test.ts',
    ])
      expect(files).not.toContain(f);
    expect(files).toEqual([...files].sort());
  });

  it('without PostgreSQL: says that it skipped, and succeeds', () => {
    const r = run({});
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('SKIPPED: the PostgreSQL + S3 lane did not run');
  });

  it('without PostgreSQL under CI=true: refuses to skip, and fails', () => {
    const r = run({ CI: 'true' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('may not be skipped in CI');
  });
});
