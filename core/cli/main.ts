import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import { consoleLogger, createService } from '../service';
import { createTeamWorker, sweepFromEnv } from '../worker';
import {
  checkQueueSchema,
  createBullmqDispatcher,
  dispatcherTimingsFromEnv,
  migrateQueueSchema,
} from '../jobs/bullmq-dispatcher';
import { createPgJobFeed } from '../jobs/pg-job-events';
import { needsMallocTuning, withMallocTuning } from '../jobs/malloc-tuning';
import { surviveConnectionLoss } from '../jobs/pg-connection-loss';
import { checkPostgresSchema, migratePostgres, PgDb, SchemaMismatchError } from '../store/pg-db';
import { MigrationError } from '../store/db';
import { PG_MIGRATIONS } from '../store/migrations/postgres';
import { ensureWebUi } from './web-ui';
import { bundledWorkerUrl } from './bundle';
import { describeStorage, openS3Storage, parseStorageUrl, StorageUrlError } from './storage';
import { MIGRATE_USAGE, MigrateUsageError, runMigrate } from './migrate';
import { ObjectStoreUnavailableError } from '../blobs/object-store';
import type { S3ObjectStore } from '../blobs/s3-object-store';
import { bootstrapFirstKey, createOrganizationKey } from '../services/credits.service';
import { openDatabase, type Db } from '../store/db';
import { BackupError, backupDataDir, restoreDataDir } from '../services/backup.service';
import {
  backupProject,
  isProjectArchive,
  restoreProject,
  type Stores,
} from '../services/project-archive.service';
import { LocalObjectStore } from '../blobs/local-object-store';
import {
  ensureOrganization,
  findOrganizationByName,
  grantCredits,
  listApiKeys,
  revokeApiKey,
} from '../store/repositories/organizations.repository';

// `blueline` — contract §11. Run as `npm run --silent blueline -- <command>`.

const USAGE = `Usage: blueline <command> [options]

  serve [--data-dir D] [--host H] [--port P] [--tls-cert F --tls-key F] [--web-root DIR | --no-web]
        [--max-upload-bytes N] [--no-warmup] [--storage s3://BUCKET/PREFIX?endpoint=URL&region=R]
        Run the headless service and the web UI at https://H:P/ (built into out/web when missing or
        older than its sources; --web-root serves another build, --no-web the API alone). Its worker threads start
        with it and warm up on a generated sheet unless --no-warmup: ingesting it (~0.6 s of a core,
        before a worker's first task), then comparing it (~0.5 s, only while no task waits).
        --database postgres://… (default $BLUELINE_DATABASE_URL; needs --storage) runs it in team
        mode: PostgreSQL store, jobs through the shared queue, run here and by any number of
        \`blueline worker\` processes (--no-workers: the API only). Refuses a database that
        \`blueline migrate\` has not brought to this build's schema (exit 3), or a newer one (exit 1).
        --storage (default $BLUELINE_STORAGE_URL) keeps the objects in an S3-compatible bucket
        instead of the data dir; credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or
        AWS_PROFILE), region from AWS_REGION unless the URL names one; pixel work reads a local
        copy kept in <data dir>/object-cache, at most $BLUELINE_OBJECT_CACHE_MB MiB (2048).
  worker --database postgres://… --storage s3://… [--concurrency N] [--data-dir D] [--no-warmup]
        Team mode: run jobs from the shared queue, no HTTP; any number, on any machines. A worker
        killed mid-job loses nothing: its job runs again on another. SIGTERM hands running jobs back.
  keys create --org NAME [--credits N] [--data-dir D]   Create an API key (printed once, only the key).
  keys list [--data-dir D]                               List keys (never the secret).
  keys revoke KEY_ID [--data-dir D]                      Revoke a key.
  credits grant --org NAME --amount N [--data-dir D]     Add credits to an organization.
        keys and credits take --database postgres://… instead of --data-dir for a team server
        (default $BLUELINE_DATABASE_URL unless --data-dir is given; no --storage needed). Refuses
        a database not at this build's schema: unmigrated or older exit 3, newer exit 1.
  backup DIR [--data-dir D]                              Back up the data dir into the new or empty DIR
                                                         (safe while the service runs).
  restore DIR [--data-dir D] [--force]                   Restore backup DIR as the data dir (which must be
                                                         empty; --force moves its contents aside first).
  backup DIR --project ID [--data-dir D | --database URL --storage URL]
        Write one project (records, files, sheets, overlays, changes and reviews, exports, jobs;
        object bytes with their sha256) into the new or empty DIR, from the desktop's data dir or
        from team mode (PostgreSQL + bucket). Safe while services run; refused while the project
        has jobs Queued or Started.
  restore DIR [--data-dir D | --database URL --storage URL] [--organization NAME]
        Restore the project backup DIR into a data dir or into team mode. Its organization is the
        target's of the same id or name, else created (with its API keys, stored as hashes);
        credits never move. Refused when the project id exists in the target.
${MIGRATE_USAGE}

--data-dir defaults to $BLUELINE_DATA_DIR, else the per-user application-data folder.`;

