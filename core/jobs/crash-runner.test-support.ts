// Run as a separate process by job-resume.test.ts: `node --import tsx crash-runner.test-support.ts <db-file>`.
// Opens the database, runs the `steps` handler on whatever is queued, and waits to be killed.
import { openDatabase } from '../store/db';
import { createJobRunner } from './job-runner';
import { createWorkerPool } from './worker-pool';
import { createEffectsTable, stepsHandler } from './test-support';

const file = process.argv[2];
if (!file) throw new Error('usage: crash-runner.test-support.ts <db-file>');
const db = openDatabase(file);
createEffectsTable(db);
const pool = createWorkerPool({ size: 1 });
const runner = createJobRunner({ db, pool, concurrency: 1 });
runner.register('steps', stepsHandler(db));
runner.events.on('job', (job) => {
  process.stdout.write(
    `${JSON.stringify({ id: job.id, status: job.status, progress: job.progress })}\n`,
  );
});
runner.start();
// Stay alive until killed (the runner's timers are unref'd).
setInterval(() => {}, 1 << 30);
