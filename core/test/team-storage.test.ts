// Team-mode storage through the whole API: the service with its objects in an S3 bucket
// (S3ObjectStore against s3rver on loopback, started here; the test store as usual). Upload a
// PDF, process it in the worker pool (which reads the PDF and sheet images through the local
// cache), read sheet images and tiles, download the file with Range; then stop the S3 server and
// see the API answer 503 Problem Details for the bytes (never a hang or a 500) while the files list,
// read from the records, still answers, and a job started meanwhile wait for the bucket; and
// recover when it is back (the job completes).
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../blobs/s3-object-store';
import {
  startS3rver,
  TEST_BUCKET,
  TEST_CREDENTIALS,
  type S3rverProcess,
} from '../blobs/s3rver.test-support';
import { FIXTURES, uploadDrawing, waitForJob } from './flows';
import { startTestService, type TestService } from './harness';

const PDF_NAME = '20150129_A-103_roof-plan.pdf';
const PDF = readFileSync(path.join(FIXTURES, PDF_NAME));

let s3: S3rverProcess;
let store: S3ObjectStore;
let t: TestService;
let scratch: string;

beforeAll(async () => {
  s3 = await startS3rver();
  scratch = mkdtempSync(path.join(tmpdir(), 'blueline-team-storage-'));
  store = new S3ObjectStore({
    bucket: TEST_BUCKET,
    prefix: 'team/',
    endpoint: s3.endpoint,
    credentials: TEST_CREDENTIALS,
    cacheDir: path.join(scratch, 'object-cache'),
    cacheMaxBytes: 64 * 1024 * 1024,
    connectionTimeoutMs: 2_000,
    socketTimeoutMs: 10_000,
    maxAttempts: 2,
  });
  await store.checkReachable();
  t = await startTestService({ dataDir: path.join(scratch, 'data'), objects: store, workers: 1 });
});
afterAll(async () => {
  await t?.stop({ keepDir: true });
  store?.close();
  await s3?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

async function bucketKeys(): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const r = await store.client.send(
      new ListObjectsV2Command({
        Bucket: TEST_BUCKET,
        Prefix: 'team/',
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    for (const o of r.Contents ?? []) out.push(o.Key!.slice('team/'.length));
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

describe('the service with its objects on S3', () => {
  let projectId: string;
  let fileUri: string;
  let sheet: { id: string; uri: string; thumbnail_uri: string; width: number; height: number };

  it('uploads and processes a PDF, serving sheets, tiles and ranges from the bucket', async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Team storage' } });
    projectId = project.body.id;
    const drawing = await uploadDrawing(t, projectId, PDF_NAME, 'Roof plan');
    const job = await waitForJob(t, drawing.job_id, 240_000);
    expect(job.status, JSON.stringify(job.error)).toBe('Completed');
    const sheets = await t.request('GET', `/v1/sheets?drawing_id=${drawing.id}`);
    expect(sheets.body.data).toHaveLength(1);
    sheet = sheets.body.data[0];
    expect(sheet.width).toBeGreaterThan(1000);

    // The bytes are in the bucket, none in the data dir.
    const keys = await bucketKeys();
    expect(keys.some((k) => k.startsWith(`projects/`) && k.includes('/files/'))).toBe(true);
    expect(keys.filter((k) => /\/sheets\/[^/]+\/image\.png$/.test(k))).toHaveLength(1);
    expect(keys.filter((k) => k.startsWith('.'))).toEqual([]);
    const localObjects = path.join(t.dataDir, 'objects');
    expect(existsSync(localObjects) ? readdirSync(localObjects, { recursive: true }) : []).toEqual(
      [],
    );
    // Pixel work read the PDF through the bounded local cache.
    expect(readdirSync(path.join(scratch, 'object-cache')).length).toBeGreaterThan(0);

    const img = await t.request('GET', sheet.uri, { key: null });
    expect(img.status).toBe(200);
    expect(img.headers['content-type']).toBe('image/png');
    expect(img.headers.etag).toMatch(/^"[0-9a-f]{64}"$/);
    const thumb = await t.request('GET', sheet.thumbnail_uri, { key: null });
    expect(thumb.status).toBe(200);
    const tile = await t.request('GET', String(sheet.uri).replace('?', '/tiles/0/0/0.webp?'), {
      key: null,
    });
    expect(tile.status).toBe(200);
    expect(tile.headers['content-type']).toBe('image/webp');

    const files = await t.request('GET', `/v1/files?project_id=${projectId}`);
    expect(files.status).toBe(200);
    expect(files.body.data).toHaveLength(1);
    fileUri = files.body.data[0].uri;
    const full = await t.request('GET', fileUri, { key: null });
    expect(full.status).toBe(200);
    expect(full.headers['content-length']).toBe(String(PDF.length));
    const range = await t.request('GET', fileUri, {
      key: null,
      headers: { range: 'bytes=100-199' },
    });
    expect(range.status).toBe(206);
    expect(range.headers['content-range']).toBe(`bytes 100-199/${PDF.length}`);
    expect(range.headers['content-length']).toBe('100');
    const notModified = await t.request('GET', fileUri, {
      key: null,
      headers: { 'if-none-match': String(full.headers.etag) },
    });
    expect(notModified.status).toBe(304);
  }, 300_000);

  it('answers 503 Problem Details while the S3 server is down, and serves again once it is back', async () => {
    expect(fileUri).toBeDefined();
    // A file whose bytes are in the bucket, to process while the bucket is away.
    const stored = await t.request('POST', '/v1/files', {
      body: {
        project_id: projectId,
        filename: 'before-outage.pdf',
        content_type: 'application/pdf',
        size_bytes: PDF.length,
      },
    });
    const storedPut = await t.request('PUT', stored.body.upload_url, {
      rawBody: PDF,
      headers: { 'content-type': 'application/pdf' },
      key: null,
    });
    expect(storedPut.status).toBe(200);
    await s3.stop();
    let drawing: { id: string; job_id: string };
    try {
      // A job that needs the bytes waits for the bucket (job handlers ride an outage out,
      // blobs/outage-wait.ts): never Completed without them, and not failed for a short outage.
      const made = await t.request('POST', '/v1/drawings', {
        body: { project_id: projectId, name: 'During outage', file_id: stored.body.id },
      });
      expect(made.status).toBe(201);
      drawing = made.body;

      const checks: [string, string, object?][] = [
        ['GET', fileUri],
        ['GET', sheet.uri],
      ];
      for (const [method, url] of checks) {
        const r = await t.request(method, url, { key: null });
        expect(r.status, url).toBe(503);
        expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(r.headers['retry-after']).toBe('5');
        expect(r.body).toMatchObject({ status: 503, code: 'unavailable' });
        expect(r.body.detail).toContain(`The object storage s3://${TEST_BUCKET}/team/`);
      }
      // The files list reads the records, not the bucket: it still answers, with the stored file
      // (its bytes are served again once the bucket is back).
      const list = await t.request('GET', `/v1/files?project_id=${projectId}&limit=100`);
      expect(list.status).toBe(200);
      expect(list.body.data.map((f: { id: string }) => f.id)).toContain(stored.body.id);
      // An upload while the bucket is away: 503, and the file stays pending.
      const created = await t.request('POST', '/v1/files', {
        body: {
          project_id: projectId,
          filename: 'during-outage.pdf',
          content_type: 'application/pdf',
          size_bytes: PDF.length,
        },
      });
      expect(created.status).toBe(201);
      const put = await t.request('PUT', created.body.upload_url, {
        rawBody: PDF,
        headers: { 'content-type': 'application/pdf' },
        key: null,
      });
      expect(put.status).toBe(503);
      expect(put.body.code).toBe('unavailable');
      const after = await t.request('GET', `/v1/files/${created.body.id}`);
      expect(after.body.status).toBe('pending');
      const job = await t.request('GET', `/v1/jobs/${drawing.job_id}`);
      expect(['Queued', 'Started']).toContain(job.body.status);
    } finally {
      await s3.restart();
    }
    // Once the bucket is back, the job that waited completes with its sheet.
    const job = await waitForJob(t, drawing.job_id, 240_000);
    expect(job.status, JSON.stringify(job.error)).toBe('Completed');
    const sheets = await t.request('GET', `/v1/sheets?drawing_id=${drawing.id}`);
    expect(sheets.body.data).toHaveLength(1);
    const back = await t.request('GET', fileUri, { key: null });
    expect(back.status).toBe(200);
    expect(Number(back.headers['content-length'])).toBe(PDF.length);
  }, 360_000);
});
