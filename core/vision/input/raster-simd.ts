// Pixel kernels of the ingest raster on WebAssembly SIMD (raster-simd.wat), each giving its JS
// loop's bytes exactly (tests compare both on random images):
//   greyRowsSimd — pdfium.adapter.ts greyFromRgb over rows of a colour bitmap, with the coloured
//     count, 16 pixels per step (the JS loop does one pixel, or four white ones, at a time);
//   resampleRgbSimd — grey-resample.ts resampleRgb when it enlarges (the painter's scan tiles);
//   packRowsSimd — pdfium.adapter.ts packColourLineRows (the line-work and object layer passes of a
//     colour page, 1 bit a pixel), 16 pixels per step.
// The module imports its memory: it is instantiated once per WebAssembly.Memory (a PDFium instance's
// heap), so it works on PDFium's bitmap in place, with scratch taken from PDFium's malloc. Where
// WebAssembly SIMD is missing, the JS loops run. Built like masks-simd.ts (scripts/build-wasm.mjs).
import { resampleRgbPlan } from './grey-resample';
import { WASM_BASE64 } from './raster-simd.wasm';

interface RasterExports {
  grey_rows(src: number, stride: number, width: number, rows: number, dst: number): number;
  resample_rgb_rows(
    src: number,
    rowBytes: number,
    rows: number,
    params: number,
    tab: number,
    line: number,
    out: number,
    outStride: number,
  ): void;
  pack_rows(
    src: number,
    stride: number,
    width: number,
    rows: number,
    dst: number,
    dstStride: number,
    w0: number,
    w2: number,
    limit: number,
  ): void;
}

/** A WebAssembly heap the kernels work in: its memory and its allocator (PDFium's malloc/free). */
export interface SimdHeap {
  memory: WebAssembly.Memory;
  malloc(size: number): number;
  free(ptr: number): void;
}

let compiled: WebAssembly.Module | null | undefined;
const instances = new WeakMap<WebAssembly.Memory, RasterExports | null>();

/** The kernels on `memory`, made on first use; null when WebAssembly SIMD is not available. */
export function rasterKernels(memory: WebAssembly.Memory): RasterExports | null {
  const known = instances.get(memory);
  if (known !== undefined) return known;
  let k: RasterExports | null = null;
  try {
    compiled ??= new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64'));
    k = new WebAssembly.Instance(compiled, { env: { memory } }).exports as unknown as RasterExports;
  } catch {
    compiled = null;
    k = null;
  }
  instances.set(memory, k);
  return k;
}

/**
 * greyFromRgb for `rows` rows of a colour bitmap inside `heap` (R G B, `width` pixels, `stride`
 * bytes a row, at heap offset `src`): their grey written to heap offset `dst` (`width` bytes a row,
 * packed). Returns the coloured pixels, or -1 (nothing written) without WebAssembly SIMD.
 */
export function greyRowsSimd(
  heap: SimdHeap,
  src: number,
  stride: number,
  width: number,
  rows: number,
  dst: number,
): number {
  const k = rasterKernels(heap.memory);
  if (!k) return -1;
  return k.grey_rows(src, stride, width, rows, dst);
}

/**
 * resampleRgb (same arguments, same bytes) for an output inside `heap`: target row y, for y in
 * [rowFrom, rowTo), written at heap offset `out + (y - rowFrom) * outStride`. False (nothing written)
 * when the kernel does not apply (not enlarging both ways) or WebAssembly SIMD is missing.
 */
