// Each step of diffStage's pixel work after registration, alone: the bench pair's masks, layers and
// diff made once as diffStage makes them (no line-work images: the bench pair is PNGs), then every
// step run N times on the same inputs (the planes a rule changes restored before each run), its
// main-thread CPU (/proc/thread-self/schedstat) reported as min and median, ms.
//   node --import tsx bench/compare/rule-cpu.ts [--dpi 200] [--runs 15] [--only fillInkStyle,...]
import { createHash } from 'node:crypto';
import { CompareBuffers } from '../../core/vision/compare/buffers';
import {
  alignGrey,
  coverage,
  diffMasks,
  packInk,
  renderAddDelIndexed,
  renderOverlayIndexed,
  type DiffResult,
  type InkedWords,
} from '../../core/vision/compare/diff';
import { decodeGrey } from '../../core/vision/compare/encode.adapter';
import {
  diffFills,
  fillInkStyle,
  fillTexture,
  penStyle,
  speckNoise,
  splitFills,
  styleMasks,
  FILL_SLOTS,
} from '../../core/vision/compare/layers';
import { registerImages } from '../../core/vision/compare/register';

const argv = process.argv.slice(2);
const opt = (k: string, d: string) => (argv.includes(k) ? argv[argv.indexOf(k) + 1]! : d);
const dpi = Number(opt('--dpi', '200')),
  runs = Number(opt('--runs', '15'));
const only = argv.includes('--only') ? new Set(opt('--only', '').split(',')) : null;
const dir = opt('--out', '/tmp/blueline-bench-compare') + '/data';
// process.cpuUsage (getrusage: exact for the running thread) rather than /proc/thread-self/schedstat,
// which moves in scheduler ticks (4 ms here); the steps run on this thread only.
const threadMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const A = await decodeGrey(`${dir}/base_${dpi}.png`),
  B = await decodeGrey(`${dir}/rev_${dpi}.png`);
const t = registerImages(A, B).transform;
const ws = new CompareBuffers();
const [it, wt, pt] = [160, 208, 240];
const W = A.width,
  H = A.height;

/** Every typed array and number reachable from `o`, to put back after a run. */
function snapshot(o: unknown): () => void {
  const undo: (() => void)[] = [];
  const seen = new Set<unknown>();
  const walk = (v: unknown): void => {
    if (!v || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (ArrayBuffer.isView(v)) {
      const a = v as Uint8Array,
        copy = a.slice();
      undo.push(() => a.set(copy));
      return;
    }
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (typeof x === 'number') undo.push(() => ((v as Record<string, unknown>)[k] = x));
      else walk(x);
    }
  };
  walk(o);
  return () => undo.forEach((f) => f());
}

const results: [string, number[]][] = [];
function time(name: string, f: () => unknown, state?: unknown): void {
  const restore = state ? snapshot(state) : () => undefined;
  const ms: number[] = [];
  for (let i = 0; i < (only && !only.has(name) ? 0 : runs); i++) {
    restore();
    const c0 = threadMs();
    f();
    ms.push(threadMs() - c0);
  }
  restore();
  f(); // the state the next steps see (the state is snapshot before the first run)
  if (ms.length > 0) results.push([name, ms]);
}

let ma = packInk(A, it, wt, pt, undefined, ws, 'a.');
time('packInk A', () => (ma = packInk(A, it, wt, pt, undefined, ws, 'a.')));
let fillA = null as ReturnType<typeof splitFills>;
time(
  'splitFills A',
  () => (fillA = splitFills(A, ma, undefined, it, wt, pt, ws, FILL_SLOTS.a)),
  ma,
);
const alignedOut = () => ws.bytesToOverwrite('aligned_b', W * H);
let aligned = alignGrey(B, t, W, H, alignedOut(), { darkestBelow: 0.75 });
time('alignGrey', () => (aligned = alignGrey(B, t, W, H, alignedOut(), { darkestBelow: 0.75 })));
let mb = packInk(aligned, it, wt, pt, undefined, ws, 'b.');
time('packInk B', () => (mb = packInk(aligned, it, wt, pt, undefined, ws, 'b.')));
let fillB = null as ReturnType<typeof splitFills>;
time(
  'splitFills B',
  () => (fillB = splitFills(aligned, mb, undefined, it, wt, pt, ws, FILL_SLOTS.b)),
  mb,
);
const cover = coverage(t, B.width, B.height, W, H);
let d = {} as DiffResult;
time('diffMasks', () => (d = diffMasks(ma, mb, cover, ws)), [ma, mb]);
time('styleMasks', () => (d.style = styleMasks(d, ws)), d);
time('diffFills', () => {
  const fd = diffFills(fillA?.fill ?? null, fillB?.fill ?? null, ma, mb, cover, ws);
  d.fills = { a: fillA?.fill ?? null, b: fillB?.fill ?? null, ...fd };
});
time('fillInkStyle', () => fillInkStyle(d, A, undefined, aligned), d);
time('fillTexture', () => fillTexture(d, {}, { a: A, b: aligned }), d);
time('penStyle', () => penStyle(d, A, undefined, aligned, pt), d);
time('speckNoise', () => speckNoise(d, A, undefined, aligned, pt), d);
// The overlays as the service renders them: the combined 4-bit image listing its inked words, then the
// two 2-bit images from that list (outputs zeroed before each run, as the renderers expect).
const outs = {
  c: new Uint8Array((1 + Math.ceil(W / 2)) * H),
  a: new Uint8Array((1 + Math.ceil(W / 4)) * H),
  r: new Uint8Array((1 + Math.ceil(W / 4)) * H),
};
const inked: InkedWords = { words: new Uint32Array(d.stride * H), n: 0 };
time('render comb.', () => renderOverlayIndexed(d, 'combined', outs.c, inked), { c: outs.c });
time('render 2-bit', () => renderAddDelIndexed(d, outs.a, outs.r, inked), { a: outs.a, r: outs.r });

function hash(b: Uint8Array): string {
  return createHash('sha1').update(b).digest('hex').slice(0, 12);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
console.log(`dpi ${dpi}, ${runs} runs each, main-thread CPU ms (min / median):`);
for (const [name, ms] of results)
  console.log(
    `${name.padEnd(14)} ${Math.min(...ms)
      .toFixed(2)
      .padStart(7)} ${med(ms).toFixed(2).padStart(7)}`,
  );
console.log(`overlay bytes ${hash(outs.c)} ${hash(outs.a)} ${hash(outs.r)}, inked ${inked.n}`);
console.log(
  `fill px ${fillA?.px}/${fillB?.px} stats ${JSON.stringify(d.stats)} style ${d.style?.added_px}/${d.style?.removed_px} fills ${d.fills?.added_px}/${d.fills?.removed_px}`,
);
