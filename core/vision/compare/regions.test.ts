import { describe, expect, it } from 'vitest';
import { diffImages } from './diff';
import {
  findRegions,
  joinStylePieces,
  STYLE_JOIN_PX,
  STYLE_SHARE,
  type ChangeRegion,
} from './regions';
import { compareToPng } from './compare-pipeline.adapter';
import type { GreyImage } from '../types';
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

describe('findLayerRegions: one edit, one change', () => {
  // Old sheet: vertical lines every 60 px (2 px, black).
  function ruled(): GreyImage {
    const img = blankImage(800, 400);
    for (let x = 40; x < 780; x += 60) fillRect(img, x, 20, 2, 360, 0);
    return img;
  }

  it('a line drawn over an old one and on past it is one added region, not pieces and a style sliver', async () => {
    // The new line runs between the two lines of an old wall for 200 px (its pixels there lie within
    // 2 px of the old ink: style) and on for 200 px each side (geometry): the warm-up sheet's line
    // added, in small.
    const wall = (img: GreyImage) => {
      fillRect(img, 300, 196, 200, 2, 0);
      fillRect(img, 300, 202, 200, 2, 0);
    };
    const a = ruled();
    wall(a);
    const b = ruled();
    wall(b);
    fillRect(b, 100, 198, 600, 3, 40);
    const r = await compareToPng(a, b, { images: [], skipRegistration: true });
    const lines = r.regions.filter((g) => g.layer !== 'fill');
    expect(lines, JSON.stringify(lines)).toHaveLength(1);
    expect(lines[0]!.kind).toBe('added');
    expect(lines[0]!.style_share ?? 0).toBeLessThan(STYLE_SHARE);
    expect(lines[0]!.bbox.x).toBeLessThanOrEqual(105);
    expect(lines[0]!.bbox.x + lines[0]!.bbox.width).toBeGreaterThanOrEqual(695);
  });

  it('a long line printed lighter does not join two separate edits at its ends', async () => {
    const a = blankImage(800, 400);
    fillRect(a, 100, 200, 600, 2, 0); // a level line
    const b = blankImage(800, 400);
    fillRect(b, 100, 200, 600, 3, 150); // the same line, lighter and a pen wider: style
    fillRect(b, 80, 170, 14, 60, 0); // an edit at its left end
    fillRect(b, 706, 170, 14, 60, 0); // and one at its right end
    const r = await compareToPng(a, b, { images: [], skipRegistration: true });
    const geometry = r.regions.filter(
      (g) => g.layer !== 'fill' && (g.style_share ?? 0) < STYLE_SHARE,
    );
    expect(geometry, JSON.stringify(r.regions)).toHaveLength(2);
    for (const g of geometry) expect(g.bbox.width).toBeLessThan(100);
  });
});

describe('joinStylePieces', () => {
  const piece = (x: number, y: number, width: number, height: number, added = 0): ChangeRegion => ({
    bbox: { x, y, width, height },
    area_px: width * height,
    added_px: added,
    removed_px: width * height - added,
    kind: added > 0 ? 'modified' : 'removed',
    confidence: 0.8,
    style_share: 1,
  });
  const maxArea = 0.1 * 3400 * 2200;

  it('pieces of one line (cut by tiles or gaps) are one change; its counts add up', () => {
    // A 1-px grid line in three tiles, and a second line 40 px on along the same row.
    const line = [piece(2372, 449, 1, 223), piece(2372, 672, 1, 224), piece(2372, 896, 1, 224)];
    const out = joinStylePieces(line, maxArea);
    expect(out).toHaveLength(1);
    expect(out[0]!.bbox).toEqual({ x: 2372, y: 449, width: 1, height: 671 });
    expect(out[0]!.area_px).toBe(671);
    expect(out[0]!.kind).toBe('removed');
    const row = joinStylePieces([piece(100, 500, 300, 3), piece(440, 500, 200, 3, 600)], maxArea);
    expect(row).toHaveLength(1);
    expect(row[0]!.kind).toBe('modified');
  });

  it('pieces far apart, or whose joined box would be large and mostly empty, stay apart', () => {
    const far = joinStylePieces(
      [piece(100, 100, 200, 3), piece(300 + STYLE_JOIN_PX + 1, 100, 200, 3)],
      maxArea,
    );
    expect(far).toHaveLength(2);
    // Two long lines at a right angle 60 px apart: their joined box is 900 x 900, far over a
    // twelfth of the largest region (62,333 px) and over 1.5 times their boxes.
    const corner = joinStylePieces([piece(100, 100, 800, 2), piece(960, 160, 2, 840)], maxArea);
    expect(corner).toHaveLength(2);
    // Compact pieces of one outline close together: joined (their box is small).
    const outline = joinStylePieces(
      [piece(1354, 1254, 24, 154), piece(1440, 1390, 55, 67)],
      maxArea,
    );
    expect(outline).toHaveLength(1);
    expect(outline[0]!.bbox).toEqual({ x: 1354, y: 1254, width: 141, height: 203 });
  });
});
