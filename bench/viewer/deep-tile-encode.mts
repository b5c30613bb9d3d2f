// bench/viewer: encodes of a deep overlay tile compared (issue 19, per-tile CPU): the tile service
// sends WebP (contract §5, `.webp` tiles) lossless at effort 0; this encodes 8 real overlay tiles
// (2 x 2 regions at 400 % and 1,600 % around S101's new column, beam proposal pair) with other
// WebP and PNG settings, on one libvips thread (sharp.concurrency(1)), 5 times each, and prints
// wall and process CPU ms per tile and KB per tile.
//
//   node --import tsx bench/viewer/deep-tile-encode.mts
//
// | encoding | wall ms / tile | CPU ms / tile | KB / tile |
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import sharp, { type Sharp } from 'sharp';
import * as deep from '../../core/vision/tiles/deep-tiles';
const f = (d: string) =>
  `${import.meta.dirname}/../../fixtures/drawings/${d}_beam-proposal_5-sheets.pdf`;
const src = (d: string) => ({
  path: f(d),
  bytesKey: createHash('sha256')
    .update(readFileSync(f(d)))
    .digest('hex'),
  contentType: 'application/pdf',
  index: 0,
  dpi: 200,
  maxPixels: 300_000_000,
});
const A = src('20190601'),
  B = src('20190602');
const raws: Buffer[] = [];
for (const scale of [4, 16]) {
  const tx = Math.floor((3865 * scale) / 512) - 1,
    ty = Math.floor((2572 * scale) / 512) - 1;
  const tiles = [0, 1, 2, 3].map((i) => ({
    left: (tx + (i % 2)) * 512,
    top: (ty + (i >> 1)) * 512,
    width: 512,
    height: 512,
  }));
  const w = await deep.renderOverlayTiles({
    a: A,
    b: B,
    scale,
    aOrigin: { x: 0, y: 0 },
    bOrigin: { x: 0, y: 0 },
    transform: [1, 0, 0, 0, 1, 0],
    tiles,
    kind: 'combined',
  });
  for (const t of w) raws.push(await sharp(t).raw().toBuffer());
}
sharp.concurrency(1);
const opts: [string, (p: Sharp) => Sharp][] = [
  ['webp lossless effort 0', (p) => p.webp({ lossless: true, effort: 0 })],
  ['webp lossless effort 1', (p) => p.webp({ lossless: true, effort: 1 })],
  ['webp near-lossless 60 effort 0', (p) => p.webp({ nearLossless: true, quality: 60, effort: 0 })],
  [
    'png palette level 1',
    (p) => p.png({ palette: true, compressionLevel: 1, colours: 16, dither: 0 }),
  ],
  ['png level 1 no filter', (p) => p.png({ compressionLevel: 1, adaptiveFiltering: false })],
  ['png level 0', (p) => p.png({ compressionLevel: 0 })],
];
for (const [name, enc] of opts) {
  let bytes = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let r = 0; r < 5; r++)
    for (const raw of raws)
      bytes += (await enc(sharp(raw, { raw: { width: 512, height: 512, channels: 3 } })).toBuffer())
        .length;
  const c = process.cpuUsage(c0);
  const n = 5 * raws.length;
  console.log(
    `| ${name} | ${((performance.now() - t0) / n).toFixed(1)} | ${((c.user + c.system) / 1000 / n).toFixed(1)} | ${(bytes / n / 1024).toFixed(1)} |`,
  );
}
