// Crash safety (issue 7 item 1, issue 16 part 6): `blueline serve` on a temp data dir is killed with
// SIGKILL 3–14 s after each start (RELIABILITY_KILL_MIN_MS / _MAX_MS) while drawing sets are
// processed — the 9-sheet barber set and the beam proposal pair first — and compared (when the
// compare route exists), restarted, and killed again, RELIABILITY_CYCLES times (default 20). After
// the last restart every job must end Completed (a restart is never a job's fault), and then:
//  - no job ever left a terminal status it was seen in (checked on every observation);
//  - no duplicate sheets: one per (drawing, page), pages 0..n-1, sheet_count matches;
//  - no half-written image is ever served: every image fetched during the cycles and every sheet,
//    thumbnail, block and overlay image at the end downloads whole and decodes with sharp, at the
//    recorded size;
//  - boot reconciliation ran on every start (its counts are summed) and leaves nothing orphaned;
//  - PRAGMA integrity_check = ok.
// Run: node --import tsx reliability/crash-cycles.ts   (RELIABILITY_CYCLES=N, KEEP_DATA=1)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteDb } from '../core/store/db';
import sharp from 'sharp';
import { LocalObjectStore } from '../core/blobs/local-object-store';
import { reconcile } from '../core/services/reconcile.service';
import {
  FIXTURES,
  TERMINAL,
  listAll,
  loggedObjects,
  rand,
  request,
  requestsSent,
  sleep,
  startServe,
  uploadDrawing,
  type Served,
} from './lib';

const CYCLES = Number(process.env.RELIABILITY_CYCLES ?? 20);
const FINAL_WAIT_MS = Number(process.env.RELIABILITY_FINAL_WAIT_MS ?? 20 * 60_000);
const KILL_MIN_MS = Number(process.env.RELIABILITY_KILL_MIN_MS ?? 3_000);
const KILL_MAX_MS = Number(process.env.RELIABILITY_KILL_MAX_MS ?? 14_000);
// Uploaded in this order, two in the first cycle, then one at the start of a cycle whenever fewer
// than two jobs were open, so every kill lands while something processes: the 9-sheet barber sets
// and the beam proposal pair (34x22 sheets, the slowest pages) first, then the smaller sets; after
// the list, the barber and beam sets again. Revisions of a pair are compared once both are Ready.
const PAIR_COUNT = 3;
const UPLOADS: { file: string; pair: number | null; rev: 0 | 1 }[] = [
  { file: '20130718_barber-house_set_9-sheets.pdf', pair: 0, rev: 0 },
  { file: '20190601_beam-proposal_5-sheets.pdf', pair: 1, rev: 0 },
  { file: '20190602_beam-proposal_5-sheets.pdf', pair: 1, rev: 1 },
  { file: '20130724_barber-house_set_9-sheets.pdf', pair: 0, rev: 1 },
  { file: '20150115_ASK-003_exterior-west-wall-window-locations.pdf', pair: 2, rev: 0 },
  { file: '20150116_ASK-003_exterior-west-wall-window-locations.pdf', pair: 2, rev: 1 },
  { file: '20190414_foundation-details_3-sheets.pdf', pair: null, rev: 0 },
  { file: '20150129_A-101_first-floor.pdf', pair: null, rev: 0 },
  { file: '20190321_A600_schedules.pdf', pair: null, rev: 0 },
];
const AGAIN = [
  '20130718_barber-house_set_9-sheets.pdf',
  '20190601_beam-proposal_5-sheets.pdf',
] as const;
const nextUpload = (n: number) =>
  UPLOADS[n] ?? { file: AGAIN[(n - UPLOADS.length) % AGAIN.length]!, pair: null, rev: 0 as const };

const failures: string[] = [];
const fail = (msg: string) => {
  failures.push(msg);
  console.error(`FAIL ${msg}`);
};

