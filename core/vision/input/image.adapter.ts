// Raster inputs (PNG, JPEG, TIFF incl. multi-page) via sharp/libvips.
//
// Sizes are read from the header with metadata() (no pixel decoding) and checked against the per-page pixel
// limit first; decoding then runs with limitInputPixels as a second guard, so an image that lies about its
// size can never allocate more than the limit. A raster comes out at the image's own resolution: `dpi`
// is the file's declared density, DEFAULT_IMAGE_DPI when it declares none.

import sharp, { type Sharp } from 'sharp';
import type { PageRaster, TextItem } from '../types';
import {
  InputError,
  type InputLimits,
  mp,
  pageTooLarge,
  resolveLimits,
  withTimeout,
} from './input-errors';
import type { PageInfo } from './pdf.adapter';
import { greyFromRgb, keepsColour } from './pdfium.adapter';

/** Assumed resolution of an image that declares none (a typical office scan setting). */
export const DEFAULT_IMAGE_DPI = 150;

/**
 * Deflate (PNG, TIFF/zip) cannot compress better than ~1032:1, so an image whose declared raw size is more
 * than this many times its file size cannot hold honest pixel data: a decompression bomb or a lying header.
 */
const MAX_PLAUSIBLE_RATIO = 1100;

export type ImageFormat = 'png' | 'jpeg' | 'tiff';

export interface ImageDocumentHandle {
  readonly format: ImageFormat;
  readonly pageCount: number;
  pageInfo(index: number): Promise<PageInfo & { widthPx: number; heightPx: number; dpi: number }>;
  /**
   * Grey raster at the image's own resolution (no resampling); `dpi` is the declared density. With
   * `colour`, an image with colour channels keeps its colour as PDF renders do (pdfium.adapter.ts
   * `colour`): the raster carries `rgb` and `colourPixels`, and its grey is derived from those pixels
   * with PDFium's weights (greyFromRgb: the grey a stored colour sheet decodes back to); an image of
   * next to no coloured pixels stays grey, exactly as without the option.
   */
  renderPage(index: number, opts?: { maxPixels?: number; colour?: boolean }): Promise<PageRaster>;
  /** Raster images carry no text layer. */
  pageText(index: number): Promise<TextItem[]>;
  close(): Promise<void>;
}

interface PageMeta {
  width: number;
  height: number;
  dpi: number;
  /** Channels as stored, alpha included (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA or CMYK). */
  channels: number;
  /** Declared raw size in bytes (all channels, declared bit depth). */
  rawBytes: number;
}

const BITS: Record<string, number> = {
  uchar: 8,
  char: 8,
  ushort: 16,
  short: 16,
  uint: 32,
  int: 32,
  float: 32,
  complex: 64,
  double: 64,
  dpcomplex: 128,
};

function mapSharpError(e: unknown, format: ImageFormat, pageIndex?: number): InputError {
  if (e instanceof InputError) return e;
  const msg = String((e as { message?: string } | null)?.message ?? e);
  const opts = pageIndex === undefined ? { cause: e } : { cause: e, pageIndex };
  const name = format.toUpperCase();
  if (/pixel limit/i.test(msg)) {
    return new InputError(
      'decompression_bomb',
      `The ${name} image decodes to more pixels than the per-page limit allows. Reduce its resolution and upload it again.`,
      opts,
    );
  }
  if (
    /premature end|truncat|unexpected end|end of (file|stream|data)|not enough|short read|read error/i.test(
      msg,
    )
  ) {
    return new InputError(
      'truncated_file',
      `The ${name} image ends before all of its pixel data, so it was cut off, probably during download or upload. Upload the complete file again.`,
      opts,
    );
  }
  return new InputError(
    'corrupt_file',
    `The ${name} image could not be decoded; its data is damaged. Export or scan it again and upload the new file.`,
    opts,
  );
}

/**
 * An image page decoded in colour (8-bit sRGB, flattened onto white) and its grey derived from the
 * same pixels (greyFromRgb), or undefined when next to none of its pixels are coloured (keepsColour):
 * the caller then decodes it grey as before.
 */
async function decodeColour(
  page: () => Sharp,
  decode: <T>(what: Promise<T>) => Promise<T>,
): Promise<Pick<PageRaster, 'width' | 'height' | 'data' | 'rgb' | 'colourPixels'> | undefined> {
  const { data, info } = await decode(
    page()
      .toColourspace('srgb')
      .removeAlpha()
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true }),
  );
  if (info.channels !== 3) return undefined;
  const n = info.width * info.height;
  const rgb = new Uint8Array(data.buffer, data.byteOffset, n * 3);
  const grey = new Uint8Array(n);
  const colourPixels = greyFromRgb(rgb, grey, 0, n);
  if (!keepsColour(colourPixels)) return undefined;
  return { width: info.width, height: info.height, data: grey, rgb, colourPixels };
}

