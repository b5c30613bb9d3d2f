// One measured run of our full compare, in its own process: decode both PNGs (sharp, in parallel),
// register (unless --aligned), diff, score, regions, combined overlay, PNG level 1 written to disk.
// Prints one JSON line with phase timings (ms) and the result.
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import { compareImages } from '../../core/vision/compare/compare';
import { decodeGrey, encodeRgbPng } from '../../core/vision/compare/encode.adapter';

const [basePath, revPath, outPath, mode] = process.argv.slice(2) as [
  string,
  string,
  string,
  string | undefined,
];
sharp.concurrency(2);
const t0 = performance.now();
const [a, b] = await Promise.all([decodeGrey(basePath), decodeGrey(revPath)]);
const t1 = performance.now();
const res = compareImages(a, b, { skipRegistration: mode === 'aligned', overlays: ['combined'] });
const t2 = performance.now();
const png = await encodeRgbPng(res.overlays.combined!);
writeFileSync(outPath, png);
const t3 = performance.now();
console.log(
  JSON.stringify({
    total_ms: t3 - t0,
    phases: { decode: t1 - t0, ...res.timings, png: t3 - t2 },
    transform: res.transform,
    alignment: res.alignment,
    score: res.score,
    stats: res.stats,
    regions: res.regions.length,
    png_bytes: png.length,
    maxRSS_kb: process.resourceUsage().maxRSS,
  }),
);
