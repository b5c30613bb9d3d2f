import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { COMPONENT, Problem, Ref } from '../contract/schemas';
import { PROBLEMS, type ProblemCode } from '../domain/errors';

// The OpenAPI side of a route (served at /v1/openapi.json by @fastify/swagger). Fastify validates
// requests with the route's own schemas; this module turns a route declaration into the document's
// operation — parameters, request body, success responses and one Problem Details response per
// status whose `code` lists exactly the codes that route can produce — and collects the component
// schemas the operations point at.

/** A documented response: a JSON schema (application/json), or a description with its media. */
export interface ResponseDoc {
  description: string;
  /** Media type → schema. None: the response has no body (204, 304, HEAD). */
  content?: Record<string, TSchema>;
  headers?: Record<string, TSchema>;
}
export type ResponseSpec = TSchema | ResponseDoc;

export const HEADERS = {
  location: Type.String({ description: 'Path of the new record, or of the job: /v1/jobs/<id>' }),
  idempotencyStatus: Type.Union([Type.Literal('miss'), Type.Literal('hit')], {
    description: 'With an Idempotency-Key: miss on the first request, hit on a replay',
  }),
  retryAfter: Type.Integer({ minimum: 0, description: 'Seconds to wait before retrying' }),
  wwwAuthenticate: Type.String({ description: 'Bearer realm="blueline"' }),
} as const;

/** The Idempotency-Key request header every authenticated POST accepts (contract §8). */
export const IdempotencyHeaders = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^[A-Za-z0-9_-]+$',
      description:
        'Makes the POST safe to retry for 24 hours: a repeat with the same key returns the original status and body (Idempotency-Status: hit) and creates nothing; the same key with another method, route or body is 409 idempotency_key_conflict. A UUID v4 is recommended.',
    }),
  ),
});

/** The query of a signed URL (contract §5); the signature is the credential, no API key. */
export const SignedQuery = Type.Object({
  expires: Type.String({
    pattern: '^[0-9]{1,12}$',
    description: 'Unix seconds; part of the signed URL',
  }),
  signature: Type.String({
    pattern: '^[A-Za-z0-9_-]{43}$',
    description: 'base64url HMAC-SHA256 over method, path and expiry; part of the signed URL',
  }),
});

const HEADERS_BY_STATUS: Partial<Record<number, Record<string, TSchema>>> = {
  401: { 'WWW-Authenticate': HEADERS.wwwAuthenticate },
  429: { 'Retry-After': HEADERS.retryAfter },
  503: { 'Retry-After': HEADERS.retryAfter },
};

/** Members some problems add to the body (contract §3, §7). */
const EXTRA_MEMBERS: Partial<Record<ProblemCode, Record<string, TSchema>>> = {
  insufficient_credits: {
    required: Type.Integer({ description: 'credits the operation needs' }),
    available: Type.Integer({ description: 'credits the organization has available' }),
  },
};

/**
 * The Problem Details responses for `codes`: one per HTTP status, `application/problem+json`, the
 * Problem component narrowed to those codes (so a generated client can switch on `code`).
 */
export function problemResponses(codes: Iterable<ProblemCode>): Record<number, ResponseDoc> {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of new Set(codes)) {
    const status = PROBLEMS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<number, ResponseDoc> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    list.sort();
    const extra = Object.assign({}, ...list.map((c) => EXTRA_MEMBERS[c] ?? {})) as Record<
      string,
      TSchema
    >;
    const schema = Type.Intersect([
      Ref(Problem),
      Type.Object({
        code: Type.Union(list.map((c) => Type.Literal(c))),
        status: Type.Unsafe<number>({ type: 'integer', enum: [status] }),
        instance: Type.String(),
        request_id: Type.String(),
        ...extra,
      }),
    ]);
    const headers = HEADERS_BY_STATUS[status];
    out[status] = {
      description: list.map((c) => `\`${c}\`: ${PROBLEMS[c].description}`).join('\n\n'),
      content: { 'application/problem+json': schema },
      ...(headers ? { headers } : {}),
    };
  }
  return out;
}

/** What a route declares about itself that decides the problems every such route can produce. */
export interface OperationTraits {
  method: string;
  public: boolean;
  signed: boolean;
  jsonBody: boolean;
  rawBody: boolean;
  pathParams: boolean;
  query: boolean;
}

