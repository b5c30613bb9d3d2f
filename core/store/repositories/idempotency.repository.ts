import type { Db } from '../db';

export interface IdempotencyRow {
  organization_id: string;
  idem_key: string;
  method: string;
  route: string;
  body_hash: string;
  state: 'processing' | 'done';
  response_status: number | null;
  response_headers: string | null;
  response_body: string | null;
  created_at: string;
  expires_at: string;
}

export type ClaimResult = { outcome: 'claimed' } | { outcome: 'existing'; row: IdempotencyRow };

/**
 * Atomically claims a key for a request, or returns the record already holding it. Expired records
 * (older than their 24 h lifetime) are replaced, so a key can be reused after it expires.
 *
 * The insert does nothing on a conflict: on PostgreSQL two claims of one key run concurrently (a
 * read-then-insert pair lets both read "none" and the second insert fail on the primary key), and
 * the insert waits for the other claim's transaction, after which its row is read and returned.
 * On SQLite, whose transactions run one at a time, the conflict cannot happen.
 */
export async function claimKey(
  db: Db,
  a: {
    organizationId: string;
    key: string;
    method: string;
    route: string;
    bodyHash: string;
    now: Date;
    ttlMs: number;
  },
): Promise<ClaimResult> {
  const read = async (tx: Db) =>
    (await tx
      .prepare('SELECT * FROM idempotency_keys WHERE organization_id = ? AND idem_key = ?')
      .get(a.organizationId, a.key)) as IdempotencyRow | undefined;
  for (let attempt = 1; ; attempt++) {
    const result = await db.transaction(async (tx): Promise<ClaimResult | null> => {
      const row = await read(tx);
      if (row && row.expires_at > a.now.toISOString()) return { outcome: 'existing', row };
      if (row)
        await tx
          .prepare(
            'DELETE FROM idempotency_keys WHERE organization_id = ? AND idem_key = ? AND expires_at = ?',
          )
          .run(a.organizationId, a.key, row.expires_at);
      const inserted = await tx
        .prepare(
          `INSERT INTO idempotency_keys (organization_id, idem_key, method, route, body_hash, state, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, 'processing', ?, ?)
         ON CONFLICT (organization_id, idem_key) DO NOTHING`,
        )
        .run(
          a.organizationId,
          a.key,
          a.method,
          a.route,
          a.bodyHash,
          a.now.toISOString(),
          new Date(a.now.getTime() + a.ttlMs).toISOString(),
        );
      if (inserted.changes === 1) return { outcome: 'claimed' };
      // Another request claimed the key between the read and the insert: its record answers.
      const theirs = await read(tx);
      return theirs ? { outcome: 'existing', row: theirs } : null;
    });
    if (result) return result;
    // Claimed and released again in between (its request failed): claim once more.
    if (attempt >= 5)
      throw new Error(`Idempotency key claim kept racing after ${attempt} attempts.`);
  }
}

export async function getKey(
  db: Db,
  organizationId: string,
  key: string,
): Promise<IdempotencyRow | undefined> {
  return (await db
    .prepare('SELECT * FROM idempotency_keys WHERE organization_id = ? AND idem_key = ?')
    .get(organizationId, key)) as IdempotencyRow | undefined;
}

export async function completeKey(
  db: Db,
  organizationId: string,
  key: string,
  response: { status: number; headers: Record<string, string>; body: string },
): Promise<void> {
  await db
    .prepare(
      `UPDATE idempotency_keys SET state = 'done', response_status = ?, response_headers = ?, response_body = ?
     WHERE organization_id = ? AND idem_key = ? AND state = 'processing'`,
    )
    .run(response.status, JSON.stringify(response.headers), response.body, organizationId, key);
}

export async function releaseKey(db: Db, organizationId: string, key: string): Promise<void> {
  await db
    .prepare(
      `DELETE FROM idempotency_keys WHERE organization_id = ? AND idem_key = ? AND state = 'processing'`,
    )
    .run(organizationId, key);
}

/** Boot-time reconciliation: requests that were in flight when the process died are released. */
export async function releaseAllProcessing(db: Db): Promise<number> {
  return (await db.prepare(`DELETE FROM idempotency_keys WHERE state = 'processing'`).run())
    .changes;
}

export async function deleteExpired(db: Db, now: Date): Promise<number> {
  return (
    await db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?').run(now.toISOString())
  ).changes;
}
