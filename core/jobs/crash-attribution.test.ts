// The attribution rule (crash-attribution.ts): restarts with progress never fail a job; only
// deaths while it ran alone without progress count, and a death while it did not run clears them.
import { describe, expect, it } from 'vitest';
import {
  backoffMs,
  DEFAULT_CRASH_POLICY as P,
  judgeInterruptedClaim,
  type InterruptedClaim,
} from './crash-attribution';

const claim = (o: Partial<InterruptedClaim> = {}): InterruptedClaim => ({
  processEnd: 'died',
  progressed: false,
  alone: true,
  crashes: 0,
  suspect: false,
  ...o,
});

/** Plays a job through a series of interrupted claims, as the runner's recovery would. */
function play(claims: Omit<InterruptedClaim, 'crashes' | 'suspect'>[]) {
  let crashes = 0;
  let suspect = false;
  for (const [i, c] of claims.entries()) {
    const v = judgeInterruptedClaim({ ...c, crashes, suspect }, P);
    if (v.action === 'fail') return { failedAt: i + 1, crashes: v.crashes };
    ({ crashes, suspect } = v);
  }
  return { failedAt: null, crashes, suspect };
}

describe('crash attribution', () => {
  it('never fails a job whose claims made progress, however many process deaths', () => {
    const deaths = Array.from({ length: 1000 }, () => ({
      processEnd: 'died' as const,
      progressed: true,
      alone: true,
    }));
    expect(play(deaths)).toEqual({ failedAt: null, crashes: 0, suspect: false });
  });

  it('never fails a job for clean stops, or for deaths while other jobs ran beside it', () => {
    const stops = Array.from({ length: 100 }, () => ({
      processEnd: 'stopped' as const,
      progressed: false,
      alone: true,
    }));
    expect(play(stops).failedAt).toBeNull();
    const shared = Array.from({ length: 100 }, () => ({
      processEnd: 'died' as const,
      progressed: false,
      alone: false,
    }));
    expect(play(shared)).toEqual({ failedAt: null, crashes: 0, suspect: true });
  });

  it('a death with progress in between resets the count: stalls must be consecutive', () => {
    const stall = { processEnd: 'died' as const, progressed: false, alone: true };
    const moved = { processEnd: 'died' as const, progressed: true, alone: true };
    const stop = { processEnd: 'stopped' as const, progressed: false, alone: true };
    // Two stalls, progress, two stalls, a clean stop (neutral), progress, …: never 3 in a row.
    expect(
      play([stall, stall, moved, stall, stall, stop, moved, stall, stall]).failedAt,
    ).toBeNull();
    expect(play([stall, stall, stop, stall]).failedAt).toBe(4); // a clean stop neither counts nor clears
  });

  it('fails a job that took the process down each time it ran alone, after maxCrashes deaths', () => {
    const stall = { processEnd: 'died' as const, progressed: false, alone: true };
    expect(play([stall, stall, stall])).toEqual({ failedAt: 3, crashes: 3 });
    expect(P.maxCrashes).toBe(3);
  });

  it('backs off before re-running a job blamed for a death, longer each time', () => {
    expect(judgeInterruptedClaim(claim(), P)).toEqual({
      action: 'requeue',
      crashes: 1,
      suspect: true,
      backoffMs: 5_000,
      counted: true,
    });
    expect(judgeInterruptedClaim(claim({ crashes: 1, suspect: true }), P)).toMatchObject({
      crashes: 2,
      backoffMs: 30_000,
    });
    expect(backoffMs(0, P)).toBe(0);
    expect(backoffMs(20, P)).toBe(P.maxBackoffMs);
  });

  it('a shared death makes a suspect (run alone next) without counting; progress clears it', () => {
    expect(judgeInterruptedClaim(claim({ alone: false, crashes: 1 }), P)).toEqual({
      action: 'requeue',
      crashes: 1,
      suspect: true,
      backoffMs: 0,
      counted: false,
    });
    expect(
      judgeInterruptedClaim(claim({ progressed: true, crashes: 2, suspect: true }), P),
    ).toMatchObject({ action: 'requeue', crashes: 0, suspect: false });
  });
});
