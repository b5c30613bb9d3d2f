// Who is to blame when the process dies? (issue 16 part 6). Pure rules; the runner applies them
// at start (job-runner.ts, `recover`) to every job the previous process left Started.
//
// A process death cannot be observed by the process that dies, and from the next boot a SIGKILL
// from outside looks exactly like a native crash or the OOM killer. So a job is blamed only on
// evidence, and a restart that merely interrupted a job never fails it:
//
// 1. The previous process stopped cleanly (SIGTERM, `runner.stop()`): the job was interrupted, not
//    at fault. Queued again; nothing counted.
// 2. The job made progress during the claim (a page stored, …): a job that moves forward is not the
//    one taking the process down. Its crash count goes back to 0.
// 3. The process died while the job was NOT running (Queued, backing off, waiting for the others to
//    drain): the process dies without it, so the earlier deaths prove nothing either. Its crash
//    count goes back to 0 (`JobsRepository.clearQueuedSuspicion`).
// 4. The job ran with other jobs, made no progress, and the process died: any of them may be the
//    cause. Not counted; the job becomes a `suspect` and its next claims run it alone.
// 5. The job ran alone, made no progress, and the process died: counted (`crashes` + 1). It is
//    queued again after a back-off that grows with each counted crash (base × 6^(crashes-1): 5 s,
//    30 s, …), and fails with `processor_crashed` once `maxCrashes` deaths in a row were its own.
//    The back-off is evidence too: the process must live that long without the job before the
//    next death can be blamed on it, and a death during it clears the job (rule 3). A process
//    killed from outside every few seconds rarely lives 30 s, so its kills land in the back-off;
//    a process that a poison file crashes lives on happily until the file runs again.
//
// So a poison file (one that crashes the process every time it runs) fails after `maxCrashes`
// deaths and the sum of the back-offs between them — no crash loop — while a job killed from
// outside N times only fails if every one of those kills landed while it ran alone, after its
// growing back-off, before its next unit of progress, and never while it waited. A worker-thread
// crash during the job's task is attributed with certainty (the pool sees which task's worker
// died) and fails the job at once (job-runner.ts), without any of this.
//
// Bounds: a count is reset only by real progress (a page stored: finite) or by a death the job had
// no part in, so a poison file takes the process down at most maxCrashes times, plus once if it
// first ran beside other jobs (rule 4), plus once per page it still manages to store.

export interface CrashPolicy {
  /** Counted process deaths (rule 5) after which the job fails. */
  maxCrashes: number;
  /** Back-off before the first re-claim after a counted death; ×6 for each further one. */
  backoffMs: number;
  /** Upper bound of the back-off. */
  maxBackoffMs: number;
}

export const DEFAULT_CRASH_POLICY: CrashPolicy = {
  maxCrashes: 3,
  backoffMs: 5_000,
  maxBackoffMs: 5 * 60_000,
};

/** What the next boot knows about a claim the previous process left Started. */
export interface InterruptedClaim {
  /** How the process holding the claim ended; 'unknown' for claims older than boot tracking. */
  processEnd: 'stopped' | 'died' | 'unknown';
  /** progress_completed rose during the claim. */
  progressed: boolean;
  /** The only job actively running (not waiting for children) when the process ended. */
  alone: boolean;
  /** Counted deaths before this one. */
  crashes: number;
  suspect: boolean;
}

export type Verdict =
  | { action: 'requeue'; crashes: number; suspect: boolean; backoffMs: number; counted: boolean }
  | { action: 'fail'; crashes: number };

export function backoffMs(crashes: number, policy: CrashPolicy): number {
  if (crashes <= 0) return 0;
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 6 ** (crashes - 1));
}

export function judgeInterruptedClaim(c: InterruptedClaim, policy: CrashPolicy): Verdict {
  const keep = { crashes: c.crashes, suspect: c.suspect, backoffMs: 0, counted: false };
  if (c.processEnd !== 'died') return { action: 'requeue', ...keep }; // rule 1
  if (c.progressed)
    return { action: 'requeue', crashes: 0, suspect: false, backoffMs: 0, counted: false }; // rule 2
  if (!c.alone) return { action: 'requeue', ...keep, suspect: true }; // rule 4
  const crashes = c.crashes + 1; // rule 5
  if (crashes >= policy.maxCrashes) return { action: 'fail', crashes };
  return {
    action: 'requeue',
    crashes,
    suspect: true,
    backoffMs: backoffMs(crashes, policy),
    counted: true,
  };
}

/** The `error.detail` of a job failed by rule 5. */
export function processorCrashedDetail(type: string, crashes: number): string {
  return `The file crashed the processor: the service process died ${crashes} times in a row while this ${type} job ran alone without making progress, so it was stopped instead of being retried again. The file is most likely malformed in a way that crashes the renderer; export it again or split it, and upload the new file.`;
}
