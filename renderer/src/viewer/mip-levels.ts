// Client-side mip levels for images the service offers only whole. Drawing a 10,000-px sheet
// scaled down to 0.08× on every frame is slow in a software-rasterized canvas; drawing a
// pre-shrunk copy is cheap. Pure helpers here; the loader is in use-image-levels.ts.

/** Widths (px) of the levels to build: halving from the full width until one fits `floor`. */
export function mipWidths(fullWidth: number, floor = 1024): number[] {
  const out: number[] = [];
  let w = Math.floor(fullWidth / 2);
  while (w >= floor / 2 && out.length < 6) {
    out.push(w);
    if (w <= floor) break;
    w = Math.floor(w / 2);
  }
  return out;
}

/**
 * The level to draw: the smallest one whose width still covers the on-screen size, i.e.
 * level width ≥ fullWidth × scale × dpr. `widths` ascending or not; returns -1 for full size.
 */
export function pickLevel(
  widths: readonly number[],
  fullWidth: number,
  scale: number,
  dpr = 1,
): number {
  const needed = fullWidth * scale * dpr;
  let best = -1;
  let bestW = Infinity;
  widths.forEach((w, i) => {
    if (w >= needed && w < bestW) {
      best = i;
      bestW = w;
    }
  });
  return best;
}
