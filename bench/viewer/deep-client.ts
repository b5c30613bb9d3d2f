// The client side of bench/viewer's deep pass (issue 19): what the browser spends per frame while
// tiles land, and where a zoom step's time goes before a sharp tile is on screen.
//
// Frames. The pass runs Chromium with `--disable-frame-rate-limit --disable-gpu-vsync`. With those
// flags a frame that changed something on screen (damage: a canvas draw, a CSS animation) is
// followed at once by the next one, so the rAF interval that starts with it is what that frame
// cost: main thread (rAF callbacks with Konva's draws, style, layout, paint, the canvas flush in
// the commit) plus the compositor's draw. A frame with no damage is not followed at once: the
// next BeginFrame waits for the frame deadline (~16.7 ms, measured: an idle page's rAF loop runs
// at ~17 ms, one with a spinning CSS animation at ~0.3 ms, a canvas drawn every other frame at
// ~0.8 ms after each drawing frame and ~17 ms after each other). The rAF median over all frames is
// therefore the share of idle frames, not a cost: 0.4 ms when a spinner was on screen, 17 ms when
// nothing moved. Measured here, per frame (one rAF loop of this script, registered before the
// app's so its callback runs first in every frame):
//  - drawing frames: frames in which the canvas drew (drawImage called between this callback and
//    the next); their rAF interval is the frame's production time;
//  - main-thread work of every frame: from the frame's rAF time to a message posted from its rAF
//    callback, which runs after the frame's rendering update (rAF callbacks, style, layout, paint,
//    commit), so it includes all main-thread work of the frame;
//  - long animation frames (the LoAF API, >= 50 ms by definition): the frame plus the tasks that
//    led to it (React renders, fetch handlers), so nothing the main thread did is left out.
// The trace (--deep-trace) adds the thread's CPU time per frame.
//
// Tiles. Per tile URL: when the viewer called fetch (and with which priority, and how many tile
// fetches were then in flight), the Resource Timing of its response (request sent, first byte,
// last byte, protocol), when its bitmap was decoded, when it was first drawn. A zoom step's sharp
// tiles are split into: issue (step input → fetch called), browser queue (fetch → request sent:
// waiting for one of the 6 HTTP/1.1 connections, connection setup), server (request sent → first
// byte), body, decode (last byte → ImageBitmap), draw (bitmap → first drawImage).

/** Init script (plain JS: tsx helpers do not exist in the page). Records into window.__frames. */
export const FRAME_PROBE = String.raw`
(() => {
  const f = { rec: false, t: [], calls: [], work: [], spin: [], loaf: [], why: [] };
  window.__frames = f;
  let calls = 0;
  const orig = CanvasRenderingContext2D.prototype.drawImage;
  CanvasRenderingContext2D.prototype.drawImage = function (...a) {
    calls++;
    return orig.apply(this, a);
  };
  let callsAt = 0;
  const loop = (t) => {
    if (f.rec) {
      // Draws since the previous callback belong to the previous frame.
      if (f.t.length) f.calls.push(calls - callsAt);
      const i = f.t.length;
      f.t.push(t);
      const spin = document.querySelector('.canvas-status .spinner') ? 1 : 0;
      f.spin.push(spin);
      // Diagnosis: a viewer build may say why a layer reports 'loading' (window.__whyLoading).
      if (spin && window.__whyLoading) f.why.push(JSON.stringify(window.__whyLoading));
      f.work.push(NaN);
      const ch = new MessageChannel();
      ch.port1.onmessage = () => { f.work[i] = performance.now() - t; };
      ch.port2.postMessage(0);
    }
    callsAt = calls;
    requestAnimationFrame(loop);
  };
  requestAnimationFrame(loop);
  try {
    new PerformanceObserver((l) => {
      if (!f.rec) return;
      for (const e of l.getEntries())
        f.loaf.push({ start: e.startTime, duration: e.duration, blocking: e.blockingDuration,
          render: e.renderStart ? e.startTime + e.duration - e.renderStart : 0,
          scripts: (e.scripts || []).map((s) => (s.sourceFunctionName || s.invoker) + ' ' + Math.round(s.duration)) });
    }).observe({ type: 'long-animation-frame' });
  } catch (e) { /* not supported */ }
})();
`;

