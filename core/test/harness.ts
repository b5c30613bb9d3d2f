import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgTestDatabase, PG_URL } from './backends';
import { createService, type Service, type ServiceOptions } from '../service';
import { createApiKey, ensureOrganization } from '../store/repositories/organizations.repository';
import { S3ObjectStore } from '../blobs/s3-object-store';
import { LocalObjectStore } from '../blobs/local-object-store';
import type { ObjectStore } from '../blobs/object-store';
import { createBullmqDispatcher, migrateQueueSchema } from '../jobs/bullmq-dispatcher';
import { createPgJobFeed } from '../jobs/pg-job-events';
import {
  startS3rver,
  TEST_BUCKET,
  TEST_CREDENTIALS,
  type S3rverProcess,
} from '../blobs/s3rver.test-support';

// Service tests go over real HTTPS (real TLS, real SQLite file in a temp data dir), verifying the
// service's own certificate like any client would.

export interface HttpResult<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  rawBody?: Buffer | string;
  headers?: Record<string, string>;
  /** API key to send; null sends none. Defaults to the harness key. */
  key?: string | null;
}

export interface TestService {
  svc: Service;
  dataDir: string;
  origin: string;
  port: number;
  key: string;
  agent: https.Agent;
  /** The service's object store (its data dir's files, or its S3 prefix in team mode). */
  objects: ObjectStore;
  /** Its PostgreSQL database (team mode: BLUELINE_TEST_DATABASE set), for worker processes. */
  databaseUrl?: string;
  request<T = any>(method: string, path: string, opts?: RequestOptions): Promise<HttpResult<T>>;
  newOrgKey(name: string): Promise<string>;
  stop(opts?: { keepDir?: boolean }): Promise<void>;
}

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/**
 * BLUELINE_TEST_STORAGE=s3 runs every service a test starts with its objects on S3 (team mode):
 * one s3rver per test process, a fresh key prefix per service. Default: the data dir's files.
 */
async function testObjects(dataDir: string, prefix: string): Promise<S3ObjectStore | undefined> {
  const mode = process.env.BLUELINE_TEST_STORAGE ?? 'local';
  if (mode === 'local') return undefined;
  if (mode !== 's3')
    throw new Error(`Expected local or s3 for BLUELINE_TEST_STORAGE but received '${mode}'.`);
  // It ends with this process (s3rver.test-support.ts); its temp dir goes with the OS's tmp.
  s3rver ??= startS3rver();
  const server = await s3rver;
  return new S3ObjectStore({
    bucket: TEST_BUCKET,
    prefix,
    endpoint: server.endpoint,
    credentials: TEST_CREDENTIALS,
    cacheDir: join(dataDir, 'object-cache'),
  });
}
let s3rver: Promise<S3rverProcess> | undefined;
let storeSerial = 0;

/**
 * What a service stopped with `keepDir` leaves for the next service on the same data dir: its
 * PostgreSQL database and its S3 prefix, which live outside the data dir. A restart in team mode
 * finds its records and objects again, as a desktop restart finds them in the data dir.
 */
const keptBackends = new Map<
  string,
  { pgDb: Awaited<ReturnType<typeof createPgTestDatabase>> | undefined; prefix: string }
>();

export interface TestServiceOptions extends Partial<ServiceOptions> {
  /**
   * The desktop's backends whatever BLUELINE_TEST_DATABASE and BLUELINE_TEST_STORAGE say: SQLite
   * and local files in the data dir. For tests of what only the desktop has (a data dir's backup).
   */
  desktop?: boolean;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const { desktop = false, ...serviceOptions } = options;
  options = serviceOptions;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'blueline-test-'));
  const kept = keptBackends.get(dataDir);
  keptBackends.delete(dataDir);
  const prefix = kept?.prefix ?? `svc-${process.pid}-${++storeSerial}/`;
  const objects = options.objects || desktop ? undefined : await testObjects(dataDir, prefix);
  // BLUELINE_TEST_DATABASE=postgres://…: every test service runs on a fresh PostgreSQL database
  // (the one of its data dir's last service, when that one was stopped with keepDir).
  const pgDb =
    PG_URL && !options.database && !desktop
      ? (kept?.pgDb ?? (await createPgTestDatabase()))
      : undefined;
  const log = process.env.BLUELINE_TEST_LOG ? undefined : silent;
  const svc = await createService({
    port: 0,
    log,
    warmWorkers: false,
    ...(objects ? { objects } : {}),
    ...options,
    ...(pgDb ? { database: pgDb.url, team: await teamQueue(pgDb.url) } : {}),
    dataDir,
    config: { rateLimits: { document: 100_000, vision: 100_000 }, ...options.config },
  });
  const { origin, port } = await svc.start();
  const key = (await createApiKey(svc.db, (await ensureOrganization(svc.db, 'Test Org')).id))
    .secret;
  const agent = new https.Agent({ ca: svc.caCertPem, keepAlive: true, maxSockets: 64 });
  const request = <T>(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<HttpResult<T>> =>
    httpsRequest<T>(agent, origin, method, path, {
      ...opts,
      key: opts.key === undefined ? key : opts.key,
    });
  return {
    svc,
    dataDir,
    objects: options.objects ?? objects ?? new LocalObjectStore({ dataDir }),
    ...(pgDb ? { databaseUrl: pgDb.url } : {}),
    origin,
    port,
    key,
    agent,
    request,
    newOrgKey: async (name) =>
      (await createApiKey(svc.db, (await ensureOrganization(svc.db, name)).id)).secret,
    async stop({ keepDir = false } = {}) {
      agent.destroy();
      await svc.stop();
      objects?.close();
      if (keepDir) keptBackends.set(dataDir, { pgDb, prefix });
      else {
        await pgDb?.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * On PostgreSQL the test service runs as `blueline serve --database` does (core/cli/main.ts): jobs
 * go through the BullMQ dispatcher on the same database (its `bullmq` schema, migrated here as
 * `blueline migrate` does) to this process's own workers, and job changes are heard from the
 * LISTEN feed — not the desktop's in-process claim loop. Lease timings are the production ones:
 * a service stopped here interrupts its jobs, which the queue hands out again (to the next service
 * on the same database) after its retry delay, not after a lease.
 */
async function teamQueue(url: string) {
  await migrateQueueSchema(url);
  return {
    dispatcher: createBullmqDispatcher({ url, poolMax: 2 }),
    feed: createPgJobFeed(url),
    work: true,
  };
}

export function httpsRequest<T = any>(
  agent: https.Agent,
  origin: string,
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<HttpResult<T>> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    let payload: Buffer | undefined;
    if (opts.rawBody !== undefined) payload = Buffer.from(opts.rawBody);
    else if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['content-type'] ??= 'application/json';
    }
    if (payload) headers['content-length'] = String(payload.length);
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    const req = https.request(new URL(path, origin), { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = undefined;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: body as T });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** The bytes at a signed URL (status 200 required). */
export function download(t: TestService, uri: string): Promise<Buffer> {
  return new Promise((res, rej) => {
    https
      .get(new URL(uri, t.origin), { agent: t.agent }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () =>
          r.statusCode === 200
            ? res(Buffer.concat(chunks))
            : rej(new Error(`${uri}: HTTP ${r.statusCode}`)),
        );
        r.on('error', rej);
      })
      .on('error', rej);
  });
}
