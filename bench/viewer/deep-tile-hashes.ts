// bench/viewer: deep tiles pixel for pixel, to compare two versions of the deep-tile code (issue 19:
// a speed change must not change a tile). Makes a fixed set of deep tiles of the beam proposal pair
// (fixtures/drawings, 20190601 → 20190602, S101, identity transform) with the worker's own functions
// — overlay regions (combined, additions, aligned_b) and sheet regions (colour), 2 x 2 regions and
// single tiles, at 400 %, 800 % and 1,600 % around the new column, each region made twice in a row
// (the second from the worker's kept documents and fill areas) — and prints one line per tile: what
// it is and the sha256 of its decoded pixels. Run it in both trees and diff the outputs:
//
//   node --import tsx bench/viewer/deep-tile-hashes.ts > /tmp/after.txt
//   (cd /tmp/before && node --import tsx bench/viewer/deep-tile-hashes.ts) > /tmp/before.txt
//   diff /tmp/before.txt /tmp/after.txt && echo identical

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import * as deep from '../../core/vision/tiles/deep-tiles';
import type { PageSource, TileCut } from '../../core/vision/tiles/deep-tiles';

const repo = path.resolve(import.meta.dirname, '../..');
const file = (d: string) => path.join(repo, `fixtures/drawings/${d}_beam-proposal_5-sheets.pdf`);
const source = (d: string): PageSource => ({
  path: file(d),
  bytesKey: createHash('sha256')
    .update(readFileSync(file(d)))
    .digest('hex'),
  contentType: 'application/pdf',
  index: 0,
  dpi: 200,
  maxPixels: 300_000_000,
});
const A = source('20190601');
const B = source('20190602');
/** The new column's centre on S101 at 200 dpi. */
const COLUMN = { x: 3865, y: 2572 };
const TILE = 512;

const pixels = async (webp: Uint8Array) =>
  createHash('sha256')
    .update(await sharp(webp).raw().toBuffer())
    .digest('hex')
    .slice(0, 16);

/** The tiles of a region of `n` x `n` tiles whose top-left tile holds the column plus (dx, dy). */
function region(scale: number, n: number, dx: number, dy: number): TileCut[] {
  const tx = Math.floor((COLUMN.x * scale) / TILE) + dx,
    ty = Math.floor((COLUMN.y * scale) / TILE) + dy;
  const cuts: TileCut[] = [];
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++)
      cuts.push({ left: (tx + x) * TILE, top: (ty + y) * TILE, width: TILE, height: TILE });
  return cuts;
}

const shapes: [n: number, dx: number, dy: number][] = [
  [2, -1, -1],
  [2, 1, -1],
  [1, 0, 1],
  [2, -2, 1],
];
// `--scales 2,4`: other levels (default 4, 8, 16: 312 tiles).
const si = process.argv.indexOf('--scales');
const SCALES = si > 0 ? process.argv[si + 1]!.split(',').map(Number) : [4, 8, 16];
for (const scale of SCALES) {
  for (const [n, dx, dy] of shapes) {
    const cuts = region(scale, n, dx, dy);
    const at = `${scale}x ${n}x${n} @${cuts[0]!.left / TILE},${cuts[0]!.top / TILE}`;
    for (const rep of [1, 2]) {
      for (const kind of ['combined', 'additions', 'aligned_b'] as const) {
        const webps = await deep.renderOverlayTiles({
          a: A,
          b: B,
          scale,
          aOrigin: { x: 0, y: 0 },
          bOrigin: { x: 0, y: 0 },
          transform: [1, 0, 0, 0, 1, 0],
          tiles: cuts,
          kind,
        });
        for (const [i, w] of webps.entries())
          console.log(`${at} rep ${rep} ${kind} tile ${i}: ${await pixels(w)}`);
      }
      const page = await deep.renderPageTiles(B, scale, cuts);
      for (const [i, w] of page.entries())
        console.log(`${at} rep ${rep} sheet tile ${i}: ${await pixels(w)}`);
    }
  }
}