const dataDir = mkdtempSync(join(tmpdir(), 'blueline-crash-'));
let svc: Served | undefined;
let key = '';
const seenTerminal = new Map<string, string>();
const jobIds = new Set<string>();
const drawings: { id: string; file: string; pair: number | null; rev: 0 | 1 }[] = [];
const compared = new Set<number>();
let imagesChecked = 0;
let requestsInterrupted = 0;
let compareAvailable = false;
const reconciliations: Record<string, number>[] = [];
let kills = 0;
/** Open jobs at the last look (the upload pace follows it). */
let openJobs = 0;
/** Per kill: the jobs the dead process left Started, i.e. were running when it was killed. */
const runningAtKill: string[][] = [];
const lifetimesMs: number[] = [];
/** What the runner logged about interrupted jobs, over every boot (crash-attribution.ts). */
const runnerLog = { requeued: 0, blamed_and_backed_off: 0, suspect_runs_alone: 0 };
function countRunnerLines(lines: string[]) {
  for (const l of lines) {
    if (l.includes('Job found Started at boot')) runnerLog.requeued++;
    if (l.includes('queued again after a back-off')) runnerLog.blamed_and_backed_off++;
    if (l.includes('Running a crash suspect alone')) runnerLog.suspect_runs_alone++;
  }
}
const bootsMs: number[] = [];

function observeJob(job: { id: string; status: string }) {
  jobIds.add(job.id);
  const first = seenTerminal.get(job.id);
  if (first !== undefined && first !== job.status)
    fail(`job ${job.id} left its terminal status ${first} for ${job.status}`);
  if (first === undefined && TERMINAL.has(job.status)) seenTerminal.set(job.id, job.status);
}

/** Downloads a signed image URL and decodes it; a half-written image fails here. */
async function checkImage(uri: string, expect?: { width: number; height: number }, what = uri) {
  const r = await request(svc!, 'GET', uri, { timeoutMs: 120_000 });
  if (r.status !== 200) return fail(`${what}: HTTP ${r.status}`);
  const len = Number(r.headers['content-length']);
  if (Number.isFinite(len) && len !== r.bytes.length)
    return fail(`${what}: ${r.bytes.length} of ${len} bytes`);
  try {
    const { data, info } = await sharp(r.bytes).raw().toBuffer({ resolveWithObject: true });
    if (data.length !== info.width * info.height * info.channels)
      fail(`${what}: decoded ${data.length} bytes`);
    if (expect && (info.width !== expect.width || info.height !== expect.height))
      fail(
        `${what}: ${info.width}x${info.height}, the record says ${expect.width}x${expect.height}`,
      );
    imagesChecked++;
  } catch (err) {
    fail(`${what}: does not decode (${(err as Error).message})`);
  }
}

const isConnError = (err: unknown) =>
  /ECONNRESET|ECONNREFUSED|socket hang up|EPIPE|timeout/.test(
    String((err as Error)?.message ?? err),
  );

/** Starts the comparison of every pair whose two revisions are Ready (once per pair). */
async function startComparisons() {
  if (!compareAvailable) return;
  const s = svc!;
  for (let p = 0; p < PAIR_COUNT; p++) {
    if (compared.has(p)) continue;
    const a = drawings.find((d) => d.pair === p && d.rev === 0);
    const b = drawings.find((d) => d.pair === p && d.rev === 1);
    if (!a || !b) continue;
    const [ra, rb] = await Promise.all([
      request(s, 'GET', `/v1/drawings/${a.id}`, { key }),
      request(s, 'GET', `/v1/drawings/${b.id}`, { key }),
    ]);
    if (ra.body?.status !== 'Ready' || rb.body?.status !== 'Ready') continue;
    const c = await request(s, 'POST', `/v1/drawings/${b.id}/compare`, {
      key,
      body: { compare_to: a.id },
    });
    if (c.status === 202) {
      compared.add(p);
      observeJob({ id: c.body.job_id, status: c.body.status });
    } else fail(`compare pair ${p}: HTTP ${c.status} ${JSON.stringify(c.body)}`);
  }
}

