// Errors of the page-input layer. Every bad input ends in exactly one InputError whose `code` is stable
// (callers map it to a Problem Details response or a failed `process` job) and whose `detail` is a
// sentence the person who uploaded the file can act on. Details never contain file paths or stack traces.

export type InputErrorCode =
  /** Bytes are not a parsable PDF/PNG/JPEG/TIFF although the magic number said so. */
  | 'corrupt_file'
  /** The file stops before its end (PDF without a final %%EOF, image data ending early). */
  | 'truncated_file'
  /** The PDF needs a password to open. */
  | 'encrypted_pdf'
  /** The document parses but has no pages. */
  | 'no_pages'
  /** More pages than the configured pages-per-drawing limit. */
  | 'too_many_pages'
  /** A page would rasterize to more pixels than the configured per-page limit. */
  | 'page_too_large'
  /** An image declares far more pixels than its compressed data could honestly hold, or more than the limit allows to decode. */
  | 'decompression_bomb'
  /** Not a PDF, PNG, JPEG or TIFF (by magic number). */
  | 'unsupported_type'
  /** Parsing or rendering did not finish within the time budget. */
  | 'processing_timeout';

export class InputError extends Error {
  readonly code: InputErrorCode;
  readonly detail: string;
  /** 0-based page the error concerns, when it concerns one page. */
  readonly pageIndex: number | undefined;

  constructor(
    code: InputErrorCode,
    detail: string,
    opts: { pageIndex?: number; cause?: unknown } = {},
  ) {
    super(`${code}: ${detail}`, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'InputError';
    this.code = code;
    this.detail = detail;
    this.pageIndex = opts.pageIndex;
  }
}

export function isInputError(e: unknown): e is InputError {
  return e instanceof InputError;
}

/** Defaults from contract §9. */
export const DEFAULT_MAX_PAGES = 2000;
export const DEFAULT_MAX_PIXELS = 300_000_000;
/** Upper bound for opening a document (parsing the xref / reading image headers). */
export const DEFAULT_OPEN_TIMEOUT_MS = 30_000;
/** Upper bound for rendering or reading text of one page. */
export const DEFAULT_PAGE_TIMEOUT_MS = 120_000;

export interface InputLimits {
  /** Pages per drawing (contract §9, default 2000). */
  maxPages?: number;
  /** Raster pixels per page (contract §9, default 300 megapixels); larger pages are refused before decoding. */
  maxPixels?: number;
  /** Time budget for opening the document, ms. */
  openTimeoutMs?: number;
  /** Time budget per page render / text read, ms. */
  pageTimeoutMs?: number;
}

export function resolveLimits(l: InputLimits = {}): Required<InputLimits> {
  return {
    maxPages: positiveInt(l.maxPages, DEFAULT_MAX_PAGES, 'maxPages'),
    maxPixels: positiveInt(l.maxPixels, DEFAULT_MAX_PIXELS, 'maxPixels'),
    openTimeoutMs: positiveInt(l.openTimeoutMs, DEFAULT_OPEN_TIMEOUT_MS, 'openTimeoutMs'),
    pageTimeoutMs: positiveInt(l.pageTimeoutMs, DEFAULT_PAGE_TIMEOUT_MS, 'pageTimeoutMs'),
  };
}

function positiveInt(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`Expected a positive integer for ${name} but received ${v}`);
  return v;
}

/** Megapixels with one decimal, for details ("412.5 MP"). */
export function mp(pixels: number): string {
  return `${(pixels / 1e6).toFixed(1)} MP`;
}

/** Inches with up to two decimals, trailing zeros dropped ("17", "8.5", "200"). */
export function inches(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** The highest whole dpi at which a page of widthIn x heightIn inches stays within maxPixels. */
export function maxDpiWithin(widthIn: number, heightIn: number, maxPixels: number): number {
  return Math.max(0, Math.floor(Math.sqrt(maxPixels / (widthIn * heightIn))));
}

/** The standard refusal for a page whose raster would exceed the pixel limit (checked before any decoding). */
export function pageTooLarge(args: {
  pageIndex: number;
  widthIn: number;
  heightIn: number;
  dpi: number;
  widthPx: number;
  heightPx: number;
  maxPixels: number;
}): InputError {
  const { pageIndex, widthIn, heightIn, dpi, widthPx, heightPx, maxPixels } = args;
  const fit = maxDpiWithin(widthIn, heightIn, maxPixels);
  const advice =
    fit >= 1
      ? `Render it at ${fit} dpi or less, raise the per-page pixel limit, or crop/split the page.`
      : `Crop or split the page, or raise the per-page pixel limit.`;
  return new InputError(
    'page_too_large',
    `Page ${pageIndex + 1} is ${inches(widthIn)} x ${inches(heightIn)} in; at ${dpi} dpi that is ` +
      `${widthPx} x ${heightPx} px = ${mp(widthPx * heightPx)}, over the limit of ${mp(maxPixels)} per page. ${advice}`,
    { pageIndex },
  );
}

/** The `processing_timeout` detail: "<what> did not finish within <ms as seconds> s; …". */
export function timeoutDetail(what: string, ms: number): string {
  const seconds = Number((ms / 1000).toPrecision(3));
  return `${what} did not finish within ${seconds} s; the file is probably malformed or far more complex than a drawing sheet. Re-export it (e.g. "Print to PDF") and upload it again.`;
}

/**
 * Race `p` against a timer. On timeout `onTimeout` runs (to destroy the underlying task) and the returned
 * promise rejects with a `processing_timeout` InputError. The timer never keeps the process alive.
 */
export async function withTimeout<T>(
  p: Promise<T>,
  ms: number,
  what: string,
  onTimeout?: () => void,
  pageIndex?: number,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Reject first: cancelling the task may settle `p` synchronously with its own error, which must
      // not win the race.
      queueMicrotask(() => {
        try {
          onTimeout?.();
        } catch {
          /* destroying a stuck task must not mask the timeout */
        }
      });
      reject(
        new InputError(
          'processing_timeout',
          timeoutDetail(what, ms),
          pageIndex === undefined ? {} : { pageIndex },
        ),
      );
    }, ms);
    timer.unref();
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
