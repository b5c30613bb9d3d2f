import type { Db } from './db';
import type { Statement } from 'better-sqlite3';

// Prepared statements are reused: SQL built from code-defined fragments (never request text) is
// compiled once per database handle.
const caches = new WeakMap<Db, Map<string, Statement>>();

export function prepared(db: Db, sql: string): Statement {
  let cache = caches.get(db);
  if (!cache) {
    cache = new Map();
    caches.set(db, cache);
  }
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = db.prepare(sql);
    cache.set(sql, stmt);
  }
  return stmt;
}
