import { describe, expect, it } from 'vitest';
import { readingOrder, stepIndex } from './change-nav';

describe('change navigation', () => {
  it('orders regions by row band, then left to right', () => {
    const b = (x: number, y: number) => ({ x, y, width: 10, height: 10 });
    const items = [
      { id: 'c', bbox: b(50, 700) },
      { id: 'b', bbox: b(900, 20) },
      { id: 'a', bbox: b(100, 150) },
    ];
    expect(readingOrder(items, 300).map((i) => i.id)).toEqual(['a', 'b', 'c']);
  });

  it('wraps in both directions and starts at either end from no selection', () => {
    expect(stepIndex(-1, 3, 1)).toBe(0);
    expect(stepIndex(-1, 3, -1)).toBe(2);
    expect(stepIndex(2, 3, 1)).toBe(0);
    expect(stepIndex(0, 3, -1)).toBe(2);
    expect(stepIndex(0, 0, 1)).toBe(-1);
  });
});
