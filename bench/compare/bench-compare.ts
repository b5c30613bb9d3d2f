// Side-by-side bench of the compare engine against odiff and pixelmatch on one pre-rendered sheet pair.
//   node --import tsx bench/compare/bench-compare.ts [--dpi 200,300] [--runs 3] [--out /tmp/blueline-bench-compare]
//     [--before <run-ours bundle of an older commit>]  (adds its one-thread and pre-aligned rows,
//     interleaved: before/after in one session; build it with esbuild from a `git worktree` of that commit)
//     [--before-service <run-service bundle of an older commit>]  (adds its service block compare row)
// Every tool runs in its own child process under /usr/bin/time -v (wall clock and peak RSS of that
// process); our runners are bundled with esbuild first so tsx's start-up compile is not measured.
// odiff and pixelmatch get the pre-aligned pair (a plain pixel diff); ours gets the shifted/scaled pair
// and registers it (plus a pre-aligned run with registration skipped).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformError, type Affine } from '../../core/vision/compare/register';
import { preparePair } from './prepare';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : def;
};
const dpis = arg('dpi', '200,300').split(',').map(Number);
const before = arg('before', '');
const beforeService = arg('before-service', '');
const runs = Number(arg('runs', '3'));
const outDir = arg('out', path.join(os.tmpdir(), 'blueline-bench-compare'));
const buildDir = path.join(repo, 'node_modules/.cache/blueline-bench-compare');
mkdirSync(buildDir, { recursive: true });

function bundle(entry: string): string {
  const out = path.join(buildDir, path.basename(entry).replace(/\.ts$/, '.mjs'));
  // A new file, not the old one rewritten: node_modules of worktrees made with hard links share this
  // cache's files, and esbuild writes in place, so another worktree's bench would run this bundle.
  rmSync(out, { force: true });
  const r = spawnSync(
    path.join(repo, 'node_modules/.bin/esbuild'),
    [
      path.join(here, entry),
      '--bundle',
      '--platform=node',
      '--format=esm',
      '--target=node20',
      '--external:sharp',
      `--outfile=${out}`,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`esbuild failed: ${r.stderr}`);
  return out;
}

interface Run {
  wall_ms: number;
  /** User + system time of the whole process (/usr/bin/time), all threads. */
  cpu_ms: number;
  rss_mb: number;
  json?: Record<string, unknown>;
}

function timed(cmd: string, args: string[], env?: Record<string, string>): Run {
  const r = spawnSync('/usr/bin/time', ['-v', cmd, ...args], {
    ...(env ? { env: { ...process.env, ...env } } : {}),
    encoding: 'utf8',
    timeout: 300_000,
    maxBuffer: 64 << 20,
  });
  const err = r.stderr ?? '';
  const wall = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)/.exec(err)?.[1];
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(err)?.[1];
  const user = /User time \(seconds\): (\S+)/.exec(err)?.[1];
  const sys = /System time \(seconds\): (\S+)/.exec(err)?.[1];
  if (!wall || !rss || !user || !sys)
    throw new Error(`no /usr/bin/time output for ${cmd}: ${err.slice(-2000)}`);
  const parts = wall.split(':').map(Number);
  const sec = parts.reduce((acc, p) => acc * 60 + p, 0);
  const line = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  let json: Record<string, unknown> | undefined;
  try {
    json = line.startsWith('{') ? JSON.parse(line) : undefined;
  } catch {
    json = undefined;
  }
  return {
    wall_ms: sec * 1000,
    cpu_ms: (Number(user) + Number(sys)) * 1000,
    rss_mb: Number(rss) / 1024,
    json,
  };
}

