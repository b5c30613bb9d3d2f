import type { Db } from '../store/db';
import type { ObjectStore } from '../blobs/object-store';
import { parseObjectKey } from '../blobs/keys';
import { getById, getOverlayById } from '../store/repositories/overlays.repository';
import { getFileById } from '../store/repositories/files.repository';
import type { Row } from '../store/repositories/row';
import type { PageSource } from '../vision/tiles/deep-tiles';
import type { ImageKind } from '../vision/compare/compare-pipeline.adapter';

// What a stored image was made from, for its deep-zoom levels (tiles.service.ts): the page of the
// PDF behind a sheet image or a block crop, or both pages (and the pair's transform) behind an
// overlay image. Only images this module recognises go deeper than their own resolution.

export interface PageImageSource {
  kind: 'page';
  /** The image's pixel size (stored resolution). */
  width: number;
  height: number;
  source: PageSource;
  /** The image's top-left in its sheet's pixels (a block crop's bbox origin; 0 for a sheet). */
  origin: { x: number; y: number };
}

export interface OverlayImageSource {
  kind: 'overlay';
  width: number;
  height: number;
  a: PageSource;
  b: PageSource;
  aOrigin: { x: number; y: number };
  bOrigin: { x: number; y: number };
  /** Block B crop pixels → overlay pixels. */
  transform: number[];
  imageKind: ImageKind;
}

export type DeepSource = PageImageSource | OverlayImageSource;

/** Overlay image variants (blobs/keys.ts) → the compare pipeline's image kinds. */
const VARIANT_KIND: Record<string, ImageKind> = {
  combined: 'combined',
  'combined-colorblind': 'combined_colorblind',
  addition: 'additions',
  deletion: 'deletions',
  'aligned-b': 'aligned_b',
};

function json<T>(v: unknown): T | null {
  if (typeof v !== 'string') return null;
  try {
    return JSON.parse(v) as T;
  } catch {
    return null;
  }
}

type Box = { x: number; y: number; width: number; height: number };

export function createTileSourceResolver(env: {
  db: Db;
  objects: ObjectStore;
  maxPixels: number;
}): (imageKey: string) => Promise<DeepSource | null> {
  const { db, objects } = env;

  /** The page behind a sheet row, or null when its file is gone. */
  const pageOf = async (sheet: Row): Promise<PageSource | null> => {
    const drawing = await getById(db, 'drawings', String(sheet.drawing_id));
    const file = drawing && (await getFileById(db, String(drawing.file_id)));
    if (!file || file.status !== 'uploaded' || !file.object_key) return null;
    let path: string;
    try {
      path = await objects.localPath(String(file.object_key));
    } catch {
      return null;
    }
    return {
      path,
      bytesKey: String(file.sha256),
      contentType: String(file.content_type),
      index: Number(sheet.page_index),
      dpi: Number(sheet.dpi),
      maxPixels: env.maxPixels,
    };
  };

  const blockOf = async (blockId: string) => {
    const block = await getById(db, 'blocks', blockId);
    const bbox = block && json<Box>(block.bbox);
    const sheet = block && (await getById(db, 'sheets', String(block.sheet_id)));
    if (!block || !bbox || !sheet) return null;
    const source = await pageOf(sheet);
    return source ? { block, bbox, sheet, source } : null;
  };

  return async (imageKey) => {
    const parsed = parseObjectKey(imageKey);
    if (!parsed) return null;
    if (parsed.kind === 'sheet-image') {
      const sheet = await getById(db, 'sheets', parsed.sheetId);
      if (!sheet || sheet.image_key !== imageKey) return null;
      const source = await pageOf(sheet);
      if (!source) return null;
      return {
        kind: 'page',
        width: Number(sheet.width),
        height: Number(sheet.height),
        source,
        origin: { x: 0, y: 0 },
      };
    }
    if (parsed.kind === 'block-crop') {
      const b = await blockOf(parsed.blockId);
      if (!b || b.block.image_key !== imageKey) return null;
      return {
        kind: 'page',
        width: b.bbox.width,
        height: b.bbox.height,
        source: b.source,
        origin: { x: b.bbox.x, y: b.bbox.y },
      };
    }
    if (parsed.kind === 'overlay-image') {
      const imageKind = VARIANT_KIND[parsed.variant];
      const overlay = await getOverlayById(db, parsed.overlayId);
      const transform = overlay && json<number[]>(overlay.transform);
      if (!imageKind || !overlay || !transform || transform.length !== 6) return null;
      const images = json<Record<string, string>>(overlay.images) ?? {};
      if (!Object.values(images).includes(imageKey)) return null;
      const [a, b] = await Promise.all([
        blockOf(String(overlay.block_a_id)),
        blockOf(String(overlay.block_b_id)),
      ]);
      if (!a || !b) return null;
      return {
        kind: 'overlay',
        width: Number(overlay.width),
        height: Number(overlay.height),
        a: a.source,
        b: b.source,
        aOrigin: { x: a.bbox.x, y: a.bbox.y },
        bOrigin: { x: b.bbox.x, y: b.bbox.y },
        transform,
        imageKind,
      };
    }
    return null;
  };
}
