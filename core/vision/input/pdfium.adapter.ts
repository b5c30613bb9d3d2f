// PDF rasterisation with PDFium compiled to WebAssembly (@embedpdf/pdfium, MIT; PDFium Apache-2.0).
//
// Why PDFium and not pdf.js + Skia (bench/ingest/README.md): PDFium renders straight into an 8-bit grey
// bitmap (1 B/px, no RGBA canvas, no readback copy, no RGBA-to-grey pass) and decodes images in compiled
// code, so it is faster on image-heavy sheets and needs about a quarter of the memory. The text layer
// is read from the same loaded page (readText, pdfium-text.ts).
//
// Colour (the `colour` render option, the one place that chooses colour or grey): a page whose
// objects may draw in colour (mayHaveColour: coloured paths or text, any image, shadings, markup
// annotations) renders once into an RGB bitmap (3 B/px); its grey is derived from that render with
// PDFium's grey weights (greyFromRgb) and the colour is kept (`rgb`) when enough pixels are coloured
// (keepsColour). Other pages render grey as before. The grey PDFium draws text with on a grey
// bitmap differs from the grey of its colour render at glyph edges (~1 % of a sheet's pixels); the
// comparison finds the same changes either way (core/jobs/colour.test.ts).
//
// Scanned sheets are mostly Flate images with PNG predictors, which PDFium in WebAssembly decodes
// slowly (~40 % of a scanned 34x22 in sheet's render): such images are decoded here and handed to
// PDFium as samples before the page renders (decodeImages); enlarged scan tiles are painted here.
//
// One WASM instance per thread (module-level singleton; every worker of the pool has its own), loaded
// from node_modules on first use: the .wasm is read from disk, never fetched. All PDFium calls of an
// instance are serialised (`exclusive`): rendering yields to the event loop between progressive-render
// steps (for the time budget), and two renders must not interleave on one instance.
//
// Units: page sizes in PDF points (1/72 in) after /Rotate and the crop box, as PDFium reports them;
// rasters and text in sheet pixels, origin top-left, x right, y down. Text is mapped from page space with
// FPDF_DeviceToPage for the raster's exact (size, rotate) arguments, so it lands on the rendered glyphs.

import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { inflateSync } from 'node:zlib';
import type { PageRaster, TextItem } from '../types';
import {
  InputError,
  pageTooLarge,
  timeoutDetail,
  withTimeout,
  type InputLimits,
} from './input-errors';
import { indexPredictedImages, rawImageKey, type PredictedImage } from './pdf-image-index';
import { isWhitespaceCode, RunBuilder } from './pdfium-text';
import { unpredictPng } from './png-predictor';
import { resampleGrey, resampleRgb, rgbToGrey } from './grey-resample';
import { greyRowsSimd, packRowsSimd, resampleRgbSimd, type SimdHeap } from './raster-simd';

/** The subset of the PDFium C API (through emscripten cwrap) used here. Pointers are heap offsets. */
interface PdfiumApi {
  pdfium: {
    HEAPU8: Uint8Array;
    HEAP32: Int32Array;
    HEAPF32: Float32Array;
    HEAPF64: Float64Array;
    wasmExports: {
      malloc(size: number): number;
      free(ptr: number): void;
      /** The instance's heap (HEAPU8's memory): raster-simd.ts kernels run on it in place. */
      memory: WebAssembly.Memory;
    };
    addFunction(fn: (...args: number[]) => number, sig: string): number;
    // Raw exports (no ccall wrapper) for the per-glyph loop of the text layer; pointers are heap offsets.
    _FPDFText_LoadPage(page: number): number;
    _FPDFText_ClosePage(textPage: number): void;
    _FPDFText_CountChars(textPage: number): number;
    _FPDFText_GetUnicode(textPage: number, index: number): number;
    /** 0 for characters PDFium generated itself (spaces and line breaks it inferred). */
    _FPDFText_GetTextObject(textPage: number, index: number): number;
    /** Baseline origin in page space, two doubles. */
    _FPDFText_GetCharOrigin(textPage: number, index: number, x: number, y: number): number;
    /** FS_RECTF { left, top, right, bottom } in page space: the advance x (descent..ascent) box. */
    _FPDFText_GetLooseCharBox(textPage: number, index: number, rect: number): number;
    /** FS_MATRIX { a b c d e f } (floats) of the character's text object. */
    _FPDFText_GetMatrix(textPage: number, index: number, matrix: number): number;
    /** The Tf font size (text space, before the matrix). */
    _FPDFText_GetFontSize(textPage: number, index: number): number;
    _FPDFTextObj_GetFont(textObject: number): number;
    _FPDFPage_GetObject(page: number, index: number): number;
    _FPDFPageObj_SetIsActive(obj: number, active: number): number;
    _FPDFFont_GetGlyphWidth(font: number, glyph: number, fontSize: number, width: number): number;
    _FPDF_DeviceToPage(
      page: number,
      startX: number,
      startY: number,
      sizeX: number,
      sizeY: number,
      rotate: number,
      deviceX: number,
      deviceY: number,
      pageX: number,
      pageY: number,
    ): number;
  };
  PDFiumExt_Init(): void;
  FPDF_GetLastError(): number;
  FPDF_LoadMemDocument(ptr: number, size: number, password: string): number;
  FPDF_CloseDocument(doc: number): void;
  FPDF_GetPageCount(doc: number): number;
  /** Info dictionary entry `tag` as UTF-16LE with a terminator; returns its byte length (2 if absent). */
  FPDF_GetMetaText(doc: number, tag: string, buffer: number, buflen: number): number;
  FPDF_LoadPage(doc: number, index: number): number;
  FPDF_ClosePage(page: number): void;
  FPDF_GetPageWidthF(page: number): number;
  FPDF_GetPageHeightF(page: number): number;
  FPDF_GetPageSizeByIndexF(doc: number, index: number, sizePtr: number): boolean;
  /** embedpdf extension: the page's /Rotate as 0..3 quarter turns, without parsing its content. */
  EPDF_GetPageRotationByIndex(doc: number, index: number): number;
  FPDFBitmap_CreateEx(w: number, h: number, format: number, first: number, stride: number): number;
  FPDFBitmap_Destroy(bitmap: number): void;
  FPDFBitmap_FillRect(
    bitmap: number,
    l: number,
    t: number,
    w: number,
    h: number,
    c: number,
  ): boolean;
  FPDFBitmap_GetBuffer(bitmap: number): number;
  FPDFPage_CountObjects(page: number): number;
  FPDFPage_GetObject(page: number, index: number): number;
  FPDFPageObj_GetType(obj: number): number;
  /** Fill mode (0 none, 1 alternate, 2 winding) and stroke flag, two int out-parameters. */
  FPDFPath_GetDrawMode(path: number, fillMode: number, stroke: number): boolean;
  /** RGBA 0..255 as four unsigned int out-parameters. */
  FPDFPageObj_GetFillColor(obj: number, r: number, g: number, b: number, a: number): boolean;
  FPDFPageObj_SetFillColor(obj: number, r: number, g: number, b: number, a: number): boolean;
  /** Sets a path's fill mode (0 none, 1 alternate, 2 winding) and whether it is stroked. */
  FPDFPath_SetDrawMode(path: number, fillMode: number, stroke: boolean): boolean;
  FPDFPageObj_SetIsActive(obj: number, active: boolean): boolean;
  FPDFFormObj_CountObjects(form: number): number;
  FPDFFormObj_GetObject(form: number, index: number): number;
  /** FS_RECTF-like out-parameters: four float pointers (left, bottom, right, top) in page space. */
  FPDFPageObj_GetBounds(obj: number, l: number, b: number, r: number, t: number): boolean;
  /** FS_MATRIX { a b c d e f } (floats) of the object: unit square (an image) to page space. */
  FPDFPageObj_GetMatrix(obj: number, matrix: number): boolean;
  FPDFPageObj_HasTransparency(obj: number): boolean;
  /** Fill / stroke colour as RGBA (four unsigned int pointers); false when the object has none. */
  FPDFPageObj_GetFillColor(obj: number, r: number, g: number, b: number, a: number): boolean;
  FPDFPageObj_GetStrokeColor(obj: number, r: number, g: number, b: number, a: number): boolean;
  /** fillmode (0 none, 1 alternate, 2 winding) and stroke (bool) out-parameters, two ints. */
  FPDFPath_GetDrawMode(path: number, fillmode: number, stroke: number): boolean;
  FPDFFormObj_CountObjects(form: number): number;
  FPDFFormObj_GetObject(form: number, index: number): number;

  FPDFPageObj_CountMarks(obj: number): number;
  FPDFPageObj_GetClipPath(obj: number): number;
  /** Paths of a clip path; -1 for an object's empty clip path (none). */
  FPDFClipPath_CountPaths(clip: number): number;
  FPDFImageObj_GetImageFilterCount(obj: number): number;
  /** Copies the image's stream data as stored (filters not undone); returns its length. */
  FPDFImageObj_GetImageDataRaw(obj: number, buffer: number, length: number): number;
  FPDFImageObj_GetImagePixelSize(obj: number, width: number, height: number): boolean;
  /** Replaces the image's data with the bitmap's pixels (unfiltered DeviceRGB or DeviceGray). */
  FPDFImageObj_SetBitmap(pages: number, count: number, obj: number, bitmap: number): boolean;
  FPDFBitmap_GetStride(bitmap: number): number;
  FPDF_RenderPageBitmap_Start(
    bitmap: number,
    page: number,
    startX: number,
    startY: number,
    sizeX: number,
    sizeY: number,
    rotate: number,
    flags: number,
    pause: number,
  ): number;
  FPDF_RenderPage_Continue(page: number, pause: number): number;
  FPDF_RenderPage_Close(page: number): void;
  FPDFPage_GetAnnotCount(page: number): number;
  FPDFPage_GetAnnot(page: number, index: number): number;
  FPDFPage_CloseAnnot(annot: number): void;
  FPDFAnnot_GetSubtype(annot: number): number;
  /** FS_RECTF { left, top, right, bottom } (floats) in page space. */
  FPDFAnnot_GetRect(annot: number, rect: number): boolean;
  /** Value of `key` as UTF-16LE with a terminator; returns its byte length (2 when empty or absent). */
  FPDFAnnot_GetStringValue(annot: number, key: string, buffer: number, buflen: number): number;
  /** matrix: FS_MATRIX* (6 floats), clipping: FS_RECTF* (left, top, right, bottom) in device pixels. */
  FPDF_RenderPageBitmapWithMatrix(
    bitmap: number,
    page: number,
    matrix: number,
    clipping: number,
    flags: number,
  ): void;
}

// fpdfview.h / fpdf_progressive.h constants.
const FPDF_ERR_SUCCESS = 0;
const FPDF_ERR_FILE = 2;
const FPDF_ERR_FORMAT = 3;
const FPDF_ERR_PASSWORD = 4;
const FPDF_ERR_SECURITY = 5;
const FPDF_ERR_PAGE = 6;
const FPDFBitmap_Gray = 1;
const FPDFBitmap_BGR = 2;
const FPDF_PAGEOBJ_TEXT = 1;
const FPDF_PAGEOBJ_PATH = 2;
const FPDF_PAGEOBJ_IMAGE = 3;
const FPDF_PAGEOBJ_SHADING = 4;
const FPDF_PAGEOBJ_FORM = 5;
/** Annotation subtypes that draw nothing of their own colour: Link, Popup. */
const NO_APPEARANCE = new Set([2, 16]);

/**
 * A pixel of a colour render counts as coloured when its channels spread by more than this (max − min
 * of R, G, B): anti-aliased grey on white spreads by 0, a red cloud's stroke by ~200, the faint tint
 * JPEG-compressed grey scans carry stays under ~20.
 */
export const COLOUR_CHROMA = 24;
/**
 * A page is kept in colour when at least this many of its pixels are coloured: fewer are a few
 * stray pixels of a grey drawing (a speck of a scanned logo), not colour anyone reads.
 */
export const COLOUR_MIN_PIXELS = 64;

/** Whether a page whose colour render counted `colourPixels` coloured pixels is kept in colour. */
export function keepsColour(colourPixels: number): boolean {
  return colourPixels >= COLOUR_MIN_PIXELS;
}

/** Colour of a render: 8-bit grey (one byte a pixel) or colour (RGB, three). */
export type RenderColour = 'grey' | 'colour';

/**
 * THE choice between grey and colour renders: the PDFium bitmap format and the channels it gives
 * (RGB order after readPixels). Every render that may come in colour goes through here, so the
 * ingest renders (native levels) and the deep tiles (tiles.adapter.ts) make the same choice.
 */
export function renderFormat(colour: RenderColour): { format: number; channels: 1 | 3 } {
  return colour === 'colour'
    ? { format: FPDFBitmap_BGR, channels: 3 }
    : { format: FPDFBitmap_Gray, channels: 1 };
}

/**
 * Copies `rows` rows of a PDFium bitmap (stride bytes a row) out of the heap as tightly packed
 * pixels, BGR turned into RGB for colour.
 */
function readPixels(
  heap: Uint8Array,
  buf: number,
  stride: number,
  width: number,
  rows: number,
  channels: 1 | 3,
): Uint8Array {
  const rowBytes = width * channels;
  const out = new Uint8Array(rowBytes * rows);
  for (let y = 0; y < rows; y++)
    out.set(heap.subarray(buf + y * stride, buf + y * stride + rowBytes), y * rowBytes);
  if (channels === 3)
    for (let i = 0; i < out.length; i += 3) {
      const b = out[i]!;
      out[i] = out[i + 2]!;
      out[i + 2] = b;
    }
  return out;
}

/** What a page is drawn with: vector line work and text, or one scanned image (pageKind). */
export type PageKind = 'vector' | 'scan';

/** A rectangle of a page rendered at some scale (renderRegion): packed rows, 1 or 3 channels. */
export interface RegionRaster {
  width: number;
  height: number;
  channels: 1 | 3;
  data: Uint8Array;
  /**
   * With PdfiumRegionOptions.lineWork: the region's line work at the same scale (regionLineWork),
   * 1 byte a pixel, 0 line work and 255 elsewhere (as layers.ts lineWorkGrey gives the page's).
   */
  lineWork?: Uint8Array;
}

export interface PdfiumRegionOptions {
  /** The raster the region is cut from: the page at `dpi`, sized by `pixelSize`, times `scale`. */
  dpi: number;
  pixelSize(widthPt: number, heightPt: number, dpi: number): { width: number; height: number };
  scale: number;
  /** The region in pixels of that scaled raster. */
  left: number;
  top: number;
  width: number;
  height: number;
  colour: RenderColour;
  /** Also the region's line work (RegionRaster.lineWork; regionLineWork). Default false. */
  lineWork?: boolean;
}
/**
 * Bytes of image samples handed to PDFium decoded (decodeImages) after which the document
 * is reopened. A decoded image replaces its stream in PDFium's per-document image cache, which keeps
 * it until the document closes (a beam proposal sheet hands over ~75 MB): reopening bounds the heap.
 * Reopening costs about a millisecond; the fonts a page uses are parsed again (not seen in the
 * bench).
 */
