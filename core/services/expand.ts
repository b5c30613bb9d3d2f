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
export function serializeWithExpansion(
  db: Db,
  organizationId: string,
  kind: ResourceKind,
  rows: readonly Row[],
  tree: ExpandTree,
  ctx: SerializeContext,
): Record<string, unknown>[] {
  const def = RESOURCES[kind];
  const out = rows.map((r) => def.toApi(r, ctx));
  for (const [field, subtree] of Object.entries(tree)) {
    const relation = def.relations[field]!;
    const target = RESOURCES[relation.kind];
    const ids = rows
      .map((r) => r[relation.column])
      .filter((v): v is string => typeof v === 'string');
    const loaded = getRows<Row>(db, target.table, organizationId, ids);
    const loadedRows = [...loaded.values()];
    const expanded = serializeWithExpansion(
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
