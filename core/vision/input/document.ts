// Entry point of the page-input layer: pick the adapter from the file's magic number (never from the
// declared Content-Type alone) and expose one page-at-a-time interface for PDFs and raster images.

import type { PageRaster, TextItem, TextSource } from '../types';
import { openImage, type ImageFormat } from './image.adapter';
import { InputError, type InputLimits } from './input-errors';
import { scanPdfStreams } from './pdf-stream-scan';
import {
  DEFAULT_DPI,
  openDocument,
  pixelSize,
  type PageBand,
  type PageInfo,
  type RegionRequest,
} from './pdf.adapter';
import type { PageKind, RegionRaster } from './pdfium.adapter';

export type SupportedContentType = 'application/pdf' | 'image/png' | 'image/jpeg' | 'image/tiff';

export const SUPPORTED_CONTENT_TYPES: readonly SupportedContentType[] = [
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/tiff',
];

const startsWith = (b: Uint8Array, sig: number[], at = 0) =>
  b.length >= at + sig.length && sig.every((v, i) => b[at + i] === v);
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

/**
 * The content type implied by a file's first bytes (1 KiB is enough), or null when it is none of the
 * accepted types. PDF: "%PDF-" within the first 1024 bytes (readers tolerate a short preamble, ISO
 * 32000-1 Annex H). PNG: the 8-byte signature. JPEG: FF D8 FF. TIFF: "II*\0" / "MM\0*" (and BigTIFF
 * "II+\0" / "MM\0+").
 */
export function sniffContentType(firstBytes: Uint8Array): SupportedContentType | null {
  const b = firstBytes;
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(b, [0x49, 0x49, 0x2a, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2a]))
    return 'image/tiff';
  if (startsWith(b, [0x49, 0x49, 0x2b, 0x00]) || startsWith(b, [0x4d, 0x4d, 0x00, 0x2b]))
    return 'image/tiff';
  const head = Buffer.from(b.buffer, b.byteOffset, Math.min(b.byteLength, 1024));
  if (head.includes('%PDF-', 0, 'latin1')) return 'application/pdf';
  return null;
}

/** A hint for common wrong uploads, so the refusal says what the file looks like. */
function lookalike(b: Uint8Array): string | null {
  if (startsWith(b, ascii('PK\x03\x04'))) return 'a ZIP archive (or an Office/DWFx document)';
  if (startsWith(b, ascii('GIF8'))) return 'a GIF image';
  if (startsWith(b, ascii('RIFF')) && startsWith(b, ascii('WEBP'), 8)) return 'a WebP image';
  if (startsWith(b, ascii('ftyp'), 4)) return 'a HEIC/AVIF image or a video';
  if (startsWith(b, ascii('AC10'))) return 'an AutoCAD DWG drawing';
  if (startsWith(b, ascii('BM'))) return 'a BMP image';
  const text = Buffer.from(b.subarray(0, 256)).toString('latin1').trimStart();
  if (text.startsWith('<svg') || text.startsWith('<?xml')) return 'an SVG/XML document';
  if (/^0\s*\r?\n\s*SECTION/.test(text)) return 'an AutoCAD DXF drawing';
  return null;
}

export interface InputPageInfo extends PageInfo {
  /** The raster size renderPage() gives at `dpi` (for images: the stored size at the declared dpi). */
  widthPx: number;
  heightPx: number;
  dpi: number;
}

export interface InputDocument {
  /** The type found by magic number, which is what was opened. */
  readonly contentType: SupportedContentType;
  /** What the caller declared; differs from contentType when the upload was mislabelled. */
  readonly declaredContentType: string;
  readonly pageCount: number;
  /** `vector` for PDFs (text layer read by pageText), `none` for raster images (OCR is a later step). */
  readonly textSource: TextSource;
  /**
   * When the file says it was written: a PDF's Info CreationDate as stored (`D:YYYYMMDDHHmmSS…`),
   * null when it has none; images give null (their EXIF dates are not read).
   */
  creationDate(): Promise<string | null>;
  /** Size of page i (0-based); for PDFs at `dpi` (default: the adapter's DEFAULT_DPI). */
  pageInfo(index: number, dpi?: number): Promise<InputPageInfo>;
  /** One grey page. PDFs render at `dpi`; images come at their own resolution and ignore `dpi`. */
  renderPage(index: number, opts?: { dpi?: number; maxPixels?: number }): Promise<PageRaster>;
  /** Text runs in sheet pixels at `dpi` (PDF only; images give []). */
  pageText(index: number, dpi?: number): Promise<TextItem[]>;
  /**
   * renderPage and pageText at the raster's dpi in one go. For PDFs the text is read from the page
   * loaded for the raster (one content parse); images give their raster and no text.
   */
  readPage(
    index: number,
    opts?: { dpi?: number; maxPixels?: number; colour?: boolean },
  ): Promise<{ raster: PageRaster; text: TextItem[] }>;
  /**
   * PDFs only (absent for images, which are decoded whole): one band of readPage's raster written
   * into band.into, the whole page's buffer that other bands fill from other threads, plus the text
   * runs when `withText`. The raster returned has `data` = band.into.
   */
  readBand?(
    index: number,
    band: PageBand,
    opts?: { dpi?: number; maxPixels?: number; withText?: boolean; colour?: boolean },
  ): Promise<{ raster: PageRaster; text: TextItem[] }>;
  /**
   * PDFs only: a rectangle of page `index` rendered from its content at `region.scale` times its
   * raster at `region.dpi` (deep-zoom tiles), in grey or colour.
   */
  renderRegion?(index: number, region: RegionRequest): Promise<RegionRaster>;
  /** PDFs only: whether the page is vector drawing or a scan. */
  pageKind?(index: number): Promise<PageKind>;
  close(): Promise<void>;
}

