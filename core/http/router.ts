import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProblemCode } from '../domain/errors';
import {
  collectComponents,
  commonProblems,
  IdempotencyHeaders,
  openapiResponses,
  problemResponses,
  SignedQuery,
  swaggerResponse,
  type ResponseSpec,
} from './openapi';
import type { Area } from './plugins/rate-limit';

// Routes are declared once with their schemas: the same TypeBox objects validate the request and
// document it in /v1/openapi.json. Response schemas are documentation only, so the serializer never
// strips a field the handler returns. The document's operation is built here from the declaration
// (core/http/openapi.ts): operationId, parameters, body, responses, and the Problem Details
// responses the route can produce.

export interface RouteDef {
  /** Unique, camelCase: the method name a generated client gets. */
  operationId: string;
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Fastify's URL (`:id`, `*`). */
  url: string;
  /** The URL in the document when it differs (a named parameter instead of `*`). */
  docUrl?: string;
  summary: string;
  description?: string;
  tags: string[];
  area?: Area;
  /** No API key needed (problem pages, the OpenAPI document). */
  public?: boolean;
  /** Guarded by a signed URL (`?expires=…&signature=…`) instead of an API key; implies public. */
  signed?: boolean;
  /** The handler reads the raw request stream (signed uploads): the media types it accepts. */
  rawBody?: readonly string[];
  body?: TSchema;
  params?: TSchema;
  querystring?: TSchema;
  /** The path parameters as documented, when Fastify validates them more loosely (or not at all). */
  docParams?: TSchema;
  /**
   * The query as documented, when Fastify validates it more loosely (list routes validate filters,
   * limits and cursors in the list engine, with precise messages; the document gives their types).
   */
  docQuery?: TSchema;
  /** Success (and other non-problem) responses by status. */
  responses: Record<number, ResponseSpec>;
  /** Problem codes the handler raises beyond those of every route of its kind (commonProblems). */
  problems?: readonly ProblemCode[];
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    public?: boolean;
    area?: Area;
    rawBody?: boolean;
  }
}

export interface RouteConfig {
  public?: boolean;
  area?: Area;
  rawBody?: boolean;
}

type OperationDef = Omit<RouteDef, 'handler' | 'area'>;

/** The parts of the operation `def` documents, in JSON Schema (before either rendering). */
function describe(def: OperationDef) {
  const isPublic = def.public === true || def.signed === true;
  const params = def.docParams ?? def.params;
  const declaredQuery = def.docQuery ?? def.querystring;
  const problems = [
    ...commonProblems({
      method: def.method,
      public: isPublic,
      signed: def.signed === true,
      jsonBody: def.body !== undefined,
      rawBody: def.rawBody !== undefined,
      pathParams: params !== undefined,
      query: def.querystring !== undefined,
    }),
    ...(def.problems ?? []),
  ];
  return {
    isPublic,
    params,
    query: def.signed ? mergeObjects(declaredQuery, SignedQuery) : declaredQuery,
    headers: def.method === 'POST' && !isPublic ? IdempotencyHeaders : undefined,
    rawBody: def.rawBody
      ? {
          content: Object.fromEntries(
            def.rawBody.map((type) => [
              type,
              { schema: { type: 'string', format: 'binary', description: 'the raw bytes' } },
            ]),
          ),
        }
      : undefined,
    responses: { ...def.responses, ...problemResponses(problems) },
  };
}

/** The operation of `def` in the form @fastify/swagger turns into the document. */
export function operationSchema(def: OperationDef): Record<string, unknown> {
  const d = describe(def);
  const schema: Record<string, unknown> = {
    operationId: def.operationId,
    summary: def.summary,
    tags: def.tags,
    security: d.isPublic ? [] : [{ bearerAuth: [] }],
    response: Object.fromEntries(
      Object.entries(d.responses).map(([status, spec]) => [status, swaggerResponse(spec)]),
    ),
  };
  if (def.description) schema.description = def.description;
  if (d.params) schema.params = d.params;
  if (d.query) schema.querystring = d.query;
  if (d.headers) schema.headers = d.headers;
  if (def.body) schema.body = def.body;
  if (d.rawBody) schema.body = d.rawBody;
  return schema;
}

/**
 * The OpenAPI operation object of `def`, for a URL shape a route serves that has no Fastify route
 * of its own (documentOperation). Parameters and bodies are flat here: path and query objects.
 */
export function openapiOperation(def: OperationDef): Record<string, unknown> {
  const d = describe(def);
  const parameters = (where: 'path' | 'query' | 'header', schema: TSchema | undefined) =>
    Object.entries((schema?.properties ?? {}) as Record<string, TSchema>).map(([name, s]) => {
      const { description, ...rest } = s;
      return {
        name,
        in: where,
        required: where === 'path' || (schema?.required ?? []).includes(name),
        ...(description ? { description } : {}),
        schema: rest,
      };
    });
  return {
    operationId: def.operationId,
    summary: def.summary,
    ...(def.description ? { description: def.description } : {}),
    tags: def.tags,
    security: d.isPublic ? [] : [{ bearerAuth: [] }],
    parameters: [
      ...parameters('path', d.params),
      ...parameters('query', d.query),
      ...parameters('header', d.headers),
    ],
    ...(def.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: def.body } } } }
      : {}),
    ...(d.rawBody ? { requestBody: { required: true, ...d.rawBody } } : {}),
    responses: openapiResponses(d.responses),
  };
}

function mergeObjects(a: TSchema | undefined, b: TSchema): TSchema {
  if (!a) return b;
  return {
    ...b,
    properties: { ...a.properties, ...b.properties },
    required: [...(a.required ?? []), ...(b.required ?? [])],
  } as TSchema;
}

export function addRoute(app: FastifyInstance, def: RouteDef): void {
  const schema: Record<string, unknown> = {};
  if (def.body) schema.body = def.body;
  if (def.params) schema.params = def.params;
  if (def.querystring) schema.querystring = def.querystring;
  const doc = operationSchema(def);
  collectComponents(app, [doc]);
  const docUrl = def.docUrl ?? def.url;
  app.route({
    method: def.method,
    url: def.url,
    schema,
    config: {
      public: def.public === true || def.signed === true,
      area: def.area ?? 'document',
      rawBody: def.rawBody !== undefined,
      // GET routes answer HEAD too (Fastify adds it; undocumented); a HEAD route declared on its
      // own (registered before its GET) is documented.
      ...(def.method === 'HEAD' ? { swagger: { exposeHeadRoute: true } } : {}),
      swaggerTransform: () => ({ schema: doc as never, url: docUrl }),
    } satisfies RouteConfig & Record<string, unknown>,
    handler: def.handler,
  });
}
