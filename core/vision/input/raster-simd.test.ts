import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resampleGrey, resampleRgb } from './grey-resample';
import { greyFromRgb, greyToRgb, packLineRows } from './pdfium.adapter';
import {
  greyRowsSimd,
  packRowsSimd,
  rasterKernels,
  resampleRgbSimd,
  type SimdHeap,
} from './raster-simd';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Bytes of canary after each allocation of testHeap: a kernel writing past its scratch breaks one. */
const GUARD = 48;

/**
 * A heap of its own with a bump allocator (PDFium's malloc in production) that puts a canary after
 * every allocation: `intact()` says whether every canary (of live and freed blocks) is unbroken.
 */
function testHeap(pages = 64): SimdHeap & { allocations: number; intact(): boolean } {
  const memory = new WebAssembly.Memory({ initial: pages });
  let next = 1024;
  const blocks: [number, number][] = [];
  const heap = {
    memory,
    allocations: 0,
    malloc(size: number) {
      // Any alignment: the kernels must not assume malloc's.
      const at = next + 1;
      next = at + size + GUARD + 7;
      if (next > memory.buffer.byteLength)
        memory.grow(Math.ceil((next - memory.buffer.byteLength) / 65536));
      new Uint8Array(memory.buffer).fill(0xa5, at + size, at + size + GUARD);
      blocks.push([at, size]);
      heap.allocations++;
      return at;
    },
    free() {
      heap.allocations--;
    },
    intact() {
      const u8 = new Uint8Array(memory.buffer);
      return blocks.every(([at, size]) =>
        u8.subarray(at + size, at + size + GUARD).every((b) => b === 0xa5),
      );
    },
  };
  return heap;
}

const firstDifference = (a: Uint8Array, b: Uint8Array) =>
  a.length !== b.length ? -2 : a.findIndex((x, i) => x !== b[i]);

/** Deterministic pseudo-random bytes. */
function noise(n: number, seed: number): Uint8Array {
  let s = seed >>> 0 || 1;
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s & 255;
  }
  return out;
}

/** A colour scan-like image: white paper, grey strokes, coloured marks, random pixels. */
function colourScan(w: number, h: number, seed: number): Uint8Array {
  const rgb = new Uint8Array(w * h * 3).fill(255);
  const rnd = noise(w * h, seed);
  for (let p = 0; p < w * h; p++) {
    const k = rnd[p]!;
    if (k < 20)
      rgb.set([k * 3, k * 3, k * 3], p * 3); // grey ink (R = G = B)
    else if (k < 30)
      rgb.set([200 + k, 40, 30 + k], p * 3); // red marks
    else if (k < 34) rgb.set([(k * 37) & 255, (k * 91) & 255, (k * 53) & 255], p * 3);
    else if (k < 36) rgb.set([255, 255 - k, 255], p * 3); // near white, faint tint
  }
  // Blank rows and a blank band of columns, as scans have.
  for (let y = 0; y < h; y += 5) rgb.fill(255, y * w * 3, (y + 1) * w * 3);
  return rgb;
}

