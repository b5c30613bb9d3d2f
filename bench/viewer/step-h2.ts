// bench/viewer: the server side of a zoom step when a view's tiles reach the service together (as
// they will over HTTP/2; over HTTP/1.1 the browser's six connections hold them back). A throwaway
// HTTP/2 server (h2c, in this process) in front of the tile service (core/services/tiles.service.ts)
// with the real worker pool (2 workers, as `blueline serve` here), and a Node client on one HTTP/2
// connection that sends each step's tiles at once: a 3 x 2 or 3 x 3 view of S101's overlay
// (combined; the beam proposal pair, fixtures/drawings, identity transform) at 200 % to 1,600 %,
// around 6 places, 24 steps, none of whose tiles were made before (as zooming in to new places).
// Prints p50 / p95 of "step sent → all its tiles answered" and "→ each tile answered", the renders
// (tiles per render) and the worker threads' CPU per tile by level (the tile service's trace), and
// the process's CPU per tile (workers, libvips' encode threads, the HTTP thread).
//
//   node --import tsx bench/viewer/step-h2.ts [--rounds 1]
//
// Runs from whichever tree it lies in (copy it into an export of main to measure before).

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { LocalObjectStore } from '../../core/blobs/local-object-store';
import { createWorkerPool } from '../../core/jobs/worker-pool';
import { poolTileRenderer } from '../../core/jobs/tile-tasks';
import { TileService, type TileTraceEvent } from '../../core/services/tiles.service';
import type { DeepSource } from '../../core/services/tiles-source';
import type { PageSource } from '../../core/vision/tiles/deep-tiles';

const repo = path.resolve(import.meta.dirname, '../..');
const ri = process.argv.indexOf('--rounds');
const ROUNDS = ri > 0 ? Number(process.argv[ri + 1]) : 1;
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
/** S101 at 200 dpi: 2448 x 1584 pt → 6800 x 4400 px; native_zoom 4, levels 5–8 are 2x–16x. */
const W = 6800,
  H = 4400,
  NATIVE = 4;
const TILE = 512;

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'blueline-step-h2-'));
const objects = new LocalObjectStore({ dataDir });
const pool = createWorkerPool({ size: 2 });
const events: TileTraceEvent[] = [];
const sources: Record<string, DeepSource> = {};
const OVERLAY = (round: number) => `projects/prj_1/compare/cmp_${round}/overlay/combined.png`;
for (let r = 0; r <= ROUNDS; r++)
  sources[OVERLAY(r)] = {
    kind: 'overlay',
    width: W,
    height: H,
    a: source('20190601'),
    b: source('20190602'),
    aOrigin: { x: 0, y: 0 },
    bOrigin: { x: 0, y: 0 },
    transform: [1, 0, 0, 0, 1, 0],
    imageKind: 'combined',
  };
const tiles = new TileService(objects, {
  resolve: async (k) => sources[k] ?? null,
  renderer: poolTileRenderer(pool),
  cacheMaxBytes: 10e9,
  trace: (e) => events.push(e),
});

const server = http2.createServer();
server.on('stream', (stream, headers) => {
  const m = /^\/(\d+)\/(\d+)\/(\d+)\/(\d+)$/.exec(String(headers[':path']));
  if (!m) {
    stream.respond({ ':status': 404 });
    stream.end();
    return;
  }
  const [round, z, x, y] = m.slice(1).map(Number) as [number, number, number, number];
  const ctl = new AbortController();
  stream.on('close', () => ctl.abort(new Error('closed')));
  void (async () => {
    const key = await tiles.tileKey(OVERLAY(round), z, x, y, ctl.signal);
    const obj = tiles.freshTile(key) ?? (await objects.get(key));
    const chunks: Buffer[] = [];
    for await (const c of obj!.stream()) chunks.push(c as Buffer);
    stream.respond({ ':status': 200, 'content-type': 'image/webp' });
    stream.end(Buffer.concat(chunks));
  })().catch((e) => {
    if (!stream.closed) {
      stream.respond({ ':status': 500 });
      stream.end(String(e));
    }
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const port = (server.address() as AddressInfo).port;
const client = http2.connect(`http://127.0.0.1:${port}`);

function get(p: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = client.request({ ':path': p });
    let status = 0,
      bytes = 0;
    req.on('response', (h) => (status = Number(h[':status'])));
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () =>
      status === 200 && bytes > 0
        ? resolve(performance.now())
        : reject(new Error(`${p}: ${status}`)),
    );
    req.on('error', reject);
    req.end();
  });
}

/** The view's tiles: `cols` x `rows` around sheet point (px, py) at level z. */
function view(z: number, px: number, py: number, cols: number, rows: number): [number, number][] {
  const s = 2 ** (z - NATIVE);
  const tx = Math.floor((px * s) / TILE - cols / 2 + 0.5),
    ty = Math.floor((py * s) / TILE - rows / 2 + 0.5);
  const out: [number, number][] = [];
  for (let y = ty; y < ty + rows; y++) for (let x = tx; x < tx + cols; x++) out.push([x, y]);
  return out;
}

const PLACES = [
  [3865, 2572],
  [1500, 1200],
  [5000, 3000],
  [2500, 3500],
  [4200, 1500],
  [3000, 2000],
];
const quantile = (v: number[], q: number) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};

