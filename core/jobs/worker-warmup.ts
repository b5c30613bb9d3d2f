// A new pool worker's warm-up, in steps the pool runs as tasks (WorkerPoolOptions.warmup; the
// service passes WORKER_WARMUP of ingest-in-pool.ts, from warmup-steps.ts): the first before the
// worker's first task, the others when nothing is queued.
//
//  1. 'worker.warmup.ingest': the generated scanned sheet through scan, band render, text and
//     finish (core/vision/ingest/warmup.ts);
//  2. 'worker.warmup.compare': that sheet against a copy of it moved (+13, -7) px, scaled 1.002 and
//     edited (a box drawn, an area erased, a line added), through the compare job's
//     compareBlockPairs and the analyze job's changeRegions, from PNG bytes decoded as the stored
//     sheets are; COMPARE_WARMUP_PASSES times, a step each.
//
// So V8 has compiled the code of both jobs before a user's first sheet or comparison needs it.
// Nothing is written to disk: a worker ended mid warm-up (the pool closing, a crash) leaves nothing.
import sharp from 'sharp';
import type { GreyImage } from '../vision/types';
import { warmUp, type WarmupReport } from '../vision/ingest/warmup';
import {
  changeRegions,
  compareBlockPairs,
  releaseWorkerBuffers,
  type SheetSource,
} from './compare-tasks';
import { COMPARE_WARMUP_PASSES } from './warmup-steps';

/**
 * Detaches one ArrayBuffer, once, before a worker's first task (worker-entry.ts). V8 optimizes
 * typed-array loops on the promise that no ArrayBuffer of the isolate was ever detached, and the
 * first detach (a task moving its result out with a transferList, WebAssembly memory growing)
 * throws all that optimized code away: every pixel loop then runs unoptimized again until V8
 * recompiles it. Measured on the barber house set after a vector sheet: the pixel loops warmed up
 * by the warm-up were all discarded by the vector sheet's first transferred PNG, and the set took
 * 0.41-0.46 s instead of ~0.35 s. Breaking the promise at boot means code is optimized without it
 * from the start and stays.
 */
export function detachOneArrayBuffer(): void {
  const detached = new ArrayBuffer(8);
  structuredClone(detached, { transfer: [detached] });
}

export interface WorkerWarmupReport {
  ms: number;
  ingest: WarmupReport;
  compare: { ms: number; score: number; regions: number; confidence: number };
}

/** The revision of the compare warm-up: `a` moved, scaled about its centre and edited. */
export function warmupRevision(a: GreyImage): GreyImage {
  const { width: w, height: h } = a;
  const s = 1.002;
  const [dx, dy] = [13, -7];
  const [cx, cy] = [w / 2, h / 2];
  const data = new Uint8Array(w * h).fill(255);
  for (let y = 0; y < h; y++) {
    const sy = Math.round((y - dy - cy) / s + cy);
    if (sy < 0 || sy >= h) continue;
    for (let x = 0; x < w; x++) {
      const sx = Math.round((x - dx - cx) / s + cx);
      if (sx >= 0 && sx < w) data[y * w + x] = a.data[sy * w + sx]!;
    }
  }
  const box = (x0: number, y0: number, bw: number, bh: number, v: number) => {
    for (let y = Math.floor(y0 * h); y < Math.floor((y0 + bh) * h); y++)
      data.fill(v, y * w + Math.floor(x0 * w), y * w + Math.floor((x0 + bw) * w));
  };
  box(0.1, 0.1, 0.06, 0.02, 0); // a box drawn
  box(0.4, 0.45, 0.05, 0.05, 255); // an area erased
  box(0.6, 0.8, 0.2, 0.002, 40); // a line added
  return { width: w, height: h, data };
}

async function encodePng(img: GreyImage): Promise<Uint8Array> {
  const png = await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 1 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  return new Uint8Array(png.buffer, png.byteOffset, png.byteLength);
}

/** The warm-up sheet's raster from this worker's ingest step: the compare step's sheet A. */
let sheetA: GreyImage | undefined;

/** Step 1: the ingest warm-up at `dpi` (its raster kept for step 2). */
export async function warmUpIngest(dpi: number): Promise<WarmupReport> {
  const { raster, ...report } = await warmUp(dpi);
  sheetA = { width: raster.width, height: raster.height, data: raster.data };
  return report;
}

/** The compare warm-up's two sheets (PNG bytes, a few hundred kB), kept between its passes. */
let pair: { a: SheetSource; b: SheetSource; width: number; height: number } | undefined;

/**
 * Step 2: the compare warm-up, on the sheet of step 1 (rendered again at `dpi` when this worker has
 * not run step 1). Pass `pass` of `passes`: the sheets are made on the first pass run and let go
 * after the last.
 */
export async function warmUpCompare(
  dpi: number,
  pass = 1,
  passes = 1,
): Promise<WorkerWarmupReport['compare']> {
  const t0 = performance.now();
  if (!pair) {
    if (!sheetA) await warmUpIngest(dpi);
    const sheet = sheetA!;
    sheetA = undefined; // 7.5 MB at 200 dpi: not kept past the warm-up
    const [pngA, pngB] = await Promise.all([encodePng(sheet), encodePng(warmupRevision(sheet))]);
    // Paths name the sheets in errors only: `png` is what is decoded.
    pair = {
      a: { path: 'warm-up sheet A', png: pngA },
      b: { path: 'warm-up sheet B', png: pngB },
      width: sheet.width,
      height: sheet.height,
    };
  }
  const { a, b, width, height } = pair;
  if (pass >= passes) pair = undefined;
  const whole = { x: 0, y: 0, width, height };
  const block = (id: string) => ({
    id,
    type: 'Plan',
    identifier: null,
    title: null,
    bbox: whole,
  });
  const out = await compareBlockPairs({
    a,
    b,
    blocksA: [block('a')],
    blocksB: [block('b')],
    skip: [],
  });
  const overlay = out.overlays[0];
  if (!overlay) throw new Error('The compare warm-up made no overlay.');
  const found = await changeRegions({
    a,
    b,
    aBox: whole,
    sheetTransform: overlay.transform,
    alignmentConfidence: overlay.alignment.confidence,
  });
  // The code is warm; the compare buffers are not kept for a compare that may not come (the
  // worker's ingest tasks would hold them beside a large page's PDFium heap).
  if (pass >= passes) releaseWorkerBuffers();
  return {
    ms: performance.now() - t0,
    score: overlay.score,
    regions: found.regions.length,
    confidence: overlay.alignment.confidence,
  };
}

/** Every step, one after the other, as a pool worker runs them when idle (benches). */
export async function warmUpWorker(dpi: number): Promise<WorkerWarmupReport> {
  const t0 = performance.now();
  const ingest = await warmUpIngest(dpi);
  let compare!: WorkerWarmupReport['compare'];
  for (let pass = 1; pass <= COMPARE_WARMUP_PASSES; pass++)
    compare = await warmUpCompare(dpi, pass, COMPARE_WARMUP_PASSES);
  return { ms: performance.now() - t0, ingest, compare };
}
