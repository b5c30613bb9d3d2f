import type { PageRaster } from '../types';

/** Share of dark pixels (grey < 128) of `r` inside box `b` (clipped to the raster); 0 for an empty box. */
export function darkFractionIn(
  r: PageRaster,
  b: { x: number; y: number; width: number; height: number },
): number {
  const x0 = Math.max(0, Math.floor(b.x));
  const y0 = Math.max(0, Math.floor(b.y));
  const x1 = Math.min(r.width, Math.ceil(b.x + b.width));
  const y1 = Math.min(r.height, Math.ceil(b.y + b.height));
  let n = 0;
  let dark = 0;
  for (let y = y0; y < y1; y++) {
    for (let x = x0; x < x1; x++) {
      n++;
      if (r.data[y * r.width + x]! < 128) dark++;
    }
  }
  return n === 0 ? 0 : dark / n;
}
