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
//
// `--groupings` instead compares how the tile service groups a view's tiles into regions: the
// tiles of a 4 x 3 and a 3 x 2 view at 400 %, 800 % and 1,600 % made in aligned 2 x 2 cells (the
// service before regionsOf) and in the regions regionsOf makes, and prints how many pixels of each
// tile differ (a tile's compare sees the context its region gives it).

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

if (process.argv.includes('--groupings')) {
  const { regionsOf } = await import('../../core/services/tiles.service');
  for (const scale of [4, 8, 16])
    for (const [w, h] of [
      [4, 3],
      [3, 2],
    ] as const) {
      const tx = Math.floor((COLUMN.x * scale) / TILE) - 1,
        ty = Math.floor((COLUMN.y * scale) / TILE) - 1;
      const xy: [number, number][] = [];
      for (let y = ty; y < ty + h; y++) for (let x = tx; x < tx + w; x++) xy.push([x, y]);
      const cut = ([x, y]: [number, number]): TileCut => ({
        left: x * TILE,
        top: y * TILE,
        width: TILE,
        height: TILE,
      });
      const cells = new Map<string, [number, number][]>();
      for (const t of xy) {
        const k = `${t[0] - (t[0] % 2)},${t[1] - (t[1] % 2)}`;
        cells.set(k, [...(cells.get(k) ?? []), t]);
      }
      for (const kind of ['combined', 'aligned_b'] as const) {
        const made = async (groups: [number, number][][]) => {
          const out = new Map<string, Buffer>();
          for (const g of groups) {
            const webps = await deep.renderOverlayTiles({
              a: A,
              b: B,
              scale,
              aOrigin: { x: 0, y: 0 },
              bOrigin: { x: 0, y: 0 },
              transform: [1, 0, 0, 0, 1, 0],
              tiles: g.map(cut),
              kind,
            });
            for (const [i, w] of webps.entries())
              out.set(String(g[i]), await sharp(w).removeAlpha().raw().toBuffer());
          }
          return out;
        };
        const before = await made([...cells.values()]);
        const after = await made(regionsOf(xy));
        const differ = xy.map((t) => {
          const p = before.get(String(t))!,
            q = after.get(String(t))!;
          let n = 0;
          for (let i = 0; i < p.length; i += 3)
            if (p[i] !== q[i] || p[i + 1] !== q[i + 1] || p[i + 2] !== q[i + 2]) n++;
          return n;
        });
        console.log(
          `${scale}x ${w}x${h} view ${kind}: pixels differing per tile (of ${TILE * TILE}): ${differ.join(' ')}; max ${((100 * Math.max(...differ)) / (TILE * TILE)).toFixed(3)} %`,
        );
      }
    }
  process.exit(0);
}

const shapes: [n: number, dx: number, dy: number][] = [
  [2, -1, -1],
  [2, 1, -1],
  [1, 0, 1],
  [2, -2, 1],
];
for (const scale of [4, 8, 16]) {
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
