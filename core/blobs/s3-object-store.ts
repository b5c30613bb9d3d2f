import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { once } from 'node:events';
import { PassThrough, Readable } from 'node:stream';
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type HeadObjectCommandOutput,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { LocalFileCache } from './local-cache';
import { KeyLock } from './key-lock';
import { PutChecker, iterate, toBuffer } from './put-checks';
import {
  type ListEntry,
  type ListOptions,
  type ListPage,
  type ObjectInfo,
  type ObjectStore,
  ObjectNotFoundError,
  ObjectStoreUnavailableError,
  type PutOptions,
  type PutResult,
  type StoredObject,
  type SweepReport,
  type TokenPosition,
  assertValidKey,
  assertValidPrefix,
  keyProblem,
  listPage,
} from './object-store';

// The object store on an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, R2, Garage; s3rver in
// tests), for team mode. Same contract as LocalObjectStore (object-store.ts); how each rule holds:
//
// - Keys: `<prefix><key>` in the bucket. Temp uploads live under `<prefix>.tmp/`, a name no
//   valid key can have (segments cannot start with a dot), and listings skip anything that is not
//   a valid key.
// - SHA-256 and ETag: S3's own ETag is an MD5 (or a hash of part hashes), so the SHA-256 computed
//   while the bytes stream in is stored as object metadata (`x-amz-meta-sha256`) and `stat`/`get`
//   report `"<sha256>"` as the ETag, exactly like the local store.
// - Atomic replacement: a body up to SINGLE_PUT_BYTES is buffered, checked and hashed, then sent
//   with one PutObject carrying its metadata; S3 replaces an object atomically. A larger body
//   streams (lib-storage multipart, bounded memory) to a temp key while it is hashed; once complete
//   and checked, one CopyObject writes it under its key with the metadata (atomic again) and the
//   temp object is deleted. A failure before that leaves the previous version: an unfinished
//   multipart upload is aborted, a finished temp object deleted, and `sweepTemp` removes what a
//   crash leaves under `.tmp/`.
// - Sizes: the byte count is stored beside the sha256 (`x-amz-meta-size`); a HeadObject whose
//   size disagrees with it (or 0 bytes under a non-empty sha256, for objects written before the
//   size was) is a retryable ObjectStoreUnavailableError, never a short object (head()).
// - Reads: `get` is one HeadObject; `stream(range)` a ranged GetObject made conditional on the
//   version seen (If-Match), so a replaced object errors instead of mixing versions.
// - Listing: ListObjectsV2 lists forward only. A forward page starts after its token's key
//   (StartAfter); a backward page lists forward from the prefix's start up to its token and keeps
//   the last `limit` keys, so its cost grows with the position (one request per 1,000 keys before
//   it). Listings carry no metadata, so ListEntry.etag is S3's ETag there (object-store.ts).
// - localPath: pixel work needs files; LocalFileCache keeps downloaded objects by SHA-256 under a
//   byte bound (LRU, recently handed-out paths pinned).
// - Failures: an unreachable, timing-out, throttling or 5xx endpoint makes every operation reject
//   with ObjectStoreUnavailableError (503 `unavailable` at the HTTP layer, retryable); the SDK
//   retries first (maxAttempts), and connection/socket timeouts bound each attempt, so nothing hangs.

/** Bodies up to this size go up in one PutObject; larger ones stream as a multipart upload. */
export const SINGLE_PUT_BYTES = 8 * 1024 * 1024;
/** Multipart part size (S3's minimum is 5 MiB). */
const PART_BYTES = 8 * 1024 * 1024;
const TEMP_SEGMENT = '.tmp/';
/** Temp objects older than this are leftovers of a crash (an upload in flight is younger). */
const TEMP_MAX_AGE_MS = 60 * 60_000;
const SHA_META = 'sha256';
/** The byte count written beside the sha256 (objects put before it was added have none). */
const SIZE_META = 'size';
const SHA_RE = /^[0-9a-f]{64}$/;
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

