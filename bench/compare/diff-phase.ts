// The diff phase (diffStage after registration) of the bench pair, N times in one process with kept
// buffers: per-lap wall, main-thread CPU (/proc/thread-self/schedstat), optional CPU profile self time.
//   node --import tsx bench/compare/diff-phase.ts --dpi 200 --runs 8 [--prof] [--skip 2]
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { CompareBuffers } from '../../core/vision/compare/buffers';
import { diffStage } from '../../core/vision/compare/compare-pipeline.adapter';
import { decodeGrey } from '../../core/vision/compare/encode.adapter';
import { registerImages } from '../../core/vision/compare/register';
import { compareBlockPairs } from '../../core/jobs/compare-tasks';
import sharp from 'sharp';

const argv = process.argv.slice(2);
const opt = (k: string, d: string) => (argv.includes(k) ? argv[argv.indexOf(k) + 1]! : d);
const dpi = Number(opt('--dpi', '200')),
  runs = Number(opt('--runs', '8')),
  skip = Number(opt('--skip', '2'));
const prof = argv.includes('--prof');
const service = argv.includes('--service');
const heap = argv.includes('--heap');
const dir = opt('--out', '/tmp/blueline-bench-compare') + '/data';
const threadNs = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
const A = await decodeGrey(`${dir}/base_${dpi}.png`),
  B = await decodeGrey(`${dir}/rev_${dpi}.png`);
const reg = registerImages(A, B);
const [ma, mb] = await Promise.all([
  sharp(`${dir}/base_${dpi}.png`).metadata(),
  sharp(`${dir}/rev_${dpi}.png`).metadata(),
]);
const block = (id: string, width: number, height: number) => ({
  id,
  type: 'Plan',
  identifier: null,
  title: null,
  bbox: { x: 0, y: 0, width, height },
});
const args = {
  a: { path: `${dir}/base_${dpi}.png` },
  b: { path: `${dir}/rev_${dpi}.png` },
  blocksA: [block('a', ma.width!, ma.height!)],
  blocksB: [block('b', mb.width!, mb.height!)],
  skip: [],
};
const buffers = new CompareBuffers();
const session = new Session();
session.connect();
if (prof) {
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
}
if (heap) {
  await session.post('HeapProfiler.enable');
}
const cpus: number[] = [];
const pcpus: number[] = [];
const syss: number[] = [];
const flts: number[] = [];
const laps: Record<string, number[]> = {};
const self = new Map<string, number>();
for (let i = 0; i < runs; i++) {
  const on = prof && i >= skip;
  if (on) await session.post('Profiler.start');
  if (heap && i === skip)
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  const f0 = process.resourceUsage().minorPageFault;
  const p0 = process.cpuUsage();
  const c0 = threadNs();
  const st = service
    ? { timings: (await compareBlockPairs(args)).timings_ms }
    : await diffStage(A, B, { skipRegistration: true, transform: reg.transform, buffers });
  const c1 = threadNs();
  const pu = process.cpuUsage(p0);
  if (on) {
    const { profile } = await session.post('Profiler.stop');
    const dt = new Map<number, number>();
    profile.samples!.forEach((id, k) => dt.set(id, (dt.get(id) ?? 0) + profile.timeDeltas![k]!));
    for (const n of profile.nodes) {
      const f = n.callFrame;
      const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-1)[0]}:${f.lineNumber + 1}:${f.columnNumber}`;
      self.set(key, (self.get(key) ?? 0) + (dt.get(n.id) ?? 0) / 1000);
    }
  }
  if (i < skip) continue;
  cpus.push((c1 - c0) / 1e6);
  pcpus.push((pu.user + pu.system) / 1000);
  syss.push(pu.system / 1000);
  flts.push(process.resourceUsage().minorPageFault - f0);
  for (const [k, v] of Object.entries(st.timings)) (laps[k] ??= []).push(v);
}
if (heap) {
  // Bytes allocated on the JS heap per compare by the allocating function (self), sampled.
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const by = new Map<string, number>();
  const walk = (n: (typeof profile)['head']) => {
    const f = n.callFrame;
    const key = `${f.functionName || '(anon)'} ${f.url.split('/').slice(-1)[0]}:${f.columnNumber}`;
    const self = n.selfSize;
    if (self > 0) by.set(key, (by.get(key) ?? 0) + self);
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  const top = [...by.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25);
  for (const [k, v] of top)
    console.log(`${(v / (runs - skip) / 1e6).toFixed(2).padStart(8)} MB/compare  ${k}`);
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const min = (a: number[]) => Math.min(...a);
console.log(
  `dpi ${dpi}: main-thread CPU of ${service ? 'compareBlockPairs' : 'diffStage'}, ms: median ${med(cpus).toFixed(1)} min ${min(cpus).toFixed(1)} (${cpus.map((c) => c.toFixed(0)).join(' ')})`,
);
console.log(
  `process CPU: median ${med(pcpus).toFixed(1)} min ${min(pcpus).toFixed(1)} (${pcpus.map((c) => c.toFixed(0)).join(' ')})`,
);
console.log(`of it system: median ${med(syss).toFixed(1)}; minor faults median ${med(flts)}`);
console.log(
  'laps (wall) median/min: ' +
    Object.entries(laps)
      .map(([k, v]) => `${k} ${med(v).toFixed(1)}/${min(v).toFixed(1)}`)
      .join(', '),
);
if (prof) {
  const n = runs - skip;
  const top = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(opt('--top', '40')));
  for (const [k, v] of top) console.log(`${(v / n).toFixed(2).padStart(8)} ms/compare  ${k}`);
}