/**
 * The problems a route can produce by its kind alone, from the cross-cutting rules of app.ts:
 * shutdown (503), authentication and rate limits (401, 429), body parsing on methods that carry
 * one (400 invalid_json, 413, 415), body validation, idempotency keys on POST, path ids (404) and
 * query validation (400 invalid_parameter). A route adds the ones its handler raises.
 *
 * Not per operation, and so documented in the description of the API instead: 405 (answers a
 * method no operation has), 403 https_required (plain HTTP, before any route), and 500.
 */
export function commonProblems(t: OperationTraits): ProblemCode[] {
  const codes: ProblemCode[] = ['unavailable'];
  if (!t.public) codes.push('unauthorized', 'rate_limited');
  if (t.signed) codes.push('invalid_signature');
  if (t.method !== 'GET' && t.method !== 'HEAD') {
    if (!t.rawBody) codes.push('invalid_json');
    codes.push('payload_too_large', 'unsupported_media_type');
  }
  if (t.jsonBody) codes.push('validation_error');
  if (t.method === 'POST' && !t.public)
    codes.push('invalid_idempotency_key', 'idempotency_key_conflict');
  if (t.pathParams) codes.push('not_found');
  if (t.query) codes.push('invalid_parameter');
  return codes;
}

function isResponseDoc(spec: ResponseSpec): spec is ResponseDoc {
  return (
    typeof (spec as { description?: unknown }).description === 'string' &&
    !('type' in spec) &&
    !('$ref' in spec) &&
    !('anyOf' in spec) &&
    !('allOf' in spec)
  );
}

function asResponseDoc(spec: ResponseSpec): ResponseDoc {
  if (isResponseDoc(spec)) return spec;
  return {
    description: spec.description ?? 'Success',
    content: { 'application/json': spec.$id ? Ref(spec) : spec },
  };
}

const media = (content: Record<string, TSchema>) =>
  Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }]));

/** A response in the form @fastify/swagger reads: `content` by media type, or `type: 'null'` for none. */
export function swaggerResponse(spec: ResponseSpec): Record<string, unknown> {
  const doc = asResponseDoc(spec);
  const headers = doc.headers ? { headers: doc.headers } : {};
  if (!doc.content) return { type: 'null', description: doc.description, ...headers };
  return { description: doc.description, content: media(doc.content), ...headers };
}

/** OpenAPI response objects, for operations documented without a Fastify route of their own. */
export function openapiResponses(specs: Record<number, ResponseSpec>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(specs).map(([status, spec]) => {
      const doc = asResponseDoc(spec);
      const headers = Object.entries(doc.headers ?? {}).map(([name, schema]) => {
        const { description, ...rest } = schema;
        return [name, { description, schema: rest }];
      });
      return [
        status,
        {
          description: doc.description,
          ...(doc.content ? { content: media(doc.content) } : {}),
          ...(headers.length ? { headers: Object.fromEntries(headers) } : {}),
        },
      ];
    }),
  );
}

// ---- Components ------------------------------------------------------------------------------

const registries = new WeakMap<FastifyInstance, Map<string, TSchema>>();

/** Records every component reachable through `Ref()` from `schemas` (and from those components). */
export function collectComponents(app: FastifyInstance, schemas: unknown[]): void {
  let registry = registries.get(app);
  if (!registry) registries.set(app, (registry = new Map()));
  const seen = new Set<unknown>();
  const walk = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return;
    seen.add(node);
    const target = (node as Record<symbol, unknown>)[COMPONENT] as TSchema | undefined;
    if (target?.$id) {
      const known = registry.get(target.$id);
      if (known && known !== target)
        throw new Error(`Two different OpenAPI components are named '${target.$id}'.`);
      registry.set(target.$id, target);
      walk(target);
    }
    for (const value of Object.values(node)) walk(value);
  };
  for (const s of schemas) walk(s);
}

/**
 * Finishes the document @fastify/swagger built: the collected components under their own names
 * (sorted; `$id` dropped, as it would rebase the `$ref`s inside), single-value enum unions merged
 * into one enum, and the extra operations of routes that serve more than one URL shape.
 */