/** Init script: per tile URL, the viewer's fetch call and the bitmap's decode (window.__tiles). */
export const TILE_TIMING = String.raw`
(() => {
  const T = { fetchAt: {}, priority: {}, inFlightAt: {}, bitmapAt: {}, aborted: {}, maxInFlight: 0 };
  window.__tiles = T;
  try { performance.setResourceTimingBufferSize(100000); } catch (e) { /* old browser */ }
  let inFlight = 0;
  const abs = (u) => new URL(typeof u === 'string' ? u : u.url, location.href).href;
  const f0 = window.fetch;
  window.fetch = function (input, init) {
    const url = abs(input);
    if (!url.includes('/tiles/')) return f0.call(this, input, init);
    T.fetchAt[url] = performance.now();
    T.priority[url] = (init && init.priority) || 'auto';
    inFlight++;
    T.inFlightAt[url] = inFlight;
    T.maxInFlight = Math.max(T.maxInFlight, inFlight);
    const done = () => { inFlight--; };
    const p = f0.call(this, input, init);
    p.then((res) => res.clone().arrayBuffer().then(done, done), (e) => {
      if (e && e.name === 'AbortError') T.aborted[url] = performance.now();
      done();
    });
    return p;
  };
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
    const u = urlOf.get(src);
    if (u && !(u in T.bitmapAt)) T.bitmapAt[u] = performance.now();
    return bm;
  };
})();
`;

export interface FrameProbe {
  t: number[];
  calls: number[];
  work: number[];
  spin: number[];
  loaf: { start: number; duration: number; blocking: number; render: number; scripts: string[] }[];
  why?: string[];
}

export interface TileTiming {
  fetchAt: Record<string, number>;
  priority: Record<string, string>;
  inFlightAt: Record<string, number>;
  bitmapAt: Record<string, number>;
  aborted: Record<string, number>;
  maxInFlight: number;
  resources: {
    name: string;
    startTime: number;
    requestStart: number;
    responseStart: number;
    responseEnd: number;
    connectStart: number;
    connectEnd: number;
    nextHopProtocol: string;
  }[];
}

const q = (xs: number[], p: number) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * (s.length - 1) + 0.5))]! : NaN;
};
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : '—');
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : '—');
const stats = (xs: number[]) =>
  `median ${f1(q(xs, 0.5))} / p95 ${f1(q(xs, 0.95))} / max ${f1(Math.max(...xs))} ms, > 50 ms: ${xs.filter((x) => x > 50).length} (${xs.length} frames)`;

export interface FrameSummary {
  frames: number;
  drawing: { interval: number[]; work: number[] };
  idleIntervalMedian: number;
  workAll: number[];
  spinnerFrames: number;
  loaf: FrameProbe['loaf'];
  why: Map<string, number>;
}

/** Frames of the probe: drawing frames' intervals, main-thread work, long animation frames. */
export function summariseFrames(p: FrameProbe): FrameSummary {
  const n = p.calls.length; // frames with a following callback (the last one has no interval)
  const interval = (i: number) => p.t[i + 1]! - p.t[i]!;
  const drawIdx = [...Array(n).keys()].filter((i) => p.calls[i]! > 0);
  const idleIdx = [...Array(n).keys()].filter((i) => p.calls[i] === 0 && !p.spin[i]);
  return {
    frames: n,
    drawing: { interval: drawIdx.map(interval), work: drawIdx.map((i) => p.work[i]!) },
    idleIntervalMedian: q(idleIdx.map(interval), 0.5),
    workAll: p.work.slice(0, n),
    spinnerFrames: p.spin.filter((s) => s > 0).length,
    loaf: p.loaf,
    why: (p.why ?? []).reduce((m, w) => m.set(w, (m.get(w) ?? 0) + 1), new Map<string, number>()),
  };
}

