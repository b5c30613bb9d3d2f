// Load (issue 7 item 2): concurrent clients on loopback (autocannon) hit lists, single reads and
// signed image URLs while a drawing set is being processed. Measured: requests, errors, non-2xx,
// p50/p99/max latency per group, and the HTTP thread's event-loop delay reported by the service
// itself (BLUELINE_LOOP_LAG_MS, see core/cli/main.ts).
// Pass: no errors, no non-2xx; p99 of every group within LOAD_P99_GOAL_MS (default 50, the
// platform goal of issue 2) and event-loop delay p99 within LOAD_LAG_P99_MS (default 100).
// Run: node --import tsx reliability/load.ts   (LOAD_SECONDS, LOAD_CONNECTIONS; 0 = no load, only
// the event-loop delay while the set processes)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { openDatabase } from '../core/store/db';
import {
  createApiKey,
  ensureOrganization,
} from '../core/store/repositories/organizations.repository';
import {
  FIXTURES,
  TERMINAL,
  listAll,
  loggedObjects,
  request,
  requestsSent,
  sleep,
  startServe,
  uploadDrawing,
} from './lib';

const SECONDS = Number(process.env.LOAD_SECONDS ?? 20);
const CONNECTIONS = Number(process.env.LOAD_CONNECTIONS ?? 8);
const P99_GOAL_MS = Number(process.env.LOAD_P99_GOAL_MS ?? 50);
const LAG_P99_MS = Number(process.env.LOAD_LAG_P99_MS ?? 100);

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'blueline-load-'));
  const svc = await startServe(dataDir, { env: { BLUELINE_LOOP_LAG_MS: '1000' } });
  const key = svc.firstKey!;
  const failures: string[] = [];
  try {
    const project = (await request(svc, 'POST', '/v1/projects', { key, body: { name: 'Load' } }))
      .body.id as string;
    for (let i = 0; i < 30; i++)
      await request(svc, 'POST', '/v1/projects', { key, body: { name: `Filler ${i}` } });
    // One processed drawing gives sheets, blocks and image URLs to read.
    const first = await uploadDrawing(
      svc,
      key,
      project,
      readFileSync(join(FIXTURES, '20150115_ASK-003_exterior-west-wall-window-locations.pdf')),
      'ASK-003',
    );
    const firstJob = first.drawing!.body.job_id as string;
    for (const t0 = Date.now(); ;) {
      const j = await request(svc, 'GET', `/v1/jobs/${firstJob}`, { key });
      if (TERMINAL.has(j.body.status)) break;
      if (Date.now() - t0 > 300_000) throw new Error('the first drawing did not finish processing');
      await sleep(500);
    }
    const drawingId = first.drawing!.body.id as string;
    const sheets = await listAll<any>(svc, key, `/v1/sheets?drawing_id=${drawingId}&limit=100`);
    const blocks = await listAll<any>(svc, key, `/v1/blocks?drawing_id=${drawingId}&limit=100`);
    if (sheets.length === 0) throw new Error('no sheets to read');

    // The per-key rate limit (600/min) would turn load into 429s: spread requests over many keys
    // of one organization, written straight into the store (the service reads keys per request).
    const db = openDatabase(join(dataDir, 'blueline.db'));
    const org = (await ensureOrganization(db, 'Default')).id;
    const keys: string[] = [];
    for (let i = 0; i < 400; i++) keys.push((await createApiKey(db, org, `load ${i}`)).secret);
    await db.close();

    // Now start processing a 5-sheet set, and load the service while it runs.
    // LOAD_IDLE=1 measures the same load with nothing processing (the baseline).
    const idle = Boolean(process.env.LOAD_IDLE);
    const busy = idle
      ? first
      : await uploadDrawing(
          svc,
          key,
          project,
          readFileSync(join(FIXTURES, '20190601_beam-proposal_5-sheets.pdf')),
          'Beam proposal',
        );
    const busyJob = busy.drawing!.body.job_id as string;
    await sleep(1500);
    const lagFrom = svc.lines.length;

    let k = 0;
    const authed = (paths: string[]) =>
      paths.map((path) => ({
        method: 'GET' as const,
        path,
        setupRequest: (req: any) => ({
          ...req,
          headers: { ...req.headers, authorization: `Bearer ${keys[k++ % keys.length]}` },
        }),
      }));
    const rel = (uri: string) => {
      const u = new URL(uri);
      return u.pathname + u.search;
    };
    const groups: Record<string, any[]> = {
      lists: authed([
        '/v1/projects?limit=100',
        `/v1/drawings?project_id=${project}&limit=100`,
        `/v1/sheets?drawing_id=${drawingId}&limit=100`,
        `/v1/blocks?drawing_id=${drawingId}&limit=100&expand=sheet.drawing`,
        '/v1/jobs?limit=100',
      ]),
      reads: authed([
        `/v1/projects/${project}`,
        `/v1/drawings/${drawingId}?expand=file`,
        `/v1/sheets/${sheets[0].id}`,
        `/v1/blocks/${blocks[0].id}`,
        `/v1/jobs/${busyJob}`,
      ]),
      images: [
        rel(sheets[0].thumbnail_uri),
        rel(blocks[0].uri),
        ...blocks.slice(1, 3).map((b: any) => rel(b.uri)),
        rel(sheets[0].uri),
      ].map((path) => ({ method: 'GET' as const, path })),
    };
    const per = Math.max(1, Math.floor(CONNECTIONS / 3));
    // LOAD_CONNECTIONS=0: no load at all — wait for the set to finish processing and report only
    // the event-loop delay processing itself causes on the HTTP thread (one job poll per second).
    const processingOnly = CONNECTIONS === 0;
    const loadStart = Date.now();
    if (processingOnly) {
      for (;;) {
        const j = await request(svc, 'GET', `/v1/jobs/${busyJob}`, { key });
        if (TERMINAL.has(j.body.status)) break;
        if (Date.now() - loadStart > 600_000) throw new Error('the set did not finish processing');
        await sleep(1000);
      }
    }
    const runs = processingOnly
      ? []
      : await Promise.all(
          Object.entries(groups).map(
            ([name, requests]) =>
              new Promise<[string, any]>((res, rej) => {
                (
                  autocannon as unknown as (
                    o: object,
                    cb: (err: unknown, result: any) => void,
                  ) => void
                )(
                  { url: svc.origin, connections: per, duration: SECONDS, requests, timeout: 30 },
                  (err: unknown, result: any) => (err ? rej(err) : res([name, result])),
                );
              }),
          ),
        );
    await sleep(1200); // the last lag report
    const lag = loggedObjects(svc.lines.slice(lagFrom), 'loop-lag');
    const busyState = (await request(svc, 'GET', `/v1/jobs/${busyJob}`, { key })).body;

    const table: Record<string, unknown> = {};
    let total = 0;
    for (const [name, r] of runs) {
      total += r.requests.total;
      table[name] = {
        requests: r.requests.total,
        rps: Math.round(r.requests.average),
        p50_ms: r.latency.p50,
        p99_ms: r.latency.p99,
        max_ms: r.latency.max,
        errors: r.errors,
        timeouts: r.timeouts,
        non2xx: r.non2xx,
        mb_s: Math.round((r.throughput.average / 1e6) * 10) / 10,
      };
      if (r.errors || r.timeouts || r.non2xx)
        failures.push(
          `${name}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx (${JSON.stringify(r.statusCodeStats)})`,
        );
      if (r.latency.p99 > P99_GOAL_MS)
        failures.push(`${name}: p99 ${r.latency.p99} ms over the ${P99_GOAL_MS} ms goal`);
    }
    const lagP99 = Math.max(0, ...lag.map((l) => l.p99_ms!));
    const lagMax = Math.max(0, ...lag.map((l) => l.max_ms!));
    if (lag.length === 0) failures.push('the service reported no event-loop lag figures');
    if (lagP99 > LAG_P99_MS)
      failures.push(`event-loop delay p99 ${lagP99} ms over ${LAG_P99_MS} ms`);
    console.table(table);
    console.log(
      `load summary ${JSON.stringify({
        seconds: SECONDS,
        idle: Boolean(process.env.LOAD_IDLE),
        connections: processingOnly ? 0 : per * 3,
        wall_s: Math.round((Date.now() - loadStart) / 100) / 10,
        requests: total + requestsSent,
        autocannon_requests: total,
        processing_during_load: `${busyState.status} ${busyState.progress?.completed}/${busyState.progress?.total}`,
        event_loop_delay: {
          reports: lag.length,
          worst_p50_ms: Math.max(0, ...lag.map((l) => l.p50_ms!)),
          worst_p99_ms: lagP99,
          max_ms: lagMax,
        },
        failures,
      })}`,
    );
  } finally {
    svc.child.kill('SIGTERM');
    await svc.exited;
    svc.agent.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
  if (failures.length) process.exit(1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
