import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../store/migrations/index';
import { MigrateUsageError, runMigrate, sqliteFileOf } from './migrate';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'blueline-migrate-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

function versions(file: string): number[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as {
        version: number;
      }[]
    ).map((r) => r.version);
  } finally {
    db.close();
  }
}

describe('blueline migrate', () => {
  it('creates and migrates a new database, then finds it current', () => {
    const dataDir = path.join(tempDir(), 'new');
    const c = capture();
    expect(runMigrate({ dataDir, ...c.io })).toBe(0);
    const file = path.join(dataDir, 'blueline.db');
    expect(c.out[0]).toBe(
      `${file}: applied ${MIGRATIONS.length} migrations (${MIGRATIONS.map((m) => m.name).join(', ')}); schema version ${MIGRATIONS.length}.`,
    );
    expect(versions(file)).toEqual(MIGRATIONS.map((m) => m.version));
    const again = capture();
    expect(runMigrate({ dataDir, ...again.io })).toBe(0);
    expect(again.out).toEqual([`${file}: schema version ${MIGRATIONS.length}, already current.`]);
  });

  it('applies only the pending migrations of an older database; --check reports and changes nothing', () => {
    const file = path.join(tempDir(), 'old.db');
    expect(
      runMigrate({
        database: `sqlite:${file}`,
        migrations: MIGRATIONS.slice(0, 9),
        ...capture().io,
      }),
    ).toBe(0);
    expect(versions(file)).toHaveLength(9);
    const check = capture();
    expect(runMigrate({ database: `sqlite:${file}`, check: true, ...check.io })).toBe(3);
    expect(check.out[0]).toBe(
      `${file}: schema version 9; ${MIGRATIONS.length - 9} pending: ${MIGRATIONS.slice(9)
        .map((m) => m.name)
        .join(', ')}.`,
    );
    expect(versions(file)).toHaveLength(9);
    const c = capture();
    expect(runMigrate({ database: `sqlite:${file}`, ...c.io })).toBe(0);
    expect(c.out[0]).toContain(`applied ${MIGRATIONS.length - 9} migrations (`);
    expect(versions(file)).toHaveLength(MIGRATIONS.length);
    expect(runMigrate({ database: `sqlite:${file}`, check: true, ...capture().io })).toBe(0);
  });

  it('refuses a database newer than the code, naming both versions, and changes nothing', () => {
    const file = path.join(tempDir(), 'newer.db');
    expect(runMigrate({ database: `sqlite:${file}`, ...capture().io })).toBe(0);
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      MIGRATIONS.length + 1,
      'from-the-future',
      new Date().toISOString(),
    );
    db.close();
    const c = capture();
    expect(runMigrate({ database: `sqlite:${file}`, ...c.io })).toBe(1);
    const last = MIGRATIONS[MIGRATIONS.length - 1]!;
    expect(c.err).toEqual([
      `blueline migrate: ${file} is at schema version ${MIGRATIONS.length + 1} ('from-the-future'), newer than this Blueline, which knows versions up to ${last.version} ('${last.name}'). Upgrade Blueline; migrate never downgrades a database.`,
    ]);
    expect(versions(file)).toHaveLength(MIGRATIONS.length + 1);
  });

  it('refuses a database from a different Blueline (same number, other name)', () => {
    const file = path.join(tempDir(), 'other.db');
    const renamed = MIGRATIONS.map((m) => (m.version === 3 ? { ...m, name: 'something-else' } : m));
    expect(runMigrate({ database: `sqlite:${file}`, migrations: renamed, ...capture().io })).toBe(
      0,
    );
    const c = capture();
    expect(runMigrate({ database: `sqlite:${file}`, ...c.io })).toBe(1);
    expect(c.err[0]).toBe(
      `blueline migrate: ${file} has migration 3 'something-else', which this Blueline numbers '${MIGRATIONS[2]!.name}': it was written by a different Blueline. Nothing was changed.`,
    );
  });

  it('names what --database accepts', () => {
    expect(sqliteFileOf('sqlite:/tmp/x.db')).toBe('/tmp/x.db');
    expect(sqliteFileOf('sqlite:///tmp/x.db')).toBe('/tmp/x.db');
    expect(sqliteFileOf('file:///tmp/y.db')).toBe('/tmp/y.db');
    expect(() => sqliteFileOf('postgres://user:secret@db/blueline')).toThrow(
      "--database 'postgres://…@db/blueline' is a PostgreSQL URL, which the command line migrates itself (main.ts); this function migrates SQLite files only.",
    );
    expect(() => sqliteFileOf('mysql://db')).toThrow(MigrateUsageError);
    expect(() => runMigrate({ dataDir: '/tmp', database: 'sqlite:/tmp/x.db' })).toThrow(
      'Give --data-dir or --database, not both.',
    );
  });

  it('exits 1 from the command line on a newer database, 2 on bad usage', () => {
    const dir = tempDir();
    const file = path.join(dir, 'blueline.db');
    expect(runMigrate({ dataDir: dir, ...capture().io })).toBe(0);
    const db = new Database(file);
    db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
      99,
      'future',
      new Date().toISOString(),
    );
    db.close();
    const run = (args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'core/cli/main.ts', 'migrate', ...args], {
        encoding: 'utf8',
        env: { ...process.env, BLUELINE_DATABASE_URL: '' },
      });
    const newer = run(['--data-dir', dir]);
    expect(newer.status).toBe(1);
    expect(newer.stderr).toContain('is at schema version 99');
    const bad = run(['--database', 'mysql://db/x']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--database takes sqlite:PATH, file:PATH or postgres://…');
  });
});
