import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../domain/errors';

// Opaque list cursors (contract §2): base64url(JSON payload) + "." + base64url(HMAC-SHA256).
// A cursor carries the API version, the endpoint, the organization, the filters, the limit, the
// position and its expiry; anything altered breaks the signature.

export const CURSOR_TTL_MS = 24 * 60 * 60 * 1000;

export interface CursorPayload {
  v: 1;
  /** Endpoint the cursor belongs to (e.g. "/v1/projects"). */
  e: string;
  /** Organization that issued it. */
  o: string;
  /** Filters (query name → raw value). */
  f: Record<string, string>;
  /** Remembered limit. */
  l: number;
  /** Expand parameter, if any. */
  x?: string;
  /** Position: created_at and id of the boundary row. */
  k: [string, string];
  /** Direction: 'a' = rows after (older than) the key, 'b' = rows before (newer). */
  d: 'a' | 'b';
  /** Expiry, ms since epoch. */
  t: number;
}

export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  encode(payload: Omit<CursorPayload, 'v' | 't'>, now = Date.now()): string {
    const full: CursorPayload = { v: 1, ...payload, t: now + CURSOR_TTL_MS };
    const body = Buffer.from(JSON.stringify(full)).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  decode(
    cursor: string,
    endpoint: string,
    organizationId: string,
    now = Date.now(),
  ): CursorPayload {
    const invalid = (why: string) =>
      new ApiError('invalid_cursor', `The cursor ${why}; start again from the first page.`);
    if (cursor.length === 0 || cursor.length > 4096) throw invalid('is empty or too long');
    const dot = cursor.indexOf('.');
    if (dot <= 0) throw invalid('is malformed');
    const body = cursor.slice(0, dot);
    // Compare the signature as text, not as decoded bytes: a base64 decoder ignores stray
    // characters and the unused low bits of the last character, so an altered cursor would pass.
    const sig = Buffer.from(cursor.slice(dot + 1), 'utf8');
    const expected = Buffer.from(this.mac(body), 'utf8');
    if (sig.length !== expected.length || !timingSafeEqual(sig, expected))
      throw invalid('was altered or was not issued by this service');
    let payload: CursorPayload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as CursorPayload;
    } catch {
      throw invalid('is malformed');
    }
    if (payload.v !== 1) throw invalid('was issued by another API version');
    if (payload.e !== endpoint) throw invalid(`belongs to ${payload.e}, not ${endpoint}`);
    if (payload.o !== organizationId) throw invalid('was issued to another organization');
    if (typeof payload.t !== 'number' || payload.t < now)
      throw invalid('has expired (cursors live 24 hours)');
    return payload;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.secret).update(body).digest('base64url');
  }
}
