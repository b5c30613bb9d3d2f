// One error model for the whole service (contract §3). Code paths throw `ApiError`; one handler in
// http/ turns it into Problem Details. The renderer and other clients switch on `code`, never on text.

export interface ProblemDefinition {
  status: number;
  title: string;
  /** Shown at GET /problems/<code>: what it means and what to do about it. */
  description: string;
}

/**
 * Deepest nesting of arrays and objects a JSON request body may have (the body parser refuses deeper
 * ones with invalid_json). No request of the API nests more than a few levels; a 1 MiB body could nest
 * ~500,000 deep, which every recursive consumer after the parser (idempotency's canonical JSON,
 * validation, logging) would overflow the stack on.
 */
export const JSON_MAX_DEPTH = 64;

export const PROBLEMS = {
  invalid_json: {
    status: 400,
    title: 'Invalid JSON',
    description:
      `The request body is not valid JSON, or nests arrays and objects more than ${JSON_MAX_DEPTH} levels deep. ` +
      'Send a JSON object with Content-Type: application/json.',
  },
  validation_error: {
    status: 400,
    title: 'Validation error',
    description:
      'One or more body fields are missing, of the wrong type, out of range or not one of the allowed values. `errors` lists each field as a JSON pointer.',
  },
  missing_parameter: {
    status: 400,
    title: 'Missing parameter',
    description:
      'A required query parameter is absent (for example project_id on /drawings and /files).',
  },
  invalid_parameter: {
    status: 400,
    title: 'Invalid parameter',
    description:
      'A query parameter is malformed: a bad datetime, a bad boolean, an unknown enum value, or a limit below 1 or not an integer.',
  },
  invalid_cursor: {
    status: 400,
    title: 'Invalid cursor',
    description:
      'The cursor is malformed, tampered with, expired (after 24 hours), from another endpoint, or contradicted by filters repeated beside it. Start again from the first page.',
  },
  invalid_expand: {
    status: 400,
    title: 'Invalid expand',
    description:
      'An expand path is not expandable on this resource. The detail lists the allowed paths.',
  },
  expand_too_deep: {
    status: 400,
    title: 'Expansion too deep',
    description: 'An expand path has more than 3 levels.',
  },
  invalid_idempotency_key: {
    status: 400,
    title: 'Invalid idempotency key',
    description:
      'The Idempotency-Key header is empty, longer than 256 characters, or contains characters outside A-Z, a-z, 0-9, hyphen and underscore.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    description:
      'The API key is missing, malformed, unknown or revoked. Send Authorization: Bearer <key>.',
  },
  insufficient_credits: {
    status: 402,
    title: 'Insufficient credits',
    description:
      'The Vision operation costs more credits than the organization has available. The body adds `required` and `available`.',
  },
  https_required: {
    status: 403,
    title: 'HTTPS required',
    description: 'The service only speaks HTTPS. Use https:// with the same host and port.',
  },
  invalid_signature: {
    status: 403,
    title: 'Invalid signature',
    description:
      'The signed URL was altered or has expired. Fetch the resource again for a fresh URL.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    description: 'No such record in this organization, or no such route.',
  },
  method_not_allowed: {
    status: 405,
    title: 'Method not allowed',
    description:
      'The route exists but not with this method. The Allow header lists the methods it accepts.',
  },
  idempotency_key_conflict: {
    status: 409,
    title: 'Idempotency key conflict',
    description:
      'The Idempotency-Key was already used with a different method, route or body within the last 24 hours. Use a new key for a new request.',
  },
  conflict: {
    status: 409,
    title: 'Conflict',
    description:
      "The request contradicts the record's state (for example canceling a finished job or deleting a file in use).",
  },
  payload_too_large: {
    status: 413,
    title: 'Payload too large',
    description: 'The upload or JSON body is over the limit.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'Unsupported media type',
    description:
      'The Content-Type is not accepted on this route, or the file bytes are not of the declared type.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    description:
      'The API key sent more requests than its rate limit allows. Retry after Retry-After seconds.',
  },
  // Why a drawing could not be processed (the `error` of a Failed `process` job; status 422).
  corrupt_file: {
    status: 422,
    title: 'Corrupt file',
    description:
      'The file could not be parsed although its first bytes name a PDF, PNG, JPEG or TIFF. Export it again and upload the new file.',
  },
  truncated_file: {
    status: 422,
    title: 'Truncated file',
    description:
      'The file ends before its end: the upload or the export did not complete. Upload it again.',
  },
  encrypted_pdf: {
    status: 422,
    title: 'Encrypted PDF',
    description:
      'The PDF needs a password to open. Export or print it without a password and upload that file.',
  },
  no_pages: { status: 422, title: 'No pages', description: 'The document has no pages.' },
  too_many_pages: {
    status: 422,
    title: 'Too many pages',
    description:
      'The document has more pages than the pages-per-drawing limit. Split the set or raise the limit.',
  },
  page_too_large: {
    status: 422,
    title: 'Page too large',
    description:
      'A page would rasterize to more pixels than the per-page limit; it was refused before decoding.',
  },
  decompression_bomb: {
    status: 422,
    title: 'Image too large',
    description:
      'An image declares far more pixels than its data can hold or than the limit allows; it was refused before decoding.',
  },
  unsupported_type: {
    status: 422,
    title: 'Unsupported file type',
    description: 'The bytes are not a PDF, PNG, JPEG or TIFF.',
  },
  processing_timeout: {
    status: 422,
    title: 'Processing timed out',
    description: 'Parsing or rendering did not finish within the time budget.',
  },
  resource_limit_exceeded: {
    status: 422,
    title: 'Resource limit exceeded',
    description:
      'Processing this input needed more memory than a worker may use; the work was stopped and the service carries on.',
  },
  processor_crashed: {
    status: 422,
    title: 'File crashed the processor',
    description:
      'Processing this file crashed the renderer (its worker thread, or the service process several times in a row while nothing else ran); it was stopped rather than retried forever. Export the file again or split it, and upload the new file.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description: 'A bug in the service. It was logged with the request id; please report it.',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    description: 'The service is shutting down or not ready yet. Retry after Retry-After seconds.',
  },
} as const satisfies Record<string, ProblemDefinition>;

export type ProblemCode = keyof typeof PROBLEMS;

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

export class ApiError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly detail: string;
  readonly errors: FieldError[] | undefined;
  /** Extra members added to the Problem Details body (e.g. `required`, `available`). */
  readonly extra: Record<string, unknown> | undefined;
  /** Extra response headers (e.g. `Allow`, `Retry-After`). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ProblemCode,
    detail: string,
    opts: {
      errors?: FieldError[];
      extra?: Record<string, unknown>;
      headers?: Record<string, string>;
    } = {},
  ) {
    super(detail);
    this.name = 'ApiError';
    this.code = code;
    this.status = PROBLEMS[code].status;
    this.detail = detail;
    this.errors = opts.errors;
    this.extra = opts.extra;
    this.headers = opts.headers;
  }
}

export const notFound = (what: string, id: string): ApiError =>
  new ApiError('not_found', `No ${what} with id '${id}' exists in this organization.`);

export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(PROBLEMS, code);
}
