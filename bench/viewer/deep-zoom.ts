// bench/viewer's deep-zoom pass (issue 19): the beam proposal pair (fixtures/drawings, 20190601 →
// 20190602, vector PDFs) compared, the whole-sheet overlay of S101 opened on its new column, then
// zoom steps from the change view to 1,600 % (16x the 200-DPI image: deep levels rendered from
// the PDFs on first request), pans at 1,600 %, and the same at two more places. Measured:
//  - zoom step → sharp tile on screen: for each tile of the new level, the time from the step's
//    input to the first drawImage of that tile (p50 / p95; goal p95 < 250 ms, 512-px tiles);
//  - frame times (rAF intervals, frame pacing off) over the whole session while tiles land
//    (median < 16 ms, none > 50 ms);
//  - disk used by the service's tile cache after the session.
// With --screenshots <dir>: PNGs of the new column at 100 %, 800 % and 1,600 % in Overlay and New
// modes.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import sharp from 'sharp';
import type { Browser, Page } from 'playwright-core';
import {
  FRAME_PROBE,
  TILE_TIMING,
  tileParts,
  type FrameProbe,
  type TileParts,
  type TileTiming,
} from './deep-client';

export type Api = (
  origin: string,
  key: string | null,
  method: string,
  p: string,
  body?: unknown,
  raw?: { bytes: Buffer; type: string },
) => Promise<{ status: number; json: any }>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitJob(api: Api, origin: string, key: string, id: string, what: string) {
  const t0 = Date.now();
  for (;;) {
    const j = await api(origin, key, 'GET', `/v1/jobs/${id}`);
    if (j.json.status === 'Completed') return j.json;
    if (['Failed', 'Canceled'].includes(j.json.status))
      throw new Error(`${what} ${j.json.status}: ${JSON.stringify(j.json)}`);
    if (Date.now() - t0 > 15 * 60_000) throw new Error(`${what} took over 15 min`);
    await sleep(1000);
  }
}

async function uploadPdf(api: Api, origin: string, key: string, projectId: string, file: string) {
  const bytes = readFileSync(file);
  const f = await api(origin, key, 'POST', '/v1/files', {
    project_id: projectId,
    filename: path.basename(file),
    content_type: 'application/pdf',
    size_bytes: bytes.length,
  });
  if (f.status !== 201) throw new Error(`file: ${f.status} ${JSON.stringify(f.json)}`);
  const put = await api(origin, null, 'PUT', f.json.upload_url, undefined, {
    bytes,
    type: 'application/pdf',
  });
  if (put.status !== 200) throw new Error(`upload: ${put.status}`);
  const d = await api(origin, key, 'POST', '/v1/drawings', {
    project_id: projectId,
    name: path.basename(file, '.pdf'),
    file_id: f.json.id,
  });
  if (d.status !== 201) throw new Error(`drawing: ${d.status} ${JSON.stringify(d.json)}`);
  await waitJob(api, origin, key, d.json.job_id, 'processing');
  return d.json.id as string;
}

export interface BeamPair {
  projectId: string;
  overlay: any;
  change: any;
  seconds: number;
}

