import { describe, expect, it } from 'vitest';
import { createUlidGenerator, ID_PREFIX, idKind, idPatternSource, idTimeMs, newId } from './ids';

const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('ids (contract §2: <prefix>_<ULID>)', () => {
  it('are the prefix and 26 Crockford base32 characters', () => {
    for (const kind of Object.keys(ID_PREFIX) as (keyof typeof ID_PREFIX)[]) {
      const id = newId(kind);
      expect(id.slice(0, 4)).toBe(`${ID_PREFIX[kind]}_`);
      expect(id.slice(4)).toMatch(ULID_RE);
      expect(idKind(id)).toBe(kind);
    }
  });

  it('carry their creation time in the first 10 characters', () => {
    expect(createUlidGenerator()(0).slice(0, 10)).toBe('0000000000');
    // The ULID spec's example time: 1469918176385 ms is 01ARYZ6S41.
    expect(createUlidGenerator()(1469918176385).slice(0, 10)).toBe('01ARYZ6S41');
    const before = Date.now();
    const id = newId('project');
    const ms = idTimeMs(id)!;
    expect(ms).toBeGreaterThanOrEqual(before);
    expect(ms).toBeLessThanOrEqual(Date.now());
  });

  it('created later sort after ids created earlier, also within one millisecond', () => {
    const ids: string[] = [];
    for (let i = 0; i < 5000; i++) ids.push(newId('change'));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // Across milliseconds, and when the clock steps back, the order holds too.
    const ulid = createUlidGenerator();
    const t = Date.now();
    const a = ulid(t);
    const b = ulid(t + 1);
    const c = ulid(t - 5_000); // the clock went back: still after b
    expect(a < b && b < c).toBe(true);
  });

  it('rejects times outside the 48 bits a ULID holds', () => {
    const ulid = createUlidGenerator();
    expect(() => ulid(-1)).toThrow(/between 0 and 2\^48-1/);
    expect(() => ulid(2 ** 48)).toThrow(/between 0 and 2\^48-1/);
    expect(() => ulid(1.5)).toThrow(/received 1.5/);
  });

  it('stored before ULIDs (20 lowercase characters) stay valid', () => {
    const legacy = 'prj_0a1b2c3d4e5f6g7h8j9k';
    expect(idKind(legacy)).toBe('project');
    expect(idTimeMs(legacy)).toBeNull();
    expect(new RegExp(idPatternSource('prj')).test(legacy)).toBe(true);
    expect(new RegExp(idPatternSource('prj')).test(newId('project'))).toBe(true);
    expect(new RegExp(idPatternSource('prj')).test(newId('drawing'))).toBe(false);
    expect(idKind('prj_')).toBeUndefined();
    expect(idKind('prj_abc-def')).toBeUndefined();
    expect(idKind('xyz_0123')).toBeUndefined();
  });
});
