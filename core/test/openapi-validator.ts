import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

// Checks HTTP responses against the OpenAPI 3.1 document the service serves: the request must be
// a documented operation, the status one of its documented responses, the media type one it
// declares (no body where it declares none), and a JSON body must match the declared schema.
// Schemas are compiled by Ajv straight from the document (OpenAPI 3.1 schemas are JSON Schema
// 2020-12), so `$ref`s into components resolve as any client generator would resolve them.

export interface ObservedResponse {
  method: string;
  /** Path with query, or an absolute URL. */
  url: string;
  status: number;
  contentType?: string | undefined;
  /** The body text. */
  body: string;
}

interface Operation {
  operationId: string;
  method: string;
  template: string;
  /** Tried in order: params within one segment, then params spanning segments (blob keys). */
  patterns: RegExp[];
  responses: Record<string, unknown>;
}

type Doc = {
  paths: Record<
    string,
    Record<string, { operationId: string; responses: Record<string, unknown> }>
  >;
  components?: { responses?: Record<string, unknown> };
};

const DOC_ID = 'openapi.json';
const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiValidator {
  readonly operations: Operation[] = [];
  /** operationId → statuses seen. */
  readonly seen = new Map<string, Set<string>>();
  responsesChecked = 0;
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Doc) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema(doc as object, DOC_ID);
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const literal = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
        const pattern = (param: string) => new RegExp(`^${literal.replace(/\{[^}]+\}/g, param)}$`);
        this.operations.push({
          operationId: op.operationId,
          method: method.toUpperCase(),
          template,
          patterns: [pattern('[^/]+'), pattern('.+')],
          responses: op.responses,
        });
      }
    }
    // The longest literal text first: /v1/blobs/{key}/tiles/… before /v1/blobs/{key}.
    const literalLength = (t: string) => t.replace(/\{[^}]+\}/g, '').length;
    this.operations.sort((a, b) => literalLength(b.template) - literalLength(a.template));
  }

  /** The documented operation that serves `method` `url`, if any. */
  operation(method: string, url: string): Operation | undefined {
    const path = new URL(url, 'https://x').pathname;
    for (const round of [0, 1])
      for (const op of this.operations)
        if (op.method === method.toUpperCase() && op.patterns[round]!.test(path)) return op;
    return undefined;
  }

  /** What is wrong with `res` according to the document (nothing: an empty list). */
  check(res: ObservedResponse): string[] {
    const what = `${res.method} ${new URL(res.url, 'https://x').pathname} → ${res.status}`;
    const op = this.operation(res.method, res.url);
    if (!op) return [`${what}: no documented operation`];
    this.responsesChecked++;
    const statuses = this.seen.get(op.operationId) ?? new Set<string>();
    this.seen.set(op.operationId, statuses);
    statuses.add(String(res.status));
    const status = String(res.status);
    let response = op.responses[status] ?? op.responses[`${status[0]}XX`];
    if (!response)
      return [
        `${what}: status ${res.status} is not documented for ${op.operationId} (documented: ${Object.keys(op.responses).join(', ')})`,
      ];
    let pointer = `#/paths/${escapePointer(op.template)}/${op.method.toLowerCase()}/responses/${status}`;
    const ref = (response as { $ref?: string }).$ref;
    if (ref) {
      pointer = ref;
      response = this.doc.components?.responses?.[ref.split('/').pop()!];
      if (!response) return [`${what}: unresolved ${ref}`];
    }
    const content = (response as { content?: Record<string, unknown> }).content;
    const isHead = res.method.toUpperCase() === 'HEAD';
    if (!content) {
      return res.body.length === 0 || isHead
        ? []
        : [`${what}: the document declares no body, got ${res.body.slice(0, 100)}`];
    }
    if (isHead) return [];
    const media = (res.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const declared = Object.keys(content).find((m) => mediaMatches(m, media));
    if (!declared)
      return [`${what}: media type '${media}' is not one of ${Object.keys(content).join(', ')}`];
    if (!/[/+]json$/.test(declared)) return [];
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return [`${what}: the body is not JSON: ${res.body.slice(0, 100)}`];
    }
    const validate = this.validator(`${pointer}/content/${escapePointer(declared)}/schema`);
    if (validate(body)) return [];
    return [
      `${what}: the body does not match ${op.operationId}'s ${status} schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`,
    ];
  }

  private validator(pointer: string): ValidateFunction {
    let v = this.compiled.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `${DOC_ID}${pointer}` });
      this.compiled.set(pointer, v);
    }
    return v;
  }
}

function mediaMatches(declared: string, actual: string): boolean {
  if (declared === '*/*' || declared === actual) return true;
  return declared.endsWith('/*') && actual.startsWith(declared.slice(0, -1));
}