export interface S3ObjectStoreOptions {
  bucket: string;
  /** Key prefix inside the bucket ('' or ending with '/'). */
  prefix?: string;
  /** A ready client (tests, or a caller with its own credentials); else built from the fields below. */
  client?: S3Client;
  /** e.g. http://127.0.0.1:9000 for MinIO; AWS when absent. */
  endpoint?: string;
  region?: string;
  /** Path-style URLs (bucket in the path): default true with a custom endpoint. */
  forcePathStyle?: boolean;
  /** Static credentials; default: the SDK's chain (AWS_ACCESS_KEY_ID, AWS_PROFILE, …). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Folder of the localPath cache. */
  cacheDir: string;
  /** Bound of the localPath cache in bytes. Default 2 GiB. */
  cacheMaxBytes?: number;
  /** Cache entries handed out within this many ms are never evicted (LocalFileCache). */
  cachePinMs?: number;
  /** Milliseconds to open a connection before an attempt fails. Default 5,000. */
  connectionTimeoutMs?: number;
  /** Milliseconds a socket may stay idle mid-request before an attempt fails. Default 30,000. */
  socketTimeoutMs?: number;
  /** SDK attempts per operation (first try included). Default 3. */
  maxAttempts?: number;
  /** Clock for sweepTemp's age cut-off (tests). */
  now?: () => number;
}

export function s3ClientConfig(opts: S3ObjectStoreOptions): S3ClientConfig {
  return {
    region: opts.region ?? process.env.AWS_REGION ?? 'us-east-1',
    ...(opts.endpoint ? { endpoint: opts.endpoint } : {}),
    forcePathStyle: opts.forcePathStyle ?? opts.endpoint !== undefined,
    ...(opts.credentials ? { credentials: opts.credentials } : {}),
    maxAttempts: opts.maxAttempts ?? 3,
    // Many S3-compatible servers reject the SDK's default CRC32 trailers (aws-chunked bodies);
    // checksums only where the API requires one (DeleteObjects). The SHA-256 is checked by us.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: opts.connectionTimeoutMs ?? 5_000,
      socketTimeout: opts.socketTimeoutMs ?? 30_000,
    },
  };
}

export class S3ObjectStore implements ObjectStore {
  readonly bucket: string;
  readonly prefix: string;
  readonly client: S3Client;
  readonly cache: LocalFileCache;
  private readonly ownsClient: boolean;
  private readonly where: string;
  private readonly now: () => number;
  private readonly keyLock = new KeyLock();

  constructor(opts: S3ObjectStoreOptions) {
    if (typeof opts.bucket !== 'string' || !/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(opts.bucket))
      throw new TypeError(
        `Expected an S3 bucket name (3-63 lowercase letters, digits, dots, hyphens) but received '${String(opts.bucket)}'.`,
      );
    const prefix = opts.prefix ?? '';
    if (prefix !== '' && (!prefix.endsWith('/') || keyProblem(prefix.slice(0, -1)) !== null))
      throw new TypeError(
        `Expected a key prefix such as 'blueline/' (valid key segments, ending with '/') but received '${prefix}'.`,
      );
    this.bucket = opts.bucket;
    this.prefix = prefix;
    this.ownsClient = opts.client === undefined;
    this.client = opts.client ?? new S3Client(s3ClientConfig(opts));
    this.cache = new LocalFileCache({
      dir: opts.cacheDir,
      maxBytes: opts.cacheMaxBytes ?? 2 * 1024 ** 3,
      ...(opts.cachePinMs !== undefined ? { pinMs: opts.cachePinMs } : {}),
    });
    this.now = opts.now ?? Date.now;
    this.where = `s3://${opts.bucket}/${prefix}${opts.endpoint ? ` at ${opts.endpoint}` : ''}`;
  }

  /** Checks that the bucket answers (at startup): ObjectStoreUnavailableError when it does not. */
  async checkReachable(): Promise<void> {
    try {
      await this.call('HeadBucket', () =>
        this.client.send(new HeadBucketCommand({ Bucket: this.bucket })),
      );
    } catch (err) {
      if (isNotFound(err))
        throw new ObjectStoreUnavailableError(
          `The bucket of ${this.where} does not exist; create it or fix --storage.`,
          false,
          { cause: err },
        );
      throw err;
    }
  }

  close(): void {
    if (this.ownsClient) this.client.destroy();
  }

  // --- put ------------------------------------------------------------------------------------

