import { ApiError, notFound } from '../domain/errors';
import { idPatternSource } from '../domain/ids';
import type { Db } from '../store/db';
import { fetchPage, getRow, pageLinks, type Condition, type PageKey } from '../store/list-query';
import {
  parseExpand,
  serializeWithExpansion,
  serializeWithExpansionJson,
  type ExpandTree,
} from '../services/expand';
import {
  RESOURCES,
  type ResourceKind,
  type Row,
  type SerializeContext,
} from '../services/resources';
import type { CursorCodec, CursorPayload } from './cursor';

// The one list engine behind every list endpoint (spec "Pagination", "Filtering", "Expansion";
// contract §2). An endpoint declares its resource and filters; parsing, validation, cursors,
// keyset paging and expansion happen here, once.

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export type FilterDef =
  | { type: 'id'; column: string; prefix: string }
  | { type: 'exact'; column: string; maxLength?: number }
  | { type: 'substring'; column: string }
  | { type: 'enum'; column: string; values: readonly string[] }
  | { type: 'bool'; column: string }
  /** A code-defined SQL fragment; every `?` is bound to the (validated) value. */
  | { type: 'sql'; sql: string; prefix?: string };

export interface ListEndpoint {
  path: string;
  kind: ResourceKind;
  filters: Record<string, FilterDef>;
  required?: readonly string[];
}

export interface ListRequest {
  organizationId: string;
  query: Record<string, unknown>;
  db: Db;
  cursors: CursorCodec;
  serialize: SerializeContext;
}

export interface ListResponse {
  data: Record<string, unknown>[];
  _meta: { next: string | null; prev: string | null; limit: number };
}

const COMMON = ['created_after', 'created_before'] as const;

/** Filters naming a parent record: one the caller cannot see is 404, never an empty list (contract §2). */
export const PARENT_FILTERS: Record<string, { table: string; noun: string }> = {
  project_id: { table: 'projects', noun: 'project' },
  drawing_id: { table: 'drawings', noun: 'drawing' },
  sheet_id: { table: 'sheets', noun: 'sheet' },
  overlay_id: { table: 'overlays', noun: 'overlay' },
  job_id: { table: 'jobs', noun: 'job' },
};
const RESERVED = new Set(['limit', 'cursor', 'expand']);

function single(query: Record<string, unknown>, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (Array.isArray(v))
    throw new ApiError(
      'invalid_parameter',
      `The query parameter '${name}' was given more than once; give it once.`,
    );
  return String(v);
}

const DATETIME_RE =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;

export function parseDatetime(name: string, raw: string): string {
  const t = DATETIME_RE.test(raw) ? Date.parse(raw.length === 10 ? `${raw}T00:00:00Z` : raw) : NaN;
  if (Number.isNaN(t)) {
    throw new ApiError(
      'invalid_parameter',
      `The query parameter '${name}' must be an ISO 8601 datetime with a time zone, e.g. 2026-01-31T12:00:00Z; got '${truncate(raw)}'.`,
    );
  }
  return new Date(t).toISOString();
}

export function parseLimit(raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw.trim())) {
    throw new ApiError(
      'invalid_parameter',
      `The query parameter 'limit' must be an integer from 1 to ${MAX_LIMIT}; got '${truncate(raw)}'.`,
    );
  }
  const n = Number(raw);
  if (n < 1)
    throw new ApiError(
      'invalid_parameter',
      `The query parameter 'limit' must be at least 1; got ${raw}.`,
    );
  return Math.min(n, MAX_LIMIT);
}