const DECODED_IMAGE_BUDGET_BYTES = 32 * 1024 * 1024;

/**
 * Grey samples the painter decoded, kept per document by image (rawImageKey) up to this many bytes:
 * scanned sets place the same tile many times (the barber house sheets draw one blank tile 6 times a
 * sheet, a quarter of their tiles), and a kept tile is not inflated, unpredicted and turned grey
 * again. The first tiles to come are kept; the rest are decoded each time.
 */
const PAINT_CACHE_BYTES = 16 * 1024 * 1024;
/**
 * Path objects a page mostly covered by images may have and still count as a scan (pageKind): a
 * stamp, a border, a few markups drawn over the scan (an OCR text layer is text, not counted).
 */
const SCAN_MAX_VECTOR_OBJECTS = 2000;
/** Draw annotation appearance streams: revisions are often issued as markups (clouds, FreeText, Square). */
const FPDF_ANNOT = 0x01;
/** Colour renders write R G B (not PDFium's B G R): rows copy out as they are stored. */
const FPDF_REVERSE_BYTE_ORDER = 0x10;
const FPDF_RENDER_TOBECONTINUED = 1;
const FPDF_RENDER_FAILED = 3;
/** How long one progressive-render step may run before PDFium is asked to pause, ms. */
const RENDER_SLICE_MS = 50;
/**
 * Rows rendered above a band and thrown away. Clipped at its first row, a band lacks the
 * anti-aliasing coverage PDFium's scanline rasteriser carries in from the row above (grey values off
 * by up to 39 on one seam of the barber house sheets); with a few rows of run-in every fixture page
 * assembles bit-identical to its whole-page render. As many rows are rendered below the band and
 * thrown away: an image crossing the band's last row is otherwise cut there one row short (PDFium
 * rounds the clipped image's rows; 77 pixels of one row on a generated page of images at 72 dpi cut
 * every 300 rows).
 */
const BAND_RUN_IN_ROWS = 4;

/** Where the painter draws an image: its rectangle on the raster, edges included/excluded. */
interface Place {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** An image the painter draws itself (decodeImages): its grey samples and its raster rectangle. */
interface OwnImage extends Place {
  width: number;
  height: number;
  grey: Uint8Array;
  /** A colour render's samples of a colour image, R G B interleaved (absent for grey ones). */
  rgb?: Uint8Array | undefined;
  /** Bytes of samples decoded (width x height x components). */
  bytes: number;
}

/** OwnImage.grey of a colour image in a colour render: painted from its planes, its grey not made. */
const NO_GREY = new Uint8Array(0);

/** How much the painter's images are enlarged on the raster, least and most (see ownPlace). */
const ENLARGED = [1.5, 2.5] as const;
/** Most stretches of content order the painter alternates with PDFium in (each PDFium's is a pass). */
const MAX_PAINT_RUNS = 9;

/** Objects 0..n-1 cut into maximal stretches [from, to) of the painter's images or PDFium's objects. */
function paintRuns(n: number, own: { has(i: number): boolean }) {
  const runs: { mine: boolean; from: number; to: number }[] = [];
  for (let i = 0; i < n; i++) {
    const mine = own.has(i);
    const last = runs.at(-1);
    if (last && last.mine === mine) last.to = i + 1;
    else runs.push({ mine, from: i, to: i + 1 });
  }
  return runs;
}

/**
 * Scratch buffers of the painter, kept between images and pages (a scanned sheet's tiles would
 * otherwise allocate ~10 MB of short-lived buffers, which V8 counts as external memory and
 * collects for). Grown as needed; a view of the first `bytes` bytes is returned.
 */
const scratchBuffers: Uint8Array[] = [];
/** Larger scratch is allocated for the call and not kept (a worker would hold it for good). */
const SCRATCH_KEEP_BYTES = 32 * 1024 * 1024;
function scratch(slot: number, bytes: number): Uint8Array {
  if (bytes > SCRATCH_KEEP_BYTES) return new Uint8Array(bytes);
  let b = scratchBuffers[slot];
  if (!b || b.length < bytes) scratchBuffers[slot] = b = new Uint8Array(Math.ceil(bytes * 1.25));
  return b.subarray(0, bytes);
}

/** Scales an image to its rectangle and writes the rectangle's rows within `rows` into the bitmap. */
function paintImage(
  img: OwnImage,
  heap: Uint8Array,
  buf: number,
  stride: number,
  width: number,
  height: number,
  rows: [number, number],
): void {
  const top = Math.max(img.top, rows[0], 0);
  const bottom = Math.min(img.bottom, rows[1], height);
  const left = Math.max(img.left, 0);
  const right = Math.min(img.right, width);
  if (bottom <= top || right <= left || img.grey.length === 0) return;
  const dw = img.right - img.left;
  // Wholly across the bitmap: straight into its rows; else through scratch, then the visible part.
  const tmp =
    left === img.left && right === img.right ? undefined : scratch(1, dw * (bottom - top));
  const [out, at, outStride] = tmp ? [tmp, 0, dw] : [heap, buf + top * stride + left, stride];
  const [sw, sh, dh] = [img.width, img.height, img.bottom - img.top];
  resampleGrey(img.grey, sw, sh, dw, dh, out, at, outStride, top - img.top, bottom - img.top);
  if (!tmp) return;
  for (let y = top; y < bottom; y++) {
    const t = (y - top) * dw - img.left;
    heap.set(tmp.subarray(t + left, t + right), buf + y * stride + left);
  }
}

/**
 * paintImage for a colour bitmap (3 B/px in R G B order: FPDF_REVERSE_BYTE_ORDER): each plane of the image (R, G, B; or its one grey
 * plane) scaled as paintImage scales grey, then interleaved into the bitmap's rows. Bilinear
 * weights are linear, so the grey derived from these pixels is the grey paintImage paints (to
 * rounding).
 */
function paintImageColour(
  img: OwnImage,
  heap: Uint8Array,
  buf: number,
  stride: number,
  width: number,
  height: number,
  rows: [number, number],
  simd?: SimdHeap,
): void {
  const top = Math.max(img.top, rows[0], 0);
  const bottom = Math.min(img.bottom, rows[1], height);
  const left = Math.max(img.left, 0);
  const right = Math.min(img.right, width);
  if (bottom <= top || right <= left || (img.rgb ?? img.grey).length === 0) return;
  const dw = img.right - img.left;
  const [sw, sh, dh] = [img.width, img.height, img.bottom - img.top];
  const rowsFrom = top - img.top;
  const rowsTo = bottom - img.top;
  if (img.rgb) {
    // Wholly across the bitmap: straight into its rows; else through scratch, then the visible part.
    if (left === img.left && right === img.right) {
      const at = buf + top * stride + left * 3;
      if (simd && resampleRgbSimd(simd, img.rgb, sw, sh, dw, dh, at, stride, rowsFrom, rowsTo))
        return;
      resampleRgb(img.rgb, sw, sh, dw, dh, heap, at, stride, rowsFrom, rowsTo);
      return;
    }
    const tmp = scratch(2, dw * 3 * (bottom - top));
    resampleRgb(img.rgb, sw, sh, dw, dh, tmp, 0, dw * 3, rowsFrom, rowsTo);
    for (let y = top; y < bottom; y++) {
      const t = ((y - top) * dw + left - img.left) * 3;
      heap.set(tmp.subarray(t, t + (right - left) * 3), buf + y * stride + left * 3);
    }
    return;
  }
  // A grey image wholly across the bitmap: its pixels as R = G = B scaled by the SIMD kernel
  // straight into the bitmap's rows (each channel is the grey scaled, as below; tested).
  if (simd && left === img.left && right === img.right) {
    const n = sw * sh;
    const rgb = scratch(3, n * 3);
    greyToRgb(img.grey, 0, rgb, 0, n);
    const at = buf + top * stride + left * 3;
    if (resampleRgbSimd(simd, rgb, sw, sh, dw, dh, at, stride, rowsFrom, rowsTo)) return;
  }
  // A grey image: scaled once, each pixel written to the three channels.
  const v = scratch(2, dw * (bottom - top));
  resampleGrey(img.grey, sw, sh, dw, dh, v, 0, dw, rowsFrom, rowsTo);
  for (let y = top; y < bottom; y++) {
    const t = (y - top) * dw + left - img.left;
    greyToRgb(v, t, heap, buf + y * stride + left * 3, right - left);
  }
}

let words32Of: Int32Array | undefined;
/** A word view of `buffer` (the WASM heap's, kept until the heap grows). */
function words32(buffer: ArrayBufferLike): Int32Array {
  if (words32Of?.buffer !== buffer) {
    words32Of = new Int32Array(buffer, 0, buffer.byteLength >> 2);
  }
  return words32Of;
}

/**
 * `n` grey pixels from `grey[t]` written as R = G = B into `out[o]` (3 B/px): four pixels as three
 * words where `out` is word-aligned (blank paper as three all-ones words), one byte at a time at the
 * ends.
 */
export function greyToRgb(
  grey: Uint8Array,
  t: number,
  out: Uint8Array,
  o: number,
  n: number,
): void {
  let x = 0;
  // Single pixels until the output is on a word boundary (every fourth pixel is, 3 B/px).
  for (; x < n && (out.byteOffset + o) % 4 !== 0; x++, t++, o += 3) {
    const k = grey[t]!;
    out[o] = k;
    out[o + 1] = k;
    out[o + 2] = k;
  }
  if (x + 4 <= n) {
    const words = words32(out.buffer);
    for (let w = (out.byteOffset + o) >> 2; x + 4 <= n; x += 4, t += 4, o += 12, w += 3) {
      const k0 = grey[t]!;
      const k1 = grey[t + 1]!;
      const k2 = grey[t + 2]!;
      const k3 = grey[t + 3]!;
      // Little-endian: the lowest byte is the first in memory.
      words[w] = k0 | (k0 << 8) | (k0 << 16) | (k1 << 24);
      words[w + 1] = k1 | (k1 << 8) | (k2 << 16) | (k2 << 24);
      words[w + 2] = k2 | (k3 << 8) | (k3 << 16) | (k3 << 24);
    }
  }
  for (; x < n; x++, t++, o += 3) {
    const k = grey[t]!;
    out[o] = k;
    out[o + 1] = k;
    out[o + 2] = k;
  }
}

/** Whether any of `pixels` RGB samples spreads by more than COLOUR_CHROMA (stops at the first). */
function hasChroma(rgb: Uint8Array, pixels: number): boolean {
  for (let j = 0; j < pixels * 3; j += 3) {
    const r = rgb[j]!;
    const g = rgb[j + 1]!;
    const b = rgb[j + 2]!;
    const hi = r > g ? (r > b ? r : b) : g > b ? g : b;
    const lo = r < g ? (r < b ? r : b) : g < b ? g : b;
    if (hi - lo > COLOUR_CHROMA) return true;
  }
  return false;
}

/**
 * Pixels [from, to) of an RGB image (3 B/px, no padding) made grey into `grey` (1 B/px) with
 * PDFium's grey weights (rgbToGrey's, which PDFium uses for colours on a grey bitmap). Returns how
 * many of them are coloured (channels spread by more than COLOUR_CHROMA). White runs go four pixels
 * (three words) at a time.
 */
export function greyFromRgb(rgb: Uint8Array, grey: Uint8Array, from: number, to: number): number {
  let coloured = 0;
  /** Pixels [a, b) one at a time. */
  const pixels = (a: number, b: number): void => {
    for (let p = a, c = a * 3; p < b; p++, c += 3) {
      const r = rgb[c]!;
      const g = rgb[c + 1]!;
      const bl = rgb[c + 2]!;
      // x * 5243 >> 19 is floor(x / 100) for every x up to 255 x 100.
      grey[p] = ((r * 30 + g * 59 + bl * 11) * 5243) >> 19;
      const hi = r > g ? (r > bl ? r : bl) : g > bl ? g : bl;
      const lo = r < g ? (r < bl ? r : bl) : g < bl ? g : bl;
      if (hi - lo > COLOUR_CHROMA) coloured++;
    }
  };
  if (rgb.byteOffset % 4 !== 0 || grey.byteOffset % 4 !== 0) {
    pixels(from, to);
    return coloured;
  }
  const head = Math.min(to, (from + 3) & ~3);
  pixels(from, head);
  const words = new Uint32Array(rgb.buffer, rgb.byteOffset, Math.floor(rgb.length / 4));
  const greyWords = new Int32Array(grey.buffer, grey.byteOffset, Math.floor(grey.length / 4));
  let p = head;
  // Four pixels are three words: all white, one word of grey; else the four one at a time.
  for (let q = p >> 2, w = q * 3; p + 4 <= to; p += 4, q++, w += 3) {
    if ((words[w]! & words[w + 1]! & words[w + 2]!) === -1) {
      greyWords[q] = -1;
      continue;
    }
    for (let k = 0, c = w * 4; k < 4; k++, c += 3) {
      const r = rgb[c]!;
      const g = rgb[c + 1]!;
      const bl = rgb[c + 2]!;
      if (r === g && g === bl) {
        // A grey pixel (a scan's or a black line's): its grey is its value, (100 r) / 100.
        grey[p + k] = r;
        continue;
      }
      grey[p + k] = ((r * 30 + g * 59 + bl * 11) * 5243) >> 19;
      const hi = r > g ? (r > bl ? r : bl) : g > bl ? g : bl;
      const lo = r < g ? (r < bl ? r : bl) : g < bl ? g : bl;
      if (hi - lo > COLOUR_CHROMA) coloured++;
    }
  }
  pixels(p, to);
  return coloured;
}

/**
 * Rows [y0, y1) of a colour bitmap in `heap` (R G B, `stride` bytes a row) copied into `rgb` (the
 * page's, 3 B/px) and made grey into `grey` (greyFromRgb) a few rows at a time, while they are in the
 * cache: one sweep over the page instead of two. Returns the coloured pixels (greyFromRgb's count).
 */
function copyColourRows(
  heap: Uint8Array,
  buf: number,
  stride: number,
  width: number,
  y0: number,
  y1: number,
  rgb: Uint8Array,
  grey: Uint8Array,
): number {
  const step = Math.max(1, Math.floor(COPY_CHUNK_BYTES / (width * 3)));
  let coloured = 0;
  for (let y = y0; y < y1; y += step) {
    const end = Math.min(y1, y + step);
    if (stride === width * 3) {
      rgb.set(heap.subarray(buf + y * stride, buf + end * stride), y * stride);
    } else {
      for (let r = y; r < end; r++) {
        const row = buf + r * stride;
        rgb.set(heap.subarray(row, row + width * 3), r * width * 3);
      }
    }
    coloured += greyFromRgb(rgb, grey, y * width, end * width);
  }
  return coloured;
}

/** The PDFium instance's heap for the raster-simd.ts kernels. */
function simdHeap(inst: Instance): SimdHeap {
  const e = inst.api.pdfium.wasmExports;
  return { memory: e.memory, malloc: (n) => e.malloc(n), free: (p) => e.free(p) };
}

/**
 * copyColourRows with the grey derived in PDFium's heap by WebAssembly SIMD (greyRowsSimd: the same
 * bytes and count as greyFromRgb) a chunk of rows at a time, then the colour rows and their grey
 * copied out. Undefined (nothing written) when the kernel or its scratch is not available.
 */
function copyColourRowsSimd(
  simd: SimdHeap,
  buf: number,
  stride: number,
  width: number,
  y0: number,
  y1: number,
  rgb: Uint8Array,
  grey: Uint8Array,
): number | undefined {
  const step = Math.max(1, Math.floor(COPY_CHUNK_BYTES / (width * 3)));
  const scratchAt = simd.malloc(step * width);
  if (!scratchAt) return undefined;
  try {
    // After malloc: the heap may have grown (a new buffer).
    const heap = new Uint8Array(simd.memory.buffer);
    let coloured = 0;
    for (let y = y0; y < y1; y += step) {
      const end = Math.min(y1, y + step);
      const n = greyRowsSimd(simd, buf + y * stride, stride, width, end - y, scratchAt);
      if (n < 0) return undefined;
      coloured += n;
      grey.set(heap.subarray(scratchAt, scratchAt + (end - y) * width), y * width);
      if (stride === width * 3) {
        rgb.set(heap.subarray(buf + y * stride, buf + end * stride), y * stride);
      } else {
        for (let r = y; r < end; r++) {
          const row = buf + r * stride;
          rgb.set(heap.subarray(row, row + width * 3), r * width * 3);
        }
      }
    }
    return coloured;
  } finally {
    simd.free(scratchAt);
  }
}

/** Bytes of colour rows copyColourRows copies before deriving their grey (well inside L2). */
const COPY_CHUNK_BYTES = 128 * 1024;

interface Instance {
  api: PdfiumApi;
  /** IFSDK_PAUSE struct in the heap: { int version; NeedToPauseNow*; void* user }. */
  pause: number;
  /** FS_SIZEF scratch in the heap: { float width; float height }. */
  size: number;
  /** 64 bytes of scratch in the heap (8-aligned) for the text layer's out-parameters. */
  scratch: number;
  /** performance.now() after which NeedToPauseNow answers yes. */
  pauseAt: number;
  /** Tail of the chain that serialises calls on this instance. */
  queue: Promise<unknown>;
  /** Set when the instance trapped (WASM RuntimeError): its heap can no longer be trusted. */
  broken: boolean;
}

let instancePromise: Promise<Instance> | undefined;

/**
 * Path of pdfium.wasm inside the installed package. In a packaged Electron app node_modules sits in
 * app.asar, which worker threads cannot read: electron-builder unpacks the package (asarUnpack) and
 * the unpacked copy is preferred when it exists.
 */
export function pdfiumWasmPath(): string {
  const require = createRequire(import.meta.url);
  const p = require.resolve('@embedpdf/pdfium/pdfium.wasm');
  const unpacked = p.replace(/([\\/])app\.asar([\\/])/, '$1app.asar.unpacked$2');
  return unpacked !== p && existsSync(unpacked) ? unpacked : p;
}

async function createInstance(): Promise<Instance> {
  const [{ init }, wasmBinary] = await Promise.all([
    import('@embedpdf/pdfium') as unknown as Promise<{
      init(o: { wasmBinary: ArrayBuffer }): Promise<PdfiumApi>;
    }>,
    readFile(pdfiumWasmPath()),
  ]);
  const api = await init({
    wasmBinary: wasmBinary.buffer.slice(
      wasmBinary.byteOffset,
      wasmBinary.byteOffset + wasmBinary.byteLength,
    ) as ArrayBuffer,
  });
  api.PDFiumExt_Init();
  const inst: Instance = {
    api,
    pause: 0,
    size: 0,
    scratch: 0,
    pauseAt: Infinity,
    queue: Promise.resolve(),
    broken: false,
  };
  const needToPause = api.pdfium.addFunction(
    () => (performance.now() >= inst.pauseAt ? 1 : 0),
    'ii',
  );
  inst.pause = api.pdfium.wasmExports.malloc(12);
  inst.size = api.pdfium.wasmExports.malloc(8);
  inst.scratch = api.pdfium.wasmExports.malloc(64);
  const h32 = api.pdfium.HEAP32;
  h32[inst.pause >> 2] = 1; // version
  h32[(inst.pause >> 2) + 1] = needToPause;
  h32[(inst.pause >> 2) + 2] = 0;
  return inst;
}

/** The thread's PDFium instance (compiled on first use, ~0.1-0.3 s; a fresh one after a trap). */
function getInstance(): Promise<Instance> {
  instancePromise ??= createInstance().catch((e: unknown) => {
    instancePromise = undefined;
    throw e;
  });
  return instancePromise;
}

/** Run `fn` alone on the instance; a WASM trap retires the instance so the next document gets a new one. */
function exclusive<T>(inst: Instance, fn: () => Promise<T> | T): Promise<T> {
  const run = inst.queue.then(async () => {
    if (inst.broken) throw new Error('PDFium instance was retired after a WebAssembly trap');
    try {
      return await fn();
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) {
        inst.broken = true;
        if (instancePromise && (await instancePromise.catch(() => undefined)) === inst) {
          instancePromise = undefined;
        }
      }
      throw e;
    }
  });
  inst.queue = run.catch(() => {});
  return run;
}

