import { describe, expect, it } from 'vitest';
import type { Overlay } from '../../api/types';
import { sheetStops, stepChange, stepSheet } from './set-nav';

const ov = (id: string, pair: string, type: string, score: number, changes: number | null) =>
  ({
    id,
    score,
    change_count: changes,
    block_a: { type, sheet_id: `a${pair}` },
    block_b: { type, sheet_id: `b${pair}` },
  }) as unknown as Overlay;

const whole1 = ov('w1', '1', 'Sheet', 0.8, 3);
const view1 = ov('v1', '1', 'Plan', 0.7, 2);
const whole2 = ov('w2', '2', 'Sheet', 0.99, 0);
const whole3 = ov('w3', '3', 'Sheet', 0.9, 1);
const all = [whole2, view1, whole3, whole1];

describe('set navigation', () => {
  it('has one stop per sheet pair, most changed first, on the whole sheet', () => {
    expect(sheetStops(all).map((o) => o.id)).toEqual(['w1', 'w3', 'w2']);
  });
  it('steps sheet by sheet, from a view too', () => {
    const stops = sheetStops(all);
    expect(stepSheet(stops, view1, 1)?.id).toBe('w3');
    expect(stepSheet(stops, whole2, 1)).toBeNull();
    expect(stepSheet(stops, whole3, -1)?.id).toBe('w1');
  });
  it('walks changes within a sheet, then on to the next sheet with changes', () => {
    const stops = sheetStops(all);
    expect(stepChange(-1, 3, 1, stops, whole1)).toEqual({ kind: 'select', index: 0 });
    expect(stepChange(1, 3, 1, stops, whole1)).toEqual({ kind: 'select', index: 2 });
    expect(stepChange(2, 3, 1, stops, whole1)).toMatchObject({
      kind: 'sheet',
      overlay: { id: 'w3' },
      land: 'first',
    });
    // w2 has no changes: skipped; the end of the set after w3.
    expect(stepChange(0, 1, 1, stops, whole3)).toEqual({ kind: 'end', dir: 1 });
    expect(stepChange(0, 1, -1, stops, whole3)).toMatchObject({
      kind: 'sheet',
      overlay: { id: 'w1' },
      land: 'last',
    });
    expect(stepChange(-1, 0, 1, stops, whole2)).toEqual({ kind: 'end', dir: 1 });
  });
});
