// PDF input via pdf.js (pdfjs-dist 5.6, legacy build for Node 20) rendering into @napi-rs/canvas (Skia).
//
// Streaming: a handle keeps only the parsed document; each renderPage() allocates one canvas, reads it
// back as grey, frees the canvas and calls page.cleanup(), so peak memory is about one page's RGBA canvas
// (4 B/px) plus its grey copy (1 B/px): ~140 MB for a 34x22 in sheet at 200 dpi.
//
// Units: page sizes in PDF points (1/72 in) after /Rotate, crop box and /UserUnit; rasters and text boxes
// in sheet pixels at the requested dpi, origin top-left, x right, y down.

import { createRequire } from 'node:module';
import path from 'node:path';
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PageRaster, TextItem } from '../types';
import {
  InputError,
  type InputLimits,
  pageTooLarge,
  resolveLimits,
  withTimeout,
} from './input-errors';

/**
 * Default render resolution for review of 24x36 in (and 22x34 in) sheets, in dots per inch.
 *
 * Why 200:
 *  - Thin lines. CAD "fine" pens are 0.13-0.18 mm (0.005-0.007 in). At 150 dpi that is 0.75-1.05 px, so a
 *    hairline straddling two pixel columns renders as two light-grey columns (~50-60 % ink each) that
 *    fall apart under any binarisation and merge with neighbours in hatches; at 200 dpi it is 1.0-1.4 px
 *    and keeps a dark core; 300 dpi (1.5-2.1 px) is crisp but gains little for change detection
 *    (measured on beam proposal S101, see bench/ingest/README.md: dark-pixel ratio of thin-line areas).
 *    Text: 3/32 in (2.4 mm) lettering, the smallest on drawings, is 14 px tall at 150, 19 px at 200,
 *    28 px at 300; 19 px is comfortably legible on screen and for OCR.
 *  - Memory. A 36x24 in sheet is 5400x3600 = 19.4 MP at 150, 7200x4800 = 34.6 MP at 200 and
 *    10800x7200 = 77.8 MP at 300. The render canvas is RGBA (4 B/px): 78 / 138 / 311 MB per page, plus
 *    1 B/px grey, and a comparison holds two sheets and an overlay. 300 dpi would push a compare past
 *    ~1 GB; 200 stays well under the 1.5 GiB budget.
 *  - Time. Rasterising and every later per-pixel step (alignment, diff, encode) scale with pixel count:
 *    200 dpi costs ~1.8x 150 dpi, 300 dpi costs ~4x 150 dpi.
 * Configurable per call (`renderPage(i, { dpi })`) as the contract requires.
 */
export const DEFAULT_DPI = 200;

export interface PageInfo {
  /** Page width and height in PDF points after /Rotate, crop box and /UserUnit (as printed). */
  widthPt: number;
  heightPt: number;
  /** The page's /Rotate, normalised to 0, 90, 180 or 270. */
  rotate: number;
}

export interface RenderOptions {
  dpi?: number;
  /** Refuse (before rendering) when width x height at this dpi exceeds this; default from the open limits. */
  maxPixels?: number;
}

export interface PdfDocumentHandle {
  readonly pageCount: number;
  pageInfo(index: number): Promise<PageInfo>;
  renderPage(index: number, opts?: RenderOptions): Promise<PageRaster>;
  pageText(index: number, dpi?: number): Promise<TextItem[]>;
  close(): Promise<void>;
}

type PdfJs = typeof PdfJsModule;

let pdfjsPromise: Promise<PdfJs> | undefined;
/** Loaded on first use: the module takes ~0.3 s to compile and image-only inputs never need it. */
function loadPdfJs(): Promise<PdfJs> {
  pdfjsPromise ??= import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjsPromise;
}

/**
 * Folders inside the installed package, as filesystem paths with a trailing slash (pdf.js's Node
 * factories read them with fs), so standard fonts, CMaps and the JBIG2/OpenJPEG/QCMS wasm never need
 * the network.
 */
function pdfjsAssetDirs() {
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('pdfjs-dist/package.json'));
  return {
    standardFontDataUrl: path.join(root, 'standard_fonts') + path.sep,
    cMapUrl: path.join(root, 'cmaps') + path.sep,
    wasmUrl: path.join(root, 'wasm') + path.sep,
    iccUrl: path.join(root, 'iccs') + path.sep,
  };
}

