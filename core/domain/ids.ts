import { randomBytes } from 'node:crypto';

// Identifiers are a type prefix, an underscore and a ULID (contract §2): 26 Crockford base32
// characters, uppercase, the first 10 the creation time in milliseconds, the other 16 random. So
// ids sort by creation time as strings, and ids made in one millisecond by one process keep
// their order (the random part is incremented, as the ULID spec's monotonic generator does).
//
// Ids stored before ULIDs (the prefix and 20 lowercase base32 characters of randomness) stay
// valid and routable: every check accepts `[0-9A-Za-z]{1,64}` after the prefix; only new ids have
// the ULID shape.
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

/** What may follow `<prefix>_` in an id: a ULID, or the remainder of an id stored before them. */
export const ID_BODY_SOURCE = '[0-9A-Za-z]{1,64}';

/** Crockford's base32 alphabet (no I, L, O, U), in ascending order. */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const MAX_TIME = 2 ** 48 - 1;

/**
 * A ULID generator with its own state: `next(nowMs)` gives the time part, then a random part
 * that is fresh in each new millisecond and incremented by one within the same millisecond (or
 * when the clock stepped back, keeping the last time), so its successive ids always sort in the
 * order they were made (the ULID spec's monotonic generator).
 */
export function createUlidGenerator(): (nowMs?: number) => string {
  let lastTime = -1;
  const digits = new Uint8Array(RANDOM_CHARS); // one base32 digit (0..31) per character
  return (nowMs = Date.now()) => {
    if (!Number.isInteger(nowMs) || nowMs < 0 || nowMs > MAX_TIME)
      throw new RangeError(`Expected a time in ms between 0 and 2^48-1 but received ${nowMs}`);
    if (nowMs > lastTime) {
      lastTime = nowMs;
      const bytes = randomBytes(RANDOM_CHARS);
      for (let i = 0; i < RANDOM_CHARS; i++) digits[i] = bytes[i]! & 31;
    } else {
      let i = RANDOM_CHARS - 1;
      while (i >= 0 && digits[i] === 31) digits[i--] = 0;
      // 2^80 ids in one millisecond cannot happen; should it, the time part moves on by one.
      if (i < 0) lastTime++;
      else digits[i]!++;
    }
    let time = '';
    for (let t = lastTime, i = 0; i < TIME_CHARS; i++, t = Math.floor(t / 32))
      time = CROCKFORD[t % 32]! + time;
    let random = '';
    for (let i = 0; i < RANDOM_CHARS; i++) random += CROCKFORD[digits[i]!];
    return time + random;
  };
}

/** The process's ULID generator: every id of this process comes from it. */
export const ulid = createUlidGenerator();

/** A new id: `<prefix>_<ULID>`. */
export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${ulid()}`;
}

/** The creation time a ULID id carries (ms since the epoch), or null for an id stored before ULIDs. */
export function idTimeMs(id: string): number | null {
  const body = id.slice(4);
  if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(body)) return null;
  let ms = 0;
  for (let i = 0; i < TIME_CHARS; i++) ms = ms * 32 + CROCKFORD.indexOf(body[i]!);
  return ms;
}

const ID_RE = new RegExp(`^[a-z]{3}_${ID_BODY_SOURCE}$`);

/** The kind an id's prefix names, or undefined when it is no id of ours. */
export function idKind(id: string): IdKind | undefined {
  if (!ID_RE.test(id)) return undefined;
  const prefix = id.slice(0, 3);
  for (const [kind, p] of Object.entries(ID_PREFIX)) if (p === prefix) return kind as IdKind;
  return undefined;
}

/** A regex source that matches exactly an id with `prefix` (e.g. for a JSON schema `pattern`). */
export function idPatternSource(prefix: string): string {
  return `^${prefix}_${ID_BODY_SOURCE}$`;
}
