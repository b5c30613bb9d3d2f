import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { migrate } from '../store/db';
import { MIGRATIONS, type Migration } from '../store/migrations/index';

// `blueline migrate` (contract §11): applies the numbered migrations the code knows to the
// database and says what it did. The desktop's SQLite store also migrates itself when `serve`
// opens it; this command lets an operator do it first (and see the state). The refusal of a
// database migrated by a newer or different Blueline is the store's own (store/db.ts `migrate`);
// this module only reads the applied list first, to say precisely what it found.
//
//   migrate [--data-dir D | --database URL] [--check]
//
// --database takes `sqlite:PATH` or `file:PATH` (a file URL) for the SQLite store. Exit codes:
// 0 migrated or already current (with --check: current), 1 the database is newer than this
// Blueline, from a different one, or unreadable, 2 usage, 3 (--check only) migrations pending.

export const MIGRATE_USAGE = `  migrate [--data-dir D | --database URL] [--check]
        Apply the numbered schema migrations to the database and report them (the SQLite file
        <data dir>/blueline.db, --database sqlite:PATH, or a team server's --database postgres://…,
        where the job queue's schema is created too; default $BLUELINE_DATABASE_URL). Refuses a
        database written by a newer Blueline. --check changes nothing: exit 0 when current, 3
        when migrations are pending.`;

export class MigrateUsageError extends Error {}

export interface MigrateOptions {
  dataDir?: string;
  database?: string;
  check?: boolean;
  migrations?: readonly Migration[];
  out?: (line: string) => void;
  err?: (line: string) => void;
}

/** The SQLite file a `--database` URL names. */
export function sqliteFileOf(url: string): string {
  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (rest === '' || rest === '//')
      throw new MigrateUsageError(
        `--database '${url}' names no file; use sqlite:/path/to/blueline.db.`,
      );
    return resolve(rest);
  }
  if (url.startsWith('file:')) {
    try {
      return fileURLToPath(url);
    } catch {
      throw new MigrateUsageError(`--database '${url}' is not a valid file: URL.`);
    }
  }
  if (/^postgres(ql)?:\/\//.test(url))
    throw new MigrateUsageError(
      `--database '${url.replace(/\/\/[^@/]*@/, '//…@')}' is a PostgreSQL URL, which the command line migrates itself (main.ts); this function migrates SQLite files only.`,
    );
  throw new MigrateUsageError(
    `--database takes sqlite:PATH, file:PATH or postgres://… but received '${url.replace(/\/\/[^@/]*@/, '//…@')}'.`,
  );
}

interface Applied {
  version: number;
  name: string;
}

function appliedMigrations(db: Database.Database): Applied[] {
  const table = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!table) return [];
  return db
    .prepare('SELECT version, name FROM schema_migrations ORDER BY version')
    .all() as Applied[];
}

/** Runs the command; returns the process exit code. */
export function runMigrate(opts: MigrateOptions): number {
  const out = opts.out ?? ((l: string) => console.log(l));
  const err = opts.err ?? ((l: string) => console.error(l));
  const known = opts.migrations ?? MIGRATIONS;
  if (opts.dataDir !== undefined && opts.database !== undefined)
    throw new MigrateUsageError('Give --data-dir or --database, not both.');
  const file =
    opts.database !== undefined
      ? sqliteFileOf(opts.database)
      : join(resolve(opts.dataDir!), 'blueline.db');
  const latest = known[known.length - 1];
  const existed = existsSync(file);
  if (!existed && opts.check) {
    out(`${file}: no database yet; ${known.length} migrations pending.`);
    return 3;
  }
  if (!existed) mkdirSync(dirname(file), { recursive: true, mode: 0o700 });

  let db: Database.Database;
  try {
    db = new Database(file, { readonly: Boolean(opts.check), fileMustExist: existed });
  } catch (e) {
    err(`blueline migrate: cannot open ${file}: ${(e as Error).message}`);
    return 1;
  }
  try {
    let applied: Applied[];
    try {
      applied = appliedMigrations(db);
    } catch (e) {
      err(`blueline migrate: ${file} is not a readable Blueline database: ${(e as Error).message}`);
      return 1;
    }
    const newest = applied[applied.length - 1];
    if (newest && newest.version > known.length) {
      err(
        `blueline migrate: ${file} is at schema version ${newest.version} ('${newest.name}'), newer than this Blueline, which knows versions up to ${latest ? `${latest.version} ('${latest.name}')` : '0'}. Upgrade Blueline; migrate never downgrades a database.`,
      );
      return 1;
    }
    const mismatch = applied.find((row, i) => row.version !== i + 1 || known[i]?.name !== row.name);
    if (mismatch) {
      err(
        `blueline migrate: ${file} has migration ${mismatch.version} '${mismatch.name}', which this Blueline numbers ${known[mismatch.version - 1] ? `'${known[mismatch.version - 1]!.name}'` : 'differently'}: it was written by a different Blueline. Nothing was changed.`,
      );
      return 1;
    }
    const pending = known.slice(applied.length);
    if (opts.check) {
      if (pending.length === 0) {
        out(`${file}: schema version ${applied.length}, current.`);
        return 0;
      }
      out(
        `${file}: schema version ${applied.length}; ${pending.length} pending: ${pending.map((m) => m.name).join(', ')}.`,
      );
      return 3;
    }
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db, known);
    if (pending.length === 0) out(`${file}: schema version ${applied.length}, already current.`);
    else
      out(
        `${file}: applied ${pending.length} migration${pending.length === 1 ? '' : 's'} (${pending.map((m) => m.name).join(', ')}); schema version ${known.length}.`,
      );
    return 0;
  } finally {
    db.close();
  }
}
