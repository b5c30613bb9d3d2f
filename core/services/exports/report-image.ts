import { readFile } from 'node:fs/promises';
import { deflateSync, inflateSync } from 'node:zlib';
import sharp from 'sharp';

// The overlay image of a report page, ready to be a PDF image XObject without decoding it in
// JavaScript: PNG scanlines are exactly what a PDF FlateDecode stream with PNG predictors
// (/Predictor 15) holds, and an indexed PNG's palette is an /Indexed colour space. The stored
// overlays are 4–5-colour indexed PNGs deflated fast (level 1, RLE: see encode.adapter.ts); here
// they are deflated again at level 9, about a third smaller, which is what a report that is mailed
// around wants. Runs in a worker thread (export.reportImage): inflate and deflate are CPU work.

export interface PdfImage {
  width: number;
  height: number;
  bitDepth: number;
  /** 1 grey, 3 RGB, or 1 with `palette` (indexed). */
  colors: 1 | 3;
  /** RGB triples of an indexed image. */
  palette: Uint8Array | null;
  /** zlib stream of PNG-filtered scanlines. */
  data: Uint8Array;
}

/** Longest side of a report image: 300 dpi across 17 in, the long side of an 11x17 print. */
export const REPORT_IMAGE_MAX_SIDE = 5100;

/** Splits a non-interlaced PNG into what a PDF image needs. */
export function pngToPdfImage(png: Uint8Array): PdfImage {
  const buf = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (buf.readUInt32BE(0) !== 0x89504e47) throw new Error('Not a PNG');
  let off = 8;
  let width = 0,
    height = 0,
    bitDepth = 0,
    colorType = -1,
    interlace = 0;
  let palette: Uint8Array | null = null;
  const idat: Buffer[] = [];
  while (off + 8 <= buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const body = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      bitDepth = body[8]!;
      colorType = body[9]!;
      interlace = body[12]!;
    } else if (type === 'PLTE') palette = new Uint8Array(body);
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  if (interlace !== 0) throw new Error('Interlaced PNGs are not embedded as they are');
  if (colorType !== 0 && colorType !== 2 && colorType !== 3)
    throw new Error(`PNG colour type ${colorType} (with alpha) is not embedded as it is`);
  if (colorType === 3 && !palette) throw new Error('Indexed PNG without a palette');
  return {
    width,
    height,
    bitDepth,
    colors: colorType === 2 ? 3 : 1,
    palette: colorType === 3 ? palette : null,
    data: new Uint8Array(Buffer.concat(idat)),
  };
}

/**
 * The overlay image at `path` for a report page: as stored when it fits REPORT_IMAGE_MAX_SIDE
 * (re-deflated harder), else resampled to fit and quantised back to a few colours without
 * dithering (dithering speckles thin lines).
 */
export async function prepareReportImage(path: string): Promise<PdfImage> {
  const meta = await sharp(path).metadata();
  const w = meta.width ?? 0;
  const h = meta.height ?? 0;
  let png: Buffer;
  // Stored overlays are PNGs without alpha or interlace; anything else goes through libvips too.
  if (
    meta.format !== 'png' ||
    Math.max(w, h) > REPORT_IMAGE_MAX_SIDE ||
    meta.isProgressive ||
    meta.hasAlpha
  ) {
    png = await sharp(path)
      .flatten({ background: '#ffffff' })
      .resize({
        width: REPORT_IMAGE_MAX_SIDE,
        height: REPORT_IMAGE_MAX_SIDE,
        fit: 'inside',
        withoutEnlargement: true,
      })
      .png({ palette: true, colours: 16, dither: 0, compressionLevel: 9 })
      .toBuffer();
  } else {
    png = await readFile(path);
  }
  const img = pngToPdfImage(png);
  return { ...img, data: new Uint8Array(deflateSync(inflateSync(img.data), { level: 9 })) };
}