  async put(key: string, source: Buffer | Readable, opts: PutOptions = {}): Promise<PutResult> {
    assertValidKey(key);
    const checker = new PutChecker(opts);
    const buffered: Buffer[] = [];
    let bufferedBytes = 0;
    let multipart: {
      upload: Upload;
      body: PassThrough;
      done: Promise<unknown>;
      tmp: string;
    } | null = null;
    try {
      for await (const raw of iterate(source)) {
        const chunk = toBuffer(raw);
        if (chunk.length === 0) continue;
        checker.update(chunk);
        if (multipart === null) {
          buffered.push(chunk);
          bufferedBytes += chunk.length;
          if (bufferedBytes > SINGLE_PUT_BYTES) {
            multipart = this.startMultipart(opts.contentType);
            for (const b of buffered.splice(0)) await writeTo(multipart, b);
          }
        } else {
          await writeTo(multipart, chunk);
        }
      }
      const sha256 = checker.finish();
      const size = checker.size;
      const meta = { [SHA_META]: sha256, [SIZE_META]: String(size) };
      const contentType = opts.contentType ? { ContentType: opts.contentType } : {};
      if (multipart === null) {
        const body = Buffer.concat(buffered, bufferedBytes);
        await this.withLock(key, () =>
          this.call('PutObject', () =>
            this.client.send(
              new PutObjectCommand({
                Bucket: this.bucket,
                Key: this.prefix + key,
                Body: body,
                ContentLength: size,
                Metadata: meta,
                ...contentType,
              }),
            ),
          ),
        );
      } else {
        multipart.body.end();
        await this.call('Upload', () => multipart!.done);
        const tmp = multipart.tmp;
        multipart = null; // complete: from here on a failure deletes the temp object
        try {
          await this.withLock(key, () =>
            this.call('CopyObject', () =>
              this.client.send(
                new CopyObjectCommand({
                  Bucket: this.bucket,
                  Key: this.prefix + key,
                  CopySource: `${this.bucket}/${encodeURIComponent(tmp).replace(/%2F/g, '/')}`,
                  MetadataDirective: 'REPLACE',
                  Metadata: meta,
                  ...contentType,
                }),
              ),
            ),
          );
        } finally {
          await this.client
            .send(new DeleteObjectCommand({ Bucket: this.bucket, Key: tmp }))
            .catch(() => {}); // sweepTemp takes it otherwise
        }
      }
      return { key, size, sha256, etag: etagOf(sha256) };
    } finally {
      if (multipart !== null) {
        const m = multipart;
        m.body.destroy();
        await m.upload.abort().catch(() => {});
        await m.done.catch(() => {});
      }
    }
  }

