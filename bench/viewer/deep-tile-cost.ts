// bench/viewer: what one deep tile costs to make, in the worker's own code (issue 19). The deep
// pass of bench-viewer.ts measures zoom step → tile on screen through the whole service, which on
// a shared 2-core machine mostly measures the machine's load; this measures the tile itself:
// wall and CPU time (process.cpuUsage: this thread plus libvips' encode threads) of
// renderOverlayTile (Overlay mode, combined) and of renderOverlayTile 'aligned_b' (New mode) for
// the tiles around S101's new column at 400 %, 800 % and 1,600 % of the beam proposal pair
// (fixtures/drawings, 20190601 → 20190602, page 0, identity transform), one after another on one
// thread as a pool worker runs them. Each tile is made `--reps` times (first one after opening the
// PDFs, not counted); medians per kind and level.
//
//   node --import tsx bench/viewer/deep-tile-cost.ts [--reps 3]
//
// Then, where the code has renderOverlayTiles (the tile service's 2 x 2 regions), three regions
// around the column per level and kind, made whole: wall and CPU time per tile (a region's / 4).
//
// The overlay tile is also given the stored 200-dpi overlay under it, as the tile service gave it
// before issue 19's fill fix (the code of that time read its classes from it; today's ignores it),
// so the same script times both versions of the code.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { openInput } from '../../core/vision/input/document';
import { diffStage } from '../../core/vision/compare/compare-pipeline.adapter';
import { renderOverlay } from '../../core/vision/compare/diff';
import * as deep from '../../core/vision/tiles/deep-tiles';
import type { OverlayTilesArgs, PageSource } from '../../core/vision/tiles/deep-tiles';

const { renderOverlayTile } = deep;
/** Absent from code before the 2 x 2 regions. */
const renderOverlayTiles = (deep as Partial<typeof deep>).renderOverlayTiles as
  ((args: OverlayTilesArgs) => Promise<Uint8Array[]>) | undefined;

const repo = path.resolve(import.meta.dirname, '../..');
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const REPS = arg('reps', 3);
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

/** The stored overlay under a tile (200 dpi, as the compare makes it), for the older code. */
async function storedUnder(left: number, top: number, n: number) {
  const margin = 160;
  const size = n + 2 * margin;
  const render = async (s: PageSource) => {
    const doc = await openInput(new Uint8Array(readFileSync(s.path)), s.contentType, {
      maxPixels: s.maxPixels,
    });
    try {
      return await doc.renderRegion!(0, {
        dpi: 200,
        scale: 1,
        left: left - margin,
        top: top - margin,
        width: size,
        height: size,
        colour: 'grey',
        lineWork: true,
      });
    } finally {
      await doc.close();
    }
  };
  const [ra, rb] = await Promise.all([render(A), render(B)]);
  const lw = (r: typeof ra) => r.lineWork && { width: r.width, height: r.height, data: r.lineWork };
  const st = await diffStage(ra, rb, {
    skipRegistration: true,
    lineWork: { a: lw(ra), b: lw(rb) },
  });
  const ov = renderOverlay(st.diff, 'combined', 'standard');
  const data = new Uint8Array(n * n * 3);
  for (let y = 0; y < n; y++) {
    const from = ((margin + y) * size + margin) * 3;
    data.set(ov.data.subarray(from, from + n * 3), y * n * 3);
  }
  return { left, top, width: n, height: n, channels: 3, data };
}

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

async function main() {
  const rows: string[] = [];
  for (const scale of [4, 8, 16]) {
    // The 3 x 3 tiles around the column at this level.
    const cx = Math.floor((COLUMN.x * scale) / TILE),
      cy = Math.floor((COLUMN.y * scale) / TILE);
    const n = TILE / scale;
    for (const kind of ['combined', 'aligned_b'] as const) {
      const wall: number[] = [];
      const cpu: number[] = [];
      let bytes = 0;
      for (let ty = cy - 1; ty <= cy + 1; ty++)
        for (let tx = cx - 1; tx <= cx + 1; tx++) {
          const stored = kind === 'combined' ? await storedUnder(tx * n, ty * n, n) : undefined;
          for (let rep = 0; rep <= REPS; rep++) {
            const t0 = performance.now();
            const c0 = process.cpuUsage();
            const webp = await renderOverlayTile({
              a: A,
              b: B,
              scale,
              aOrigin: { x: 0, y: 0 },
              bOrigin: { x: 0, y: 0 },
              transform: [1, 0, 0, 0, 1, 0],
              tile: { left: tx * TILE, top: ty * TILE, width: TILE, height: TILE },
              kind,
              ...(stored ? { stored } : {}),
            });
            const c = process.cpuUsage(c0);
            if (rep === 0) continue; // the first: documents opened, pages loaded
            wall.push(performance.now() - t0);
            cpu.push((c.user + c.system) / 1000);
            bytes += webp.byteLength;
          }
        }
      rows.push(
        `| ${scale * 100} % | ${kind === 'combined' ? 'Overlay (combined)' : 'New (aligned_b)'} | ${median(wall).toFixed(0)} | ${median(cpu).toFixed(0)} | ${(bytes / wall.length / 1024).toFixed(1)} |`,
      );
    }
  }
  // The tile service's way (tiles.service.ts REGION): the 2 x 2 tiles of a region in one call.
  // Code without renderOverlayTiles (before issue 19's regions) skips these rows.
  if (renderOverlayTiles)
    for (const scale of [4, 8, 16]) {
      const cx = Math.floor((COLUMN.x * scale) / TILE) & ~1,
        cy = Math.floor((COLUMN.y * scale) / TILE) & ~1;
      for (const kind of ['combined', 'aligned_b'] as const) {
        const wall: number[] = [];
        const cpu: number[] = [];
        let bytes = 0;
        for (const [ox, oy] of [
          [-2, 0],
          [0, 0],
          [2, 0],
        ] as const) {
          const tiles = [0, 1].flatMap((dy) =>
            [0, 1].map((dx) => ({
              left: (cx + ox + dx) * TILE,
              top: (cy + oy + dy) * TILE,
              width: TILE,
              height: TILE,
            })),
          );
          for (let rep = 0; rep <= REPS; rep++) {
            const t0 = performance.now();
            const c0 = process.cpuUsage();
            const webps = await renderOverlayTiles({
              a: A,
              b: B,
              scale,
              aOrigin: { x: 0, y: 0 },
              bOrigin: { x: 0, y: 0 },
              transform: [1, 0, 0, 0, 1, 0],
              tiles,
              kind,
            });
            const c = process.cpuUsage(c0);
            if (rep === 0) continue;
            wall.push((performance.now() - t0) / 4);
            cpu.push((c.user + c.system) / 1000 / 4);
            bytes += webps.reduce((n, w) => n + w.byteLength, 0) / 4;
          }
        }
        rows.push(
          `| ${scale * 100} % | ${kind === 'combined' ? 'Overlay (combined)' : 'New (aligned_b)'}, 2 x 2 region, per tile | ${median(wall).toFixed(0)} | ${median(cpu).toFixed(0)} | ${(bytes / wall.length / 1024).toFixed(1)} |`,
        );
      }
    }
  console.log('| level | image | wall ms (median) | CPU ms (median) | KiB a tile |');
  console.log('| ----- | ----- | ---------------: | --------------: | ---------: |');
  for (const r of rows) console.log(r);
  console.log(
    `(${REPS} reps x 9 tiles per row; loadavg ${(await import('node:os'))
      .loadavg()
      .map((v) => v.toFixed(1))
      .join(' ')})`,
  );
}

await main();
