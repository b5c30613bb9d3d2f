// CPU cost of the expanded overlay page through the service's real route, sequential (no queueing):
// Fastify `inject` (hooks, API-key lookup, rate limiter, list route, no socket) and HTTPS on
// loopback. Reports the service thread's own CPU time per request (the kernel's per-thread
// schedstat, so the worker pool's threads and other processes do not count: usable on a loaded
// machine where wall-time percentiles are not), process CPU, wall percentiles, GC count and pause
// time, promises created per request, and the CPU an idle started service uses (background timers).
// Complements page-cost.ts (list engine only) and bench-api.ts (10 connections, wall latency).
// Linux only (/proc). Copy it into an older checkout to get the "before" of a change.
//
//   node --import tsx bench/api/route-cost.ts        # 300 requests per mode
//   ROUTE_COST_REQUESTS=600 …
import { createHook } from 'node:async_hooks';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { createService } from '../../core/service';
import {
  createApiKey,
  ensureOrganization,
} from '../../core/store/repositories/organizations.repository';
import { seedOverlays } from './seed';

const N = Number(process.env.ROUTE_COST_REQUESTS ?? 300);
const OVERLAYS = Number(process.env.BENCH_OVERLAYS ?? 10_000);
const EXPAND = 'block_a.sheet.drawing,block_b.sheet.drawing,job';
const PATH = `/v1/overlays?limit=100&expand=${EXPAND}`;

/** This thread's CPU time in ms (first field of schedstat: ns on the CPU). */
const threadCpuMs = (): number =>
  Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;

let gcCount = 0;
let gcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcCount++;
    gcMs += e.duration;
  }
}).observe({ entryTypes: ['gc'] });

const silent = { info: () => {}, warn: () => {}, error: () => {} };
const dir = mkdtempSync(join(tmpdir(), 'blueline-route-cost-'));
try {
  const svc = await createService({
    dataDir: dir,
    port: 0,
    log: silent,
    workers: 1,
    config: { rateLimits: { document: 1e9, vision: 1e9 } },
  });
  const { origin } = await svc.start();
  const org = await ensureOrganization(svc.db, 'Bench');
  const key = (await createApiKey(svc.db, org.id, 'bench')).secret;
  await seedOverlays(svc.db, org.id, OVERLAYS, {});
  const headers = { authorization: `Bearer ${key}` };
  // Wait (up to 60 s) until the process is quiet: the worker pool warms up in its own threads after
  // start, and on 2 cores that would compete with the service thread being measured.
  for (let waited = 0; waited < 60_000; waited += 500) {
    const c0 = process.cpuUsage();
    await new Promise((r) => setTimeout(r, 500));
    const c = process.cpuUsage(c0);
    if ((c.user + c.system) / 1000 < 25) break;
  }

  const viaInject = async (): Promise<void> => {
    const r = await svc.app.inject({ method: 'GET', url: PATH, headers });
    if (r.statusCode !== 200) throw new Error(`${r.statusCode} ${r.body.slice(0, 300)}`);
  };
  const agent = new https.Agent({ ca: svc.caCertPem, keepAlive: true });
  const viaHttps = (): Promise<void> =>
    new Promise((resolve, reject) => {
      https
        .get(new URL(PATH, origin), { agent, headers }, (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
          );
        })
        .on('error', reject);
    });

  const rows = [];
  for (const [mode, request] of [
    ['inject', viaInject],
    ['https', viaHttps],
  ] as const) {
    for (let i = 0; i < 30; i++) await request();
    gcCount = 0;
    gcMs = 0;
    const times: number[] = [];
    const thread0 = threadCpuMs();
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      await request();
      times.push(performance.now() - t0);
    }
    const thread = threadCpuMs() - thread0;
    const cpu = process.cpuUsage(cpu0);
    await new Promise((r) => setTimeout(r, 50)); // let the last GC entries arrive
    times.sort((a, b) => a - b);
    rows.push({
      mode,
      'thread CPU ms/req': (thread / N).toFixed(3),
      'process CPU ms/req': ((cpu.user + cpu.system) / 1000 / N).toFixed(3),
      'wall median': times[N >> 1]!.toFixed(2),
      'wall p99': times[Math.floor(N * 0.99)]!.toFixed(2),
      GCs: gcCount,
      'GC ms/req': (gcMs / N).toFixed(3),
    });
  }

  let promises = 0;
  const hook = createHook({
    init(_id, type) {
      if (type === 'PROMISE') promises++;
    },
  }).enable();
  for (let i = 0; i < 20; i++) await viaInject();
  hook.disable();

  const idle0 = threadCpuMs();
  await new Promise((r) => setTimeout(r, 3000));
  const idle = (threadCpuMs() - idle0) / 3;

  console.log(
    `expanded overlay page (${OVERLAYS} overlays), ${N} sequential requests per mode; load average ${loadavg()[0]!.toFixed(1)}`,
  );
  console.table(rows);
  console.log(`promises created per request (inject): ${(promises / 20).toFixed(0)}`);
  console.log(`idle started service: thread CPU ${idle.toFixed(1)} ms/s`);
  agent.destroy();
  await svc.stop();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