/**
 * Open uploaded bytes. The adapter is chosen by magic number; `contentType` is only reported back
 * (and used in the refusal detail). Throws InputError for every bad input: unsupported_type,
 * truncated_file, corrupt_file, encrypted_pdf, no_pages, too_many_pages, page_too_large,
 * decompression_bomb, processing_timeout.
 */
export async function openInput(
  bytes: Uint8Array,
  contentType: string,
  limits: InputLimits = {},
  opts: { streamsChecked?: boolean } = {},
): Promise<InputDocument> {
  if (bytes.byteLength === 0) {
    throw new InputError(
      'truncated_file',
      'The file is empty (0 bytes): the upload did not complete. Upload it again.',
    );
  }
  const sniffed = sniffContentType(bytes.subarray(0, 1024));
  if (!sniffed) {
    const looks = lookalike(bytes);
    throw new InputError(
      'unsupported_type',
      `The file ${contentType ? `was declared as ${contentType} but ` : ''}is ${looks ?? 'not a PDF, PNG, JPEG or TIFF'}` +
        `${looks ? ', which is not accepted' : ''}. Upload drawings as PDF (preferred) or as PNG, JPEG or TIFF images.`,
    );
  }

  if (sniffed === 'application/pdf') {
    // Flate bombs are refused before any renderer inflates them (pdf-stream-scan.ts).
    // `streamsChecked`: these bytes already passed this scan under the same limits (an earlier open
    // of the same file in the same job, in another worker).
    if (!opts.streamsChecked) await scanPdfStreams(bytes, limits);
    const doc = await openDocument(bytes, limits);
    return {
      contentType: sniffed,
      declaredContentType: contentType,
      pageCount: doc.pageCount,
      textSource: 'vector',
      creationDate: () => doc.creationDate(),
      async pageInfo(i, dpi = DEFAULT_DPI) {
        const p = await doc.pageInfo(i);
        const px = pixelSize(p.widthPt, p.heightPt, dpi);
        return { ...p, dpi, widthPx: px.width, heightPx: px.height };
      },
      renderPage: (i, o) => doc.renderPage(i, o),
      pageText: (i, dpi) => doc.pageText(i, dpi),
      readPage: (i, o) => doc.renderPageWithText(i, o),
      readBand: (i, band, o) => doc.renderBand(i, band, o),
      renderRegion: (i, region) => doc.renderRegion(i, region),
      pageKind: (i) => doc.pageKind(i),
      close: () => doc.close(),
    };
  }

  const format: ImageFormat =
    sniffed === 'image/png' ? 'png' : sniffed === 'image/jpeg' ? 'jpeg' : 'tiff';
  const img = await openImage(bytes, format, limits);
  return {
    contentType: sniffed,
    declaredContentType: contentType,
    pageCount: img.pageCount,
    textSource: 'none',
    creationDate: () => Promise.resolve(null),
    pageInfo: (i) => img.pageInfo(i),
    renderPage: (i, o) =>
      img.renderPage(i, o?.maxPixels === undefined ? {} : { maxPixels: o.maxPixels }),
    pageText: (i) => img.pageText(i),
    async readPage(i, o) {
      // In colour where the image has it, when the caller asks (as a PDF page is read).
      const raster = await img.renderPage(i, {
        ...(o?.maxPixels === undefined ? {} : { maxPixels: o.maxPixels }),
        ...(o?.colour ? { colour: true } : {}),
      });
      return { raster, text: await img.pageText(i) };
    },
    close: () => img.close(),
  };
}