export function finishDocument(app: FastifyInstance, document: object): Record<string, unknown> {
  const doc = document as Record<string, unknown> & {
    paths?: Record<string, Record<string, unknown>>;
  };
  const registry = registries.get(app) ?? new Map<string, TSchema>();
  const schemas: Record<string, unknown> = {};
  for (const id of [...registry.keys()].sort()) {
    const plain = JSON.parse(JSON.stringify(registry.get(id))) as Record<string, unknown>;
    delete plain.$id;
    schemas[id] = plain;
  }
  const components = (doc.components ?? {}) as Record<string, unknown>;
  doc.components = { ...components, schemas };
  const paths = (doc.paths ??= {});
  for (const extra of extraOperations.get(app) ?? []) {
    collectComponents(app, [extra.operation]);
    paths[extra.path] = { ...paths[extra.path], [extra.method]: extra.operation };
  }
  return shareProblemResponses(mergeEnums(JSON.parse(JSON.stringify(doc))) as Document);
}

type Document = Record<string, unknown> & {
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  components: Record<string, unknown>;
};

/**
 * Moves each Problem Details response into `components.responses`, named by its codes (e.g.
 * `unauthorized`, `invalid_json.validation_error`), so the many operations that answer the same
 * problems point at one definition.
 */
function shareProblemResponses(doc: Document): Document {
  const shared: Record<string, unknown> = {};
  for (const item of Object.values(doc.paths)) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const codes = problemCodesOf(response);
        if (!codes) continue;
        const name = codes.join('.');
        shared[name] ??= response;
        if (JSON.stringify(shared[name]) !== JSON.stringify(response))
          throw new Error(`Two different Problem responses for ${name}.`);
        operation.responses![status] = { $ref: `#/components/responses/${name}` };
      }
    }
  }
  const sorted = Object.fromEntries(
    Object.keys(shared)
      .sort()
      .map((k) => [k, shared[k]]),
  );
  doc.components = { ...doc.components, responses: sorted };
  return doc;
}

function problemCodesOf(response: unknown): string[] | undefined {
  const schema = (response as { content?: Record<string, { schema?: { allOf?: unknown[] } }> })
    .content?.['application/problem+json']?.schema;
  const narrowed = schema?.allOf?.[1] as
    { properties?: { code?: { enum?: string[] } } } | undefined;
  return narrowed?.properties?.code?.enum;
}

/** `anyOf: [{type: t, enum: [a]}, {type: t, const: b}, …]` → `{type: t, enum: [a, b, …]}`. */
function mergeEnums(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(mergeEnums);
  if (typeof node !== 'object' || node === null) return node;
  const o = Object.fromEntries(Object.entries(node).map(([k, v]) => [k, mergeEnums(v)])) as Record<
    string,
    unknown
  >;
  const members = o.anyOf;
  if (Array.isArray(members) && members.length > 0) {
    const single = members.map((m: Record<string, unknown>) => {
      const keys = Object.keys(m).filter((k) => k !== 'type');
      if (keys.length !== 1) return undefined;
      if (keys[0] === 'const') return { type: m.type, value: m.const };
      if (keys[0] === 'enum' && Array.isArray(m.enum) && m.enum.length === 1)
        return { type: m.type, value: m.enum[0] as unknown };
      return undefined;
    });
    const type = single[0]?.type;
    if (single.every((s) => s !== undefined && s.type === type)) {
      delete o.anyOf;
      return { type, enum: single.map((s) => s!.value), ...o };
    }
  }
  return o;
}

const extraOperations = new WeakMap<
  FastifyInstance,
  { path: string; method: string; operation: Record<string, unknown> }[]
>();

/**
 * Documents one more URL shape a route serves (e.g. the tiles under a signed image URL, which
 * Fastify routes through the same wildcard). `operation` is an OpenAPI operation object.
 */
export function documentOperation(
  app: FastifyInstance,
  path: string,
  method: string,
  operation: Record<string, unknown>,
): void {
  const list = extraOperations.get(app) ?? [];
  list.push({ path, method: method.toLowerCase(), operation });
  extraOperations.set(app, list);
}

/** The 204 of a DELETE: no body. */
export const DELETED: ResponseDoc = { description: 'Deleted; no body' };

/** A 201 (or 202) with the new record (or job) and its Location. */
export function created(description: string, schema: TSchema): ResponseDoc {
  return {
    description: `${description}; Location names it`,
    content: { 'application/json': schema.$id ? Ref(schema) : schema },
    headers: { Location: HEADERS.location, 'Idempotency-Status': HEADERS.idempotencyStatus },
  };
}
