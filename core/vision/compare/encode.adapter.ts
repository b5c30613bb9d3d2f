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

/**
 * A white (255) RGB image of width x height, made on a libvips thread: one white pixel extended by
 * copying. A fresh 90 MB buffer costs ~40 ms of first-touch page faults on the thread that first writes
 * it (performance-anchors §3: memset-bound); made here, that cost lands on a libuv thread while JS
 * registers and diffs, and renderOverlay(…, outIsWhite) then writes only the ink. Null when libvips
 * returned something else (the caller renders into a fresh buffer then).
 */
export async function whiteRgb(width: number, height: number): Promise<Uint8Array | null> {
  const buf = await sharp(Buffer.from([255, 255, 255]), {
    raw: { width: 1, height: 1, channels: 3 },
  })
    .extend({ right: width - 1, bottom: height - 1, extendWith: 'copy' })
    .raw()
    .toBuffer();
  const n = width * height * 3;
  if (buf.length !== n || buf[0] !== 255 || buf[n - 1] !== 255) return null;
  return new Uint8Array(buf.buffer, buf.byteOffset, n);
}
