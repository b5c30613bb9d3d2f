// bench/viewer --server-trace: the server side of the deep pass (issue 19). The service under the
// bench runs with BLUELINE_TILE_TRACE=1 and prints one `tile-trace {json}` line per deep tile
// request, deep render (region) and HTTP answer (core/services/tiles.service.ts TileTraceEvent);
// this collects them from its stdout and prints where a deep tile's time went on the server:
//  - per tile rendered for its request: request → tile stored → answer sent, split into gathering
//    (the region's first tile waits REGION_GATHER_MS for its neighbours), the pool's queue, the
//    render in the worker, the way back from the worker, the store (in the background since tiles
//    are served from memory meanwhile), and the HTTP answer;
//  - per render, by level and image: wall ms of each step in the worker (open documents, renders
//    of A and B with their line work, the 200-dpi fill areas, marking, the compare's stage, the
//    tolerance, the overlay's paint, cutting and encoding) and the worker thread's CPU, per tile.

import type { ChildProcess } from 'node:child_process';

type Timings = {
  startedAt: number;
  totalMs: number;
  cpuMs: number | null;
  steps: Record<string, number>;
};
type TileEv = {
  ev: 'tile';
  key: string;
  z: number;
  x: number;
  y: number;
  image: string;
  at: number;
  end: number;
  stored: boolean;
  cancelled: boolean;
};
type RegionEv = {
  ev: 'region';
  image: string;
  z: number;
  kind: string;
  tiles: [number, number][];
  at: number;
  queued: number;
  returned: number;
  end: number;
  worker: Timings | null;
};
type ServedEv = { ev: 'served'; key: string; z: number; at: number; end: number; status: number };
/** The HTTP thread's event-loop delay over one interval (BLUELINE_LOOP_LAG_MS, cli/main.ts). */
type LoopLagEv = {
  ev: 'loop-lag';
  /** When the line came (epoch ms). */
  rx: number;
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  samples: number;
};
export type TraceEv = TileEv | RegionEv | ServedEv | LoopLagEv;

/** Collects the service's trace lines from its stdout from now on. */
export function collectServerTrace(child: ChildProcess): TraceEv[] {
  const events: TraceEv[] = [];
  let rest = '';
  child.stdout?.on('data', (c: Buffer) => {
    const lines = (rest + c.toString()).split('\n');
    rest = lines.pop()!;
    for (const l of lines) {
      const m = /^tile-trace (\{.*\})\s*$/.exec(l);
      if (m) events.push(JSON.parse(m[1]!) as TraceEv);
      const lag = /^loop-lag (\{.*\})\s*$/.exec(l);
      if (lag) events.push({ ev: 'loop-lag', rx: Date.now(), ...JSON.parse(lag[1]!) } as LoopLagEv);
    }
  });
  return events;
}

const q = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '—');
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '—');
const pq = (xs: number[]) => `${f0(q(xs, 0.5))} / ${f0(q(xs, 0.95))}`;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export interface ServerTraceSummary {
  tiles: number;
  /** Median and p95 per part, ms, of tiles rendered for their own request. */
  parts: Record<string, [number, number]>;
  /** Per level and image: renders, tiles, wall ms per tile by step, CPU ms per tile. */
  renders: {
    z: number;
    kind: string;
    renders: number;
    tiles: number;
    wallPerTile: number;
    cpuPerTile: number | null;
    steps: Record<string, number>;
  }[];
  /** The HTTP thread's event-loop delay per one-second interval (p99s) and its max, ms. */
  loopLag?: { intervals: number; p99: number[]; max: number };
}