export function printFrames(s: FrameSummary): void {
  console.log(
    `\nframes while tiles land (pacing off; see deep-client.ts for what each line measures):`,
  );
  console.log(
    `  frames that drew on the canvas, production time (rAF interval from the frame's start): ${stats(s.drawing.interval)}`,
  );
  console.log(`  the same frames, main-thread work: ${stats(s.drawing.work)}`);
  console.log(`  every frame, main-thread work: ${stats(s.workAll)}`);
  const lo = s.loaf.map((l) => l.duration);
  console.log(
    `  long animation frames (>= 50 ms, with the tasks that led to them): ${lo.length}${lo.length ? `, max ${f1(Math.max(...lo))} ms` : ''}`,
  );
  for (const l of [...s.loaf].sort((a, b) => b.duration - a.duration).slice(0, 5))
    console.log(
      `    ${f1(l.duration)} ms (render ${f1(l.render)}, blocking ${f1(l.blocking)}): ${l.scripts.slice(0, 4).join(', ')}`,
    );
  console.log(
    `  frames without a draw or a spinner: rAF interval median ${f1(s.idleIntervalMedian)} ms (the frame deadline, not a cost); frames with the Loading spinner on screen: ${s.spinnerFrames}`,
  );
  for (const [w, n] of [...s.why].sort((a, b) => b[1] - a[1]).slice(0, 8))
    console.log(`    spinner frames with the layer's own reason ${w}: ${n}`);
  const iv = s.drawing.interval;
  console.log(
    `  goal (drawing frames) median < 16 ms, none > 50 ms: ${q(iv, 0.5) < 16 && Math.max(...iv) <= 50 ? 'MET' : 'MISSED'}`,
  );
}

export interface TileParts {
  url: string;
  total: number;
  issue: number;
  queue: number;
  server: number;
  body: number;
  decode: number;
  draw: number;
  prefetched: boolean;
  inFlight: number;
  priority: string;
  protocol: string;
}

/** A zoom step's sharp tiles (url → first draw, step input at t0) split into their parts. */
export function tileParts(
  t0: number,
  firstDraw: Record<string, number>,
  urls: string[],
  tm: TileTiming,
): TileParts[] {
  const res = new Map<string, TileTiming['resources'][number]>();
  // The last request of a URL (an aborted one may have come before).
  for (const r of tm.resources) res.set(r.name, r);
  return urls.map((url) => {
    const r = res.get(url);
    const fetchAt = tm.fetchAt[url] ?? NaN;
    const bitmapAt = tm.bitmapAt[url] ?? NaN;
    const prefetched = fetchAt < t0;
    const from = Math.max(t0, fetchAt);
    const sent = r ? Math.max(from, r.requestStart) : NaN;
    const first = r ? Math.max(sent, r.responseStart) : NaN;
    const last = r ? Math.max(first, r.responseEnd) : NaN;
    return {
      url,
      total: firstDraw[url]! - t0,
      issue: prefetched ? 0 : fetchAt - t0,
      queue: sent - from,
      server: first - sent,
      body: last - first,
      decode: Math.max(last, bitmapAt) - last,
      draw: firstDraw[url]! - Math.max(t0, bitmapAt),
      prefetched,
      inFlight: tm.inFlightAt[url] ?? NaN,
      priority: tm.priority[url] ?? '',
      protocol: r?.nextHopProtocol ?? '',
    };
  });
}

export function printTileParts(parts: TileParts[], tm: TileTiming): void {
  if (parts.length === 0) return;
  const col = (k: keyof TileParts) => parts.map((p) => p[k] as number);
  console.log(
    `\nzoom step → sharp tile, by part (${parts.length} tiles; ${parts.filter((p) => p.prefetched).length} fetched before the step; p50 / p95 / max ms):`,
  );
  for (const [k, what] of [
    ['issue', 'step input → fetch called (rAF, React commit, effect)'],
    ['queue', 'fetch → request sent (browser queue: connections, setup)'],
    ['server', 'request sent → first byte (service: queue, render, encode)'],
    ['body', 'first → last byte'],
    ['decode', 'last byte → ImageBitmap decoded'],
    ['draw', 'bitmap → first drawn on the canvas'],
    ['total', 'total'],
  ] as const)
    console.log(
      `  ${what.padEnd(60)} ${f0(q(col(k), 0.5)).padStart(5)} / ${f0(q(col(k), 0.95)).padStart(5)} / ${f0(Math.max(...col(k).filter(Number.isFinite))).padStart(5)}`,
    );
  const protos = [...new Set(parts.map((p) => p.protocol))].join(', ');
  console.log(
    `  tile fetches in flight at once (the viewer's): max ${tm.maxInFlight}; at a sharp tile's fetch median ${f0(q(col('inFlight'), 0.5))}, max ${f0(Math.max(...col('inFlight').filter(Number.isFinite)))}; priorities ${[...new Set(parts.map((p) => p.priority))].join(', ')}; protocol ${protos}; tile fetches aborted ${Object.keys(tm.aborted).length}, made ${Object.keys(tm.fetchAt).length}`,
  );
}
