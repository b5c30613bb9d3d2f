import { ID_PREFIX as DOMAIN_ID_PREFIX } from '../../domain/ids';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../domain/errors';
import { getRow } from '../../store/list-query';
import { MAX_EXPAND_DEPTH, parseExpand, serializeWithExpansion } from '../../services/expand';
import { RESOURCES, type ResourceKind, type Row } from '../../services/resources';
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  PARENT_FILTERS,
  runListJson,
  type FilterDef,
  type ListEndpoint,
} from '../list-engine';
import { Id, listOf } from '../../contract/schemas';
import type { ProblemCode } from '../../domain/errors';
import { orgOf, serializeContext, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import type { TSchema } from '@sinclair/typebox';

// Generic GET-list and GET-one routes, driven by the resource table and the list engine.

export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** The documented path id of `kind`'s routes (Fastify only caps its length: a bad id is a 404). */
export const idParamsDoc = (prefix: string) => Type.Object({ id: Id(prefix) });

/** The id prefix of each resource kind (contract §2): domain/ids.ts's, under the resources' names. */
const { webhookDelivery, ...samePrefix } = DOMAIN_ID_PREFIX;
export const ID_PREFIX: Record<ResourceKind, string> = {
  ...samePrefix,
  webhook_delivery: webhookDelivery,
};

const pascal = (noun: string) =>
  noun.replace(/(^|\s)(\w)/g, (_m, _s: string, c: string) => c.toUpperCase());

/** The expand paths of `kind` (every relation, nested up to MAX_EXPAND_DEPTH levels). */
export function expandPaths(kind: ResourceKind, depth = MAX_EXPAND_DEPTH): string[] {
  if (depth === 0) return [];
  return Object.entries(RESOURCES[kind].relations).flatMap(([field, relation]) => [
    field,
    ...expandPaths(relation.kind, depth - 1).map((p) => `${field}.${p}`),
  ]);
}

/** The documented `expand` parameter of `kind`, or nothing when it has no relations. */
function expandDoc(kind: ResourceKind): Record<string, TSchema> {
  const paths = expandPaths(kind);
  if (paths.length === 0) return {};
  return {
    expand: Type.Optional(
      Type.String({
        description: `Comma-separated fields to inline next to their _id (dots nest, at most ${MAX_EXPAND_DEPTH} levels): ${paths.join(', ')}`,
      }),
    ),
  };
}

const FILTER_DOC: Record<FilterDef['type'], (name: string, def: FilterDef) => TSchema> = {
  id: (name, def) => Id((def as { prefix: string }).prefix, `filter: ${name}`),
  sql: (name, def) =>
    'prefix' in def && def.prefix
      ? Id(def.prefix, `filter: ${name}`)
      : Type.String({ description: `filter: ${name}` }),
  exact: (name, def) =>
    Type.String({
      maxLength: (def as { maxLength?: number }).maxLength ?? 200,
      description: `filter: ${name} (exact match)`,
    }),
  substring: (name) =>
    Type.String({ maxLength: 200, description: `filter: ${name} (case-insensitive substring)` }),
  enum: (name, def) =>
    Type.Union(
      (def as { values: readonly string[] }).values.map((v) => Type.Literal(v)),
      { description: `filter: ${name}` },
    ),
  bool: (name) => Type.Boolean({ description: `filter: ${name}` }),
};

/** The paging parameters every list documents (contract §2, spec "Pagination"). */
export const PagingQueryDoc = {
  created_after: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'only records created strictly after (ISO 8601)',
    }),
  ),
  created_before: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'only records created strictly before (ISO 8601)',
    }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: DEFAULT_LIMIT,
      description: `page size, 1 to ${MAX_LIMIT} (larger values are clamped to ${MAX_LIMIT}); overrides the cursor's`,
    }),
  ),
  cursor: Type.Optional(
    Type.String({
      description:
        'opaque cursor from _meta.next or _meta.prev; it remembers the filters and limit',
    }),
  ),
};

/** The query of a list endpoint as documented: typed filters, paging, expand. */
export function listQueryDoc(endpoint: ListEndpoint, skip: readonly string[] = []) {
  const required = new Set(endpoint.required ?? []);
  return Type.Object({
    ...Object.fromEntries(
      Object.entries(endpoint.filters)
        .filter(([name]) => !skip.includes(name))
        .map(([name, def]) => {
          const schema = FILTER_DOC[def.type](name, def);
          return [name, required.has(name) ? schema : Type.Optional(schema)];
        }),
    ),
    ...PagingQueryDoc,
    ...expandDoc(endpoint.kind),
  });
}