/** Prints the breakdown (markdown tables) and returns it; the loop delay only from `since` on. */
export function printServerTrace(events: TraceEv[], since = 0): ServerTraceSummary {
  const tiles = events.filter((e): e is TileEv => e.ev === 'tile');
  const regions = events.filter((e): e is RegionEv => e.ev === 'region');
  const served = new Map<string, ServedEv[]>();
  for (const e of events)
    if (e.ev === 'served') served.set(e.key, [...(served.get(e.key) ?? []), e]);
  const regionOf = new Map<string, RegionEv>();
  for (const r of regions)
    for (const [x, y] of r.tiles) regionOf.set(`${r.image}|${r.z}|${x}|${y}`, r);

  const parts: Record<string, number[]> = {
    'request → answer sent': [],
    'request → tile ready (made; stored after, off the path)': [],
    'gathering (region asked → handed to the pool)': [],
    "pool's queue": [],
    'render in the worker': [],
    'worker → service': [],
    'store (object store, cache; in the background)': [],
    'joined a region asked for earlier (ms after it)': [],
    'tile ready → answer sent (read, HTTP)': [],
  };
  let n = 0;
  for (const t of tiles) {
    if (t.stored || t.cancelled) continue;
    const r = regionOf.get(`${t.image}|${t.z}|${t.x}|${t.y}`);
    const s = served.get(t.key)?.find((e) => e.at <= t.at + 5 && e.end >= t.end - 5);
    if (!r || !r.worker) continue;
    n++;
    parts['request → tile ready (made; stored after, off the path)']!.push(t.end - t.at);
    if (s) {
      parts['request → answer sent']!.push(s.end - s.at);
      parts['tile ready → answer sent (read, HTTP)']!.push(s.end - t.end);
    }
    parts['gathering (region asked → handed to the pool)']!.push(r.queued - r.at);
    parts["pool's queue"]!.push(r.worker.startedAt - r.queued);
    parts['render in the worker']!.push(r.worker.totalMs);
    parts['worker → service']!.push(r.returned - (r.worker.startedAt + r.worker.totalMs));
    parts['store (object store, cache; in the background)']!.push(r.end - r.returned);
    parts['joined a region asked for earlier (ms after it)']!.push(t.at - r.at);
  }
  const cached = tiles.filter((t) => t.stored).length;
  const cancelled = tiles.filter((t) => t.cancelled).length;
  console.log(
    `\n### Server side of the deep tiles (BLUELINE_TILE_TRACE): ${tiles.length} deep tile requests — ${n} rendered for them, ${cached} found stored, ${cancelled} cancelled; ${regions.length} renders\n`,
  );
  console.log('| part (tiles rendered for their request) | p50 / p95 ms |');
  console.log('|---|---:|');
  const out: ServerTraceSummary = { tiles: n, parts: {}, renders: [] };
  for (const [k, xs] of Object.entries(parts)) {
    console.log(`| ${k} | ${pq(xs)} |`);
    out.parts[k] = [q(xs, 0.5), q(xs, 0.95)];
  }

  const groups = new Map<string, RegionEv[]>();
  for (const r of regions) {
    if (!r.worker) continue;
    const k = `${r.z}|${r.kind}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const stepNames = [
    ...new Set(regions.flatMap((r) => (r.worker ? Object.keys(r.worker.steps) : []))),
  ];
  console.log(
    `\nPer render in the worker, by level and image (wall ms per tile made, summed over renders / tiles; CPU: the worker thread's):\n`,
  );
  console.log(
    `| level | image | renders | tiles | ${stepNames.join(' | ')} | wall / tile | CPU / tile |`,
  );
  console.log(`|---:|---|---:|---:|${stepNames.map(() => '---:|').join('')}---:|---:|`);
  for (const [k, rs] of [...groups].sort()) {
    const [z, kind] = k.split('|');
    const nt = sum(rs.map((r) => r.tiles.length));
    const steps: Record<string, number> = {};
    for (const s of stepNames) steps[s] = sum(rs.map((r) => r.worker!.steps[s] ?? 0)) / nt;
    const cpus = rs.map((r) => r.worker!.cpuMs);
    const cpu = cpus.every((c) => c !== null) ? sum(cpus as number[]) / nt : null;
    const wall = sum(rs.map((r) => r.worker!.totalMs)) / nt;
    console.log(
      `| ${z} | ${kind} | ${rs.length} | ${nt} | ${stepNames.map((s) => f1(steps[s]!)).join(' | ')} | ${f1(wall)} | ${cpu === null ? '—' : f1(cpu)} |`,
    );
    out.renders.push({
      z: Number(z),
      kind: kind!,
      renders: rs.length,
      tiles: nt,
      wallPerTile: wall,
      cpuPerTile: cpu,
      steps,
    });
  }
  const lags = events.filter((e): e is LoopLagEv => e.ev === 'loop-lag' && e.rx >= since);
  if (lags.length > 0) {
    out.loopLag = {
      intervals: lags.length,
      p99: lags.map((l) => l.p99_ms),
      max: Math.max(...lags.map((l) => l.max_ms)),
    };
    console.log(
      `\nHTTP thread event-loop delay while the deep pass ran (${lags.length} one-second intervals with samples): p99 per interval median ${f1(q(out.loopLag.p99, 0.5))} ms, worst ${f1(Math.max(...out.loopLag.p99))} ms; max ${f1(out.loopLag.max)} ms`,
    );
  }
  return out;
}
