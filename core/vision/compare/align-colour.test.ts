import { describe, expect, it } from 'vitest';
import { rgbToGrey } from '../input/grey-resample';
import { alignRgb } from './align-colour';
import { alignGrey } from './diff';

// The New mode's colour image is B through the comparison's own mapping: its grey is, pixel for
// pixel, the aligned grey the comparison makes (alignGrey), nearest and reduced alike.

function testRgb(width: number, height: number) {
  const data = new Uint8Array(width * height * 3).fill(255);
  let r = 11;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      r = (r * 1103515245 + 12345) >>> 0;
      const p = 3 * (y * width + x);
      if (x % 13 === 0 || y % 17 === 0)
        data.set([0, 0, 0], p); // line work
      else if (r >>> 28 === 0)
        data.set([220, 20, 30], p); // red specks
      else if (r >>> 28 === 1) data.set([(r >>> 8) & 255, (r >>> 16) & 255, r & 255], p);
    }
  return { width, height, data };
}

describe('alignRgb', () => {
  it('draws B in colour exactly where alignGrey draws its grey: shifted, rotated, and reduced from another paper size', () => {
    const src = testRgb(301, 203);
    const grey = { width: src.width, height: src.height, data: rgbToGrey(src.data) };
    const transforms = [
      [1, 0, 12.4, 0, 1, -7.6], // a shift
      [0.9994, -0.0349, 20, 0.0349, 0.9994, 3], // 2 degrees
      [0.5, 0, 4, 0, 0.5, 2], // B at twice the scale: the darkest pixel of each 2 x 2 footprint
    ];
    for (const t of transforms) {
      const [w, h] = [260, 180];
      const colour = alignRgb(src, t, w, h);
      const want = alignGrey(grey, t, w, h, undefined, { darkestBelow: 0.75 });
      expect([...rgbToGrey(colour.data, w * h)]).toEqual([...want.data]);
      // And colour survives: some red specks are drawn.
      let red = 0;
      for (let p = 0; p < w * h; p++)
        if (colour.data[3 * p] === 220 && colour.data[3 * p + 1] === 20) red++;
      expect(red).toBeGreaterThan(50);
    }
  });
});