/** Work done while the service lives: uploads, comparisons, reads, image checks. Ends when killed. */
async function workload(cycle: number, signal: { killed: boolean }) {
  const s = svc!;
  const project = process.env.CRASH_PROJECT!;
  // Upload on every other cycle (two in the first) until UPLOADS is done: a finite queue.
  const uploads = cycle === 1 ? 2 : openJobs < 2 ? 1 : 0;
  for (let u = 0; u < uploads && !signal.killed; u++) {
    const next = drawings.length;
    const { file, pair, rev } = nextUpload(next);
    const up = await uploadDrawing(
      s,
      key,
      project,
      readFileSync(join(FIXTURES, file)),
      `${file} #${next}`,
    );
    if (up.drawing?.status === 201) {
      drawings.push({ id: up.drawing.body.id, file, pair, rev });
      observeJob({
        id: up.drawing.body.job_id,
        status: up.drawing.body.status === 'Processing' ? 'Queued' : up.drawing.body.status,
      });
    } else if (!signal.killed)
      fail(`upload of ${file}: ${up.file.status}/${up.put?.status}/${up.drawing?.status}`);
  }
  while (!signal.killed) {
    await startComparisons();
    // Reads: jobs (terminal statuses must hold), lists, and a random image.
    const jobs = await listAll<{ id: string; status: string }>(s, key, '/v1/jobs?limit=100');
    for (const j of jobs) observeJob(j);
    openJobs = jobs.filter((j) => !TERMINAL.has(j.status)).length;
    const sheets = await listAll<{
      uri: string;
      thumbnail_uri: string;
      width: number;
      height: number;
      id: string;
    }>(s, key, `/v1/sheets?project_id=${project}&limit=100`).catch(async () =>
      (
        await Promise.all(
          drawings.map((d) => listAll<any>(s, key, `/v1/sheets?drawing_id=${d.id}&limit=100`)),
        )
      ).flat(),
    );
    if (sheets.length > 0) {
      const sh = sheets[Math.floor(Math.random() * sheets.length)]!;
      await checkImage(
        sh.uri,
        { width: sh.width, height: sh.height },
        `sheet ${sh.id} (during cycle ${cycle})`,
      );
    }
    await sleep(rand(200, 1200));
  }
}

