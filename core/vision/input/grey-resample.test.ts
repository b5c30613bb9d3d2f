import { describe, expect, it } from 'vitest';
import { resampleGrey } from './grey-resample';

function scale(src: Uint8Array, sw: number, sh: number, dw: number, dh: number): Uint8Array {
  const out = new Uint8Array(dw * dh);
  resampleGrey(src, sw, sh, dw, dh, out, 0, dw);
  return out;
}

describe('resampleGrey', () => {
  it('keeps flat areas exactly their value, enlarging or reducing', () => {
    for (const v of [0, 1, 128, 254, 255]) {
      const src = new Uint8Array(7 * 5).fill(v);
      for (const [dw, dh] of [
        [14, 10],
        [19, 13],
        [3, 2],
        [7, 5],
      ] as const) {
        expect(scale(src, 7, 5, dw, dh).every((x) => x === v)).toBe(true);
      }
    }
  });

  it('enlarges bilinearly between pixel centres: a black-white step at 2x', () => {
    // One row: 0 0 255 255 → at 2x, centres at 0.25, 0.75, … of a source pixel.
    const out = scale(Uint8Array.from([0, 0, 255, 255]), 4, 1, 8, 1);
    expect(Array.from(out)).toEqual([0, 0, 0, 64, 191, 255, 255, 255]);
  });

  it('reduces by area: a 1-pixel line survives a 4x reduction as a quarter of its ink', () => {
    const src = new Uint8Array(16 * 16).fill(255);
    for (let y = 0; y < 16; y++) src[y * 16 + 5] = 0; // a black column at x = 5
    const out = scale(src, 16, 16, 4, 4);
    for (let y = 0; y < 4; y++) {
      expect(out[y * 4 + 1]).toBe(191); // 3 white + 1 black of 4
      expect(out[y * 4 + 0]).toBe(255);
    }
  });

  it('rows computed alone (a band of the page) are the rows of the whole', () => {
    const [sw, sh, dw, dh] = [53, 41, 117, 90];
    const src = new Uint8Array(sw * sh).map((_, i) => (i * 37 + (i >> 3)) & 255);
    const whole = scale(src, sw, sh, dw, dh);
    const stride = dw + 3;
    const part = new Uint8Array(stride * 30);
    resampleGrey(src, sw, sh, dw, dh, part, 0, stride, 40, 70);
    for (let y = 40; y < 70; y++)
      expect(part.subarray((y - 40) * stride, (y - 40) * stride + dw)).toEqual(
        whole.subarray(y * dw, (y + 1) * dw),
      );
  });
});