describe('raster-simd kernels', () => {
  it('are available here (Node has WebAssembly SIMD)', () => {
    expect(rasterKernels(new WebAssembly.Memory({ initial: 1 }))).not.toBeNull();
  });

  it("grey_rows gives greyFromRgb's grey and coloured count on every width, stride and row count", () => {
    const heap = testHeap();
    for (const [width, rows, pad, seed] of [
      [1, 1, 0, 1],
      [15, 3, 1, 2],
      [16, 2, 0, 3],
      [17, 4, 3, 4],
      [47, 7, 2, 5],
      [333, 21, 1, 6],
      [1024, 9, 0, 7],
    ] as const) {
      const stride = width * 3 + pad;
      const rgb = colourScan(width, rows, seed);
      const src = heap.malloc(stride * rows);
      const dst = heap.malloc(width * rows);
      const u8 = new Uint8Array(heap.memory.buffer);
      for (let y = 0; y < rows; y++)
        u8.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), src + y * stride);
      u8.fill(7, dst, dst + width * rows);
      const want = new Uint8Array(width * rows);
      const wantColoured = greyFromRgb(rgb, want, 0, width * rows);
      const got = greyRowsSimd(heap, src, stride, width, rows, dst);
      expect(got).toBe(wantColoured);
      expect(new Uint8Array(heap.memory.buffer, dst, width * rows)).toEqual(want);
      expect(heap.intact()).toBe(true);
    }
  });

  it('grey_rows of pure noise (every pixel its own colour) matches too', () => {
    const heap = testHeap();
    const [width, rows] = [517, 13];
    const rgb = noise(width * rows * 3, 99);
    const src = heap.malloc(rgb.length);
    const dst = heap.malloc(width * rows);
    new Uint8Array(heap.memory.buffer).set(rgb, src);
    const want = new Uint8Array(width * rows);
    const coloured = greyFromRgb(rgb, want, 0, width * rows);
    expect(coloured).toBeGreaterThan(width * rows * 0.5);
    expect(greyRowsSimd(heap, src, width * 3, width, rows, dst)).toBe(coloured);
    expect(new Uint8Array(heap.memory.buffer, dst, width * rows)).toEqual(want);
  });

  it("pack_rows gives packLineRows' bits on every width, stride, byte order and threshold", () => {
    const heap = testHeap(256);
    let checked = 0;
    for (const [width, rows, pad, seed] of [
      [1, 1, 0, 1],
      [7, 3, 1, 2],
      [15, 2, 0, 3],
      [16, 2, 0, 4],
      [17, 4, 3, 5],
      [33, 5, 2, 6],
      [333, 300, 1, 7], // more rows than one scratch block
      [1024, 9, 0, 8],
    ] as const) {
      const stride = width * 3 + pad;
      // Half scan-like (paper, ink, marks near white), half noise (grey near every threshold).
      const rgb = colourScan(width, rows, seed);
      rgb.set(noise((width * rows * 3) >> 1, seed + 50));
      const src = heap.malloc(stride * rows);
      const u8 = new Uint8Array(heap.memory.buffer);
      for (let y = 0; y < rows; y++)
        u8.set(rgb.subarray(y * width * 3, (y + 1) * width * 3), src + y * stride);
      for (const layout of ['rgb', 'bgr'] as const)
        for (const threshold of [240, 250, 128, 1, 255]) {
          const heapU8 = new Uint8Array(heap.memory.buffer);
          const want = packLineRows(heapU8, src, stride, width, rows, threshold, layout);
          const rb = Math.ceil(width / 8);
          const got = new Uint8Array((rb + 1) * rows);
          const [w0, w2] = layout === 'rgb' ? [30, 11] : [11, 30];
          expect(
            packRowsSimd(heap, src, stride, width, rows, w0, w2, threshold * 100, got, rb + 1),
          ).toBe(true);
          expect(firstDifference(got, want)).toBe(-1);
          // Through packLineRows with the heap given: the same.
          const via = packLineRows(heapU8, src, stride, width, rows, threshold, layout, heap);
          expect(firstDifference(via, want)).toBe(-1);
          checked++;
        }
      expect(heap.intact()).toBe(true);
    }
    expect(checked).toBe(8 * 2 * 5);
  });

  it('pack_rows declines a limit paper would be under (its all-paper step assumes it is not)', () => {
    const heap = testHeap();
    const src = heap.malloc(48);
    new Uint8Array(heap.memory.buffer).fill(255, src, src + 48);
    const out = new Uint8Array(3);
    expect(packRowsSimd(heap, src, 48, 16, 1, 30, 11, 25501, out, 3)).toBe(false);
    expect(packRowsSimd(heap, src, 48, 16, 1, 30, 11, 25500, out, 3)).toBe(true);
    expect(Array.from(out)).toEqual([0, 0, 0]);
  });

  it('resample_rgb_rows gives resampleRgb’s bytes enlarging 1.5-2.5x, whole and in row ranges', () => {
    for (const [sw, sh, dw, dh, seed] of [
      [283, 275, 567, 550, 1], // a barber scan tile at 2x
      [40, 31, 61, 70, 2],
      [2, 2, 5, 4, 3],
      [97, 53, 241, 132, 4],
      [16, 16, 24, 24, 5],
    ] as const) {
      const src = colourScan(sw, sh, seed);
      for (const [from, to] of [
        [0, dh],
        [3, Math.min(dh, 17)],
        [dh - 5, dh],
      ] as const) {
        const heap = testHeap();
        const outStride = dw * 3 + 5;
        const want = new Uint8Array(outStride * (to - from)).fill(9);
        resampleRgb(src, sw, sh, dw, dh, want, 0, outStride, from, to);
        const out = heap.malloc(want.length);
        new Uint8Array(heap.memory.buffer).fill(9, out, out + want.length);
        expect(resampleRgbSimd(heap, src, sw, sh, dw, dh, out, outStride, from, to)).toBe(true);
        expect(heap.allocations).toBe(1); // the scratch is freed
        expect(heap.intact()).toBe(true); // and nothing was written past it
        const got = new Uint8Array(heap.memory.buffer, out, want.length);
        // Every byte, the rows' padding (past 3 dw, left alone by both) included.
        expect(firstDifference(got, want)).toBe(-1);
      }
    }
  });

  it("scales a grey image given as R = G = B to its resampleGrey scaled into three channels (the painter's grey tiles)", () => {
    const [sw, sh, dw, dh] = [283, 275, 567, 550];
    const rgb = colourScan(sw, sh, 11);
    const grey = new Uint8Array(sw * sh);
    greyFromRgb(rgb, grey, 0, sw * sh);
    const scaled = new Uint8Array(dw * dh);
    resampleGrey(grey, sw, sh, dw, dh, scaled, 0, dw);
    const want = new Uint8Array(dw * dh * 3);
    greyToRgb(scaled, 0, want, 0, dw * dh);
    const triplets = new Uint8Array(sw * sh * 3);
    greyToRgb(grey, 0, triplets, 0, sw * sh);
    const heap = testHeap();
    const out = heap.malloc(want.length);
    expect(resampleRgbSimd(heap, triplets, sw, sh, dw, dh, out, dw * 3)).toBe(true);
    expect(firstDifference(new Uint8Array(heap.memory.buffer, out, want.length), want)).toBe(-1);
  });

  it('resample_rgb_rows declines what is not an enlargement both ways (the JS loop scales it)', () => {
    const heap = testHeap();
    const src = colourScan(50, 40, 3);
    const out = heap.malloc(30 * 3 * 80);
    expect(resampleRgbSimd(heap, src, 50, 40, 30, 80, out, 90)).toBe(false);
    expect(resampleRgbSimd(heap, src.subarray(0, 50 * 3), 50, 1, 100, 2, out, 300)).toBe(false);
  });

  it('is built from raster-simd.wat (scripts/build-wasm.mjs --check)', () => {
    execFileSync(process.execPath, [path.join(repo, 'scripts/build-wasm.mjs'), '--check'], {
      stdio: 'pipe',
    });
  });
});
