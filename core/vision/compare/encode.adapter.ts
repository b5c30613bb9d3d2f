// sharp adapter for the compare engine: PNG decode to 1-channel grey and fast PNG encode of overlays.
// Hot path: PNG compression level 1 (3–5x faster than 6, files ~2.7x bigger; see performance-anchors §4).
import sharp from 'sharp';
import type { GreyImage } from '../types';
import type { RgbImage } from './diff';

/**
 * Decode any image sharp reads to an 8-bit 1-channel grey image. `toColourspace('b-w')` matters: without it
 * sharp hands back 3-channel sRGB (3x the bytes and ~3x slower).
 */
export async function decodeGrey(input: string | Buffer): Promise<GreyImage> {
  const { data, info } = await sharp(input)
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 1)
    throw new Error(`Expected a 1-channel decode but sharp returned ${info.channels} channels`);
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
  };
}

export interface PngOptions {
  /** zlib level 0–9; default 1 for the interactive path (use 6 for background storage). */
  compressionLevel?: number;
}

/** Encode an RGB overlay as a 3-channel PNG. */
export async function encodeRgbPng(img: RgbImage, opts: PngOptions = {}): Promise<Buffer> {
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: 3 } })
    .png({ compressionLevel: opts.compressionLevel ?? 1, adaptiveFiltering: false })
    .toBuffer();
}

/**
 * Encode a grey image as a 1-channel PNG. Without `toColourspace('b-w')` sharp would write a 3-channel
 * sRGB PNG (3x larger, ~10x slower to encode).
 */
export async function encodeGreyPng(img: GreyImage, opts: PngOptions = {}): Promise<Buffer> {
  return sharp(img.data, { raw: { width: img.width, height: img.height, channels: 1 } })
    .toColourspace('b-w')
    .png({ compressionLevel: opts.compressionLevel ?? 1, adaptiveFiltering: false })
    .toBuffer();
}
