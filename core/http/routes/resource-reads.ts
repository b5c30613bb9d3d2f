import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../../domain/errors';
import { getRow } from '../../store/list-query';
import { parseExpand, serializeWithExpansion } from '../../services/expand';
import { RESOURCES, type ResourceKind, type Row } from '../../services/resources';
import { runListJson, type ListEndpoint } from '../list-engine';
import { orgOf, serializeContext, type HttpDeps } from '../deps';
import { addRoute } from '../router';
import type { TSchema } from '@sinclair/typebox';

// Generic GET-list and GET-one routes, driven by the resource table and the list engine.

export const IdParams = Type.Object({ id: Type.String({ maxLength: 100 }) });

const queryDoc = (endpoint: ListEndpoint) =>
  Type.Object(
    Object.fromEntries([
      ...Object.keys(endpoint.filters).map((name) => [
        name,
        Type.Optional(Type.String({ description: `filter: ${name}` })),
      ]),
      [
        'created_after',
        Type.Optional(
          Type.String({ format: 'date-time', description: 'strictly after (ISO 8601)' }),
        ),
      ],
      [
        'created_before',
        Type.Optional(
          Type.String({ format: 'date-time', description: 'strictly before (ISO 8601)' }),
        ),
      ],
      [
        'limit',
        Type.Optional(Type.String({ description: '1–100, default 20; above 100 is clamped' })),
      ],
      [
        'cursor',
        Type.Optional(Type.String({ description: 'opaque cursor from _meta.next or _meta.prev' })),
      ],
      [
        'expand',
        Type.Optional(
          Type.String({ description: 'comma-separated expand paths, at most 3 levels' }),
        ),
      ],
    ]),
  );

export function listRoute(
  app: FastifyInstance,
  deps: HttpDeps,
  endpoint: ListEndpoint,
  item: TSchema,
  tag: string,
): void {
  addRoute(app, {
    method: 'GET',
    url: endpoint.path,
    summary: `List ${RESOURCES[endpoint.kind].noun}s, newest first`,
    tags: [tag],
    querystring: queryDoc(endpoint),
    responses: { 200: Type.Object({ data: Type.Array(item), _meta: Type.Any() }) },
    handler: async (request, reply) => {
      const body = runListJson(endpoint, {
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
export function loadOwned(
  deps: HttpDeps,
  request: FastifyRequest,
  kind: ResourceKind,
  id: string,
): Row {
  const row = getRow<Row>(deps.db, RESOURCES[kind].table, orgOf(request), id);
  if (!row) throw notFound(RESOURCES[kind].noun, id.slice(0, 100));
  return row;
}

export function serializeOne(
  deps: HttpDeps,
  request: FastifyRequest,
  kind: ResourceKind,
  row: Row,
): Record<string, unknown> {
  const expand = (request.query as Record<string, unknown> | undefined)?.expand;
  const tree = parseExpand(kind, typeof expand === 'string' ? expand : undefined);
  return serializeWithExpansion(
    deps.db,
    orgOf(request),
    kind,
    [row],
    tree,
    serializeContext(deps, request),
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
    method: 'GET',
    url: path,
    summary: `Get one ${RESOURCES[kind].noun}`,
    tags: [tag],
    params: IdParams,
    querystring: Type.Object({ expand: Type.Optional(Type.String()) }),
    responses: { 200: item },
    handler: async (request) => {
      const { id } = request.params as { id: string };
      return serializeOne(deps, request, kind, loadOwned(deps, request, kind, id));
    },
  });
}