/** Both beam proposal issues processed and compared; S101's whole-sheet overlay and its largest change. */
export async function prepareBeamPair(
  api: Api,
  origin: string,
  key: string,
  repoRoot: string,
): Promise<BeamPair> {
  const t0 = Date.now();
  const dir = path.join(repoRoot, 'fixtures/drawings');
  const project = await api(origin, key, 'POST', '/v1/projects', { name: 'Deep zoom bench' });
  if (project.status !== 201) throw new Error(`project: ${project.status}`);
  const projectId = project.json.id as string;
  const older = await uploadPdf(
    api,
    origin,
    key,
    projectId,
    path.join(dir, '20190601_beam-proposal_5-sheets.pdf'),
  );
  const newer = await uploadPdf(
    api,
    origin,
    key,
    projectId,
    path.join(dir, '20190602_beam-proposal_5-sheets.pdf'),
  );
  const cmp = await api(origin, key, 'POST', `/v1/drawings/${newer}/compare`, {
    compare_to: older,
    analyze: true,
  });
  if (cmp.status !== 202) throw new Error(`compare: ${cmp.status} ${JSON.stringify(cmp.json)}`);
  const job = await waitJob(api, origin, key, cmp.json.job_id, 'comparison');
  // Change detection runs as child jobs: wait until S101's whole-sheet overlay has its changes.
  for (let i = 0; ; i++) {
    const ovs = await api(
      origin,
      key,
      'GET',
      `/v1/overlays?job_id=${job.id}&limit=100&expand=block_a`,
    );
    const sheetOverlays = (ovs.json.data ?? []).filter((o: any) => o.block_a?.type === 'Sheet');
    const changed = sheetOverlays.filter((o: any) => o.change_count > 0);
    if (changed.length > 0) {
      const overlay = changed.sort((a: any, b: any) => b.width * b.height - a.width * a.height)[0];
      const ch = await api(origin, key, 'GET', `/v1/changes?overlay_id=${overlay.id}&limit=100`);
      const real = (ch.json.data ?? []).filter((c: any) => c.category !== 'noise');
      const change = real.sort((a: any, b: any) => b.area_px - a.area_px)[0];
      if (change) return { projectId, overlay, change, seconds: (Date.now() - t0) / 1000 };
    }
    if (i > 300) throw new Error('no change found on the beam proposal overlays');
    await sleep(1000);
  }
}

function download(url: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { rejectUnauthorized: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          res.statusCode === 200
            ? resolve(Buffer.concat(chunks))
            : reject(new Error(`GET ${url.split('?')[0]}: ${res.statusCode}`)),
        );
      })
      .on('error', reject);
  });
}

/**
 * The new column inside the change: the centre of the largest solid added (green) square of the
 * overlay image within the change's box — the column is a filled square, the rest of the change
 * (its leader, callout text and cloud) lines.
 */
export async function findColumn(pair: BeamPair): Promise<{ x: number; y: number }> {
  const b = pair.change.bbox;
  const { data, info } = await sharp(await download(pair.overlay.uri))
    .extract({
      left: b.x,
      top: b.y,
      width: Math.min(b.width, pair.overlay.width - b.x),
      height: Math.min(b.height, pair.overlay.height - b.y),
    })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const green = (x: number, y: number) => {
    const o = (y * info.width + x) * info.channels;
    // Added line work (0, 170, 0) or an added fill (190, 236, 190).
    return data[o + 1]! > 120 && data[o + 1]! - data[o]! > 40 && data[o + 1]! - data[o + 2]! > 40;
  };
  // The largest all-green square (dynamic programming over bottom-right corners): the column,
  // wider than any stroke of the cloud, leader or text.
  const W = info.width;
  const side = new Uint16Array(W * info.height);
  let best = 0,
    bx = 0,
    by = 0;
  for (let y = 0; y < info.height; y++)
    for (let x = 0; x < W; x++) {
      if (!green(x, y)) continue;
      const i = y * W + x;
      const s = x > 0 && y > 0 ? 1 + Math.min(side[i - 1]!, side[i - W]!, side[i - W - 1]!) : 1;
      side[i] = s;
      if (s > best) [best, bx, by] = [s, x, y];
    }
  if (best === 0) return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
  return { x: b.x + bx - best / 2, y: b.y + by - best / 2 };
}

/** The canvas's current view, read from Konva's stage (scale, x, y). */
async function stageView(page: Page): Promise<{ scale: number; x: number; y: number }> {
  return page.evaluate(() => {
    const st = (window as any).Konva.stages.find((s: any) => s.width() > 0);
    return { scale: st.scaleX(), x: st.x(), y: st.y() };
  });
}

type Box = { x: number; y: number; width: number; height: number };

