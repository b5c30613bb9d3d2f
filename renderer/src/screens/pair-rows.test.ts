import { describe, expect, it } from 'vitest';
import type { Overlay, Sheet } from '../api/types';
import { buildPairRows } from './pair-rows';

const sheet = (id: string, n: string, title = `T ${n}`) =>
  ({ id, sheet_number: n, title }) as Sheet;
const overlay = (id: string, a: string, b: string, score: number, change_count: number | null) =>
  ({
    id,
    score,
    change_count,
    block_a: { sheet_id: a },
    block_b: { sheet_id: b },
  }) as unknown as Overlay;

describe('buildPairRows', () => {
  const sheets = new Map([
    ['sa1', sheet('sa1', 'S101')],
    ['sb1', sheet('sb1', 'S101', 'Framing')],
    ['sa2', sheet('sa2', 'S102')],
    ['sb2', sheet('sb2', 'S102')],
    ['sa3', sheet('sa3', 'S103')],
    ['sb3', sheet('sb3', 'S103')],
  ]);
  const result = {
    pairs: [
      { sheet_a_id: 'sa2', sheet_b_id: 'sb2', method: 'sheet_number', confidence: 1 },
      { sheet_a_id: 'sa1', sheet_b_id: 'sb1', method: 'sheet_number', confidence: 1 },
      { sheet_a_id: 'sa3', sheet_b_id: 'sb3', method: 'sheet_number', confidence: 1 },
    ],
    added_sheets: [],
    removed_sheets: [],
    overlay_count: 4,
  };

  it('makes one row per sheet pair, scored by its most changed overlay, most changed first', () => {
    const rows = buildPairRows(
      result,
      [
        overlay('o2', 'sa2', 'sb2', 1, 0),
        overlay('o1a', 'sa1', 'sb1', 0.99, 0),
        overlay('o1b', 'sa1', 'sb1', 0.91, 2),
        overlay('o3', 'sa3', 'sb3', 1, null),
      ],
      sheets,
    );
    expect(rows.map((r) => r.sheetNumber)).toEqual(['S101', 'S102', 'S103']);
    expect(rows[0]?.score).toBe(0.91);
    expect(rows[0]?.overlays.map((o) => o.id)).toEqual(['o1b', 'o1a']);
    expect(rows[0]?.changeCount).toBe(2);
    expect(rows[0]?.title).toBe('Framing');
    expect(rows[2]?.changeCount).toBeNull();
  });

  it('keeps pairs without overlays and overlays without a listed pair', () => {
    const rows = buildPairRows(result, [overlay('ox', 'zz', 'yy', 0.5, 1)], sheets);
    expect(rows).toHaveLength(4);
    expect(rows[0]?.overlays[0]?.id).toBe('ox');
    expect(rows.filter((r) => r.overlays.length === 0)).toHaveLength(3);
  });

  it('copes with no result at all', () => {
    expect(buildPairRows(null, [], sheets)).toEqual([]);
  });
});
