import type { JobLogger } from './job-runner';

// A PostgreSQL restart (or failover) ends every connection at once. Our own pools and the change
// feed handle that ('error' listeners, reconnect), but BullMQ 6.7's PostgreSQL backend leaves a
// connection without an 'error' listener, so node-postgres's "Connection terminated unexpectedly"
// became an uncaught exception and killed every worker process (seen with `pg_ctl restart -m fast`,
// reliability/team-chaos.ts pg-restart). In team-mode processes, such an error is logged and the
// process carries on: the queue retries its queries and the feed reconnects. Anything else still
// ends the process as Node would (stack on stderr, exit code 1).

const LOST = new Set(['57P01', '57P02', '57P03', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE']);

export function isPgConnectionLoss(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: string }).code;
  return (
    (code !== undefined && LOST.has(code)) ||
    /Connection terminated( unexpectedly)?|terminating connection due to administrator command/.test(
      err.message,
    )
  );
}

let installed = false;

export function surviveConnectionLoss(log: JobLogger): void {
  if (installed) return;
  installed = true;
  process.on('uncaughtException', (err) => {
    if (isPgConnectionLoss(err)) {
      log.warn(
        { err: err.message },
        'A PostgreSQL connection was lost (server restarted?); carrying on, connections reopen',
      );
      return;
    }
    console.error(err);
    process.exit(1);
  });
}
