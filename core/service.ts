import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './http/app';
import { CursorCodec } from './http/cursor';
import { blobUrlSigner, type HttpDeps } from './http/deps';
import { projectsRoutes } from './http/routes/projects.routes';
import { catalogRoutes } from './http/routes/catalog.routes';
import { loadOrCreateTls, type TlsMaterial } from './http/tls';
import { createTransport, type Transport } from './http/transport';
import { DEFAULT_CONFIG, type Logger, type ServiceConfig } from './services/context';
import { type Db } from './store/db';
import { openPostgres } from './store/pg-db';
import { openCheckedDatabase, reconcile } from './services/reconcile.service';
import { releaseAllProcessing } from './store/repositories/idempotency.repository';
import { createApiKey } from './store/repositories/organizations.repository';
import { loadOrCreateSecret } from './blobs/secrets';
import { UrlSigner } from './blobs/signed-url';
import { drawingPrefix, overlayPrefix, projectPrefix } from './blobs/keys';
import { LocalObjectStore } from './blobs/local-object-store';
import { type ObjectStore } from './blobs/object-store';
import { redactingLogger } from './http/log-redaction';
import { createWorkerPool, type WorkerPool } from './jobs/worker-pool';
import { WORKER_WARMUP } from './jobs/ingest-in-pool';
import { type JobRunner } from './jobs/job-runner';
import { createJobSystem } from './job-system';
import type { JobDispatcher } from './jobs/dispatcher';
import type { JobChangeFeed } from './jobs/pg-job-events';
import { filesRoutes } from './http/routes/files.routes';
import { jobsRoutes } from './http/routes/jobs.routes';
import { webRoutes } from './http/routes/web.routes';
import { TileService, type DeepTileRenderer, type TileTraceEvent } from './services/tiles.service';
import { createTileSourceResolver } from './services/tiles-source';
import { poolTileRenderer } from './jobs/tile-tasks';
import { drawingsRoutes } from './http/routes/drawings.routes';
import { parseRoutes } from './http/routes/parse.routes';
import { exportsRoutes } from './http/routes/exports.routes';
import { compareRoutes } from './http/routes/compare.routes';
import { creditsRoutes } from './http/routes/credits.routes';
import { visionQueryRoutes } from './http/routes/vision-query.routes';
import { ensureDefaultOrganization } from './services/credits.service';
import { openJobIds } from './store/repositories/records.repository';
import { webhooksRoutes } from './http/routes/webhooks.routes';
import { createWebhookDelivery, type WebhookDeliveryOptions } from './services/webhook-delivery';

// The service bootstrap: one factory, no globals. Tests build one per test with a temp data dir;
// `blueline serve` and the Electron main process build one each.

export interface ServiceOptions {
  dataDir: string;
  host?: string;
  /** 0 = any free port. Default 7420. */
  port?: number;
  tlsCert?: string;
  tlsKey?: string;
  /** Folder of the built renderer served at / (browser mode). */
  webRoot?: string;
  config?: Partial<Omit<ServiceConfig, 'dataDir'>>;
  /** Worker threads for CPU-heavy vision work (default: available cores). */
  workers?: number;
  /** The worker-pool entry (a built .js in the bundled Electron app; default: the .ts source). */
  workerUrl?: URL;
  /**
   * Start the pool's workers with the service and warm each one up on a generated scanned sheet
   * before its first task (core/vision/ingest/warmup.ts). Default true; tests that do not ingest
   * turn it off to save the CPU.
   */
  warmWorkers?: boolean;
  /** Register job handlers before the runner starts (tests; later work registers vision handlers here). */
  registerHandlers?: (runner: JobRunner) => void;
  /**
   * The store: a `postgres://…` URL runs the service on PostgreSQL (team mode; migrated on
   * open, under an advisory lock). Default: SQLite in `dataDir` (the desktop).
   */
  database?: string;
  /**
   * With `database`: false refuses a database whose schema is not exactly this build's (team mode's
   * `serve` and `worker`: `blueline migrate` migrates). Default true: migrate on open (tests).
   */
  migrate?: boolean;
  /**
   * Team mode (`blueline serve --database …`): jobs go through this queue to any number of worker
   * processes, job changes are heard from the feed; `work: false` serves the API only.
   */
  team?: {
    dispatcher: JobDispatcher;
    feed: JobChangeFeed;
    work: boolean;
    sweepIntervalMs?: number;
  };
  /** Adds routes before the app is sealed (tests use it for failure-injection routes). */
  configureApp?: (app: FastifyInstance, db: Db) => void;
  /** Wraps the deep-tile renderer (tests: hold a render to see it cancelled). */
  wrapTileRenderer?: (renderer: DeepTileRenderer) => DeepTileRenderer;
  log?: Logger;
  /** Webhook delivery tuning (tests shorten the backoff and timeouts). */
  webhooks?: Partial<WebhookDeliveryOptions>;
  /**
   * Where the bytes live: default a LocalObjectStore under `<dataDir>/objects`; team mode passes an
   * S3ObjectStore (`blueline serve --storage s3://…`, core/cli/storage.ts). The caller owns it:
   * `stop` does not close it.
   */
  objects?: ObjectStore;
}