  private startMultipart(contentType: string | undefined) {
    const tmp = `${this.prefix}${TEMP_SEGMENT}${Date.now()}-${randomBytes(8).toString('hex')}`;
    const body = new PassThrough({ highWaterMark: PART_BYTES });
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: tmp,
        Body: body,
        ...(contentType ? { ContentType: contentType } : {}),
      },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    const done = upload.done();
    done.catch(() => {}); // observed by writeTo / the caller
    return { upload, body, done, tmp };
  }

  async putFile(key: string, filePath: string, opts: PutOptions = {}): Promise<PutResult> {
    const stream = createReadStream(filePath);
    try {
      return await this.put(key, stream, opts);
    } finally {
      stream.destroy();
    }
  }

  // --- read -----------------------------------------------------------------------------------

  /**
   * HeadObject of `key`: null when absent. The size S3 reports must be the one the object was
   * written with (its `size` metadata, or 0 bytes only for the empty sha256): a store that answers
   * with other bytes than its metadata (one without read-after-write consistency, or the s3rver
   * of the tests before its PUT fix) gets a retryable ObjectStoreUnavailableError, never a wrong
   * size — a GET would otherwise serve a short body under the object's real ETag.
   */
  private async head(
    key: string,
    { consistent = true }: { consistent?: boolean } = {},
  ): Promise<(ObjectInfo & { s3etag: string }) | null> {
    let out: HeadObjectCommandOutput;
    try {
      out = await this.call('HeadObject', () =>
        this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })),
      );
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    const sha256 = out.Metadata?.[SHA_META];
    if (sha256 === undefined || !SHA_RE.test(sha256))
      throw new Error(
        `Object '${key}' in ${this.where} has no sha256 metadata: it was not written by Blueline.`,
      );
    const size = Number(out.ContentLength ?? 0);
    const written = out.Metadata?.[SIZE_META];
    if (
      consistent &&
      (written !== undefined ? written !== String(size) : size === 0 && sha256 !== EMPTY_SHA256)
    )
      throw new ObjectStoreUnavailableError(
        `${this.where} answered HeadObject of '${key}' with ${size} bytes, but the object was written with ${written ?? 'more than 0'} bytes (sha256 ${sha256}): its bytes and metadata disagree; retry shortly.`,
        true,
      );
    return {
      key,
      size,
      sha256,
      etag: etagOf(sha256),
      contentType: out.ContentType,
      mtime: out.LastModified ?? new Date(0),
      s3etag: out.ETag ?? '',
    };
  }

  async stat(key: string): Promise<ObjectInfo | null> {
    assertValidKey(key);
    const h = await this.head(key);
    if (h === null) return null;
    const { s3etag: _, ...info } = h;
    return info;
  }

  async get(key: string): Promise<StoredObject | null> {
    assertValidKey(key);
    const h = await this.head(key);
    if (h === null) return null;
    const { s3etag, ...info } = h;
    return {
      ...info,
      stream: (range) => {
        if (
          range !== undefined &&
          (!Number.isInteger(range.start) ||
            !Number.isInteger(range.end) ||
            range.start < 0 ||
            range.end < range.start)
        )
          throw new RangeError(
            `Expected 0 <= start <= end for a byte range but received ${range.start}-${range.end}.`,
          );
        if (info.size === 0 || (range !== undefined && range.start >= info.size))
          return Readable.from([]);
        const end = range === undefined ? undefined : Math.min(range.end, info.size - 1);
        return this.download(key, s3etag, range === undefined ? undefined : [range.start, end!]);
      },
    };
  }

  /** A lazy stream of the version `s3etag` of `key` (or of a byte range of it). */
  private download(key: string, s3etag: string, range?: [number, number]): Readable {
    const out = new PassThrough({ highWaterMark: 256 * 1024 });
    void (async () => {
      try {
        const r = await this.call('GetObject', () =>
          this.client.send(
            new GetObjectCommand({
              Bucket: this.bucket,
              Key: this.prefix + key,
              ...(s3etag ? { IfMatch: s3etag } : {}),
              ...(range ? { Range: `bytes=${range[0]}-${range[1]}` } : {}),
            }),
          ),
        );
        const body = r.Body as Readable | undefined;
        if (!body) throw new Error(`GetObject of '${key}' returned no body.`);
        // Servers that ignore If-Match (s3rver) still name the version they send.
        if (s3etag && r.ETag && r.ETag !== s3etag) {
          body.destroy();
          throw Object.assign(new Error('replaced'), { name: 'PreconditionFailed' });
        }
        if (out.destroyed) {
          body.destroy(); // the reader gave up while the request was on its way
          return;
        }
        body.on('error', (err) => out.destroy(this.unavailable('GetObject', err)));
        out.on('close', () => body.destroy());
        body.pipe(out);
      } catch (err) {
        if (isNotFound(err) || isPreconditionFailed(err)) {
          const gone = new Error(
            `Object '${key}' was replaced or deleted after it was opened.`,
          ) as Error & { code: string };
          gone.code = 'ENOENT';
          out.destroy(gone);
        } else out.destroy(err as Error);
      }
    })();
    return out;
  }

  async localPath(key: string): Promise<string> {
    assertValidKey(key);
    const h = await this.head(key);
    if (h === null) throw new ObjectNotFoundError(key);
    return this.cache.path(h.sha256, async () => {
      const s = this.download(key, h.s3etag);
      return s;
    });
  }

  // --- delete ---------------------------------------------------------------------------------

  async delete(key: string): Promise<boolean> {
    assertValidKey(key);
    // S3 deletes answer 204 whether or not the key existed: ask first to report which it was.
    // Any object there counts, even one whose size and metadata disagree (head's check).
    const there = await this.head(key, { consistent: false }).catch((err: unknown) =>
      rethrowUnlessForeign(err),
    );
    if (there === null) return false;
    await this.call('DeleteObject', () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key })),
    );
    return true;
  }

  async deletePrefix(prefix: string): Promise<number> {
    assertValidPrefix(prefix);
    if (prefix === '')
      throw new RangeError('Refusing to delete every object: pass a non-empty prefix.');
    let count = 0;
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const keys = batch;
      batch = [];
      const r = await this.call('DeleteObjects', () =>
        this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.bucket,
            Delete: { Objects: keys.map((k) => ({ Key: this.prefix + k })), Quiet: true },
          }),
        ),
      );
      const failed = r.Errors ?? [];
      if (failed.length > 0)
        throw new ObjectStoreUnavailableError(
          `${this.where} refused to delete ${failed.length} of ${keys.length} objects (first: ${failed[0]!.Key} ${failed[0]!.Code ?? ''} ${failed[0]!.Message ?? ''}).`,
          true,
        );
      count += keys.length;
    };
    for await (const e of this.scan(prefix, null)) {
      batch.push(e.key);
      if (batch.length === 1000) await flush();
    }
    await flush();
    return count;
  }

  // --- list -----------------------------------------------------------------------------------

  /**
   * Valid keys under `prefix` in ascending order, strictly after `after` (or also equal to it
   * when inclusive). One ListObjectsV2 request per `pageSize` keys.
   */
  private async *scan(
    prefix: string,
    after: TokenPosition | null,
    pageSize = 1000,
  ): AsyncGenerator<ListEntry> {
    let startAfter: string | undefined;
    if (after !== null)
      startAfter = this.prefix + (after.inclusive ? predecessor(after.key) : after.key);
    else if (prefix === '') startAfter = this.prefix + TEMP_SEGMENT + '\x7f'; // past the temp objects
    let token: string | undefined;
    for (;;) {
      const r = await this.call('ListObjectsV2', () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + prefix,
            MaxKeys: pageSize,
            ...(token
              ? { ContinuationToken: token }
              : startAfter
                ? { StartAfter: startAfter }
                : {}),
          }),
        ),
      );
      for (const o of r.Contents ?? []) {
        const key = (o.Key ?? '').slice(this.prefix.length);
        if (!o.Key?.startsWith(this.prefix) || keyProblem(key) !== null) continue;
        yield { key, size: Number(o.Size ?? 0), etag: o.ETag ?? '' };
      }
      if (!r.IsTruncated || !r.NextContinuationToken) return;
      token = r.NextContinuationToken;
    }
  }

  /** Keys under `prefix` strictly before `before` (or up to and including it), the last `n`. */
  private async lastBefore(
    prefix: string,
    before: TokenPosition | null,
    n: number,
  ): Promise<ListEntry[]> {
    const ring: ListEntry[] = [];
    for await (const e of this.scan(prefix, null)) {
      if (before !== null && (e.key > before.key || (e.key === before.key && !before.inclusive)))
        break;
      ring.push(e);
      if (ring.length > n) ring.shift();
    }
    return ring;
  }

  private async first<T>(it: AsyncGenerator<T>): Promise<T | undefined> {
    for await (const v of it) {
      await it.return(undefined);
      return v;
    }
    return undefined;
  }

  list(prefix: string, opts: ListOptions): Promise<ListPage> {
    return listPage(
      prefix,
      opts,
      async (pos, direction, n) => {
        if (direction === 'backward') return (await this.lastBefore(prefix, pos, n)).reverse();
        const found: ListEntry[] = [];
        for await (const e of this.scan(prefix, pos, Math.min(1000, n))) {
          found.push(e);
          if (found.length >= n) break;
        }
        return found;
      },
      async (bound, direction) => {
        if (direction === 'forward')
          return (await this.first(this.scan(prefix, bound, 1))) !== undefined;
        // Keys are sorted: some key lies before the bound iff the prefix's first key does.
        const e = await this.first(this.scan(prefix, null, 1));
        return e !== undefined && (e.key < bound.key || (bound.inclusive && e.key === bound.key));
      },
    );
  }

  // --- reconciliation -------------------------------------------------------------------------

  /**
   * Deletes temp objects older than an hour (a put that crashed between its multipart upload and
   * the copy). Unfinished multipart uploads themselves are invisible to listings: give the bucket
   * a lifecycle rule AbortIncompleteMultipartUpload (README, team mode). Nothing else can be left
   * half-written on S3, so the other counts stay 0.
   */
  async sweepTemp(): Promise<SweepReport> {
    const report: SweepReport = { tempFiles: 0, orphanVersions: 0, brokenKeys: [], trash: 0 };
    const cutoff = this.now() - TEMP_MAX_AGE_MS;
    let token: string | undefined;
    for (;;) {
      const r = await this.call('ListObjectsV2', () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.prefix + TEMP_SEGMENT,
            ...(token ? { ContinuationToken: token } : {}),
          }),
        ),
      );
      for (const o of r.Contents ?? []) {
        if (!o.Key || (o.LastModified?.getTime() ?? 0) > cutoff) continue;
        await this.call('DeleteObject', () =>
          this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: o.Key })),
        );
        report.tempFiles++;
      }
      if (!r.IsTruncated || !r.NextContinuationToken) return report;
      token = r.NextContinuationToken;
    }
  }

  /**
   * Serializes the commits (PutObject / CopyObject) of one key within this process. S3 commits
   * each request whole anyway; servers that write bytes and metadata separately (s3rver) would
   * otherwise mix two racing puts of one process.
   */
  private withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
    return this.keyLock.run(key, fn);
  }

  // --- errors ---------------------------------------------------------------------------------

  /** Runs one S3 call; transport failures, throttling and 5xx become ObjectStoreUnavailableError. */
  private async call<T>(op: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isNotFound(err) || isPreconditionFailed(err)) throw err;
      throw this.unavailable(op, err);
    }
  }

  private unavailable(op: string, err: unknown): Error {
    if (err instanceof ObjectStoreUnavailableError) return err;
    const e = (err ?? {}) as {
      name?: string;
      code?: string;
      message?: string;
      $metadata?: { httpStatusCode?: number };
    };
    const status = e.$metadata?.httpStatusCode;
    const name = e.name ?? 'Error';
    if (name === 'NoSuchBucket')
      return new ObjectStoreUnavailableError(
        `The bucket of ${this.where} does not exist; create it or fix --storage.`,
        false,
        { cause: err },
      );
    if (
      name === 'AccessDenied' ||
      name === 'InvalidAccessKeyId' ||
      name === 'SignatureDoesNotMatch' ||
      status === 401 ||
      status === 403
    )
      return new ObjectStoreUnavailableError(
        `${this.where} refused the credentials (${name === 'Unknown' ? `HTTP ${status}` : name} on ${op}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.`,
        false,
        { cause: err },
      );
    const transport =
      status === undefined ||
      status >= 500 ||
      status === 429 ||
      name === 'SlowDown' ||
      name === 'TimeoutError' ||
      name === 'RequestTimeout';
    if (transport)
      return new ObjectStoreUnavailableError(
        `The object storage ${this.where} did not answer ${op} (${e.code ?? name}${status ? ` ${status}` : ''}: ${String(e.message ?? '').slice(0, 200)}); retry shortly.`,
        true,
        { cause: err },
      );
    return err instanceof Error ? err : new Error(String(err));
  }
}

