// Time and size of each export format on the barber house comparison (9 sheet pairs; the newer
// set is 22x34 with /Rotate 90 against an 11x17 older set), through the real HTTPS API: upload,
// process and compare once, then each export `--runs` times (default 3), from POST /exports to the
// job's end, and the size of the file it stored.
//
//   node --import tsx bench/exports/bench-exports.ts [--runs N] [--workers N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { uploadDrawing, waitForJob } from '../../core/test/flows';
import { startTestService } from '../../core/test/harness';
import {
  ensureOrganization,
  grantCredits,
} from '../../core/store/repositories/organizations.repository';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, workers: { type: 'string', default: '2' } },
});
const runs = Number(values.runs);
const dataDir = mkdtempSync(join(tmpdir(), 'blueline-bench-exports-'));
const t = await startTestService({ dataDir, workers: Number(values.workers) });
try {
  await grantCredits(
    t.svc.db,
    (await ensureOrganization(t.svc.db, 'Test Org')).id,
    10_000,
    'bench',
  );
  const project = (await t.request('POST', '/v1/projects', { body: { name: 'Barber House' } })).body
    .id as string;
  const older = await uploadDrawing(t, project, '20130718_barber-house_set_9-sheets.pdf', 'old');
  const newer = await uploadDrawing(t, project, '20130724_barber-house_set_9-sheets.pdf', 'new');
  for (const d of [older, newer]) await waitForJob(t, d.job_id, 900_000);
  const cmp = await t.request('POST', `/v1/drawings/${newer.id}/compare`, {
    body: { compare_to: older.id, analyze: true },
  });
  const done = await waitForJob(t, cmp.body.job_id, 900_000);
  if (done.status !== 'Completed') throw new Error(`comparison ${done.status}`);
  console.log(`comparison ${cmp.body.job_id}: ${done.result.pairs.length} sheet pairs`);
  for (const format of ['pdf_report', 'clouded_pdf', 'csv']) {
    const ms: number[] = [];
    let size = 0;
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const r = await t.request('POST', '/v1/exports', {
        body: { job_id: cmp.body.job_id, format },
      });
      const job = await waitForJob(t, r.body.job_id, 600_000, 20);
      ms.push(performance.now() - t0);
      if (job.status !== 'Completed') throw new Error(`${format}: ${JSON.stringify(job.error)}`);
      size = (await t.request('GET', `/v1/files/${job.result.file_id}`)).body.size_bytes;
    }
    ms.sort((a, b) => a - b);
    console.log(
      `${format.padEnd(12)} median ${Math.round(ms[Math.floor(ms.length / 2)]!)} ms (min ${Math.round(ms[0]!)}, max ${Math.round(ms.at(-1)!)}), ${(size / 1024).toFixed(0)} KiB`,
    );
  }
} finally {
  await t.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