/** A band must lie inside the page and `into` must hold the whole page. */
function checkBand(band: PdfiumBand, width: number, height: number): void {
  const { top, rows, into } = band;
  if (
    !Number.isInteger(top) ||
    !Number.isInteger(rows) ||
    top < 0 ||
    rows < 1 ||
    top + rows > height
  ) {
    throw new RangeError(
      `Expected a band of at least 1 row inside rows 0..${height - 1} but received top ${top}, rows ${rows}`,
    );
  }
  if (into.length !== width * height) {
    throw new RangeError(
      `Expected a band target of ${width} x ${height} = ${width * height} bytes (the whole page) but received ${into.length}`,
    );
  }
  if (band.rgbInto && band.rgbInto.length !== width * height * 3) {
    throw new RangeError(
      `Expected a colour band target of ${width} x ${height} x 3 = ${width * height * 3} bytes (the whole page) but received ${band.rgbInto.length}`,
    );
  }
}

function corrupt(what: string, reason: string, pageIndex?: number, cause?: unknown): InputError {
  return new InputError(
    'corrupt_file',
    `${what} could not be read: its structure is damaged (${reason}). Re-export the drawing to PDF and upload it again.`,
    {
      ...(pageIndex === undefined ? {} : { pageIndex }),
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** Map FPDF_GetLastError() after a failed FPDF_LoadMemDocument to the input layer's error. */
function loadError(code: number): InputError {
  if (code === FPDF_ERR_PASSWORD || code === FPDF_ERR_SECURITY) {
    return new InputError(
      'encrypted_pdf',
      code === FPDF_ERR_PASSWORD
        ? 'The PDF is password-protected. Open it with its password, save or print an unprotected copy, and upload that copy.'
        : 'The PDF is protected with a security handler that cannot be opened (password-protected or DRM). Save or print an unprotected copy and upload that copy.',
    );
  }
  const reason =
    code === FPDF_ERR_FORMAT
      ? 'not a valid PDF structure'
      : code === FPDF_ERR_FILE
        ? 'the file could not be read'
        : code === FPDF_ERR_PAGE
          ? 'a page could not be found'
          : `PDFium error ${code}`;
  return corrupt('The PDF', reason);
}

export interface PdfiumPageInfo {
  /** Page width and height in PDF points after /Rotate and the crop box (as printed). */
  widthPt: number;
  heightPt: number;
  /** The page's /Rotate, normalised to 0, 90, 180 or 270. */
  rotate: number;
}

export interface PdfiumRenderOptions {
  dpi: number;
  maxPixels: number;
  /** Pixel size of the raster (the caller's rounding of the page size at dpi). */
  pixelSize(widthPt: number, heightPt: number, dpi: number): { width: number; height: number };
  /** Decode eligible images outside PDFium (decodeImages); default true. */
  decodeImages?: boolean;
  /**
   * With the text (renderPageWithText, or the band that reads the text): also the page's line work
   * drawn from its objects (lineWorkPass), as PageRaster.lineWork. Default false.
   */
  lineWork?: boolean;
  /**
   * Keep colour where the page has it (the one place that chooses colour or grey): a page whose
   * objects may draw in colour (mayHaveColour) renders once into a colour bitmap, and its grey is
   * derived from that render; the raster then carries `rgb` when enough of its pixels are coloured
   * (keepsColour; a band always carries its `rgbInto` and its count). Pages of grey objects
   * render grey as without this option. Default false: grey only.
   */
  colour?: boolean;
  timings?: {
    lineWorkMs?: number;
    /** Of lineWorkMs: the fill and annotation passes (objectLayerPasses), when the page has them. */
    objectLayersMs?: number;
    pageMs: number;
    renderMs: number;
    readbackMs: number;
    greyMs: number;
    textMs?: number;
    imagesMs?: number;
    imageBytes?: number;
    paintedImages?: number;
    paintedFromCache?: number;
  };
}

/**
 * Rows [top, top + rows) of a page's raster, written into `into`: the whole page's grey buffer
 * (width x height bytes, row-major), which other bands fill from other threads (a view of a
 * SharedArrayBuffer). Bands of one page rendered in parallel assemble the page.
 */
export interface PdfiumBand {
  top: number;
  rows: number;
  into: Uint8Array;
  /**
   * The whole page's colour buffer (3 B/px, R G B), for a colour render (PdfiumRenderOptions.colour):
   * written only when the page renders in colour. Without it the band renders grey.
   */
  rgbInto?: Uint8Array;
}

/** A rendered page and the text read from the same loaded page. */
export interface PdfiumPageContent {
  raster: PageRaster;
  text: TextItem[];
}

/**
 * An open PDFium document. Owns the PDF bytes copied into the WASM heap and the FPDF_DOCUMENT; pages
 * and bitmaps live only inside one call. close() frees everything (idempotent).
 */
export class PdfiumDocument {
  private closed = false;
  /** Images PDFium may be given decoded (pdf-image-index.ts), built on the first render. */
  private images: Map<string, PredictedImage> | undefined;
  /** Bytes of decoded images handed to PDFium since the document was (re)opened. */
  private decodedBytes = 0;
  /** The painter's decoded grey samples by image (PAINT_CACHE_BYTES), and their bytes. */
  private painted = new Map<string, Uint8Array>();
  /** The same for colour renders: the R, G, B planes of colour images (counted in paintedBytes). */
  private paintedRgb = new Map<string, Uint8Array>();
  /**
   * RGB images a colour render found grey (no chroma: painted from their grey), so that their kept
   * grey serves colour renders too (the blank tile a barber house sheet places six times).
   */
  private greyTiles = new Set<string>();
  private paintedBytes = 0;
  /**
   * The page renderRegion keeps loaded: a viewer asks for many tiles of one page in a row, and
   * loading (parsing the content of) a large sheet costs about as much as rendering a tile.
   */
  private kept: { index: number; page: number } | undefined;
  /** classifyObjects of the kept page (regionClasses), for the deep tiles' line-work pass. */
  private keptClasses:
    { kept: object; width: number; height: number; cls: RegionClasses } | undefined;

  private constructor(
    private readonly inst: Instance,
    private doc: number,
    private readonly bytesPtr: number,
    private readonly byteLength: number,
    readonly pageCount: number,
    private readonly limits: Required<InputLimits>,
  ) {}

  /** Load `bytes` (copied into the WASM heap). Throws InputError corrupt_file / encrypted_pdf. */
  static async open(bytes: Uint8Array, limits: Required<InputLimits>): Promise<PdfiumDocument> {
    const inst = await getInstance();
    return exclusive(inst, () => {
      const { api } = inst;
      const ptr = api.pdfium.wasmExports.malloc(bytes.byteLength);
      if (!ptr) throw corrupt('The PDF', 'too large to load into memory');
      api.pdfium.HEAPU8.set(bytes, ptr);
      const doc = api.FPDF_LoadMemDocument(ptr, bytes.byteLength, '');
      if (!doc) {
        const code = api.FPDF_GetLastError();
        api.pdfium.wasmExports.free(ptr);
        throw loadError(code === FPDF_ERR_SUCCESS ? FPDF_ERR_FORMAT : code);
      }
      return new PdfiumDocument(
        inst,
        doc,
        ptr,
        bytes.byteLength,
        api.FPDF_GetPageCount(doc),
        limits,
      );
    });
  }

  private checkIndex(index: number): void {
    if (this.closed) throw new Error('PdfDocumentHandle used after close()');
    if (!Number.isInteger(index) || index < 0 || index >= this.pageCount) {
      throw new RangeError(`Page index ${index} is out of range 0..${this.pageCount - 1}`);
    }
  }

  /** FPDF_LoadPage with the input layer's error; the caller closes the page. */
  private loadPage(index: number): number {
    const page = this.inst.api.FPDF_LoadPage(this.doc, index);
    if (!page) {
      throw corrupt(
        `Page ${index + 1} of the PDF`,
        `PDFium error ${this.inst.api.FPDF_GetLastError()}`,
        index,
      );
    }
    return page;
  }

  /**
   * The document Info dictionary's `tag` entry (CreationDate, Title, …) as text, or null when it is
   * absent or empty. Reads the trailer's /Info only: no page is loaded.
   */
  metaText(tag: string): Promise<string | null> {
    if (this.closed) throw new Error('PdfDocumentHandle used after close()');
    return exclusive(this.inst, () => {
      const { api } = this.inst;
      const bytes = api.FPDF_GetMetaText(this.doc, tag, 0, 0);
      // Two bytes is the UTF-16 terminator alone: no such entry.
      if (bytes <= 2) return null;
      const ptr = api.pdfium.wasmExports.malloc(bytes);
      if (!ptr) return null;
      try {
        api.FPDF_GetMetaText(this.doc, tag, ptr, bytes);
        const utf16 = api.pdfium.HEAPU8.slice(ptr, ptr + bytes - 2);
        return (
          Buffer.from(utf16.buffer, utf16.byteOffset, utf16.byteLength).toString('utf16le') || null
        );
      } finally {
        api.pdfium.wasmExports.free(ptr);
      }
    });
  }

  /** Page size and /Rotate from the page dictionary alone (no content parsing). */
  pageInfo(index: number): Promise<PdfiumPageInfo> {
    this.checkIndex(index);
    return exclusive(this.inst, () => {
      const { api, size } = this.inst;
      if (!api.FPDF_GetPageSizeByIndexF(this.doc, index, size)) {
        throw corrupt(`Page ${index + 1} of the PDF`, 'the page could not be found', index);
      }
      const f32 = api.pdfium.HEAPF32;
      return {
        widthPt: f32[size >> 2]!,
        heightPt: f32[(size >> 2) + 1]!,
        rotate: (api.EPDF_GetPageRotationByIndex(this.doc, index) & 3) * 90,
      };
    });
  }

  /**
   * One page as 8-bit grey (0 black .. 255 white) at opts.dpi, annotations drawn, /Rotate and crop box
   * applied. Refuses with page_too_large before any bitmap is allocated. Progressive rendering pauses
   * every RENDER_SLICE_MS so the time budget is enforced between steps (processing_timeout).
   */
  renderPage(index: number, opts: PdfiumRenderOptions): Promise<PageRaster> {
    return this.read(index, opts, false).then((r) => r.raster);
  }

  /**
   * renderPage plus the page's text runs (sheet pixels at opts.dpi, see pdfium-text.ts), read from the
   * page while it is loaded for the raster: one content parse for both.
   */
  renderPageWithText(index: number, opts: PdfiumRenderOptions): Promise<PdfiumPageContent> {
    return this.read(index, opts, true);
  }

  /**
   * One band of the page's raster (see PdfiumBand), and the page's text runs when `withText`. The
   * returned raster's `data` is `band.into`. The bands of a page assemble exactly the pixels of one
   * band, and on the fixture sheets exactly renderPage's (all 46 pages checked at 200 dpi; see the
   * comment in read() for pages of fractional size). The page is loaded (content parse) for each
   * band: a few ms against a render of 90 ms to over a second. Unlike renderPage, the render is one
   * blocking call that the time budget cannot interrupt: run it where its thread can be ended (the
   * pool).
   */
  renderBand(
    index: number,
    opts: PdfiumRenderOptions,
    band: PdfiumBand,
    withText: boolean,
  ): Promise<PdfiumPageContent> {
    return this.read(index, opts, withText, band);
  }

  /**
   * The page's text runs alone (sheet pixels at `dpi`, same box as renderPage at that dpi): loads the
   * page without rendering it. No pixel limit applies, since no bitmap is made.
   */
  pageText(
    index: number,
    opts: Pick<PdfiumRenderOptions, 'dpi' | 'pixelSize'>,
  ): Promise<TextItem[]> {
    this.checkIndex(index);
    const run = exclusive(this.inst, () => {
      if (this.closed) throw new Error('PdfDocumentHandle used after close()');
      const { api } = this.inst;
      const t0 = performance.now();
      const page = this.loadPage(index);
      try {
        const { width, height } = opts.pixelSize(
          api.FPDF_GetPageWidthF(page),
          api.FPDF_GetPageHeightF(page),
          opts.dpi,
        );
        return readText(
          this.inst,
          page,
          width,
          height,
          this.deadlineCheck(index, t0, 'Reading the text of'),
        );
      } finally {
        api.FPDF_ClosePage(page);
      }
    });
    return withTimeout(
      run,
      this.limits.pageTimeoutMs + this.limits.openTimeoutMs,
      `Reading the text of page ${index + 1}`,
      undefined,
      index,
    );
  }

  /**
   * Decodes the page's eligible images (pdf-image-index.ts) outside PDFium: their Flate data
   * inflated by node:zlib, their PNG predictors undone here (png-predictor.ts). Then either
   *  - the image is drawn here (`own`): opaque, upright, unclipped, unmarked images (the tiles of a
   *    scanned sheet) are scaled to their place on the raster (grey-resample.ts) and painted between
   *    PDFium's passes over the objects before and after them (see read()). PDFium draws an image at
   *    ~10 ns a raster pixel whatever form it comes in, the tiles of a scanned sheet cover it whole;
   *  - or its samples are handed to PDFium (FPDFImageObj_SetBitmap), which then draws exactly the
   *    pixels it would have drawn from the stream, without decoding it.
   * Images outside `rows` (a band's, in raster rows) are left alone: PDFium skips them there, and
   * so does the painter. Anything unexpected leaves the image to PDFium.
   */
  private decodeImages(
    page: number,
    width: number,
    height: number,
    rows: [number, number] | undefined,
    checkDeadline: () => void,
    colour = false,
  ): { handed: number; own: Map<number, OwnImage>; fromCache: number } {
    const { api } = this.inst;
    const M = api.pdfium;
    const own = new Map<number, OwnImage>();
    if (!this.images) {
      try {
        this.images = indexPredictedImages(
          M.HEAPU8.subarray(this.bytesPtr, this.bytesPtr + this.byteLength),
        );
      } catch {
        this.images = new Map(); // e.g. a file too large for one string: PDFium decodes everything
      }
    }
    if (this.images.size === 0) return { handed: 0, own, fromCache: 0 };
    const s = this.inst.scratch;
    const affine = pageToDevice(this.inst, page, width, height);
    let handed = 0;
    /**
     * Decodes an image: its grey samples for the painter (and, for a colour render, its R, G and B
     * planes in `planes`), or handed over to PDFium.
     */
    let planes: Uint8Array | undefined;
    const decode = (obj: number, image: PredictedImage, raw: Uint8Array, paint: boolean) => {
      planes = undefined;
      const { width: w, height: h, comps } = image;
      let samples: Buffer;
      try {
        // One output chunk of exactly the samples' size: no growing and joining of 16 KiB chunks.
        const size = h * (1 + w * comps);
        samples = inflateSync(raw, { maxOutputLength: size, chunkSize: Math.max(64, size) });
      } catch {
        return undefined; // damaged, or more data than the image holds: PDFium decides what to draw
      }
      if (paint) {
        if (comps === 1) {
          const px = new Uint8Array(w * h);
          return unpredictPng(samples, w, h, 1, px, 0, w, false) ? px : undefined;
        }
        const rgb = scratch(0, w * h * 3);
        if (!unpredictPng(samples, w, h, 3, rgb, 0, w * 3, false)) return undefined;
        // A colour render keeps the image's planes only when it has colour: most scanned tiles
        // are grey stored as RGB, and are painted as grey. A colour image is painted from its
        // planes alone: its grey is not made (NO_GREY).
        if (colour && hasChroma(rgb, w * h)) {
          planes = rgb.slice();
          return NO_GREY;
        }
        return rgbToGrey(rgb, w * h);
      }
      const bitmap = api.FPDFBitmap_CreateEx(
        w,
        h,
        comps === 3 ? FPDFBitmap_BGR : FPDFBitmap_Gray,
        0,
        0,
      );
      if (!bitmap) return undefined;
      try {
        const stride = api.FPDFBitmap_GetStride(bitmap);
        const buf = api.FPDFBitmap_GetBuffer(bitmap);
        if (!unpredictPng(samples, w, h, comps, M.HEAPU8, buf, stride, true)) return undefined;
        if (api.FPDFImageObj_SetBitmap(0, 0, obj, bitmap)) handed += w * h * comps;
      } finally {
        api.FPDFBitmap_Destroy(bitmap);
      }
      return undefined;
    };
    // Images the painter may draw wait until the page's content order is known; the others are
    // handed over at once. In a band, images outside its rows are not decoded, but those the
    // painter would draw still count in the content order, so that a band paints exactly what the
    // whole page paints.
    const paintable: {
      i: number;
      obj: number;
      image: PredictedImage;
      raw: Uint8Array;
      key: string;
      place: Place;
      inBand: boolean;
    }[] = [];
    const n = api.FPDFPage_CountObjects(page);
    for (let i = 0; i < n; i++) {
      const obj = api.FPDFPage_GetObject(page, i);
      if (api.FPDFPageObj_GetType(obj) !== FPDF_PAGEOBJ_IMAGE) continue;
      if (api.FPDFImageObj_GetImageFilterCount(obj) !== 1) continue;
      const inBand = !rows || this.meetsRows(obj, affine, rows);
      const len = api.FPDFImageObj_GetImageDataRaw(obj, 0, 0);
      if (len <= 0) continue;
      const rawPtr = M.wasmExports.malloc(len);
      if (!rawPtr) continue;
      let raw: Uint8Array;
      try {
        if (api.FPDFImageObj_GetImageDataRaw(obj, rawPtr, len) !== len) continue;
        raw = M.HEAPU8.slice(rawPtr, rawPtr + len);
      } finally {
        M.wasmExports.free(rawPtr);
      }
      const key = rawImageKey(raw);
      const image = this.images.get(key);
      if (!image) continue;
      if (!api.FPDFImageObj_GetImagePixelSize(obj, s, s + 4)) continue;
      if (M.HEAP32[s >> 2] !== image.width || M.HEAP32[(s >> 2) + 1] !== image.height) continue;
      const place = affine && this.ownPlace(obj, affine, image.width, image.height);
      if (place) paintable.push({ i, obj, image, raw, key, place, inBand });
      else if (inBand) decode(obj, image, raw, false);
      checkDeadline();
    }
    // Each stretch of PDFium's objects between painted images costs a pass: when they alternate
    // too often, PDFium draws them all.
    const paint = paintRuns(n, new Set(paintable.map((p) => p.i))).length <= MAX_PAINT_RUNS;
    let fromCache = 0;
    for (const { i, obj, image, raw, key, place, inBand } of paintable) {
      const { width: w, height: h, comps } = image;
      if (!inBand) {
        // Outside the band: PDFium would clip it away; the painter's pass skips it.
        if (paint) own.set(i, { ...place, width: w, height: h, grey: new Uint8Array(0), bytes: 0 });
        continue;
      }
      let grey = paint ? this.painted.get(key) : undefined;
      let rgb = paint && colour && comps === 3 ? this.paintedRgb.get(key) : undefined;
      // A colour render of an RGB image needs its planes, or to know it has none (greyTiles).
      const kept =
        colour && comps === 3
          ? rgb !== undefined || (grey !== undefined && this.greyTiles.has(key))
          : grey !== undefined;
      if (kept) {
        fromCache++;
        grey ??= NO_GREY;
      } else {
        grey = decode(obj, image, raw, paint);
        rgb = planes;
        if (paint && colour && comps === 3 && grey && !rgb) this.greyTiles.add(key);
        if (
          grey &&
          grey !== NO_GREY &&
          !this.painted.has(key) &&
          this.paintedBytes + grey.length <= PAINT_CACHE_BYTES
        ) {
          this.painted.set(key, grey);
          this.paintedBytes += grey.length;
        }
        if (rgb && this.paintedBytes + rgb.length <= PAINT_CACHE_BYTES) {
          this.paintedRgb.set(key, rgb);
          this.paintedBytes += rgb.length;
        }
      }
      if (grey) own.set(i, { ...place, width: w, height: h, grey, rgb, bytes: w * h * comps });
      checkDeadline();
    }
    this.decodedBytes += handed;
    return { handed, own, fromCache };
  }

  /**
   * Where an image object lands on the raster when the painter may draw it: opaque (no
   * transparency, soft mask or blend), unmarked (no optional content), unclipped, and upright (its
   * rows along the raster's rows, not flipped). The rectangle is PDFium's for an image: the outer
   * integer rectangle of its unit square.
   */
  private ownPlace(
    obj: number,
    affine: RasterAffine,
    width: number,
    height: number,
  ): Place | undefined {
    const { api } = this.inst;
    const M = api.pdfium;
    if (api.FPDFPageObj_HasTransparency(obj)) return undefined;
    if (api.FPDFPageObj_CountMarks(obj) !== 0) return undefined;
    // Every object has a clip path handle; an unclipped one counts -1 paths (no clip).
    const clip = api.FPDFPageObj_GetClipPath(obj);
    if (clip && api.FPDFClipPath_CountPaths(clip) > 0) return undefined;
    const s = this.inst.scratch;
    if (!api.FPDFPageObj_GetMatrix(obj, s)) return undefined;
    const f = s >> 2;
    const m = M.HEAPF32;
    const [a, b, c, d, e, ff] = [m[f]!, m[f + 1]!, m[f + 2]!, m[f + 3]!, m[f + 4]!, m[f + 5]!];
    // The image's unit square (u, v) on the raster.
    const dev = (u: number, v: number) => toRaster(affine, a * u + c * v + e, b * u + d * v + ff);
    const [x00, y00] = dev(0, 0); // bottom-left of the image (its last row)
    const [x10, y10] = dev(1, 0);
    const [x01, y01] = dev(0, 1); // top-left (its first row)
    const eps = 1e-3;
    // Upright: u along +x, v along -y on the raster.
    if (Math.abs(y10 - y00) > eps || Math.abs(x01 - x00) > eps) return undefined;
    if (!(x10 > x00 && y01 < y00)) return undefined;
    const left = Math.floor(x00 + eps);
    const right = Math.ceil(x10 - eps);
    const top = Math.floor(y01 + eps);
    const bottom = Math.ceil(y00 - eps);
    if (right <= left || bottom <= top) return undefined;
    // Only images enlarged 1.5-2.5x: there PDFium's stretch is slow (~4 ms a 283 x 275 scan tile
    // drawn at 2x, against ~1 ms here) and bilinear, as grey-resample.ts. Near 1:1 or reduced,
    // PDFium draws handed-over samples faster than they are scaled here; enlarged further (from
    // ~2.7x, depending on the size) it switches to replicating pixels.
    const [sx, sy] = [(right - left) / width, (bottom - top) / height];
    if (Math.min(sx, sy) < ENLARGED[0] || Math.max(sx, sy) > ENLARGED[1]) return undefined;
    return { left, top, right, bottom };
  }

  /** Whether the image object's bounds reach raster rows [rows[0], rows[1]) (2 rows of margin). */
  private meetsRows(
    obj: number,
    affine: RasterAffine | undefined,
    rows: [number, number],
  ): boolean {
    const { api } = this.inst;
    const s = this.inst.scratch;
    if (!affine || !api.FPDFPageObj_GetBounds(obj, s, s + 4, s + 8, s + 12)) return true;
    const f32 = api.pdfium.HEAPF32;
    const f = s >> 2;
    const [l, b, r, t] = [f32[f]!, f32[f + 1]!, f32[f + 2]!, f32[f + 3]!];
    const ys = [
      toRaster(affine, l, b),
      toRaster(affine, l, t),
      toRaster(affine, r, b),
      toRaster(affine, r, t),
    ].map((p) => p[1]);
    return Math.max(...ys) + 2 >= rows[0] && Math.min(...ys) - 2 < rows[1];
  }

  /**
   * Whether the loaded page may draw anything in colour: a path, text or stencil mask of a colour
   * that is not grey, any image (a scan stored as RGB may be grey: its pixels decide), a shading, or an annotation that draws (all but links and popups; clouds
   * and markups are usually coloured). Form XObjects are looked into. Unknown colours count as
   * colour: the render's pixels decide in the end (keepsColour). Reads the parsed objects only.
   */
  private mayHaveColour(page: number): boolean {
    const { api } = this.inst;
    const M = api.pdfium;
    const s = this.inst.scratch;
    const u32 = (k: number) => M.HEAP32[(s >> 2) + k]! >>> 0;
    const isGrey = (got: boolean) => {
      if (!got) return true; // no such colour (e.g. a path that is not stroked)
      const [r, g, b] = [u32(0), u32(1), u32(2)];
      return Math.abs(r - g) <= 2 && Math.abs(g - b) <= 2 && Math.abs(r - b) <= 2;
    };
    const fillGrey = (obj: number) =>
      isGrey(api.FPDFPageObj_GetFillColor(obj, s, s + 4, s + 8, s + 12));
    const strokeGrey = (obj: number) =>
      isGrey(api.FPDFPageObj_GetStrokeColor(obj, s, s + 4, s + 8, s + 12));
    const objectColour = (obj: number, depth: number): boolean => {
      switch (api.FPDFPageObj_GetType(obj)) {
        case FPDF_PAGEOBJ_PATH: {
          if (!api.FPDFPath_GetDrawMode(obj, s + 16, s + 20))
            return !fillGrey(obj) || !strokeGrey(obj);
          const fills = M.HEAP32[(s + 16) >> 2] !== 0;
          const strokes = M.HEAP32[(s + 20) >> 2] !== 0;
          return (fills && !fillGrey(obj)) || (strokes && !strokeGrey(obj));
        }
        case FPDF_PAGEOBJ_TEXT:
          return !fillGrey(obj) || !strokeGrey(obj);
        case FPDF_PAGEOBJ_IMAGE:
          // Its colour space is not asked: PDFium inflates the image's whole stream to tell it
          // (FPDFImageObj_GetImageMetadata), the work decodeImages saves. Its pixels decide.
          return true;
        case FPDF_PAGEOBJ_SHADING:
          return true;
        case FPDF_PAGEOBJ_FORM: {
          if (depth > 12) return true;
          const n = api.FPDFFormObj_CountObjects(obj);
          for (let i = 0; i < n; i++) {
            const child = api.FPDFFormObj_GetObject(obj, i);
            if (child && objectColour(child, depth + 1)) return true;
          }
          return false;
        }
        default:
          return false;
      }
    };
    const n = api.FPDFPage_CountObjects(page);
    for (let i = 0; i < n; i++) {
      const obj = api.FPDFPage_GetObject(page, i);
      if (obj && objectColour(obj, 0)) return true;
    }
    const annots = api.FPDFPage_GetAnnotCount(page);
    for (let i = 0; i < annots; i++) {
      const annot = api.FPDFPage_GetAnnot(page, i);
      if (!annot) continue;
      try {
        if (!NO_APPEARANCE.has(api.FPDFAnnot_GetSubtype(annot))) return true;
      } finally {
        api.FPDFPage_CloseAnnot(annot);
      }
    }
    return false;
  }

  /**
   * Reopens the document once the decoded images it caches pass their budget (see
   * DECODED_IMAGE_BUDGET_BYTES). Called with no page of it loaded.
   */
  private reopenIfOverBudget(): void {
    if (this.decodedBytes <= DECODED_IMAGE_BUDGET_BYTES) return;
    const { api } = this.inst;
    this.releaseKept();
    const doc = api.FPDF_LoadMemDocument(this.bytesPtr, this.byteLength, '');
    if (!doc) return; // it opened before: keep the one we have
    api.FPDF_CloseDocument(this.doc);
    this.doc = doc;
    this.decodedBytes = 0;
  }

  /** Throws processing_timeout once the page's time budget (from t0) is spent. */
  private deadlineCheck(index: number, t0: number, what = 'Rendering'): () => void {
    const deadline = t0 + this.limits.pageTimeoutMs;
    return () => {
      if (performance.now() <= deadline) return;
      throw new InputError(
        'processing_timeout',
        timeoutDetail(`${what} page ${index + 1}`, this.limits.pageTimeoutMs),
        { pageIndex: index },
      );
    };
  }

  private read(
    index: number,
    opts: PdfiumRenderOptions,
    withText: boolean,
    band?: PdfiumBand,
  ): Promise<PdfiumPageContent> {
    this.checkIndex(index);
    const { dpi, maxPixels } = opts;
    const run = exclusive(this.inst, async () => {
      if (this.closed) throw new Error('PdfDocumentHandle used after close()');
      const inst = this.inst;
      const { api } = inst;
      const t0 = performance.now();
      const page = this.loadPage(index);
      let bitmap = 0;
      let rendering = false;
      try {
        const widthPt = api.FPDF_GetPageWidthF(page);
        const heightPt = api.FPDF_GetPageHeightF(page);
        const { width, height } = opts.pixelSize(widthPt, heightPt, dpi);
        if (width * height > maxPixels) {
          throw pageTooLarge({
            pageIndex: index,
            widthIn: widthPt / 72,
            heightIn: heightPt / 72,
            dpi,
            widthPx: width,
            heightPx: height,
            maxPixels,
          });
        }
        if (band) checkBand(band, width, height);
        // Colour only where the page may draw it (a band only when it has somewhere to put it).
        const colour =
          opts.colour === true && (!band || band.rgbInto !== undefined) && this.mayHaveColour(page);
        const t1 = performance.now();
        bitmap = api.FPDFBitmap_CreateEx(
          width,
          height,
          colour ? FPDFBitmap_BGR : FPDFBitmap_Gray,
          0,
          0,
        );
        if (!bitmap) {
          throw new InputError(
            'page_too_large',
            `Page ${index + 1} at ${dpi} dpi (${width} x ${height} px) does not fit in the renderer's memory. Render it at a lower dpi or split the page.`,
            { pageIndex: index },
          );
        }
        // The budget covers the content parse (FPDF_LoadPage) and the text layer too, and is checked
        // between render steps. One step cannot be interrupted: decoding a large image may overrun the
        // budget by its length.
        const checkDeadline = this.deadlineCheck(index, t0);
        const rows: [number, number] = band
          ? [
              band.top - Math.min(BAND_RUN_IN_ROWS, band.top),
              Math.min(height, band.top + band.rows + BAND_RUN_IN_ROWS),
            ]
          : [0, height];
        let own = new Map<number, OwnImage>();
        if (opts.decodeImages !== false) {
          const ti = performance.now();
          const r = this.decodeImages(
            page,
            width,
            height,
            band ? rows : undefined,
            checkDeadline,
            colour,
          );
          own = r.own;
          if (opts.timings) {
            opts.timings.imagesMs = performance.now() - ti;
            opts.timings.imageBytes = r.handed + [...own.values()].reduce((t, o) => t + o.bytes, 0);
            opts.timings.paintedImages = own.size;
            opts.timings.paintedFromCache = r.fromCache;
          }
        }
        fillPaperRows(api, bitmap, width, rows[0], rows[1]);
        checkDeadline();
        /** PDFium draws the page's active objects (all of them, unless the painter is at work). */
        const pass = async (annots: number) => {
          const flags = annots | (colour ? FPDF_REVERSE_BYTE_ORDER : 0);
          if (band) {
            // The whole page's transform, clipped to the band's rows (PDFium skips objects outside
            // the clip): every band of a page uses the same transform, so the bands assemble
            // exactly the pixels of one band. Only the band's rows of the bitmap are written. One
            // blocking call: the pool bounds its time (ingest-in-pool.ts gives band tasks a time
            // limit that ends the worker).
            const f32 = api.pdfium.HEAPF32;
            const m = inst.scratch >> 2;
            // FPDF_RenderPageBitmapWithMatrix starts from the page's display matrix (points,
            // /Rotate and crop box applied) and applies ours, points to pixels. The progressive
            // render builds its matrix for the pixel size directly: the same on every fixture
            // sheet, but on a page of fractional size the two can round differently (a 1224.9 x
            // 792.6 pt test page at 150 dpi: 2467 pixels differ).
            f32.set([width / widthPt, 0, 0, height / heightPt, 0, 0], m);
            f32.set([0, rows[0], width, rows[1]], m + 6);
            api.FPDF_RenderPageBitmapWithMatrix(
              bitmap,
              page,
              inst.scratch,
              inst.scratch + 24,
              flags,
            );
            return;
          }
          // Whole bitmap = whole page: PDFium scales each axis to the rounded pixel size, applies
          // the page's /Rotate (rotate argument 0 = as the page says) and clips to the crop box.
          inst.pauseAt = performance.now() + RENDER_SLICE_MS;
          rendering = true;
          let status = api.FPDF_RenderPageBitmap_Start(
            bitmap,
            page,
            0,
            0,
            width,
            height,
            0,
            flags,
            inst.pause,
          );
          while (status === FPDF_RENDER_TOBECONTINUED) {
            // Let timers (the time budget, cancellation, heartbeats) run between steps.
            await new Promise<void>((r) => setImmediate(r));
            checkDeadline();
            inst.pauseAt = performance.now() + RENDER_SLICE_MS;
            status = api.FPDF_RenderPage_Continue(page, inst.pause);
          }
          inst.pauseAt = Infinity;
          api.FPDF_RenderPage_Close(page);
          rendering = false;
          if (status === FPDF_RENDER_FAILED) {
            throw corrupt(`Page ${index + 1} of the PDF`, 'rendering failed', index);
          }
        };
        if (own.size === 0) {
          await pass(FPDF_ANNOT);
        } else {
          // Content order: PDFium draws each stretch of its objects (the others switched off), the
          // painter each stretch of its images, on the same bitmap; annotations come last.
          const M = api.pdfium;
          const n = api.FPDFPage_CountObjects(page);
          const objs = Array.from({ length: n }, (_, i) => M._FPDFPage_GetObject(page, i));
          const runs = paintRuns(n, own);
          /** Switches on the objects [from, to) of the page, the others off. */
          const activate = (from: number, to: number) => {
            for (let i = 0; i < n; i++)
              M._FPDFPageObj_SetIsActive(objs[i]!, i >= from && i < to ? 1 : 0);
          };
          try {
            for (let k = 0; k < runs.length; k++) {
              const run = runs[k]!;
              if (run.mine) {
                for (let i = run.from; i < run.to; i++) {
                  if (colour)
                    paintImageColour(
                      own.get(i)!,
                      M.HEAPU8,
                      api.FPDFBitmap_GetBuffer(bitmap),
                      api.FPDFBitmap_GetStride(bitmap),
                      width,
                      height,
                      rows,
                      simdHeap(inst),
                    );
                  else
                    paintImage(
                      own.get(i)!,
                      M.HEAPU8,
                      api.FPDFBitmap_GetBuffer(bitmap),
                      api.FPDFBitmap_GetStride(bitmap),
                      width,
                      height,
                      rows,
                    );
                  checkDeadline();
                }
              } else {
                // A white background drawn first on the white bitmap changes no pixel: no pass.
                if (k === 0 && runs.length > 1 && whiteFillsOnly(inst, page, run.from, run.to))
                  continue;
                activate(run.from, run.to);
                await pass(k === runs.length - 1 ? FPDF_ANNOT : 0);
              }
            }
            if (runs.at(-1)!.mine) {
              activate(0, 0);
              await pass(FPDF_ANNOT);
            }
          } finally {
            // The text layer reads active objects only.
            activate(0, n);
          }
        }
        const t2 = performance.now();
        // Copy out of the WASM heap (the bitmap is freed below; the heap may grow and move later).
        const stride = api.FPDFBitmap_GetStride(bitmap);
        const buf = api.FPDFBitmap_GetBuffer(bitmap);
        const heap = api.pdfium.HEAPU8;
        let grey: Uint8Array;
        let rgb: Uint8Array | undefined;
        let colourPixels = 0;
        if (colour) {
          // One pass: the grey the comparison works on and the colour the viewer shows.
          const [y0, y1] = band ? [band.top, band.top + band.rows] : [0, height];
          grey = band ? band.into : new Uint8Array(width * height);
          rgb = band ? band.rgbInto! : new Uint8Array(width * height * 3);
          colourPixels =
            copyColourRowsSimd(simdHeap(inst), buf, stride, width, y0, y1, rgb, grey) ??
            copyColourRows(api.pdfium.HEAPU8, buf, stride, width, y0, y1, rgb, grey);
          // A whole page with (next to) no coloured pixels is kept grey: 1 B/px from here on.
          if (!band && !keepsColour(colourPixels)) rgb = undefined;
        } else if (band) {
          grey = band.into;
          for (let y = band.top; y < band.top + band.rows; y++) {
            grey.set(heap.subarray(buf + y * stride, buf + y * stride + width), y * width);
          }
        } else if (stride === width) {
          grey = heap.slice(buf, buf + width * height);
        } else {
          grey = new Uint8Array(width * height);
          for (let y = 0; y < height; y++) {
            grey.set(heap.subarray(buf + y * stride, buf + y * stride + width), y * width);
          }
        }
        if (opts.timings) {
          opts.timings.pageMs = t1 - t0;
          opts.timings.renderMs = t2 - t1;
          opts.timings.readbackMs = performance.now() - t2;
          opts.timings.greyMs = 0; // rendered as grey: no conversion pass (colour: in readbackMs)
        }
        let lineWork: Uint8Array | undefined;
        let objectLayers: { fillWork?: Uint8Array; annotWork?: Uint8Array } = {};
        if (withText && opts.lineWork) {
          // After the page's pixels are copied out: the pass draws over the same bitmap.
          const tl = performance.now();
          checkDeadline();
          const cls = classifyObjects(inst, page);
          lineWork = lineWorkPass(
            inst,
            page,
            bitmap,
            width,
            height,
            widthPt,
            heightPt,
            {
              colour,
              // The bitmap holds the page's own render, all of it (not a band of it).
              rendered: rows[0] === 0 && rows[1] === height,
            },
            cls,
          );
          const to = performance.now();
          if (lineWork)
            objectLayers = objectLayerPasses(
              inst,
              page,
              bitmap,
              width,
              height,
              widthPt,
              heightPt,
              cls,
              colour,
            );
          if (opts.timings && (objectLayers.fillWork || objectLayers.annotWork))
            opts.timings.objectLayersMs = performance.now() - to;
          if (opts.timings) opts.timings.lineWorkMs = performance.now() - tl;
        }
        const raster: PageRaster = {
          width,
          height,
          data: grey,
          dpi,
          index,
          widthPt,
          heightPt,
          ...(lineWork ? { lineWork } : {}),
          ...objectLayers,
          ...(rgb ? { rgb } : {}),
          ...(colour ? { colourPixels } : {}),
        };
        if (!withText) return { raster, text: [] };
        const t3 = performance.now();
        const text = readText(inst, page, width, height, checkDeadline);
        // Markup annotations' text (FreeText callouts, notes on clouds…) follows, flagged: search
        // indexes it apart; the sheet readers see the drawing's own text only (finishPage).
        text.push(...readMarkups(inst, page, width, height));
        if (opts.timings) opts.timings.textMs = performance.now() - t3;
        return { raster, text };
      } finally {
        inst.pauseAt = Infinity;
        if (rendering) api.FPDF_RenderPage_Close(page);
        if (bitmap) api.FPDFBitmap_Destroy(bitmap);
        api.FPDF_ClosePage(page);
        this.reopenIfOverBudget();
      }
    });
    // The loop above enforces the budget between steps; this also bounds the wait for the instance.
    return withTimeout(
      run,
      this.limits.pageTimeoutMs + this.limits.openTimeoutMs,
      `Rendering page ${index + 1}`,
      undefined,
      index,
    );
  }

  /**
   * A rectangle of the page rendered straight from its content at any scale: the page's raster at
   * `dpi` (renderPage's size) enlarged `scale` times, pixels [left, left + width) x [top, top +
   * height) of it. Lines are drawn at their width times the scale, never as enlarged pixels: the
   * deep-zoom tiles (tiles.adapter.ts). One blocking call that the time budget cannot interrupt:
   * run it where its thread can be ended (the pool, with a time limit). Images are left to PDFium.
   */
  renderRegion(index: number, opts: PdfiumRegionOptions): Promise<RegionRaster> {
    this.checkIndex(index);
    const { width, height, left, top, scale } = opts;
    if (!(width >= 1 && height >= 1 && width * height <= this.limits.maxPixels))
      throw new RangeError(`A region of ${width} x ${height} px cannot be rendered.`);
    const run = exclusive(this.inst, () => {
      if (this.closed) throw new Error('PdfDocumentHandle used after close()');
      const inst = this.inst;
      const { api } = inst;
      const page = this.regionPage(index);
      let bitmap = 0;
      try {
        const widthPt = api.FPDF_GetPageWidthF(page);
        const heightPt = api.FPDF_GetPageHeightF(page);
        const px = opts.pixelSize(widthPt, heightPt, opts.dpi);
        // Before the matrix goes into the scratch area: reading the objects uses it too.
        const cls = opts.lineWork ? this.regionClasses(page, px) : undefined;
        const { format, channels } = renderFormat(opts.colour);
        bitmap = api.FPDFBitmap_CreateEx(width, height, format, 0, 0);
        if (!bitmap)
          throw new InputError(
            'page_too_large',
            `A ${width} x ${height} px region of page ${index + 1} does not fit in the renderer's memory.`,
            { pageIndex: index },
          );
        api.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xffffffff);
        // The same transform as a band's (points to the raster's pixels), enlarged and shifted so
        // the region's top-left lands on the bitmap's origin; clipped to the bitmap.
        const f32 = api.pdfium.HEAPF32;
        const m = inst.scratch >> 2;
        f32.set(
          [(px.width / widthPt) * scale, 0, 0, (px.height / heightPt) * scale, -left, -top],
          m,
        );
        f32.set([0, 0, width, height], m + 6);
        api.FPDF_RenderPageBitmapWithMatrix(
          bitmap,
          page,
          inst.scratch,
          inst.scratch + 24,
          FPDF_ANNOT,
        );
        const data = readPixels(
          api.pdfium.HEAPU8,
          api.FPDFBitmap_GetBuffer(bitmap),
          api.FPDFBitmap_GetStride(bitmap),
          width,
          height,
          channels,
        );
        if (!cls) return { width, height, channels, data };
        // After the region's pixels are copied out: the pass may draw over the same bitmap.
        const lineWork = regionLineWork(inst, page, cls, bitmap, opts, {
          width,
          height,
          channels,
          data,
        });
        return { width, height, channels, data, lineWork };
      } finally {
        if (bitmap) api.FPDFBitmap_Destroy(bitmap);
      }
    });
    return withTimeout(
      run,
      this.limits.pageTimeoutMs + this.limits.openTimeoutMs,
      `Rendering part of page ${index + 1}`,
      undefined,
      index,
    );
  }

  /** The loaded page `index` for renderRegion (kept loaded until another page is asked for). */
  private regionPage(index: number): number {
    if (this.kept?.index === index) return this.kept.page;
    this.releaseKept();
    const page = this.loadPage(index);
    this.kept = { index, page };
    return page;
  }

  private releaseKept(): void {
    if (!this.kept) return;
    this.inst.api.FPDF_ClosePage(this.kept.page);
    this.kept = undefined;
  }

  /**
   * The kept page's objects by what they draw (classifyObjects) and where the ones the line-work
   * pass changes lie (passBoxes), once per loaded page and raster size.
   */
  private regionClasses(page: number, px: { width: number; height: number }): RegionClasses {
    const kept = this.kept!;
    const k = this.keptClasses;
    if (k?.kept !== kept || kept.page !== page || k.width !== px.width || k.height !== px.height) {
      const cls = classifyObjects(this.inst, page);
      this.keptClasses = {
        kept,
        width: px.width,
        height: px.height,
        cls: { ...cls, boxes: passBoxes(this.inst, page, cls, px.width, px.height) },
      };
    }
    return this.keptClasses!.cls;
  }

  /**
   * Whether the page is vector drawing or a scan: images covering at least half the page with
   * little line work besides (a scanned sheet, maybe with an OCR text layer and a few markups). A scan has nothing sharper than its image to show when enlarged.
   */
  pageKind(index: number): Promise<PageKind> {
    this.checkIndex(index);
    return exclusive(this.inst, () => {
      if (this.closed) throw new Error('PdfDocumentHandle used after close()');
      const { api } = this.inst;
      const page = this.loadPage(index);
      try {
        const pageArea = api.FPDF_GetPageWidthF(page) * api.FPDF_GetPageHeightF(page);
        const s = this.inst.scratch;
        const f32 = api.pdfium.HEAPF32;
        let imageArea = 0;
        let paths = 0;
        const n = api.FPDFPage_CountObjects(page);
        for (let i = 0; i < n; i++) {
          const obj = api.FPDFPage_GetObject(page, i);
          const type = api.FPDFPageObj_GetType(obj);
          if (type === FPDF_PAGEOBJ_PATH) paths++;
          if (type !== FPDF_PAGEOBJ_IMAGE) continue;
          if (!api.FPDFPageObj_GetBounds(obj, s, s + 4, s + 8, s + 12)) continue;
          const f = s >> 2;
          imageArea += Math.abs((f32[f + 2]! - f32[f]!) * (f32[f + 3]! - f32[f + 1]!));
        }
        return imageArea >= 0.5 * pageArea && paths < SCAN_MAX_VECTOR_OBJECTS ? 'scan' : 'vector';
      } finally {
        api.FPDF_ClosePage(page);
      }
    });
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.closed = true;
    this.painted.clear();
    this.paintedRgb.clear();
    this.greyTiles.clear();
    return exclusive(this.inst, () => {
      this.releaseKept();
      this.inst.api.FPDF_CloseDocument(this.doc);
      this.inst.api.pdfium.wasmExports.free(this.bytesPtr);
    }).catch(() => {
      /* a retired instance is dropped whole; nothing left to free */
    });
  }
}

/** PDFium page object types (fpdf_edit.h). */
const OBJ_TEXT = 1,
  OBJ_PATH = 2,
  OBJ_IMAGE = 3,
  OBJ_SHADING = 4,
  OBJ_FORM = 5;
/**
 * A filled path no larger than this on its longer side (points; 0.25 in) is a symbol of the line work
 * (an arrowhead, a filled dot, a column square, a section marker's half), as is one no wider than
 * THIN_FILL_PT (a line drawn as an outlined polygon). Larger non-white fills are area fills.
 */
const SMALL_FILL_PT = 18;
const THIN_FILL_PT = 2;
/** A fill at least this light on every channel is paper (a wipeout, a background): it draws no ink. */
const PAPER_FILL = 250;
/** Line-work pass pixels below this grey are line work (the compare's pale-ink threshold). */
const LINE_INK = 240;
/** Area fills darker than this grey (0..255) are not tones of the fill layer by object. */
const DARK_FILL = 96;
/** Fill-pass pixels below this grey are drawn by an area fill or a shading. */
const FILL_INK = 250;
/**
 * Annotations drawn alone on black paper (objectLayerPasses): a pixel at least this light is painted
 * by one (its fill hides what lies under it, white included).
 */
const OPAQUE_ON_BLACK = 128;

/** What a page's objects draw, for the line-work pass (see lineWorkPass) and objectLayerPasses. */
interface ObjectClasses {
  /** Stroked paths, text and small or thin fills: line work. */
  lines: number;
  /** Images and shadings: switched off for the pass. */
  hide: number[];
  /** Area fills (large non-white filled paths): their fill painted white for the pass, as paper. */
  areas: { obj: number; r: number; g: number; b: number; a: number; tone: boolean }[];
  /** The line-work objects (text, stroked paths, small and thin fills): off in the fill pass. */
  lineObjs: number[];
  /** Paper-white filled paths that are also stroked: drawn unstroked in the fill pass. */
  paperStroked: { obj: number; fillMode: number }[];
  /** Shadings (also in `hide`): drawn in the fill pass. */
  shadings: number[];
  /** Images (also in `hide`): off in the fill pass; image analysis tells their tones from lines. */
  images: number[];
}

/**
 * The page's objects by what they draw (form XObjects' contents one by one): line work (stroked
 * paths, text, small and thin filled shapes), area fills (larger non-white filled paths), and images
 * and shadings. Paper-white fills count as neither: they keep hiding what lies under them.
 */
function classifyObjects(inst: Instance, page: number): ObjectClasses {
  const { api } = inst;
  const M = api.pdfium;
  const s = inst.scratch;
  const out: ObjectClasses = {
    lines: 0,
    hide: [],
    areas: [],
    lineObjs: [],
    paperStroked: [],
    shadings: [],
    images: [],
  };
  const line = (obj: number) => {
    out.lines++;
    out.lineObjs.push(obj);
  };
  const visit = (obj: number): void => {
    const type = api.FPDFPageObj_GetType(obj);
    if (type === OBJ_TEXT) line(obj);
    else if (type === OBJ_IMAGE || type === OBJ_SHADING) {
      out.hide.push(obj);
      (type === OBJ_IMAGE ? out.images : out.shadings).push(obj);
    } else if (type === OBJ_FORM) {
      const n = api.FPDFFormObj_CountObjects(obj);
      for (let i = 0; i < n; i++) {
        const child = api.FPDFFormObj_GetObject(obj, i);
        if (child) visit(child);
      }
    } else if (type === OBJ_PATH) {
      if (!api.FPDFPath_GetDrawMode(obj, s, s + 4)) return;
      const fillMode = M.HEAP32[s >> 2]!;
      const stroke = M.HEAP32[(s >> 2) + 1]! !== 0;
      if (fillMode === 0) {
        if (stroke) line(obj);
        return;
      }
      if (!api.FPDFPageObj_GetFillColor(obj, s, s + 4, s + 8, s + 12)) return;
      const u = M.HEAP32; // 0..255: the same as unsigned
      const [r, g, b, a] = [u[s >> 2]!, u[(s >> 2) + 1]!, u[(s >> 2) + 2]!, u[(s >> 2) + 3]!];
      if (r >= PAPER_FILL && g >= PAPER_FILL && b >= PAPER_FILL) {
        if (stroke) {
          out.lines++;
          out.paperStroked.push({ obj, fillMode });
        }
        return;
      }
      const f = M.HEAPF32;
      if (!api.FPDFPageObj_GetBounds(obj, s, s + 4, s + 8, s + 12)) return;
      const w = Math.abs(f[(s >> 2) + 2]! - f[s >> 2]!);
      const h = Math.abs(f[(s >> 2) + 3]! - f[(s >> 2) + 1]!);
      if (Math.max(w, h) <= SMALL_FILL_PT || Math.min(w, h) <= THIN_FILL_PT) line(obj);
      else {
        // A tone of the fill layer by object: wider than a symbol both ways, and not dark (dark
        // solid fills are often wall poche or column sections: how thick they are decides, left to
        // image analysis).
        const tone =
          Math.min(w, h) > SMALL_FILL_PT && (30 * r + 59 * g + 11 * b) / 100 >= DARK_FILL;
        out.areas.push({ obj, r, g, b, a, tone });
        if (stroke) out.lines++;
      }
    }
  };
  const n = api.FPDFPage_CountObjects(page);
  for (let i = 0; i < n; i++) visit(api.FPDFPage_GetObject(page, i));
  return out;
}

/**
 * The page's line work, drawn by PDFium from its objects (issue 17): the page rendered again with
 * images and shadings switched off and area fills painted as paper (so they still hide what they
 * cover, as in the page's own render), without annotations. Returned as 1-bit
 * PNG scanlines (filter byte 0, then ceil(width / 8) bytes a row, leftmost pixel in the high bit; 1 =
 * line work, grey < LINE_INK in the pass), or undefined when nothing on the page draws line work (a
 * scan: its layers come from image analysis). `bitmap` is the page's width x height grey bitmap,
 * whose pixels this overwrites; when it holds the page's own render (`opts.rendered`) and every object
 * is line work, with no annotation, that render is packed instead of drawing the page again. One
 * blocking call with no images to decode: a fraction of the page's
 * render (~0.2–0.4 s for a 34x22 in sheet at 200 dpi against 1.5–3 s).
 */
function lineWorkPass(
  inst: Instance,
  page: number,
  bitmap: number,
  width: number,
  height: number,
  widthPt: number,
  heightPt: number,
  opts: { rendered: boolean; colour: boolean },
  cls: ObjectClasses = classifyObjects(inst, page),
): Uint8Array | undefined {
  const { api } = inst;
  const M = api.pdfium;
  if (cls.lines === 0) return undefined;
  if (
    opts.rendered &&
    cls.hide.length === 0 &&
    cls.areas.length === 0 &&
    api.FPDFPage_GetAnnotCount(page) === 0
  ) {
    // Everything on the page is line work (a CAD sheet of paths and text): the pass would draw the
    // page again, pixel for pixel; its own render in the bitmap is the line work.
    const stride = api.FPDFBitmap_GetStride(bitmap);
    return packLineRows(
      M.HEAPU8,
      api.FPDFBitmap_GetBuffer(bitmap),
      stride,
      width,
      height,
      LINE_INK,
      // The page's own render: R G B when it rendered in colour (FPDF_REVERSE_BYTE_ORDER).
      opts.colour ? 'rgb' : 'grey',
      simdHeap(inst),
    );
  }
  for (const o of cls.hide) api.FPDFPageObj_SetIsActive(o, false);
  for (const a of cls.areas) api.FPDFPageObj_SetFillColor(a.obj, 255, 255, 255, a.a);
  try {
    fillPaperRows(api, bitmap, width, 0, height);
    const f32 = M.HEAPF32;
    const m = inst.scratch >> 2;
    f32.set([width / widthPt, 0, 0, height / heightPt, 0, 0], m);
    f32.set([0, 0, width, height], m + 6);
    // Annotations are left out: a markup may be a filled area as well as a cloud or a callout, and
    // what it draws is not told apart here (its pixels are left to image analysis).
    api.FPDF_RenderPageBitmapWithMatrix(bitmap, page, inst.scratch, inst.scratch + 24, 0);
  } finally {
    for (const o of cls.hide) api.FPDFPageObj_SetIsActive(o, true);
    for (const a of cls.areas) api.FPDFPageObj_SetFillColor(a.obj, a.r, a.g, a.b, a.a);
  }
  const stride = api.FPDFBitmap_GetStride(bitmap);
  const buf = api.FPDFBitmap_GetBuffer(bitmap);
  // A colour bitmap is drawn here without FPDF_REVERSE_BYTE_ORDER: B G R in memory.
  return packLineRows(
    M.HEAPU8,
    buf,
    stride,
    width,
    height,
    LINE_INK,
    opts.colour ? 'bgr' : 'grey',
    simdHeap(inst),
  );
}

/** ObjectClasses plus passBoxes: what the deep tiles' line-work pass needs of a page. */
interface RegionClasses extends ObjectClasses {
  boxes: [number, number, number, number][] | null;
}

/**
 * Raster boxes (left, top, right, bottom in pixels of a width x height raster of the page) of the
 * page's top-level objects that hold an object the line-work pass switches off or paints as paper
 * (cls.hide, cls.areas; a form XObject holding one counts whole, its bounds being in page space). A
 * region meeting none of them draws the same in the pass as in its render. Null when the page's
 * space does not map to the raster (every region then draws the pass).
 */
function passBoxes(
  inst: Instance,
  page: number,
  cls: ObjectClasses,
  width: number,
  height: number,
): [number, number, number, number][] | null {
  const special = new Set<number>([...cls.hide, ...cls.areas.map((a) => a.obj)]);
  if (special.size === 0) return [];
  const affine = pageToDevice(inst, page, width, height);
  if (!affine) return null;
  const { api } = inst;
  const holds = (obj: number): boolean => {
    if (special.has(obj)) return true;
    if (api.FPDFPageObj_GetType(obj) !== OBJ_FORM) return false;
    const n = api.FPDFFormObj_CountObjects(obj);
    for (let i = 0; i < n; i++) {
      const child = api.FPDFFormObj_GetObject(obj, i);
      if (child && holds(child)) return true;
    }
    return false;
  };
  const s = inst.scratch;
  const f32 = api.pdfium.HEAPF32;
  const boxes: [number, number, number, number][] = [];
  const n = api.FPDFPage_CountObjects(page);
  for (let i = 0; i < n; i++) {
    const obj = api.FPDFPage_GetObject(page, i);
    if (!holds(obj)) continue;
    if (!api.FPDFPageObj_GetBounds(obj, s, s + 4, s + 8, s + 12)) return null;
    const f = s >> 2;
    const [l, b, r, t] = [f32[f]!, f32[f + 1]!, f32[f + 2]!, f32[f + 3]!];
    const pts = [
      toRaster(affine, l, b),
      toRaster(affine, l, t),
      toRaster(affine, r, b),
      toRaster(affine, r, t),
    ];
    boxes.push([
      Math.min(...pts.map((p) => p[0])),
      Math.min(...pts.map((p) => p[1])),
      Math.max(...pts.map((p) => p[0])),
      Math.max(...pts.map((p) => p[1])),
    ]);
  }
  return boxes;
}

/**
 * The line work of a region rendered by renderRegion at its scale (deep-zoom overlay tiles, issue 19):
 * as lineWorkPass draws the page's, with images and shadings switched off and area fills painted as
 * paper, drawn again into `bitmap` with the same matrix. Annotations are drawn too (unlike the page's
 * pass, whose markups are left to image analysis at 200 dpi): at 16x a markup's stroke is a wide
 * band that image analysis would call a fill. 0 where the pass draws grey < LINE_INK, 255
 * elsewhere. A region that no object of the pass's meets (cls.boxes) would be drawn again pixel for
 * pixel: its render (`region`) is thresholded instead.
 */
function regionLineWork(
  inst: Instance,
  page: number,
  cls: RegionClasses,
  bitmap: number,
  rect: { scale: number; left: number; top: number },
  region: RegionRaster,
): Uint8Array {
  const { api } = inst;
  const { width, height, channels } = region;
  const out = new Uint8Array(width * height);
  let grey: Uint8Array;
  // Boxes in raster pixels at scale 1; 2 px of margin at this scale for anti-aliased edges.
  const m = 2 / rect.scale;
  const x0 = rect.left / rect.scale - m,
    y0 = rect.top / rect.scale - m,
    x1 = (rect.left + width) / rect.scale + m,
    y1 = (rect.top + height) / rect.scale + m;
  const touched =
    cls.boxes === null || cls.boxes.some((b) => b[0] < x1 && b[2] > x0 && b[1] < y1 && b[3] > y0);
  if (!touched) {
    grey = region.data;
    if (channels === 3) {
      grey = new Uint8Array(width * height);
      greyFromRgb(region.data, grey, 0, width * height);
    }
  } else {
    for (const o of cls.hide) api.FPDFPageObj_SetIsActive(o, false);
    for (const a of cls.areas) api.FPDFPageObj_SetFillColor(a.obj, 255, 255, 255, a.a);
    try {
      api.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, 0xffffffff);
      // The matrix and clip renderRegion left in the scratch area.
      api.FPDF_RenderPageBitmapWithMatrix(
        bitmap,
        page,
        inst.scratch,
        inst.scratch + 24,
        FPDF_ANNOT,
      );
    } finally {
      for (const o of cls.hide) api.FPDFPageObj_SetIsActive(o, true);
      for (const a of cls.areas) api.FPDFPageObj_SetFillColor(a.obj, a.r, a.g, a.b, a.a);
    }
    const px = readPixels(
      api.pdfium.HEAPU8,
      api.FPDFBitmap_GetBuffer(bitmap),
      api.FPDFBitmap_GetStride(bitmap),
      width,
      height,
      channels,
    );
    grey = px;
    if (channels === 3) {
      grey = new Uint8Array(width * height);
      greyFromRgb(px, grey, 0, width * height);
    }
  }
  for (let i = 0; i < out.length; i++) out[i] = grey[i]! < LINE_INK ? 0 : 255;
  return out;
}

/**
 * Page-space boxes of the page's annotations that draw (not links or popups): [left, bottom, right,
 * top] each.
 */
function drawnAnnotationBoxes(inst: Instance, page: number): number[][] {
  const { api } = inst;
  const M = api.pdfium;
  const out: number[][] = [];
  const n = api.FPDFPage_GetAnnotCount(page);
  for (let i = 0; i < n; i++) {
    const annot = api.FPDFPage_GetAnnot(page, i);
    if (!annot) continue;
    try {
      if (NO_APPEARANCE.has(api.FPDFAnnot_GetSubtype(annot))) continue;
      if (!api.FPDFAnnot_GetRect(annot, inst.scratch)) continue;
      const f = inst.scratch >> 2; // FS_RECTF: left, top, right, bottom
      out.push([M.HEAPF32[f]!, M.HEAPF32[f + 3]!, M.HEAPF32[f + 2]!, M.HEAPF32[f + 1]!]);
    } finally {
      api.FPDFPage_CloseAnnot(annot);
    }
  }
  return out;
}

/**
 * The rows [top, bottom) of a width x height raster of the page that page-space boxes ([left, bottom,
 * right, top]) cover, with `pad` px around; null when they cover none. Every row when the page's
 * mapping is degenerate.
 */
function rowsCovered(
  inst: Instance,
  page: number,
  width: number,
  height: number,
  boxes: number[][],
  pad: number,
): [number, number] | null {
  const m = pageToDevice(inst, page, width, height);
  if (!m) return [0, height];
  let top = Infinity,
    bottom = -Infinity;
  for (const [l, b, r, t] of boxes)
    for (const [px, py] of [
      [l!, b!],
      [r!, b!],
      [l!, t!],
      [r!, t!],
    ] as const) {
      const y = toRaster(m, px, py)[1];
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
    }
  const y0 = Math.max(0, Math.floor(top) - pad),
    y1 = Math.min(height, Math.ceil(bottom) + pad);
  return y1 > y0 ? [y0, y1] : null;
}

/**
 * The page's fill layer and its annotations by object (issue 17), after the line-work pass, on the
 * same bitmap (its pixels are overwritten), as 1-bit PNG scanlines like lineWorkPass's:
 *   - `fillWork`: what the page's area fills of tone (ObjectClasses.areas with `tone`) and its
 *     shadings draw: the page rendered again with only them switched on (painted black, opaque),
 *     paper-white fills still hiding what they cover (drawn unstroked), no annotations; 1 = a pixel
 *     under such a fill (grey < FILL_INK). Only for pages with such fills or shadings. Images are
 *     not in it: an image is pixels (a raster render holds lines and tones alike), left to image
 *     analysis.
 *   - `annotWork`: what the page's annotations draw (the architect's clouds, callouts, markups):
 *     the page's annotations rendered alone, every page object switched off; 1 = grey < LINE_INK,
 *     or painted light when drawn again on black paper (the white fill of a callout or markup box,
 *     which hides what lies under it: compare's keepHiddenImage). Only for pages with annotations
 *     that draw (not links or popups).
 * Each pass draws only a few objects, and only the rows their boxes cover are cleared, drawn and
 * packed (a cloud in a corner costs its rows). Measured against the line-work pass in the bench/ingest
 * README.
 */
function objectLayerPasses(
  inst: Instance,
  page: number,
  bitmap: number,
  width: number,
  height: number,
  widthPt: number,
  heightPt: number,
  cls: ObjectClasses,
  colour: boolean,
): { fillWork?: Uint8Array; annotWork?: Uint8Array } {
  const { api } = inst;
  const M = api.pdfium;
  const out: { fillWork?: Uint8Array; annotWork?: Uint8Array } = {};
  const rb = Math.ceil(width / 8);
  /** Draws rows [y0, y1) of the page as it is switched now, and packs them (other rows: none). */
  const pass = (
    [y0, y1]: [number, number],
    flags: number,
    threshold: number,
    paper = 0xffffffff,
  ): Uint8Array => {
    fillPaperRows(api, bitmap, width, y0, y1, paper);
    const f32 = M.HEAPF32;
    const m = inst.scratch >> 2;
    f32.set([width / widthPt, 0, 0, height / heightPt, 0, 0], m);
    f32.set([0, y0, width, y1], m + 6);
    api.FPDF_RenderPageBitmapWithMatrix(bitmap, page, inst.scratch, inst.scratch + 24, flags);
    const stride = api.FPDFBitmap_GetStride(bitmap);
    // Drawn without FPDF_REVERSE_BYTE_ORDER: a colour bitmap is B G R in memory.
    const part = packLineRows(
      M.HEAPU8,
      api.FPDFBitmap_GetBuffer(bitmap) + y0 * stride,
      stride,
      width,
      y1 - y0,
      threshold,
      colour ? 'bgr' : 'grey',
      simdHeap(inst),
    );
    const rows = new Uint8Array((rb + 1) * height);
    rows.set(part, y0 * (rb + 1));
    return rows;
  };
  const tones = cls.areas.filter((a) => a.tone);
  const s = inst.scratch;
  const boundsOf = (obj: number): number[] | null => {
    if (!api.FPDFPageObj_GetBounds(obj, s, s + 4, s + 8, s + 12)) return null;
    const f = M.HEAPF32;
    return [f[s >> 2]!, f[(s >> 2) + 1]!, f[(s >> 2) + 2]!, f[(s >> 2) + 3]!];
  };
  const fillRows =
    tones.length > 0 || cls.shadings.length > 0
      ? rowsCovered(
          inst,
          page,
          width,
          height,
          [...tones.map((a) => a.obj), ...cls.shadings].map(boundsOf).filter((b) => b !== null),
          2,
        )
      : null;
  if (fillRows) {
    const others = cls.areas.filter((a) => !a.tone);
    for (const o of cls.lineObjs) api.FPDFPageObj_SetIsActive(o, false);
    for (const o of cls.images) api.FPDFPageObj_SetIsActive(o, false);
    for (const a of others) api.FPDFPageObj_SetIsActive(a.obj, false);
    for (const p of cls.paperStroked) api.FPDFPath_SetDrawMode(p.obj, p.fillMode, false);
    for (const a of tones) api.FPDFPageObj_SetFillColor(a.obj, 0, 0, 0, 255);
    try {
      out.fillWork = pass(fillRows, 0, FILL_INK);
    } finally {
      for (const o of cls.lineObjs) api.FPDFPageObj_SetIsActive(o, true);
      for (const o of cls.images) api.FPDFPageObj_SetIsActive(o, true);
      for (const a of others) api.FPDFPageObj_SetIsActive(a.obj, true);
      for (const p of cls.paperStroked) api.FPDFPath_SetDrawMode(p.obj, p.fillMode, true);
      for (const a of tones) api.FPDFPageObj_SetFillColor(a.obj, a.r, a.g, a.b, a.a);
    }
  }
  const annots = drawnAnnotationBoxes(inst, page);
  const annotRows = annots.length > 0 ? rowsCovered(inst, page, width, height, annots, 4) : null;
  if (annotRows) {
    const n = api.FPDFPage_CountObjects(page);
    const objs = Array.from({ length: n }, (_, i) => M._FPDFPage_GetObject(page, i));
    for (const o of objs) M._FPDFPageObj_SetIsActive(o, 0);
    try {
      const work = pass(annotRows, FPDF_ANNOT, LINE_INK);
      // What they paint light (a callout's or a markup box's white fill, hiding what lies under it)
      // shows on black paper: every pixel not left dark there is drawn by an annotation too.
      const dark = pass(annotRows, FPDF_ANNOT, OPAQUE_ON_BLACK, 0xff000000);
      const pad = width & 7 ? (0xff00 >> (width & 7)) & 0xff : 0xff;
      for (let y = annotRows[0]; y < annotRows[1]; y++)
        for (let k = 0, r = y * (rb + 1) + 1; k < rb; k++)
          work[r + k] = work[r + k]! | (~dark[r + k]! & (k === rb - 1 ? pad : 0xff));
      out.annotWork = work;
    } finally {
      for (const o of objs) M._FPDFPageObj_SetIsActive(o, 1);
    }
  }
  return out;
}

/**
 * 1-bit PNG scanlines of `grey < threshold` (see lineWorkPass) from a bitmap in `heap`: grey
 * (1 B/px), or colour (3 B/px, in R G B or B G R order) whose grey is taken with the weights
 * greyFromRgb uses.
 */
export function packLineRows(
  heap: Uint8Array,
  buf: number,
  stride: number,
  width: number,
  height: number,
  threshold: number,
  layout: 'grey' | 'rgb' | 'bgr' = 'grey',
  simd?: SimdHeap,
): Uint8Array {
  const rb = Math.ceil(width / 8);
  const out = new Uint8Array((rb + 1) * height);
  if (layout !== 'grey') {
    // Red and blue weights by byte order; grey < threshold <=> 30 r + 59 g + 11 b < 100 threshold
    // (greyFromRgb floors the same sum over 100).
    const [w0, w2] = layout === 'rgb' ? [30, 11] : [11, 30];
    // `heap` is then the SIMD heap's memory (the PDFium instance's): the same bits 16 pixels a step.
    if (
      simd &&
      packRowsSimd(simd, buf, stride, width, height, w0, w2, threshold * 100, out, rb + 1)
    )
      return out;
    packColourLineRows(heap, buf, stride, width, height, threshold * 100, w0, w2, out, rb + 1);
    return out;
  }
  const full = width >>> 3;
  for (let y = 0; y < height; y++) {
    let i = buf + y * stride;
    let o = y * (rb + 1) + 1; // after the filter byte (0: none)
    for (let k = 0; k < full; k++, i += 8, o++) {
      // Paper (the common case) in two 4-byte reads would need alignment; byte reads are enough.
      let v = 0;
      if (heap[i]! < threshold) v |= 0x80;
      if (heap[i + 1]! < threshold) v |= 0x40;
      if (heap[i + 2]! < threshold) v |= 0x20;
      if (heap[i + 3]! < threshold) v |= 0x10;
      if (heap[i + 4]! < threshold) v |= 0x08;
      if (heap[i + 5]! < threshold) v |= 0x04;
      if (heap[i + 6]! < threshold) v |= 0x02;
      if (heap[i + 7]! < threshold) v |= 0x01;
      out[o] = v;
    }
    let v = 0;
    for (let x = full * 8; x < width; x++, i++) if (heap[i]! < threshold) v |= 0x80 >> (x & 7);
    if (width & 7) out[o] = v;
  }
  return out;
}

/**
 * packLineRows for a colour bitmap (3 B/px): bit set where w0 c0 + 59 c1 + w2 c2 < limit. Eight
 * pixels are six words when the rows start on a word: all paper (every byte 255, the common case)
 * makes a zero byte without looking at the pixels one by one.
 */
function packColourLineRows(
  heap: Uint8Array,
  buf: number,
  stride: number,
  width: number,
  height: number,
  limit: number,
  w0: number,
  w2: number,
  out: Uint8Array,
  outStride: number,
): void {
  // Paper only counts as no line work when white is above the threshold (it always is: LINE_INK).
  const words = (heap.byteOffset | buf | stride) % 4 === 0 && 255 * 100 >= limit;
  const u32 = new Int32Array(heap.buffer, heap.byteOffset, heap.byteLength >> 2);
  const full = words ? width >>> 3 : 0;
  for (let y = 0; y < height; y++) {
    const row = buf + y * stride;
    const o = y * outStride + 1; // after the filter byte (0: none)
    let w = row >> 2;
    for (let k = 0; k < full; k++, w += 6) {
      if ((u32[w]! & u32[w + 1]! & u32[w + 2]! & u32[w + 3]! & u32[w + 4]! & u32[w + 5]!) === -1)
        continue;
      let v = 0;
      for (let b = 0, i = row + k * 24; b < 8; b++, i += 3) {
        if (heap[i]! * w0 + heap[i + 1]! * 59 + heap[i + 2]! * w2 < limit) v |= 0x80 >> b;
      }
      out[o + k] = v;
    }
    for (let x = full * 8, i = row + x * 3; x < width; x++, i += 3) {
      if (heap[i]! * w0 + heap[i + 1]! * 59 + heap[i + 2]! * w2 < limit) {
        out[o + (x >>> 3)]! |= 0x80 >> (x & 7);
      }
    }
  }
}

/**
 * Rows [y0, y1) of a bitmap of ours (grey or B G R, whole rows) filled with an opaque grey `argb`
 * (white paper, or black): FPDFBitmap_FillRect's bytes, set by the heap's native fill. PDFium fills a
 * 3 B/px bitmap one pixel at a time (~5.4 ms for a 17x11 in sheet at 200 dpi against ~0.3 ms), and
 * a colour page is filled twice or more (the render, the line-work pass, the object layer passes).
 * Padding bytes at a row's end (if any) are filled too; nothing reads them. Other colours: PDFium.
 */
function fillPaperRows(
  api: PdfiumApi,
  bitmap: number,
  width: number,
  y0: number,
  y1: number,
  argb = 0xffffffff,
): void {
  if (y1 <= y0) return;
  const v = argb & 0xff;
  if (argb >>> 24 === 0xff && ((argb >>> 8) & 0xff) === v && ((argb >>> 16) & 0xff) === v) {
    const stride = api.FPDFBitmap_GetStride(bitmap);
    const buf = api.FPDFBitmap_GetBuffer(bitmap);
    api.pdfium.HEAPU8.fill(v, buf + y0 * stride, buf + y1 * stride);
    return;
  }
  api.FPDFBitmap_FillRect(bitmap, 0, y0, width, y1 - y0, argb);
}

/**
 * Whether objects [from, to) of the page are all opaque paths filled pure white and not stroked (a
 * scanned sheet's white background under its tiles: 3 ms of a colour pass on a 17x11 in sheet):
 * drawn first on a white bitmap, they change no pixel.
 */
function whiteFillsOnly(inst: Instance, page: number, from: number, to: number): boolean {
  const { api } = inst;
  const u = api.pdfium.HEAP32;
  const s = inst.scratch;
  for (let i = from; i < to; i++) {
    const obj = api.FPDFPage_GetObject(page, i);
    if (api.FPDFPageObj_GetType(obj) !== OBJ_PATH || api.FPDFPageObj_HasTransparency(obj))
      return false;
    // Filled (fill mode 1 or 2), not stroked.
    if (!api.FPDFPath_GetDrawMode(obj, s, s + 4)) return false;
    if (u[s >> 2] === 0 || u[(s >> 2) + 1] !== 0) return false;
    if (!api.FPDFPageObj_GetFillColor(obj, s, s + 4, s + 8, s + 12)) return false;
    for (let k = 0; k < 4; k++) if (u[(s >> 2) + k] !== 255) return false;
  }
  return true;
}

/** Page space to raster pixels (pageToDevice): (x, y) = B (px - p0x, py - p0y). */
interface RasterAffine {
  p0x: number;
  p0y: number;
  b11: number;
  b12: number;
  b21: number;
  b22: number;
}

/** A page-space point on the raster. */
function toRaster(m: RasterAffine, px: number, py: number): [number, number] {
  const x = px - m.p0x;
  const y = py - m.p0y;
  return [m.b11 * x + m.b12 * y, m.b21 * x + m.b22 * y];
}

/**
 * Page space to raster pixels for a width x height raster of the loaded page, as PDFium draws it
 * (start 0,0, rotate 0 = as /Rotate says): (x, y) = B (px - p0x, py - p0y). Device -> page is affine:
 * FPDF_DeviceToPage is sampled at three device points and inverted. undefined when degenerate.
 */
function pageToDevice(
  inst: Instance,
  page: number,
  width: number,
  height: number,
): RasterAffine | undefined {
  const M = inst.api.pdfium;
  const s = inst.scratch;
  const d = s >> 3;
  const at = (x: number, y: number): [number, number] => {
    M._FPDF_DeviceToPage(page, 0, 0, width, height, 0, x, y, s, s + 8);
    return [M.HEAPF64[d]!, M.HEAPF64[d + 1]!];
  };
  const [p0x, p0y] = at(0, 0);
  const [p1x, p1y] = at(width, 0);
  const [p2x, p2y] = at(0, height);
  const a11 = (p1x - p0x) / width;
  const a21 = (p1y - p0y) / width;
  const a12 = (p2x - p0x) / height;
  const a22 = (p2y - p0y) / height;
  const det = a11 * a22 - a12 * a21;
  if (!(Math.abs(det) > 0)) return undefined;
  return { p0x, p0y, b11: a22 / det, b12: -a12 / det, b21: -a21 / det, b22: a11 / det };
}

/**
 * The text runs of a loaded page, in sheet pixels of a width x height raster of it (see pdfium-text.ts).
 * Page space is mapped with the inverse of FPDF_DeviceToPage for the raster's own arguments (start 0,0,
 * size width x height, rotate 0 = as /Rotate says), so /Rotate, the crop box and the per-axis rounding
 * of the pixel size apply exactly as in the render. Glyphs whose advance lies wholly outside the page
 * box are dropped, as pdf.js did. `checkDeadline` is called every few thousand glyphs.
 */
function readText(
  inst: Instance,
  page: number,
  width: number,
  height: number,
  checkDeadline: () => void,
): TextItem[] {
  const M = inst.api.pdfium;
  const tp = M._FPDFText_LoadPage(page);
  if (!tp) return [];
  try {
    const s = inst.scratch;
    const d = s >> 3;
    const f = s >> 2;
    const affine = pageToDevice(inst, page, width, height);
    if (!affine) return [];
    const { p0x, p0y, b11, b12, b21, b22 } = affine;

    const runs = new RunBuilder();
    const n = M._FPDFText_CountChars(tp);
    // Per text object (all its glyphs share matrix, font and size).
    let obj = 0;
    let ok = false;
    let font = 0;
    let tf = 0;
    let pux = 1; // unit direction and up in page space
    let puy = 0;
    let pvx = 0;
    let pvy = 1;
    let abLen = 1; // |(a, b)|: text-space to page-space scale along the baseline
    let ux = 1; // the same in sheet pixels
    let uy = 0;
    let vx = 0;
    let vy = -1;
    let su = 1; // page units -> sheet pixels along the baseline
    let size = 0; // em in sheet pixels
    let looseDet = 1;
    for (let i = 0; i < n; i++) {
      if ((i & 2047) === 2047) checkDeadline();
      const o = M._FPDFText_GetTextObject(tp, i);
      if (!o) continue; // generated by PDFium (its inferred spaces and line breaks)
      const code = M._FPDFText_GetUnicode(tp, i) >>> 0;
      if (isWhitespaceCode(code)) {
        runs.space();
        continue;
      }
      if (code === 0 || code > 0x10ffff) continue;
      if (o !== obj) {
        obj = o;
        M._FPDFText_GetMatrix(tp, i, s);
        const [a, b, c, dd] = [
          M.HEAPF32[f]!,
          M.HEAPF32[f + 1]!,
          M.HEAPF32[f + 2]!,
          M.HEAPF32[f + 3]!,
        ];
        tf = M._FPDFText_GetFontSize(tp, i);
        font = M._FPDFTextObj_GetFont(o);
        abLen = Math.hypot(a, b);
        const cdLen = Math.hypot(c, dd);
        ok = abLen > 0 && cdLen > 0 && tf > 0;
        if (ok) {
          pux = a / abLen;
          puy = b / abLen;
          pvx = c / cdLen;
          pvy = dd / cdLen;
          const dux = b11 * pux + b12 * puy;
          const duy = b21 * pux + b22 * puy;
          const dvx = b11 * pvx + b12 * pvy;
          const dvy = b21 * pvx + b22 * pvy;
          su = Math.hypot(dux, duy);
          const sv = Math.hypot(dvx, dvy);
          ux = dux / su;
          uy = duy / su;
          vx = dvx / sv;
          vy = dvy / sv;
          size = tf * cdLen * sv;
          looseDet = Math.abs(pux) * Math.abs(pvy) - Math.abs(pvx) * Math.abs(puy);
        }
      }
      if (!ok) continue;
      M._FPDFText_GetCharOrigin(tp, i, s, s + 8);
      const ox = M.HEAPF64[d]! - p0x;
      const oy = M.HEAPF64[d + 1]! - p0y;
      // Advance: the loose box is the advance x (descent..ascent) rectangle, axis-aligned in page space;
      // undo that for the glyph's direction. Near 45 degrees that is ill-conditioned: ask the font.
      let adv = 0;
      if (Math.abs(looseDet) > 0.25) {
        M._FPDFText_GetLooseCharBox(tp, i, s + 16);
        const w = M.HEAPF32[f + 6]! - M.HEAPF32[f + 4]!;
        const h = M.HEAPF32[f + 5]! - M.HEAPF32[f + 7]!;
        adv = (w * Math.abs(pvy) - h * Math.abs(pvx)) / looseDet;
      } else if (M._FPDFFont_GetGlyphWidth(font, code, tf, s + 16)) {
        adv = M.HEAPF32[f + 4]! * abLen;
      }
      adv = Number.isFinite(adv) ? Math.max(0, adv) * su : 0;
      const x = b11 * ox + b12 * oy;
      const y = b21 * ox + b22 * oy;
      const ex = x + ux * adv;
      const ey = y + uy * adv;
      if (
        Math.max(x, ex) < 0 ||
        Math.min(x, ex) > width ||
        Math.max(y, ey) < 0 ||
        Math.min(y, ey) > height
      ) {
        continue;
      }
      runs.add({
        text: String.fromCodePoint(code),
        x,
        y,
        ux,
        uy,
        vx,
        vy,
        size,
        advance: adv,
        font,
        fontSize: tf,
      });
    }
    return runs.runs();
  } finally {
    M._FPDFText_ClosePage(tp);
  }
}

/** Annotation subtypes whose Contents are not a reviewer's words: Link, Popup (its parent's), Widget. */
const NOT_MARKUP = new Set([2, 16, 20]);

/**
 * The text of a page's markup annotations (its /Contents: a FreeText callout's words, a cloud's or a
 * note's comment), one item per annotation, boxed by the annotation's /Rect mapped into sheet pixels
 * with the raster's page-to-device matrix, as the text runs are. Flagged `markup: true`.
 */
function readMarkups(inst: Instance, page: number, width: number, height: number): TextItem[] {
  const { api } = inst;
  const M = api.pdfium;
  const affine = pageToDevice(inst, page, width, height);
  if (!affine) return [];
  const { p0x, p0y, b11, b12, b21, b22 } = affine;
  const out: TextItem[] = [];
  const n = api.FPDFPage_GetAnnotCount(page);
  for (let i = 0; i < n; i++) {
    const annot = api.FPDFPage_GetAnnot(page, i);
    if (!annot) continue;
    try {
      if (NOT_MARKUP.has(api.FPDFAnnot_GetSubtype(annot))) continue;
      const bytes = api.FPDFAnnot_GetStringValue(annot, 'Contents', 0, 0);
      if (bytes <= 2) continue;
      const ptr = M.wasmExports.malloc(bytes);
      if (!ptr) continue;
      let text: string;
      try {
        api.FPDFAnnot_GetStringValue(annot, 'Contents', ptr, bytes);
        const utf16 = M.HEAPU8.slice(ptr, ptr + bytes - 2);
        text = Buffer.from(utf16.buffer, utf16.byteOffset, utf16.byteLength).toString('utf16le');
      } finally {
        M.wasmExports.free(ptr);
      }
      text = text.replace(/\s+/g, ' ').trim();
      if (!/[\p{L}\p{N}]/u.test(text)) continue;
      if (!api.FPDFAnnot_GetRect(annot, inst.scratch)) continue;
      const f = inst.scratch >> 2;
      const [l, t, r, b] = [M.HEAPF32[f]!, M.HEAPF32[f + 1]!, M.HEAPF32[f + 2]!, M.HEAPF32[f + 3]!];
      const xs: number[] = [];
      const ys: number[] = [];
      for (const [px, py] of [
        [l, t],
        [r, t],
        [l, b],
        [r, b],
      ] as const) {
        xs.push(b11 * (px - p0x) + b12 * (py - p0y));
        ys.push(b21 * (px - p0x) + b22 * (py - p0y));
      }
      const x0 = Math.max(0, Math.min(...xs));
      const y0 = Math.max(0, Math.min(...ys));
      const x1 = Math.min(width, Math.max(...xs));
      const y1 = Math.min(height, Math.max(...ys));
      if (!(x1 > x0 && y1 > y0)) continue;
      out.push({
        text,
        x: x0,
        y: y0,
        width: x1 - x0,
        height: y1 - y0,
        fontSize: 0,
        angle: 0,
        markup: true,
      });
    } finally {
      api.FPDFPage_CloseAnnot(annot);
    }
  }
  return out;
}

/** Bytes of this thread's WASM heap (0 before first use). For leak tests: the heap never shrinks. */
export async function pdfiumHeapBytes(): Promise<number> {
  if (!instancePromise) return 0;
  const inst = await instancePromise;
  return inst.api.pdfium.HEAPU8.byteLength;
}
