import { ApiError } from '../domain/errors';
import type { Db } from '../store/db';
import { countOverlaysOfJob } from '../store/repositories/overlays.repository';
import { parseSheetsScanned } from '../store/repositories/symbols.repository';
import {
  countOrganizations,
  createApiKey,
  ensureOrganization,
  findOrganizationByName,
  grantCredits,
} from '../store/repositories/organizations.repository';
import {
  completedAnalyzeJobsUnder,
  creditState,
  setJobCreditsCharged,
  settleReservation,
  tryReserve,
} from '../store/repositories/credits.repository';

// Credits (contract §7): a Vision job reserves its estimate when it is created (402
// insufficient_credits when the balance cannot cover it), is charged what it used when it ends,
// and is refunded when it fails through no fault of the request. Costs: compare 1 per overlay,
// analyze 1 per overlay. An idempotent replay charges nothing because the platform's idempotency
// layer answers it from the stored response without running the handler again.

export const COST = { compareOverlay: 1, analyzeOverlay: 1 } as const;

/** The job row fields settlement reads (services sit below jobs, so only its shape). */
export interface SettledJob {
  id: string;
  organization_id: string;
  type: string;
  status: string;
  payload: string;
  error: string | null;
  credits_reserved: number;
}

/**
 * Reserves `required` credits or throws 402 with `required` and `available`. Call it inside the
 * transaction that creates the job, so a refused request leaves nothing behind and an accepted one
 * never exists without its reservation.
 */
export async function reserveCredits(
  db: Db,
  organizationId: string,
  required: number,
  what: string,
): Promise<void> {
  if (await tryReserve(db, organizationId, required)) return;
  const available = (await creditState(db, organizationId)).balance;
  throw new ApiError(
    'insufficient_credits',
    `${what} needs ${required} credit${required === 1 ? '' : 's'} but the organization has ${available} available. Add credits (blueline credits grant) or compare fewer sheets.`,
    { extra: { required, available } },
  );
}

/** Failures that are the service's fault, not the request's: everything is refunded. */
function systemFailure(job: SettledJob): boolean {
  if (job.status !== 'Failed') return false;
  try {
    const err = job.error ? (JSON.parse(job.error) as { status?: number }) : null;
    return !err || typeof err.status !== 'number' || err.status >= 500;
  } catch {
    return true;
  }
}

/** What a job used, in credits, from what it stored. */
export async function creditsUsed(db: Db, job: SettledJob): Promise<number> {
  if (job.type === 'compare') {
    const payload = JSON.parse(job.payload || '{}') as { analyze?: boolean };
    const overlays = (await countOverlaysOfJob(db, job.id)) * COST.compareOverlay;
    return (
      overlays +
      (payload.analyze ? (await completedAnalyzeJobsUnder(db, job.id)) * COST.analyzeOverlay : 0)
    );
  }
  if (job.type === 'analyze') return job.status === 'Completed' ? COST.analyzeOverlay : 0;
  // Parse: 1 per sheet actually scanned (contract §7).
  if (job.type === 'parse') return await parseSheetsScanned(db, job.id);
  return 0;
}

/**
 * The job runner's onTerminal hook: runs inside the transaction that makes a job terminal, so the
 * charge commits with the status, exactly once. Only jobs that reserved credits settle (roots of a
 * client's request; their children reserve nothing and are accounted for by the root).
 */
export async function settleJobCredits(db: Db, job: SettledJob): Promise<void> {
  if (job.credits_reserved <= 0) return;
  const charged = systemFailure(job)
    ? 0
    : Math.min(job.credits_reserved, await creditsUsed(db, job));
  await settleReservation(db, {
    organizationId: job.organization_id,
    jobId: job.id,
    reserved: job.credits_reserved,
    charged,
    reason: job.type,
  });
  await setJobCreditsCharged(db, job.id, charged);
}

/**
 * Credits the "Default" organization starts with when `blueline serve` or the desktop app creates
 * it: enough for the desktop app to compare real drawing sets out of the box (10,000 block-pair
 * overlays), while other organizations start at 0 and are granted credits explicitly
 * (`blueline keys create --credits N`, `blueline credits grant`).
 */
export const DEFAULT_ORGANIZATION_CREDITS = 10_000;

/** Any number to lock on: API processes starting together on one database take turns here. */
const BOOTSTRAP_LOCK = 74_2021_0002;

/**
 * Inside a transaction: on PostgreSQL, waits for any other process's check-and-create of the
 * first organization (pg_advisory_xact_lock, released at its COMMIT); on SQLite the transaction's
 * BEGIN IMMEDIATE already serialises writers.
 */
async function lockBootstrap(tx: Db): Promise<void> {
  if (tx.dialect === 'postgres')
    await tx.prepare('SELECT pg_advisory_xact_lock(?)').get(BOOTSTRAP_LOCK);
}

async function defaultOrganizationIn(tx: Db): Promise<{ id: string }> {
  const existing = await findOrganizationByName(tx, 'Default');
  if (existing) return existing;
  const org = await ensureOrganization(tx, 'Default');
  await grantCredits(tx, org.id, DEFAULT_ORGANIZATION_CREDITS, 'starting balance');
  return org;
}

/** The "Default" organization, created with its starting balance (one ledger grant) if new. */
export async function ensureDefaultOrganization(db: Db): Promise<{ id: string }> {
  return await db.transaction(
    async (tx) => {
      await lockBootstrap(tx);
      return await defaultOrganizationIn(tx);
    },
    { immediate: true },
  );
}

/**
 * First start (`blueline serve` on an empty database): when no organization exists, creates
 * "Default" with its starting balance and its first API key, and returns the key's secret (shown
 * once); otherwise undefined. The check and the creation are one transaction under a lock, so any
 * number of API processes starting at once on one empty database create exactly one organization
 * and one first key.
 */
export async function bootstrapFirstKey(db: Db): Promise<string | undefined> {
  return await db.transaction(
    async (tx) => {
      await lockBootstrap(tx);
      if ((await countOrganizations(tx)) > 0) return undefined;
      const org = await defaultOrganizationIn(tx);
      return (await createApiKey(tx, org.id, 'first key')).secret;
    },
    { immediate: true },
  );
}

/**
 * `blueline keys create --org NAME [--credits N]`: the organization (created if new), the credit
 * grant and the key in one transaction, so a failure at any step leaves none of them behind (no
 * organization without the key that was asked for, no grant without its key). Returns the key's
 * secret (shown once). Concurrent creations for one new name both end with the one organization
 * (ensureOrganization's ON CONFLICT; on PostgreSQL the second insert waits for the first commit).
 */
export async function createOrganizationKey(
  db: Db,
  o: { organization: string; credits?: number; label?: string | null },
): Promise<{ secret: string; organizationId: string }> {
  return await db.transaction(
    async (tx) => {
      const org = await ensureOrganization(tx, o.organization);
      if (o.credits) await grantCredits(tx, org.id, o.credits, 'grant');
      const { secret } = await createApiKey(tx, org.id, o.label ?? null);
      return { secret, organizationId: org.id };
    },
    { immediate: true },
  );
}
