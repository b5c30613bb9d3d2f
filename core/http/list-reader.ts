// The list reader: one worker thread that builds list pages (keyset query, expansion loads, JSON
// text, URL signatures) from its own read-only SQLite handle, so the HTTP thread only parses,
// authenticates and writes. An expanded overlay page costs ~1–2 ms of CPU to build; with 10
// requests queued on one event loop, every request waited for every other's page. Now pages are
// built beside the event loop, and every other request (writes, single reads, SSE, uploads) no
// longer queues behind them either.
//
// - Same bytes: the thread runs the same `runListJson` over an equal CursorCodec and UrlSigner
//   (same secrets, same expiry step) and returns the same text.
// - Same data: SQLite in WAL mode; the writer's transactions are synchronous and committed before
//   the HTTP thread answers, so a list requested after a write's response sees that write.
// - Never worse than inline: until the thread reports ready (it starts on the first list request),
//   after it crashed, and once closed, `listBody` builds the page on the HTTP thread — and a page
//   the thread was building when it died is rebuilt there, so no request fails because of it.
// - Errors cross as data: an ApiError becomes the same ApiError (code, detail, errors, extra,
//   headers) on the HTTP thread; anything else becomes an Error (a logged 500, as inline).
//
// Where the thread's code comes from, as for the job worker pool (core/jobs/worker-pool.ts): from
// TypeScript source it is ./list-reader.worker.ts, started through the tsx trampoline; a bundled
// build passes its built list-reader.worker.js as `workerUrl`, or gets no reader (inline pages).
import { Worker } from 'node:worker_threads';
import type { FastifyRequest } from 'fastify';
import { ApiError, isProblemCode, type FieldError } from '../domain/errors';
import { orgOf, requestOrigin, serializeContext, type HttpDeps } from './deps';
import { runListJson, type ListEndpoint } from './list-engine';

export interface ListReaderOptions {
  /** The service's SQLite file (already created, migrated and in WAL mode by the writer). */
  dbFile: string;
  cursorSecret: Buffer;
  urlSecret: Buffer;
  /** The built worker module (.js); default the .ts source beside this file when running from source. */
  workerUrl?: URL;
  /** Most MiB of V8 old generation the thread may use (default 256; a page is well under 1 MiB). */
  maxHeapMb?: number;
}

/** What the thread needs of a request besides the endpoint (all structured-clonable). */
export interface ListJob {
  organizationId: string;
  query: Record<string, unknown>;
  /** `https://host:port` the request came to: signed URLs are absolute on it. */
  origin: string;
}

export interface ListReaderStats {
  /** Pages built by the thread. */
  served: number;
  /** Times the thread died (crash, out of memory) while open. */
  crashed: number;
}

export interface ListReader {
  /**
   * The page's JSON text, built by the thread; undefined when the thread is not ready
   * (the caller builds the page itself). Rejects with ListReaderUnavailable if the thread dies
   * before answering, and with the page's own error (e.g. ApiError invalid_cursor) otherwise.
   */
  run(endpoint: ListEndpoint, job: ListJob): Promise<string> | undefined;
  readonly stats: ListReaderStats;
  /** Whether the thread is up and takes pages now (`run` then returns a promise). */
  readonly ready: boolean;
  close(): Promise<void>;
}

/** The thread died or was closed before it answered: build the page on the calling thread. */
export class ListReaderUnavailable extends Error {
  constructor(why: string) {
    super(`The list reader thread is unavailable: ${why}.`);
    this.name = 'ListReaderUnavailable';
  }
}

/** Messages, HTTP thread → list thread. */
export interface ListRequestMessage extends ListJob {
  id: number;
  endpoint: ListEndpoint;
}

export interface SerializedListError {
  api?: {
    code: string;
    detail: string;
    errors?: FieldError[];
    extra?: Record<string, unknown>;
    headers?: Record<string, string>;
  };
  name: string;
  message: string;
}

/** Messages, list thread → HTTP thread. */
export type ListResponseMessage =
  | { type: 'ready' }
  | { type: 'page'; id: number; body: string }
  | { type: 'error'; id: number; error: SerializedListError };

export interface ListReaderWorkerData {
  entry: string;
  dbFile: string;
  cursorSecret: Uint8Array;
  urlSecret: Uint8Array;
}

const BOOTSTRAP_URL = new URL('../jobs/worker-bootstrap.mjs', import.meta.url);
const SOURCE_URL = new URL('./list-reader.worker.ts', import.meta.url);
const FROM_SOURCE = import.meta.url.endsWith('.ts');
/** After a crash, the thread is started again on demand at most this often. */
const RESTART_AFTER_MS = 1000;

/**
 * A reader, or undefined when there is no worker code to run (a bundled build that passes no
 * `workerUrl`): lists are then built on the HTTP thread, as before the reader existed.
 */
