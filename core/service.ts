import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from './http/app';
import { CursorCodec } from './http/cursor';
import type { HttpDeps } from './http/deps';
import { projectsRoutes } from './http/routes/projects.routes';
import { catalogRoutes } from './http/routes/catalog.routes';
import { loadOrCreateTls, type TlsMaterial } from './http/tls';
import { createTransport, type Transport } from './http/transport';
import { DEFAULT_CONFIG, type Logger, type ServiceConfig } from './services/context';
import { openDatabase, type Db } from './store/db';
import { releaseAllProcessing } from './store/repositories/idempotency.repository';
import { createApiKey, ensureOrganization } from './store/repositories/organizations.repository';
import { loadOrCreateSecret } from './blobs/secrets';
import { UrlSigner } from './blobs/signed-url';
import { drawingPrefix, overlayPrefix, projectPrefix } from './blobs/keys';
import { LocalObjectStore } from './blobs/local-object-store';

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
  log?: Logger;
}

export interface Service {
  start(): Promise<{ baseUrl: string; origin: string; port: number }>;
  stop(): Promise<void>;
  readonly caCertPem: string;
  readonly certFingerprint256: string;
  /** A new API key for the "Default" organization (the desktop session, the serve banner). */
  createSessionKey(label?: string): string;
  /** For tests and the CLI. */
  readonly db: Db;
  readonly app: FastifyInstance;
}

export const consoleLogger: Logger = {
  info: (o, m) => console.log(m ?? '', typeof o === 'string' ? o : JSON.stringify(o)),
  warn: (o, m) => console.warn(m ?? '', typeof o === 'string' ? o : JSON.stringify(o)),
  error: (o, m) => console.error(m ?? '', typeof o === 'string' ? o : JSON.stringify(o, errorReplacer)),
};

function errorReplacer(_k: string, v: unknown): unknown {
  return v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;
}

export async function createService(opts: ServiceOptions): Promise<Service> {
  const config: ServiceConfig = { ...DEFAULT_CONFIG, ...opts.config, dataDir: opts.dataDir };
  const log = opts.log ?? consoleLogger;
  mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });

  const db = openDatabase(join(opts.dataDir, 'blueline.db'));
  // Boot-time reconciliation: requests in flight when the process died release their keys.
  releaseAllProcessing(db);

  const tls: TlsMaterial = await loadOrCreateTls(
    opts.dataDir,
    opts.tlsCert && opts.tlsKey ? { certFile: opts.tlsCert, keyFile: opts.tlsKey } : undefined,
  );
  const cursors = new CursorCodec(await loadOrCreateSecret(opts.dataDir, 'cursor'));
  const signer = new UrlSigner(await loadOrCreateSecret(opts.dataDir, 'url-signing'));
  const objects = new LocalObjectStore({ dataDir: opts.dataDir });

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
    signedUrl: (origin, key) => origin + signer.sign(`/v1/blobs/${key}`, 3600).url,
  };
  projectsRoutes(app, deps, {
    cancelProjectJobs: () => {},
    deleteProjectObjects: async (projectId) => {
      await objects.deletePrefix(projectPrefix(projectId));
    },
  });
  catalogRoutes(app, deps, {
    cancelJobsForTargets: () => {},
    deleteObjectPrefixes: async (prefixes) => {
      for (const p of prefixes) await objects.deletePrefix(p);
    },
    drawingPrefix,
    overlayPrefix,
  });
  await app.ready();

  let started: { baseUrl: string; origin: string; port: number } | undefined;
  return {
    db,
    app,
    caCertPem: tls.cert,
    certFingerprint256: tls.fingerprint256,
    createSessionKey: (label) => createApiKey(db, ensureOrganization(db, 'Default').id, label ?? 'session').secret,
    async start() {
      if (started) return started;
      const host = opts.host ?? '127.0.0.1';
      const port = await transport!.listen(host, opts.port ?? 7420);
      const h = host.includes(':') ? `[${host}]` : host;
      const origin = `https://${h}:${port}`;
      started = { baseUrl: `${origin}/v1`, origin, port };
      return started;
    },
    async stop() {
      shuttingDown = true;
      await transport?.close();
      await app.close();
      db.close();
    },
  };
}
