import type { ObjectStore } from './blobs/object-store';
import { OutageWaitingObjectStore, type OutageWaitOptions } from './blobs/outage-wait';
import type { Db } from './store/db';
import type { Logger, ServiceConfig } from './services/context';
import type { WorkerPool } from './jobs/worker-pool';
import { createJobRunner, toApiJob, type JobRunner } from './jobs/job-runner';
import type { JobDispatcher } from './jobs/dispatcher';
import type { JobChangeFeed } from './jobs/pg-job-events';
import { createProcessHandler } from './jobs/handlers/process.job';
import { createCompareHandler } from './jobs/handlers/compare.job';
import { createAnalyzeHandler } from './jobs/handlers/analyze.job';
import { createParseHandler } from './jobs/handlers/parse.job';
import { createExportHandler } from './jobs/handlers/export.job';
import { failProcessingDrawing } from './store/repositories/drawings.repository';
import { settleJobCredits } from './services/credits.service';
import { recordJobEvent } from './services/webhooks.service';
import { DEFAULT_DPI } from './vision/input/pdf.adapter';

// The job runner with Blueline's handlers and terminal hooks: the same in the desktop service, the
// team API (`serve --database …`) and a team worker (`blueline worker`, core/worker.ts).

export interface JobSystemOptions {
  db: Db;
  objects: ObjectStore;
  pool: WorkerPool;
  log: Logger;
  config: Pick<ServiceConfig, 'maxPagesPerDrawing' | 'maxPixelsPerPage'>;
  /** Team mode: the queue and the change feed (core/jobs/dispatcher.ts, pg-job-events.ts). */
  dispatcher?: JobDispatcher;
  feed?: JobChangeFeed;
  sweepIntervalMs?: number;
  /** Handlers running at once in this process (default: the pool's size). */
  concurrency?: number;
  registerHandlers?: (runner: JobRunner) => void;
  /**
   * How the handlers ride out an object storage outage (blobs/outage-wait.ts): a job waits for
   * the storage to answer again, up to `waitMs` per operation, instead of failing at once.
   */
  storageOutage?: OutageWaitOptions;
}

export function createJobSystem(opts: JobSystemOptions): JobRunner {
  const { db, pool, log, config } = opts;
  // The handlers' view of the objects: an outage makes a job wait (the HTTP routes keep the
  // plain store and answer 503 at once).
  const objects = new OutageWaitingObjectStore(opts.objects, { log, ...opts.storageOutage });
  // Credits settle inside the transaction that ends a job (contract §7).
  // Webhook events (job.completed / job.failed / job.canceled) go into the outbox in that same
  // transaction, so an event exists exactly when the terminal status does (contract §10).
  const jobs = createJobRunner({
    db,
    pool,
    log,
    ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
    ...(opts.feed ? { feed: opts.feed } : {}),
    ...(opts.sweepIntervalMs ? { sweepIntervalMs: opts.sweepIntervalMs } : {}),
    hooks: {
      onTerminal: async (row, tx) => {
        // A process job that ends without completing (the runner gave up, or it was canceled
        // before its handler ran) must not leave its drawing Processing forever.
        if (row.type === 'process' && row.status !== 'Completed')
          await failProcessingDrawing(tx, row.target_id);
        await settleJobCredits(tx, row);
        await recordJobEvent(tx, row.organization_id, { ...toApiJob(row) });
      },
    },
  });
  jobs.register('compare', createCompareHandler({ db, objects, jobs }));
  jobs.register('analyze', createAnalyzeHandler({ db, objects }));
  jobs.register('parse', createParseHandler({ db, objects }));
  jobs.register('export', createExportHandler({ db, objects }));
  jobs.register(
    'process',
    createProcessHandler({
      db,
      objects,
      config: {
        dpi: DEFAULT_DPI,
        maxPagesPerDrawing: config.maxPagesPerDrawing,
        maxPixelsPerPage: config.maxPixelsPerPage,
      },
    }),
  );
  opts.registerHandlers?.(jobs);
  return jobs;
}
