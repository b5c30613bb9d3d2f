// bench/viewer: where a deep overlay tile's time goes in the worker's own code, step by step
// (DeepTimings: open, render, fills, mark, stage, tolerance, paint, encode) and the thread's CPU, for
// single tiles and 2 x 2 regions of the beam proposal pair around S101's new column at 200 %–1,600 %
// (the same tiles as deep-tile-hashes.ts), each made `--reps` times after one warm-up (documents
// opened, fill areas kept, as in a worker during a zoom session). Per tile: a region's / its tiles.
//
//   node --import tsx bench/viewer/deep-tile-steps.ts [--reps 5]

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import * as deep from '../../core/vision/tiles/deep-tiles';
import type { PageSource, TileCut } from '../../core/vision/tiles/deep-tiles';
import { newTimings, type DeepTimings } from '../../core/vision/tiles/deep-timings';

const repo = path.resolve(import.meta.dirname, '../..');
const i = process.argv.indexOf('--reps');
const REPS = i > 0 ? Number(process.argv[i + 1]) : 5;
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
const COLUMN = { x: 3865, y: 2572 };
const TILE = 512;

function region(scale: number, n: number, dx: number, dy: number): TileCut[] {
  const tx = Math.floor((COLUMN.x * scale) / TILE) + dx,
    ty = Math.floor((COLUMN.y * scale) / TILE) + dy;
  const cuts: TileCut[] = [];
  for (let y = 0; y < n; y++)
    for (let x = 0; x < n; x++)
      cuts.push({ left: (tx + x) * TILE, top: (ty + y) * TILE, width: TILE, height: TILE });
  return cuts;
}

const median = (v: number[]) => [...v].sort((p, q) => p - q)[Math.floor(v.length / 2)]!;
const STEPS = ['open', 'render', 'fills', 'mark', 'stage', 'tolerance', 'paint', 'encode'];
console.log(
  `| scale | tiles | ${STEPS.join(' | ')} | wall / tile | thread CPU / tile | process CPU / tile |`,
);
console.log(`| ---: | ---: | ${STEPS.map(() => '---:').join(' | ')} | ---: | ---: | ---: |`);
for (const scale of [2, 4, 8, 16]) {
  for (const [n, dx, dy] of [
    [1, 0, 1],
    [2, -1, -1],
  ] as const) {
    const tiles = region(scale, n, dx, dy);
    const runs: { t: DeepTimings; cpu: number }[] = [];
    for (let r = 0; r <= REPS; r++) {
      const t = newTimings();
      const c0 = process.cpuUsage();
      await deep.renderOverlayTiles(
        {
          a: A,
          b: B,
          scale,
          aOrigin: { x: 0, y: 0 },
          bOrigin: { x: 0, y: 0 },
          transform: [1, 0, 0, 0, 1, 0],
          tiles,
          kind: 'combined',
        },
        t,
      );
      const c = process.cpuUsage(c0);
      if (r > 0) runs.push({ t, cpu: (c.user + c.system) / 1000 });
    }
    const k = tiles.length;
    const step = (s: string) => (median(runs.map((r) => r.t.steps[s] ?? 0)) / k).toFixed(1);
    console.log(
      `| ${scale}x | ${k} | ${STEPS.map(step).join(' | ')} | ${(median(runs.map((r) => r.t.totalMs)) / k).toFixed(1)} | ${(median(runs.map((r) => r.t.cpuMs ?? 0)) / k).toFixed(1)} | ${(median(runs.map((r) => r.cpu)) / k).toFixed(1)} |`,
    );
  }
}
