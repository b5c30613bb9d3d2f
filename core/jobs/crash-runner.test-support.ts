// Run as a separate process by job-resume.test.ts: `node --import tsx crash-runner.test-support.ts <db-file>`.
// Opens the database, runs the `steps` handler on whatever is queued, and waits to be killed.
// The `poison` handler runs a worker task that takes the whole process down (SIGSEGV), as a file
// that crashes a native renderer would. CRASH_BACKOFF_MS sets the runner's crash back-off.
import { openDatabase } from '../store/db';
import { createJobRunner } from './job-runner';
import { createWorkerPool } from './worker-pool';
import { createEffectsTable, stepsHandler } from './test-support';
import { TEST_REGISTRY_URL, type TestWorkerTasks } from './worker-tasks.test-support';

const file = process.argv[2];
if (!file) throw new Error('usage: crash-runner.test-support.ts <db-file>');
const db = openDatabase(file);
await createEffectsTable(db);
const pool = createWorkerPool<TestWorkerTasks>({ size: 1, registryUrl: TEST_REGISTRY_URL });
const backoffMs = Number(process.env.CRASH_BACKOFF_MS);
const runner = createJobRunner<TestWorkerTasks>({
  db,
  pool,
  concurrency: 1,
  ...(backoffMs > 0 ? { crashPolicy: { backoffMs } } : {}),
});
runner.register('steps', stepsHandler(db));
runner.register('poison', async (ctx) => {
  process.stdout.write(`${JSON.stringify({ id: ctx.job.id, poisonRun: ctx.job.attempts })}\n`);
  await ctx.pool.run('test.killProcess', undefined, [], ctx.signal);
  return null;
});
runner.events.on('job', (job) => {
  process.stdout.write(
    `${JSON.stringify({ id: job.id, status: job.status, progress: job.progress })}\n`,
  );
});
runner.start();
// Stay alive until killed (the runner's timers are unref'd).
setInterval(() => {}, 1 << 30);