export interface Service {
  start(): Promise<{ baseUrl: string; origin: string; port: number }>;
  stop(): Promise<void>;
  readonly caCertPem: string;
  readonly certFingerprint256: string;
  /** A new API key for the "Default" organization (the desktop session, the serve banner). */
  createSessionKey(label?: string): Promise<string>;
  /** For tests and the CLI. */
  readonly db: Db;
  readonly jobs: JobRunner;
  readonly pool: WorkerPool;
  readonly app: FastifyInstance;
}

export const consoleLogger: Logger = {
  info: (o, m) => console.log(m ?? '', typeof o === 'string' ? o : JSON.stringify(o)),
  warn: (o, m) => console.warn(m ?? '', typeof o === 'string' ? o : JSON.stringify(o)),
  error: (o, m) =>
    console.error(m ?? '', typeof o === 'string' ? o : JSON.stringify(o, errorReplacer)),
};

function errorReplacer(_k: string, v: unknown): unknown {
  return v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;
}

export async function createService(opts: ServiceOptions): Promise<Service> {
  const config: ServiceConfig = { ...DEFAULT_CONFIG, ...opts.config, dataDir: opts.dataDir };
  // Every log line of the service passes the redaction (signed-URL signatures, keys, secrets).
  const log = redactingLogger(opts.log ?? consoleLogger);
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });

  // Refuses a corrupt database (PRAGMA integrity_check) with a message naming the way out.
  const db = opts.database
    ? await openPostgres(opts.database, { migrate: opts.migrate !== false })
    : await openCheckedDatabase(join(opts.dataDir, 'blueline.db'));
  // Boot-time reconciliation: requests in flight when the process died release their keys. Not in
  // team mode: other API processes hold keys of requests in flight right now.
  if (!opts.team) await releaseAllProcessing(db);

  const tls: TlsMaterial = await loadOrCreateTls(
    opts.dataDir,
    opts.tlsCert && opts.tlsKey ? { certFile: opts.tlsCert, keyFile: opts.tlsKey } : undefined,
  );
  const cursors = new CursorCodec(await loadOrCreateSecret(opts.dataDir, 'cursor'));
  const signer = new UrlSigner(await loadOrCreateSecret(opts.dataDir, 'url-signing'));
  const objects = opts.objects ?? new LocalObjectStore({ dataDir: opts.dataDir });
  // Boot-time reconciliation, before the runner claims work or the port opens: temp files,
  // orphaned objects and rows left by a crash (services/reconcile.service.ts). Not in team mode:
  // it assumes nothing else writes meanwhile, and workers on other machines store objects before
  // their rows at any time.
  if (!opts.team) await reconcile({ db, objects, log });

  const warmWorkers = opts.warmWorkers !== false;
  const pool = createWorkerPool({
    ...(opts.workers ? { size: opts.workers } : {}),
    ...(opts.workerUrl ? { workerUrl: opts.workerUrl } : {}),
    ...(warmWorkers ? { warmup: WORKER_WARMUP } : {}),
  });
  // Credits settle inside the transaction that ends a job (contract §7).
  // Webhook events (job.completed / job.failed / job.canceled) go into the outbox in that same
  // transaction, so an event exists exactly when the terminal status does (contract §10).
  const jobs = createJobSystem({
    db,
    objects,
    pool,
    log,
    config,
    ...(opts.team
      ? {
          dispatcher: opts.team.dispatcher,
          feed: opts.team.feed,
          ...(opts.team.sweepIntervalMs ? { sweepIntervalMs: opts.team.sweepIntervalMs } : {}),
        }
      : {}),
    ...(opts.registerHandlers ? { registerHandlers: opts.registerHandlers } : {}),
  });
  const webhooks = createWebhookDelivery({ db, log, options: opts.webhooks });

  const cancelOpen = async (organizationId: string, ids: string[]) => {
    for (const id of ids) {
      try {
        await jobs.cancel(organizationId, id);
      } catch {
        // Already terminal (e.g. canceled as a descendant of an earlier one): nothing to do.
      }
    }
  };

  let shuttingDown = false;
  let transport: Transport | undefined;
  const app = await buildApp({
    db,
    log,
    rateLimits: config.rateLimits,
    isShuttingDown: () => shuttingDown,
    serverFactory: (handler) => {
      transport = createTransport(tls, handler);
      return transport.httpsServer;
    },
  });

  const deps: HttpDeps = {
    db,
    cursors,
    signedUrl: blobUrlSigner(signer),
  };
  projectsRoutes(app, deps, {
    cancelProjectJobs: async (org, projectId) =>
      await cancelOpen(org, await openJobIds(db, org, { projectId })),
    deleteProjectObjects: async (projectId) => {
      await objects.deletePrefix(projectPrefix(projectId));
    },
  });
  catalogRoutes(app, deps, {
    cancelJobsForTargets: async (org, targetIds) =>
      await cancelOpen(org, await openJobIds(db, org, { targetIds })),
    deleteObjectPrefixes: async (prefixes) => {
      for (const p of prefixes) await objects.deletePrefix(p);
    },
    drawingPrefix,
    overlayPrefix,
  });
  filesRoutes(app, deps, {
    objects,
    signer,
    maxUploadBytes: config.maxUploadBytes,
    tiles: new TileService(objects, {
      resolve: createTileSourceResolver({ db, objects, maxPixels: config.maxPixelsPerPage }),
      renderer: opts.wrapTileRenderer
        ? opts.wrapTileRenderer(poolTileRenderer(pool))
        : poolTileRenderer(pool),
      cacheMaxBytes: config.tileCacheMaxBytes,
      // Where deep tiles' time goes, one line each (bench/viewer --server-trace); off by default.
      ...(process.env.BLUELINE_TILE_TRACE === '1'
        ? { trace: (e: TileTraceEvent) => console.log(`tile-trace ${JSON.stringify(e)}`) }
        : {}),
    }),
  });
  jobsRoutes(app, deps, jobs, { maxStreamsPerKey: config.maxSseStreamsPerKey });
  drawingsRoutes(app, deps, jobs);
  webhooksRoutes(app, deps);
  compareRoutes(app, deps, jobs);
  parseRoutes(app, deps, jobs);
  exportsRoutes(app, deps, jobs);
  creditsRoutes(app, deps);
  visionQueryRoutes(app, deps, { log });
  opts.configureApp?.(app, db);
  if (opts.webRoot) webRoutes(app, opts.webRoot);
  await app.ready();

  let started: { baseUrl: string; origin: string; port: number } | undefined;
  return {
    db,
    app,
    jobs,
    pool,
    caCertPem: tls.cert,
    certFingerprint256: tls.fingerprint256,
    createSessionKey: async (label) =>
      (await createApiKey(db, (await ensureDefaultOrganization(db)).id, label ?? 'session')).secret,
    async start() {
      if (started) return started;
      const host = opts.host ?? '127.0.0.1';
      const port = await transport!.listen(host, opts.port ?? 7420);
      const h = host.includes(':') ? `[${host}]` : host;
      const origin = `https://${h}:${port}`;
      started = { baseUrl: `${origin}/v1`, origin, port };
      await jobs.start({ work: opts.team ? opts.team.work : true });
      webhooks.start();
      if (warmWorkers) {
        const t = performance.now();
        void pool.start().then(() => {
          const { warmedUp, warmupError } = pool.stats();
          const ms = Math.round(performance.now() - t);
          if (warmupError) log.warn({ warmupError }, 'worker warm-up failed; workers start cold');
          else log.info({ workers: warmedUp, ms }, 'workers warmed up');
        });
      }
      return started;
    },
    async stop() {
      // Drain: refuse new requests, let in-flight ones finish, leave running jobs resumable
      // (they go back to Queued at the next start), then close the store.
      shuttingDown = true;
      await jobs.stop({ drain: false });
      await webhooks.stop();
      await transport?.close();
      await app.close();
      await pool.close();
      await db.close();
    },
  };
}