/** Wheel-zooms (continuous deltas: factor e^(−0.0015·deltaY)) to `target`, anchored on world point `w`. */
async function zoomTo(page: Page, canvas: Box, w: { x: number; y: number }, target: number) {
  const v = await stageView(page);
  // Anchored on the point, or on the canvas edge nearest to it when it is out of sight.
  const inset = 20;
  const sx = Math.min(
    canvas.x + canvas.width - inset,
    Math.max(canvas.x + inset, canvas.x + w.x * v.scale + v.x),
  );
  const sy = Math.min(
    canvas.y + canvas.height - inset,
    Math.max(canvas.y + inset, canvas.y + w.y * v.scale + v.y),
  );
  await page.mouse.move(sx, sy);
  // A hair under the target: a scale a rounding error above 2^k asks for the next level's tiles.
  let delta = -Math.log((target * 0.9999) / v.scale) / 0.0015;
  while (Math.abs(delta) > 0.5) {
    const d = Math.max(-400, Math.min(400, delta));
    await page.mouse.wheel(0, d);
    delta -= d;
  }
}

/** Pans so world point `w` sits in the middle of the canvas (one drag). */
async function centreOn(page: Page, canvas: Box, w: { x: number; y: number }) {
  const v = await stageView(page);
  const from = { x: canvas.x + w.x * v.scale + v.x, y: canvas.y + w.y * v.scale + v.y };
  const to = { x: canvas.x + canvas.width / 2, y: canvas.y + canvas.height / 2 };
  // A drag this short would be a click (which selects the change under it and frames it).
  if (Math.hypot(to.x - from.x, to.y - from.y) < 8) return;
  // Several drags when the point is beyond the canvas (a drag starts on it).
  const inside = (p: { x: number; y: number }) =>
    p.x > canvas.x + 5 &&
    p.x < canvas.x + canvas.width - 5 &&
    p.y > canvas.y + 5 &&
    p.y < canvas.y + canvas.height - 5;
  if (!inside(from)) {
    const k = Math.min(
      (canvas.width / 2 - 10) / Math.max(1, Math.abs(from.x - to.x)),
      (canvas.height / 2 - 10) / Math.max(1, Math.abs(from.y - to.y)),
    );
    const start = { x: to.x + (from.x - to.x) * k, y: to.y + (from.y - to.y) * k };
    await page.mouse.move(start.x, start.y);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++)
      await page.mouse.move(
        start.x + ((to.x - start.x) * i) / 10,
        start.y + ((to.y - start.y) * i) / 10,
      );
    await page.mouse.up();
    return centreOn(page, canvas, w);
  }
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++)
    await page.mouse.move(from.x + ((to.x - from.x) * i) / 10, from.y + ((to.y - from.y) * i) / 10);
  await page.mouse.up();
}

async function waitLoaded(page: Page, timeout = 60_000) {
  await page.locator('[data-testid="canvas-main"][data-loaded="true"]').waitFor({ timeout });
}

export interface DeepResult {
  steps: { label: string; level: number; tiles: number; latencies: number[] }[];
  latencies: number[];
  frames: number[];
  /** Per frame: drawImage calls, and whether the Loading spinner was on screen (1/0). */
  frameCalls?: number[];
  frameSpin?: number[];
  /** deep-client.ts: per-frame probe, and the zoom steps' sharp tiles split into parts. */
  probe?: FrameProbe;
  parts?: TileParts[];
  tileTiming?: TileTiming;
  screenshots: string[];
}

