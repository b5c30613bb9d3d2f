// The mask kernels of diff.ts on WebAssembly SIMD (masks-simd.wat), each giving its JS loop's words
// exactly (tests compare both on random images, windows, thresholds and coverages):
//   packRowsSimd — packInk's rows: 16 pixels per compare, i8x16.bitmask gathering the bits, instead of
//     JS's 4 pixels per SWAR step; rows are copied in batches into the module's memory (padded with
//     paper to whole 32-pixel words), packed there, and the words copied out;
//   diffMasksSimd — diffMasks' added/removed words and counts, 4 words per step; rows are copied in
//     batches with the row above and below each batch (for the 3x3 dilation);
//   warpSegments — warpMasks' row-segment writer (scalar WebAssembly: funnel shifts of source words),
//     on batches of output rows with the band of source rows their segments read;
//   blockCountsSimd — regions.ts blockCounts' changed pixels per 32 x 32 block: 4 words of both masks
//     tested at once, only groups holding a change counted word by word; rows copied in batches;
//   inkLevelSimd — registration's ink level (register.ts InkLevel) as a box mean of f x f cells, 16
//     pixels per step, instead of a libvips pipeline on another thread.
// Neither has the JS loops' cold-code cost in a fresh process; warm, the pack is ~3x faster and the
// diff about even (its copies eat what the vectors save) — bench/compare README, the WebAssembly
// kernel slices. Where WebAssembly SIMD is missing, diff.ts runs its JS loops.
import type { GreyImage } from '../types';
import type { Coverage, InkMasks, PixelWindow } from './diff';
import type { InkLevel } from './register';
import { WASM_BASE64 } from './masks-simd.wasm';

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
  diff(
    n: number,
    stride: number,
    sA: number,
    wA: number,
    pA: number,
    sB: number,
    wB: number,
    pB: number,
    outAdd: number,
    outRem: number,
    lo: number,
    hi: number,
    faint: number,
    res: number,
  ): void;
  inkquads(
    src: number,
    slot: number,
    rows: number,
    chunks: number,
    acc: number,
    cellRows: number,
    accStride: number,
  ): void;
  blockcounts(
    a: number,
    r: number,
    rows: number,
    stride: number,
    y0: number,
    ac: number,
    rc: number,
  ): void;
  warp(
    n: number,
    stride: number,
    outWidth: number,
    segs: number,
    counts: number,
    srcP: number,
    srcW: number,
    srcS: number,
    ss: number,
    syBase: number,
    syRows: number,
    outP: number,
    outW: number,
    outS: number,
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

/** Room for `need` bytes in the module's memory; the views must be made after this. */
function ensureMemory(e: PackExports, need: number): void {
  if (e.memory.buffer.byteLength < need)
    e.memory.grow(Math.ceil((need - e.memory.buffer.byteLength) / PAGE));
}

/** Whether the SIMD kernels can run here. */
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
  ensureMemory(e, outP + outBytes);
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

/** The counts of diffMasks (strong-ink union, added, removed; faint added, faint removed). */
export interface DiffCounts {
  unionPx: number;
  addedPx: number;
  removedPx: number;
  faintAddedPx: number;
  faintRemovedPx: number;
}

/** Bytes of mask rows per batch (six input masks with their halo rows, two outputs). */
const DIFF_BATCH_BYTES = 1 << 19;
/** Gap around each region: the kernel reads up to 16 bytes before a base and after an end. */
const GAP = 64;

/**
 * diffMasks' word loop (diff.ts): writes `added` and `removed` (zeroed, stride·height words) for masks
 * `ma` and `mb` in one frame, with B's coverage per row (`cover`, or the whole row), and returns the
 * counts — the same words and counts as the JS loop. Padding bits past the width must be clear (the
 * caller's clearPadding). `faint`: run the faint-ink pass (pale masks differ from weak ones). Null
 * (nothing written) when WebAssembly SIMD is not available.
 */
export function diffMasksSimd(
  ma: InkMasks,
  mb: InkMasks,
  cover: Coverage | undefined,
  faint: boolean,
  added: Uint32Array,
  removed: Uint32Array,
): DiffCounts | null {
  const e = packModule();
  if (!e) return null;
  const { width, height, stride } = ma;
  const counts: DiffCounts = {
    unionPx: 0,
    addedPx: 0,
    removedPx: 0,
    faintAddedPx: 0,
    faintRemovedPx: 0,
  };
  if (height === 0 || stride === 0) return counts;
  const rowBytes = stride * 4;
  const R = Math.max(1, Math.min(height, Math.floor(DIFF_BATCH_BYTES / (8 * rowBytes))));
  const inBytes = (R + 2) * rowBytes + GAP,
    outBytes = R * rowBytes + GAP;
  // Regions (byte offsets, all multiples of 16): six inputs, two outputs, lo, hi, results.
  const inputs = [ma.strong, ma.weak, ma.pale, mb.strong, mb.weak, mb.pale];
  const inBase = inputs.map((_, i) => GAP + i * inBytes);
  const addBase = GAP + 6 * inBytes,
    remBase = addBase + outBytes,
    loBase = remBase + outBytes,
    hiBase = loBase + Math.ceil((R * 4) / 16) * 16,
    resBase = hiBase + Math.ceil((R * 4) / 16) * 16;
  ensureMemory(e, resBase + 32);
  const words = new Uint32Array(e.memory.buffer);
  const ints = new Int32Array(e.memory.buffer);
  for (let y0 = 0; y0 < height; y0 += R) {
    const n = Math.min(R, height - y0);
    for (let i = 0; i < 6; i++) {
      if (!faint && (i === 2 || i === 5)) continue;
      const m = inputs[i]!,
        dst = inBase[i]! >>> 2;
      // Mask row 0: the row above the batch (row y0 itself at the top edge); rows 1..n: the batch;
      // row n + 1: the row below (the last row itself at the bottom edge).
      if (y0 > 0 && y0 + n < height) {
        words.set(m.subarray((y0 - 1) * stride, (y0 + n + 1) * stride), dst);
      } else {
        const top = y0 > 0 ? y0 - 1 : y0,
          bottom = y0 + n < height ? y0 + n : y0 + n - 1;
        words.set(m.subarray(top * stride, (top + 1) * stride), dst);
        words.set(m.subarray(y0 * stride, (y0 + n) * stride), dst + stride);
        words.set(m.subarray(bottom * stride, (bottom + 1) * stride), dst + (n + 1) * stride);
      }
    }
    for (let r = 0; r < n; r++) {
      ints[(loBase >>> 2) + r] = cover ? cover.lo[y0 + r]! : 0;
      ints[(hiBase >>> 2) + r] = cover ? cover.hi[y0 + r]! : width - 1;
    }
    e.diff(
      n,
      stride,
      inBase[0]!,
      inBase[1]!,
      inBase[2]!,
      inBase[3]!,
      inBase[4]!,
      inBase[5]!,
      addBase,
      remBase,
      loBase,
      hiBase,
      faint ? 1 : 0,
      resBase,
    );
    added.set(words.subarray(addBase >>> 2, (addBase >>> 2) + n * stride), y0 * stride);
    removed.set(words.subarray(remBase >>> 2, (remBase >>> 2) + n * stride), y0 * stride);
    const res = resBase >>> 2;
    counts.unionPx += ints[res]!;
    counts.addedPx += ints[res + 1]!;
    counts.removedPx += ints[res + 2]!;
    counts.faintAddedPx += ints[res + 3]!;
    counts.faintRemovedPx += ints[res + 4]!;
  }
  return counts;
}

/**
 * What warpSegments reads of diff.ts warpMasks' context (WarpCtx extends it): the source masks (height,
 * words per row, pale / weak / strong as Int32 views), the zeroed output masks, and segmentRow's
 * output arrays (first x, last x, source x − x, source y of each segment).
 */
export interface WarpFields {
  SH: number;
  ss: number;
  sp: Int32Array;
  sw: Int32Array;
  sst: Int32Array;
  outW: number;
  stride: number;
  samePale: boolean;
  pale: Uint32Array;
  weak: Uint32Array;
  strong: Uint32Array;
  segX0: Int32Array;
  segX1: Int32Array;
  segDx: Int32Array;
  segSy: Int32Array;
}

/** Output rows per warp batch; each row's segment table is 4096 bytes (256 segments x 16). */
const WARP_BATCH_ROWS = 64;

/**
 * warpMasks for transforms segmentRow can cut (diff.ts): segments are computed in JS, row by row as
 * before; the words are written by the module from the band of source rows each batch reads. The same
 * words as warpRowSegments (tests compare both on random near-unit similarities). `segmentRow(y)`
 * fills job's segment arrays (0: the row cannot be cut); such rows go to `rowByWords(y)`, the JS writer
 * (it writes into the zeroed outputs). False (nothing written) when WebAssembly SIMD is not available.
 */
export function warpSegments(
  job: WarpFields,
  outH: number,
  segmentRow: (y: number) => number,
  rowByWords: (y: number) => void,
): boolean {
  const e = packModule();
  if (!e) return false;
  const { outW, stride, SH, ss, samePale } = job;
  const R = Math.max(1, Math.min(outH, WARP_BATCH_ROWS));
  const countsAt = GAP,
    segsAt = countsAt + R * 4 + GAP,
    outBytes = R * stride * 4 + GAP,
    outPAt = segsAt + R * 4096 + GAP,
    outWAt = outPAt + outBytes,
    outSAt = outWAt + outBytes,
    srcAt = outSAt + outBytes;
  const counts = new Int32Array(R);
  for (let y0 = 0; y0 < outH; y0 += R) {
    const n = Math.min(R, outH - y0);
    ensureMemory(e, srcAt);
    let ints = new Int32Array(e.memory.buffer);
    let lo = SH,
      hi = -1;
    for (let r = 0; r < n; r++) {
      const cnt = segmentRow(y0 + r);
      counts[r] = cnt;
      ints[(countsAt >>> 2) + r] = cnt;
      const t = (segsAt >>> 2) + r * 1024;
      for (let i = 0; i < cnt; i++) {
        const sy = job.segSy[i]!;
        ints[t + 4 * i] = job.segX0[i]!;
        ints[t + 4 * i + 1] = job.segX1[i]!;
        ints[t + 4 * i + 2] = job.segDx[i]!;
        ints[t + 4 * i + 3] = sy;
        if (sy < lo) lo = sy;
        if (sy > hi) hi = sy;
      }
    }
    // The source rows the batch reads (rows outside B are paper either way).
    lo = Math.max(0, lo);
    hi = Math.min(SH - 1, hi);
    const rows = hi >= lo ? hi - lo + 1 : 0;
    const band = rows * ss * 4 + GAP;
    const srcPAt = srcAt,
      srcWAt = srcPAt + band,
      srcSAt = srcWAt + band;
    ensureMemory(e, srcSAt + band);
    ints = new Int32Array(e.memory.buffer);
    if (rows > 0) {
      ints.set(job.sp.subarray(lo * ss, (hi + 1) * ss), srcPAt >>> 2);
      if (!samePale) ints.set(job.sw.subarray(lo * ss, (hi + 1) * ss), srcWAt >>> 2);
      ints.set(job.sst.subarray(lo * ss, (hi + 1) * ss), srcSAt >>> 2);
    }
    e.warp(
      n,
      stride,
      outW,
      segsAt,
      countsAt,
      srcPAt,
      samePale ? srcPAt : srcWAt,
      srcSAt,
      ss,
      lo,
      rows,
      outPAt,
      outWAt,
      outSAt,
    );
    const words = new Uint32Array(e.memory.buffer);
    const nw = n * stride,
      ob = y0 * stride;
    job.weak.set(words.subarray(outWAt >>> 2, (outWAt >>> 2) + nw), ob);
    job.strong.set(words.subarray(outSAt >>> 2, (outSAt >>> 2) + nw), ob);
    if (!samePale) job.pale.set(words.subarray(outPAt >>> 2, (outPAt >>> 2) + nw), ob);
    for (let r = 0; r < n; r++) if (counts[r] === 0) rowByWords(y0 + r);
  }
  return true;
}

/**
 * Registration's ink level of `img` at factor f (a multiple of 4): the mean ink (255 − grey) of each
 * whole f x f cell, cells from the top-left corner, the last partial row and column of cells left out
 * (level pixel u has its centre at full x = f·u + (f − 1)/2).
 * A plain box mean, as register.ts inkDownsample's. Rows are copied in batches into the module's
 * memory, each 4-pixel group's ink summed there 16 pixels per step, and the groups of a cell added
 * here. Null when WebAssembly SIMD is not available, f is not a multiple of 4 or the image is
 * smaller than one cell.
 */
export function inkLevelSimd(img: GreyImage, f: number): InkLevel | null {
  const { width: W, height: H, data } = img;
  const w = Math.floor(W / f),
    h = Math.floor(H / f);
  if (!Number.isInteger(f) || f < 4 || f % 4 !== 0 || w < 1 || h < 1) return null;
  const e = packModule();
  if (!e) return null;
  const used = w * f; // pixels of each row inside whole cells
  const chunks = Math.ceil(used / 16),
    slot = chunks * 16;
  // A row's group sums take as many bytes as its pixels: one i32 per 4 pixels.
  const accStride = slot;
  // Cell rows per batch: a few hundred KB of input at a time.
  const k = Math.max(1, Math.min(h, Math.floor(BATCH_BYTES / (f * slot))));
  const accAt = k * f * slot;
  ensureMemory(e, accAt + k * accStride);
  const mem = new Uint8Array(e.memory.buffer);
  const acc = new Int32Array(e.memory.buffer, accAt, (k * accStride) >>> 2);
  const out = new Float32Array(w * h);
  const q = f >>> 2,
    norm = 1 / (f * f),
    accRow = accStride >>> 2;
  for (let v0 = 0; v0 < h; v0 += k) {
    const n = Math.min(k, h - v0);
    for (let r = 0; r < n * f; r++) {
      const y = v0 * f + r;
      mem.set(data.subarray(y * W, y * W + used), r * slot);
    }
    acc.fill(0, 0, n * accRow);
    e.inkquads(0, slot, n * f, chunks, accAt, f, accStride);
    for (let v = 0; v < n; v++) {
      const a = v * accRow,
        o = (v0 + v) * w;
      for (let u = 0; u < w; u++) {
        let sum = 0;
        for (let j = u * q; j < (u + 1) * q; j++) sum += acc[a + j]!;
        out[o + u] = sum * norm;
      }
    }
  }
  return { width: w, height: h, data: out, f };
}

/** Bytes of the two masks' rows per blockCounts batch. */
const COUNT_BATCH_BYTES = 1 << 19;

/**
 * regions.ts blockCounts on WebAssembly SIMD: adds the set bits of each word k of row y of `added` /
 * `removed` (stride words a row, `height` rows) to addCnt / remCnt[(y >> 5)·stride + k] — the same
 * counts as the JS loop. False (nothing added) when WebAssembly SIMD is not available.
 */
export function blockCountsSimd(
  added: Uint32Array,
  removed: Uint32Array,
  stride: number,
  height: number,
  addCnt: Uint32Array,
  remCnt: Uint32Array,
): boolean {
  const e = packModule();
  if (!e) return false;
  if (height === 0 || stride === 0) return true;
  const nCnt = stride * Math.ceil(height / 32);
  if (addCnt.length < nCnt || remCnt.length < nCnt)
    throw new Error(
      `Expected room for ${nCnt} block counts but received ${Math.min(addCnt.length, remCnt.length)}`,
    );
  const rowBytes = stride * 4;
  const R = Math.max(1, Math.min(height, Math.floor(COUNT_BATCH_BYTES / (2 * rowBytes))));
  const cntBytes = Math.ceil((nCnt * 4) / 16) * 16;
  const acAt = GAP,
    rcAt = acAt + cntBytes,
    aAt = rcAt + cntBytes,
    rAt = aAt + Math.ceil((R * rowBytes) / 16) * 16 + GAP;
  ensureMemory(e, rAt + R * rowBytes + GAP);
  const words = new Uint32Array(e.memory.buffer);
  words.fill(0, acAt >>> 2, (rcAt + cntBytes) >>> 2);
  for (let y0 = 0; y0 < height; y0 += R) {
    const n = Math.min(R, height - y0);
    words.set(added.subarray(y0 * stride, (y0 + n) * stride), aAt >>> 2);
    words.set(removed.subarray(y0 * stride, (y0 + n) * stride), rAt >>> 2);
    e.blockcounts(aAt, rAt, n, stride, y0, acAt, rcAt);
  }
  const ac = acAt >>> 2,
    rc = rcAt >>> 2;
  for (let i = 0; i < nCnt; i++) {
    const a = words[ac + i]!,
      r = words[rc + i]!;
    if (a !== 0) addCnt[i] = addCnt[i]! + a;
    if (r !== 0) remCnt[i] = remCnt[i]! + r;
  }
  return true;
}
