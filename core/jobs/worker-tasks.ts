// The registry of CPU-heavy tasks the worker pool can run: name -> function. It is loaded inside
// each worker thread (worker-entry.ts), and only as a type on the main thread, so whatever a task
// imports never loads on the HTTP thread. Vision work adds its pure-JS pixel loops here.
//
// A task receives structured-cloned arguments (typed arrays may be transferred in with the
// transferList of pool.run) and returns a value, or `withTransfer(value, buffers)` to move large
// buffers back without copying. Tasks must be pure: no database, no files; the pool may kill a
// worker mid-task (cancel, shutdown), so a task must leave nothing half-written.
import { createHash } from 'node:crypto';
import { withTransfer, type WorkerTaskRegistry } from './worker-protocol';

export const WORKER_TASKS = {
  /** Lowercase hex SHA-256 of a buffer. */
  sha256(args: { data: Uint8Array }): string {
    return createHash('sha256').update(args.data).digest('hex');
  },

  /** Histogram of an 8-bit grey image (any layout): counts[v] = number of pixels of value v. */
  'grey.histogram'(args: { pixels: Uint8Array }): number[] {
    const counts = new Uint32Array(256);
    const px = args.pixels;
    for (let i = 0; i < px.length; i++) counts[px[i]!]!++;
    return Array.from(counts);
  },

  /**
   * Binarizes an 8-bit grey image in place: ink (value < threshold, dark on white paper) becomes
   * 255, paper 0. The buffer is moved back to the caller; `ink` counts ink pixels.
   */
  'grey.threshold'(args: { pixels: Uint8Array; threshold: number }) {
    const px = args.pixels;
    const t = args.threshold;
    let ink = 0;
    for (let i = 0; i < px.length; i++) {
      if (px[i]! < t) {
        px[i] = 255;
        ink++;
      } else {
        px[i] = 0;
      }
    }
    return withTransfer({ pixels: px, ink }, [px.buffer as ArrayBuffer]);
  },
} satisfies WorkerTaskRegistry;

export type WorkerTasks = typeof WORKER_TASKS;
