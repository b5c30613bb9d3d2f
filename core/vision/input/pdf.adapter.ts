// PDF input: pages are rasterised by PDFium (WebAssembly, pdfium.adapter.ts) straight into an 8-bit grey
// bitmap; the text layer comes from pdf.js (pdfjs-dist 5.6, legacy build for Node 20), opened lazily on
// the first pageText() call, because its `getTextContent` runs are what the title-block and block
// readers are built on (see bench/ingest/README.md for the measured trade-off).
//
// Streaming: a handle keeps only the parsed document(s); each renderPage() allocates one grey bitmap in
// the WASM heap, copies it out and frees it, so peak memory is about two grey copies of one page
// (1 B/px each): ~60 MB for a 34x22 in sheet at 200 dpi.
//
// Units: page sizes in PDF points (1/72 in) after /Rotate and crop box; rasters and text boxes in sheet
// pixels at the requested dpi, origin top-left, x right, y down. Both come from PDFium's page box, and
// pdf.js text is mapped onto it, so text always lands on the raster's ink.

import { createRequire } from 'node:module';
import path from 'node:path';
import type * as PdfJsModule from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PageRaster, TextItem } from '../types';
import { InputError, type InputLimits, resolveLimits, withTimeout } from './input-errors';
import { PdfiumDocument } from './pdfium.adapter';

/**
 * Default render resolution for review of 24x36 in (and 22x34 in) sheets, in dots per inch.
 *
 * Why 200 (figures from bench/ingest/bench-ingest.ts, see bench/ingest/README.md):
 *  - Thin lines. CAD fine pens are 0.13-0.18 mm (0.005-0.007 in). PDFium (like pdf.js) widens any
 *    stroke thinner than one device pixel to one pixel, so hairlines never vanish, but a 1-px line that
 *    straddles two pixel columns comes out as two ~50 % greys (core 127, right at a mid-grey threshold).
 *    Measured worst-case line core over 40 sub-pixel positions (0 black, 255 white; pdf.js figures,
 *    PDFium's differ by at most 1):
 *      0.007 in (0.18 mm): 121 at 150 dpi (faint), 76 at 200 (solid), 0 at 300;
 *      0.005 in (0.13 mm): 127 at 150 and 200, 64 at 300;  0.010 in: 63 at 150, 0 at 200 and 300.
 *    So 200 is the lowest dpi at which the common 0.18 mm and 0.25 mm pens render with a solid core at
 *    every position; 300 only helps the 0.13 mm pen. Lettering: 3/32 in text is 19 px tall at 200 dpi.
 *  - Memory. A 36x24 in sheet is 19.4 MP at 150, 34.6 MP at 200 and 77.8 MP at 300 dpi; rendering
 *    takes a 1 B/px grey bitmap plus its copy out of the WASM heap: ~39 / 69 / 156 MB per page. A
 *    compare holds two sheets and an overlay; 300 dpi would push one compare towards the 1.5 GiB budget.
 *  - Time. Rasterisation and every later per-pixel step (align, diff, encode) scale with pixels: 200 costs
 *    1.8x 150 and 300 costs 2.25x 200.
 * Configurable per call (`renderPage(i, { dpi })`) as the contract requires.
 */
export const DEFAULT_DPI = 200;

export interface PageInfo {
  /**
   * Page width and height in PDF points after /Rotate and crop box (as printed). /UserUnit is not
   * applied (PDFium ignores it; no drawing set seen uses it).
   */
  widthPt: number;
  heightPt: number;
  /** The page's /Rotate, normalised to 0, 90, 180 or 270. */
  rotate: number;
}

export interface RenderOptions {
  dpi?: number;
  /** Refuse (before rendering) when width x height at this dpi exceeds this; default from the open limits. */
  maxPixels?: number;
  /** When given, filled with where the time went (ms), for benches. */
  timings?: RenderTimings;
}

export interface RenderTimings {
  /** FPDF_LoadPage: page dictionary lookup and content stream parse. */
  pageMs: number;
  /** Progressive render into the grey bitmap (image decoding, paths, text, annotations). */
  renderMs: number;
  /** Copy of the grey bitmap out of the WASM heap. */
  readbackMs: number;
  /** Colour to grey: 0, PDFium renders grey directly (kept so bench tables stay comparable). */
  greyMs: number;
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
  const raster = await withTimeout(
    PdfiumDocument.open(bytes, limits),
    limits.openTimeoutMs,
    'Opening the PDF',
  ).catch((e: unknown) => {
    throw mapPdfError(e);
  });
  const pageCount = raster.pageCount;
  if (pageCount === 0) {
    await raster.close();
    throw new InputError(
      'no_pages',
      'The PDF contains no pages. Export the drawing again with at least one sheet.',
    );
  }
  if (pageCount > limits.maxPages) {
    await raster.close();
    throw new InputError(
      'too_many_pages',
      `The PDF has ${pageCount} pages; the limit is ${limits.maxPages} pages per drawing. Split it into smaller sets and upload each.`,
    );
  }
  return new PdfDocument(raster, bytes, limits);
}

