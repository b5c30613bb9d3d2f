import { describe, expect, it } from 'vitest';
import {
  compareIssues,
  comparisonSides,
  defaultPair,
  describeDirection,
  previousIssue,
  sheetDrawingMap,
} from './issue-order';

const set = (id: string, issued_at: string | null, created_at: string) => ({
  id,
  name: id,
  issued_at,
  created_at,
});

// Uploaded in the "wrong" order: the later issue first.
const jul24 = set('Barber 0724', '2013-07-24', '2026-11-27T09:00:00.000Z');
const jul18 = set('Barber 0718', '2013-07-18', '2026-11-27T09:05:00.000Z');

describe('issue order', () => {
  it('is decided by the issue date, not the upload order', () => {
    expect(compareIssues(jul24, jul18)).toBeGreaterThan(0);
    expect(compareIssues(jul18, jul24)).toBeLessThan(0);
  });

  it('keeps upload order for same-day issues and when a date is unknown', () => {
    const a = set('a', '2019-05-27', '2026-11-27T09:00:00.000Z');
    const b = set('b', '2019-05-27', '2026-11-27T09:00:01.000Z');
    expect(compareIssues(a, b)).toBeLessThan(0);
    expect(compareIssues(set('c', null, '2026-11-27T10:00:00.000Z'), jul24)).toBeGreaterThan(0);
  });

  it('starts a comparison with the newest issue and the one just before it', () => {
    const jul10 = set('Barber 0710', '2013-07-10', '2026-11-27T09:10:00.000Z');
    expect(defaultPair([jul10, jul24, jul18])).toEqual({ newer: jul24, older: jul18 });
    expect(defaultPair([jul24])).toBeNull();
    // Picking a set as the newer proposes the issue just before it; the oldest, the latest other.
    expect(previousIssue([jul10, jul24, jul18], jul18)).toBe(jul10);
    expect(previousIssue([jul10, jul24, jul18], jul10)).toBe(jul24);
    expect(previousIssue([jul10], jul10)).toBeNull();
  });

  it('says the direction plainly and notices a reversed pick', () => {
    expect(describeDirection(jul18, jul24)).toEqual({
      text: 'Barber 0718 → Barber 0724, issued 2013-07-18 → 2013-07-24',
      reversed: false,
    });
    expect(describeDirection(jul24, jul18).reversed).toBe(true);
    expect(describeDirection(set('x', null, '1'), set('y', null, '2')).text).toBe(
      'x → y, issued date unknown → date unknown',
    );
  });

  it("finds a comparison job's older set from its result's side-A sheets", () => {
    const sheets = sheetDrawingMap([
      { id: 'sht_a', drawing_id: 'drw_old' },
      { id: 'sht_b', drawing_id: 'drw_new' },
    ]);
    const pairs = [{ sheet_a_id: 'sht_a', sheet_b_id: 'sht_b', method: 'number', confidence: 1 }];
    expect(comparisonSides({ target_id: 'drw_new', result: { pairs } }, sheets)).toEqual({
      newerId: 'drw_new',
      olderId: 'drw_old',
    });
    // Nothing paired: a removed sheet still names the older set.
    expect(
      comparisonSides(
        { target_id: 'drw_new', result: { pairs: [], removed_sheets: [{ sheet_id: 'sht_a' }] } },
        sheets,
      ).olderId,
    ).toBe('drw_old');
    // Still running: unknown yet.
    expect(comparisonSides({ target_id: 'drw_new', result: null }, sheets).olderId).toBeNull();
  });
});