export function resampleRgbSimd(
  heap: SimdHeap,
  src: Uint8Array,
  sw: number,
  sh: number,
  dw: number,
  dh: number,
  out: number,
  outStride: number,
  rowFrom = 0,
  rowTo = dh,
): boolean {
  const k = rasterKernels(heap.memory);
  if (!k) return false;
  const plan = resampleRgbPlan(src, sw, sh, dw, dh, outStride, rowFrom, rowTo);
  if (!plan) return false;
  if (plan.rows === 0) return true;
  const rowBytes = sw * 3;
  // The source padded by 16 bytes (16-byte loads past a row's last byte), the line by 64 u16.
  const srcBytes = rowBytes * sh + 16;
  const lineBytes = (rowBytes + 64) * 2;
  /** Bytes rounded up to 16 (each region starts 16-byte aligned). */
  const up = (n: number) => (n + 15) & ~15;
  const size = up(srcBytes) + up(lineBytes) + up(plan.params.byteLength) + plan.tab.byteLength;
  const at = heap.malloc(size + 16);
  if (!at) return false;
  try {
    const base = up(at);
    const line = base + up(srcBytes);
    const params = line + up(lineBytes);
    const tab = params + up(plan.params.byteLength);
    // Views after malloc: the heap may have grown (a new buffer).
    const u8 = new Uint8Array(heap.memory.buffer);
    u8.set(src.subarray(0, rowBytes * sh), base);
    u8.fill(255, base + rowBytes * sh, base + srcBytes);
    u8.set(
      new Uint8Array(plan.params.buffer, plan.params.byteOffset, plan.params.byteLength),
      params,
    );
    u8.set(new Uint8Array(plan.tab.buffer, plan.tab.byteOffset, plan.tab.byteLength), tab);
    // White where no target pixel reads ink (the JS loop's fills).
    const p = plan.params;
    for (let r = 0; r < plan.rows; r++) {
      const o = out + r * outStride;
      const x0 = p[8 * r + 3]!;
      const x1 = p[8 * r + 4]!;
      if (x1 <= x0) {
        u8.fill(255, o, o + 3 * dw);
        continue;
      }
      u8.fill(255, o, o + 3 * x0);
      u8.fill(255, o + 3 * x1, o + 3 * dw);
    }
    k.resample_rgb_rows(base, rowBytes, plan.rows, params, tab, line, out, outStride);
    return true;
  } finally {
    heap.free(at);
  }
}

/** Rows pack_rows packs into one scratch block before they are copied out. */
const PACK_CHUNK_ROWS = 256;

/**
 * packColourLineRows (pdfium.adapter.ts) for a colour bitmap inside `heap` (3 B/px, `width` pixels,
 * `stride` bytes a row, `rows` rows at heap offset `src`): bit 7 − (x mod 8) of byte 1 + (x >> 3) of
 * `out` row y (at `out[y * outStride]`, whose byte 0 is left as it is: 0, PNG's filter byte) set where
 * w0 c0 + 59 c1 + w2 c2 < limit. False (nothing written) when WebAssembly SIMD or scratch is missing,
 * or when paper (all bytes 255) would be under the limit (the kernel's fast path assumes it is not).
 */
export function packRowsSimd(
  heap: SimdHeap,
  src: number,
  stride: number,
  width: number,
  rows: number,
  w0: number,
  w2: number,
  limit: number,
  out: Uint8Array,
  outStride: number,
): boolean {
  const rb = Math.ceil(width / 8);
  if (255 * (w0 + 59 + w2) < limit || outStride < rb + 1 || rows * outStride > out.length)
    return false;
  const k = rasterKernels(heap.memory);
  if (!k) return false;
  if (rows <= 0) return true;
  const chunk = Math.min(rows, PACK_CHUNK_ROWS);
  const at = heap.malloc(chunk * outStride);
  if (!at) return false;
  try {
    // After malloc: the heap may have grown (a new buffer). Byte 0 of each row stays 0.
    const u8 = new Uint8Array(heap.memory.buffer);
    u8.fill(0, at, at + chunk * outStride);
    for (let y = 0; y < rows; y += chunk) {
      const n = Math.min(chunk, rows - y);
      k.pack_rows(src + y * stride, stride, width, n, at + 1, outStride, w0, w2, limit);
      out.set(u8.subarray(at, at + n * outStride), y * outStride);
    }
    return true;
  } finally {
    heap.free(at);
  }
}
