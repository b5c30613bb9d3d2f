import sharp from 'sharp';
import { openInput, type InputDocument } from '../input/document';
import type { InputLimits } from '../input/input-errors';
import { extractSheetMetadata, type SheetMetadata } from '../sheet/title-block';
import { segmentBlocks, type Block } from '../sheet/blocks';
import type { PageRaster, TextItem, TextSource } from '../types';
import { ocrPage } from '../ocr/ocr.adapter';
import { encodeLineWorkPng } from '../compare/encode.adapter';

// One page of a drawing, from bytes to what the store keeps: the grey sheet image (PNG), a
// thumbnail, text with positions, title-block metadata and the blocks (views) with their crops.
// Runs inside a worker thread (core/jobs/worker-tasks.ts), one page at a time, so memory stays
// bounded by a page and the HTTP thread never rasterizes.

export const THUMBNAIL_WIDTH = 480;

export interface IngestedBlock extends Block {
  /** PNG crop of the block from the sheet image. */
  png: Uint8Array;
}

export interface IngestedPage {
  index: number;
  width: number;
  height: number;
  dpi: number;
  textSource: TextSource;
  text: TextItem[];
  /** Text of the page's PDF markup annotations, one item per annotation (search indexes it). */
  markups: TextItem[];
  metadata: SheetMetadata;
  blocks: IngestedBlock[];
  sheetPng: Uint8Array;
  thumbnailWebp: Uint8Array;
  /**
   * PDF pages whose objects draw line work: that line work (PageRaster.lineWork) as a 1-bit PNG,
   * black on white, the sheet's size. The compare keeps it out of the fills it finds.
   */
  lineWorkPng?: Uint8Array;
}

// A worker keeps the document it is working on open between pages (PDFium parses the xref once; the
// PDFium instance itself lives as long as the worker thread).
let cached: { key: string; doc: InputDocument } | undefined;

export async function openCached(
  path: string,
  bytesKey: string,
  contentType: string,
  limits: InputLimits,
  opts: { streamsChecked?: boolean } = {},
): Promise<InputDocument> {
  if (cached?.key === bytesKey) return cached.doc;
  if (cached) await cached.doc.close().catch(() => {});
  cached = undefined;
  const { readFile } = await import('node:fs/promises');
  const bytes = new Uint8Array(await readFile(path));
  const doc = await openInput(bytes, contentType, limits, opts);
  cached = { key: bytesKey, doc };
  return doc;
}

export async function closeCached(): Promise<void> {
  if (cached) await cached.doc.close().catch(() => {});
  cached = undefined;
}

export async function ingestPage(
  doc: InputDocument,
  index: number,
  opts: { dpi: number; maxPixels: number; ocr?: boolean },
): Promise<IngestedPage> {
  // One load of the page for both the raster and its text layer (PDFium, since issue #3).
  const content = await doc.readPage(index, { dpi: opts.dpi, maxPixels: opts.maxPixels });
  return finishPage(content, doc.textSource, opts);
}

/**
 * Everything after the raster: OCR where the page has no text layer, title-block metadata, blocks,
 * the sheet PNG, thumbnail and block crops. `textSource` is the document's (vector for PDFs). The
 * worker pool runs this on a page whose bands other workers rendered (core/jobs/ingest-in-pool.ts).
 */
export async function finishPage(
  content: { raster: PageRaster; text: TextItem[] },
  textSource: TextSource,
  opts: { ocr?: boolean } = {},
): Promise<IngestedPage> {
  const { raster } = content;
  const index = raster.index;
  // Markup annotations are the reviewer's words on the sheet, not the drawing's: search keeps them
  // apart, and title-block reading, blocks and change text see the drawing's own text only.
  const markups = content.text.filter((t) => t.markup);
  let text = markups.length ? content.text.filter((t) => !t.markup) : content.text;
  if (text.length === 0) textSource = 'none';
  if (text.length === 0 && opts.ocr !== false) {
    // No text layer (a scan, or fonts drawn as outlines): read the page with offline OCR.
    text = await ocrPage(raster);
    textSource = text.length > 0 ? 'ocr' : 'none';
  }
  const metadata = extractSheetMetadata({
    items: text,
    width: raster.width,
    height: raster.height,
    dpi: raster.dpi,
    image: raster,
  });
  const blocks = segmentBlocks({
    items: text,
    width: raster.width,
    height: raster.height,
    dpi: raster.dpi,
    image: raster,
    titleBlockBox: metadata.titleBlockBox,
    sheetTitle: metadata.title,
  });
  const raw = { raw: { width: raster.width, height: raster.height, channels: 1 as const } };
  // PNG level 1: 3–5x faster than level 6 for ~2.7x the bytes (performance-anchors §4); the sheet
  // image is on the path to "usable", so speed wins.
  const [sheetPng, thumbnailWebp, lineWorkPng] = await Promise.all([
    sharp(raster.data, raw).toColourspace('b-w').png({ compressionLevel: 1 }).toBuffer(),
    sharp(raster.data, raw)
      .resize({ width: Math.min(THUMBNAIL_WIDTH, raster.width) })
      .toColourspace('b-w')
      .webp({ quality: 80 })
      .toBuffer(),
    raster.lineWork
      ? encodeLineWorkPng(raster.width, raster.height, raster.lineWork)
      : Promise.resolve(undefined),
  ]);
  const ingestedBlocks: IngestedBlock[] = [];
  for (const b of blocks) {
    const left = clamp(Math.floor(b.bbox.x), 0, raster.width - 1);
    const top = clamp(Math.floor(b.bbox.y), 0, raster.height - 1);
    const width = clamp(Math.ceil(b.bbox.width), 1, raster.width - left);
    const height = clamp(Math.ceil(b.bbox.height), 1, raster.height - top);
    const png = await sharp(raster.data, raw)
      .extract({ left, top, width, height })
      .toColourspace('b-w')
      .png({ compressionLevel: 1 })
      .toBuffer();
    ingestedBlocks.push({
      ...b,
      bbox: { x: left, y: top, width, height },
      png: new Uint8Array(png),
    });
  }
  return {
    index,
    width: raster.width,
    height: raster.height,
    dpi: raster.dpi,
    textSource,
    text,
    markups,
    metadata,
    blocks: ingestedBlocks,
    // Own copies: small sharp buffers can share a pooled ArrayBuffer, which must not be transferred.
    sheetPng: new Uint8Array(sheetPng),
    thumbnailWebp: new Uint8Array(thumbnailWebp),
    ...(lineWorkPng ? { lineWorkPng: new Uint8Array(lineWorkPng) } : {}),
  };
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}
