import { describe, expect, it } from 'vitest';
import { mipWidths, pickLevel } from './mip-levels';

describe('mip levels', () => {
  it('halves down to about the floor', () => {
    expect(mipWidths(10200, 1024)).toEqual([5100, 2550, 1275, 637]);
    expect(mipWidths(800, 1024)).toEqual([]);
  });
  it('draws the smallest level that still covers the screen, else full size', () => {
    const widths = [5100, 2550, 1275, 637];
    expect(pickLevel(widths, 10200, 0.05)).toBe(3); // needs 510 px
    expect(pickLevel(widths, 10200, 0.1)).toBe(2); // needs 1020 px
    expect(pickLevel(widths, 10200, 0.1, 2)).toBe(1); // needs 2040 px
    expect(pickLevel(widths, 10200, 0.6)).toBe(-1); // needs 6120 px: full image
  });
});