export function defaultDataDir(): string {
  if (process.env.BLUELINE_DATA_DIR) return resolve(process.env.BLUELINE_DATA_DIR);
  if (process.platform === 'darwin')
    return join(homedir(), 'Library', 'Application Support', 'Blueline');
  if (process.platform === 'win32')
    return join(process.env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Blueline');
  return join(process.env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'blueline');
}

class UsageError extends Error {}

function positiveInt(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new UsageError(`Expected a positive integer for --${name} but received '${raw}'.`);
  return Number(raw);
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'tls-cert': { type: 'string' },
      'tls-key': { type: 'string' },
      'web-root': { type: 'string' },
      'no-web': { type: 'boolean' },
      'max-upload-bytes': { type: 'string' },
      'no-warmup': { type: 'boolean' },
      storage: { type: 'string' },
      database: { type: 'string' },
      'no-workers': { type: 'boolean' },
    },
    strict: true,
  });
  const storageUrl = values.storage ?? (process.env.BLUELINE_STORAGE_URL || undefined);
  if (storageUrl !== undefined) parseStorageUrl(storageUrl); // usage errors before anything starts
  const databaseUrl = teamDatabase(values.database, storageUrl);
  if (values['no-workers'] && !databaseUrl)
    throw new UsageError('--no-workers is for team mode (--database postgres://…).');
  if (Boolean(values['tls-cert']) !== Boolean(values['tls-key']))
    throw new UsageError('--tls-cert and --tls-key go together.');
  const port = values.port === undefined ? 7420 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new UsageError(`Expected a port from 0 to 65535 but received '${values.port}'.`);
  const dataDir = resolve(values['data-dir'] ?? defaultDataDir());
  const maxUpload = positiveInt('max-upload-bytes', values['max-upload-bytes']);
  if (values['web-root'] && values['no-web'])
    throw new UsageError('--web-root and --no-web contradict each other; give one.');
  let webRoot: string | undefined;
  if (values['web-root']) {
    webRoot = resolve(values['web-root']);
    if (!existsSync(join(webRoot, 'index.html')))
      throw new UsageError(`--web-root ${webRoot} holds no index.html; build the UI there first.`);
  } else if (!values['no-web']) {
    const ui = ensureWebUi({ log: (line) => console.log(line) });
    if (ui.root !== null) webRoot = ui.root;
    else console.warn(`Web UI: not served (${ui.reason}). The API works without it.`);
  }
  // Team mode: refuse a schema this build does not know before anything else is opened.
  const team = databaseUrl ? await teamQueue(databaseUrl, !values['no-workers']) : undefined;
  let objects: S3ObjectStore | undefined;
  if (storageUrl !== undefined) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    objects = await openS3Storage(storageUrl, dataDir);
  }
  const workerUrl = bundledWorkerUrl();
  const svc = await createService({
    ...(databaseUrl ? { database: databaseUrl, migrate: false } : {}),
    ...(team ? { team } : {}),
    dataDir,
    ...(objects ? { objects } : {}),
    ...(workerUrl ? { workerUrl } : {}),
    host: values.host ?? '127.0.0.1',
    port,
    ...(values['tls-cert'] ? { tlsCert: values['tls-cert'], tlsKey: values['tls-key']! } : {}),
    ...(webRoot ? { webRoot } : {}),
    ...(maxUpload ? { config: { maxUploadBytes: maxUpload } } : {}),
    ...(values['no-warmup'] ? { warmWorkers: false } : {}),
  });
  // Atomic: API processes started at once on one empty database print one first key between them.
  const firstKey = await bootstrapFirstKey(svc.db);
  const { baseUrl, origin } = await svc.start();
  console.log(`Blueline API: ${baseUrl}`);
  console.log(`Data dir: ${dataDir}`);
  if (databaseUrl)
    console.log(
      `Database: ${redactUrl(databaseUrl)} (team mode; jobs ${values['no-workers'] ? 'run by `blueline worker` processes only' : 'run here and by any `blueline worker`'})`,
    );
  if (storageUrl !== undefined)
    console.log(`Storage: ${describeStorage(parseStorageUrl(storageUrl))}`);
  if (firstKey) {
    console.log(`API key (organization "Default", shown once): ${firstKey}`);
    // The key is printed once (contract §11): the sign-in page takes it pasted.
    if (webRoot) console.log(`Web UI: ${origin}/  (sign in with the API key above)`);
  } else if (webRoot) {
    console.log(
      `Web UI: ${origin}/  (sign in with a key from \`blueline keys create --org Default\`)`,
    );
  }
  reportLoopLag();
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: draining requests and stopping; running jobs resume at next start.`);
    svc.stop().then(
      () => {
        objects?.close();
        process.exit(0);
      },
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * With BLUELINE_LOOP_LAG_MS=<interval> set, prints the HTTP thread's event-loop delay every
 * interval as one line `loop-lag {"p50_ms",…}` (reliability/load.ts reads it). Off by default.
 */
function reportLoopLag(): void {
  const every = Number(process.env.BLUELINE_LOOP_LAG_MS);
  if (!Number.isInteger(every) || every < 100) return;
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  setInterval(() => {
    if (h.count === 0) return;
    console.log(
      `loop-lag ${JSON.stringify({ p50_ms: ms(h.percentile(50)), p99_ms: ms(h.percentile(99)), max_ms: ms(h.max), mean_ms: ms(h.mean), samples: h.count })}`,
    );
    h.reset();
  }, every).unref();
}

/** The team-mode database URL of serve/worker (--database, else $BLUELINE_DATABASE_URL). */
function teamDatabase(arg: string | undefined, storageUrl: string | undefined): string | undefined {
  const url = arg ?? (process.env.BLUELINE_DATABASE_URL || undefined);
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new UsageError(
      `--database takes a PostgreSQL URL (postgres://user@host:port/db) but received '${redactUrl(url)}'; leave it out to use the data dir's SQLite store.`,
    );
  if (storageUrl === undefined)
    throw new UsageError(
      '--database needs --storage s3://… too (or $BLUELINE_STORAGE_URL): every process of a team server reads and writes the same objects.',
    );
  return url;
}