/** The problems the list engine raises for `endpoint` (besides invalid_parameter). */
export function listProblems(endpoint: ListEndpoint): ProblemCode[] {
  // expand is parsed on every list (a kind without relations refuses any path).
  const codes: ProblemCode[] = [
    'invalid_parameter',
    'invalid_cursor',
    'invalid_expand',
    'expand_too_deep',
  ];
  if ((endpoint.required ?? []).length > 0) codes.push('missing_parameter');
  if (Object.keys(endpoint.filters).some((f) => f in PARENT_FILTERS)) codes.push('not_found');
  return codes;
}

/** What Fastify validates of a list query: strings (the list engine parses and checks them). */
const validatedQuery = (endpoint: ListEndpoint) =>
  Type.Object(
    Object.fromEntries([
      ...Object.keys(endpoint.filters).map((name) => [name, Type.Optional(Type.String())]),
      ['created_after', Type.Optional(Type.String({ format: 'date-time' }))],
      ['created_before', Type.Optional(Type.String({ format: 'date-time' }))],
      ['limit', Type.Optional(Type.String())],
      ['cursor', Type.Optional(Type.String())],
      ['expand', Type.Optional(Type.String())],
    ]),
  );

export function listRoute(
  app: FastifyInstance,
  deps: HttpDeps,
  endpoint: ListEndpoint,
  item: TSchema,
  tag: string,
  operationId = `list${pascal(RESOURCES[endpoint.kind].noun)}s`,
): void {
  addRoute(app, {
    operationId,
    method: 'GET',
    url: endpoint.path,
    summary: `List ${RESOURCES[endpoint.kind].noun}s, newest first`,
    tags: [tag],
    querystring: validatedQuery(endpoint),
    docQuery: listQueryDoc(endpoint),
    responses: { 200: listOf(item) },
    problems: listProblems(endpoint),
    handler: async (request, reply) => {
      const body = await runListJson(endpoint, {
        organizationId: orgOf(request),
        query: request.query as Record<string, unknown>,
        db: deps.db,
        cursors: deps.cursors,
        serialize: serializeContext(deps, request),
      });
      return sendJsonText(reply, body);
    },
  });
}

/**
 * Sends text that already is the JSON body, with the content type Fastify gives a serialized
 * object (`application/json; charset=utf-8`): a string with a JSON content type is sent as is,
 * not passed through the serializer again.
 */
export function sendJsonText(reply: FastifyReply, body: string): string {
  reply.type('application/json; charset=utf-8');
  return body;
}

/** Loads one record of the caller's organization or throws 404 (another organization's ids too). */
export async function loadOwned(
  deps: HttpDeps,
  request: FastifyRequest,
  kind: ResourceKind,
  id: string,
): Promise<Row> {
  const row = await getRow<Row>(deps.db, RESOURCES[kind].table, orgOf(request), id);
  if (!row) throw notFound(RESOURCES[kind].noun, id.slice(0, 100));
  return row;
}

export async function serializeOne(
  deps: HttpDeps,
  request: FastifyRequest,
  kind: ResourceKind,
  row: Row,
): Promise<Record<string, unknown>> {
  const expand = (request.query as Record<string, unknown> | undefined)?.expand;
  const tree = parseExpand(kind, typeof expand === 'string' ? expand : undefined);
  return (
    await serializeWithExpansion(
      deps.db,
      orgOf(request),
      kind,
      [row],
      tree,
      serializeContext(deps, request),
    )
  )[0]!;
}

export function getOneRoute(
  app: FastifyInstance,
  deps: HttpDeps,
  kind: ResourceKind,
  path: string,
  item: TSchema,
  tag: string,
): void {
  addRoute(app, {
    operationId: `get${pascal(RESOURCES[kind].noun)}`,
    method: 'GET',
    url: path,
    summary: `Get one ${RESOURCES[kind].noun}`,
    tags: [tag],
    params: IdParams,
    docParams: idParamsDoc(ID_PREFIX[kind]),
    querystring: Type.Object({ expand: Type.Optional(Type.String()) }),
    // Without relations `expand` is accepted but can name nothing: not documented.
    docQuery: Type.Object(expandDoc(kind)),
    responses: { 200: item },
    problems: ['invalid_expand', 'expand_too_deep'],
    handler: async (request) => {
      const { id } = request.params as { id: string };
      return await serializeOne(deps, request, kind, await loadOwned(deps, request, kind, id));
    },
  });
}
