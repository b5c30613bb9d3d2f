import { randomBytes } from 'node:crypto';

// Identifiers are a type prefix, an underscore and an opaque remainder (spec "Resources").
export const ID_PREFIX = {
  organization: 'org',
  apiKey: 'key',
  project: 'prj',
  file: 'fil',
  drawing: 'drw',
  sheet: 'sht',
  block: 'blk',
  overlay: 'ovl',
  change: 'chg',
  symbol: 'sym',
  job: 'job',
  webhook: 'whk',
  ledger: 'led',
  event: 'evt',
  webhookDelivery: 'whd',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lowercase

/** A new random id: prefix + 20 base32 chars (100 bits of randomness). */
export function newId(kind: IdKind): string {
  const bytes = randomBytes(20);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return `${ID_PREFIX[kind]}_${out}`;
}

const ID_RE = /^[a-z]{3}_[0-9a-z]{1,64}$/;

/** The kind an id's prefix names, or undefined when it is no id of ours. */
export function idKind(id: string): IdKind | undefined {
  if (!ID_RE.test(id)) return undefined;
  const prefix = id.slice(0, 3);
  for (const [kind, p] of Object.entries(ID_PREFIX)) if (p === prefix) return kind as IdKind;
  return undefined;
}
