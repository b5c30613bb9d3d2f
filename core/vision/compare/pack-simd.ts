// packInk's row loop on WebAssembly SIMD (pack-simd.wat): 16 pixels per compare, i8x16.bitmask
// gathering the bits, instead of JS's 4 pixels per SWAR step. The same masks, word for word (tests
// compare both on random images, windows and thresholds). Rows are copied in batches into the module's
// memory (padded with paper to whole 32-pixel words), packed there, and the words copied out: about
// 2.5x faster than the JS loop warm, and free of its cold-code cost in a fresh process (bench/compare
// README, SIMD pack slice). Where WebAssembly SIMD is missing, packInk runs its JS loop.
import type { GreyImage } from '../types';
import type { InkMasks, PixelWindow } from './diff';
import { WASM_BASE64 } from './pack-simd.wasm';

interface PackExports {
  memory: WebAssembly.Memory;
  pack(
    src: number,
    slot: number,
    rows: number,
    words: number,
    outS: number,
    outW: number,
    outP: number,
    ts: number,
    tw: number,
    tp: number,
  ): void;
}

/** Input bytes per batch of rows: a few hundred KB stay in the caches between copy-in and packing. */
const BATCH_BYTES = 1 << 18;
const PAGE = 65536;

let instance: PackExports | null | undefined;

/** This thread's instance, made on first use; null when WebAssembly SIMD is not available. */
function packModule(): PackExports | null {
  if (instance !== undefined) return instance;
  try {
    const mod = new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64'));
    instance = new WebAssembly.Instance(mod).exports as unknown as PackExports;
  } catch {
    instance = null;
  }
  return instance;
}

/** Whether packRowsSimd can run here. */
export function simdPackAvailable(): boolean {
  return packModule() !== null;
}

/**
 * Pack rows [y0, y1) of the (window of the) image into `m`, as diff.ts packInkRows does: mask pixel
 * (x, y) is image pixel (window.x + x, window.y + y), paper outside the image. Thresholds are checked
 * by the caller (integers 1..255, ink ≤ weak ≤ pale). Writes every word of those rows. Returns false
 * (nothing written) when WebAssembly SIMD is not available.
 */
export function packRowsSimd(
  img: GreyImage,
  m: InkMasks,
  y0: number,
  y1: number,
  inkThreshold: number,
  weakThreshold: number,
  paleThreshold: number,
  window?: PixelWindow,
): boolean {
  const e = packModule();
  if (!e) return false;
  if (y1 <= y0) return true;
  const { width: IW, height: IH, data } = img;
  const wx = window ? Math.round(window.x) : 0,
    wy = window ? Math.round(window.y) : 0;
  const { width: W, stride, strong, weak, pale } = m;
  const samePale = pale === weak;
  const slot = stride * 32;
  const R = Math.max(1, Math.min(y1 - y0, Math.floor(BATCH_BYTES / slot)));
  const outBytes = R * stride * 4;
  const outS = R * slot,
    outW = outS + outBytes,
    outP = outW + outBytes;
  const need = outP + outBytes;
  if (e.memory.buffer.byteLength < need)
    e.memory.grow(Math.ceil((need - e.memory.buffer.byteLength) / PAGE));
  const mem = new Uint8Array(e.memory.buffer);
  const words = new Uint32Array(e.memory.buffer);
  // The part of each row inside the image, in window x: [cx0, cx1); paper elsewhere, set once here
  // (each row below rewrites only its [cx0, cx1)).
  const cx0 = Math.max(0, -wx),
    cx1 = Math.min(W, IW - wx);
  mem.fill(255, 0, R * slot);
  for (let y = y0; y < y1; y += R) {
    const n = Math.min(R, y1 - y);
    for (let r = 0; r < n; r++) {
      const sy = wy + y + r;
      if (cx1 <= cx0) break; // the window lies beside the image: every row is paper
      const o = r * slot;
      if (sy < 0 || sy >= IH) mem.fill(255, o + cx0, o + cx1);
      else mem.set(data.subarray(sy * IW + wx + cx0, sy * IW + wx + cx1), o + cx0);
    }
    e.pack(0, slot, n, stride, outS, outW, outP, inkThreshold, weakThreshold, paleThreshold);
    const ob = y * stride,
      nw = n * stride;
    strong.set(words.subarray(outS >>> 2, (outS >>> 2) + nw), ob);
    weak.set(words.subarray(outW >>> 2, (outW >>> 2) + nw), ob);
    if (!samePale) pale.set(words.subarray(outP >>> 2, (outP >>> 2) + nw), ob);
  }
  return true;
}
