// Raster-step bench: our PDF adapter (PDFium WASM raster, core/vision/input/pdfium.adapter.ts) vs
// `mutool draw` and `pdftoppm`, same pages, same dpi, grey output, run back to back in one session (the
// machine is shared, so only ratios from one run are meaningful). Also the whole per-page pipeline
// (ingestPage: raster + text layer + title block + blocks + PNG/WebP encode), single-threaded, with the
// text layer from PDFium (production since issue #3) and, for before/after in the same run, from pdf.js
// as before (core/vision/input/pdfjs-text.ts); and the text layer alone from each.
//
//   node --import tsx bench/ingest/bench-ingest.ts            # default: both sets, 3 rounds, thin-line probe
//   node --import tsx bench/ingest/bench-ingest.ts --rounds 5 --dpi 200
//   node --import tsx bench/ingest/bench-ingest.ts --only thin
//
// Each measured run is a separate process, so peak RSS is that run's own (maxRSS for ours, /usr/bin/time
// %M for the CLIs). External tools write PGM to /dev/shm (RAM) so disk speed is not measured; ours keeps
// the grey page in memory and drops it, as the pipeline would after handing it on.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import {
  ingestPageInPool,
  releasePageBuffers,
  renderInBands,
  WORKER_WARMUP,
} from '../../core/jobs/ingest-in-pool';
import { withMallocTuning } from '../../core/jobs/malloc-tuning';
import { createWorkerPool } from '../../core/jobs/worker-pool';
import type { IngestSource } from '../../core/jobs/worker-tasks';
import { ingestPage } from '../../core/vision/ingest/ingest-page';
import { openInput, type InputDocument } from '../../core/vision/input/document';
import {
  DEFAULT_DPI,
  openDocument,
  pixelSize,
  type RenderTimings,
} from '../../core/vision/input/pdf.adapter';
import { openPdfjsText, pdfjsPageText } from '../../core/vision/input/pdfjs-text';
import { buildPdf } from '../../core/vision/input/synthetic-inputs';
import { rgbToGrey } from '../../core/vision/input/grey-resample';

const here = path.dirname(fileURLToPath(import.meta.url));
const FIXTURES = path.resolve(here, '../../fixtures/drawings');
const SETS = [
  {
    name: 'barber house 20130718 (9 sheets, 17x11 in)',
    file: '20130718_barber-house_set_9-sheets.pdf',
    // A scanned sheet of another set, for the workers of the "warm on a scan too" row.
    otherScan: '20190602_beam-proposal_5-sheets.pdf',
  },
  {
    name: 'beam proposal 20190601 (5 sheets, 34x22 in)',
    file: '20190601_beam-proposal_5-sheets.pdf',
    otherScan: '20130724_barber-house_set_9-sheets.pdf',
  },
];

const args = process.argv.slice(2);
const arg = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};

interface RunResult {
  wallMs: number;
  /**
   * CPU time of the run (user + system, every thread of the process: pool workers and libvips too),
   * ms: steadier than the wall time on a loaded machine.
   */
  cpuMs?: number;
  rssMb: number;
  pages: number;
  phases?: {
    pageMs: number;
    renderMs: number;
    readbackMs: number;
    greyMs: number;
    imagesMs: number;
  };
  darkFraction?: number;
  /** Text runs read (text-only modes). */
  runs?: number;
  /** Service modes: when the first page was done, and ingest.open's share of the wall. */
  firstSheetMs?: number;
  openMs?: number;
}

type Phase = 'pageMs' | 'renderMs' | 'readbackMs' | 'greyMs' | 'imagesMs';
const PHASES: Phase[] = ['pageMs', 'renderMs', 'readbackMs', 'greyMs', 'imagesMs'];

// ---------------------------------------------------------------------------------------------------
// Child modes: one measured run per process.

