// Puts a 4-byte object on the test s3rver and stats it at once, N times over C lanes, and counts
// the sizes stat saw: the loop that reproduced the conformance flake (a just-put object HEAD as
// 0 bytes: s3rver answered its PUT before its file write landed; s3rver.test-support.ts). Run it
// under load (e.g. a few `node -e 'for(;;);'` bounded by `timeout`):
//   node --import tsx reliability/s3-put-stat-loop.ts 4000 8
// Before the fix, 1 of 4,000 at load 21 saw size 0; after it, 0 of 4,000 at load 23.
// It stops by itself; it exits 1 if any stat saw a size other than 4.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { S3ObjectStore } from '../core/blobs/s3-object-store';
import { startS3rver, TEST_BUCKET, TEST_CREDENTIALS } from '../core/blobs/s3rver.test-support';

const N = Number(process.argv[2] ?? 2000);
const conc = Number(process.argv[3] ?? 1);
const s3 = await startS3rver();
const store = new S3ObjectStore({
  bucket: TEST_BUCKET,
  prefix: `r${process.pid}/`,
  endpoint: s3.endpoint,
  credentials: TEST_CREDENTIALS,
  cacheDir: mkdtempSync(path.join(tmpdir(), 'flk-cache-')),
});
let bad = 0;
const seen: Record<string, number> = {};
let i = 0;
async function lane(l: number) {
  while (i < N) {
    const n = i++;
    const key = `s/${l}-${n}`;
    await store.put(key, Buffer.from('fine'));
    const st = await store.stat(key);
    const size = st === null ? 'null' : String(st.size);
    seen[size] = (seen[size] ?? 0) + 1;
    if (size !== '4') bad++;
  }
}
const t0 = Date.now();
await Promise.all(Array.from({ length: conc }, (_, l) => lane(l)));
console.log(JSON.stringify({ N, conc, bad, seen, ms: Date.now() - t0 }));
store.close();
await s3.dispose();
process.exitCode = bad === 0 ? 0 : 1;
