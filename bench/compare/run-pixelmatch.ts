// pixelmatch reference run in its own process: sharp RGBA decode of the pre-aligned pair, pixelmatch
// (threshold 0.1), diff PNG written with sharp at level 1. Prints one JSON line.
import { writeFileSync } from 'node:fs';
import sharp from 'sharp';
import pixelmatch from 'pixelmatch';

const [basePath, revPath, outPath] = process.argv.slice(2) as [string, string, string];
sharp.concurrency(2);
const t0 = performance.now();
const dec = (p: string) => sharp(p).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
const [a, b] = await Promise.all([dec(basePath), dec(revPath)]);
const t1 = performance.now();
const { width, height } = a.info;
const diff = Buffer.alloc(width * height * 4);
const n = pixelmatch(a.data, b.data, diff, width, height, { threshold: 0.1 });
const t2 = performance.now();
writeFileSync(
  outPath,
  await sharp(diff, { raw: { width, height, channels: 4 } })
    .png({ compressionLevel: 1 })
    .toBuffer(),
);
const t3 = performance.now();
console.log(
  JSON.stringify({
    total_ms: t3 - t0,
    phases: { decode: t1 - t0, match: t2 - t1, png: t3 - t2 },
    diff_px: n,
    maxRSS_kb: process.resourceUsage().maxRSS,
  }),
);