const redactUrl = (url: string) => url.replace(/\/\/[^@/]*@/, '//…@');

/**
 * The queue of a team server, once its schema is known to match this build (refuses otherwise,
 * like the store: `blueline migrate --database URL` creates and upgrades both).
 */
async function teamQueue(url: string, work: boolean) {
  surviveConnectionLoss(consoleLogger);
  const check = new PgDb(new pg.Pool({ connectionString: url, max: 1 }));
  try {
    await checkPostgresSchema(check);
  } finally {
    await check.close();
  }
  try {
    await checkQueueSchema(url);
  } catch (err) {
    throw new SchemaMismatchError(
      `The job queue's schema in this database is not ready for this Blueline (${(err as Error).message.replace(/\.$/, '')}). Run \`blueline migrate --database URL\` first.`,
      'pending',
    );
  }
  return {
    dispatcher: createBullmqDispatcher({ url, log: consoleLogger, ...dispatcherTimingsFromEnv() }),
    feed: createPgJobFeed(url, consoleLogger),
    work,
    ...sweepFromEnv(),
  };
}

async function worker(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      database: { type: 'string' },
      storage: { type: 'string' },
      concurrency: { type: 'string' },
      'data-dir': { type: 'string' },
      'no-warmup': { type: 'boolean' },
    },
    strict: true,
  });
  const storageUrl = values.storage ?? (process.env.BLUELINE_STORAGE_URL || undefined);
  if (storageUrl !== undefined) parseStorageUrl(storageUrl);
  const databaseUrl = teamDatabase(values.database, storageUrl);
  if (!databaseUrl)
    throw new UsageError(
      'worker needs --database postgres://… and --storage s3://… (or $BLUELINE_DATABASE_URL and $BLUELINE_STORAGE_URL).',
    );
  const concurrency = positiveInt('concurrency', values.concurrency);
  // The data dir holds only the local copy of objects that pixel work reads.
  const dataDir = resolve(values['data-dir'] ?? defaultDataDir());
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const { dispatcher, feed } = await teamQueue(databaseUrl, true);
  await dispatcher.close();
  await feed.close();
  const objects = await openS3Storage(storageUrl!, dataDir);
  const workerUrl = bundledWorkerUrl();
  const w = await createTeamWorker({
    database: databaseUrl,
    objects,
    log: consoleLogger,
    warmWorkers: !values['no-warmup'],
    ...(concurrency ? { concurrency } : {}),
    ...(workerUrl ? { workerUrl } : {}),
  });
  await w.start();
  console.log(
    `Blueline worker ${process.pid}: running jobs from ${redactUrl(databaseUrl)} (${concurrency ?? w.pool.size} at once; storage ${describeStorage(parseStorageUrl(storageUrl!))})`,
  );
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: stopping; running jobs go back to the queue.`);
    // Bounded: with the database unreachable the queue's close would wait for it forever; the
    // queue hands this worker's jobs out again after its lease either way.
    setTimeout(() => {
      console.error('Stopping took over 30 s (database unreachable?); exiting anyway.');
      process.exit(1);
    }, 30_000).unref();
    w.stop().then(
      () => {
        objects.close();
        process.exit(0);
      },
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * The store `keys` and `credits` work on: the data dir's SQLite file (--data-dir), or a team
 * server's PostgreSQL (--database postgres://…, default $BLUELINE_DATABASE_URL unless --data-dir
 * is given). PostgreSQL must be at exactly this build's schema, as for serve and worker:
 * unmigrated or older exits 3, newer or another Blueline's exits 1 (SchemaMismatchError).
 */
async function withDb<T>(
  values: { 'data-dir'?: string; database?: string },
  fn: (db: Db) => Promise<T>,
): Promise<T> {
  const explicitDir = values['data-dir'] !== undefined;
  const database =
    values.database ?? (explicitDir ? undefined : process.env.BLUELINE_DATABASE_URL || undefined);
  let db: Db;
  if (database !== undefined) {
    if (explicitDir) throw new UsageError('Give --data-dir or --database, not both.');
    if (!/^postgres(ql)?:\/\//.test(database))
      throw new UsageError(
        `--database takes a PostgreSQL URL (postgres://user@host:port/db) but received '${redactUrl(database)}'; leave it out to use the data dir's SQLite store.`,
      );
    const { openPostgres } = await import('../store/pg-db');
    db = await openPostgres(database, { max: 2, migrate: false });
  } else {
    const dataDir = resolve(values['data-dir'] ?? defaultDataDir());
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = openDatabase(join(dataDir, 'blueline.db'));
  }
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

