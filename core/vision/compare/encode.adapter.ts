// Image codecs of the compare engine: sharp decodes to 1-channel grey and encodes grey PNGs; overlays
// are 4- or 2-bit palette PNGs written here (node:zlib deflates the scanlines, no RGB image is made).
// Hot path: PNG compression level 1 (3–5x faster than 6, files ~2.7x bigger; see performance-anchors §4).
import { OBJECT_GREY } from './layers';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import sharp from 'sharp';
import type { GreyImage } from '../types';
import type { IndexedOverlay } from './diff';
import { rgbToGrey } from '../input/grey-resample';

const deflateAsync = promisify(zlib.deflate);

/**
 * Decode any image sharp reads to an 8-bit 1-channel grey image. `toColourspace('b-w')` matters: without it
 * sharp hands back 3-channel sRGB (3x the bytes and ~3x slower).
 *
 * A colour image (a sheet stored in colour, ingest-page.ts) is decoded as RGB and made grey with
 * PDFium's weights (rgbToGrey), not libvips' b-w: that is the grey the page was derived to at ingest
 * from the same pixels, so the comparison sees exactly the grey the ingest read.
 */
export async function decodeGrey(
  input: string | Buffer,
  opts: { keepRgb?: boolean } = {},
): Promise<GreyImage & { rgb?: Uint8Array }> {
  const image = sharp(input);
  const { channels } = await image.metadata();
  if (channels !== undefined && channels >= 3) {
    const { data, info } = await image.removeAlpha().raw().toBuffer({ resolveWithObject: true });
    if (info.channels !== 3)
      throw new Error(`Expected a 3-channel decode but sharp returned ${info.channels} channels`);
    return {
      width: info.width,
      height: info.height,
      data: rgbToGrey(data, info.width * info.height),
      // With keepRgb, the colour pixels too (R G B): for images shown in colour (align-colour.ts).
      ...(opts.keepRgb ? { rgb: new Uint8Array(data.buffer, data.byteOffset, data.length) } : {}),
    };
  }
  const { data, info } = await image
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

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Uint8Array, crc?: number): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const tail = Buffer.alloc(4);
  // The CRC covers the type and the data.
  tail.writeUInt32BE(crc ?? zlib.crc32(data, zlib.crc32(head.subarray(4))), 0);
  return Buffer.concat([head, data, tail]);
}

/**
 * Encode an indexed overlay (diff.ts renderOverlayIndexed: palette indices in PNG scanlines) as one PNG
 * per palette given (colour type 3, the overlay's bit depth): the scanlines are deflated once (zlib on
 * a libuv thread) and each PNG differs only in its PLTE chunk. A 4–5-colour overlay needs no RGB image:
 * 1/6 (combined) or 1/12 of the bytes to deflate, and the files decode to the same pixels as an RGB PNG
 * of renderOverlay.
 */
export async function encodeIndexedPngs(
  img: Omit<IndexedOverlay, 'bitDepth'> & { bitDepth: 1 | 2 | 4 },
  palettes: [number, number, number][][],
  opts: PngOptions = {},
): Promise<Buffer[]> {
  const { width, height, bitDepth, rowBytes, data } = img;
  const want = 1 + Math.ceil((width * bitDepth) / 8);
  if (rowBytes !== want || data.length < rowBytes * height)
    throw new Error(
      `Expected ${height} scanlines of ${want} bytes for a ${width}x${height} ${bitDepth}-bit image`,
    );
  for (const p of palettes)
    if (p.length < 1 || p.length > 1 << bitDepth)
      throw new Error(
        `Expected 1–${1 << bitDepth} palette entries for a ${bitDepth}-bit PNG but received ${p.length}`,
      );
  const level = opts.compressionLevel ?? 1;
  // At level ≤ 1, run-length matches only (Z_RLE): overlays are long runs of paper with ink in short
  // runs, and RLE deflated the bench's 200/300 DPI overlays 20–30 % faster than level 1's default
  // strategy at a size within 10 % (bench/compare README, indexed-overlay slice).
  // Output in 256 KiB chunks instead of zlib's 16 KiB: each chunk is a round trip between the libuv
  // thread and the main thread (a 200 dpi combined overlay deflates to ~0.5 MB). Same bytes.
  const idat = await deflateAsync(data.subarray(0, rowBytes * height), {
    level,
    chunkSize: 1 << 18,
    ...(level <= 1 && level > 0 ? { strategy: zlib.constants.Z_RLE } : {}),
  });
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = 3; // colour type: palette
  // compression 0, filter method 0, no interlace
  const head = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr)]);
  const idatChunk = pngChunk('IDAT', idat);
  const iend = pngChunk('IEND', new Uint8Array(0));
  return palettes.map((p) =>
    Buffer.concat([head, pngChunk('PLTE', Uint8Array.from(p.flat())), idatChunk, iend]),
  );
}

