// glibc malloc settings the service's process runs with (Linux). Read by glibc when the process
// starts, so they come from the environment: `blueline serve` and `blueline worker` start
// themselves again with them when they are missing (core/cli/main.ts), `npm start` gives them to
// Electron and to the headless service (scripts/start.mjs), and bench/ingest runs its service rows
// with them.
//
// Why: glibc serves an allocation from mmap only above its mmap threshold, and by default raises
// that threshold to the size of every mmapped block freed (up to 32 MiB). After the first few
// freed buffers of a few MB (decoded image samples handed to PDFium, line-work masks, PNG encodes,
// the compare warm-up's sheets), every buffer of that size comes from the threads' arenas instead,
// and memory freed there stays with the process, fragmented. A fixed threshold (which also turns
// the raising off) hands buffers of 1 MiB or more back to the system when freed. Measured on the
// beam set's service raster (bench/ingest README, 2026-11-27 ingest-margin): peak RSS ~1,360-1,530
// → ~1,120-1,190 MB, no CPU cost seen on the barber set.

/** The settings, as environment variables glibc reads at start-up. */
export const MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_MMAP_THRESHOLD_: String(1 << 20),
};

/** Set to 0 to run without MALLOC_ENV (no restart either). */
export const MALLOC_TUNING_OPT_OUT = 'BLUELINE_MALLOC_TUNING';

/**
 * Whether a process with `env` on `platform` should be started again with MALLOC_ENV: on Linux
 * (glibc), unless every setting is present (whatever its value: the user's choice stands) or the
 * user opted out.
 */
export function needsMallocTuning(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): boolean {
  if (platform !== 'linux' || env[MALLOC_TUNING_OPT_OUT] === '0') return false;
  return Object.keys(MALLOC_ENV).some((k) => env[k] === undefined);
}

/** `env` with MALLOC_ENV added where needsMallocTuning says so (settings already there are kept). */
export function withMallocTuning(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): NodeJS.ProcessEnv {
  if (!needsMallocTuning(env, platform)) return env;
  return { ...MALLOC_ENV, ...env };
}
