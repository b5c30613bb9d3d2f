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
  /** The claim this attempt holds (fences its writes). */
  claim_token: string;
  url: string;
  secret: string;
  payload: string;
  event_created_at: string;
}

/**
 * Claims up to `limit` due deliveries for one attempt each, atomically: one statement moves their
 * `next_attempt_at` to the lease's end and stamps them with `token`, so no other process (or
 * delivery loop) can take them until the lease ends; a process that dies mid-attempt leaves them
 * due again then. On PostgreSQL the rows another transaction is claiming at that moment are
 * skipped (FOR UPDATE SKIP LOCKED), so concurrent loops take disjoint rows rather than queue on
 * the same ones; SQLite has one writer at a time. Returns what each attempt needs.
 */
export async function claimDueDeliveries(
  db: Db,
  o: { nowIso: string; leaseUntil: string; limit: number; token: string },
): Promise<DueDelivery[]> {
  if (o.limit <= 0) return [];
  const lock = db.dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
  return await db.transaction(async (tx) => {
    const claimed = (await tx
      .prepare(
        `UPDATE webhook_deliveries SET next_attempt_at = ?, claim_token = ?
          WHERE status = 'pending' AND next_attempt_at <= ? AND id IN (
            SELECT id FROM webhook_deliveries
             WHERE status = 'pending' AND next_attempt_at <= ?
             ORDER BY next_attempt_at, id
             LIMIT ? ${lock})
         RETURNING id`,
      )
      .all(o.leaseUntil, o.token, o.nowIso, o.nowIso, o.limit)) as { id: string }[];
    if (claimed.length === 0) return [];
    const rows = (await tx
      .prepare(
        `SELECT d.id, d.webhook_id, d.event_id, d.type, d.attempts, d.next_attempt_at, d.claim_token, w.url, w.secret, e.payload, e.created_at AS event_created_at
           FROM webhook_deliveries d
           JOIN webhooks w ON w.id = d.webhook_id
           JOIN webhook_events e ON e.id = d.event_id
          WHERE d.claim_token = ? AND d.status = 'pending'
          ORDER BY e.created_at, d.id`,
      )
      .all(o.token)) as DueDelivery[];
    return rows;
  });
}

/** The earliest next_attempt_at of a pending delivery, or undefined when none is pending. */
export async function nextDueAt(db: Db): Promise<string | undefined> {
  const row = (await db
    .prepare("SELECT min(next_attempt_at) AS t FROM webhook_deliveries WHERE status = 'pending'")
    .get()) as { t: string | null };
  return row.t ?? undefined;
}

/**
 * Gives an attempt back without counting it (the service is stopping): due again at `at`. Only
 * while the claim `token` still holds it. False when it no longer does.
 */
export async function releaseDelivery(
  db: Db,
  id: string,
  token: string,
  at: string,
): Promise<boolean> {
  return (
    (
      await db
        .prepare(
          "UPDATE webhook_deliveries SET next_attempt_at = ?, claim_token = NULL WHERE id = ? AND status = 'pending' AND claim_token = ?",
        )
        .run(at, id, token)
    ).changes === 1
  );
}

export interface AttemptOutcome {
  statusCode: number | null;
  error: string | null;
  /** delivered: a 2xx; pending: retry at nextAttemptAt; failed: gave up. */
  status: 'delivered' | 'pending' | 'failed';
  nextAttemptAt: string | null;
  at: string;
}

/**
 * Records an attempt's outcome, only while the claim `token` still holds the delivery: an attempt
 * that outlived its lease (another process has claimed the delivery since) records nothing, so it
 * can neither end nor re-schedule the attempt that took over. False when it recorded nothing.
 */
export async function recordAttempt(
  db: Db,
  id: string,
  token: string,
  o: AttemptOutcome,
): Promise<boolean> {
  return (
    (
      await db
        .prepare(
          `UPDATE webhook_deliveries
            SET attempts = attempts + 1, last_status_code = ?, last_error = ?, status = ?, next_attempt_at = ?,
                delivered_at = CASE WHEN ? = 'delivered' THEN ? ELSE delivered_at END, updated_at = ?, claim_token = NULL
          WHERE id = ? AND status = 'pending' AND claim_token = ?`,
        )
        .run(
          o.statusCode,
          o.error,
          o.status,
          o.nextAttemptAt,
          o.status,
          o.at,
          monotonicNow(),
          id,
          token,
        )
    ).changes === 1
  );
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