/**
 * A page's line work (PageRaster.lineWork: 1-bit PNG scanlines, 1 = line work) as a 1-bit palette PNG
 * (black line work on white), which decodeGrey reads back as 0 / 255. With the page's fill layer
 * or annotations by object (PageRaster.fillWork / annotWork, same layout), a 2-bit palette PNG of
 * the four classes instead, read back as the greys of OBJECT_GREY: line work, else annotation, else
 * fill, else paper (annotations are drawn over the page; line work drawn over a fill is line work).
 */
export async function encodeLineWorkPng(
  width: number,
  height: number,
  rows: Uint8Array,
  extra: { fills?: Uint8Array; annotations?: Uint8Array } = {},
  opts: PngOptions = {},
): Promise<Buffer> {
  const { fills, annotations } = extra;
  if (!fills && !annotations) {
    const img = {
      width,
      height,
      bitDepth: 1 as const,
      rowBytes: 1 + Math.ceil(width / 8),
      data: rows,
    };
    const [png] = await encodeIndexedPngs(
      img,
      [
        [
          [255, 255, 255],
          [0, 0, 0],
        ],
      ],
      opts,
    );
    return png!;
  }
  const rb1 = 1 + Math.ceil(width / 8),
    rb2 = 1 + Math.ceil(width / 4);
  for (const m of [rows, fills, annotations])
    if (m && m.length < rb1 * height)
      throw new Error(
        `Expected ${height} scanlines of ${rb1} bytes for a ${width}x${height} object mask but received ${m.length} bytes`,
      );
  const data = new Uint8Array(rb2 * height);
  for (let y = 0; y < height; y++) {
    const o1 = y * rb1 + 1,
      o2 = y * rb2 + 1;
    for (let k = 0; k < rb1 - 1; k++) {
      const l = rows[o1 + k]!,
        a = annotations ? annotations[o1 + k]! & ~l : 0,
        f = fills ? fills[o1 + k]! & ~l & ~a : 0;
      if ((l | a | f) === 0) continue;
      // 8 pixels of 1 bit → 8 pixels of 2 bits (two bytes): line 1, fill 2, annotation 3.
      let v = 0;
      for (let j = 0; j < 8; j++) {
        const bit = 0x80 >> j;
        const c = l & bit ? 1 : a & bit ? 3 : f & bit ? 2 : 0;
        v = (v << 2) | c;
      }
      data[o2 + 2 * k] = v >>> 8;
      if (2 * k + 1 < rb2 - 1) data[o2 + 2 * k + 1] = v & 0xff;
    }
  }
  const g = (v: number): [number, number, number] => [v, v, v];
  const [png] = await encodeIndexedPngs(
    { width, height, bitDepth: 2, rowBytes: rb2, data },
    [[g(OBJECT_GREY.paper), g(OBJECT_GREY.line), g(OBJECT_GREY.fill), g(OBJECT_GREY.annotation)]],
    opts,
  );
  return png!;
}
