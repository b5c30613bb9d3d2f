import { describe, expect, it } from 'vitest';
import { greyToRgb, packLineRows } from './pdfium.adapter';

/** The rule packLineRows documents, one pixel at a time: bit set where the pixel's grey < threshold. */
function reference(
  heap: Uint8Array,
  buf: number,
  stride: number,
  width: number,
  height: number,
  threshold: number,
  layout: 'rgb' | 'bgr',
): Uint8Array {
  const rb = Math.ceil(width / 8);
  const out = new Uint8Array((rb + 1) * height);
  const [w0, w2] = layout === 'rgb' ? [30, 11] : [11, 30];
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = buf + y * stride + x * 3;
      const grey = Math.floor((heap[i]! * w0 + heap[i + 1]! * 59 + heap[i + 2]! * w2) / 100);
      if (grey < threshold) out[y * (rb + 1) + 1 + (x >> 3)]! |= 0x80 >> (x & 7);
    }
  }
  return out;
}

/** A colour bitmap of paper with runs of ink, colours near the threshold and single dark bytes. */
function bitmap(width: number, height: number, stride: number, buf: number, seed: number) {
  const heap = new Uint8Array(buf + stride * height + 8).fill(255);
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) >>> 0;
    return s / 2 ** 32;
  };
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = buf + y * stride + x * 3;
      const u = rnd();
      if (u < 0.7) continue; // paper
      if (u < 0.8) {
        heap[i] = heap[i + 1] = heap[i + 2] = Math.floor(rnd() * 256);
      } else if (u < 0.9) {
        // one channel only: colour, around the line-work threshold
        heap[i + Math.floor(rnd() * 3)] = 200 + Math.floor(rnd() * 56);
      } else {
        heap[i] = Math.floor(rnd() * 256);
        heap[i + 1] = Math.floor(rnd() * 256);
        heap[i + 2] = Math.floor(rnd() * 256);
      }
    }
  }
  return heap;
}

describe('packLineRows on colour bitmaps', () => {
  it('sets exactly the pixels whose grey is under the threshold, in both byte orders, aligned or not', () => {
    for (const [width, height, pad, buf] of [
      [64, 9, 0, 0],
      [61, 7, 1, 0], // rows not a whole number of words: padded to the next word, PDFium's stride
      [67, 5, 4, 8],
      [40, 6, 0, 3], // unaligned start: one pixel at a time
      [5, 4, 3, 0], // narrower than one byte of output
    ] as const) {
      const stride = Math.ceil((width * 3 + pad) / 4) * 4 + (buf % 4 === 3 ? 1 : 0);
      const heap = bitmap(width, height, stride, buf, width * 31 + height);
      for (const layout of ['rgb', 'bgr'] as const) {
        for (const threshold of [240, 128, 1, 255]) {
          const got = packLineRows(heap, buf, stride, width, height, threshold, layout);
          expect(
            Buffer.from(got).equals(
              Buffer.from(reference(heap, buf, stride, width, height, threshold, layout)),
            ),
          ).toBe(true);
        }
      }
    }
  });

  it('finds a lone pale pixel in a run of paper and nothing in paper', () => {
    const width = 48;
    const stride = width * 3;
    const heap = new Uint8Array(stride * 2).fill(255);
    heap[stride + 21 * 3 + 1] = 200; // row 1, pixel 21: green channel 200 → grey 231 < 240
    const got = packLineRows(heap, 0, stride, width, 2, 240, 'rgb');
    const rb = width / 8;
    expect(Array.from(got.subarray(1, 1 + rb))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(Array.from(got.subarray(rb + 2, 2 * rb + 2))).toEqual([0, 0, 0x04, 0, 0, 0]);
  });
});

describe('greyToRgb', () => {
  it('writes each grey pixel to R, G and B, at any output offset and length', () => {
    const grey = Uint8Array.from({ length: 41 }, (_, i) => (i * 37 + 11) % 256);
    grey.fill(255, 20, 28); // a run of paper
    for (const offset of [0, 1, 2, 3, 5]) {
      for (const [t, n] of [
        [0, 41],
        [3, 17],
        [7, 3],
        [0, 0],
      ] as const) {
        const backing = new Uint8Array(offset + 3 * 41 + 8).fill(7);
        // A view that does not start on a word, as a sheet's row may not.
        const out = backing.subarray(1);
        greyToRgb(grey, t, out, offset, n);
        const want = new Uint8Array(backing.length).fill(7);
        for (let x = 0; x < n; x++)
          want.fill(grey[t + x]!, 1 + offset + 3 * x, 1 + offset + 3 * x + 3);
        expect([...backing]).toEqual([...want]);
      }
    }
  });
});
