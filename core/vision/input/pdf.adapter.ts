// PDF input: PDFium (WebAssembly, pdfium.adapter.ts) renders each page straight into an 8-bit grey
// bitmap and reads its text layer from the same loaded page (runs grouped as pdf.js grouped them, see
// pdfium-text.ts). pdf.js is no longer on this path (issue #3): pdfjs-text.ts keeps its reading for the
// equivalence test and the bench.
//
// Streaming: a handle keeps only the parsed document; each renderPage() allocates one grey bitmap in
// the WASM heap, copies it out and frees it, so peak memory is about two grey copies of one page
// (1 B/px each): ~60 MB for a 34x22 in sheet at 200 dpi.
//
// Units: page sizes in PDF points (1/72 in) after /Rotate and crop box; rasters and text boxes in sheet
// pixels at the requested dpi, origin top-left, x right, y down. Both come from PDFium's page box and
// display matrix, so text always lands on the raster's ink.

import type { PageRaster, TextItem } from '../types';
import { InputError, type InputLimits, resolveLimits, withTimeout } from './input-errors';
import {
  PdfiumDocument,
  type PageKind,
  type RegionRaster,
  type RenderColour,
} from './pdfium.adapter';

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
  /**
   * Decode eligible images (8-bit RGB or grey, Flate with PNG predictors) outside PDFium and hand
   * them over decoded: the same pixels, drawn faster (pdfium.adapter.ts). Default true; false for
   * comparisons.
   */
  decodeImages?: boolean;
  /**
   * Read the page's line work from its objects with the text (PageRaster.lineWork; pdfium.adapter.ts
   * lineWorkPass). Default true; renderPage (no text) never does.
   */
  lineWork?: boolean;
  /**
   * Keep colour where the page has it: the raster then carries `rgb` (and `data` is grey derived
   * from the same render). See PdfiumRenderOptions.colour. Default false: grey only.
   */
  colour?: boolean;
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
  /** Text layer read from the loaded page (renderPageWithText only). */
  textMs?: number;
  /** The line-work pass (RenderOptions.lineWork, with the text only). */
  lineWorkMs?: number;
  /** Of lineWorkMs: the fill and annotation passes by object (pdfium.adapter.ts objectLayerPasses). */
  objectLayersMs?: number;
  /** Of renderMs: images decoded outside PDFium and handed over (RenderOptions.decodeImages). */
  imagesMs?: number;
  /** Bytes of image samples handed over that way. */
  imageBytes?: number;
  /** Images scaled and drawn by the painter instead of PDFium (pdfium.adapter.ts, paintImage). */
  paintedImages?: number;
  /** Of those, images whose grey samples the document had kept from an earlier placement. */
  paintedFromCache?: number;
}

/** One page read once: its grey raster and its text runs at the same dpi. */
export interface PageContent {
  raster: PageRaster;
  text: TextItem[];
}

export interface PdfDocumentHandle {
  readonly pageCount: number;
  /** The Info dictionary's CreationDate as stored (`D:20130718093000-05'00'`), or null. */
  creationDate(): Promise<string | null>;
  pageInfo(index: number): Promise<PageInfo>;
  renderPage(index: number, opts?: RenderOptions): Promise<PageRaster>;
  /** renderPage and pageText from a single load (one content parse) of the page. */
  renderPageWithText(index: number, opts?: RenderOptions): Promise<PageContent>;
  /** Text runs in sheet pixels at `dpi` (the box renderPage gives at that dpi), without rendering. */
  pageText(index: number, dpi?: number): Promise<TextItem[]>;
  /**
   * Rows [band.top, band.top + band.rows) of the page's raster at `dpi`, written into band.into (the
   * whole page's buffer, which other threads' bands fill: pages render in bands across the worker
   * pool). Any cut into bands gives the same pixels; they match renderPage's except for rounding on
   * pages of fractional size (see PdfiumDocument.renderBand). With `withText` the page's text runs
   * come too (the same as renderPageWithText's).
   */
  renderBand(
    index: number,
    band: PageBand,
    opts?: RenderOptions & { withText?: boolean },
  ): Promise<PageContent>;
  /** A rectangle of the page at `scale` times its raster at `dpi` (PdfiumDocument.renderRegion). */
  renderRegion(index: number, region: RegionRequest): Promise<RegionRaster>;
  /** Vector drawing or scan (PdfiumDocument.pageKind). */
  pageKind(index: number): Promise<PageKind>;
  close(): Promise<void>;
}

/** A region of a page's raster at `dpi` enlarged `scale` times: pixels of that enlarged raster. */
export interface RegionRequest {
  dpi: number;
  scale: number;
  left: number;
  top: number;
  width: number;
  height: number;
  colour: RenderColour;
  /** Also the region's line work at the same scale (PdfiumRegionOptions.lineWork). */
  lineWork?: boolean;
}

/** A band of a page's raster: rows [top, top + rows), written into `into` (width x height bytes). */
export interface PageBand {
  top: number;
  rows: number;
  into: Uint8Array;
  /** The whole page's colour buffer (width x height x 3 bytes) for a colour render (RenderOptions.colour). */
  rgbInto?: Uint8Array;
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

function mapPdfError(e: unknown): InputError {
  if (e instanceof InputError) return e;
  const message = String((e as { message?: string } | null)?.message ?? e).slice(0, 160);
  return new InputError(
    'corrupt_file',
    `The PDF could not be read: its structure is damaged (${message.replace(/\.$/, '')}). Re-export the drawing to PDF and upload it again.`,
    { cause: e },
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
  return new PdfDocument(raster, limits);
}

class PdfDocument implements PdfDocumentHandle {
  private closed = false;

  constructor(
    private readonly raster: PdfiumDocument,
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

  async creationDate(): Promise<string | null> {
    this.checkOpen();
    return this.raster.metaText('CreationDate');
  }

  private renderOptions(opts: RenderOptions) {
    const dpi = opts.dpi ?? DEFAULT_DPI;
    checkDpi(dpi);
    return {
      dpi,
      maxPixels: opts.maxPixels ?? this.limits.maxPixels,
      pixelSize,
      ...(opts.decodeImages === false ? { decodeImages: false } : {}),
      ...(opts.lineWork === false ? {} : { lineWork: true }),
      ...(opts.colour ? { colour: true } : {}),
      ...(opts.timings ? { timings: opts.timings } : {}),
    };
  }

  async renderPage(index: number, opts: RenderOptions = {}): Promise<PageRaster> {
    this.checkOpen();
    return this.raster.renderPage(index, this.renderOptions(opts));
  }

  async renderPageWithText(index: number, opts: RenderOptions = {}): Promise<PageContent> {
    this.checkOpen();
    return this.raster.renderPageWithText(index, this.renderOptions(opts));
  }

  async renderBand(
    index: number,
    band: PageBand,
    opts: RenderOptions & { withText?: boolean } = {},
  ): Promise<PageContent> {
    this.checkOpen();
    return this.raster.renderBand(index, this.renderOptions(opts), band, opts.withText ?? false);
  }

  async renderRegion(index: number, region: RegionRequest): Promise<RegionRaster> {
    this.checkOpen();
    checkDpi(region.dpi);
    return this.raster.renderRegion(index, { ...region, pixelSize });
  }

  async pageKind(index: number): Promise<PageKind> {
    this.checkOpen();
    return this.raster.pageKind(index);
  }

  async pageText(index: number, dpi: number = DEFAULT_DPI): Promise<TextItem[]> {
    this.checkOpen();
    checkDpi(dpi);
    return this.raster.pageText(index, { dpi, pixelSize });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.raster.close();
  }
}
