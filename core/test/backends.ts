import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openDatabase, type Db } from '../store/db';

// The stores the store-level tests run over. SQLite always (the desktop and the default of
// `npm test`); PostgreSQL too when BLUELINE_TEST_DATABASE names a server
// (postgres://user@host:port/db, e.g. from scripts/pg-test-cluster.sh): each test store is then a
// fresh database on it, created from nothing and dropped afterwards.

export type StoreKind = 'sqlite' | 'postgres';

export const PG_URL = process.env.BLUELINE_TEST_DATABASE;

export const STORES: readonly StoreKind[] = PG_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestStore {
  db: Db;
  /** The URL (PostgreSQL) or file (SQLite) the store was opened on. */
  location: string;
  cleanup(): Promise<void>;
}

export async function openTestStore(kind: StoreKind): Promise<TestStore> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'blueline-store-'));
    const file = join(dir, 'blueline.db');
    const db = openDatabase(file);
    return {
      db,
      location: file,
      async cleanup() {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const { openPostgres } = await import('../store/pg-db');
  const created = await createPgTestDatabase();
  const db = await openPostgres(created.url, { max: 4 });
  return {
    db,
    location: created.url,
    async cleanup() {
      await db.close();
      await created.drop();
    },
  };
}

/** A new, empty database on the BLUELINE_TEST_DATABASE server; `drop` removes it. */
export async function createPgTestDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const name = `bl_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(PG_URL!);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = new pg.Client({ connectionString: PG_URL });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

/**
 * The files that hold a store's bytes, for tests that look for what must never be stored (a
 * plain API key): SQLite's database, WAL and shared-memory files in the data dir; on PostgreSQL,
 * after a CHECKPOINT (so every written row is in its table's files), the files of the test's
 * database and the server's WAL segments. The test cluster runs on this machine
 * (scripts/pg-test-cluster.sh), so its data directory is readable here.
 */
export async function storeFiles(db: Db, dataDir: string): Promise<string[]> {
  if (db.dialect === 'sqlite')
    return readdirSync(dataDir)
      .filter((f) => f.startsWith('blueline.db'))
      .map((f) => join(dataDir, f));
  await db.exec('CHECKPOINT');
  const dir = ((await db.prepare('SHOW data_directory').get()) as { data_directory: string })
    .data_directory;
  const oid = (
    (await db.prepare('SELECT oid FROM pg_database WHERE datname = current_database()').get()) as {
      oid: number;
    }
  ).oid;
  const under = (d: string) =>
    readdirSync(d)
      .map((f) => join(d, f))
      .filter((f) => statSync(f).isFile());
  return [...under(join(dir, 'base', String(oid))), ...under(join(dir, 'pg_wal'))];
}
