import { describe, expect, it } from 'vitest';
import { diffImages } from './diff';
import { findRegions } from './regions';
import { blankImage, fillRect, strokeRect } from './test-support';

describe('findRegions', () => {
  const base = blankImage(400, 300);
  strokeRect(base, 5, 5, 390, 290, 2);
  fillRect(base, 50, 50, 40, 20, 0); // will be moved
  fillRect(base, 300, 200, 30, 30, 0); // will be removed
  fillRect(base, 200, 60, 60, 4, 0); // will be modified (shortened, and a vertical bar added)

  it('no changes → no regions', () => {
    expect(findRegions(diffImages(base, base))).toEqual([]);
  });

  it('finds added, removed, moved and modified regions with tight boxes and drops specks', () => {
    const b = blankImage(400, 300);
    strokeRect(b, 5, 5, 390, 290, 2);
    fillRect(b, 50, 180, 40, 20, 0); // moved down 130 px (three blocks: separate regions)
    fillRect(b, 200, 60, 30, 4, 0); // modified: 120 px removed...
    fillRect(b, 226, 64, 4, 30, 0); // ...and 120 px added
    fillRect(b, 365, 20, 25, 10, 0); // added
    b.data[20 * 400 + 150] = 0; // 1-px speck: never a region
    b.data[20 * 400 + 151] = 0;
    const regions = findRegions(diffImages(base, b), { maxMovePx: 150 });
    const byKind = (k: string) => regions.filter((r) => r.kind === k);
    expect(byKind('added')).toHaveLength(1);
    expect(byKind('added')[0]!.bbox).toEqual({ x: 365, y: 20, width: 25, height: 10 });
    expect(byKind('removed')).toHaveLength(1);
    expect(byKind('removed')[0]!.bbox).toEqual({ x: 300, y: 200, width: 30, height: 30 });
    expect(byKind('removed')[0]!.area_px).toBe(900);
    const moved = byKind('moved');
    expect(moved).toHaveLength(2);
    expect(moved.map((r) => r.bbox.y).sort((p, q) => p - q)).toEqual([50, 180]);
    expect(regions[moved[0]!.moved_with!]).toBe(moved[1]);
    expect(byKind('modified')).toHaveLength(1);
    expect(regions).toHaveLength(5);
    for (const r of regions) {
      expect(r.confidence).toBeGreaterThan(0);
      expect(r.confidence).toBeLessThanOrEqual(1);
    }
  });

  it('a small move inside one region is "moved"; nearby strokes bridge into one region', () => {
    const b = blankImage(400, 300);
    strokeRect(b, 5, 5, 390, 290, 2);
    fillRect(b, 58, 50, 40, 20, 0); // moved 8 px right: overlapping → one region
    fillRect(b, 300, 200, 30, 30, 0);
    fillRect(b, 200, 60, 60, 4, 0);
    const regions = findRegions(diffImages(base, b));
    expect(regions).toHaveLength(1);
    expect(regions[0]!.kind).toBe('moved');
    // two added marks 30 px apart become one region with the default 40 px bridge, two with 0
    const c = blankImage(400, 300);
    strokeRect(c, 5, 5, 390, 290, 2);
    fillRect(c, 50, 50, 40, 20, 0);
    fillRect(c, 300, 200, 30, 30, 0);
    fillRect(c, 200, 60, 60, 4, 0);
    fillRect(c, 100, 120, 10, 10, 0);
    fillRect(c, 170, 120, 10, 10, 0); // 60 px gap, two blocks apart
    expect(findRegions(diffImages(base, c))).toHaveLength(1);
    expect(findRegions(diffImages(base, c), { bridgePx: 0, minAreaPx: 10 })).toHaveLength(2);
  });
});