async function keys(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      org: { type: 'string' },
      credits: { type: 'string' },
      'data-dir': { type: 'string' },
      database: { type: 'string' },
      label: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (sub === 'create') {
    if (!values.org) throw new UsageError('keys create needs --org NAME.');
    const credits = values.credits === undefined ? undefined : Number(values.credits);
    if (credits !== undefined && (!Number.isInteger(credits) || credits < 0))
      throw new UsageError(
        `Expected a non-negative integer for --credits but received '${values.credits}'.`,
      );
    await withDb(values, async (db) => {
      const { secret } = await createOrganizationKey(db, {
        organization: values.org!,
        ...(credits ? { credits } : {}),
        label: values.label ?? null,
      });
      console.log(secret);
    });
    return;
  }
  if (sub === 'list') {
    await withDb(values, async (db) => {
      for (const k of await listApiKeys(db)) {
        console.log(
          [
            k.id,
            k.organization_name,
            k.key_hint,
            k.created_at,
            k.revoked_at ? `revoked ${k.revoked_at}` : 'active',
          ].join('\t'),
        );
      }
    });
    return;
  }
  if (sub === 'revoke') {
    const id = positionals[0];
    if (!id) throw new UsageError('keys revoke needs KEY_ID (see `keys list`).');
    await withDb(values, async (db) => {
      if (!(await revokeApiKey(db, id))) throw new UsageError(`No active key with id '${id}'.`);
      console.log(`revoked ${id}`);
    });
    return;
  }
  throw new UsageError(`Unknown keys command '${sub ?? ''}'.`);
}

