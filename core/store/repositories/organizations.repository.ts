import { createHash, randomBytes } from 'node:crypto';
import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';

// Organizations and their API keys. Keys are shown once and stored only as SHA-256 hashes.

export interface OrganizationRow {
  id: string;
  name: string;
  credit_balance: number;
  credit_reserved: number;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyRow {
  id: string;
  organization_id: string;
  key_hash: string;
  key_hint: string;
  label: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export const hashKey = (secret: string): string =>
  createHash('sha256').update(secret).digest('hex');

const KEY_RE = /^sk_[A-Za-z0-9]{20,100}$/;
export const looksLikeKey = (s: string): boolean => KEY_RE.test(s);

export async function findOrganizationByName(
  db: Db,
  name: string,
): Promise<OrganizationRow | undefined> {
  return (await db.prepare('SELECT * FROM organizations WHERE name = ?').get(name)) as
    OrganizationRow | undefined;
}

export async function getOrganization(db: Db, id: string): Promise<OrganizationRow | undefined> {
  return (await db.prepare('SELECT * FROM organizations WHERE id = ?').get(id)) as
    OrganizationRow | undefined;
}

export async function ensureOrganization(db: Db, name: string): Promise<OrganizationRow> {
  const existing = await findOrganizationByName(db, name);
  if (existing) return existing;
  const now = monotonicNow();
  // ON CONFLICT: another process creating the same name at once (`keys create` on a team server)
  // makes this a no-op rather than a unique-constraint error; both then read the one row.
  await db
    .prepare(
      'INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING',
    )
    .run(newId('organization'), name, now, now);
  return (await findOrganizationByName(db, name))!;
}

export async function countOrganizations(db: Db): Promise<number> {
  return ((await db.prepare('SELECT count(*) AS n FROM organizations').get()) as { n: number }).n;
}

/** Creates a key and returns the secret (shown once) with its row. */
export async function createApiKey(
  db: Db,
  organizationId: string,
  label: string | null = null,
): Promise<{ secret: string; row: ApiKeyRow }> {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(40);
  let body = '';
  for (const b of bytes) if (body.length < 40 && b < 248) body += alphabet[b % 62];
  while (body.length < 40) body += alphabet[randomBytes(1)[0]! % 62];
  const secret = `sk_${body}`;
  const id = newId('apiKey');
  const now = monotonicNow();
  await db
    .prepare(
      'INSERT INTO api_keys (id, organization_id, key_hash, key_hint, label, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    )
    .run(id, organizationId, hashKey(secret), `sk_…${secret.slice(-4)}`, label, now);
  return {
    secret,
    row: (await db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id)) as ApiKeyRow,
  };
}

export async function findActiveKey(db: Db, secret: string): Promise<ApiKeyRow | undefined> {
  return (await db
    .prepare('SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL')
    .get(hashKey(secret))) as ApiKeyRow | undefined;
}

export async function listApiKeys(db: Db): Promise<(ApiKeyRow & { organization_name: string })[]> {
  return (await db
    .prepare(
      'SELECT k.*, o.name AS organization_name FROM api_keys k JOIN organizations o ON o.id = k.organization_id ORDER BY k.created_at',
    )
    .all()) as (ApiKeyRow & { organization_name: string })[];
}

export async function revokeApiKey(db: Db, id: string): Promise<boolean> {
  return (
    (
      await db
        .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
        .run(monotonicNow(), id)
    ).changes === 1
  );
}

export async function grantCredits(
  db: Db,
  organizationId: string,
  amount: number,
  reason: string,
): Promise<OrganizationRow> {
  await db.transaction(async (tx) => {
    await tx
      .prepare(
        'UPDATE organizations SET credit_balance = credit_balance + ?, updated_at = ? WHERE id = ?',
      )
      .run(amount, monotonicNow(), organizationId);
    await tx
      .prepare(
        'INSERT INTO credit_ledger (id, organization_id, amount, reason, job_id, created_at) VALUES (?, ?, ?, ?, NULL, ?)',
      )
      .run(newId('ledger'), organizationId, amount, reason, monotonicNow());
  });
  return (await getOrganization(db, organizationId))!;
}
