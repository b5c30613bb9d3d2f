// Object-store bench: what moving the bytes from the data dir to an S3-compatible bucket costs.
//
//   node --import tsx bench/objects/bench-objects.ts              # both parts, 15 rounds
//   node --import tsx bench/objects/bench-objects.ts --rounds 30 --only ops
//
// Part "ops": p50/p95 of each ObjectStore operation the service uses, LocalObjectStore beside
// S3ObjectStore on s3rver (loopback child process): a tile-sized put (20 KB), a sheet-image put
// (4 MiB, one PutObject), a large put (12 MiB, multipart to a temp key + copy), a full read of the
// 4 MiB object, stat, a forward page of 100 keys, the last backward page of 1,000 keys (S3: a
// forward scan), localPath on a cold cache (download) and a warm one.
// Part "ingest": one `process` job per fixture through the service with its objects on S3,
// counting the S3 requests by command and the bytes sent, beside the job time on local files.
//
// s3rver is a Node server writing files on the same 2 cores: these figures are the protocol's and
// the SDK's overhead on loopback, not a real bucket's latency (tens of ms per request on AWS).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { LocalObjectStore } from '../../core/blobs/local-object-store';
import type { ObjectStore } from '../../core/blobs/object-store';
import { S3ObjectStore } from '../../core/blobs/s3-object-store';
import { startS3rver, TEST_BUCKET, TEST_CREDENTIALS } from '../../core/blobs/s3rver.test-support';
import { uploadDrawing, waitForJob } from '../../core/test/flows';
import { startTestService } from '../../core/test/harness';

const { values } = parseArgs({
  options: { rounds: { type: 'string' }, only: { type: 'string' } },
  strict: true,
});
const ROUNDS = Number(values.rounds ?? 15);
const only = values.only;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function drain(store: ObjectStore, key: string): Promise<void> {
  const o = await store.get(key);
  for await (const _ of o!.stream());
}

async function ops(name: string, store: ObjectStore, rows: Map<string, Record<string, string>>) {
  const tile = Buffer.alloc(20_000, 7);
  const image = Buffer.alloc(4 * 1024 * 1024);
  for (let i = 0; i < image.length; i += 4096) image[i] = i & 0xff;
  const large = Buffer.alloc(12 * 1024 * 1024, 3);
  const keys = Array.from({ length: 1000 }, (_, i) => `bench/list/${String(i).padStart(5, '0')}`);
  for (let i = 0; i < keys.length; i += 50)
    await Promise.all(keys.slice(i, i + 50).map((k) => store.put(k, tile.subarray(0, 100))));
  const measures: Record<string, () => Promise<unknown>> = {
    'put 20 KB': () => store.put(`bench/tile/${Math.random().toString(36).slice(2)}`, tile),
    'put 4 MiB': () => store.put('bench/image', image),
    'put 12 MiB': () => store.put('bench/large', large),
    'read 4 MiB': () => drain(store, 'bench/image'),
    stat: () => store.stat('bench/image'),
    'list 100 fwd': () => store.list('bench/list/', { limit: 100, direction: 'forward' }),
    'list 100 bwd (last)': () => store.list('bench/list/', { limit: 100, direction: 'backward' }),
    'localPath warm': () => store.localPath('bench/image'),
  };
  await store.put('bench/image', image);
  for (const [label, fn] of Object.entries(measures)) {
    await fn(); // warm
    const t: number[] = [];
    for (let r = 0; r < ROUNDS; r++) t.push(await time(fn));
    const row = rows.get(label) ?? {};
    row[name] = `${fmt(pct(t, 50))} / ${fmt(pct(t, 95))}`;
    rows.set(label, row);
  }
  if (store instanceof S3ObjectStore) {
    // Cold cache: new bytes each round, so each localPath downloads.
    const t: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      image[0] = r;
      await store.put('bench/cold', image);
      t.push(await time(() => store.localPath('bench/cold')));
    }
    const row = rows.get('localPath cold (4 MiB)') ?? {};
    row[name] = `${fmt(pct(t, 50))} / ${fmt(pct(t, 95))}`;
    row.local = 'n/a (the file itself)';
    rows.set('localPath cold (4 MiB)', row);
  }
}

const s3 = await startS3rver();
const scratch = mkdtempSync(path.join(tmpdir(), 'blueline-bench-objects-'));
const makeS3 = (prefix: string) =>
  new S3ObjectStore({
    bucket: TEST_BUCKET,
    prefix,
    endpoint: s3.endpoint,
    credentials: TEST_CREDENTIALS,
    cacheDir: path.join(scratch, `cache-${prefix.replace(/\W/g, '')}`),
  });
try {
  console.log(
    `Node ${process.version}, ${ROUNDS} rounds; s3rver on ${s3.endpoint} (loopback, same machine)`,
  );
  if (!only || only === 'ops') {
    const rows = new Map<string, Record<string, string>>();
    await ops('local', new LocalObjectStore({ dataDir: path.join(scratch, 'local') }), rows);
    const s3store = makeS3('ops/');
    await ops('s3', s3store, rows);
    s3store.close();
    console.log('\nms p50 / p95        local            s3 (s3rver)');
    for (const [label, r] of rows)
      console.log(`${label.padEnd(22)} ${String(r.local ?? '').padEnd(16)} ${r.s3 ?? ''}`);
  }

  if (!only || only === 'ingest') {
    const fixtures = ['20150129_A-103_roof-plan.pdf', '20190601_beam-proposal_5-sheets.pdf'];
    console.log('\nprocess job                         local s   s3 s   S3 requests (bytes sent)');
    for (const fixture of fixtures) {
      const seconds: Record<string, number> = {};
      let requests = '';
      for (const mode of ['local', 's3'] as const) {
        const store = mode === 's3' ? makeS3(`ingest-${fixture.slice(0, 8)}/`) : undefined;
        const counts = new Map<string, number>();
        let bytes = 0;
        store?.client.middlewareStack.add(
          (next, context) => async (args) => {
            const name = String(context.commandName ?? '?').replace(/Command$/, '');
            counts.set(name, (counts.get(name) ?? 0) + 1);
            const body = (args.input as { Body?: unknown }).Body;
            if (Buffer.isBuffer(body)) bytes += body.length;
            return next(args);
          },
          { step: 'initialize', name: 'benchCounter' },
        );
        const t = await startTestService({ ...(store ? { objects: store } : {}), workers: 2 });
        try {
          const project = await t.request('POST', '/v1/projects', { body: { name: 'bench' } });
          counts.clear();
          bytes = 0;
          const start = performance.now();
          const drawing = await uploadDrawing(t, project.body.id, fixture, fixture);
          const job = await waitForJob(t, drawing.job_id, 600_000, 50);
          seconds[mode] = (performance.now() - start) / 1000;
          if (job.status !== 'Completed') throw new Error(`${fixture}: job ${job.status}`);
          if (store)
            requests = `${[...counts].map(([k, v]) => `${k} ${v}`).join(', ')} (${(bytes / 1024 / 1024).toFixed(1)} MiB in PutObject bodies; multipart parts not counted)`;
        } finally {
          await t.stop();
          store?.close();
        }
      }
      console.log(
        `${fixture.padEnd(36)} ${seconds.local!.toFixed(2).padStart(6)} ${seconds.s3!.toFixed(2).padStart(6)}   ${requests}`,
      );
    }
  }
} finally {
  await s3.dispose();
  rmSync(scratch, { recursive: true, force: true });
}
