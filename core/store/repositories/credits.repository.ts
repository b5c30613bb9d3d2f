import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';

// Credits of an organization (contract §7). `credit_balance` is what the organization can spend
// now; `credit_reserved` is held by jobs that are still running. The ledger records money moving
// in or out for good — grants (+) and charges (−) — so at any time
//     sum(ledger amounts) = credit_balance + credit_reserved.
// A reservation only moves credits from balance to reserved; settlement releases the reservation,
// charges what was used (one ledger row) and returns the rest to the balance.

export interface CreditState {
  balance: number;
  reserved: number;
}

export async function creditState(db: Db, organizationId: string): Promise<CreditState> {
  const r = (await db
    .prepare(
      'SELECT credit_balance AS balance, credit_reserved AS reserved FROM organizations WHERE id = ?',
    )
    .get(organizationId)) as CreditState | undefined;
  return r ?? { balance: 0, reserved: 0 };
}

/**
 * Moves `amount` from balance to reserved if the balance covers it. One conditional UPDATE, so two
 * concurrent reservations can never both pass on the same credits (SQLite serializes writers; the
 * CHECK constraint credit_balance >= 0 is the last guard). Returns false when the balance is short.
 */
export async function tryReserve(db: Db, organizationId: string, amount: number): Promise<boolean> {
  if (amount <= 0) return true;
  const res = await db
    .prepare(
      `UPDATE organizations SET credit_balance = credit_balance - ?, credit_reserved = credit_reserved + ?, updated_at = ?
     WHERE id = ? AND credit_balance >= ?`,
    )
    .run(amount, amount, monotonicNow(), organizationId, amount);
  return res.changes === 1;
}

/** Releases a reservation: `charged` leaves for good (ledger row), the rest returns to the balance. */
export async function settleReservation(
  db: Db,
  a: {
    organizationId: string;
    jobId: string | null;
    reserved: number;
    charged: number;
    reason: string;
  },
): Promise<void> {
  const charged = Math.max(0, Math.min(a.charged, a.reserved));
  await db
    .prepare(
      `UPDATE organizations SET credit_reserved = credit_reserved - ?, credit_balance = credit_balance + ?, updated_at = ? WHERE id = ?`,
    )
    .run(a.reserved, a.reserved - charged, monotonicNow(), a.organizationId);
  if (charged > 0) {
    await db
      .prepare(
        'INSERT INTO credit_ledger (id, organization_id, amount, reason, job_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(newId('ledger'), a.organizationId, -charged, a.reason, a.jobId, monotonicNow());
  }
}

export async function ledgerSum(db: Db, organizationId: string): Promise<number> {
  return (
    (await db
      .prepare('SELECT coalesce(sum(amount), 0) AS s FROM credit_ledger WHERE organization_id = ?')
      .get(organizationId)) as { s: number }
  ).s;
}

export async function setJobCreditsCharged(db: Db, jobId: string, charged: number): Promise<void> {
  await db.prepare('UPDATE jobs SET credits_charged = ? WHERE id = ?').run(charged, jobId);
}

/** Completed `analyze` jobs in the tree under `rootId` (children and grandchildren). */
export async function completedAnalyzeJobsUnder(db: Db, rootId: string): Promise<number> {
  return (
    (await db
      .prepare(
        `WITH RECURSIVE tree(id) AS (SELECT id FROM jobs WHERE parent_id = ? UNION ALL SELECT j.id FROM jobs j JOIN tree t ON j.parent_id = t.id)
       SELECT count(*) AS n FROM jobs WHERE id IN (SELECT id FROM tree) AND type = 'analyze' AND status = 'Completed'`,
      )
      .get(rootId)) as { n: number }
  ).n;
}