async function credits(argv: string[]): Promise<void> {
  const [sub, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      org: { type: 'string' },
      amount: { type: 'string' },
      'data-dir': { type: 'string' },
      database: { type: 'string' },
    },
    strict: true,
  });
  if (sub !== 'grant') throw new UsageError(`Unknown credits command '${sub ?? ''}'.`);
  if (!values.org) throw new UsageError('credits grant needs --org NAME.');
  const amount = positiveInt('amount', values.amount);
  if (!amount) throw new UsageError('credits grant needs --amount N.');
  await withDb(values, async (db) => {
    const org =
      (await findOrganizationByName(db, values.org!)) ??
      (await ensureOrganization(db, values.org!));
    const after = await grantCredits(db, org.id, amount, 'grant');
    console.log(`${after.name}: balance ${after.credit_balance}`);
  });
}

interface StoreArgs {
  'data-dir'?: string;
  database?: string;
  storage?: string;
}

/**
 * The store `--data-dir` (SQLite and the data dir's files) or `--database` + `--storage` (team
 * mode) names; without either, $BLUELINE_DATABASE_URL and $BLUELINE_STORAGE_URL, else the default
 * data dir.
 */
async function openStores(values: StoreArgs): Promise<Stores & { close(): Promise<void> }> {
  const explicitDir = values['data-dir'] !== undefined;
  const database =
    values.database ?? (explicitDir ? undefined : process.env.BLUELINE_DATABASE_URL || undefined);
  const storage =
    values.storage ?? (explicitDir ? undefined : process.env.BLUELINE_STORAGE_URL || undefined);
  if (database !== undefined && explicitDir)
    throw new UsageError('Give --data-dir or --database, not both.');
  if (storage !== undefined) parseStorageUrl(storage);
  if (database !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(database))
      throw new UsageError(
        `Expected a postgres://… URL for --database but received '${database.replace(/\/\/[^@/]*@/, '//…@')}'.`,
      );
    if (storage === undefined)
      throw new UsageError(
        '--database needs --storage s3://…: in team mode the objects live in a bucket.',
      );
    const { openPostgres } = await import('../store/pg-db');
    const cache = mkdtempSync(join(tmpdir(), 'blueline-archive-cache-'));
    let objects: S3ObjectStore | undefined;
    try {
      objects = await openS3Storage(storage, cache);
      const db = await openPostgres(database, { max: 2 });
      const s3 = objects;
      return {
        db,
        objects: s3,
        async close() {
          await db.close();
          s3.close();
          rmSync(cache, { recursive: true, force: true });
        },
      };
    } catch (err) {
      objects?.close();
      rmSync(cache, { recursive: true, force: true });
      throw err;
    }
  }
  const dataDir = resolve(values['data-dir'] ?? defaultDataDir());
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const db = openDatabase(join(dataDir, 'blueline.db'));
  const s3 = storage !== undefined ? await openS3Storage(storage, dataDir) : undefined;
  return {
    db,
    objects: s3 ?? new LocalObjectStore({ dataDir }),
    async close() {
      await db.close();
      s3?.close();
    },
  };
}

/** Where a store is, for messages (never credentials). */
function describeTarget(values: StoreArgs): string {
  const database =
    values.database ??
    (values['data-dir'] === undefined ? process.env.BLUELINE_DATABASE_URL || undefined : undefined);
  if (database !== undefined) {
    const u = new URL(database);
    return `PostgreSQL ${u.host}${u.pathname}`;
  }
  return `the data dir ${resolve(values['data-dir'] ?? defaultDataDir())}`;
}

