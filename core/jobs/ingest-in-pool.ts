// One page of a drawing through the worker pool (the `process` job's unit of work).
//
// Rasterizing is most of a page's time (PDFium in WebAssembly: ~90 ms for a 17x11 in vector sheet,
// over a second for an image-heavy 34x22 in one, at 200 dpi), and one render runs on one thread. The
// process job keeps as many pages in flight as the pool has workers. While a drawing has at least
// that many pages still to start, each page is rendered whole by one worker. Its last pages are cut
// into horizontal bands, one per free share of the pool: each worker renders its band of the page
// straight into a SharedArrayBuffer that holds the whole page (PDFium skips what lies outside the
// band's clip), then one worker finishes the page (metadata, blocks, PNG, thumbnail) on that buffer.
// So no core idles while the last page of a set renders on the other, and no page is parsed twice
// while there is whole-page work for every worker: every band parses the page's content again,
// ~15 % of a content-heavy 34x22 in page's time. Measured in bench/ingest ("service" rows).
//
// Every PDF page in the service takes this path, one band on a pool of one worker: the bands of a
// page assemble exactly the pixels of a single band (same transform, only the clip differs), so a
// sheet image does not depend on how many workers made it. A band's render is one blocking call
// into WebAssembly, so each band task runs under a time limit that ends its worker.
//
// Raster images (PNG, JPEG, TIFF) are decoded whole by libvips, and a page over the pixel limit goes
// the whole-page way too, where the worker refuses it with page_too_large before anything is
// allocated.
import { ApiError } from '../domain/errors';
import type { IngestedPage } from '../vision/ingest/ingest-page';
import {
  DEFAULT_OPEN_TIMEOUT_MS,
  DEFAULT_PAGE_TIMEOUT_MS,
  timeoutDetail,
} from '../vision/input/input-errors';
import { DEFAULT_DPI } from '../vision/input/pdf.adapter';
import type { WorkerPool } from './worker-pool';
import { workerWarmupSteps } from './warmup-steps';
import type { IngestSource } from './worker-tasks';

/**
 * The pool workers' warm-up (WorkerPoolOptions.warmup; core/jobs/worker-warmup.ts): a generated
 * scanned sheet through the process job's steps at the dpi it renders, before the worker's first
 * task; then, when nothing is queued, that sheet compared with an edited copy of itself
 * (COMPARE_WARMUP_PASSES times).
 */
export const WORKER_WARMUP = workerWarmupSteps(DEFAULT_DPI);

/** A band's time limit by default: the input layer's page budget plus opening the document. */
export const BAND_TIME_LIMIT_MS = DEFAULT_PAGE_TIMEOUT_MS + DEFAULT_OPEN_TIMEOUT_MS;

/** Most bands a page is cut into (more buys little: every band parses the page's content again). */
export const MAX_BANDS = 4;
/** Fewest rows a band may have; a shorter page is cut into fewer bands. */
export const MIN_BAND_ROWS = 256;

/**
 * How many bands a page `height` rows tall is cut into on a pool of `poolSize` workers, when
 * `pagesLeft` pages of its drawing (this one included) are still to start.
 */
export function bandCount(poolSize: number, height: number, pagesLeft = 1): number {
  // The page's share of the pool: the other pages still to start will keep the rest busy.
  const share = Math.floor(poolSize / Math.max(1, pagesLeft));
  return Math.max(1, Math.min(share, MAX_BANDS, Math.floor(height / MIN_BAND_ROWS)));
}

/** Rows [top, top + rows) of each of `n` bands over `height` rows: equal, the last one shorter. */
export function bandRows(height: number, n: number): { top: number; rows: number }[] {
  const rows = Math.ceil(height / n);
  const bands = [];
  for (let top = 0; top < height; top += rows)
    bands.push({ top, rows: Math.min(rows, height - top) });
  return bands;
}

export interface PoolPage {
  index: number;
  dpi: number;
  /** The page's raster size at dpi when the document can render bands (PDF), from ingest.open. */
  size?: { width: number; height: number } | null | undefined;
  /** Pages of the drawing still to start, this one included (1 when unknown). */
  pagesLeft?: number;
  /** Keep colour where the page has it (pdfium.adapter.ts `colour`); default true. */
  colour?: boolean;
}

/**
 * Page buffers (SharedArrayBuffer) given back once a page is finished, for the next page of the same
 * size: a backing store shared with workers is freed only after every isolate that saw it has
 * collected it, and at 90 MB for a 34x22 in sheet's colour buffer a few pages awaiting that raised
 * the process's peak memory by hundreds of MB (bench/ingest). At most KEPT_BUFFERS are kept.
 */
