// The steps of a pool worker's warm-up (core/jobs/worker-warmup.ts runs them; WorkerPoolOptions.warmup).
// Apart from the warm-up itself, so the main thread can name the steps without loading the vision code.

/**
 * Passes of the compare warm-up (one pool step each). V8 compiles a function called once per compare
 * (registration's patch choice and fit, the diff, the change regions) only after a few calls; until
 * then each call runs a while unoptimized, and its compile, on another thread, competes with the
 * compare on a 2-core laptop. A worker's first bench compare (36x24 in at 200 dpi) took 270–278 ms
 * after one pass and 206–267 ms after three (bench/compare README).
 */
export const COMPARE_WARMUP_PASSES = 3;

/**
 * The pool's warm-up steps at `dpi`: the ingest step (run before the worker's first task), then the
 * compare passes (each run only while no task is queued).
 */
export function workerWarmupSteps(dpi: number): { task: string; args: unknown }[] {
  return [
    { task: 'worker.warmup.ingest', args: { dpi } },
    ...Array.from({ length: COMPARE_WARMUP_PASSES }, (_, i) => ({
      task: 'worker.warmup.compare',
      args: { dpi, pass: i + 1, passes: COMPARE_WARMUP_PASSES },
    })),
  ];
}
