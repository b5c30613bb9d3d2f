// Tiles per deep render, from a deep pass's server trace (`bench-viewer.ts --passes deep
// --server-trace` keeps it in $TMPDIR/blueline-bench-viewer/server-trace.jsonl):
//
//   node --import tsx bench/viewer/render-sizes.ts [server-trace.jsonl …]
//
// The service renders the tiles of one image and level asked for within a few ms together, by
// 2x2 cells (api.md §6); a render that makes one tile pays the render's fixed cost (the page's
// region, both revisions for an overlay) for one tile. Over HTTP/1.1 the browser sends at most 6
// requests at once, so a step's tiles reach the service one by one; over HTTP/2 together. Prints,
// per file: renders by tiles made (1, 2, 3, 4, more), tiles per render, the deep tile
// requests answered, found stored and cancelled, the tiles made that no request got (every request
// for them cancelled, none later), and the tiles left out of renders because their requests were
// cancelled before the render started (`cut`, since 2026-11-27 zoom-order).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';

interface Ev {
  ev: string;
  image?: string;
  x?: number;
  y?: number;
  tiles?: [number, number][];
  cut?: [number, number][];
  stored?: boolean;
  cancelled?: boolean;
  z?: number;
}

export function renderSizes(events: Ev[]) {
  const regions = events.filter((e) => e.ev === 'region' && Array.isArray(e.tiles));
  const bySize = new Map<number, number>();
  for (const r of regions) {
    const n = Math.min(r.tiles!.length, 5);
    bySize.set(n, (bySize.get(n) ?? 0) + 1);
  }
  const tiles = regions.reduce((a, r) => a + r.tiles!.length, 0);
  const requests = events.filter((e) => e.ev === 'tile');
  const got = new Set(
    requests.filter((e) => !e.cancelled).map((e) => `${e.image}|${e.z}|${e.x}|${e.y}`),
  );
  const unused = regions.reduce(
    (a, r) => a + r.tiles!.filter(([x, y]) => !got.has(`${r.image}|${r.z}|${x}|${y}`)).length,
    0,
  );
  return {
    unused,
    cut: regions.reduce((a, r) => a + (r.cut?.length ?? 0), 0),
    cutRenders: regions.filter((r) => r.cut?.length).length,
    renders: regions.length,
    tiles,
    perRender: regions.length ? tiles / regions.length : NaN,
    bySize: [1, 2, 3, 4, 5].map((n) => bySize.get(n) ?? 0),
    requests: requests.length,
    stored: requests.filter((e) => e.stored).length,
    cancelled: requests.filter((e) => e.cancelled).length,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = process.argv.slice(2);
  if (files.length === 0)
    files.push(
      path.join(process.env.TMPDIR ?? os.tmpdir(), 'blueline-bench-viewer', 'server-trace.jsonl'),
    );
  console.log(
    '| trace | renders | of 1 / 2 / 3 / 4 / 5+ tiles | tiles made | tiles per render | deep tile requests (stored, cancelled) | made, nobody got | cut before start (renders) |',
  );
  console.log('|---|---:|---|---:|---:|---|---:|---:|');
  for (const f of files) {
    const events = readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Ev);
    const s = renderSizes(events);
    console.log(
      `| ${f} | ${s.renders} | ${s.bySize.join(' / ')} | ${s.tiles} | ${s.perRender.toFixed(2)} | ${s.requests} (${s.stored}, ${s.cancelled}) | ${s.unused} | ${s.cut} (${s.cutRenders}) |`,
    );
  }
}
