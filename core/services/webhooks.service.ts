import { createHmac, randomBytes } from 'node:crypto';
import { ApiError } from '../domain/errors';
import { newId } from '../domain/ids';
import { monotonicNow } from '../domain/clock';
import { detached, type Db } from '../store/db';
import { getDrawingById, setDrawingStatus } from '../store/repositories/drawings.repository';
import {
  insertEventWithDeliveries,
  insertWebhook,
  subscribedWebhookIds,
} from '../store/repositories/webhooks.repository';
import type { Row } from '../store/repositories/row';
import { RESOURCES, type ResourceKind } from './resources';

// Webhooks (contract §10): subscriptions and the event outbox. Code that changes state calls
// `recordEvent` (or one of the typed helpers below) INSIDE the transaction that makes the change,
// so the event commits with it or not at all; the delivery loop (webhook-delivery.ts) sends it
// afterwards, at least once, with retries.

export const WEBHOOK_EVENT_TYPES = [
  'drawing.ready',
  'drawing.failed',
  'job.completed',
  'job.failed',
  'job.canceled',
  'overlay.created',
  'changes.analyzed',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * Webhook URL policy: `https://` to any host (a receiver on the office network is a normal
 * on-premises setup, and the URL is configuration chosen by the holder of an API key of the same
 * organization), plain `http://` only to the loopback host (local tools during development). No
 * credentials in the URL (it is returned by GET), no fragment, at most 2048 characters. Redirects
 * are never followed when delivering.
 */
export function checkWebhookUrl(raw: string): string {
  const fail = (why: string): never => {
    throw new ApiError('validation_error', `The webhook url ${why}.`, {
      errors: [{ field: '/url', code: 'invalid_url', message: why }],
    });
  };
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return fail('is not an absolute URL');
  }
  if (u.protocol === 'http:') {
    if (!LOOPBACK_HOSTS.has(u.hostname))
      fail('must use https:// (plain http:// is accepted only for 127.0.0.1, [::1] and localhost)');
  } else if (u.protocol !== 'https:') fail('must use https://');
  if (u.username || u.password) fail('must not contain credentials (user:password@)');
  if (u.hash) fail('must not contain a fragment (#...)');
  if (!u.hostname) fail('must name a host');
  return u.toString();
}

/** A new signing secret: `whsec_` + base64 of 32 random bytes (Standard Webhooks). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * The Standard Webhooks signature: `v1,` + base64(HMAC-SHA256(key, `${id}.${timestamp}.${body}`)),
 * where key is the base64-decoded part of the secret after `whsec_`. Timestamp in unix seconds.
 */