// --- helpers -------------------------------------------------------------------------------------

const etagOf = (sha256: string): string => `"${sha256}"`;

/** Writes a chunk into a multipart upload's body, waiting for room (or for the upload's failure). */
async function writeTo(m: { body: PassThrough; done: Promise<unknown> }, chunk: Buffer) {
  if (m.body.write(chunk)) return;
  await Promise.race([
    once(m.body, 'drain'),
    m.done.then(() => {
      throw new Error('The multipart upload ended before its body did.');
    }),
  ]);
}

/**
 * The greatest string below `key` that no valid key lies beyond: its last character decremented,
 * then '~' (above every character of the key charset). StartAfter of it lists `key` itself first.
 */
function predecessor(key: string): string {
  const last = key.charCodeAt(key.length - 1);
  return key.slice(0, -1) + String.fromCharCode(last - 1) + '~';
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return (
    (e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404) &&
    e?.name !== 'NoSuchBucket'
  );
}

function isPreconditionFailed(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } } | null;
  return e?.name === 'PreconditionFailed' || e?.$metadata?.httpStatusCode === 412;
}

/** `delete` of an object another tool wrote (no sha256 metadata) still deletes it. */
function rethrowUnlessForeign(err: unknown): { foreign: true } {
  if (err instanceof Error && /has no sha256 metadata/.test(err.message)) return { foreign: true };
  throw err;
}
