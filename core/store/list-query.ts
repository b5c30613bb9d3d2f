import type { Db } from './db';
import { prepared } from './statement-cache';

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

export function fetchPage<Row>(db: Db, q: PageQuery): PageResult<Row> {
  const forward = q.direction === 'after';
  const keyOp = q.key ? (forward ? '<' : '>') : null;
  const w = whereClause(q, keyOp);
  const order = forward ? 'DESC' : 'ASC';
  const sql = `SELECT * FROM ${q.table} WHERE ${w.sql} ORDER BY created_at ${order}, id ${order} LIMIT ?`;
  const params = [q.organizationId, ...w.params];
  if (q.key) params.push(q.key.created_at, q.key.id);
  params.push(q.limit + 1);
  const rows = prepared(db, sql).all(...params) as Row[];
  const more = rows.length > q.limit;
  if (more) rows.length = q.limit;
  if (!forward) rows.reverse();
  return { rows, more };
}

/** Whether any matching row lies strictly beyond `key` in the given direction. */
export function existsBeyond(
  db: Db,
  q: Pick<PageQuery, 'table' | 'organizationId' | 'conditions'>,
  key: PageKey,
  direction: 'after' | 'before',
): boolean {
  const w = whereClause(q, direction === 'after' ? '<' : '>');
  const sql = `SELECT 1 FROM ${q.table} WHERE ${w.sql} LIMIT 1`;
  return prepared(db, sql).get(q.organizationId, ...w.params, key.created_at, key.id) !== undefined;
}

export function getRow<Row>(
  db: Db,
  table: string,
  organizationId: string,
  id: string,
): Row | undefined {
  return prepared(db, `SELECT * FROM ${table} WHERE id = ? AND organization_id = ?`).get(
    id,
    organizationId,
  ) as Row | undefined;
}

/** Loads many rows by id in one query per chunk (the expansion engine's batch loader). */
export function getRows<Row extends { id: string }>(
  db: Db,
  table: string,
  organizationId: string,
  ids: readonly string[],
): Map<string, Row> {
  const out = new Map<string, Row>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const sql = `SELECT * FROM ${table} WHERE organization_id = ? AND id IN (${chunk.map(() => '?').join(',')})`;
    for (const row of prepared(db, sql).all(organizationId, ...chunk) as Row[])
      out.set(row.id, row);
  }
  return out;
}