/** pdf.js document for the text layer; opened on first use from a private copy of the bytes. */
async function openTextDocument(
  bytes: Uint8Array,
  limits: Required<InputLimits>,
): Promise<PDFDocumentProxy> {
  const pdfjs = await loadPdfJs();
  // pdf.js takes ownership of (and may detach) the buffer it is given: hand it a private copy.
  const task = pdfjs.getDocument({
    data: new Uint8Array(bytes),
    ...pdfjsAssetDirs(),
    isEvalSupported: false, // never compile font programs with new Function()
    disableFontFace: true, // Node: no FontFace API
    useSystemFonts: false, // identical output on every machine; standard fonts come from the package
    verbosity: 0, // errors only; warnings about odd but readable PDFs would flood the log
  });
  try {
    return await withTimeout(
      task.promise,
      limits.openTimeoutMs,
      'Opening the PDF',
      () => void task.destroy(),
    );
  } catch (e) {
    void task.destroy().catch(() => {});
    throw mapPdfError(e);
  }
}

class PdfDocument implements PdfDocumentHandle {
  private closed = false;
  private text: Promise<PDFDocumentProxy> | undefined;

  constructor(
    private readonly raster: PdfiumDocument,
    /** Kept (not copied) only until the text layer is opened. */
    private bytes: Uint8Array | undefined,
    private readonly limits: Required<InputLimits>,
  ) {}

  get pageCount(): number {
    return this.raster.pageCount;
  }

  private checkOpen(): void {
    if (this.closed) throw new Error('PdfDocumentHandle used after close()');
  }

  async pageInfo(index: number): Promise<PageInfo> {
    this.checkOpen();
    return this.raster.pageInfo(index);
  }

  async renderPage(index: number, opts: RenderOptions = {}): Promise<PageRaster> {
    this.checkOpen();
    const dpi = opts.dpi ?? DEFAULT_DPI;
    checkDpi(dpi);
    return this.raster.renderPage(index, {
      dpi,
      maxPixels: opts.maxPixels ?? this.limits.maxPixels,
      pixelSize,
      ...(opts.timings ? { timings: opts.timings } : {}),
    });
  }

  private async textPage(index: number): Promise<PDFPageProxy> {
    this.checkOpen();
    if (!Number.isInteger(index) || index < 0 || index >= this.pageCount) {
      throw new RangeError(`Page index ${index} is out of range 0..${this.pageCount - 1}`);
    }
    if (!this.text) {
      this.text = openTextDocument(this.bytes!, this.limits);
      this.bytes = undefined;
    }
    const doc = await this.text;
    try {
      return await withTimeout(
        doc.getPage(index + 1),
        this.limits.openTimeoutMs,
        `Reading page ${index + 1}`,
        undefined,
        index,
      );
    } catch (e) {
      throw mapPdfError(e, index);
    }
  }

  async pageText(index: number, dpi: number = DEFAULT_DPI): Promise<TextItem[]> {
    checkDpi(dpi);
    const page = await this.textPage(index);
    const info = await this.raster.pageInfo(index);
    const { width, height } = pixelSize(info.widthPt, info.heightPt, dpi);
    const viewport = page.getViewport({ scale: dpi / 72 });
    // Map pdf.js's viewport onto PDFium's raster, which spans exactly width x height pixels (the page
    // box scaled per axis to the rounded size), so text boxes land on the rendered glyphs.
    const sx = width / viewport.width;
    const sy = height / viewport.height;
    const v = viewport.transform as number[];
    const vt = [v[0]! * sx, v[1]! * sy, v[2]! * sx, v[3]! * sy, v[4]! * sx, v[5]! * sy];
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
      const t = textItemBox(item.transform as number[], item.width, item.height, vt);
      out.push({ text: item.str, ...t });
    }
    page.cleanup();
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.bytes = undefined;
    const text = this.text;
    await this.raster.close();
    if (text) await (await text.catch(() => undefined))?.destroy();
  }
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