// Warm-up (not counted): both workers open the pair and load the page.
await Promise.all(view(8, 600, 600, 4, 2).map(([x, y]) => get(`/0/8/${x}/${y}`)));
await tiles.whenStored();
events.length = 0;

const all: number[] = [],
  each: number[] = [];
const byLevel = new Map<number, { all: number[]; each: number[] }>();
const cpu0 = process.cpuUsage();
let nTiles = 0;
for (let round = 1; round <= ROUNDS; round++) {
  let i = 0;
  for (const [px, py] of PLACES)
    for (const z of [5, 6, 7, 8]) {
      const [cols, rows] = i++ % 2 === 0 ? [3, 2] : [3, 3];
      const v = view(z, px!, py!, cols, rows);
      const t0 = performance.now();
      const done = await Promise.all(v.map(([x, y]) => get(`/${round}/${z}/${x}/${y}`)));
      const t1 = Math.max(...done);
      const lv = byLevel.get(z) ?? { all: [], each: [] };
      byLevel.set(z, lv);
      all.push(t1 - t0);
      lv.all.push(t1 - t0);
      for (const d of done) {
        each.push(d - t0);
        lv.each.push(d - t0);
      }
      nTiles += v.length;
      await tiles.whenStored();
      await new Promise((r) => setTimeout(r, 50));
    }
}
const cpu = process.cpuUsage(cpu0);
const f = (v: number) => v.toFixed(0);
console.log(
  `load average: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(
  `${all.length} steps, ${nTiles} tiles, each step's tiles sent at once on one HTTP/2 connection`,
);
console.log(
  '| level | steps | step sent → all answered p50 / p95 ms | → each tile answered p50 / p95 ms |',
);
console.log('| ---: | ---: | ---: | ---: |');
for (const [z, lv] of [...byLevel].sort((a, b) => a[0] - b[0]))
  console.log(
    `| ${z} (${2 ** (z - NATIVE) * 100} %) | ${lv.all.length} | ${f(quantile(lv.all, 0.5))} / ${f(quantile(lv.all, 0.95))} | ${f(quantile(lv.each, 0.5))} / ${f(quantile(lv.each, 0.95))} |`,
  );
console.log(
  `| all | ${all.length} | ${f(quantile(all, 0.5))} / ${f(quantile(all, 0.95))} | ${f(quantile(each, 0.5))} / ${f(quantile(each, 0.95))} |`,
);
const regions = events.filter((e) => e.ev === 'region');
console.log(
  '\n| level | renders | tiles | tiles / render | worker thread CPU / tile ms | worker wall / tile ms |',
);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: |');
for (const z of [5, 6, 7, 8]) {
  const rs = regions.filter((r) => r.z === z);
  const n = rs.reduce((s, r) => s + r.tiles.length, 0);
  const c = rs.reduce((s, r) => s + (r.worker?.cpuMs ?? 0), 0);
  const w = rs.reduce((s, r) => s + (r.worker?.totalMs ?? 0), 0);
  console.log(
    `| ${z} | ${rs.length} | ${n} | ${(n / rs.length).toFixed(2)} | ${(c / n).toFixed(1)} | ${(w / n).toFixed(1)} |`,
  );
}
console.log(
  `\nprocess CPU per tile (workers, libvips threads, HTTP thread): ${((cpu.user + cpu.system) / 1000 / nTiles).toFixed(1)} ms`,
);
client.close();
server.close();
await pool.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