export function signWebhook(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export async function createWebhook(
  db: Db,
  organizationId: string,
  body: { url: string; events: string[] },
): Promise<{ row: Row; secret: string }> {
  const url = checkWebhookUrl(body.url);
  // Duplicates are harmless; store each type once, in the documented order.
  const events = WEBHOOK_EVENT_TYPES.filter((t) => body.events.includes(t));
  const secret = newWebhookSecret();
  return { row: await insertWebhook(db, organizationId, { url, events, secret }), secret };
}

// --- The outbox -----------------------------------------------------------------------------

const wakers = new WeakMap<Db, () => void>();

/** The delivery loop registers here to hear of new events at once (no polling delay). */
export function onEventRecorded(db: Db, wake: (() => void) | undefined): void {
  if (wake) wakers.set(db.root, wake);
  else wakers.delete(db.root);
}

export interface RecordedEvent {
  organization_id: string;
  type: WebhookEventType;
  data: Record<string, unknown>;
}

/**
 * Writes an event to the outbox with one delivery per subscribed webhook of its organization.
 * Call it inside the transaction that makes the change it reports (better-sqlite3 nests it as a
 * savepoint): it commits or rolls back with that change. Returns the event id, or null when no
 * webhook is subscribed (nothing is stored then).
 */
export async function recordEvent(db: Db, event: RecordedEvent): Promise<string | null> {
  if (!(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event.type))
    throw new Error(`Unknown webhook event type ${event.type}`);
  const webhookIds = await subscribedWebhookIds(db, event.organization_id, event.type);
  if (webhookIds.length === 0) return null;
  const id = newId('event');
  const createdAt = monotonicNow();
  const payload = JSON.stringify({ id, type: event.type, created_at: createdAt, data: event.data });
  await db.transaction(
    async (tx) =>
      await insertEventWithDeliveries(
        tx,
        { id, organizationId: event.organization_id, type: event.type, payload, createdAt },
        webhookIds,
      ),
  );
  const wake = wakers.get(db.root);
  // The loop reads through the store itself, so it sees the event once the caller's transaction
  // commits (a rolled-back event is simply not found).
  if (wake) detached(() => setImmediate(wake));
  return id;
}

/** The resource as GET returns it, minus signed URLs (they expire; fetch the resource for fresh ones). */
export function eventSnapshot(kind: ResourceKind, row: Row): Record<string, unknown> {
  const api = RESOURCES[kind].toApi(row, { signedUrl: () => null });
  for (const k of Object.keys(api)) if (k === 'uri' || k.endsWith('_uri')) delete api[k];
  return api;
}

const JOB_EVENT: Record<string, WebhookEventType | undefined> = {
  Completed: 'job.completed',
  Failed: 'job.failed',
  Canceled: 'job.canceled',
};

/**
 * job.completed / job.failed / job.canceled for a job that just became terminal; `job` is the API
 * job object. Every job, children included (`data.parent_id` tells them apart). Meant for the job
 * runner's onTerminal hook, which runs inside the transaction that writes the terminal status.
 */
export async function recordJobEvent(
  db: Db,
  organizationId: string,
  job: { status: string } & Record<string, unknown>,
): Promise<string | null> {
  const type = JOB_EVENT[job.status];
  if (!type) return null;
  return await recordEvent(db, { organization_id: organizationId, type, data: job });
}

/**
 * Sets a drawing's processing status and, when it becomes Ready or Failed (and was not already),
 * records drawing.ready / drawing.failed in the same transaction.
 */
export async function setDrawingStatusWithEvent(
  db: Db,
  drawingId: string,
  status: 'Processing' | 'Ready' | 'Failed',
  sheetCount?: number,
): Promise<void> {
  await db.transaction(async (tx) => {
    const before = await getDrawingById(tx, drawingId);
    await setDrawingStatus(tx, drawingId, status, sheetCount);
    if (!before || before.status === status || status === 'Processing') return;
    const after = (await getDrawingById(tx, drawingId))!;
    await recordEvent(tx, {
      organization_id: String(after.organization_id),
      type: status === 'Ready' ? 'drawing.ready' : 'drawing.failed',
      data: eventSnapshot('drawing', after),
    });
  });
}

/** overlay.created: call in the transaction that inserts the overlay row (data: the overlay, no URLs). */
export async function recordOverlayCreated(db: Db, overlay: Row): Promise<string | null> {
  return await recordEvent(db, {
    organization_id: String(overlay.organization_id),
    type: 'overlay.created',
    data: eventSnapshot('overlay', overlay),
  });
}

/**
 * changes.analyzed: call in the transaction that stores an overlay's change regions, with the
 * overlay row as it is after the write. data: {overlay_id, project_id, job_id, change_count, overlay}.
 */
export async function recordChangesAnalyzed(
  db: Db,
  overlay: Row,
  jobId?: string | null,
): Promise<string | null> {
  return await recordEvent(db, {
    organization_id: String(overlay.organization_id),
    type: 'changes.analyzed',
    data: {
      overlay_id: overlay.id,
      project_id: overlay.project_id,
      job_id: jobId ?? null,
      change_count: overlay.change_count,
      overlay: eventSnapshot('overlay', overlay),
    },
  });
}
