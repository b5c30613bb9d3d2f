import { describe, expect, it } from 'vitest';
import { resampleGrey, resampleRgb } from './grey-resample';

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

describe('resampleGrey on mostly blank paper', () => {
  const firstDifference = (a: Uint8Array, b: Uint8Array) =>
    a.length !== b.length ? -2 : a.findIndex((x, i) => x !== b[i]);
  /** A scan-like image: white paper, blank rows and columns, strokes and specks of ink near edges. */
  function paper(sw: number, sh: number, seed: number): Uint8Array {
    const src = new Uint8Array(sw * sh).fill(255);
    let r = seed;
    const rnd = (n: number) => ((r = (r * 1103515245 + 12345) >>> 0) >>> 8) % n;
    for (let k = 0; k < 6; k++) {
      const y = rnd(sh);
      const x = rnd(sw);
      const len = 1 + rnd(sw - x);
      for (let i = 0; i < len; i++) src[y * sw + x + i] = rnd(200); // a horizontal stroke
    }
    src[0] = 0; // ink in the corners and on the last column
    src[sw * sh - 1] = 17;
    src[rnd(sh) * sw + sw - 1] = 254;
    return src;
  }

  it('gives exactly the pixels of computing every pixel, enlarging and reducing, whole and in bands', () => {
    const cases = [
      [283, 275, 567, 550], // a scan tile at 2x, as on the barber sheets
      [40, 30, 61, 45], // 1.5x
      [40, 30, 100, 75], // 2.5x
      [64, 48, 16, 12], // 4x reduction
      [50, 37, 33, 29], // uneven reduction
      [1, 9, 3, 20], // one column
      [9, 1, 20, 3], // one row
    ] as const;
    let checked = 0;
    for (const [sw, sh, dw, dh] of cases)
      for (const seed of [1, 2, 3]) {
        const src = paper(sw, sh, seed);
        const dense = new Uint8Array(dw * dh);
        resampleGrey(src, sw, sh, dw, dh, dense, 0, dw, 0, dh, { skipBlank: false });
        const sparse = new Uint8Array(dw * dh).fill(7); // every pixel must be written
        resampleGrey(src, sw, sh, dw, dh, sparse, 0, dw);
        expect(firstDifference(sparse, dense)).toBe(-1);
        const [from, to] = [Math.floor(dh / 3), Math.floor((2 * dh) / 3) + 1];
        const band = new Uint8Array(dw * (to - from)).fill(7);
        resampleGrey(src, sw, sh, dw, dh, band, 0, dw, from, to);
        expect(firstDifference(band, dense.subarray(from * dw, to * dw))).toBe(-1);
        checked++;
      }
    expect(checked).toBe(21);
  });

  it('finds ink after paper skipped a word at a time, from a source at any byte offset (grey and RGB)', () => {
    // Rows of paper with one inked byte at every position in turn, and blank rows: ink next to a
    // 4-byte boundary of the buffer, or one byte before the row's end, must not be skipped.
    let checked = 0;
    for (const [sw, sh, dw, dh] of [
      [13, 11, 26, 22],
      [37, 9, 74, 18],
    ] as const)
      for (let offset = 0; offset < 4; offset++) {
        for (let at = 0; at < sw * 3; at++) {
          const grey = new Uint8Array(sw * sh).fill(255);
          const rgb = new Uint8Array(sw * sh * 3).fill(255);
          for (let y = 0; y < sh; y += 2) {
            grey[y * sw + ((at + y) % sw)] = 40;
            rgb[y * sw * 3 + ((at + y) % (sw * 3))] = 40;
          }
          const gSrc = new Uint8Array(grey.length + 4).subarray(offset, offset + grey.length);
          gSrc.set(grey);
          const dense = new Uint8Array(dw * dh);
          resampleGrey(grey, sw, sh, dw, dh, dense, 0, dw, 0, dh, { skipBlank: false });
          const sparse = new Uint8Array(dw * dh).fill(7);
          resampleGrey(gSrc, sw, sh, dw, dh, sparse, 0, dw);
          expect(firstDifference(sparse, dense)).toBe(-1);
          const cSrc = new Uint8Array(rgb.length + 4).subarray(offset, offset + rgb.length);
          cSrc.set(rgb);
          const out = new Uint8Array(dw * dh * 3).fill(7);
          resampleRgb(cSrc, sw, sh, dw, dh, out, 0, dw * 3);
          for (let c = 0; c < 3; c++) {
            const plane = Uint8Array.from({ length: sw * sh }, (_, i) => rgb[3 * i + c]!);
            const want = new Uint8Array(dw * dh);
            resampleGrey(plane, sw, sh, dw, dh, want, 0, dw, 0, dh, { skipBlank: false });
            const got = Uint8Array.from({ length: dw * dh }, (_, i) => out[3 * i + c]!);
            expect(firstDifference(got, want)).toBe(-1);
          }
          checked++;
        }
      }
    expect(checked).toBe(4 * (13 * 3 + 37 * 3));
  });

  it('fills a blank image white without reading ink anywhere', () => {
    const out = new Uint8Array(30 * 20).fill(0);
    resampleGrey(new Uint8Array(15 * 10).fill(255), 15, 10, 30, 20, out, 0, 30);
    expect(out.every((x) => x === 255)).toBe(true);
  });
});