async function childOurs(file: string, dpi: number, workers: number): Promise<RunResult> {
  const bytes = new Uint8Array(readFileSync(file));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (workers > 1) {
    // One worker per core, each with its own PDFium instance and document, taking every n-th page.
    const probe = await openDocument(bytes);
    const n = probe.pageCount;
    await probe.close();
    const parts = await Promise.all(
      Array.from({ length: workers }, (_, w) => {
        // Loader hooks from `--import tsx` do not reach worker threads: register tsx inside the worker.
        const boot = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); })`;
        const worker = new Worker(boot, {
          eval: true,
          workerData: { file, dpi, pages: range(n).filter((p) => p % workers === w) },
        });
        return new Promise<{ dark: number; px: number }>((resolve, reject) => {
          worker.once('message', resolve);
          worker.once('error', reject);
        });
      }),
    );
    const wallMs = performance.now() - t0;
    const dark = parts.reduce((a, p) => a + p.dark, 0);
    const px = parts.reduce((a, p) => a + p.px, 0);
    return {
      wallMs,
      rssMb: process.resourceUsage().maxRSS / 1024,
      pages: n,
      darkFraction: dark / px,
    };
  }
  const doc = await openDocument(bytes);
  const phases = { pageMs: 0, renderMs: 0, readbackMs: 0, greyMs: 0, imagesMs: 0 };
  let dark = 0;
  let px = 0;
  let countMs = 0;
  for (let i = 0; i < doc.pageCount; i++) {
    const t: RenderTimings = { pageMs: 0, renderMs: 0, readbackMs: 0, greyMs: 0 };
    const r = await doc.renderPage(i, { dpi, timings: t, colour: true });
    for (const k of PHASES) phases[k] += t[k] ?? 0;
    const tc = performance.now();
    dark += countDark(r.data);
    px += r.data.length;
    countMs += performance.now() - tc;
  }
  const pages = doc.pageCount;
  await doc.close();
  const cpu = process.cpuUsage(cpu0);
  return {
    // The ink count is for the table, not part of the raster step: keep it out of the wall time.
    wallMs: performance.now() - t0 - countMs,
    // (its CPU is in this figure: a few ms a sheet, one pass over the grey)
    cpuMs: (cpu.user + cpu.system) / 1000,
    rssMb: process.resourceUsage().maxRSS / 1024,
    pages,
    phases,
    darkFraction: dark / px,
  };
}

/**
 * The whole per-page ingest (what a pool worker runs for each page), one page after another. `text`
 * 'pdfjs' swaps in the text layer as it was before issue #3: render with PDFium, then a second parse
 * of the document by pdf.js (opened on the first page) for getTextContent.
 */
async function childPipeline(
  file: string,
  dpi: number,
  text: 'pdfium' | 'pdfjs',
): Promise<RunResult> {
  const bytes = new Uint8Array(readFileSync(file));
  const t0 = performance.now();
  const doc = await openInput(bytes, 'application/pdf');
  let input: InputDocument = doc;
  let js: Promise<PDFDocumentProxy> | undefined;
  if (text === 'pdfjs') {
    input = {
      ...doc,
      async readPage(i, o) {
        const raster = await doc.renderPage(i, o);
        js ??= openPdfjsText(bytes);
        return { raster, text: await pdfjsPageText(await js, i, raster.dpi, raster) };
      },
    };
  }
  for (let i = 0; i < doc.pageCount; i++) {
    await ingestPage(input, i, { dpi, maxPixels: 300_000_000, ocr: false });
  }
  const pages = doc.pageCount;
  await doc.close();
  if (js) await (await js).destroy();
  return {
    wallMs: performance.now() - t0,
    rssMb: process.resourceUsage().maxRSS / 1024,
    pages,
  };
}

/**
 * What the service runs, in a pool of `workers` warm workers (core/jobs/worker-pool.ts, the real
 * tasks): as many pages at once as there are workers (the process job's lanes), each page whole on
 * one worker while the set has a page left for every worker, its last pages in bands across the
 * workers (core/jobs/ingest-in-pool.ts). 'raster' times the band renders alone (the
 * raster step; the ink count of each assembled page is kept out of the wall time), 'pipeline' the
 * whole ingestPageInPool (raster, text, metadata, blocks, PNGs). Before the clock starts each worker
 * has warmed up as the service's workers do when they start (unless `startupWarmup` is false), then
 * ingested a vector page of another file, as in a service that has ingested before.
 */
async function childService(
  file: string,
  dpi: number,
  workers: number,
  what: 'raster' | 'pipeline',
  warmScan?: string,
  startupWarmup = true,
  colour = true,
): Promise<RunResult> {
  // As the service makes its pool (core/service.ts): each worker warms up on the generated scanned
  // sheet when it starts (core/vision/ingest/warmup.ts), unless `startupWarmup` is false.
  const pool = createWorkerPool({
    size: workers,
    ...(startupWarmup ? { warmup: WORKER_WARMUP } : {}),
  });
  await pool.start();
  const src = (f: string): IngestSource => ({
    path: f,
    bytesKey: f,
    contentType: 'application/pdf',
    maxPages: 2000,
    maxPixels: 300_000_000,
  });
  try {
    for (const name of ['20150129_A-101_first-floor.pdf', ...(warmScan ? [warmScan] : [])]) {
      const warm = src(path.join(FIXTURES, name));
      const wi = await pool.run('ingest.open', { ...warm, dpi });
      await Promise.all(
        range(workers).map(() =>
          ingestPageInPool(pool, warm, { index: 0, dpi, size: wi.pages[0] }, 'vector'),
        ),
      );
    }
    const source = src(file);
    let dark = 0;
    let px = 0;
    let countMs = 0;
    let firstSheetMs: number | undefined;
    let countCpuMs = 0;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const info = await pool.run('ingest.open', { ...source, dpi });
    const openMs = performance.now() - t0;
    const pageSource = { ...source, streamsChecked: true };
    let next = 0;
    const lane = async () => {
      while (next < info.pageCount) {
        const index = next++;
        const size = info.pages[index]!;
        if (what === 'pipeline') {
          await ingestPageInPool(
            pool,
            pageSource,
            { index, dpi, size, pagesLeft: info.pageCount - index, colour },
            info.textSource,
          );
        } else {
          const { pixels, rgbBuffer } = await renderInBands(pool, pageSource, {
            index,
            dpi,
            size,
            pagesLeft: info.pageCount - index,
            colour,
          });
          const tc = performance.now();
          const cc = process.cpuUsage();
          const data = new Uint8Array(pixels);
          dark += countDark(data);
          px += data.length;
          // Done with the page, as the process job is once ingest.finish has encoded it.
          releasePageBuffers(pixels, rgbBuffer);
          countMs += performance.now() - tc;
          const c = process.cpuUsage(cc);
          countCpuMs += (c.user + c.system) / 1000;
        }
        firstSheetMs ??= performance.now() - t0;
      }
    };
    await Promise.all(range(Math.min(workers, info.pageCount)).map(lane));
    const wallMs = performance.now() - t0 - countMs;
    const cpu = process.cpuUsage(cpu0);
    return {
      wallMs,
      cpuMs: (cpu.user + cpu.system) / 1000 - countCpuMs,
      rssMb: process.resourceUsage().maxRSS / 1024,
      pages: info.pageCount,
      ...(what === 'raster' ? { darkFraction: dark / px } : {}),
      firstSheetMs,
      openMs,
    };
  } finally {
    await pool.close();
  }
}

/** The text layer alone, every page: PDFium (page load + FPDFText + runs) or pdf.js (open + getTextContent). */
async function childText(file: string, dpi: number, text: 'pdfium' | 'pdfjs'): Promise<RunResult> {
  const bytes = new Uint8Array(readFileSync(file));
  const t0 = performance.now();
  const doc = await openDocument(bytes);
  const pages = doc.pageCount;
  let runs = 0;
  if (text === 'pdfium') {
    for (let i = 0; i < pages; i++) runs += (await doc.pageText(i, dpi)).length;
  } else {
    const js = await openPdfjsText(bytes);
    for (let i = 0; i < pages; i++) {
      const info = await doc.pageInfo(i);
      const size = pixelSize(info.widthPt, info.heightPt, dpi);
      runs += (await pdfjsPageText(js, i, dpi, size)).length;
    }
    await js.destroy();
  }
  await doc.close();
  return {
    wallMs: performance.now() - t0,
    rssMb: process.resourceUsage().maxRSS / 1024,
    pages,
    runs,
  };
}

async function workerMain(): Promise<void> {
  const { file, dpi, pages } = workerData as { file: string; dpi: number; pages: number[] };
  const doc = await openDocument(new Uint8Array(readFileSync(file)));
  let dark = 0;
  let px = 0;
  for (const i of pages) {
    const r = await doc.renderPage(i, { dpi, colour: true });
    dark += countDark(r.data);
    px += r.data.length;
  }
  await doc.close();
  parentPort!.postMessage({ dark, px });
}

function countDark(d: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < d.length; i++) if (d[i]! < 128) n++;
  return n;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

// ---------------------------------------------------------------------------------------------------
// Parent: run each tool as a child process, interleaved, median of rounds.

function runOursChild(
  file: string,
  dpi: number,
  workers: number,
  mode = 'ours',
  extra: string[] = [],
): RunResult {
  const out = execFileSync(
    process.execPath,
    [
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      '--child',
      mode,
      '--file',
      file,
      '--dpi',
      String(dpi),
      '--workers',
      String(workers),
      ...extra,
    ],
    {
      encoding: 'utf8',
      timeout: 600_000,
      maxBuffer: 1 << 20,
      // The service's rows run as `blueline serve` runs: with its malloc settings (since
      // 2026-11-27, core/jobs/malloc-tuning.ts); the others as a plain process.
      ...(mode.startsWith('service') ? { env: withMallocTuning(process.env) } : {}),
    },
  );
  return JSON.parse(out.trim().split('\n').pop()!) as RunResult;
}

function runCli(cmd: string, argv: string[], outDir: string, pages: number): RunResult {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', cmd, ...argv], {
    encoding: 'utf8',
    timeout: 600_000,
  });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  const [rssKb, user, sys] = r.stderr.trim().split('\n').pop()!.split(' ').map(Number) as [
    number,
    number,
    number,
  ];
  // Check the output is really there (grey PGM, one per page) and count its ink like ours.
  const files = execFileSync('ls', [outDir], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .filter(Boolean);
  if (files.length !== pages)
    throw new Error(`${cmd} wrote ${files.length} files, expected ${pages}`);
  let dark = 0;
  let px = 0;
  for (const f of files) {
    const { data } = readPgm(path.join(outDir, f));
    dark += countDark(data);
    px += data.length;
  }
  rmSync(outDir, { recursive: true, force: true });
  return {
    wallMs,
    cpuMs: (user + sys) * 1000,
    rssMb: rssKb / 1024,
    pages,
    darkFraction: dark / px,
  };
}

/** Binary PGM (P5) or PPM (P6), 8-bit, as grey. */
function readPgm(file: string): { width: number; height: number; data: Uint8Array } {
  const buf = readFileSync(file);
  const tokens: string[] = [];
  let i = 0;
  while (tokens.length < 4) {
    while (/\s/.test(String.fromCharCode(buf[i]!))) i++;
    if (buf[i] === 0x23) {
      while (buf[i] !== 0x0a) i++;
      continue;
    }
    let t = '';
    while (!/\s/.test(String.fromCharCode(buf[i]!))) t += String.fromCharCode(buf[i++]!);
    tokens.push(t);
  }
  i++;
  if (tokens[0] !== 'P5' && tokens[0] !== 'P6')
    throw new Error(`${file}: not a binary PGM or PPM (${tokens[0]})`);
  const width = Number(tokens[1]);
  const height = Number(tokens[2]);
  if (tokens[0] === 'P5')
    return { width, height, data: new Uint8Array(buf.buffer, buf.byteOffset + i, width * height) };
  // A colour PPM (mutool -c rgb): its grey with PDFium's weights, so ink is counted alike.
  const rgb = new Uint8Array(buf.buffer, buf.byteOffset + i, width * height * 3);
  return { width, height, data: rgbToGrey(rgb, width * height) };
}

const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const have = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const quick = args.includes('--quick');

function benchSets(dpi: number, rounds: number): void {
  const shm = existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  const outDir = mkdtempSync(path.join(shm, 'bench-ingest-'));
  const tools = have('mutool') && have('pdftoppm');
  if (!tools) console.log('mutool/pdftoppm missing: apt-get install -y mupdf-tools poppler-utils');
  console.log(
    `\n## Raster step at ${dpi} dpi, grey, median of ${rounds} interleaved rounds (${os.cpus().length} cores)\n`,
  );
  console.log(`uptime at start: ${uptime()}\n`);
  console.log(
    '| set | tool | wall s (min-max) | ms/sheet | sheets/min | peak RSS MB | ink % | vs mutool | vs pdftoppm | CPU s | CPU vs mutool |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const set of SETS) {
    const file = path.join(FIXTURES, set.file);
    const runs: Record<string, RunResult[]> = {
      ours: [],
      'ours 2 workers': [],
      'ours, service: 2 warm pool workers (last pages in bands)': [],
      'ours, service, grey only (colour off: as before colour)': [],
      'ours, service, workers without the start-up warm-up (before)': [],
      'ours, service, workers warm on a scan of another set too': [],
      'ours whole pipeline (ingestPage, PDFium text)': [],
      'ours whole pipeline, pdf.js text (before)': [],
      'whole pipeline, service: 2 warm pool workers': [],
      'whole pipeline, service, grey only (colour off)': [],
      'text layer only, PDFium': [],
      'text layer only, pdf.js (before)': [],
      mutool: [],
      'mutool -c rgb (colour)': [],
      'mutool -P': [],
      'mutool -B 1024 -T 2 (2 threads)': [],
      pdftoppm: [],
    };
    for (let r = 0; r < rounds; r++) {
      if (quick) {
        // --quick: only the rows the ingest goal is checked on (service raster in colour and grey,
        // the service's whole pipeline, mutool grey and colour), for interleaved before/after runs.
        runs['ours, service: 2 warm pool workers (last pages in bands)']!.push(
          runOursChild(file, dpi, 2, 'service-raster'),
        );
        runs['ours, service, grey only (colour off: as before colour)']!.push(
          runOursChild(file, dpi, 2, 'service-raster', ['--grey', '1']),
        );
        runs['whole pipeline, service: 2 warm pool workers']!.push(
          runOursChild(file, dpi, 2, 'service-pipeline'),
        );
        runs.ours!.push(runOursChild(file, dpi, 1));
      } else {
        runs.ours!.push(runOursChild(file, dpi, 1));
        runs['ours 2 workers']!.push(runOursChild(file, dpi, 2));
        runs['ours, service: 2 warm pool workers (last pages in bands)']!.push(
          runOursChild(file, dpi, 2, 'service-raster'),
        );
        runs['ours, service, grey only (colour off: as before colour)']!.push(
          runOursChild(file, dpi, 2, 'service-raster', ['--grey', '1']),
        );
        runs['ours, service, workers without the start-up warm-up (before)']!.push(
          runOursChild(file, dpi, 2, 'service-raster', ['--no-startup-warmup', '1']),
        );
        runs['ours, service, workers warm on a scan of another set too']!.push(
          runOursChild(file, dpi, 2, 'service-raster', ['--warm-scan', set.otherScan]),
        );
        runs['ours whole pipeline (ingestPage, PDFium text)']!.push(
          runOursChild(file, dpi, 1, 'pipeline'),
        );
        runs['ours whole pipeline, pdf.js text (before)']!.push(
          runOursChild(file, dpi, 1, 'pipeline-pdfjs'),
        );
        runs['whole pipeline, service: 2 warm pool workers']!.push(
          runOursChild(file, dpi, 2, 'service-pipeline'),
        );
        runs['whole pipeline, service, grey only (colour off)']!.push(
          runOursChild(file, dpi, 2, 'service-pipeline', ['--grey', '1']),
        );
        runs['text layer only, PDFium']!.push(runOursChild(file, dpi, 1, 'text'));
        runs['text layer only, pdf.js (before)']!.push(runOursChild(file, dpi, 1, 'text-pdfjs'));
      }
      const pages = runs.ours![0]!.pages;
      if (tools) {
        // mutool draw, grey PGM at dpi, with `extra` options before the output.
        const mutool = (...extra: string[]) => {
          const rgb = extra.includes('rgb');
          return runCli(
            'mutool',
            ['draw', '-q', ...extra.filter((e) => e !== 'rgb'), '-r', String(dpi)]
              .concat('-c', rgb ? 'rgb' : 'gray')
              .concat('-o', path.join(outDir, rgb ? 'p%03d.ppm' : 'p%03d.pgm'), file),
            path.join(outDir),
            pages,
          );
        };
        runs.mutool!.push(mutool());
        runs['mutool -c rgb (colour)']!.push(mutool('rgb'));
        if (quick) continue;
        runs['mutool -P']!.push(mutool('-P'));
        runs['mutool -B 1024 -T 2 (2 threads)']!.push(mutool('-B', '1024', '-T', '2'));
        runs.pdftoppm!.push(
          runCli(
            'pdftoppm',
            ['-r', String(dpi), '-gray', file, path.join(outDir, 'p')],
            path.join(outDir),
            pages,
          ),
        );
      }
    }
    const mu = runs.mutool!.length ? median(runs.mutool!.map((x) => x.wallMs)) : NaN;
    const pp = runs.pdftoppm!.length ? median(runs.pdftoppm!.map((x) => x.wallMs)) : NaN;
    const cpuOf = (rs: RunResult[]) => median(rs.map((x) => x.cpuMs ?? NaN));
    const muCpu = runs.mutool!.length ? cpuOf(runs.mutool!) : NaN;
    for (const [tool, rs] of Object.entries(runs)) {
      if (!rs.length) continue;
      const walls = rs.map((x) => x.wallMs);
      const wall = median(walls);
      const pages = rs[0]!.pages;
      console.log(
        `| ${set.name} | ${tool} | ${(wall / 1000).toFixed(2)} (${(Math.min(...walls) / 1000).toFixed(2)}-${(Math.max(...walls) / 1000).toFixed(2)}) | ` +
          `${(wall / pages).toFixed(0)} | ${((pages * 60000) / wall).toFixed(1)} | ${median(rs.map((x) => x.rssMb)).toFixed(0)} | ` +
          `${rs[0]!.runs !== undefined ? `${rs[0]!.runs} runs` : (100 * (rs[0]!.darkFraction ?? NaN)).toFixed(2)} | ${(wall / mu).toFixed(2)}x | ${(wall / pp).toFixed(2)}x | ` +
          `${Number.isFinite(cpuOf(rs)) ? `${(cpuOf(rs) / 1000).toFixed(2)} | ${(cpuOf(rs) / muCpu).toFixed(2)}x` : '– | –'} |`,
      );
    }
    const ph = runs.ours!.map((x) => x.phases!);
    const pages = runs.ours![0]!.pages;
    const m = (k: Phase) => (median(ph.map((p) => p[k])) / pages).toFixed(0);
    console.log(
      `|  | ours per sheet: load page (content parse) ${m('pageMs')} ms, render (images, paths, text, annotations; in colour where the page has it) ${m('renderMs')} ms, of which decoding images for PDFium (8-bit Flate + PNG predictors) ${m('imagesMs')} ms, copy out of WASM heap ${m('readbackMs')} ms | | | | | | | | | |`,
    );
    const of = (k: string, f: 'firstSheetMs' | 'openMs') =>
      median(runs[k]!.map((x) => x[f] ?? NaN)).toFixed(0);
    const svcRaster = 'ours, service: 2 warm pool workers (last pages in bands)';
    const svcAll = 'whole pipeline, service: 2 warm pool workers';
    console.log(
      `|  | service: ingest.open (file checks incl. the stream scan, page sizes) ${of(svcRaster, 'openMs')} ms of the wall; first sheet done after: raster ${of(svcRaster, 'firstSheetMs')} ms, whole pipeline ${of(svcAll, 'firstSheetMs')} ms | | | | | | | | | |`,
    );
  }
  rmSync(outDir, { recursive: true, force: true });
  console.log(`\nuptime at end: ${uptime()}`);
}