const spare: SharedArrayBuffer[] = [];
const KEPT_BUFFERS = 4;

/** A shared buffer of exactly `bytes` bytes: a spare one, else a new one. Contents are not cleared. */
function sharedBuffer(bytes: number): SharedArrayBuffer {
  const i = spare.findIndex((b) => b.byteLength === bytes);
  return i >= 0 ? spare.splice(i, 1)[0]! : new SharedArrayBuffer(bytes);
}

/** Gives a finished page's buffers (renderInBands' `pixels`, `rgbBuffer`) to the next page. */
export function releasePageBuffers(...buffers: (SharedArrayBuffer | undefined)[]): void {
  for (const b of buffers) if (b && !spare.includes(b)) spare.push(b);
  while (spare.length > KEPT_BUFFERS) spare.shift();
}

/** Ingests one page on the pool: a PDF page in bands across its workers, anything else whole. */
export async function ingestPageInPool(
  pool: Pick<WorkerPool, 'run' | 'size'>,
  source: IngestSource,
  page: PoolPage,
  textSource: IngestedPage['textSource'],
  signal?: AbortSignal,
  timeLimitMs = BAND_TIME_LIMIT_MS,
): Promise<IngestedPage> {
  const { index, dpi, size, pagesLeft, colour = true } = page;
  if (!size || size.width * size.height > source.maxPixels) {
    return pool.run('ingest.page', { ...source, index, dpi, colour }, [], signal);
  }
  const { pixels, rgb, rgbBuffer, raster, text } = await renderInBands(
    pool,
    source,
    { index, dpi, size, pagesLeft, colour },
    signal,
    timeLimitMs,
  );
  const done = await pool.run(
    'ingest.finish',
    { raster, pixels, ...(rgb ? { rgb } : {}), text, textSource },
    [],
    signal,
  );
  // Every band wrote all of its rows (and ingest.finish has encoded them): the buffers can take the
  // next page. (On failure they are left to the collector: a worker ended mid-band may have held them.)
  releasePageBuffers(pixels, rgbBuffer);
  return done;
}

/**
 * The raster step of ingestPageInPool: the page's bands rendered across the pool into one
 * SharedArrayBuffer, with the page's description and text runs (read by the first band). Bands
 * render in colour where the page may have it (pdfium.adapter.ts, `colour`) into a second shared
 * buffer of 3 B/px: `rgb`, returned when they did, with the coloured pixels of all bands counted
 * in `raster.colourPixels` (ingest.finish decides from it whether the page is stored in colour).
 * The colour buffer's memory is only touched where a band writes it.
 */
export async function renderInBands(
  pool: Pick<WorkerPool, 'run' | 'size'>,
  source: IngestSource,
  page: {
    index: number;
    dpi: number;
    size: { width: number; height: number };
    pagesLeft?: number | undefined;
    /** Keep colour where the page has it; default true (false: grey only, as before colour). */
    colour?: boolean | undefined;
  },
  signal?: AbortSignal,
  timeLimitMs = BAND_TIME_LIMIT_MS,
) {
  const { index, dpi, size, pagesLeft, colour = true } = page;
  const limit = {
    ms: timeLimitMs,
    error: () =>
      new ApiError('processing_timeout', timeoutDetail(`Rendering page ${index + 1}`, timeLimitMs)),
  };
  // Every band writes all of its rows, so spare buffers need no clearing; the colour buffer's rows are
  // written only when the page renders in colour, and only then is it handed on.
  const pixels = sharedBuffer(size.width * size.height);
  const rgb = colour ? sharedBuffer(size.width * size.height * 3) : undefined;
  const bands = await Promise.all(
    bandRows(size.height, bandCount(pool.size, size.height, pagesLeft)).map((b, k) =>
      pool.run(
        'ingest.band',
        {
          ...source,
          index,
          dpi,
          top: b.top,
          rows: b.rows,
          pixels,
          ...(rgb ? { rgb } : {}),
          withText: k === 0,
        },
        [],
        signal,
        { limit },
      ),
    ),
  );
  const { raster, text } = bands[0]!;
  // Every band of a page makes the same colour choice (it depends on the page's objects only).
  if (!rgb || raster.colourPixels === undefined)
    return { pixels, rgb: undefined, rgbBuffer: rgb, raster, text };
  const colourPixels = bands.reduce((n, b) => n + (b.raster.colourPixels ?? 0), 0);
  return { pixels, rgb, rgbBuffer: rgb, raster: { ...raster, colourPixels }, text };
}
