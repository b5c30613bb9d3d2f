import type { Readable } from 'node:stream';
import {
  ObjectStoreUnavailableError,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  type StoredObject,
  type SweepReport,
} from './object-store';

// The object store as job handlers see it: an object storage outage (an S3 endpoint restarting,
// unreachable for seconds) makes a job wait, not fail. Each operation that rejects with a
// *retryable* ObjectStoreUnavailableError (transport error, timeout, throttling, 5xx — the S3 SDK
// has already retried it `maxAttempts` times) is tried again after a pause growing from
// `firstPauseMs` to `maxPauseMs`, until it succeeds or `waitMs` has passed since its first try;
// then the last error stands (the job fails with 503 `unavailable`, saying how long the storage
// was away). Not retried: errors that are not retryable (a missing bucket, refused credentials)
// and everything that is not about the storage (a missing key, a bad range, a 413).
//
// The HTTP routes keep the plain store: a client asking for bytes during an outage gets 503 with
// `Retry-After` at once instead of a request hanging for minutes.
//
// What makes a retry safe: a put's body is a Buffer (every job handler's) or a file path
// (`putFile` opens it again), and S3 replaces an object atomically, so a put tried twice stores it
// once. A put from a stream cannot be replayed, so it is not retried; nor is a `get`'s lazy byte
// stream once opened (its HeadObject is). Reads of job inputs go through `localPath`, which is.

export interface OutageWaitOptions {
  /** How long one operation keeps trying while the storage is unavailable. Default 120,000 ms. */
  waitMs?: number;
  /** Pause before the second try; doubles up to maxPauseMs. Default 250 ms. */
  firstPauseMs?: number;
  /** Default 5,000 ms. */
  maxPauseMs?: number;
  /** Told once per operation that starts waiting, and when it gets through. */
  log?: { warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
  /** Clock and sleep (tests). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

export const DEFAULT_OUTAGE_WAIT_MS = 120_000;

const isRetryable = (err: unknown): err is ObjectStoreUnavailableError =>
  err instanceof ObjectStoreUnavailableError && err.retryable;

export class OutageWaitingObjectStore implements ObjectStore {
  private readonly waitMs: number;
  private readonly firstPauseMs: number;
  private readonly maxPauseMs: number;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(
    readonly inner: ObjectStore,
    private readonly opts: OutageWaitOptions = {},
  ) {
    this.waitMs = opts.waitMs ?? DEFAULT_OUTAGE_WAIT_MS;
    this.firstPauseMs = opts.firstPauseMs ?? 250;
    this.maxPauseMs = opts.maxPauseMs ?? 5_000;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
  }

  private async retrying<T>(op: string, key: string, fn: () => Promise<T>): Promise<T> {
    const start = this.now();
    let pause = this.firstPauseMs;
    let tries = 0;
    for (;;) {
      try {
        const out = await fn();
        if (tries > 0)
          this.opts.log?.info(
            { op, key, tries: tries + 1, waited_ms: this.now() - start },
            'Object storage answered again; the job carries on',
          );
        return out;
      } catch (err) {
        if (!isRetryable(err)) throw err;
        const waited = this.now() - start;
        if (waited >= this.waitMs) {
          throw new ObjectStoreUnavailableError(
            `${err.detail} It stayed unavailable for ${Math.round(waited / 1000)} s of tries (${op} of '${key}').`,
            true,
            { cause: err },
          );
        }
        if (tries === 0)
          this.opts.log?.warn(
            { op, key, err: err.detail },
            `Object storage unavailable; the job waits for it (up to ${Math.round(this.waitMs / 1000)} s)`,
          );
        tries++;
        await this.sleep(Math.min(pause, Math.max(1, this.waitMs - waited)));
        pause = Math.min(this.maxPauseMs, pause * 2);
      }
    }
  }

  put(key: string, source: Buffer | Readable, opts?: PutOptions): Promise<PutResult> {
    if (!Buffer.isBuffer(source)) return this.inner.put(key, source, opts);
    return this.retrying('put', key, () => this.inner.put(key, source, opts));
  }

  putFile(key: string, filePath: string, opts?: PutOptions): Promise<PutResult> {
    return this.retrying('put', key, () => this.inner.putFile(key, filePath, opts));
  }

  get(key: string): Promise<StoredObject | null> {
    return this.retrying('get', key, () => this.inner.get(key));
  }

  stat(key: string): Promise<ObjectInfo | null> {
    return this.retrying('stat', key, () => this.inner.stat(key));
  }

  delete(key: string): Promise<boolean> {
    return this.retrying('delete', key, () => this.inner.delete(key));
  }

  deletePrefix(prefix: string): Promise<number> {
    return this.retrying('deletePrefix', prefix, () => this.inner.deletePrefix(prefix));
  }

  list(prefix: string, opts: ListOptions): Promise<ListPage> {
    return this.retrying('list', prefix, () => this.inner.list(prefix, opts));
  }

  localPath(key: string): Promise<string> {
    return this.retrying('localPath', key, () => this.inner.localPath(key));
  }

  sweepTemp(): Promise<SweepReport> {
    return this.retrying('sweepTemp', '', () => this.inner.sweepTemp());
  }
}
