// Three compares of the pair in one process through the service's own code path: compareBlockPairs
// (core/jobs/compare-tasks.ts), as a compare job's pool worker runs it — decode both sheets, register
// them, diff the block pair through the sheet transform (re-registering the block on its own when it
// scores below 0.97, as the service does), find the regions and encode all five images (combined,
// colour-blind, additions, deletions, aligned B), with the worker's kept buffers. The whole sheet is
// one block. The figures are the third compare's: a pool worker that has compared before.
// Prints one JSON line in run-ours.ts's format; the overlay written to disk is the combined PNG.
//
// Mode `first-after-warmup` (4th argument): one compare, timed, after what a service pool worker does
// when it starts — detach an ArrayBuffer (core/jobs/worker-entry.ts) and run the worker warm-up
// (core/jobs/worker-warmup.ts: a generated sheet ingested and compared with an edited copy, at the
// service's dpi). That compare is a service worker's first; the wall time includes the warm-up.
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import { compareBlockPairs } from '../../core/jobs/compare-tasks';
import { detachOneArrayBuffer, warmUpWorker } from '../../core/jobs/worker-warmup';
import { DEFAULT_DPI } from '../../core/vision/input/pdf.adapter';

const [basePath, revPath, outPath, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
];
const firstAfterWarmup = mode === 'first-after-warmup';
let warmupMs: number | undefined;
if (firstAfterWarmup) {
  detachOneArrayBuffer();
  warmupMs = (await warmUpWorker(DEFAULT_DPI)).ms;
}
sharp.concurrency(2);
const [ma, mb] = await Promise.all([sharp(basePath).metadata(), sharp(revPath).metadata()]);
const block = (id: string, width: number, height: number) => ({
  id,
  type: 'Plan',
  identifier: null,
  title: null,
  bbox: { x: 0, y: 0, width, height },
});
const args = {
  a: { path: basePath },
  b: { path: revPath },
  blocksA: [block('a', ma.width!, ma.height!)],
  blocksB: [block('b', mb.width!, mb.height!)],
  skip: [],
};
const firsts: number[] = [];
let out: Awaited<ReturnType<typeof compareBlockPairs>> | undefined;
let t0 = 0,
  t1 = 0;
// CPU time of the timed compare (user + system, every thread of the process: libvips' and zlib's
// too): steadier than its wall time on a loaded machine.
let cpu = process.cpuUsage();
for (let i = 0; i < (firstAfterWarmup ? 1 : 3); i++) {
  if (out) firsts.push(t1 - t0);
  out = undefined;
  cpu = process.cpuUsage();
  t0 = performance.now();
  out = await compareBlockPairs(args);
  t1 = performance.now();
}
cpu = process.cpuUsage(cpu);
const o = out?.overlays[0];
if (!out || !o) throw new Error('the compare made no overlay');
writeFileSync(outPath, o.png.combined);
console.log(
  JSON.stringify({
    total_ms: t1 - t0,
    cpu_ms: (cpu.user + cpu.system) / 1000,
    ...(firstAfterWarmup ? { warmup_ms: warmupMs } : { earlier_ms: firsts }),
    phases: out.timings_ms,
    transform: o.transform,
    alignment: o.alignment,
    score: o.score,
    stats: o.stats,
    regions: o.region_count,
    png_bytes: Object.values(o.png).reduce((s, p) => s + p.length, 0),
    maxRSS_kb: process.resourceUsage().maxRSS,
  }),
);
