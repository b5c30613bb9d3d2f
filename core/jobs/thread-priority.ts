// Lowers the scheduling priority of the calling thread, so CPU-heavy pool workers (raster, compare)
// yield the cores to the HTTP thread: on a 2-core laptop the two workers otherwise take both cores
// from the event loop that answers the UI (issue 7: lists, reads and image downloads while a set
// processes). Linux only: setpriority(PRIO_PROCESS, tid) applies to that one thread there (it is
// per-thread in the kernel; /proc/thread-self names the calling thread's id), and threads it
// starts later (libvips's) inherit the value. Elsewhere (macOS, Windows) the same call would
// renice the whole process, so nothing is done. Raising niceness needs no privilege.
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The calling thread's kernel id (Linux), or null where it cannot be read. */
export function currentThreadId(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    // "<pid>/task/<tid>"
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * Sets the calling thread's nice value to at least `nice` (0–19; higher yields more) and returns
 * what it is now, or null where threads cannot be reniced on their own (not Linux) or it failed.
 */
export function lowerThreadPriority(nice: number): number | null {
  if (!Number.isInteger(nice) || nice < 0 || nice > 19)
    throw new RangeError(`Expected a nice value from 0 to 19 but received ${nice}`);
  const tid = currentThreadId();
  if (tid === null) return null;
  try {
    if (getPriority(tid) < nice) setPriority(tid, nice);
    return getPriority(tid);
  } catch {
    return null;
  }
}