// ---------------------------------------------------------------------------------------------------
// Thin-line quality: hairlines of known width at sub-pixel offsets, rendered at 150 / 200 / 300 dpi.
// For each width, the worst (lightest) line core over 40 offsets: if it is >= 128 the line vanishes under a
// mid-grey threshold at some positions. And on a real sheet: the share of ink that survives thresholding.

async function thinLines(): Promise<void> {
  const widthsIn = [0.003, 0.005, 0.007, 0.01, 0.014];
  // One row of 40 vertical lines per width; line k sits at x = 0.5 in + k * 0.2037 in (non-commensurate
  // with every dpi, so the offsets sweep the pixel grid). 1 in = 72 pt.
  let content = '0 G ';
  widthsIn.forEach((w, row) => {
    const y0 = 72 * (1 + row * 1.5);
    content += `${(w * 72).toFixed(4)} w `;
    for (let k = 0; k < 40; k++) {
      const x = 72 * (0.5 + k * 0.2037);
      content += `${x.toFixed(3)} ${y0} m ${x.toFixed(3)} ${y0 + 72} l S `;
    }
  });
  const pdf = buildPdf({ widthPt: 72 * 9, heightPt: 72 * 9, content });
  console.log(
    '\n## Thin-line quality: worst-case line core (lightest of 40 sub-pixel positions; 0 = black, 255 = white)\n',
  );
  console.log(`| line width | ${[150, 200, 300].map((d) => `${d} dpi`).join(' | ')} |`);
  console.log('| --- | --- | --- | --- |');
  const doc = await openDocument(pdf);
  const rasters = new Map<number, Awaited<ReturnType<typeof doc.renderPage>>>();
  for (const dpi of [150, 200, 300]) rasters.set(dpi, await doc.renderPage(0, { dpi }));
  widthsIn.forEach((w, row) => {
    const cells = [150, 200, 300].map((dpi) => {
      const r = rasters.get(dpi)!;
      // Sample a scan line through the middle of this row's lines (y in sheet pixels, origin top-left).
      const yPt = 72 * 9 - 72 * (1 + row * 1.5) - 36;
      const y = Math.round((yPt * dpi) / 72);
      let worst = 0;
      for (let k = 0; k < 40; k++) {
        const cx = (0.5 + k * 0.2037) * dpi;
        let core = 255;
        for (let x = Math.floor(cx) - 2; x <= Math.ceil(cx) + 2; x++)
          core = Math.min(core, r.data[y * r.width + x]!);
        worst = Math.max(worst, core);
      }
      const px = w * dpi;
      return `${worst}${worst >= 128 ? ' (lost at 128)' : ''} [${px.toFixed(2)} px]`;
    });
    console.log(`| ${w} in (${(w * 25.4).toFixed(2)} mm) | ${cells.join(' | ')} |`);
  });
  await doc.close();

  // Real sheet: beam proposal S101 (fine CAD linework, ~3 % ink). Ink coverage = sum(255 - v) / 255 / pixels:
  // an ideal renderer gives the same coverage at every dpi; PDFium widens sub-pixel strokes to 1 device
  // pixel, so coverage grows as dpi falls (lines get relatively fatter and hatches clog). Dark = v < 128.
  const real = await openDocument(new Uint8Array(readFileSync(path.join(FIXTURES, SETS[1]!.file))));
  console.log('\n## Real sheet (beam proposal S101): ink coverage and cost by dpi\n');
  console.log(
    '| dpi | size px | MP | grey MB | render ms | ink coverage % | dark px % | dark / coverage |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const dpi of [150, 200, 300]) {
    const t0 = performance.now();
    const r = await real.renderPage(0, { dpi });
    const ms = performance.now() - t0;
    let mass = 0;
    let dark = 0;
    for (let i = 0; i < r.data.length; i++) {
      mass += 255 - r.data[i]!;
      if (r.data[i]! < 128) dark++;
    }
    const n = r.width * r.height;
    const cov = (100 * mass) / 255 / n;
    const dk = (100 * dark) / n;
    console.log(
      `| ${dpi} | ${r.width}x${r.height} | ${(n / 1e6).toFixed(1)} | ${(n / 2 ** 20).toFixed(0)} | ${ms.toFixed(0)} | ` +
        `${cov.toFixed(2)} | ${dk.toFixed(2)} | ${(dk / cov).toFixed(2)} |`,
    );
  }
  await real.close();
  const e = 36 * 24;
  console.log(
    `\n36x24 in sheet: 150 dpi ${((e * 150 * 150) / 1e6).toFixed(1)} MP, 200 dpi ${((e * 200 * 200) / 1e6).toFixed(1)} MP, 300 dpi ${((e * 300 * 300) / 1e6).toFixed(1)} MP`,
  );
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  if (!isMainThread) return workerMain();
  const child = arg('child', '');
  if (child.startsWith('pipeline') || child.startsWith('text')) {
    const text = child.endsWith('-pdfjs') ? 'pdfjs' : 'pdfium';
    const file = arg('file', '');
    const dpi = Number(arg('dpi', String(DEFAULT_DPI)));
    const r = child.startsWith('pipeline')
      ? await childPipeline(file, dpi, text)
      : await childText(file, dpi, text);
    console.log(JSON.stringify(r));
    return;
  }
  if (child === 'service-raster' || child === 'service-pipeline') {
    const r = await childService(
      arg('file', ''),
      Number(arg('dpi', String(DEFAULT_DPI))),
      Number(arg('workers', '2')),
      child === 'service-raster' ? 'raster' : 'pipeline',
      arg('warm-scan', '') || undefined,
      arg('no-startup-warmup', '') === '',
      arg('grey', '') === '',
    );
    console.log(JSON.stringify(r));
    return;
  }
  if (arg('child', '') === 'ours') {
    const r = await childOurs(
      arg('file', ''),
      Number(arg('dpi', String(DEFAULT_DPI))),
      Number(arg('workers', '1')),
    );
    console.log(JSON.stringify(r));
    return;
  }
  const dpi = Number(arg('dpi', String(DEFAULT_DPI)));
  const rounds = Number(arg('rounds', '3'));
  const only = arg('only', '');
  if (only !== 'thin') benchSets(dpi, rounds);
  if (only !== 'sets') await thinLines();
}

await main();
