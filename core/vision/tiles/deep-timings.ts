import { readFileSync } from 'node:fs';

// Where a deep-tile render's time goes (issue 19, the server side of "zoom step → sharp tile"):
// each step of a region's render in the worker (deep-tiles.ts), the worker thread's own CPU time
// over it, and when it started on the shared clock (epoch ms), so the tile service can tell the
// time in the pool's queue from the render itself. Filled by the render functions when given one;
// reported by the service only when asked to (BLUELINE_TILE_TRACE, tiles.service.ts).

export interface DeepTimings {
  /** When the worker began the render, epoch ms (performance.timeOrigin + now: one clock). */
  startedAt: number;
  /** Wall ms of the whole render in the worker. */
  totalMs: number;
  /**
   * This thread's CPU ms over the render (Linux /proc/thread-self/schedstat; null elsewhere).
   * libvips' encode threads are not in it.
   */
  cpuMs: number | null;
  /** Wall ms by step, in the order they ran (a step that runs twice adds up). */
  steps: Record<string, number>;
}

/** Epoch ms on a clock every thread shares. */
export const epochMs = () => performance.timeOrigin + performance.now();

/** CPU time of the calling thread in ms, or null where it cannot be read. */
export function threadCpuMs(): number | null {
  try {
    const ns = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]);
    return Number.isFinite(ns) ? ns / 1e6 : null;
  } catch {
    return null;
  }
}

/** A clock over one render: `step(name)` ends the current step, `end()` fills `t`. */
export function stepClock(t: DeepTimings | undefined) {
  if (!t) return { step: (_: string) => {}, end: () => {} };
  const cpu0 = threadCpuMs();
  const t0 = performance.now();
  let last = t0;
  t.startedAt = performance.timeOrigin + t0;
  return {
    step(name: string) {
      const now = performance.now();
      t.steps[name] = (t.steps[name] ?? 0) + (now - last);
      last = now;
    },
    end() {
      t.totalMs = performance.now() - t0;
      const cpu1 = threadCpuMs();
      t.cpuMs = cpu0 === null || cpu1 === null ? null : cpu1 - cpu0;
    },
  };
}

/** An empty record for stepClock to fill. */
export const newTimings = (): DeepTimings => ({ startedAt: 0, totalMs: 0, cpuMs: null, steps: {} });
