import { ApiError } from '../domain/errors';
import type { Db } from '../store/db';
import { getRows } from '../store/list-query';
import { RESOURCES, type ResourceKind, type Row, type SerializeContext } from './resources';

// The expansion engine (spec "Expansion"): `expand=a,b.c` inlines referenced objects next to their
// `_id` fields. Paths are validated against the resource table, at most 3 levels deep, and loaded
// level by level with one batched query per relation — never one query per item.

export const MAX_EXPAND_DEPTH = 3;

export interface ExpandTree {
  [field: string]: ExpandTree;
}

export function parseExpand(kind: ResourceKind, raw: string | undefined): ExpandTree {
  const tree: ExpandTree = {};
  if (raw === undefined) return tree;
  const paths = raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  for (const path of paths) {
    const segments = path.split('.');
    if (segments.length > MAX_EXPAND_DEPTH) {
      throw new ApiError(
        'expand_too_deep',
        `The expand path '${path}' has ${segments.length} levels; at most ${MAX_EXPAND_DEPTH} are allowed.`,
      );
    }
    let node = tree;
    let current: ResourceKind = kind;
    for (const segment of segments) {
      // Own keys only: 'constructor', '__proto__' and the like must not resolve through the prototype.
      const relation = Object.hasOwn(RESOURCES[current].relations, segment)
        ? RESOURCES[current].relations[segment]
        : undefined;
      if (!relation) {
        const allowed = Object.keys(RESOURCES[current].relations);
        throw new ApiError(
          'invalid_expand',
          `'${path}' is not expandable on ${RESOURCES[kind].noun}: '${segment}' is not an expandable field of ${RESOURCES[current].noun}. ` +
            (allowed.length
              ? `Expandable fields of ${RESOURCES[current].noun}: ${allowed.join(', ')}; nest them with dots, at most ${MAX_EXPAND_DEPTH} levels (e.g. ${exampleNested(kind)}).`
              : `${RESOURCES[current].noun} has no expandable fields.`),
        );
      }
      node[segment] ??= {};
      node = node[segment];
      current = relation.kind;
    }
  }
  return tree;
}

function exampleNested(kind: ResourceKind): string {
  const path: string[] = [];
  let current = kind;
  for (let i = 0; i < MAX_EXPAND_DEPTH; i++) {
    const first = Object.entries(RESOURCES[current].relations).find(([name]) => name !== 'project');
    if (!first) break;
    path.push(first[0]);
    current = first[1].kind;
  }
  return path.join('.') || 'none';
}

/**
 * Serializes `rows` of `kind` and inlines the expansions in `tree`. Referenced records outside the
 * caller's organization are never loaded (every query is scoped), so they expand to null.
 */
export async function serializeWithExpansion(
  db: Db,
  organizationId: string,
  kind: ResourceKind,
  rows: readonly Row[],
  tree: ExpandTree,
  ctx: SerializeContext,
): Promise<Record<string, unknown>[]> {
  const def = RESOURCES[kind];
  const out = rows.map((r) => def.toApi(r, ctx));
  for (const [field, subtree] of Object.entries(tree)) {
    const relation = def.relations[field]!;
    const target = RESOURCES[relation.kind];
    const ids = rows
      .map((r) => r[relation.column])
      .filter((v): v is string => typeof v === 'string');
    const loaded = await getRows<Row>(db, target.table, organizationId, ids, target.columns);
    const loadedRows = [...loaded.values()];
    const expanded = await serializeWithExpansion(
      db,
      organizationId,
      relation.kind,
      loadedRows,
      subtree,
      ctx,
    );
    const byId = new Map(loadedRows.map((r, i) => [r.id, expanded[i]]));
    rows.forEach((r, i) => {
      const id = r[relation.column];
      out[i]![field] = typeof id === 'string' ? (byId.get(id) ?? null) : null;
    });
  }
  return out;
}

/**
 * Per-page memo of serialized records, keyed by resource kind and the expansion below it: a record
 * referenced from many rows of a page (the same sheet and drawing under 200 blocks, the same job
 * under 100 overlays) is loaded and stringified once, then spliced in as text.
 */
export type JsonCache = Map<string, Map<string, string>>;

/**
 * The same result as `JSON.stringify` of each item of `serializeWithExpansion`, byte for byte, but
 * built as text: each row's own fields are stringified once, and each expanded record's JSON is
 * taken from `cache` (loading only the ids not yet in it) and appended as `,"field":<json>` before
 * the closing brace — the position `serializeWithExpansion` gives a newly added key. A reference
 * that loads nothing (deleted, or another organization's) is `null`, as there.
 */
export async function serializeWithExpansionJson(
  db: Db,
  organizationId: string,
  kind: ResourceKind,
  rows: readonly Row[],
  tree: ExpandTree,
  ctx: SerializeContext,
  cache: JsonCache = new Map(),
): Promise<string[]> {
  const def = RESOURCES[kind];
  const fields = Object.entries(tree);
  const out = new Array<string>(rows.length);
  if (fields.length === 0) {
    for (let i = 0; i < rows.length; i++) out[i] = JSON.stringify(def.toApi(rows[i]!, ctx));
    return out;
  }
  const expansions: { field: string; key: string; column: string; known: Map<string, string> }[] =
    [];
  for (const [field, subtree] of fields) {
    const relation = def.relations[field]!;
    const target = RESOURCES[relation.kind];
    const cacheKey = `${relation.kind}:${JSON.stringify(subtree)}`;
    let known = cache.get(cacheKey);
    if (!known) {
      known = new Map();
      cache.set(cacheKey, known);
    }
    const missing: string[] = [];
    for (const r of rows) {
      const id = r[relation.column];
      if (typeof id === 'string' && !known.has(id)) missing.push(id);
    }
    if (missing.length > 0) {
      const loaded = [
        ...(await getRows<Row>(db, target.table, organizationId, missing, target.columns)).values(),
      ];
      const json = await serializeWithExpansionJson(
        db,
        organizationId,
        relation.kind,
        loaded,
        subtree,
        ctx,
        cache,
      );
      loaded.forEach((r, i) => known.set(r.id, json[i]!));
      for (const id of missing) if (!known.has(id)) known.set(id, 'null');
    }
    expansions.push({ field, key: `,${JSON.stringify(field)}:`, column: relation.column, known });
  }
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const obj = def.toApi(r, ctx);
    let tail = '';
    let collides = false;
    for (const x of expansions) {
      if (Object.hasOwn(obj, x.field)) collides = true;
      const id = r[x.column];
      tail += x.key + (typeof id === 'string' ? (x.known.get(id) ?? 'null') : 'null');
    }
    if (collides) {
      // An own field named like the expansion: the object path overwrites it in place. No resource
      // has one today; keep the result identical anyway if one is ever added.
      for (const x of expansions) {
        const id = r[x.column];
        obj[x.field] = JSON.parse(typeof id === 'string' ? (x.known.get(id) ?? 'null') : 'null');
      }
      out[i] = JSON.stringify(obj);
      continue;
    }
    const own = JSON.stringify(obj);
    out[i] = own === '{}' ? `{${tail.slice(1)}}` : `${own.slice(0, -1)}${tail}}`;
  }
  return out;
}
