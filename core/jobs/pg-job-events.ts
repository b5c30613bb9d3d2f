import pg from 'pg';
import type { JobLogger } from './job-runner';

// Job changes heard across processes (team mode). Every insert or update of a `jobs` row sends
// `NOTIFY blueline_jobs, '<id>'` from inside its transaction (trigger of migration 013), delivered
// at commit. Each process keeps one LISTEN connection: the API re-reads the row for SSE, a worker
// hears that a job it runs was canceled (or claimed by another worker), a parent hears its
// children end. A LISTEN connection that drops (PostgreSQL restarted) is opened again with a
// back-off; notifications sent meanwhile are lost, so `onReconnect` tells the runner to re-read
// what it follows.

export const JOB_CHANNEL = 'blueline_jobs';

export interface JobChangeFeed {
  /** Listens; `onJob` gets each changed job's id, `onReconnect` runs after a reconnection. */
  start(onJob: (id: string) => void, onReconnect: () => void): Promise<void>;
  close(): Promise<void>;
}

export function createPgJobFeed(url: string, log?: JobLogger): JobChangeFeed {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = 250;
  let handlers: { onJob: (id: string) => void; onReconnect: () => void } | undefined;

  async function connect(first: boolean): Promise<void> {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => {}); // 'end' follows; reconnect there
    c.on('notification', (m) => {
      if (m.channel === JOB_CHANNEL && m.payload) handlers?.onJob(m.payload);
    });
    c.on('end', () => {
      if (client !== c || closed) return;
      client = undefined;
      log?.warn({}, 'Job change feed lost its PostgreSQL connection; reconnecting');
      schedule();
    });
    await c.connect();
    await c.query(`LISTEN ${JOB_CHANNEL}`);
    if (closed) {
      await c.end();
      return;
    }
    client = c;
    delay = 250;
    if (!first) {
      log?.info({}, 'Job change feed reconnected');
      handlers?.onReconnect();
    }
  }

  function schedule(): void {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect(false).catch(() => {
        delay = Math.min(5000, delay * 2);
        schedule();
      });
    }, delay);
    retry.unref();
  }

  return {
    async start(onJob, onReconnect) {
      handlers = { onJob, onReconnect };
      await connect(true);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
