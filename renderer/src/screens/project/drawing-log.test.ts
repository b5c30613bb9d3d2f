import { describe, expect, it } from 'vitest';
import type { Drawing, Overlay, Sheet } from '../../api/types';
import {
  currentSet,
  deleteCounts,
  existingSheetOverlay,
  logOrder,
  sheetHistory,
} from './drawing-log';

const d = (id: string, issued: string | null, created: string, status = 'Ready') =>
  ({ id, issued_at: issued, created_at: created, status }) as unknown as Drawing;
const s = (id: string, drawing: string, num: string) =>
  ({ id, drawing_id: drawing, sheet_number: num, title: `T ${num}`, index: 0 }) as unknown as Sheet;

describe('drawing log', () => {
  const a = d('a', '2019-06-01', '2020-01-02');
  const b = d('b', '2019-06-02', '2020-01-01');
  const c = d('c', null, '2020-01-03', 'Failed');
  it('lists sets newest issue first and marks the newest ready set current', () => {
    expect(logOrder([a, b]).map((x) => x.id)).toEqual(['b', 'a']);
    expect(currentSet([a, b, c])?.id).toBe('b');
  });
  it('builds each sheet history oldest to newest, with its previous revision', () => {
    const rows = sheetHistory(
      [b, a],
      [s('1', 'a', 'S101'), s('2', 'b', 'S101'), s('3', 'b', 'S102')],
    );
    expect(rows.map((r) => r.sheetNumber)).toEqual(['S101', 'S102']);
    expect(rows[0]?.cells.map((x) => x?.id ?? null)).toEqual(['1', '2']);
    expect(rows[0]?.previous?.id).toBe('1');
    expect(rows[1]?.previous).toBeNull();
  });
  it('finds an existing comparison and counts what a delete takes', () => {
    const o = (id: string, type: string, job: string, n: number) =>
      ({
        id,
        job_id: job,
        change_count: n,
        block_a: { type, sheet_id: '1' },
        block_b: { type, sheet_id: '2' },
      }) as unknown as Overlay;
    const list = [o('v', 'Plan', 'j1', 1), o('w', 'Sheet', 'j1', 3), o('x', 'Sheet', 'j2', 0)];
    expect(existingSheetOverlay(list, s('1', 'a', 'S101'), s('2', 'b', 'S101'))?.id).toBe('w');
    expect(deleteCounts(list)).toEqual({ overlays: 3, changes: 3, comparisons: 2 });
  });
});
