import https from 'node:https';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createService } from '../../core/service';
import { httpsRequest } from '../../core/test/harness';
import {
  createApiKey,
  ensureOrganization,
} from '../../core/store/repositories/organizations.repository';

// Stage 1 of the search bench: real fixture sets processed through the real pipeline (upload over
// HTTPS, `process` job in the worker pool) into a data dir that later stages reuse. Processing is
// the slow part (tens of seconds per set on this machine), so it runs once per data dir.

export const FIXTURES = resolve(import.meta.dirname, '../../fixtures/drawings');
export const SETS = [
  '20190601_beam-proposal_5-sheets.pdf',
  '20130718_barber-house_set_9-sheets.pdf',
  '20190414_foundation-details_3-sheets.pdf',
  '20190321_A600_schedules.pdf',
  '20150129_A-101_first-floor.pdf',
  '20150129_S-101_structural-basement-second-floor-framing.pdf',
];

const silent = {
  info: () => {},
  warn: () => {},
  error: (o: unknown, m?: string) => console.error(m, o),
};

/** Processes the fixture sets into `dataDir` once; returns the project id holding them. */
export async function prepare(
  dataDir: string,
): Promise<{ projectId: string; organizationId: string }> {
  const marker = resolve(dataDir, 'bench-prepared.json');
  if (existsSync(marker)) return JSON.parse(readFileSync(marker, 'utf8'));
  mkdirSync(dataDir, { recursive: true });
  const svc = await createService({
    dataDir,
    port: 0,
    log: silent,
    config: { rateLimits: { document: 1e6, vision: 1e6 } },
  });
  const { origin } = await svc.start();
  const org = await ensureOrganization(svc.db, 'Bench');
  const key = (await createApiKey(svc.db, org.id)).secret;
  const agent = new https.Agent({ ca: svc.caCertPem, keepAlive: true });
  const req = (method: string, path: string, body?: unknown, raw?: Buffer, ct?: string) =>
    httpsRequest(
      agent,
      origin,
      method,
      path,
      raw ? { rawBody: raw, headers: { 'content-type': ct! }, key: null } : { body, key },
    );
  const project = await req('POST', '/v1/projects', { name: 'Search bench' });
  const jobs: string[] = [];
  for (const f of SETS) {
    const bytes = readFileSync(resolve(FIXTURES, f));
    const file = await req('POST', '/v1/files', {
      project_id: project.body.id,
      filename: f,
      content_type: 'application/pdf',
      size_bytes: bytes.length,
    });
    await req('PUT', file.body.upload_url, undefined, bytes, 'application/pdf');
    const d = await req('POST', '/v1/drawings', {
      project_id: project.body.id,
      name: f.replace(/\.pdf$/, ''),
      file_id: file.body.id,
    });
    if (d.status !== 201) throw new Error(`drawing ${f}: ${d.status} ${d.text}`);
    jobs.push(d.body.job_id);
  }
  const t0 = Date.now();
  for (const id of jobs) {
    for (;;) {
      const j = await req('GET', `/v1/jobs/${id}`);
      if (j.body.status === 'Completed') break;
      if (['Failed', 'Canceled'].includes(j.body.status))
        throw new Error(`job ${id} ${j.body.status}: ${j.text}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  console.error(
    `processed ${SETS.length} fixture sets in ${((Date.now() - t0) / 1000).toFixed(0)} s`,
  );
  agent.destroy();
  await svc.stop();
  const out = { projectId: project.body.id as string, organizationId: org.id };
  const { writeFileSync } = await import('node:fs');
  writeFileSync(marker, JSON.stringify(out));
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await prepare(process.argv[2] ?? '/tmp/blueline-search-bench'));
}
