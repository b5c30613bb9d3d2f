// The registry of CPU-heavy tasks the worker pool can run: name -> function. It is loaded inside
// each worker thread (worker-entry.ts), and only as a type on the main thread, so whatever a task
// imports never loads on the HTTP thread. Vision work adds its pure-JS pixel loops here.
//
// A task receives structured-cloned arguments (typed arrays may be transferred in with the
// transferList of pool.run) and returns a value, or `withTransfer(value, buffers)` to move large
// buffers back without copying. Tasks must be pure: no database, no files; the pool may kill a
// worker mid-task (cancel, shutdown), so a task must leave nothing half-written.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  taskProgress,
  withTransfer,
  type Transferred,
  type WorkerTaskRegistry,
} from './worker-protocol';
import {
  finishPage,
  ingestPage,
  openCached,
  type IngestedPage,
} from '../vision/ingest/ingest-page';
import type { PageRaster, TextItem, TextSource } from '../vision/types';
import { isInputError } from '../vision/input/input-errors';
import { warmUpCompare, warmUpIngest } from './worker-warmup';
import { ApiError } from '../domain/errors';
import { loadGrey } from '../vision/symbols/load.adapter';
import { matchSymbols, type SymbolTemplate } from '../vision/symbols/match';
import {
  compareBlockPairs,
  changeRegions,
  type ComparePairArgs,
  type RegionsArgs,
} from './compare-tasks';
import { prepareReportImage, type PdfImage } from '../services/exports/report-image';
import { buildReportPdf, type ReportOptions } from '../services/exports/report-pdf';
import {
  buildCloudedPdf,
  type CloudedOptions,
  type CloudedSheet,
} from '../services/exports/clouded-pdf';
import type { ExportModel } from '../services/exports/model';
import {
  pageKindOf,
  renderOverlayTiles,
  renderPageTiles,
  type OverlayTilesArgs,
  type PageSource,
  type TileCut,
} from '../vision/tiles/deep-tiles';
import { newTimings } from '../vision/tiles/deep-timings';

/** Turns the input layer's InputError into an ApiError whose code names the problem (contract §3 table + processing codes). */
function asApiError(e: unknown): unknown {
  if (isInputError(e)) return new ApiError(e.code, e.detail);
  return e;
}

export interface IngestSource {
  /** Local path of the stored file bytes. */
  path: string;
  /** Identifies the bytes (sha256): a worker reuses an open document only for the same bytes. */
  bytesKey: string;
  contentType: string;
  maxPages: number;
  maxPixels: number;
  /**
   * Set once ingest.open accepted these bytes (same bytesKey and limits): a worker opening them
   * afterwards skips the decompression-bomb scan of the PDF's streams, which inflates every stream
   * (~250 ms for the 4 MB beam proposal, whose images inflate to 366 MiB).
   */
  streamsChecked?: boolean;
}

/** The worker's open document for `args` (kept open between tasks on the same bytes). */
function openSource(args: IngestSource) {
  return openCached(
    args.path,
    args.bytesKey,
    args.contentType,
    { maxPages: args.maxPages, maxPixels: args.maxPixels },
    { streamsChecked: args.streamsChecked === true },
  );
}

