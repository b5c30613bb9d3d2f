import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, PROBLEMS, type ProblemCode } from '../domain/errors';

// Turns any error into RFC 9457 Problem Details (contract §3). No stack trace, SQL or path ever
// reaches a response: unknown errors become `internal_error` with a generic detail; the real error
// is logged with the request id.

export function problemBody(
  error: ApiError,
  requestId: string,
  instance: string,
): Record<string, unknown> {
  const def = PROBLEMS[error.code];
  return {
    type: `/problems/${error.code}`,
    title: def.title,
    status: def.status,
    detail: error.detail,
    instance,
    code: error.code,
    request_id: requestId,
    ...(error.errors ? { errors: error.errors } : {}),
    ...(error.extra ?? {}),
  };
}

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  validation?: {
    instancePath?: string;
    keyword?: string;
    message?: string;
    params?: Record<string, unknown>;
  }[];
  validationContext?: string;
  message?: string;
}

/** Maps framework errors (body parsing, validation, limits) to our codes with precise details. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = (err ?? {}) as FastifyLikeError;
  if (e.validation) return validationError(e);
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(
        'unsupported_media_type',
        'This route accepts only Content-Type: application/json.',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'The JSON body is larger than the 1 MiB limit.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_json', 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_json', 'The Content-Length header does not match the body.');
    default:
      break;
  }
  if (typeof e.statusCode === 'number' && e.statusCode === 413) {
    return new ApiError('payload_too_large', 'The request body is larger than the limit.');
  }
  if (typeof e.statusCode === 'number' && e.statusCode === 415) {
    return new ApiError(
      'unsupported_media_type',
      'The Content-Type of this request is not accepted on this route.',
    );
  }
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    // Any other client error raised by the framework (malformed headers, bad URL encoding, ...).
    return new ApiError('validation_error', 'The request is malformed.');
  }
  return new ApiError(
    'internal_error',
    'An unexpected error occurred; it was logged with the request id.',
  );
}

type AjvIssue = NonNullable<FastifyLikeError['validation']>[number];

const isNullTypeIssue = (v: AjvIssue) => v.keyword === 'type' && v.params?.type === 'null';

/**
 * Ajv reports a value that fits neither branch of a nullable field (`T | null`) three times: T's
 * own complaint, "must be null" and "must match a schema in anyOf". One error says it better: T's,
 * with "or null" added. Returns the issues to report and the paths of the nullable fields.
 */
function collapseNullable(issues: AjvIssue[]): { issues: AjvIssue[]; nullable: Set<string> } {
  const anyOfAt = new Set(issues.filter((v) => v.keyword === 'anyOf').map((v) => v.instancePath));
  const nullable = new Set(
    issues
      .filter((v) => isNullTypeIssue(v) && anyOfAt.has(v.instancePath))
      .map((v) => v.instancePath ?? ''),
  );
  return {
    issues: issues.filter(
      (v) => !nullable.has(v.instancePath ?? '') || (v.keyword !== 'anyOf' && !isNullTypeIssue(v)),
    ),
    nullable,
  };
}

/** What a string format asks for, in words a user can act on (Ajv says `must match format "date"`). */
const FORMAT_MESSAGES: Record<string, string> = {
  date: 'must be a calendar date as YYYY-MM-DD (e.g. 2013-07-18)',
  'date-time': 'must be an RFC 3339 date-time (e.g. 2026-11-21T09:30:00.123Z)',
};

function validationError(e: FastifyLikeError): ApiError {
  const where = e.validationContext ?? 'body';
  const { issues, nullable } = collapseNullable(e.validation ?? []);
  const errors = issues.map((v) => {
    let field = v.instancePath || '';
    if (v.keyword === 'required' && v.params && typeof v.params.missingProperty === 'string') {
      field = `${field}/${v.params.missingProperty}`;
    }
    if (
      v.keyword === 'additionalProperties' &&
      v.params &&
      typeof v.params.additionalProperty === 'string'
    ) {
      field = `${field}/${v.params.additionalProperty}`;
    }
    const format = v.keyword === 'format' ? FORMAT_MESSAGES[String(v.params?.format)] : undefined;
    const base =
      v.keyword === 'additionalProperties'
        ? 'is not an accepted field'
        : v.keyword === 'required'
          ? 'is required'
          : (format ?? v.message ?? 'is invalid');
    const message = nullable.has(v.instancePath ?? '') ? `${base} or null` : base;
    return {
      field: where === 'body' ? field || '/' : field.replace(/^\//, '') || where,
      code: v.keyword ?? 'invalid',
      message,
    };
  });
  const first = errors[0];
  const detail = first
    ? `${where === 'body' ? 'Body field' : 'Parameter'} '${first.field}' ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : ''}.`
    : 'The request is invalid.';
  if (where === 'params') return new ApiError('not_found', 'No such record in this organization.');
  return new ApiError(where === 'querystring' ? 'invalid_parameter' : 'validation_error', detail, {
    errors,
  });
}

export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  error: ApiError,
): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  const instance = (request.raw.url ?? '/').split('?')[0]!.slice(0, 500);
  return reply
    .code(error.status)
    .type('application/problem+json')
    .send(JSON.stringify(problemBody(error, String(request.id), instance)));
}

export function problemCodeFromPath(code: string): ProblemCode | undefined {
  return Object.hasOwn(PROBLEMS, code) ? (code as ProblemCode) : undefined;
}
