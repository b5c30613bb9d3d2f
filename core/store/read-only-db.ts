import Database from 'better-sqlite3';
import type { Db } from './db';

/**
 * A second, read-only handle on the service's database, for a thread that only reads (the list
 * reader, core/http/list-reader.ts). The writer's handle (openDatabase) has already created the
 * file, run the migrations and put it in WAL mode; in WAL mode a reader sees every transaction
 * committed before its read starts and never blocks the writer, nor the writer it.
 * `query_only` makes any write through this handle an error, whatever SQL reaches it.
 */
export function openReadOnlyDatabase(file: string): Db {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('query_only = ON');
  const mode = db.pragma('journal_mode', { simple: true });
  if (mode !== 'wal') {
    db.close();
    throw new Error(
      `Expected the database in WAL mode for a concurrent reader but it is in ${String(mode)} mode.`,
    );
  }
  return db;
}
