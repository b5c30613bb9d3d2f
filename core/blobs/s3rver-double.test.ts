// The S3 test double itself: s3rver as s3rver.test-support.ts starts it must answer a PUT (and an
// UploadPart) only once the bytes are in its object file, as S3 does (read-after-write). s3rver
// 3.7.1 alone answers before its file write lands; under load the conformance suite then saw a
// 4-byte object HEAD as 0 bytes. Here the first write(2) into every object and part file is held
// back 400 ms, so a server that answers early fails these checks on every run.
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore, SINGLE_PUT_BYTES, s3ClientConfig } from './s3-object-store';
import {
  startS3rver,
  TEST_BUCKET,
  TEST_CREDENTIALS,
  type S3rverProcess,
} from './s3rver.test-support';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let s3: S3rverProcess;
let raw: S3Client;
let store: S3ObjectStore;
let scratch: string;

beforeAll(async () => {
  s3 = await startS3rver(TEST_BUCKET, { slowFirstWriteMs: 400 });
  scratch = await mkdtemp(path.join(tmpdir(), 'blueline-s3double-'));
  const opts = {
    bucket: TEST_BUCKET,
    prefix: `d${process.pid}/`,
    endpoint: s3.endpoint,
    credentials: TEST_CREDENTIALS,
    cacheDir: path.join(scratch, 'cache'),
  };
  raw = new S3Client(s3ClientConfig(opts));
  store = new S3ObjectStore(opts);
});
afterAll(async () => {
  store?.close();
  raw?.destroy();
  await s3?.dispose();
  await rm(scratch, { recursive: true, force: true });
});

describe('s3rver as the tests start it', () => {
  it('answers a PutObject only once its bytes are stored: HEAD and GET right after see them all', async () => {
    const Key = `d${process.pid}/raw/one`;
    await raw.send(new PutObjectCommand({ Bucket: TEST_BUCKET, Key, Body: Buffer.from('fine') }));
    expect(
      (await raw.send(new HeadObjectCommand({ Bucket: TEST_BUCKET, Key }))).ContentLength,
    ).toBe(4);
    const got = await raw.send(new GetObjectCommand({ Bucket: TEST_BUCKET, Key }));
    expect(await got.Body!.transformToString()).toBe('fine');
  });

  it("the store's single put and stat: the conformance case that once saw size 0", async () => {
    await store.put('s/ok', Buffer.from('fine'));
    expect((await store.stat('s/ok'))!.size).toBe(4);
  });

  it('answers an UploadPart only once its bytes are stored: the completed object has them all', async () => {
    const Key = `d${process.pid}/raw/multi`;
    const { UploadId } = await raw.send(
      new CreateMultipartUploadCommand({ Bucket: TEST_BUCKET, Key }),
    );
    const part = await raw.send(
      new UploadPartCommand({
        Bucket: TEST_BUCKET,
        Key,
        UploadId,
        PartNumber: 1,
        Body: Buffer.from('fine'),
      }),
    );
    // Completed at once: s3rver concatenates the part files into the object.
    await raw.send(
      new CompleteMultipartUploadCommand({
        Bucket: TEST_BUCKET,
        Key,
        UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag! }] },
      }),
    );
    const got = await raw.send(new GetObjectCommand({ Bucket: TEST_BUCKET, Key }));
    expect(got.ContentLength).toBe(4);
    expect(await got.Body!.transformToString()).toBe('fine');
  });

  it("the store's multipart put, stat and bytes", async () => {
    const big = Buffer.alloc(SINGLE_PUT_BYTES + 1, 7);
    big[SINGLE_PUT_BYTES] = 9;
    expect((await store.put('m/big', big)).size).toBe(big.length);
    expect((await store.stat('m/big'))!.size).toBe(big.length);
    // The bytes, through the cache that checks them against the sha256.
    expect(sha(await readFile(await store.localPath('m/big')))).toBe(sha(big));
  }, 60_000);
});
