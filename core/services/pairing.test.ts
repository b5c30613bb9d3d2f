import { describe, expect, it } from 'vitest';
import { maxBlockPairs, pairBlocks, pairSheets, type BlockInfo, type SheetInfo } from './pairing';

const sheet = (id: string, num: string | null, title: string | null, page: number): SheetInfo => ({
  id,
  sheet_number: num,
  title,
  page_index: page,
});
const block = (
  id: string,
  type: string,
  x: number,
  y: number,
  w: number,
  h: number,
  identifier: string | null = null,
  title: string | null = null,
): BlockInfo => ({
  id,
  type,
  identifier,
  title,
  bbox: { x, y, width: w, height: h },
});

describe('pairSheets', () => {
  it('pairs by normalized number across reordering, reports added and removed sheets', () => {
    const a = [
      sheet('a1', 'A-101', 'Plan', 0),
      sheet('a2', 'A-102', 'Roof', 1),
      sheet('a3', 'S-1', 'Framing', 2),
    ];
    const b = [
      sheet('b1', 'A.1O2', 'Roof', 0),
      sheet('b2', 'A101', 'Plan', 1),
      sheet('b3', 'A-103', 'Sections', 2),
    ];
    const p = pairSheets(a, b);
    expect(p.pairs).toEqual([
      { sheet_a_id: 'a2', sheet_b_id: 'b1', method: 'sheet_number', confidence: 0.95 },
      { sheet_a_id: 'a1', sheet_b_id: 'b2', method: 'sheet_number', confidence: 0.95 },
    ]);
    expect(p.added).toEqual(['b3']);
    expect(p.removed).toEqual(['a3']);
  });

  it('falls back to the title, then to visual similarity above a threshold', () => {
    const a = [
      sheet('a1', null, 'First Floor Plan', 0),
      sheet('a2', null, null, 1),
      sheet('a3', null, null, 2),
    ];
    const b = [
      sheet('b1', 'X9', 'FIRST FLOOR PLAN', 0),
      sheet('b2', null, null, 1),
      sheet('b3', null, null, 2),
    ];
    const sim = (x: SheetInfo, y: SheetInfo) =>
      x.id === 'a3' && y.id === 'b2' ? 0.9 : x.id === 'a2' && y.id === 'b3' ? 0.3 : 0.1;
    const p = pairSheets(a, b, sim);
    expect(p.pairs).toEqual([
      { sheet_a_id: 'a1', sheet_b_id: 'b1', method: 'title', confidence: 0.8 },
      { sheet_a_id: 'a3', sheet_b_id: 'b2', method: 'visual', confidence: 0.63 },
    ]);
    expect(p.added).toEqual(['b3']);
    expect(p.removed).toEqual(['a2']);
  });
});

describe('pairBlocks', () => {
  const I = [1, 0, 0, 0, 1, 0] as const;
  it('pairs by identifier and title, title blocks only with title blocks, position for the rest', () => {
    const a = [
      block('p1', 'Plan', 100, 100, 400, 300, '1', 'First floor'),
      block('d2', 'Detail', 600, 100, 100, 100, '2', 'Detail'),
      block('tb', 'TitleBlock', 900, 0, 100, 800),
    ];
    const b = [
      block('tb2', 'TitleBlock', 905, 0, 95, 800),
      block('d2b', 'Detail', 200, 500, 100, 100, '2', 'Detail'),
      block('p1b', 'Plan', 110, 95, 400, 300, '1', 'First floor'),
    ];
    const pairs = pairBlocks(a, b, I, 1300);
    const map = Object.fromEntries(pairs.map((p) => [p.block_a_id, p.block_b_id]));
    expect(map).toEqual({ p1: 'p1b', d2: 'd2b', tb: 'tb2' });
    expect(pairs.length).toBeLessThanOrEqual(maxBlockPairs(a.length, b.length));
  });

  it('uses the sheet transform for positions (another paper size) and pairs the drawing areas when nothing else pairs', () => {
    const a = [block('x', 'Plan', 100, 100, 400, 300), block('tb', 'TitleBlock', 900, 0, 100, 800)];
    const b = [
      block('y', 'Plan', 200, 200, 800, 600),
      block('tb2', 'TitleBlock', 1800, 0, 200, 1600),
    ];
    const half = [0.5, 0, 0, 0, 0.5, 0] as const;
    expect(
      Object.fromEntries(
        pairBlocks(a, b, half, 1300).map((p) => [p.block_a_id, [p.block_b_id, p.method]]),
      ),
    ).toEqual({ x: ['y', 'position'], tb: ['tb2', 'position'] });
    const far = [
      block('z', 'Elevation', 2000, 1400, 100, 50),
      block('tb2', 'TitleBlock', 1800, 0, 200, 1600),
    ];
    const pairs = pairBlocks(a, far, half, 1300);
    expect(pairs.find((p) => p.block_a_id === 'x')).toMatchObject({
      block_b_id: 'z',
      method: 'drawing_area',
    });
  });

  it('always pairs the two Sheet blocks, first, and never a Sheet block with a view', () => {
    // The whole pages differ in size (another paper size) and in place after the transform: they
    // still pair, and the views pair among themselves as before, the drawing-area fallback included.
    const a = [
      block('sa', 'Sheet', 0, 0, 1000, 800),
      block('x', 'Plan', 100, 100, 400, 300),
      block('tb', 'TitleBlock', 900, 0, 100, 800),
    ];
    const b = [
      block('z', 'Elevation', 2000, 1400, 100, 50),
      block('tb2', 'TitleBlock', 1800, 0, 200, 1600),
      block('sb', 'Sheet', 0, 0, 2000, 1600),
    ];
    const half = [0.5, 0, 0, 0, 0.5, 0] as const;
    const pairs = pairBlocks(a, b, half, 1300);
    expect(pairs[0]).toEqual({
      block_a_id: 'sa',
      block_b_id: 'sb',
      method: 'sheet',
      confidence: 1,
    });
    expect(Object.fromEntries(pairs.map((p) => [p.block_a_id, [p.block_b_id, p.method]]))).toEqual({
      sa: ['sb', 'sheet'],
      x: ['z', 'drawing_area'],
      tb: ['tb2', 'position'],
    });
    expect(pairs.length).toBeLessThanOrEqual(maxBlockPairs(a.length, b.length));
    // A Sheet block alone on one side pairs with nothing: a view is not a whole page.
    expect(pairBlocks(a, b.slice(0, 2), half, 1300).some((p) => p.block_a_id === 'sa')).toBe(false);
  });
});