export async function openImage(
  bytes: Uint8Array,
  format: ImageFormat,
  opts: InputLimits = {},
): Promise<ImageDocumentHandle> {
  const limits = resolveLimits(opts);
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const readMeta = async (page: number): Promise<PageMeta> => {
    // Header only: libvips parses the IHDR/SOF/IFD without decoding pixel data.
    const m = await sharp(input, { page, limitInputPixels: false, failOn: 'none' }).metadata();
    if (!m.width || !m.height)
      throw new InputError(
        'corrupt_file',
        `The ${format.toUpperCase()} image has no readable size in its header. Export it again and upload the new file.`,
      );
    // A density below 10 ppi is a placeholder (e.g. "1 pixel per unit"), not a scan resolution.
    const dpi =
      m.density !== undefined && m.density >= 10 ? Math.round(m.density) : DEFAULT_IMAGE_DPI;
    const bits = (BITS[m.depth ?? 'uchar'] ?? 8) * (m.channels ?? 1);
    // EXIF orientations 5-8 are quarter turns: report the size as displayed (autoOrient() at render).
    const turned = (m.orientation ?? 1) >= 5;
    return {
      width: turned ? m.height : m.width,
      height: turned ? m.width : m.height,
      dpi,
      channels: m.channels ?? 1,
      rawBytes: (m.width * m.height * bits) / 8,
    };
  };

  let first: PageMeta;
  let pageCount: number;
  try {
    const m0 = await withTimeout(
      sharp(input, { limitInputPixels: false, failOn: 'none' }).metadata(),
      limits.openTimeoutMs,
      `Reading the ${format.toUpperCase()} header`,
    );
    pageCount = format === 'tiff' ? Math.max(1, m0.pages ?? 1) : 1;
    first = await readMeta(0);
  } catch (e) {
    throw mapSharpError(e, format);
  }
  if (pageCount > limits.maxPages) {
    throw new InputError(
      'too_many_pages',
      `The TIFF has ${pageCount} pages; the limit is ${limits.maxPages} pages per drawing. Split it into smaller files and upload each.`,
    );
  }
  const metas = new Map<number, PageMeta>([[0, first]]);
  const meta = async (index: number): Promise<PageMeta> => {
    if (!Number.isInteger(index) || index < 0 || index >= pageCount) {
      throw new RangeError(`Page index ${index} is out of range 0..${pageCount - 1}`);
    }
    let m = metas.get(index);
    if (!m) {
      try {
        m = await readMeta(index);
      } catch (e) {
        throw mapSharpError(e, format, index);
      }
      metas.set(index, m);
    }
    return m;
  };
  /** The size refusal, shared by open (page 0) and render. */
  const checkSize = (m: PageMeta, index: number, maxPixels: number) => {
    const pixels = m.width * m.height;
    if (pixels <= maxPixels) return;
    if (m.rawBytes > bytes.byteLength * MAX_PLAUSIBLE_RATIO) {
      throw new InputError(
        'decompression_bomb',
        `Page ${index + 1} of the ${format.toUpperCase()} image declares ${m.width} x ${m.height} px (${mp(pixels)}) but the file is only ` +
          `${bytes.byteLength} bytes, which cannot hold that many pixels: the file is malformed or a decompression bomb, so it was not decoded. ` +
          `The limit is ${mp(maxPixels)} per page.`,
        { pageIndex: index },
      );
    }
    throw pageTooLarge({
      pageIndex: index,
      widthIn: m.width / m.dpi,
      heightIn: m.height / m.dpi,
      dpi: m.dpi,
      widthPx: m.width,
      heightPx: m.height,
      maxPixels,
    });
  };
  // Refuse a single-page bomb at open time, like a PDF's page count: nothing else can be done with it.
  if (pageCount === 1) checkSize(first, 0, limits.maxPixels);

  let closed = false;
  return {
    format,
    pageCount,
    async pageInfo(index) {
      const m = await meta(index);
      return {
        widthPt: (m.width / m.dpi) * 72,
        heightPt: (m.height / m.dpi) * 72,
        rotate: 0, // EXIF orientation is already applied to the sizes (and by autoOrient() to the raster)
        widthPx: m.width,
        heightPx: m.height,
        dpi: m.dpi,
      };
    },
    async renderPage(index, o = {}) {
      if (closed) throw new Error('ImageDocumentHandle used after close()');
      const maxPixels = o.maxPixels ?? limits.maxPixels;
      const m = await meta(index);
      checkSize(m, index, maxPixels);
      const decode = <T>(what: Promise<T>) =>
        withTimeout(
          what,
          limits.pageTimeoutMs,
          `Decoding page ${index + 1} of the ${format.toUpperCase()} image`,
          undefined,
          index,
        );
      try {
        const page = () =>
          sharp(input, { page: index, limitInputPixels: maxPixels, failOn: 'error' })
            .autoOrient()
            // Transparent areas are paper: flatten onto white before dropping to one channel.
            .flatten({ background: '#ffffff' });
        if (o.colour && m.channels >= 3) {
          const colour = await decodeColour(page, decode);
          if (colour) {
            return {
              ...colour,
              dpi: m.dpi,
              index,
              widthPt: (colour.width / m.dpi) * 72,
              heightPt: (colour.height / m.dpi) * 72,
            };
          }
        }
        const { data, info } = await decode(
          page().toColourspace('b-w').raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true }),
        );
        let grey = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
        if (info.channels !== 1) {
          const n = info.width * info.height;
          const g = new Uint8Array(n);
          for (let i = 0, j = 0; i < n; i++, j += info.channels) g[i] = grey[j]!;
          grey = g;
        }
        return {
          width: info.width,
          height: info.height,
          data: grey,
          dpi: m.dpi,
          index,
          widthPt: (info.width / m.dpi) * 72,
          heightPt: (info.height / m.dpi) * 72,
        };
      } catch (e) {
        throw mapSharpError(e, format, index);
      }
    },
    async pageText() {
      return [];
    },
    async close() {
      closed = true;
    },
  };
}
