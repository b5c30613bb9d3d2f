// The aligned B image in colour, for the viewer's New mode (issue 17 item 6): when B's sheet is
// stored in colour (ingest-page.ts), the overlay's `aligned_b` image is B resampled into A's frame
// from B's colour pixels, the same mapping alignGrey applies to its grey (diff.ts): nearest pixel,
// or, where B is drawn at a larger scale (another paper size), the darkest pixel of each output
// pixel's footprint so one-pixel lines survive the reduction. Outside B is white paper. The
// comparison itself never reads these pixels.
import sharp from 'sharp';
import { invertAffine, type Affine } from './register';

export interface RgbImage {
  width: number;
  height: number;
  /** R G B, 3 bytes a pixel, rows without padding. */
  data: Uint8Array;
}

/**
 * B (`src`) drawn into an `outW` x `outH` frame through `transform` (B pixels → output pixels).
 * Below `darkestBelow` scale (B → output), each output pixel takes the darkest pixel (by grey) of its
 * f x f footprint, f = round(1 / scale) up to 4, as alignGrey does for the comparison's grey.
 */
export function alignRgb(
  src: RgbImage,
  transform: readonly number[],
  outW: number,
  outH: number,
  darkestBelow = 0.75,
): RgbImage {
  const out = new Uint8Array(outW * outH * 3).fill(255);
  const [ia, ib, ic, id, ie, iF] = invertAffine(transform as Affine);
  const { width: SW, height: SH, data: s } = src;
  const scale = Math.sqrt(Math.abs(transform[0]! * transform[4]! - transform[1]! * transform[3]!));
  const f = scale < darkestBelow ? Math.min(4, Math.max(1, Math.round(1 / scale))) : 1;
  const half = f / 2;
  for (let y = 0; y < outH; y++) {
    const rx = ib * y + ic;
    const ry = ie * y + iF;
    let o = y * outW * 3;
    for (let x = 0; x < outW; x++, o += 3) {
      if (f === 1) {
        // alignGrey's nearest pixel: the mapped position rounded.
        const u = Math.floor(rx + ia * x + 0.5);
        const v = Math.floor(ry + id * x + 0.5);
        if (u < 0 || v < 0 || u >= SW || v >= SH) continue;
        const p = (v * SW + u) * 3;
        out[o] = s[p]!;
        out[o + 1] = s[p + 1]!;
        out[o + 2] = s[p + 2]!;
        continue;
      }
      const sx0 = Math.ceil(rx + ia * x - half);
      const sy0 = Math.ceil(ry + id * x - half);
      let best = -1;
      let lum = 256 * 100;
      for (let yy = Math.max(0, sy0); yy < Math.min(SH, sy0 + f); yy++) {
        for (let xx = Math.max(0, sx0); xx < Math.min(SW, sx0 + f); xx++) {
          const p = (yy * SW + xx) * 3;
          const l = s[p]! * 30 + s[p + 1]! * 59 + s[p + 2]! * 11;
          if (l < lum) {
            lum = l;
            best = p;
          }
        }
      }
      if (best < 0) continue;
      out[o] = s[best]!;
      out[o + 1] = s[best + 1]!;
      out[o + 2] = s[best + 2]!;
    }
  }
  return { width: outW, height: outH, data: out };
}

/** An RGB image as a PNG (compression level 1: the interactive path, as the grey images). */
export function encodeRgbPng(img: RgbImage): Promise<Buffer> {
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
}