export function createListReader(options: ListReaderOptions): ListReader | undefined {
  const workerUrl = options.workerUrl ?? (FROM_SOURCE ? SOURCE_URL : undefined);
  if (!workerUrl) return undefined;
  const maxHeapMb = options.maxHeapMb ?? 256;
  if (!Number.isInteger(maxHeapMb) || maxHeapMb < 16)
    throw new RangeError(
      `Expected an integer of at least 16 for maxHeapMb but received ${String(maxHeapMb)}.`,
    );
  const fromSource = workerUrl.pathname.endsWith('.ts');
  const stats: ListReaderStats = { served: 0, crashed: 0 };
  const pending = new Map<number, { resolve(text: string): void; reject(e: Error): void }>();
  let worker: Worker | undefined;
  let ready = false;
  let closed = false;
  let diedAt = -Infinity;
  let nextId = 1;

  function fail(why: string): void {
    ready = false;
    worker = undefined;
    const waiting = [...pending.values()];
    pending.clear();
    for (const p of waiting) p.reject(new ListReaderUnavailable(why));
  }

  function spawn(): void {
    const workerData: ListReaderWorkerData = {
      entry: workerUrl!.href,
      dbFile: options.dbFile,
      cursorSecret: new Uint8Array(options.cursorSecret),
      urlSecret: new Uint8Array(options.urlSecret),
    };
    // execArgv: [] so flags of the parent (e.g. --inspect with a fixed port) are not inherited.
    const w = new Worker(fromSource ? BOOTSTRAP_URL : workerUrl!, {
      workerData,
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: maxHeapMb },
    });
    // Never keeps the process alive by itself: the HTTP server does while the service runs.
    w.unref();
    worker = w;
    w.on('message', (msg: ListResponseMessage) => {
      if (msg.type === 'ready') {
        if (worker === w && !closed) ready = true;
        return;
      }
      const p = pending.get(msg.id);
      if (!p) return;
      pending.delete(msg.id);
      if (msg.type === 'page') {
        stats.served++;
        p.resolve(msg.body);
      } else p.reject(deserializeError(msg.error));
    });
    const died = (why: string) => {
      if (worker !== w) return;
      if (!closed) stats.crashed++;
      diedAt = performance.now();
      fail(why);
    };
    w.on('error', (err) => died(err.message));
    w.on('exit', (code) => died(`exited with code ${code}`));
  }

  return {
    stats,
    get ready() {
      return ready;
    },
    run(endpoint, job) {
      if (closed) return undefined;
      if (!worker) {
        if (performance.now() - diedAt >= RESTART_AFTER_MS) spawn();
        return undefined;
      }
      if (!ready) return undefined;
      const id = nextId++;
      const msg: ListRequestMessage = { id, endpoint, ...job };
      const w = worker;
      return new Promise<string>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.postMessage(msg);
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      const w = worker;
      fail('the service is stopping');
      await w?.terminate();
    },
  };
}

export function serializeListError(err: unknown): SerializedListError {
  if (err instanceof ApiError)
    return {
      api: {
        code: err.code,
        detail: err.detail,
        ...(err.errors ? { errors: err.errors } : {}),
        ...(err.extra ? { extra: err.extra } : {}),
        ...(err.headers ? { headers: err.headers } : {}),
      },
      name: err.name,
      message: err.message,
    };
  if (err instanceof Error) return { name: err.name, message: err.message };
  return { name: 'Error', message: String(err) };
}

function deserializeError(e: SerializedListError): Error {
  if (e.api && isProblemCode(e.api.code)) {
    return new ApiError(e.api.code, e.api.detail, {
      ...(e.api.errors ? { errors: e.api.errors } : {}),
      ...(e.api.extra ? { extra: e.api.extra } : {}),
      ...(e.api.headers ? { headers: e.api.headers } : {}),
    });
  }
  const err = new Error(`list reader thread: ${e.message}`);
  err.name = e.name;
  return err;
}

/**
 * The body of a list response: built by the list reader thread when the service has one and it
 * is ready, else on this thread. Both give the same bytes; the route sends either as JSON.
 * `query` defaults to the request's (routes that add a fixed filter pass their own).
 */
export async function listBody(
  deps: HttpDeps,
  endpoint: ListEndpoint,
  request: FastifyRequest,
  query: Record<string, unknown> = request.query as Record<string, unknown>,
): Promise<string> {
  const organizationId = orgOf(request);
  const inline = () =>
    runListJson(endpoint, {
      organizationId,
      query,
      db: deps.db,
      cursors: deps.cursors,
      serialize: serializeContext(deps, request),
    });
  const job = deps.lists?.run(endpoint, { organizationId, query, origin: requestOrigin(request) });
  if (!job) return inline();
  try {
    return await job;
  } catch (err) {
    if (err instanceof ListReaderUnavailable) return inline();
    throw err;
  }
}
