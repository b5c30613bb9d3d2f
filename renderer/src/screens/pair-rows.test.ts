import { describe, expect, it } from 'vitest';
import type { Overlay, Sheet } from '../api/types';
import { buildPairRows, viewingOrder } from './pair-rows';

const sheet = (id: string, n: string, title = `T ${n}`) =>
  ({ id, sheet_number: n, title }) as Sheet;
const overlay = (
  id: string,
  a: string,
  b: string,
  score: number,
  change_count: number | null,
  opts: { type?: string; lowConfidence?: boolean } = {},
) =>
  ({
    id,
    score,
    change_count,
    alignment: {
      method: 'sheet:x',
      confidence: opts.lowConfidence ? 0.1 : 0.9,
      residual_px: 0.2,
      ...(opts.lowConfidence ? { low_confidence: true } : {}),
    },
    block_a: { sheet_id: a, type: opts.type ?? 'Plan' },
    block_b: { sheet_id: b, type: opts.type ?? 'Plan' },
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

  it("opens a pair on its whole-sheet overlay and counts its changes, not the views' again", () => {
    const rows = buildPairRows(
      result,
      [
        overlay('v1', 'sa1', 'sb1', 0.9, 2),
        overlay('w1', 'sa1', 'sb1', 0.97, 3, { type: 'Sheet' }),
        overlay('v2', 'sa1', 'sb1', 0.95, 1),
        overlay('w2', 'sa2', 'sb2', 1, 0, { type: 'Sheet' }),
        overlay('v3', 'sa2', 'sb2', 1, 0),
      ],
      sheets,
    );
    expect(rows[0]?.overlays.map((o) => o.id)).toEqual(['w1', 'v1', 'v2']);
    expect(rows[0]?.score).toBe(0.9);
    expect(rows[0]?.changeCount).toBe(3);
    expect(
      viewingOrder([
        overlay('v3', 'sa2', 'sb2', 1, 0),
        overlay('w2', 'sa2', 'sb2', 1, 0, { type: 'Sheet' }),
        overlay('v1', 'sa1', 'sb1', 0.9, 2),
        overlay('w1', 'sa1', 'sb1', 0.97, 3, { type: 'Sheet' }),
      ]).map((o) => o.id),
    ).toEqual(['w1', 'v1', 'w2', 'v3']);
  });

  it('flags a pair whose whole-sheet alignment is not trusted instead of calling it unchanged', () => {
    const rows = buildPairRows(
      result,
      [
        overlay('w3', 'sa3', 'sb3', 0.4, 0, { type: 'Sheet', lowConfidence: true }),
        overlay('w2', 'sa2', 'sb2', 1, 0, { type: 'Sheet' }),
      ],
      sheets,
    );
    expect(rows.find((r) => r.sheetNumber === 'S103')?.lowConfidence).toBe(true);
    expect(rows.find((r) => r.sheetNumber === 'S102')?.lowConfidence).toBe(false);
  });
});
