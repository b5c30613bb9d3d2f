// The ingest half of a new pool worker's warm-up (core/jobs/worker-warmup.ts; the pool runs it
// before the worker's first task): the generated sheet of warmup-sheet.ts through the steps a PDF
// page takes in the process job —
// the stream scan, the band render (its scanned tiles drawn by the painter), the text layer, and
// the finish (metadata, blocks, PNG, thumbnail) — so V8 has compiled that code before a user's
// first sheet needs it. Raster rounds are repeated: the painter's loops need more than one sheet.
// Measured in bench/ingest ("service" rows).
import { DEFAULT_DPI, openDocument, pixelSize, type RenderTimings } from '../input/pdf.adapter';
import { scanPdfStreams } from '../input/pdf-stream-scan';
import { buildWarmupSheet } from '../input/warmup-sheet';
import type { PageRaster } from '../types';
import { finishPage } from './ingest-page';

/** Raster rounds of the warm-up sheet (measured: one round removes about half of the first-sheet cost, two all of it). */
export const WARMUP_RASTER_ROUNDS = 2;

export interface WarmupReport {
  dpi: number;
  ms: number;
  /** Images the painter drew on the sheet, over all rounds (0 means the painter was not warmed). */
  paintedImages: number;
  /** Sheet number the finish step read from the title block. */
  sheetNumber: string | null;
}

const sheets = new Map<number, Uint8Array>();

/** The ingest warm-up; also hands back the sheet's raster (the compare warm-up's sheet A). */
export async function warmUp(dpi = DEFAULT_DPI): Promise<WarmupReport & { raster: PageRaster }> {
  const t0 = performance.now();
  let bytes = sheets.get(dpi);
  if (!bytes) sheets.set(dpi, (bytes = buildWarmupSheet(dpi)));
  const limits = { maxPages: 1, maxPixels: 200_000_000 };
  await scanPdfStreams(bytes, limits);
  const doc = await openDocument(bytes, limits);
  try {
    const info = await doc.pageInfo(0);
    const { width, height } = pixelSize(info.widthPt, info.heightPt, dpi);
    const band = { top: 0, rows: height, into: new Uint8Array(width * height) };
    let painted = 0;
    const render = async (withText: boolean) => {
      const timings: RenderTimings = { pageMs: 0, renderMs: 0, readbackMs: 0, greyMs: 0 };
      const content = await doc.renderBand(0, band, { dpi, timings, withText });
      painted += timings.paintedImages ?? 0;
      return content;
    };
    const content = await render(true);
    for (let k = 1; k < WARMUP_RASTER_ROUNDS; k++) await render(false);
    const page = await finishPage(content, 'vector');
    return {
      dpi,
      ms: performance.now() - t0,
      paintedImages: painted,
      sheetNumber: page.metadata.sheet_number,
      raster: content.raster,
    };
  } finally {
    await doc.close();
  }
}