/** PDF readers look for %%EOF within the last 1024 bytes (ISO 32000-1 §7.5.5 implementation note). */
export function hasPdfEofMarker(bytes: Uint8Array): boolean {
  const tail = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(
    Math.max(0, bytes.length - 1024),
  );
  return tail.includes('%%EOF', 0, 'latin1');
}

const TRUNCATED_DETAIL =
  'The PDF ends before its end-of-file marker (%%EOF), so it was cut off, probably during download or upload. Upload the complete file again.';

function mapPdfError(e: unknown, pageIndex?: number): InputError {
  if (e instanceof InputError) return e;
  const name = (e as { name?: string } | null)?.name ?? '';
  const message = String((e as { message?: string } | null)?.message ?? e).slice(0, 160);
  if (name === 'PasswordException') {
    return new InputError(
      'encrypted_pdf',
      'The PDF is password-protected. Open it with its password, save or print an unprotected copy, and upload that copy.',
      { cause: e },
    );
  }
  const where = pageIndex === undefined ? 'The PDF' : `Page ${pageIndex + 1} of the PDF`;
  return new InputError(
    'corrupt_file',
    `${where} could not be read: its structure is damaged (${message.replace(/\.$/, '')}). Re-export the drawing to PDF and upload it again.`,
    pageIndex === undefined ? { cause: e } : { cause: e, pageIndex },
  );
}

function checkDpi(dpi: number): void {
  if (!Number.isFinite(dpi) || dpi <= 0 || dpi > 2400) {
    throw new RangeError(`Expected a dpi between 1 and 2400 but received ${dpi}`);
  }
}

/**
 * RGBA (premultiplied over opaque white, so alpha is 255) → 8-bit grey with Rec.601 luma in integer
 * arithmetic: (77 R + 150 G + 29 B) >> 8. Reads one 32-bit word per pixel and short-cuts pure white,
 * which is ~95 % of a drawing. Measured ~3-5x faster than sharp's toColourspace('b-w') on the same
 * buffer (bench/ingest/README.md), and it needs no second RGBA-sized copy.
 */
export function rgbaToGrey(
  rgba: Uint8Array,
  width: number,
  height: number,
  out?: Uint8Array,
): Uint8Array {
  const n = width * height;
  if (rgba.length < n * 4)
    throw new RangeError(`RGBA buffer holds ${rgba.length} bytes, expected ${n * 4}`);
  const grey = out ?? new Uint8Array(n);
  const aligned = rgba.byteOffset % 4 === 0 ? rgba : rgba.slice();
  const px = new Uint32Array(aligned.buffer, aligned.byteOffset, n);
  for (let i = 0; i < n; i++) {
    const v = px[i]!;
    if (v === 0xffffffff) {
      grey[i] = 255;
    } else {
      // Little-endian word: R in the low byte.
      grey[i] = ((v & 0xff) * 77 + ((v >>> 8) & 0xff) * 150 + ((v >>> 16) & 0xff) * 29) >>> 8;
    }
  }
  return grey;
}

/** Pixel size of a page of wPt x hPt points at dpi. Rounded (not floored) so 2448 pt @ 200 dpi is 6800 px, not 6799. */
export function pixelSize(
  widthPt: number,
  heightPt: number,
  dpi: number,
): { width: number; height: number } {
  return {
    width: Math.max(1, Math.round((widthPt * dpi) / 72)),
    height: Math.max(1, Math.round((heightPt * dpi) / 72)),
  };
}