export const WORKER_TASKS = {
  /**
   * A new worker's warm-up, step 1: a generated scanned sheet through the process job's steps at
   * `dpi` (core/jobs/worker-warmup.ts). The pool runs it first on each worker
   * (WorkerPoolOptions.warmup).
   */
  'worker.warmup.ingest'(args: { dpi: number }) {
    return warmUpIngest(args.dpi);
  },

  /**
   * The later steps, when the worker is idle: that sheet compared with an edited copy of itself, pass
   * `pass` of `passes` (default 1 of 1).
   */
  'worker.warmup.compare'(args: { dpi: number; pass?: number; passes?: number }) {
    return warmUpCompare(args.dpi, args.pass ?? 1, args.passes ?? 1);
  },

  /** Lowercase hex SHA-256 of a buffer. */
  sha256(args: { data: Uint8Array }): string {
    return createHash('sha256').update(args.data).digest('hex');
  },

  /** Histogram of an 8-bit grey image (any layout): counts[v] = number of pixels of value v. */
  'grey.histogram'(args: { pixels: Uint8Array }): number[] {
    const counts = new Uint32Array(256);
    const px = args.pixels;
    for (let i = 0; i < px.length; i++) counts[px[i]!]!++;
    return Array.from(counts);
  },

  /**
   * Binarizes an 8-bit grey image in place: ink (value < threshold, dark on white paper) becomes
   * 255, paper 0. The buffer is moved back to the caller; `ink` counts ink pixels.
   */
  'grey.threshold'(args: { pixels: Uint8Array; threshold: number }) {
    const px = args.pixels;
    const t = args.threshold;
    let ink = 0;
    for (let i = 0; i < px.length; i++) {
      if (px[i]! < t) {
        px[i] = 255;
        ink++;
      } else {
        px[i] = 0;
      }
    }
    return withTransfer({ pixels: px, ink }, [px.buffer as ArrayBuffer]);
  },

  /**
   * Opens a drawing file and reports its pages (throws an ApiError for every bad input). With `dpi`,
   * a PDF also reports each page's raster size at that dpi (from the page dictionaries, no content
   * parse), which the process job needs to render pages in bands (core/jobs/ingest-in-pool.ts).
   */
  async 'ingest.open'(args: IngestSource & { dpi?: number }) {
    try {
      // The open that checks: never skips the stream scan.
      const doc = await openSource({ ...args, streamsChecked: false });
      // null for a page whose size cannot be read: it goes the whole-page way, which fails that
      // page with its own precise error when the job reaches it (earlier pages are kept).
      const pages: ({ width: number; height: number } | null)[] = [];
      if (doc.readBand && args.dpi !== undefined) {
        for (let i = 0; i < doc.pageCount; i++) {
          const p = await doc.pageInfo(i, args.dpi).catch(() => null);
          pages.push(p && { width: p.widthPx, height: p.heightPx });
        }
      }
      return {
        pageCount: doc.pageCount,
        contentType: doc.contentType,
        textSource: doc.textSource,
        pages,
        // One of the drawing's issue-date sources (core/domain/issue-date.ts).
        creationDate: await doc.creationDate(),
      };
    } catch (e) {
      throw asApiError(e);
    }
  },

  /** Rasterizes one page and reads its text, metadata and blocks; images come back as encoded buffers. */
  async 'ingest.page'(args: IngestSource & { index: number; dpi: number; colour?: boolean }) {
    try {
      const doc = await openSource(args);
      const page = await ingestPage(doc, args.index, {
        dpi: args.dpi,
        maxPixels: args.maxPixels,
        colour: args.colour ?? true,
      });
      return transferPage(page);
    } catch (e) {
      throw asApiError(e);
    }
  },

  /**
   * One band of a PDF page's raster, written into `pixels` (the whole page, shared with the other
   * bands' workers); the page's text runs too when `withText`. Returns the raster's description
   * (its pixels stay in `pixels`) for ingest.finish.
   */
  async 'ingest.band'(
    args: IngestSource & {
      index: number;
      dpi: number;
      top: number;
      rows: number;
      pixels: SharedArrayBuffer;
      /** The page's colour buffer (3 B/px): the band renders in colour where the page has it. */
      rgb?: SharedArrayBuffer;
      withText: boolean;
    },
  ): Promise<Transferred<{ raster: Omit<PageRaster, 'data' | 'rgb'>; text: TextItem[] }>> {
    try {
      const doc = await openSource(args);
      if (!doc.readBand) throw new Error(`A ${doc.contentType} page cannot be rendered in bands`);
      const { raster, text } = await doc.readBand(
        args.index,
        {
          top: args.top,
          rows: args.rows,
          into: new Uint8Array(args.pixels),
          ...(args.rgb ? { rgbInto: new Uint8Array(args.rgb) } : {}),
        },
        {
          dpi: args.dpi,
          maxPixels: args.maxPixels,
          withText: args.withText,
          colour: args.rgb !== undefined,
        },
      );
      const { data: _pixels, rgb: _rgb, ...described } = raster;
      // The line work (the text band's, 1 bit a pixel) is moved, not copied.
      return withTransfer(
        { raster: described, text },
        [raster.lineWork, raster.fillWork, raster.annotWork]
          .filter((m) => m !== undefined)
          .map((m) => m.buffer as ArrayBuffer),
      );
    } catch (e) {
      throw asApiError(e);
    }
  },

  /** ingest.page's work after the raster, on a page whose bands ingest.band rendered into `pixels`. */
  async 'ingest.finish'(args: {
    raster: Omit<PageRaster, 'data' | 'rgb'>;
    pixels: SharedArrayBuffer;
    /** The page's colour buffer, when its bands rendered in colour. */
    rgb?: SharedArrayBuffer;
    text: TextItem[];
    textSource: TextSource;
  }) {
    const raster: PageRaster = {
      ...args.raster,
      data: new Uint8Array(args.pixels),
      ...(args.rgb ? { rgb: new Uint8Array(args.rgb) } : {}),
    };
    const page = await finishPage({ raster, text: args.text }, args.textSource);
    return transferPage(page);
  },

  /**
   * Revision comparison of one sheet pair (contract §6): registers B's sheet onto A's, pairs the
   * blocks and renders one overlay per block pair (PNG buffers moved back). See compare-tasks.ts.
   */
  async 'compare.sheetPair'(args: ComparePairArgs) {
    const out = await compareBlockPairs(args);
    return withTransfer(
      out,
      out.overlays.flatMap((o) => Object.values(o.png).map((b) => b.buffer as ArrayBuffer)),
    );
  },

  /** Change regions of one stored overlay (the `analyze` job), in overlay pixels. */
  async 'compare.regions'(args: RegionsArgs) {
    return changeRegions(args);
  },

  /**
   * Symbol detection on one target image (the `parse` job, contract §7): every instance of each
   * template crop, at 90° rotations and ±10 % scale. Boxes come back in the target image's pixels.
   */
  async 'symbols.match'(args: SymbolMatchArgs) {
    const target = await loadGrey(args.target.path);
    const templates: SymbolTemplate[] = [];
    for (const t of args.templates)
      templates.push({ label: t.label, image: await loadGrey(t.path, t.bbox) });
    return matchSymbols(
      target,
      templates,
      args.threshold === undefined ? {} : { threshold: args.threshold },
    );
  },

  /**
   * Exports (contract §6): the overlay image of one report page, ready to embed (export.job.ts).
   * Reads the stored overlay at `path`; resamples only when it is over the report's resolution.
   */
  async 'export.reportImage'(args: { path: string }) {
    const img = await prepareReportImage(args.path);
    return withTransfer(img, [img.data.buffer as ArrayBuffer]);
  },

  /** The review report from the export model and its prepared images (keyed by overlay id). */
  async 'export.reportPdf'(args: {
    model: ExportModel;
    images: [string, PdfImage][];
    options: Omit<ReportOptions, 'exported_at'> & { exported_at: string };
  }) {
    const bytes = await buildReportPdf(args.model, new Map(args.images), {
      ...args.options,
      exported_at: new Date(args.options.exported_at),
    });
    return withTransfer(bytes, [bytes.buffer as ArrayBuffer]);
  },

  /** The newer revision's PDF (read from `path`) with a revision cloud per change. */
  async 'export.cloudedPdf'(args: {
    path: string;
    sheets: CloudedSheet[];
    options: Omit<CloudedOptions, 'now'> & { now: string };
  }) {
    const source = new Uint8Array(await readFile(args.path));
    const bytes = await buildCloudedPdf(source, args.sheets, {
      ...args.options,
      now: new Date(args.options.now),
    });
    return withTransfer(bytes, [bytes.buffer as ArrayBuffer]);
  },

  /** Whether a page is vector drawing (deep-zoom levels rendered from it) or a scan. */
  async 'tiles.kind'(args: PageSource) {
    try {
      return await pageKindOf(args);
    } catch (e) {
      throw asApiError(e);
    }
  },

  /**
   * A sheet's or block's deep-zoom tiles of one level, rendered from its page in colour (WebP, in
   * the order of `cuts`): the rectangle holding them is rendered once. With where its time went.
   */
  async 'tiles.page'(args: { source: PageSource; scale: number; cuts: TileCut[] }) {
    try {
      const timings = newTimings();
      const tiles = await renderPageTiles(args.source, args.scale, args.cuts, timings);
      return withTransfer(
        { tiles, timings },
        tiles.map((w) => w.buffer as ArrayBuffer),
      );
    } catch (e) {
      throw asApiError(e);
    }
  },

  /**
   * An overlay's deep-zoom tiles of one level, composed from both revisions rendered once at its
   * scale for the rectangle holding them (WebP, in the order of `tiles`).
   */
  async 'tiles.overlay'(args: OverlayTilesArgs) {
    try {
      const timings = newTimings();
      // With cells, each cell's tiles go to the service as soon as they are made (taskProgress:
      // { first, tiles }); the answer then holds null for them.
      const sent = new Set<number>();
      const tiles: (Uint8Array | null)[] = await renderOverlayTiles(
        args,
        timings,
        (first, webps) => {
          taskProgress(
            { first, tiles: webps },
            webps.map((w) => w.buffer as ArrayBuffer),
          );
          webps.forEach((_, i) => sent.add(first + i));
        },
      );
      for (const i of sent) tiles[i] = null;
      return withTransfer(
        { tiles, timings },
        tiles.flatMap((w) => (w ? [w.buffer as ArrayBuffer] : [])),
      );
    } catch (e) {
      throw asApiError(e);
    }
  },
} satisfies WorkerTaskRegistry;

export interface SymbolMatchArgs {
  /** Local path of the stored sheet or block image searched. */
  target: { path: string };
  /** Each template: the stored image it is cut from and the crop box in that image's pixels. */
  templates: {
    label: string;
    path: string;
    bbox: { x: number; y: number; width: number; height: number };
  }[];
  threshold?: number;
}

export type WorkerTasks = typeof WORKER_TASKS;

/** An ingested page with its encoded images moved (not copied) to the main thread. */
function transferPage(page: IngestedPage) {
  return withTransfer(page, [
    page.sheetPng.buffer as ArrayBuffer,
    page.thumbnailWebp.buffer as ArrayBuffer,
    ...page.blocks.map((b) => b.png.buffer as ArrayBuffer),
    ...(page.lineWorkPng ? [page.lineWorkPng.buffer as ArrayBuffer] : []),
  ]);
}