function truncate(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function condition(name: string, def: FilterDef, raw: string): Condition {
  switch (def.type) {
    case 'id':
    case 'sql':
      if (def.prefix && !new RegExp(idPatternSource(def.prefix)).test(raw)) {
        throw new ApiError(
          'invalid_parameter',
          `The query parameter '${name}' must be an id starting with '${def.prefix}_'; got '${truncate(raw)}'.`,
        );
      }
      if (def.type === 'id') return { sql: `${def.column} = ?`, params: [raw] };
      return {
        sql: def.sql,
        params: Array.from({ length: def.sql.split('?').length - 1 }, () => raw),
      };
    case 'exact':
      if (raw.length > (def.maxLength ?? 200))
        throw new ApiError('invalid_parameter', `The query parameter '${name}' is too long.`);
      return { sql: `${def.column} = ?`, params: [raw] };
    case 'substring': {
      if (raw.length > 200)
        throw new ApiError(
          'invalid_parameter',
          `The query parameter '${name}' is too long (at most 200 characters).`,
        );
      const escaped = raw.replace(/[\\%_]/g, (c) => `\\${c}`);
      // lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
      return {
        sql: `lower(${def.column}) LIKE lower(?) ESCAPE '\\'`,
        params: [`%${escaped}%`],
      };
    }
    case 'enum':
      if (!def.values.includes(raw)) {
        throw new ApiError(
          'invalid_parameter',
          `The query parameter '${name}' must be one of ${def.values.join(', ')}; got '${truncate(raw)}'.`,
        );
      }
      return { sql: `${def.column} = ?`, params: [raw] };
    case 'bool': {
      const v = raw.toLowerCase();
      if (v !== 'true' && v !== 'false') {
        throw new ApiError(
          'invalid_parameter',
          `The query parameter '${name}' must be true or false; got '${truncate(raw)}'.`,
        );
      }
      return { sql: `${def.column} = ?`, params: [v === 'true' ? 1 : 0] };
    }
  }
}

interface Page {
  rows: Row[];
  tree: ExpandTree;
  meta: ListResponse['_meta'];
}

/** The list envelope as an object (callers that post-process items). */
export async function runList(endpoint: ListEndpoint, req: ListRequest): Promise<ListResponse> {
  const page = await loadPage(endpoint, req);
  return {
    data: await serializeWithExpansion(
      req.db,
      req.organizationId,
      endpoint.kind,
      page.rows,
      page.tree,
      req.serialize,
    ),
    _meta: page.meta,
  };
}

/**
 * The list envelope as JSON text, byte for byte `JSON.stringify(runList(...))`, built without the
 * object tree: each distinct nested record of the page is stringified once and spliced (an expanded
 * overlay page repeats the same 2 sheets, 2 drawings and 1 job 100–200 times). List routes send
 * this string as the body, so Fastify does not serialize it again.
 */
export async function runListJson(endpoint: ListEndpoint, req: ListRequest): Promise<string> {
  const page = await loadPage(endpoint, req);
  const items = await serializeWithExpansionJson(
    req.db,
    req.organizationId,
    endpoint.kind,
    page.rows,
    page.tree,
    req.serialize,
  );
  return `{"data":[${items.join(',')}],"_meta":${JSON.stringify(page.meta)}}`;
}

async function loadPage(endpoint: ListEndpoint, req: ListRequest): Promise<Page> {
  const { query } = req;
  const cursorRaw = single(query, 'cursor');
  const limitRaw = single(query, 'limit');
  const expandRaw = single(query, 'expand');
  const filterNames = [...Object.keys(endpoint.filters), ...COMMON];

  const given: Record<string, string> = {};
  for (const name of filterNames) {
    const v = single(query, name);
    if (v !== undefined) given[name] = v;
  }

  let cursor: CursorPayload | undefined;
  let filters = given;
  if (cursorRaw !== undefined) {
    cursor = req.cursors.decode(cursorRaw, endpoint.path, req.organizationId);
    for (const [name, value] of Object.entries(given)) {
      if (cursor.f[name] !== value) {
        throw new ApiError(
          'invalid_cursor',
          `The filter '${name}' given beside the cursor differs from the one the cursor was created with; drop it or start from the first page.`,
        );
      }
    }
    filters = cursor.f;
  } else {
    for (const name of endpoint.required ?? []) {
      if (given[name] === undefined) {
        throw new ApiError(
          'missing_parameter',
          `The query parameter '${name}' is required on ${endpoint.path}.`,
          {
            errors: [{ field: name, code: 'required', message: `${name} is required` }],
          },
        );
      }
    }
  }

  const conditions: Condition[] = [];
  for (const [name, raw] of Object.entries(filters)) {
    if (name === 'created_after')
      conditions.push({ sql: 'created_at > ?', params: [parseDatetime(name, raw)] });
    else if (name === 'created_before')
      conditions.push({ sql: 'created_at < ?', params: [parseDatetime(name, raw)] });
    else {
      const def = endpoint.filters[name];
      if (def && !RESERVED.has(name)) conditions.push(condition(name, def, raw));
      const parent = PARENT_FILTERS[name];
      if (def && parent && !(await getRow(req.db, parent.table, req.organizationId, raw)))
        throw notFound(parent.noun, raw);
    }
  }

  const limit = parseLimit(limitRaw, cursor?.l ?? DEFAULT_LIMIT);
  const expand = expandRaw ?? cursor?.x;
  const tree = parseExpand(endpoint.kind, expand);

  const def = RESOURCES[endpoint.kind];
  const base = { table: def.table, organizationId: req.organizationId, conditions };
  const direction = cursor?.d === 'b' ? 'before' : 'after';
  const key: PageKey | null = cursor ? { created_at: cursor.k[0], id: cursor.k[1] } : null;
  const page = await fetchPage<Row & PageKey>(req.db, {
    ...base,
    limit,
    direction,
    key,
    columns: def.columns,
  });

  const make = (row: PageKey, d: 'a' | 'b'): string =>
    req.cursors.encode({
      e: endpoint.path,
      o: req.organizationId,
      f: filters,
      l: limit,
      ...(expand !== undefined ? { x: expand } : {}),
      k: [row.created_at, row.id],
      d,
    });
  const { next, prev } = await pageLinks(req.db, { ...base, direction, key }, page, make);

  return { rows: page.rows, tree, meta: { next, prev, limit } };
}
