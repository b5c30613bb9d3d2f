import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import type { TestService } from './harness';

// The steps service tests share: put a drawing set through upload → drawing → process, and wait
// for a job to end. (They lived in test files, which cannot import each other without running
// each other's tests.)

export const FIXTURES = resolve(import.meta.dirname, '../../fixtures/drawings');

/**
 * Uploads a fixture (by file name) or given bytes and creates a drawing from it. The stored file is
 * named `<name>.pdf` unless `filename` is given (an issue date may be read from it).
 */
export async function uploadDrawing(
  t: TestService,
  projectId: string,
  file: string | Buffer,
  name: string,
  opts: { contentType?: string; revision?: string; filename?: string } = {},
): Promise<{ id: string; job_id: string; status: string }> {
  const contentType = opts.contentType ?? 'application/pdf';
  const bytes = typeof file === 'string' ? readFileSync(resolve(FIXTURES, file)) : file;
  const created = await t.request('POST', '/v1/files', {
    body: {
      project_id: projectId,
      filename: opts.filename ?? `${name}.pdf`,
      content_type: contentType,
      size_bytes: bytes.length,
    },
  });
  expect(created.status).toBe(201);
  const put = await t.request('PUT', created.body.upload_url, {
    rawBody: bytes,
    headers: { 'content-type': contentType },
    key: null,
  });
  expect(put.status).toBe(200);
  const drawing = await t.request('POST', '/v1/drawings', {
    body: {
      project_id: projectId,
      name,
      file_id: created.body.id,
      ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
    },
  });
  expect(drawing.status).toBe(201);
  return drawing.body;
}

/** Polls a job until it is Completed, Failed or Canceled and returns it. */
export async function waitForJob(t: TestService, jobId: string, timeoutMs = 240_000, pollMs = 250) {
  const start = Date.now();
  for (;;) {
    const job = await t.request('GET', `/v1/jobs/${jobId}`);
    if (['Completed', 'Failed', 'Canceled'].includes(job.body.status)) return job.body;
    if (Date.now() - start > timeoutMs) throw new Error(`job ${jobId} still ${job.body.status}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
