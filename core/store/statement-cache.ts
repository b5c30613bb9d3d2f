import type { Db } from './db';
import type { Statement } from 'better-sqlite3';

// Prepared statements are reused: SQL built from code-defined fragments (never request text) is
// compiled once per database handle.
const caches = new WeakMap<Db, Map<string, Statement>>();
const rawCaches = new WeakMap<Db, Map<string, Statement>>();

function cached(
  store: WeakMap<Db, Map<string, Statement>>,
  db: Db,
  sql: string,
  make: () => Statement,
): Statement {
  let cache = store.get(db);
  if (!cache) {
    cache = new Map();
    store.set(db, cache);
  }
  let stmt = cache.get(sql);
  if (!stmt) {
    stmt = make();
    cache.set(sql, stmt);
  }
  return stmt;
}

export function prepared(db: Db, sql: string): Statement {
  return cached(caches, db, sql, () => db.prepare(sql));
}

/**
 * The same SQL as a statement in raw mode (rows as arrays). Kept apart from `prepared` because raw
 * mode is a property of the statement: sharing one would change what other callers get back.
 */
export function preparedRaw(db: Db, sql: string): Statement {
  return cached(rawCaches, db, sql, () => db.prepare(sql).raw(true));
}

const names = new WeakMap<Statement, string[]>();

/**
 * Runs a raw-mode statement and builds the row objects in JS. better-sqlite3 builds each row
 * object through the V8 API property by property; reading arrays and assigning in a JS loop is
 * about 40 % cheaper per row (measured: 101 overlay rows 1.17 ms → 0.66 ms), which matters on list
 * pages that read a few hundred rows per request.
 */
export function allRows<Row>(stmt: Statement, ...params: unknown[]): Row[] {
  let cols = names.get(stmt);
  if (!cols) {
    cols = stmt.columns().map((c) => c.name);
    names.set(stmt, cols);
  }
  const arrays = stmt.all(...params) as unknown[][];
  const out = new Array<Row>(arrays.length);
  const n = cols.length;
  for (let r = 0; r < arrays.length; r++) {
    const a = arrays[r]!;
    const o: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) o[cols[i]!] = a[i];
    out[r] = o as Row;
  }
  return out;
}
