import { createHash, randomBytes } from 'node:crypto';
import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { Db } from '../db';
import { prepared } from '../statement-cache';

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

export function findOrganizationByName(db: Db, name: string): OrganizationRow | undefined {
  return prepared(db, 'SELECT * FROM organizations WHERE name = ?').get(name) as
    OrganizationRow | undefined;
}

export function getOrganization(db: Db, id: string): OrganizationRow | undefined {
  return prepared(db, 'SELECT * FROM organizations WHERE id = ?').get(id) as
    OrganizationRow | undefined;
}

export function ensureOrganization(db: Db, name: string): OrganizationRow {
  const existing = findOrganizationByName(db, name);
  if (existing) return existing;
  const now = monotonicNow();
  const id = newId('organization');
  prepared(
    db,
    'INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)',
  ).run(id, name, now, now);
  return getOrganization(db, id)!;
}

export function countOrganizations(db: Db): number {
  return (prepared(db, 'SELECT count(*) AS n FROM organizations').get() as { n: number }).n;
}

/** Creates a key and returns the secret (shown once) with its row. */
export function createApiKey(
  db: Db,
  organizationId: string,
  label: string | null = null,
): { secret: string; row: ApiKeyRow } {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(40);
  let body = '';
  for (const b of bytes) if (body.length < 40 && b < 248) body += alphabet[b % 62];
  while (body.length < 40) body += alphabet[randomBytes(1)[0]! % 62];
  const secret = `sk_${body}`;
  const id = newId('apiKey');
  const now = monotonicNow();
  prepared(
    db,
    'INSERT INTO api_keys (id, organization_id, key_hash, key_hint, label, created_at) VALUES (?, ?, ?, ?, ?, ?)',
  ).run(id, organizationId, hashKey(secret), `sk_…${secret.slice(-4)}`, label, now);
  return { secret, row: prepared(db, 'SELECT * FROM api_keys WHERE id = ?').get(id) as ApiKeyRow };
}

export function findActiveKey(db: Db, secret: string): ApiKeyRow | undefined {
  return prepared(db, 'SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL').get(
    hashKey(secret),
  ) as ApiKeyRow | undefined;
}

export function listApiKeys(db: Db): (ApiKeyRow & { organization_name: string })[] {
  return prepared(
    db,
    'SELECT k.*, o.name AS organization_name FROM api_keys k JOIN organizations o ON o.id = k.organization_id ORDER BY k.created_at',
  ).all() as (ApiKeyRow & { organization_name: string })[];
}

export function revokeApiKey(db: Db, id: string): boolean {
  return (
    prepared(db, 'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(
      monotonicNow(),
      id,
    ).changes === 1
  );
}

export function grantCredits(
  db: Db,
  organizationId: string,
  amount: number,
  reason: string,
): OrganizationRow {
  db.transaction(() => {
    prepared(
      db,
      'UPDATE organizations SET credit_balance = credit_balance + ?, updated_at = ? WHERE id = ?',
    ).run(amount, monotonicNow(), organizationId);
    prepared(
      db,
      'INSERT INTO credit_ledger (id, organization_id, amount, reason, job_id, created_at) VALUES (?, ?, ?, ?, NULL, ?)',
    ).run(newId('ledger'), organizationId, amount, reason, monotonicNow());
  })();
  return getOrganization(db, organizationId)!;
}
