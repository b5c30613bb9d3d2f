// One measured run of our full compare, in its own process: decode both PNGs (sharp, in parallel),
// register (unless --aligned), diff, score, regions, combined overlay, PNG level 1 written to disk.
// Uses compareToPng (compare-pipeline.adapter.ts): A's masks and registration level are made while B
// decodes, and the PNG is deflated on a libuv thread while JS finds the regions.
// Modes: 'register-main' (registration on this thread; the name is kept from when a worker-thread mode
// existed), 'aligned' (registration skipped), 'register-warm' (three compares one after the other on this thread, the
// figures are the third's: what a kept-alive compare process would pay, without start-up and cold code).
// Prints one JSON line with phase timings (ms) and the result.
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import { CompareBuffers } from '../../core/vision/compare/buffers';
import { compareToPng } from '../../core/vision/compare/compare-pipeline.adapter';

const [basePath, revPath, outPath, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
];
sharp.concurrency(2);
const runs = mode === 'register-warm' ? 3 : 1;
// BLUELINE_REUSE=1: the compares share one CompareBuffers (masks and overlay indices kept across compares, as a
// kept-alive compare process would).
const buffers = process.env.BLUELINE_REUSE === '1' ? new CompareBuffers() : undefined;
let t0 = 0,
  t1 = 0;
let res: Awaited<ReturnType<typeof compareToPng>> | undefined;
const firsts: number[] = [];
for (let i = 0; i < runs; i++) {
  if (res) firsts.push(t1 - t0);
  res = undefined; // let the previous compare's buffers go before the next one
  t0 = performance.now();
  res = await compareToPng(basePath, revPath, {
    skipRegistration: mode === 'aligned',
    ...(buffers ? { buffers } : {}),
  });
  writeFileSync(outPath, res.png);
  t1 = performance.now();
}
if (!res) throw new Error('no compare ran');
console.log(
  JSON.stringify({
    total_ms: t1 - t0,
    ...(firsts.length ? { earlier_ms: firsts } : {}),
    phases: res.timings,
    transform: res.transform,
    alignment: res.alignment,
    score: res.score,
    stats: res.stats,
    regions: res.regions.length,
    png_bytes: res.png.length,
    maxRSS_kb: process.resourceUsage().maxRSS,
  }),
);
