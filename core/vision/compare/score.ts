// What a similarity score may say once change regions are known. The score (1 − changed ink / union
// ink after alignment, diff.ts) is a ratio over the whole overlay: one changed dimension string on a
// 34x22 sheet is a few hundred pixels of millions of inked ones, and its score rounds to 1.000 —
// which reads "identical" beside a change a reviewer must see. So a score whose overlay has a change
// that is not noise is held below what rounds to 1 at three decimals; an overlay with none keeps its
// score (a pixel-identical pair scores exactly 1). The rule for noise lives here too, so that the
// compare worker (which finds regions while it encodes) and change detection (which stores them)
// decide alike.

/** Regions with fewer changed pixels than this are noise (anti-alias ghosts, specks). */
export const NOISE_AREA_PX = 60;
/** Regions less sure than this are noise. */
export const NOISE_CONFIDENCE = 0.2;

/** The highest score of an overlay with a change that is not noise: 0.999 (three decimals). */
export const CHANGED_SCORE_MAX = 0.999;

/** Fill changes (layers.ts) with fewer changed pixels than this are noise (a fill's edge moved a pixel). */
export const NOISE_FILL_PX = 400;

/** Whether a change region is noise (too small or too unsure to show a reviewer). */
export function isNoise(region: { area_px: number; confidence: number; layer?: string }): boolean {
  return (
    region.area_px < (region.layer === 'fill' ? NOISE_FILL_PX : NOISE_AREA_PX) ||
    region.confidence < NOISE_CONFIDENCE
  );
}

/** The score to store and show, given whether the overlay has a change that is not noise. */
export function reportedScore(score: number, hasRealChange: boolean): number {
  return hasRealChange ? Math.min(score, CHANGED_SCORE_MAX) : score;
}
