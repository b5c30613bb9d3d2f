import Database from 'better-sqlite3';
import { MIGRATIONS, type Migration } from './migrations/index';

export type Db = Database.Database;

/**
 * Opens (creating if needed) the service's SQLite file with the pragmas every handle needs and
 * applies pending migrations. WAL lets readers run beside the single writer; synchronous=NORMAL in
 * WAL mode loses nothing on a process crash (only on power loss can the last commits roll back).
 */
export function openDatabase(file: string, migrations: readonly Migration[] = MIGRATIONS): Db {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, migrations);
  return db;
}

export class MigrationError extends Error {}

/** Applies migrations in order, each in its own transaction; refuses out-of-order or unknown state. */
export function migrate(db: Db, migrations: readonly Migration[]): void {
  db.exec(
    `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT`,
  );
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new MigrationError(`Migration list is not numbered 1..n at ${m.name}`);
  });
  const applied = db
    .prepare('SELECT version, name FROM schema_migrations ORDER BY version')
    .all() as {
    version: number;
    name: string;
  }[];
  applied.forEach((row, i) => {
    const known = migrations[i];
    if (row.version !== i + 1 || !known || known.name !== row.name) {
      throw new MigrationError(
        `The database was migrated by a different or newer Blueline (migration ${row.version} '${row.name}'); refusing to start.`,
      );
    }
  });
  for (const m of migrations.slice(applied.length)) {
    db.transaction(() => {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        m.version,
        m.name,
        new Date().toISOString(),
      );
    })();
  }
}
