import type { Db } from './db';

/**
 * Keyset paging over any organization-scoped table ordered by (created_at DESC, id DESC).
 * A page "after" a key holds the rows strictly older than it; a page "before" a key holds the
 * rows strictly newer, fetched ascending and then reversed. Rows inserted while a client pages are
 * newer than every key it holds, so they never shift, duplicate or drop rows on its later pages.
 */
export interface Condition {
  /** SQL fragment with `?` placeholders; written in code, never from request text. */
  sql: string;
  params: unknown[];
}

export interface PageKey {
  created_at: string;
  id: string;
}

export interface PageQuery {
  table: string;
  organizationId: string;
  conditions: Condition[];
  limit: number;
  /** 'after' = older than key (forward), 'before' = newer than key (backward). */
  direction: 'after' | 'before';
  key: PageKey | null;
  /** Columns to read (default all); must include created_at and id. Code-defined, never request text. */
  columns?: readonly string[];
}

export interface PageResult<Row> {
  rows: Row[];
  /** Whether more rows exist beyond the page in the direction of travel. */
  more: boolean;
}

function whereClause(
  q: Pick<PageQuery, 'conditions'>,
  keyOp: '<' | '>' | null,
): { sql: string; params: unknown[] } {
  const parts = ['organization_id = ?'];
  const params: unknown[] = [];
  for (const c of q.conditions) {
    parts.push(`(${c.sql})`);
    params.push(...c.params);
  }
  if (keyOp) parts.push(`(created_at, id) ${keyOp} (?, ?)`);
  return { sql: parts.join(' AND '), params };
}

export async function fetchPage<Row>(db: Db, q: PageQuery): Promise<PageResult<Row>> {
  const forward = q.direction === 'after';
  const keyOp = q.key ? (forward ? '<' : '>') : null;
  const w = whereClause(q, keyOp);
  const order = forward ? 'DESC' : 'ASC';
  const sql = `SELECT ${selectList(q.columns)} FROM ${q.table} WHERE ${w.sql} ORDER BY created_at ${order}, id ${order} LIMIT ?`;
  const params = [q.organizationId, ...w.params];
  if (q.key) params.push(q.key.created_at, q.key.id);
  params.push(q.limit + 1);
  const rows = (await db.prepare(sql).all(...params)) as Row[];
  const more = rows.length > q.limit;
  if (more) rows.length = q.limit;
  if (!forward) rows.reverse();
  return { rows, more };
}

/** Whether any matching row lies strictly beyond `key` in the given direction. */
export async function existsBeyond(
  db: Db,
  q: Pick<PageQuery, 'table' | 'organizationId' | 'conditions'>,
  key: PageKey,
  direction: 'after' | 'before',
): Promise<boolean> {
  const w = whereClause(q, direction === 'after' ? '<' : '>');
  const sql = `SELECT 1 FROM ${q.table} WHERE ${w.sql} LIMIT 1`;
  return (
    (await db.prepare(sql).get(q.organizationId, ...w.params, key.created_at, key.id)) !== undefined
  );
}

/**
 * The `next`/`prev` cursors of a fetched page: `encode(row, 'a')` is a cursor to the rows older than
 * `row`, `encode(row, 'b')` to the newer ones. Forward, `next` follows when the page found more and
 * `prev` when a key was given and something newer lies before the page (or before the key, for an
 * empty page); backward, the mirror image. One rule for every list, so their cursors agree.
 */
export async function pageLinks(
  db: Db,
  q: Pick<PageQuery, 'table' | 'organizationId' | 'conditions' | 'direction' | 'key'>,
  page: PageResult<PageKey>,
  encode: (row: PageKey, d: 'a' | 'b') => string,
): Promise<{ next: string | null; prev: string | null }> {
  const first = page.rows[0];
  const last = page.rows[page.rows.length - 1];
  let next: string | null = null;
  let prev: string | null = null;
  if (q.direction === 'after') {
    if (page.more && last) next = encode(last, 'a');
    if (q.key) {
      const anchor = first ?? q.key;
      if (await existsBeyond(db, q, anchor, 'before')) prev = encode(anchor, 'b');
    }
  } else {
    if (page.more && first) prev = encode(first, 'b');
    const anchor = last ?? q.key!;
    if (await existsBeyond(db, q, anchor, 'after')) next = encode(anchor, 'a');
  }
  return { next, prev };
}

/**
 * No stored id holds U+0000 (ids are generated), and PostgreSQL's text cannot even hold one: it
 * refuses the query. Such an id is simply not found, on both engines.
 */
const impossibleId = (id: string) => id.includes('\u0000');

export async function getRow<Row>(
  db: Db,
  table: string,
  organizationId: string,
  id: string,
): Promise<Row | undefined> {
  if (impossibleId(id)) return undefined;
  return (await db
    .prepare(`SELECT * FROM ${table} WHERE id = ? AND organization_id = ?`)
    .get(id, organizationId)) as Row | undefined;
}

function selectList(columns: readonly string[] | undefined): string {
  return columns ? columns.join(', ') : '*';
}

/**
 * Loads many rows by id in one query (the expansion engine's batch loader). The ids travel as one
 * JSON array, so any number of them shares one prepared statement. `+organization_id` keeps the
 * organization test out of index selection: without it SQLite walks the whole
 * `<table>_org_created` index of the organization (every block it has) and filters by id; with it
 * each id is a primary-key seek (EXPLAIN QUERY PLAN: `SEARCH … USING INDEX sqlite_autoindex_…
 * (id=?)`), so the cost follows the page, not the size of the organization.
 */
export async function getRows<Row extends { id: string }>(
  db: Db,
  table: string,
  organizationId: string,
  ids: readonly string[],
  columns?: readonly string[],
): Promise<Map<string, Row>> {
  const out = new Map<string, Row>();
  if (ids.length === 0) return out;
  const unique = [...new Set(ids)].filter((id) => !impossibleId(id));
  // PostgreSQL: the ids as one text[] parameter; each is a primary-key probe there too.
  const sql =
    db.dialect === 'sqlite'
      ? `SELECT ${selectList(columns)} FROM ${table} WHERE id IN (SELECT value FROM json_each(?)) AND +organization_id = ?`
      : `SELECT ${selectList(columns)} FROM ${table} WHERE id = ANY(?::text[]) AND organization_id = ?`;
  const idParam = db.dialect === 'sqlite' ? JSON.stringify(unique) : unique;
  for (const row of (await db.prepare(sql).all(idParam, organizationId)) as Row[])
    out.set(row.id, row);
  return out;
}