/** The jobs Started in the database (read while no service runs), as `type:file`. */
function startedJobs(): string[] {
  const db = new Database(join(dataDir, 'blueline.db'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT j.type, coalesce(d.name, j.target_id) AS what FROM jobs j
         LEFT JOIN drawings d ON d.id = j.target_id
         WHERE j.status = 'Started' AND NOT EXISTS (
           SELECT 1 FROM jobs c WHERE c.parent_id = j.id AND c.status IN ('Queued', 'Started'))`,
      )
      .all() as { type: string; what: string }[];
    return rows.map((r) => `${r.type}:${r.what.replace(/^\d+_/, '').replace(/\.pdf/, '')}`);
  } finally {
    db.close();
  }
}

async function main() {
  console.log(`crash-cycles: ${CYCLES} SIGKILL cycles on ${dataDir}`);
  svc = await startServe(dataDir);
  key = svc.firstKey!;
  if (!key) throw new Error('serve printed no first key');
  reconciliations.push(...loggedObjects(svc.lines, 'Boot reconciliation'));
  const openapi = await request(svc, 'GET', '/v1/openapi.json');
  compareAvailable = Boolean(openapi.body?.paths?.['/v1/drawings/{id}/compare']);
  console.log(
    `compare route: ${compareAvailable ? 'present, comparisons join the workload' : 'absent, processing only'}`,
  );
  const project = await request(svc, 'POST', '/v1/projects', {
    key,
    body: { name: 'Crash cycles' },
  });
  process.env.CRASH_PROJECT = project.body.id;

  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    if (!svc) {
      svc = await startServe(dataDir);
      reconciliations.push(...loggedObjects(svc.lines, 'Boot reconciliation'));
    }
    const signal = { killed: false };
    const work = workload(cycle, signal).catch((err) => {
      if (signal.killed && isConnError(err)) requestsInterrupted++;
      else if (!signal.killed) fail(`cycle ${cycle} workload: ${(err as Error).stack ?? err}`);
    });
    // Kill at a random moment, 3–14 s after the start: during uploads, boot work and mid-page.
    const lifetime = rand(KILL_MIN_MS, KILL_MAX_MS);
    lifetimesMs.push(lifetime);
    bootsMs.push(svc.bootMs);
    await sleep(lifetime);
    signal.killed = true;
    svc.child.kill('SIGKILL');
    const ex = await svc.exited;
    if (ex.signal !== 'SIGKILL')
      fail(
        `cycle ${cycle}: the service had exited on its own (${ex.code}) before the kill:\n${svc.lines.slice(-20).join('\n')}`,
      );
    kills++;
    runningAtKill.push(startedJobs());
    countRunnerLines(svc.lines);
    svc.agent.destroy();
    await work;
    const reconciledNow = reconciliations.at(-1);
    console.log(
      `cycle ${cycle}/${CYCLES}: running at the kill [${runningAtKill.at(-1)!.join(', ')}]; killed after ${(lifetime / 1000).toFixed(1)} s (boot ${svc.bootMs} ms); drawings ${drawings.length}, jobs seen ${jobIds.size}, terminal ${seenTerminal.size}; last boot reconciliation ${JSON.stringify(reconciledNow ?? {})}`,
    );
    svc = undefined;
  }

  // Final restart: let every job finish.
  svc = await startServe(dataDir);
  reconciliations.push(...loggedObjects(svc.lines, 'Boot reconciliation'));
  const finalStart = Date.now();
  let jobs: {
    id: string;
    status: string;
    type: string;
    error?: { code: string; detail: string };
  }[] = [];
  for (;;) {
    jobs = await listAll(svc, key, '/v1/jobs?limit=100');
    for (const j of jobs) observeJob(j);
    // Comparisons whose revisions only now became Ready.
    const before = compared.size;
    await startComparisons();
    if (compared.size > before) continue;
    const open = jobs.filter((j) => !TERMINAL.has(j.status));
    if (open.length === 0) break;
    if (Date.now() - finalStart > FINAL_WAIT_MS) {
      fail(
        `after ${FINAL_WAIT_MS / 1000} s, ${open.length} jobs are still open: ${open.map((j) => `${j.id} ${j.type} ${j.status}`).join(', ')}`,
      );
      break;
    }
    await sleep(2000);
  }
  const finalWaitS = Math.round((Date.now() - finalStart) / 1000);

  // Every job the service knows was seen, and every one it knows is terminal.
  const db = new Database(join(dataDir, 'blueline.db'), { readonly: true });
  const dbJobs = db
    .prepare('SELECT id, type, status, attempts, crashes, target_id, error FROM jobs')
    .all() as {
    id: string;
    type: string;
    status: string;
    attempts: number;
    crashes: number;
    target_id: string;
    error: string | null;
  }[];
  for (const j of dbJobs) {
    if (!TERMINAL.has(j.status)) fail(`job ${j.id} (${j.type}) ends ${j.status}`);
    observeJob(j);
  }
  // Sheets: one per page, contiguous, matching sheet_count.
  for (const d of db.prepare('SELECT id, status, sheet_count FROM drawings').all() as {
    id: string;
    status: string;
    sheet_count: number;
  }[]) {
    const pages = db
      .prepare('SELECT page_index FROM sheets WHERE drawing_id = ? ORDER BY page_index')
      .pluck()
      .all(d.id) as number[];
    if (new Set(pages).size !== pages.length) fail(`drawing ${d.id}: duplicate pages ${pages}`);
    if (d.status === 'Ready') {
      if (pages.length !== d.sheet_count)
        fail(`drawing ${d.id}: ${pages.length} sheets but sheet_count ${d.sheet_count}`);
      if (!pages.every((p, i) => p === i)) fail(`drawing ${d.id}: pages ${pages} are not 0..n-1`);
    }
    if (d.status === 'Processing') fail(`drawing ${d.id} still Processing`);
  }
  const overlayDupes = db
    .prepare(
      'SELECT job_id, block_a_id, block_b_id, count(*) n FROM overlays GROUP BY 1, 2, 3 HAVING n > 1',
    )
    .all();
  if (overlayDupes.length) fail(`duplicate overlays: ${JSON.stringify(overlayDupes)}`);
  const integrity = db.pragma('integrity_check', { simple: true });
  if (integrity !== 'ok') fail(`integrity_check: ${integrity}`);
  const counts = db
    .prepare(
      'SELECT (SELECT count(*) FROM drawings) d, (SELECT count(*) FROM sheets) s, (SELECT count(*) FROM blocks) b, (SELECT count(*) FROM overlays) o',
    )
    .get() as Record<string, number>;
  db.close();

  // Every image the API names downloads whole and decodes at its recorded size.
  const project2 = process.env.CRASH_PROJECT!;
  for (const d of drawings) {
    for (const sh of await listAll<any>(svc, key, `/v1/sheets?drawing_id=${d.id}&limit=100`)) {
      await checkImage(sh.uri, { width: sh.width, height: sh.height }, `sheet ${sh.id}`);
      await checkImage(sh.thumbnail_uri, undefined, `thumbnail ${sh.id}`);
    }
    for (const b of await listAll<any>(svc, key, `/v1/blocks?drawing_id=${d.id}&limit=100`))
      await checkImage(b.uri, undefined, `block ${b.id}`);
  }
  if (compareAvailable) {
    for (const o of await listAll<any>(
      svc,
      key,
      `/v1/overlays?project_id=${project2}&limit=100`,
    ).catch(() => [])) {
      for (const f of ['uri', 'addition_uri', 'deletion_uri', 'aligned_b_uri'])
        if (o[f])
          await checkImage(
            o[f],
            f === 'uri' ? { width: o.width, height: o.height } : undefined,
            `overlay ${o.id} ${f}`,
          );
    }
  }

  // Stop cleanly, then reconcile once more: a correct store has nothing left to remove.
  svc.child.kill('SIGTERM');
  const stopped = await svc.exited;
  countRunnerLines(svc.lines);
  if (stopped.code !== 0) fail(`SIGTERM exit code ${stopped.code ?? stopped.signal}`);
  svc.agent.destroy();
  const dbAfter = new SqliteDb(new Database(join(dataDir, 'blueline.db')));
  const after = await reconcile({ db: dbAfter, objects: new LocalObjectStore({ dataDir }) });
  await dbAfter.close();
  if (
    after.orphanObjects ||
    after.orphanSearchRows ||
    after.sweep.tempFiles ||
    after.sweep.orphanVersions
  )
    fail(`orphans remained after the last boot: ${JSON.stringify(after)}`);
  if (after.missingObjects.length)
    fail(`rows name missing objects: ${after.missingObjects.slice(0, 5).join(', ')}`);

  const sum = (k: string) => reconciliations.reduce((a, r) => a + (Number(r[k]) || 0), 0);
  const byStatus: Record<string, number> = {};
  for (const j of dbJobs) {
    byStatus[`${j.type}:${j.status}`] = (byStatus[`${j.type}:${j.status}`] ?? 0) + 1;
    // A restart is never a job's fault (issue 16 part 6): every job ends Completed.
    if (j.status !== 'Completed') fail(`job ${j.id} (${j.type}) ended ${j.status}: ${j.error}`);
  }
  const fileOf = new Map(drawings.map((d) => [d.id, d.file.replace(/\.pdf$/, '')]));
  const processJobs = dbJobs
    .filter((j) => j.type === 'process')
    .map((j) => `${fileOf.get(j.target_id) ?? j.target_id}: ${j.attempts} attempts`);
  const range = (xs: number[]) =>
    xs.length ? [Math.min(...xs), Math.max(...xs)].map((x) => Math.round(x / 100) / 10) : [];
  const summary = {
    cycles_survived: kills,
    kills_while_a_job_ran: runningAtKill.filter((r) => r.length > 0).length,
    kill_after_s: range(lifetimesMs),
    kill_after_mean_s:
      Math.round(lifetimesMs.reduce((a, b) => a + b, 0) / lifetimesMs.length / 100) / 10,
    boot_s: range(bootsMs),
    requests_sent: requestsSent,
    requests_cut_by_kills: requestsInterrupted,
    jobs: dbJobs.length,
    jobs_by_status: byStatus,
    process_jobs: processJobs,
    max_attempts: Math.max(0, ...dbJobs.map((j) => j.attempts)),
    max_crashes_blamed: Math.max(0, ...dbJobs.map((j) => j.crashes)),
    runner_log: runnerLog,
    drawings: counts.d,
    sheets: counts.s,
    blocks: counts.b,
    overlays: counts.o,
    images_decoded: imagesChecked,
    boots: reconciliations.length,
    reconciled: {
      temp_files: sum('temp_files'),
      orphan_versions: sum('orphan_versions'),
      orphan_objects: sum('orphan_objects'),
      orphan_search_rows: sum('orphan_search_rows'),
      repaired_drawings: sum('repaired_drawings'),
      missing_objects: sum('missing_objects'),
    },
    final_wait_s: finalWaitS,
    integrity_check: integrity,
    failures: failures.length,
  };
  console.log(`crash-cycles summary ${JSON.stringify(summary)}`);
  if (process.env.KEEP_DATA) console.log(`data kept in ${dataDir}`);
  else rmSync(dataDir, { recursive: true, force: true });
  if (failures.length) {
    console.error(`crash-cycles: ${failures.length} failure(s)`);
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(err);
  try {
    svc?.child.kill('SIGKILL');
  } catch {
    // gone
  }
  process.exit(1);
});
