import { ApiError } from '../../domain/errors';

// Per-key fixed one-minute windows (contract §9: 600/min document area, 120/min Vision), with
// IETF RateLimit headers on every response and `429 rate_limited` + Retry-After when exhausted.

export type Area = 'document' | 'vision';

export interface RateLimits {
  document: number;
  vision: number;
}

export class RateLimiter {
  private windows = new Map<string, { start: number; count: number }>();

  constructor(
    private readonly limits: RateLimits,
    private readonly windowMs = 60_000,
  ) {}

  /** Counts one request; returns the headers to send, or throws 429. */
  take(keyId: string, area: Area, now = Date.now()): Record<string, string> {
    const limit = this.limits[area];
    const id = `${keyId}:${area}`;
    let w = this.windows.get(id);
    if (!w || now - w.start >= this.windowMs) {
      w = { start: now, count: 0 };
      this.windows.set(id, w);
    }
    const reset = Math.max(1, Math.ceil((w.start + this.windowMs - now) / 1000));
    const headers = {
      'ratelimit-limit': String(limit),
      'ratelimit-policy': `${limit};w=${Math.round(this.windowMs / 1000)}`,
      'ratelimit-remaining': String(Math.max(0, limit - w.count - 1)),
      'ratelimit-reset': String(reset),
    };
    if (w.count >= limit) {
      throw new ApiError(
        'rate_limited',
        `This API key sent more than ${limit} ${area === 'vision' ? 'Vision' : 'document-area'} requests in a minute; retry in ${reset} s.`,
        { headers: { ...headers, 'ratelimit-remaining': '0', 'retry-after': String(reset) } },
      );
    }
    w.count += 1;
    if (this.windows.size > 10_000) this.sweep(now);
    return headers;
  }

  private sweep(now: number): void {
    for (const [k, w] of this.windows) if (now - w.start >= this.windowMs) this.windows.delete(k);
  }
}