/** Median of each phase over the runs (in the order the phases first appear). */
function phaseMedians(rs: Run[]): [string, number][] {
  const names: string[] = [];
  for (const r of rs)
    for (const k of Object.keys((r.json?.phases ?? {}) as object))
      if (!names.includes(k)) names.push(k);
  return names.map((k) => [
    k,
    median(rs.map((r) => Number((r.json?.phases as Record<string, number>)?.[k] ?? 0))),
  ]);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

const ours = bundle('run-ours.ts');
const pm = bundle('run-pixelmatch.ts');
const service = bundle('run-service.ts');
// odiff is a reference tool, not a dependency: odiff-bin's lockfile entries name platform
// packages some registries lack, which breaks `npm ci`. Install it into a tools cache on demand.
const odiff = ensureOdiff();
function ensureOdiff(): string {
  const prefix = path.join(repo, 'node_modules/.cache/bench-tools');
  const bin = path.join(
    prefix,
    'node_modules/@odiff',
    `${process.platform}-${process.arch}`,
    'odiff',
  );
  if (!existsSync(bin)) {
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, 'odiff-bin@4.5.0'],
      { stdio: 'inherit' },
    );
  }
  return bin;
}
const results: Record<string, unknown>[] = [];
const lines: string[] = [];
lines.push(
  `loadavg at start: ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; runs: ${runs} timed after 1 warm-up; median`,
);
lines.push('');
lines.push(
  '| DPI | size | tool | pair | wall ms (median) | min–max | in-process ms | MP/s | peak RSS MB | notes |',
);
lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const dpi of dpis) {
  const p = await preparePair(path.join(outDir, 'data'), dpi);
  const tools: {
    name: string;
    pair: string;
    cmd: string;
    args: string[];
    env?: Record<string, string>;
  }[] = [
    // The older commit's default paths (one thread; pre-aligned), in the same rounds.
    ...(before
      ? [
          {
            name: 'blueline compare (register, one thread, before)',
            pair: 'shifted+scaled',
            cmd: process.execPath,
            args: [
              before,
              p.base,
              p.rev,
              path.join(outDir, `ours_before_${dpi}.png`),
              'register-main',
            ],
          },
          {
            name: 'blueline compare (pre-aligned, before)',
            pair: 'aligned',
            cmd: process.execPath,
            args: [
              before,
              p.base,
              p.revaligned,
              path.join(outDir, `ours_before_al_${dpi}.png`),
              'aligned',
            ],
          },
        ]
      : []),
    {
      name: 'blueline compare (register, one thread)',
      pair: 'shifted+scaled',
      cmd: process.execPath,
      args: [ours, p.base, p.rev, path.join(outDir, `ours_1t_${dpi}.png`), 'register-main'],
    },
    {
      name: 'blueline compare (register, 3rd in one process)',
      pair: 'shifted+scaled',
      cmd: process.execPath,
      args: [ours, p.base, p.rev, path.join(outDir, `ours_warm_${dpi}.png`), 'register-warm'],
    },
    {
      // The same, with one CompareBuffers for the three compares (masks and overlay indices kept, as a kept-alive
      // compare process would).
      name: 'blueline compare (register, 3rd in one process, kept buffers)',
      pair: 'shifted+scaled',
      cmd: process.execPath,
      args: [ours, p.base, p.rev, path.join(outDir, `ours_warmk_${dpi}.png`), 'register-warm'],
      env: { BLUELINE_REUSE: '1' },
    },
    {
      // The service's code path (compareBlockPairs, all five images, kept buffers): the 3rd compare.
      name: 'blueline service block compare, 5 images (3rd in one process)',
      pair: 'shifted+scaled',
      cmd: process.execPath,
      args: [service, p.base, p.rev, path.join(outDir, `ours_service_${dpi}.png`)],
    },
    // The older commit's service row (--before-service: its run-service.ts bundle), in the same rounds.
    ...(beforeService
      ? [
          {
            name: 'blueline service block compare, 5 images (3rd in one process, before)',
            pair: 'shifted+scaled',
            cmd: process.execPath,
            args: [
              beforeService,
              p.base,
              p.rev,
              path.join(outDir, `ours_service_before_${dpi}.png`),
            ],
          },
        ]
      : []),
    {
      // The same path, the first compare of a process that has done what a service pool worker
      // does when it starts (the boot-time detach and the worker warm-up; run-service.ts).
      name: 'blueline service block compare, 5 images (1st after the worker warm-up)',
      pair: 'shifted+scaled',
      cmd: process.execPath,
      args: [
        service,
        p.base,
        p.rev,
        path.join(outDir, `ours_service1_${dpi}.png`),
        'first-after-warmup',
      ],
    },
    {
      name: 'blueline compare (pre-aligned)',
      pair: 'aligned',
      cmd: process.execPath,
      args: [ours, p.base, p.revaligned, path.join(outDir, `ours_al_${dpi}.png`), 'aligned'],
    },
    {
      name: 'odiff',
      pair: 'aligned',
      cmd: odiff,
      args: [p.base, p.revaligned, path.join(outDir, `odiff_${dpi}.png`)],
    },
    {
      name: 'odiff --enable-asm',
      pair: 'aligned',
      cmd: odiff,
      args: [p.base, p.revaligned, path.join(outDir, `odiff_asm_${dpi}.png`), '--enable-asm'],
    },
    {
      name: 'pixelmatch (sharp decode)',
      pair: 'aligned',
      cmd: process.execPath,
      args: [pm, p.base, p.revaligned, path.join(outDir, `pm_${dpi}.png`)],
    },
  ];
  let w = 0,
    h = 0;
  {
    const meta = JSON.parse(
      (await import('node:fs')).readFileSync(
        path.join(outDir, 'data', `truth_${dpi}.json`),
        'utf8',
      ),
    ) as { width: number; height: number };
    w = meta.width;
    h = meta.height;
  }
  const mp = (w * h) / 1e6;
  // Interleave tools run by run so load changes hit all of them alike.
  const perTool = tools.map(() => [] as Run[]);
  for (let i = 0; i <= runs; i++) {
    tools.forEach((t, ti) => {
      const r = timed(t.cmd, t.args, t.env);
      if (i > 0) perTool[ti]!.push(r);
      process.stderr.write(
        `${dpi} ${t.name} run ${i}: ${r.wall_ms.toFixed(0)} ms ${r.rss_mb.toFixed(0)} MB\n`,
      );
    });
  }
  tools.forEach((t, ti) => {
    const rs = perTool[ti]!;
    const walls = rs.map((r) => r.wall_ms);
    const med = median(walls);
    const inproc = rs.map((r) => Number(r.json?.total_ms ?? NaN));
    const rss = median(rs.map((r) => r.rss_mb));
    let notes = '';
    const last = rs[rs.length - 1]!.json;
    if (last && t.name.startsWith('blueline')) {
      const tr = last.transform as Affine;
      const err = transformError(tr, t.pair === 'aligned' ? [1, 0, 0, 0, 1, 0] : p.truth, w, h);
      notes = `score ${(last.score as number).toFixed(4)}, ${last.regions} regions, reg. err max ${err.max.toFixed(3)} px rms ${err.rms.toFixed(3)}; phases (median of the runs) ${phaseMedians(
        rs,
      )
        .map(([k, v]) => `${k} ${v.toFixed(0)}`)
        .join(', ')}; in-process min ${Math.min(...inproc).toFixed(0)}`;
      // CPU time of the timed compare, all threads (run-service.ts' cpu_ms), when the runner gives it.
      const cpu = rs.map((r) => Number(r.json?.cpu_ms ?? NaN));
      if (cpu.every(Number.isFinite))
        notes += `; timed compare's CPU (all threads) median ${median(cpu).toFixed(0)} ms`;
      // The warm row: wall is the whole process (three compares); in-process ms is the third one's.
      const earlier = rs.map((r) => r.json?.earlier_ms as number[] | undefined);
      if (earlier.every((e) => Array.isArray(e)))
        notes += `; wall = whole process of 3 compares, in-process = the 3rd; 1st / 2nd compare (median) ${median(
          earlier.map((e) => e![0]!),
        ).toFixed(0)} / ${median(earlier.map((e) => e![1]!)).toFixed(0)} ms`;
      results.push({ dpi, tool: t.name, err, last });
    } else if (last) {
      const ph = last.phases as Record<string, number>;
      notes = `${last.diff_px} px differ; process CPU median ${median(rs.map((r) => r.cpu_ms)).toFixed(0)} ms; phases ${Object.entries(
        ph,
      )
        .map(([k, v]) => `${k} ${v.toFixed(0)}`)
        .join(', ')}`;
    } else notes = `process CPU median ${median(rs.map((r) => r.cpu_ms)).toFixed(0)} ms`;
    results.push({
      dpi,
      tool: t.name,
      walls,
      cpu_ms: rs.map((r) => r.cpu_ms),
      rss_mb: rs.map((r) => r.rss_mb),
      inproc,
      phases: rs.map((r) => r.json?.phases ?? null),
    });
    lines.push(
      `| ${dpi} | ${w}x${h} (${mp.toFixed(1)} MP) | ${t.name} | ${t.pair} | ${med.toFixed(0)} | ${Math.min(...walls).toFixed(0)}–${Math.max(...walls).toFixed(0)} | ${Number.isFinite(median(inproc)) ? median(inproc).toFixed(0) : '—'} | ${(mp / (med / 1000)).toFixed(1)} | ${rss.toFixed(0)} | ${notes} |`,
    );
  });
}
lines.push('');
lines.push(
  `loadavg at end: ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(results, null, 1));
writeFileSync(path.join(outDir, 'table.md'), lines.join('\n') + '\n');
console.log(lines.join('\n'));