const levelOf = (url: string) => Number(/\/tiles\/(\d+)\//.exec(url)?.[1] ?? -1);

/**
 * The session. `instrument` is bench-viewer's init script; the page also records the first
 * drawImage time of every tile URL (window.__bench.firstDraw).
 */
export async function runDeepZoom(
  browser: Browser,
  origin: string,
  key: string,
  pair: BeamPair,
  instrument: string,
  viewport: { width: number; height: number },
  screenshotDir: string | null,
  /** A Chromium trace of the measured session (not the screenshots) is written here. */
  tracePath: string | null = null,
): Promise<DeepResult> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    viewport,
    deviceScaleFactor: 1,
  });
  const page = await context.newPage();
  await page.addInitScript({ content: instrument });
  await page.addInitScript({ content: FRAME_PROBE });
  await page.addInitScript({ content: TILE_TIMING });
  await page.addInitScript({
    content: String.raw`(() => {
      const first = {};
      window.__firstDraw = first;
      // Tiles reach the canvas as ImageBitmaps (fetch → blob → createImageBitmap, decoded off the
      // main thread), which carry no URL: tag each blob and bitmap with the URL it came from.
      const urlOf = new WeakMap();
      const blob = Response.prototype.blob;
      Response.prototype.blob = async function () {
        const b = await blob.call(this);
        urlOf.set(b, this.url);
        return b;
      };
      const bitmap = window.createImageBitmap;
      window.createImageBitmap = async function (src, ...rest) {
        const bm = await bitmap.call(this, src, ...rest);
        if (urlOf.has(src)) urlOf.set(bm, urlOf.get(src));
        return bm;
      };
      const orig = CanvasRenderingContext2D.prototype.drawImage;
      CanvasRenderingContext2D.prototype.drawImage = function (...a) {
        const s = a[0] && (a[0].src || urlOf.get(a[0]));
        if (s && s.includes('/tiles/') && !(s in first)) first[s] = performance.now();
        return orig.apply(this, a);
      };
    })();`,
  });
  await page.goto(`${origin}/#key=${key}`);
  await page.waitForFunction(() => !location.hash.includes('key='));
  await page.evaluate(
    (r) => (location.hash = r),
    `#/projects/${pair.projectId}/overlays/${pair.overlay.id}?change=${pair.change.id}`,
  );
  const canvasLoc = page.locator('[data-testid="canvas-main"]');
  await canvasLoc.locator('canvas').first().waitFor({ timeout: 60_000 });
  await waitLoaded(page, 120_000);
  await sleep(800); // the change-framing animation
  // No change selected: its translucent fill would tint the whole view at 1,600 %.
  await page.keyboard.press('Escape');
  const canvas = (await canvasLoc.boundingBox())!;
  const column = await findColumn(pair);
  const shots: string[] = [];

  // The measured session: three places, each from 50 % to 1,600 % in steps of 2x, then pans.
  if (tracePath) {
    await browser.startTracing(page, {
      path: tracePath,
      categories: [
        'devtools.timeline',
        'disabled-by-default-devtools.timeline.frame',
        'toplevel',
        'cc',
        'v8',
      ],
    });
  }
  await page.evaluate(() => {
    (window as any).__bench.rec = true;
    (window as any).__frames.rec = true;
  });
  const steps: DeepResult['steps'] = [];
  const stepTiles: { label: string; t0: number; urls: string[] }[] = [];
  const step = async (label: string, act: () => Promise<void>) => {
    const t0: number = await page.evaluate(() => performance.now());
    await act();
    await waitLoaded(page);
    const v = await stageView(page);
    // The tiles of the deepest level drawn since the step: the level the view asks for now.
    const first: Record<string, number> = await page.evaluate(() => (window as any).__firstDraw);
    const after = Object.entries(first).filter(([, t]) => t >= t0);
    const deepest = Math.max(-1, ...after.map(([u]) => levelOf(u)));
    const lat = after.filter(([u]) => levelOf(u) === deepest).map(([, t]) => t - t0);
    stepTiles.push({
      label,
      t0,
      urls: after.filter(([u]) => levelOf(u) === deepest).map(([u]) => u),
    });
    steps.push({
      label: `${label} (${Math.round(v.scale * 100)} %)`,
      level: deepest,
      tiles: lat.length,
      latencies: lat,
    });
  };
  const places = [
    column,
    { x: column.x - 900, y: column.y + 500 },
    { x: column.x + 700, y: column.y - 600 },
  ];
  for (const [i, p] of places.entries()) {
    await step(`place ${i + 1}: 50 %`, async () => {
      await zoomTo(page, canvas, p, 0.5);
      await centreOn(page, canvas, p);
    });
    for (const s of [1, 2, 4, 8, 16])
      await step(`place ${i + 1}: zoom`, () => zoomTo(page, canvas, p, s));
    for (const [dx, dy] of [
      [300, 0],
      [0, 250],
      [-300, 0],
    ] as const) {
      await step(`place ${i + 1}: pan at 1,600 %`, async () => {
        const m = { x: canvas.x + canvas.width / 2, y: canvas.y + canvas.height / 2 };
        await page.mouse.move(m.x, m.y);
        await page.mouse.down();
        for (let k = 1; k <= 12; k++)
          await page.mouse.move(m.x - (dx * k) / 12, m.y - (dy * k) / 12);
        await page.mouse.up();
      });
    }
  }
  const bench = await page.evaluate(() => {
    const x = (window as any).__bench;
    x.rec = false;
    (window as any).__frames.rec = false;
    return {
      frames: x.frames as number[],
      frameCalls: x.frameCalls as number[],
      frameSpin: x.frameSpin as number[],
    };
  });
  const probe: FrameProbe = await page.evaluate(() => (window as any).__frames);
  const firstDraw: Record<string, number> = await page.evaluate(() => (window as any).__firstDraw);
  const tileTiming: TileTiming = await page.evaluate(() => ({
    ...(window as any).__tiles,
    resources: performance
      .getEntriesByType('resource')
      .filter((e) => e.name.includes('/tiles/'))
      .map((e) => {
        const r = e as PerformanceResourceTiming;
        return {
          name: r.name,
          startTime: r.startTime,
          requestStart: r.requestStart,
          responseStart: r.responseStart,
          responseEnd: r.responseEnd,
          connectStart: r.connectStart,
          connectEnd: r.connectEnd,
          nextHopProtocol: r.nextHopProtocol,
        };
      }),
  }));
  const parts = stepTiles
    .filter((s) => s.label.includes('zoom'))
    .flatMap((s) => tileParts(s.t0, firstDraw, s.urls, tileTiming));
  if (tracePath) await browser.stopTracing();
  if (screenshotDir) {
    for (const [mode, keyName] of [
      ['overlay', '1'],
      ['new', '3'],
    ] as const) {
      await page.keyboard.press(keyName);
      for (const pct of [100, 800, 1600]) {
        await zoomTo(page, canvas, column, pct / 100);
        await centreOn(page, canvas, column);
        await waitLoaded(page);
        await sleep(300);
        const file = path.join(screenshotDir, `s101-column-${mode}-${pct}.png`);
        // The middle of the canvas (kept small: 720 x 450 CSS px).
        const png = await page.screenshot({
          clip: {
            x: canvas.x + canvas.width / 2 - 360,
            y: canvas.y + canvas.height / 2 - 225,
            width: 720,
            height: 450,
          },
        });
        await sharp(png).png({ palette: true, colours: 64, compressionLevel: 9 }).toFile(file);
        shots.push(file);
      }
      await zoomTo(page, canvas, column, 0.5);
      await waitLoaded(page);
    }
    await page.keyboard.press('1');
  }

  await context.close();
  // Zoom steps only (pans load tiles of a level already shown): steps that reached a deep level.
  const latencies = steps.filter((s) => s.label.includes('zoom')).flatMap((s) => s.latencies);
  return {
    steps,
    latencies,
    frames: bench.frames,
    frameCalls: bench.frameCalls,
    frameSpin: bench.frameSpin,
    probe,
    parts,
    tileTiming,
    screenshots: shots,
  };
}

/** Bytes and count of the tile files in the service's object store (keys with `.tiles/`). */
export function tileCacheOnDisk(dataDir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const walk = (dir: string, inTiles: boolean) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p, inTiles || e.name.endsWith('.tiles'));
      else if (inTiles && !e.name.endsWith('@meta')) {
        bytes += statSync(p).size;
        files++;
      }
    }
  };
  walk(path.join(dataDir, 'objects'), false);
  return { bytes, files };
}