export async function openDocument(
  bytes: Uint8Array,
  opts: InputLimits = {},
): Promise<PdfDocumentHandle> {
  const limits = resolveLimits(opts);
  if (!hasPdfEofMarker(bytes)) throw new InputError('truncated_file', TRUNCATED_DETAIL);

  const pdfjs = await loadPdfJs();
  // pdf.js takes ownership of (and may detach) the buffer it is given: hand it a private copy.
  const data = new Uint8Array(bytes);
  const task = pdfjs.getDocument({
    data,
    ...pdfjsAssetDirs(),
    isEvalSupported: false, // never compile font programs with new Function()
    disableFontFace: true, // Node: glyphs are drawn as paths, no FontFace API
    useSystemFonts: false, // identical output on every machine; standard fonts come from the package
    // An embedded image larger than the page limit is skipped (pdf.js draws nothing for it) instead of
    // being decoded: the same decompression-bomb bound as for image files.
    maxImageSize: limits.maxPixels,
    verbosity: 0, // errors only; warnings about odd but readable PDFs would flood the log
  });
  let doc: PDFDocumentProxy;
  try {
    doc = await withTimeout(
      task.promise,
      limits.openTimeoutMs,
      'Opening the PDF',
      () => void task.destroy(),
    );
  } catch (e) {
    void task.destroy().catch(() => {});
    throw mapPdfError(e);
  }

  const pageCount = doc.numPages;
  if (pageCount === 0) {
    await doc.destroy();
    throw new InputError(
      'no_pages',
      'The PDF contains no pages. Export the drawing again with at least one sheet.',
    );
  }
  if (pageCount > limits.maxPages) {
    await doc.destroy();
    throw new InputError(
      'too_many_pages',
      `The PDF has ${pageCount} pages; the limit is ${limits.maxPages} pages per drawing. Split it into smaller sets and upload each.`,
    );
  }
  return new PdfJsDocument(doc, pageCount, limits);
}

class PdfJsDocument implements PdfDocumentHandle {
  private closed = false;

  constructor(
    private readonly doc: PDFDocumentProxy,
    readonly pageCount: number,
    private readonly limits: Required<InputLimits>,
  ) {}

  private async page(index: number): Promise<PDFPageProxy> {
    if (this.closed) throw new Error('PdfDocumentHandle used after close()');
    if (!Number.isInteger(index) || index < 0 || index >= this.pageCount) {
      throw new RangeError(`Page index ${index} is out of range 0..${this.pageCount - 1}`);
    }
    try {
      return await withTimeout(
        this.doc.getPage(index + 1),
        this.limits.openTimeoutMs,
        `Reading page ${index + 1}`,
        undefined,
        index,
      );
    } catch (e) {
      throw mapPdfError(e, index);
    }
  }

  async pageInfo(index: number): Promise<PageInfo> {
    const page = await this.page(index);
    const vp = page.getViewport({ scale: 1 });
    return { widthPt: vp.width, heightPt: vp.height, rotate: ((page.rotate % 360) + 360) % 360 };
  }

  async renderPage(index: number, opts: RenderOptions = {}): Promise<PageRaster> {
    const dpi = opts.dpi ?? DEFAULT_DPI;
    checkDpi(dpi);
    const maxPixels = opts.maxPixels ?? this.limits.maxPixels;
    const page = await this.page(index);
    const base = page.getViewport({ scale: 1 });
    const { width, height } = pixelSize(base.width, base.height, dpi);
    // Refuse before any canvas is allocated or content stream parsed.
    if (width * height > maxPixels) {
      throw pageTooLarge({
        pageIndex: index,
        widthIn: base.width / 72,
        heightIn: base.height / 72,
        dpi,
        widthPx: width,
        heightPx: height,
        maxPixels,
      });
    }
    // Scale each axis so the viewport lands exactly on the rounded pixel size.
    const viewport = page.getViewport({ scale: dpi / 72 });
    const factory = this.doc.canvasFactory as unknown as CanvasFactoryLike;
    const cc = factory.create(width, height);
    try {
      const task = page.render({
        canvas: cc.canvas as unknown as HTMLCanvasElement,
        canvasContext: cc.context as unknown as CanvasRenderingContext2D,
        viewport,
        background: 'rgb(255,255,255)',
        intent: 'display',
        annotationMode: 0 /* DISABLE: comments and markups are not part of the drawing */,
      });
      try {
        await withTimeout(
          task.promise,
          this.limits.pageTimeoutMs,
          `Rendering page ${index + 1}`,
          () => task.cancel(),
          index,
        );
      } catch (e) {
        throw mapPdfError(e, index);
      }
      // Skia rasterises lazily: most of the pixel work happens inside data() (see bench/ingest/README.md).
      const rgba = (cc.canvas as unknown as { data(): Uint8Array }).data();
      const grey = rgbaToGrey(rgba, width, height);
      return { width, height, data: grey, dpi, index, widthPt: base.width, heightPt: base.height };
    } finally {
      factory.destroy(cc);
      page.cleanup();
    }
  }