async function backup(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      project: { type: 'string' },
      database: { type: 'string' },
      storage: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1) throw new UsageError('backup needs exactly one DIR.');
  if (values.project !== undefined) {
    const stores = await openStores(values);
    try {
      const m = await backupProject(stores, values.project, positionals[0]!, (msg) =>
        console.error(`backup: ${msg}`),
      );
      console.log(
        `Backed up project ${m.project.id} ('${m.project.name}') of ${describeTarget(values)} to ${resolve(positionals[0]!)}: ${Object.values(m.tables).reduce((a, b) => a + b, 0)} records (schema ${m.schema_version}), ${m.objects.length} objects (${m.object_bytes} bytes).`,
      );
      if (m.missing_objects.length > 0)
        console.error(
          `warning: ${m.missing_objects.length} objects the project's records name were already missing in the source (e.g. ${m.missing_objects[0]}).`,
        );
    } finally {
      await stores.close();
    }
    return;
  }
  if (values.database !== undefined || values.storage !== undefined)
    throw new UsageError(
      'In team mode, back up one project at a time (--project ID); back up the whole PostgreSQL database and bucket with their own tools (see the README).',
    );
  const dataDir = resolve(values['data-dir'] ?? defaultDataDir());
  const m = await backupDataDir(dataDir, positionals[0]!, (msg) => console.error(`backup: ${msg}`));
  console.log(
    `Backed up ${dataDir} to ${resolve(positionals[0]!)}: database ${m.db_bytes} bytes (schema ${m.schema_version}), ${m.objects} objects (${m.object_bytes} bytes), ${m.private_files.length} secret/TLS files.`,
  );
  if (m.missing_objects.length > 0)
    console.error(
      `warning: ${m.missing_objects.length} objects the database references were already missing in the data dir (e.g. ${m.missing_objects[0]}).`,
    );
}

async function restore(argv: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      force: { type: 'boolean' },
      database: { type: 'string' },
      storage: { type: 'string' },
      organization: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (positionals.length !== 1)
    throw new UsageError('restore needs exactly one DIR (a folder made by `blueline backup`).');
  if (await isProjectArchive(positionals[0]!)) {
    if (values.force)
      throw new UsageError(
        '--force is for data-dir backups; a project restores beside the projects already there.',
      );
    const stores = await openStores(values);
    try {
      const r = await restoreProject(stores, positionals[0]!, {
        ...(values.organization !== undefined ? { organizationName: values.organization } : {}),
        progress: (msg) => console.error(`restore: ${msg}`),
      });
      console.log(
        `Restored project ${r.projectId} ('${r.manifest.project.name}') into ${describeTarget(values)}: ${r.rows} records, ${r.objects} objects; organization '${r.organization.name}' (${r.organization.created ? `created, ${r.organization.keys} API keys came along` : 'existing'}).`,
      );
    } finally {
      await stores.close();
    }
    return;
  }
  if (values.database !== undefined || values.storage !== undefined || values.organization)
    throw new UsageError(
      `${resolve(positionals[0]!)} is not a project backup; a data-dir backup restores only as a data dir (--data-dir). To move projects into team mode, restore it as a data dir and run \`backup DIR --project ID --data-dir D\` for each.`,
    );
  const dataDir = resolve(values['data-dir'] ?? defaultDataDir());
  const r = await restoreDataDir(positionals[0]!, dataDir, {
    force: values.force ?? false,
    progress: (msg) => console.error(`restore: ${msg}`),
  });
  if (r.movedAside) console.log(`Moved the previous contents of ${dataDir} to ${r.movedAside}.`);
  console.log(
    `Restored the backup of ${r.manifest.created_at} into ${dataDir}: ${r.manifest.objects} objects. Start it with \`blueline serve --data-dir ${dataDir}\`.`,
  );
}

/** `migrate --database postgres://…`: the store's migrations, then the job queue's own schema. */
async function migratePostgresCommand(url: string, check: boolean): Promise<number> {
  const where = redactUrl(url);
  const pgDb = new PgDb(new pg.Pool({ connectionString: url, max: 1 }));
  try {
    if (check) {
      try {
        await checkPostgresSchema(pgDb);
        await checkQueueSchema(url);
      } catch (err) {
        if (err instanceof SchemaMismatchError && err.kind !== 'pending') {
          console.error(`blueline migrate: ${where}: ${err.message}`);
          return 1;
        }
        console.log(`${where}: migrations pending (${(err as Error).message})`);
        return 3;
      }
      console.log(`${where}: schema version ${PG_MIGRATIONS.length} and the job queue, current.`);
      return 0;
    }
    let applied: number;
    try {
      ({ applied } = await migratePostgres(pgDb));
    } catch (err) {
      if (err instanceof MigrationError) {
        console.error(`blueline migrate: ${where}: ${err.message}`);
        return 1;
      }
      throw err;
    }
    const queueVersion = await migrateQueueSchema(url);
    console.log(
      `${where}: ${applied === 0 ? 'already current' : `applied ${applied} migration${applied === 1 ? '' : 's'}`}; schema version ${PG_MIGRATIONS.length}; job queue schema version ${queueVersion}.`,
    );
    return 0;
  } finally {
    await pgDb.close();
  }
}

