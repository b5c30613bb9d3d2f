import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Area } from './plugins/rate-limit';

// Routes are declared once with their schemas: the same TypeBox objects validate the request and
// document it in /v1/openapi.json. Response schemas are documentation only (`x-responses`), so the
// serializer never strips a field the handler returns.

export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  tags: string[];
  area?: Area;
  /** No API key needed (signed URLs, problem pages, the OpenAPI document). */
  public?: boolean;
  /** The handler reads the raw request stream (signed uploads), not JSON. */
  rawBody?: boolean;
  body?: TSchema;
  params?: TSchema;
  querystring?: TSchema;
  responses?: Record<number, TSchema | { description: string }>;
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

export function addRoute(app: FastifyInstance, def: RouteDef): void {
  const schema: Record<string, unknown> = { summary: def.summary, tags: def.tags };
  if (def.body) schema.body = def.body;
  if (def.params) schema.params = def.params;
  if (def.querystring) schema.querystring = def.querystring;
  if (def.responses) schema['x-responses'] = def.responses;
  if (!def.public) schema.security = [{ bearerAuth: [] }];
  app.route({
    method: def.method,
    url: def.url,
    schema,
    config: {
      public: def.public ?? false,
      area: def.area ?? 'document',
      rawBody: def.rawBody ?? false,
    } satisfies RouteConfig,
    handler: def.handler,
  });
}
