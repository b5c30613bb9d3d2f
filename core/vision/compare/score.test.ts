import { describe, expect, it } from 'vitest';
import { CHANGED_SCORE_MAX, isNoise, reportedScore } from './score';

describe('reportedScore', () => {
  it('never lets an overlay with a real change read 1.000 at three decimals', () => {
    // 400 changed px of 3 M inked ones: 0.99987, which toFixed(3) shows as "1.000".
    const raw = 1 - 400 / 3_000_000;
    expect(raw.toFixed(3)).toBe('1.000');
    expect(reportedScore(raw, true).toFixed(3)).toBe('0.999');
    expect(reportedScore(1, true)).toBe(CHANGED_SCORE_MAX);
    // Lower scores are what they are; without a real change nothing is touched.
    expect(reportedScore(0.93, true)).toBe(0.93);
    expect(reportedScore(raw, false)).toBe(raw);
    expect(reportedScore(1, false)).toBe(1);
  });

  it('calls a region noise when it is small or unsure', () => {
    expect(isNoise({ area_px: 59, confidence: 0.9 })).toBe(true);
    expect(isNoise({ area_px: 600, confidence: 0.19 })).toBe(true);
    expect(isNoise({ area_px: 60, confidence: 0.2 })).toBe(false);
  });
});
