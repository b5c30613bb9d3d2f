// sharp adapter for registration's ink levels: the box shrink of a decoded sheet runs inside libvips
// (a libuv thread), so JS packs masks meanwhile. Used by compare-pipeline.adapter.ts and by the compare
// workers' sheet registration (core/jobs/compare-tasks.ts).
import sharp from 'sharp';
import type { GreyImage } from '../types';
import type { InkLevel } from './register';

/**
 * Ink level of `img` at factor f made by libvips: the image cropped to whole f x f cells (the last
 * partial row/column of cells is left out — registration does not need it) and shrunk by exactly f, so
 * level pixel u has its centre at full x = f·u + (f − 1)/2 as inkDownsample's. Ink = 255 − grey.
 * libvips shrinks by an integer box and finishes with the kernel (not a pure box: measured on the
 * bench sheet at f = 8, mean |difference| to inkDownsample ≈ 1.1 of 255 with 'cubic', the closest);
 * that only smooths the level, which the full-resolution round does not use.
 * The inversion and the cast to float are done by libvips too (`negate`, float raw output): a JS loop
 * over the level's ~0.5 M pixels ran cold (interpreted) in a one-shot process.
 */
export async function inkLevelVips(img: GreyImage, f: number): Promise<InkLevel> {
  const w = Math.floor(img.width / f),
    h = Math.floor(img.height / f);
  if (w < 1 || h < 1) throw new Error(`Image ${img.width}x${img.height} is smaller than f=${f}`);
  // A Buffer over exactly the image bytes (sharp reads a typed array's whole ArrayBuffer otherwise).
  const buf = Buffer.from(img.data.buffer, img.data.byteOffset, img.width * img.height);
  const { data, info } = await sharp(buf, {
    raw: { width: img.width, height: img.height, channels: 1 },
  })
    .extract({ left: 0, top: 0, width: w * f, height: h * f })
    .resize(w, h, { kernel: 'cubic' })
    // Without this sharp hands back 3 channels.
    .toColourspace('b-w')
    .negate()
    .raw({ depth: 'float' })
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1 || data.length !== w * h * 4)
    throw new Error(
      `Expected a ${w}x${h} 1-channel float level but sharp returned ${info.width}x${info.height}x${info.channels}, ${data.length} bytes`,
    );
  const out =
    data.byteOffset % 4 === 0
      ? new Float32Array(data.buffer, data.byteOffset, w * h)
      : new Float32Array(new Uint8Array(data).buffer);
  return { width: w, height: h, data: out, f };
}
