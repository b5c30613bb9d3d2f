import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Db } from '../store/db';
import {
  claimDueDeliveries,
  nextDueAt,
  pruneDeliveries,
  recordAttempt,
  releaseDelivery,
  type DueDelivery,
} from '../store/repositories/webhooks.repository';
import type { Logger } from './context';
import { onEventRecorded, signWebhook } from './webhooks.service';

// The delivery loop (contract §10): in-process, driven by a timer set to the next due delivery
// plus an immediate wake-up when an event is recorded. It POSTs each pending delivery of the
// persisted outbox, signs it (Standard Webhooks), and on anything but a 2xx retries with
// exponential backoff and jitter until the retry window (24 h from the event) ends, then records
// the delivery `failed`. The outbox is in the store, so a restart loses nothing: `start` picks up
// every pending delivery. `stop` aborts attempts in flight and gives them back uncounted.
//
// Any number of loops may serve one store (every API process of a team server runs one): each
// attempt is claimed atomically with a token and a lease (`claimDueDeliveries`), so one attempt of
// a delivery is in flight at a time, and its outcome is recorded only while its claim holds. A
// process that dies mid-attempt leaves the delivery due again when the lease ends
// (`timeoutMs + leaseMarginMs`), and another loop sends it again with the same event id
// (`webhook-id`): at-least-once, as contract §10 says; receivers de-duplicate on that id. The
// contract names no ordering; due deliveries are claimed oldest first.
//
// Outbound requests: node:http/https with no agent reuse, no redirects followed (a 3xx is a
// failed attempt), TLS verified, a per-attempt timeout covering connect + response, and at most
// `maxResponseBytes` of the response read (the body is not stored, only the status code).

export interface WebhookDeliveryOptions {
  /** Per-attempt budget for connecting, sending and receiving the response status. Default 10 s. */
  timeoutMs: number;
  /** Delay after the first failed attempt; each further failure multiplies it by backoffFactor. Default 30 s. */
  backoffBaseMs: number;
  backoffFactor: number;
  /** Longest delay between two attempts. Default 2 h. */
  backoffMaxMs: number;
  /** Each delay is scaled by a random factor in [1 - jitter, 1 + jitter]. Default 0.2. */
  jitter: number;
  /** Attempts continue until this long after the event was recorded, then the delivery fails. Default 24 h. */
  retryWindowMs: number;
  /** Attempts in flight at once. Default 4. */
  concurrency: number;
  /** Response bytes read at most before the connection is closed. Default 64 KiB. */
  maxResponseBytes: number;
  /**
   * An attempt's claim lasts timeoutMs + this; past it, another loop may take the delivery over.
   * Covers recording the outcome after the response. Default 5 s.
   */
  leaseMarginMs: number;
  /** Safety poll (deliveries written by another process). Default 30 s. */
  pollIntervalMs: number;
  /** Finished deliveries older than this are pruned. Default 30 days. */
  retentionMs: number;
}

export const DEFAULT_WEBHOOK_DELIVERY: WebhookDeliveryOptions = {
  timeoutMs: 10_000,
  backoffBaseMs: 30_000,
  backoffFactor: 2,
  backoffMaxMs: 2 * 3600_000,
  jitter: 0.2,
  retryWindowMs: 24 * 3600_000,
  concurrency: 4,
  maxResponseBytes: 64 * 1024,
  leaseMarginMs: 5_000,
  pollIntervalMs: 30_000,
  retentionMs: 30 * 24 * 3600_000,
};

export interface WebhookDelivery {
  start(): void;
  stop(): Promise<void>;
  /** Look for due deliveries now. */
  wake(): void;
}

/** Delay before attempt `failures + 1`, after `failures` failed attempts (1-based). */
export function backoffDelayMs(
  o: Pick<WebhookDeliveryOptions, 'backoffBaseMs' | 'backoffFactor' | 'backoffMaxMs' | 'jitter'>,
  failures: number,
  random = Math.random(),
): number {
  const raw = Math.min(
    o.backoffMaxMs,
    o.backoffBaseMs * o.backoffFactor ** Math.max(0, failures - 1),
  );
  return Math.max(0, Math.round(raw * (1 - o.jitter + 2 * o.jitter * random)));
}

interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  /** Cut short by stop(): not an attempt of the receiver's. */
  aborted?: boolean;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function createWebhookDelivery(env: {
  db: Db;
  log: Logger;
  options?: Partial<WebhookDeliveryOptions>;
}): WebhookDelivery {
  const { db, log } = env;
  const o: WebhookDeliveryOptions = { ...DEFAULT_WEBHOOK_DELIVERY, ...env.options };
  const inFlight = new Map<string, { ac: AbortController; done: Promise<void> }>();
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let pumpScheduled = false;
  let lastPrune = 0;

  function schedule(): void {
    if (!running || pumpScheduled) return;
    pumpScheduled = true;
    setImmediate(() => {
      pumpScheduled = false;
      void pump();
    });
  }

  let pumping = false;
  let pumpAgain = false;

  /** One pass at a time per loop (so `concurrency` holds); a wake-up meanwhile runs one more. */
  async function pump(): Promise<void> {
    if (pumping) {
      pumpAgain = true;
      return;
    }
    pumping = true;
    try {
      do {
        pumpAgain = false;
        await pumpOnce();
      } while (pumpAgain && running);
    } finally {
      pumping = false;
    }
  }

  async function pumpOnce(): Promise<void> {
    if (!running || !db.open) return;
    try {
      const now = Date.now();
      if (now - lastPrune > 3600_000) {
        lastPrune = now;
        await pruneDeliveries(db, iso(now - o.retentionMs));
      }
      const free = o.concurrency - inFlight.size;
      if (free > 0) {
        // The lease: if this process dies mid-attempt the row is due again after it.
        const claimed = await claimDueDeliveries(db, {
          nowIso: iso(now),
          leaseUntil: iso(now + o.timeoutMs + o.leaseMarginMs),
          limit: free,
          token: randomUUID(),
        });
        for (const d of claimed) {
          const ac = new AbortController();
          const entry = { ac, done: Promise.resolve() };
          inFlight.set(d.id, entry);
          entry.done = attempt(d, ac.signal)
            .catch((err: unknown) =>
              log.error({ err, delivery_id: d.id }, 'Webhook attempt could not be recorded'),
            )
            .finally(() => {
              inFlight.delete(d.id);
              schedule();
            });
        }
      }
      await armTimer();
    } catch (err) {
      log.error({ err }, 'Webhook delivery loop failed; retrying at the next poll');
      await armTimer().catch(() => {});
    }
  }

  async function armTimer(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (!running) return;
    let delay = o.pollIntervalMs;
    if (inFlight.size < o.concurrency) {
      const next = await nextDueAt(db);
      if (next) delay = Math.min(delay, Math.max(0, Date.parse(next) - Date.now()));
    }
    timer = setTimeout(() => void pump(), delay);
    timer.unref();
  }

  async function attempt(d: DueDelivery, signal: AbortSignal): Promise<void> {
    const timestamp = Math.floor(Date.now() / 1000);
    const result = await send(d, timestamp, signal);
    if (result.aborted) {
      // Stopping: the attempt does not count; it is due again at the next start.
      if (db.open) await releaseDelivery(db, d.id, d.claim_token, iso(Date.now()));
      return;
    }
    const now = Date.now();
    const failures = d.attempts + 1;
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const meta = {
      webhook_id: d.webhook_id,
      event_id: d.event_id,
      delivery_id: d.id,
      type: d.type,
      attempt: failures,
      status_code: result.statusCode,
    };
    if (!db.open) return;
    const record = async (outcome: Parameters<typeof recordAttempt>[3]): Promise<boolean> => {
      if (await recordAttempt(db, d.id, d.claim_token, outcome)) return true;
      // The lease ended before this attempt did and another loop claimed the delivery: its
      // attempt decides; this one's outcome is only logged.
      log.warn(
        { ...meta, outcome: outcome.status },
        'Webhook attempt outlived its claim; not recorded',
      );
      return false;
    };
    if (ok) {
      await record({
        status: 'delivered',
        statusCode: result.statusCode,
        error: null,
        nextAttemptAt: null,
        at: iso(now),
      });
      log.info(meta, 'Webhook delivered');
      return;
    }
    const deadline = Date.parse(d.event_created_at) + o.retryWindowMs;
    if (now >= deadline) {
      const error = `${result.error ?? 'failed'}; gave up after ${failures} attempt${failures === 1 ? '' : 's'} (retry window of ${Math.round(o.retryWindowMs / 3600_000)} h ended)`;
      await record({
        status: 'failed',
        statusCode: result.statusCode,
        error,
        nextAttemptAt: null,
        at: iso(now),
      });
      log.warn({ ...meta, error }, 'Webhook delivery failed for good');
      return;
    }
    // The last attempt lands on the window's end, so a receiver back just before it still gets the event.
    const next = Math.min(now + backoffDelayMs(o, failures), deadline);
    await record({
      status: 'pending',
      statusCode: result.statusCode,
      error: result.error,
      nextAttemptAt: iso(next),
      at: iso(now),
    });
    log.warn(
      { ...meta, error: result.error, next_attempt_at: iso(next) },
      'Webhook attempt failed; will retry',
    );
  }

  function send(d: DueDelivery, timestamp: number, signal: AbortSignal): Promise<AttemptResult> {
    return new Promise((resolve) => {
      let settled = false;
      let statusCode: number | null = null;
      let req: http.ClientRequest | undefined;
      const finish = (error: string | null, aborted = false) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        signal.removeEventListener('abort', onAbort);
        req?.destroy();
        const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
        resolve({
          statusCode,
          error: ok ? null : (error ?? `HTTP ${statusCode}`),
          aborted: aborted && !ok,
        });
      };
      const onAbort = () => finish('aborted: the service is stopping', true);
      const deadline = setTimeout(() => finish(`timed out after ${o.timeoutMs} ms`), o.timeoutMs);
      let url: URL;
      try {
        url = new URL(d.url);
      } catch {
        finish('invalid url');
        return;
      }
      const body = Buffer.from(d.payload, 'utf8');
      const headers = {
        'content-type': 'application/json',
        'content-length': String(body.length),
        'user-agent': 'Blueline-Webhooks/1',
        'webhook-id': d.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(d.secret, d.event_id, timestamp, d.payload),
      };
      const client = url.protocol === 'https:' ? https : http;
      try {
        req = client.request(url, { method: 'POST', headers, agent: false }, onResponse);
      } catch (err) {
        finish(describeError(err as NodeJS.ErrnoException));
        return;
      }
      req.on('error', (err: NodeJS.ErrnoException) => finish(describeError(err)));
      function onResponse(res: http.IncomingMessage): void {
        statusCode = res.statusCode ?? null;
        let read = 0;
        const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // The status decides the outcome; a receiver's long body is not our business.
          if (read > o.maxResponseBytes) finish(null);
        });
        res.on('end', () =>
          finish(redirect ? `HTTP ${statusCode} (redirects are not followed)` : null),
        );
        res.on('error', () => finish(null));
        res.on('close', () => finish(null));
      }
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      req.end(body);
    });
  }

  const api: WebhookDelivery = {
    start() {
      if (running) return;
      running = true;
      onEventRecorded(db, schedule);
      schedule();
    },
    async stop() {
      if (!running) return;
      running = false;
      onEventRecorded(db, undefined);
      if (timer) clearTimeout(timer);
      timer = undefined;
      const pending = [...inFlight.values()];
      for (const e of pending) e.ac.abort();
      await Promise.allSettled(pending.map((e) => e.done));
    },
    wake: schedule,
  };
  return api;
}

/** A short, secret-free description of a connection error (the log and the delivery row show it). */
function describeError(err: NodeJS.ErrnoException): string {
  const code = err.code ? `${err.code}: ` : '';
  return `${code}${err.message}`.slice(0, 300);
}