  async pageText(index: number, dpi: number = DEFAULT_DPI): Promise<TextItem[]> {
    checkDpi(dpi);
    const page = await this.page(index);
    const viewport = page.getViewport({ scale: dpi / 72 });
    let content: Awaited<ReturnType<PDFPageProxy['getTextContent']>>;
    try {
      content = await withTimeout(
        page.getTextContent(),
        this.limits.pageTimeoutMs,
        `Reading the text of page ${index + 1}`,
        undefined,
        index,
      );
    } catch (e) {
      throw mapPdfError(e, index);
    }
    const out: TextItem[] = [];
    for (const item of content.items) {
      if (!('str' in item) || item.str.trim() === '') continue;
      const t = textItemBox(
        item.transform as number[],
        item.width,
        item.height,
        viewport.transform as number[],
      );
      out.push({ text: item.str, ...t });
    }
    page.cleanup();
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.doc.destroy();
  }
}

interface CanvasFactoryLike {
  create(width: number, height: number): { canvas: unknown; context: unknown };
  destroy(cc: { canvas: unknown; context: unknown }): void;
}

/** Apply the affine matrix m = [a b c d e f] to (x, y). */
function apply(m: number[], x: number, y: number): [number, number] {
  return [m[0]! * x + m[2]! * y + m[4]!, m[1]! * x + m[3]! * y + m[5]!];
}

/**
 * Box of a pdf.js text run in sheet pixels.
 * `tm` is the run's matrix in PDF user space (font size included): (tm[4], tm[5]) is the baseline start,
 * (tm[0], tm[1]) the writing direction, (tm[2], tm[3]) the glyph "up" direction. `width` is the run's
 * advance and `height` its font size, both in user-space units. The box spans from 0.2 em below the
 * baseline (descenders) to 0.8 em above it (caps and ascenders), mapped through the viewport transform
 * `vt` (which carries dpi, /Rotate, crop box and the y flip), so it lines up with renderPage's raster.
 */
export function textItemBox(
  tm: number[],
  width: number,
  height: number,
  vt: number[],
): Omit<TextItem, 'text'> {
  const ul = Math.hypot(tm[0]!, tm[1]!) || 1;
  const vl = Math.hypot(tm[2]!, tm[3]!) || 1;
  const ux = tm[0]! / ul;
  const uy = tm[1]! / ul;
  const vx = tm[2]! / vl;
  const vy = tm[3]! / vl;
  const h = height || vl;
  const ox = tm[4]!;
  const oy = tm[5]!;
  const lo = -0.2 * h;
  const hi = 0.8 * h;
  const corners = [
    apply(vt, ox + vx * lo, oy + vy * lo),
    apply(vt, ox + ux * width + vx * lo, oy + uy * width + vy * lo),
    apply(vt, ox + vx * hi, oy + vy * hi),
    apply(vt, ox + ux * width + vx * hi, oy + uy * width + vy * hi),
  ];
  const xs = corners.map((c) => c[0]);
  const ys = corners.map((c) => c[1]);
  const x0 = Math.min(...xs);
  const y0 = Math.min(...ys);
  // Writing direction on the sheet (y down, so negate dy to get counter-clockwise degrees).
  const d0 = apply(vt, ox, oy);
  const d1 = apply(vt, ox + ux, oy + uy);
  let angle = (Math.atan2(-(d1[1] - d0[1]), d1[0] - d0[0]) * 180) / Math.PI;
  angle = Math.round((((angle % 360) + 360) % 360) * 100) / 100;
  if (angle === 360) angle = 0;
  const up0 = apply(vt, ox, oy);
  const up1 = apply(vt, ox + vx * h, oy + vy * h);
  return {
    x: x0,
    y: y0,
    width: Math.max(...xs) - x0,
    height: Math.max(...ys) - y0,
    fontSize: Math.hypot(up1[0] - up0[0], up1[1] - up0[1]),
    angle,
  };
}
