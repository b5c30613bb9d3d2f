// A team-mode worker process for the tests: `node --import tsx team-worker.test-support.ts <url>`.
// Runs the synthetic jobs of team.test-support.ts from the queue until killed or SIGTERMed, and
// prints JSON lines (claims, steps, lost leases) on stdout.
import { openPostgres } from '../store/pg-db';
import { createBullmqDispatcher, dispatcherTimingsFromEnv } from './bullmq-dispatcher';
import { createPgJobFeed } from './pg-job-events';
import { createWorkerPool } from './worker-pool';
import { surviveConnectionLoss } from './pg-connection-loss';
import { createTeamTestRunner, say } from './team.test-support';

const url = process.argv[2];
if (!url) throw new Error('usage: team-worker.test-support.ts <postgres-url>');
const concurrency = Number(process.env.TEAM_CONCURRENCY ?? 2);
const db = await openPostgres(url, { migrate: false, max: 4 });
const log = {
  info: (o: object, m?: string) => say({ log: 'info', msg: m, ...o }),
  warn: (o: object, m?: string) => say({ log: 'warn', msg: m, ...strip(o) }),
  error: (o: object, m?: string) => say({ log: 'error', msg: m, ...strip(o) }),
};
function strip(o: object): object {
  const { err, ...rest } = o as { err?: unknown };
  return err === undefined ? rest : { ...rest, err: err instanceof Error ? err.message : err };
}
surviveConnectionLoss(log);
const runner = createTeamTestRunner({
  db,
  pool: createWorkerPool({ size: 1 }),
  dispatcher: createBullmqDispatcher({ url, log, ...dispatcherTimingsFromEnv(), poolMax: 2 }),
  feed: createPgJobFeed(url, log),
  concurrency,
  sweepIntervalMs: Number(process.env.BLUELINE_QUEUE_SWEEP_MS ?? 2000),
  log,
});
await runner.start({ work: true });
say({ ready: process.pid });
process.on('SIGTERM', () => {
  setTimeout(() => process.exit(1), 30_000).unref();
  void runner.stop().then(async () => {
    await db.close();
    say({ stopped: process.pid });
    process.exit(0);
  });
});
setInterval(() => {}, 1 << 30);