async function migrateCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'data-dir': { type: 'string' },
      database: { type: 'string' },
      check: { type: 'boolean' },
    },
    strict: true,
  });
  // $BLUELINE_DATABASE_URL stands in for --database unless --data-dir is given.
  const database =
    values.database ??
    (values['data-dir'] === undefined ? process.env.BLUELINE_DATABASE_URL || undefined : undefined);
  if (database !== undefined && /^postgres(ql)?:\/\//.test(database)) {
    if (values['data-dir'] !== undefined)
      throw new MigrateUsageError('Give --data-dir or --database, not both.');
    return await migratePostgresCommand(database, values.check ?? false);
  }
  return runMigrate({
    ...(database !== undefined ? { database } : {}),
    ...(database === undefined || values['data-dir'] !== undefined
      ? { dataDir: resolve(values['data-dir'] ?? defaultDataDir()) }
      : {}),
    check: values.check ?? false,
  });
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    if (cmd === 'serve') await serve(rest);
    else if (cmd === 'keys') await keys(rest);
    else if (cmd === 'credits') await credits(rest);
    else if (cmd === 'backup') await backup(rest);
    else if (cmd === 'restore') await restore(rest);
    else if (cmd === 'migrate') return await migrateCommand(rest);
    else if (cmd === 'worker') await worker(rest);
    else if (cmd === undefined || cmd === 'help' || cmd === '--help' || cmd === '-h') {
      console.log(USAGE);
      return cmd === undefined ? 2 : 0;
    } else throw new UsageError(`Unknown command '${cmd}'.`);
    return 0;
  } catch (err) {
    if (err instanceof SchemaMismatchError) {
      // 3: not migrated yet (as `migrate --check`); 1: newer or another Blueline's.
      console.error(`blueline: ${err.message}`);
      return err.kind === 'pending' ? 3 : 1;
    }
    if (err instanceof BackupError || err instanceof ObjectStoreUnavailableError) {
      console.error(`blueline: ${err.message}`);
      return 1;
    }
    if (
      err instanceof UsageError ||
      err instanceof StorageUrlError ||
      err instanceof MigrateUsageError ||
      (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      console.error(`blueline: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}

/**
 * `serve` and `worker` run the service's pixel work: on Linux they start themselves again with
 * glibc's malloc settings (core/jobs/malloc-tuning.ts; read only when a process starts) unless they
 * already have them, passing arguments, standard streams, termination signals and the exit code
 * through. Undefined when this process runs the command itself.
 */
function restartWithMallocTuning(argv: string[]): Promise<number> | undefined {
  if ((argv[0] !== 'serve' && argv[0] !== 'worker') || !needsMallocTuning()) return undefined;
  // An IPC channel tells the child when this process is gone, even killed (see below).
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...withMallocTuning(process.env), [RESTARTED]: '1' },
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, forward);
  return new Promise((done) => {
    child.on('error', (err) => {
      console.error('blueline:', err.message);
      done(1);
    });
    child.on('exit', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

/** Set in the environment of the command restartWithMallocTuning starts. */
const RESTARTED = 'BLUELINE_RESTARTED_WITH_MALLOC_TUNING';

// The restarted command ends as its starter does: a starter killed outright (SIGKILL, a crash) takes
// it along at once, as if it had been killed itself (a supervisor or test that kills the process it
// started must not leave the service running). Its own children do not inherit the mark.
if (process.env[RESTARTED] === '1' && process.channel) {
  delete process.env[RESTARTED];
  process.channel.unref();
  process.on('disconnect', () => process.kill(process.pid, 'SIGKILL'));
}

(restartWithMallocTuning(process.argv.slice(2)) ?? main(process.argv.slice(2))).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    console.error('blueline:', err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
