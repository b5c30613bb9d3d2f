import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';
import type { Row } from './row';

// Webhook subscriptions, the event outbox and the delivery rows (migration 004). Every query that
// a request reaches is scoped by organization_id; the delivery loop's queries are not (it serves
// every organization) and never leave this module as API objects.

export interface NewWebhook {
  url: string;
  events: readonly string[];
  secret: string;
}

export async function insertWebhook(db: Db, organizationId: string, w: NewWebhook): Promise<Row> {
  const id = newId('webhook');
  const now = monotonicNow();
  await db
    .prepare(
      'INSERT INTO webhooks (id, organization_id, url, events, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    )
    .run(id, organizationId, w.url, JSON.stringify(w.events), w.secret, now, now);
  return (await db.prepare('SELECT * FROM webhooks WHERE id = ?').get(id)) as Row;
}

export async function getWebhook(
  db: Db,
  organizationId: string,
  id: string,
): Promise<Row | undefined> {
  return (await db
    .prepare('SELECT * FROM webhooks WHERE id = ? AND organization_id = ?')
    .get(id, organizationId)) as Row | undefined;
}

/** Deletes the webhook; its delivery rows go with it (ON DELETE CASCADE), so nothing more is sent. */
export async function deleteWebhook(db: Db, organizationId: string, id: string): Promise<boolean> {
  return (
    (
      await db
        .prepare('DELETE FROM webhooks WHERE id = ? AND organization_id = ?')
        .run(id, organizationId)
    ).changes === 1
  );
}

/** Ids of the organization's webhooks subscribed to `type`. */
export async function subscribedWebhookIds(
  db: Db,
  organizationId: string,
  type: string,
): Promise<string[]> {
  // `events` is a JSON array of type names; each engine reads it with its own JSON function.
  const elements =
    db.dialect === 'sqlite'
      ? 'SELECT value FROM json_each(webhooks.events)'
      : 'SELECT json_array_elements_text(webhooks.events::json) AS value';
  const rows = (await db
    .prepare(
      `SELECT id FROM webhooks WHERE organization_id = ? AND EXISTS (SELECT 1 FROM (${elements}) AS e WHERE e.value = ?) ORDER BY id`,
    )
    .all(organizationId, type)) as { id: string }[];
  return rows.map((r) => r.id);
}

export interface NewEvent {
  id: string;
  organizationId: string;
  type: string;
  /** The exact request body every attempt sends (signed as is). */
  payload: string;
  createdAt: string;
}

/** Writes the event and one pending delivery per webhook, due at once. Call inside the caller's transaction. */
export async function insertEventWithDeliveries(
  db: Db,
  e: NewEvent,
  webhookIds: readonly string[],
): Promise<void> {
  await db
    .prepare(
      'INSERT INTO webhook_events (id, organization_id, type, payload, created_at) VALUES (?, ?, ?, ?, ?)',
    )
    .run(e.id, e.organizationId, e.type, e.payload, e.createdAt);
  const insert =
    db.prepare(`INSERT INTO webhook_deliveries (id, organization_id, webhook_id, event_id, type, status, attempts, next_attempt_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`);
  for (const webhookId of webhookIds) {
    const now = monotonicNow();
    await insert.run(
      newId('webhookDelivery'),
      e.organizationId,
      webhookId,
      e.id,
      e.type,
      e.createdAt,
      now,
      now,
    );
  }
}

/** A pending delivery with what an attempt needs (target, secret, body). Internal to the delivery loop. */
export interface DueDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  type: string;
  attempts: number;
  next_attempt_at: string;
  url: string;
  secret: string;
  payload: string;
  event_created_at: string;
}

export async function dueDeliveries(
  db: Db,
  nowIso: string,
  limit: number,
  exclude: readonly string[] = [],
): Promise<DueDelivery[]> {
  // `exclude` is small (attempts in flight in this process); filtered here, not in SQL.
  const rows = (await db
    .prepare(
      `SELECT d.id, d.webhook_id, d.event_id, d.type, d.attempts, d.next_attempt_at, w.url, w.secret, e.payload, e.created_at AS event_created_at
       FROM webhook_deliveries d
       JOIN webhooks w ON w.id = d.webhook_id
       JOIN webhook_events e ON e.id = d.event_id
      WHERE d.status = 'pending' AND d.next_attempt_at <= ?
      ORDER BY d.next_attempt_at, d.id
      LIMIT ?`,
    )
    .all(nowIso, limit + exclude.length)) as DueDelivery[];
  return rows.filter((r) => !exclude.includes(r.id)).slice(0, limit);
}

/** The earliest next_attempt_at of a pending delivery, or undefined when none is pending. */
export async function nextDueAt(db: Db): Promise<string | undefined> {
  const row = (await db
    .prepare("SELECT min(next_attempt_at) AS t FROM webhook_deliveries WHERE status = 'pending'")
    .get()) as { t: string | null };
  return row.t ?? undefined;
}

/**
 * Takes an attempt: moves next_attempt_at from the value read to the lease's end, only if nobody
 * else took it meanwhile (compare-and-set). False when another worker won the race.
 */
export async function claimDelivery(
  db: Db,
  id: string,
  seenNextAttemptAt: string,
  leaseUntil: string,
): Promise<boolean> {
  return (
    (
      await db
        .prepare(
          "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending' AND next_attempt_at = ?",
        )
        .run(leaseUntil, id, seenNextAttemptAt)
    ).changes === 1
  );
}

/** Gives an attempt back without counting it (the service is stopping): due again at `at`. */
export async function releaseDelivery(db: Db, id: string, at: string): Promise<void> {
  await db
    .prepare(
      "UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending'",
    )
    .run(at, id);
}

export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  /** delivered: a 2xx; pending: retry at nextAttemptAt; failed: gave up. */
  status: 'delivered' | 'pending' | 'failed';
  nextAttemptAt: string | null;
  at: string;
}

export async function recordAttempt(db: Db, id: string, o: AttemptOutcome): Promise<void> {
  await db
    .prepare(
      `UPDATE webhook_deliveries
        SET attempts = attempts + 1, last_status_code = ?, last_error = ?, status = ?, next_attempt_at = ?,
            delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END, updated_at = ?
      WHERE id = ? AND status = 'pending'`,
    )
    .run(o.statusCode, o.error, o.status, o.nextAttemptAt, o.status, o.at, monotonicNow(), id);
}

/**
 * Housekeeping: finished deliveries older than `beforeIso` go, then events no delivery refers to
 * (events with no subscriber at all, and those whose deliveries were all pruned or deleted).
 */
export async function pruneDeliveries(db: Db, beforeIso: string): Promise<number> {
  return await db.transaction(async (tx) => {
    const n = (
      await tx
        .prepare("DELETE FROM webhook_deliveries WHERE status != 'pending' AND updated_at < ?")
        .run(beforeIso)
    ).changes;
    await tx
      .prepare(
        'DELETE FROM webhook_events WHERE created_at < ? AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id)',
      )
      .run(beforeIso);
    return n;
  });
}
