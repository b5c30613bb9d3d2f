import sharp, { type Sharp } from 'sharp';
import { openInput, type InputDocument } from '../input/document';
import type { InputLimits } from '../input/input-errors';
import { extractSheetMetadata, type SheetMetadata } from '../sheet/title-block';
import { segmentBlocks, type Block } from '../sheet/blocks';
import type { PageRaster, TextItem, TextSource } from '../types';
import { ocrPage } from '../ocr/ocr.adapter';
import { encodeLineWorkPng } from '../compare/encode.adapter';
import { keepsColour } from '../input/pdfium.adapter';

// One page of a drawing, from bytes to what the store keeps: the sheet image (PNG), a thumbnail, text
// with positions, title-block metadata and the blocks (views) with their crops. Pages with colour
// (red revision clouds, coloured markups and fills) keep it in the images people look at: the
// sheet image, its crops and thumbnail are RGB, and the comparison derives its grey from them with
// PDFium's grey weights (compare/encode.adapter.ts decodeGrey), the grey the page was read with
// here. Pages without colour are stored with one channel, as before.
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
  /** The sheet image: RGB where the page has colour (`colour`), else 1-channel grey. */
  sheetPng: Uint8Array;
  thumbnailWebp: Uint8Array;
  /**
   * PDF pages whose objects draw line work: that line work (PageRaster.lineWork) as a 1-bit PNG,
   * black on white, the sheet's size. The compare keeps it out of the fills it finds.
   */
  lineWorkPng?: Uint8Array;
  /** Whether the sheet image, crops and thumbnail were stored in colour. */
  colour: boolean;
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
  opts: { dpi: number; maxPixels: number; ocr?: boolean; colour?: boolean },
): Promise<IngestedPage> {
  // One load of the page for both the raster and its text layer (PDFium, since issue #3), in colour
  // where the page has it unless the caller asks for grey.
  const content = await doc.readPage(index, {
    dpi: opts.dpi,
    maxPixels: opts.maxPixels,
    colour: opts.colour ?? true,
  });
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
  // Colour when the render kept it and enough of its pixels are coloured (a band's render carries
  // its colour buffer whatever the count: the page's count decides here).
  const colour = raster.rgb !== undefined && keepsColour(raster.colourPixels ?? Infinity);
  const { width: w, height: h } = raster;
  /** The page as sharp input: RGB with colour, else grey (`b-w`: 1-channel output). */
  const image = () =>
    colour
      ? sharp(raster.rgb!, { raw: { width: w, height: h, channels: 3 } })
      : sharp(raster.data, { raw: { width: w, height: h, channels: 1 } });
  const oneChannel = (p: Sharp) => (colour ? p : p.toColourspace('b-w'));
  // PNG level 1: 3–5x faster than level 6 for ~2.7x the bytes (performance-anchors §4); the sheet
  // image is on the path to "usable", so speed wins.
  const [sheetPng, thumbnailWebp, lineWorkPng] = await Promise.all([
    oneChannel(image()).png({ compressionLevel: 1 }).toBuffer(),
    oneChannel(image().resize({ width: Math.min(THUMBNAIL_WIDTH, raster.width) }))
      .webp({ quality: 80 })
      .toBuffer(),
    raster.lineWork
      ? encodeLineWorkPng(raster.width, raster.height, raster.lineWork, {
          ...(raster.fillWork ? { fills: raster.fillWork } : {}),
          ...(raster.annotWork ? { annotations: raster.annotWork } : {}),
        })
      : Promise.resolve(undefined),
  ]);
  const ingestedBlocks: IngestedBlock[] = [];
  for (const b of blocks) {
    const left = clamp(Math.floor(b.bbox.x), 0, raster.width - 1);
    const top = clamp(Math.floor(b.bbox.y), 0, raster.height - 1);
    const width = clamp(Math.ceil(b.bbox.width), 1, raster.width - left);
    const height = clamp(Math.ceil(b.bbox.height), 1, raster.height - top);
    const png = await oneChannel(image().extract({ left, top, width, height }))
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
    colour,
  };
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, v));
}
