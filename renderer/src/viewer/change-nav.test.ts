import { describe, expect, it } from 'vitest';
import { frameRegion, readingOrder, stepIndex } from './change-nav';

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

  it('keeps a region inside the frame as it is', () => {
    const bbox = { x: 10, y: 20, width: 30, height: 40 };
    expect(frameRegion(bbox, { width: 100, height: 100 })).toEqual({
      inFrame: bbox,
      fit: 'inside',
    });
    // Touching the far edges is still inside.
    const edge = { x: 60, y: 0, width: 40, height: 100 };
    expect(frameRegion(edge, { width: 100, height: 100 }).fit).toBe('inside');
  });

  it('cuts a region that continues beyond the frame at its edges (ASK-003: a window tag past the block box)', () => {
    // The ASK-003 main view: frame 3110x2020; the new AR28 tag reaches 118 px past its right edge.
    const r = frameRegion(
      { x: 3008, y: 877, width: 220, height: 167 },
      { width: 3110, height: 2020 },
    );
    expect(r).toEqual({ inFrame: { x: 3008, y: 877, width: 102, height: 167 }, fit: 'partial' });
    const topLeft = frameRegion(
      { x: -11, y: -5, width: 20, height: 10 },
      { width: 100, height: 100 },
    );
    expect(topLeft).toEqual({ inFrame: { x: 0, y: 0, width: 9, height: 5 }, fit: 'partial' });
  });

  it('reports a region wholly beyond the frame, including one that only touches its edge', () => {
    expect(
      frameRegion({ x: 120, y: 10, width: 5, height: 5 }, { width: 100, height: 100 }),
    ).toEqual({
      inFrame: null,
      fit: 'outside',
    });
    expect(
      frameRegion({ x: 100, y: 10, width: 5, height: 5 }, { width: 100, height: 100 }).fit,
    ).toBe('outside');
    expect(
      frameRegion({ x: 10, y: -50, width: 5, height: 50 }, { width: 100, height: 100 }).fit,
    ).toBe('outside');
  });
});
