import pg from 'pg';
import {
  checkApplied,
  checkNumbering,
  MigrationError,
  type Db,
  type RunResult,
  type Statement,
  type TransactionOptions,
} from './db';
import { PG_MIGRATIONS } from './migrations/postgres';
import { ApiError } from '../domain/errors';
import type { Migration } from './migrations/index';

// The store on PostgreSQL (team mode) through node-postgres (pg 8): the same `Db` interface as
// SQLite's. Repositories write SQL with `?` (or, bound from one object, `@name`) placeholders;
// they become `$1…$n` here, once per SQL text. Counts and other int8 values come back as numbers
// (the ids and amounts Blueline stores are far below 2^53), as better-sqlite3 returns them.

pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

interface Compiled {
  text: string;
  /** What each $n is bound from: the k-th positional value, or the value named so. */
  slots: ({ pos: number } | { name: string })[];
}

const compiledCache = new Map<string, Compiled>();

/**
 * `?` → `$n` and `@name` → `$n` (one number per distinct name), outside string literals, quoted
 * identifiers and comments. Code-defined SQL only, so a cache by text is bounded. As with
 * better-sqlite3, one statement may use both: `?` take the positional values in order, `@name`
 * the fields of the one object among the values.
 */
export function compileSql(sql: string): Compiled {
  const hit = compiledCache.get(sql);
  if (hit) return hit;
  let out = '';
  let positional = 0;
  const slots: Compiled['slots'] = [];
  const named = new Map<string, number>();
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const j = end < 0 ? sql.length : end;
      out += sql.slice(i, j + 1);
      i = j;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const j = end < 0 ? sql.length : end;
      out += sql.slice(i, j);
      i = j - 1;
    } else if (c === '?') {
      out += `$${slots.push({ pos: positional++ })}`;
    } else if (c === '@' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /\w/.test(sql[j]!)) j++;
      const name = sql.slice(i + 1, j);
      let k = named.get(name);
      if (k === undefined) named.set(name, (k = slots.push({ name })));
      out += `$${k}`;
      i = j - 1;
    } else out += c;
  }
  const compiled = { text: out, slots };
  compiledCache.set(sql, compiled);
  return compiled;
}

function bind(c: Compiled, params: unknown[]): unknown[] {
  const isObject = (p: unknown) =>
    p !== null && typeof p === 'object' && !Array.isArray(p) && !Buffer.isBuffer(p);
  const obj = (params.find(isObject) ?? {}) as Record<string, unknown>;
  const positional = params.filter((p) => !isObject(p));
  return c.slots.map((slot) => {
    if ('pos' in slot) return toPg(positional[slot.pos]);
    if (!(slot.name in obj)) throw new Error(`Missing value for @${slot.name}`);
    return toPg(obj[slot.name]);
  });
}

/** Values as SQLite stores them: booleans are 0/1 integers there, and so they are here. */
function toPg(v: unknown): unknown {
  if (v === true) return 1;
  if (v === false) return 0;
  if (v === undefined) return null;
  return v;
}

type Queryable = pg.Pool | pg.PoolClient;

/**
 * PostgreSQL's text cannot hold U+0000 and refuses a query that binds it (22021, "invalid byte
 * sequence for encoding UTF8: 0x00"); SQLite stores and compares such text. Request text reaches
 * queries as ids, filters and names, so the refusal is the request's fault: a 400 that says so,
 * never a 500. Other errors pass unchanged.
 */
function nulRefusal(err: unknown, values: unknown[]): ApiError | null {
  const code = (err as { code?: unknown }).code;
  if (code !== '22021' && code !== '22P05') return null;
  if (!values.some((v) => typeof v === 'string' && v.includes('\u0000'))) return null;
  return new ApiError(
    'validation_error',
    'Text with a NUL character (U+0000) cannot be stored or looked up; remove it from the request.',
  );
}

class PgStatement implements Statement {
  private readonly c: Compiled;
  constructor(
    private readonly on: Queryable,
    /** The SQL as written (SqliteStatement has it too: tests count statements by it). */
    readonly sql: string,
  ) {
    this.c = compileSql(sql);
  }

  private async query(params: unknown[]): Promise<pg.QueryResult> {
    const values = bind(this.c, params);
    try {
      return await this.on.query({ text: this.c.text, values });
    } catch (err) {
      throw nulRefusal(err, values) ?? err;
    }
  }

  async get(...params: unknown[]): Promise<unknown> {
    return (await this.query(params)).rows[0];
  }

  async all(...params: unknown[]): Promise<unknown[]> {
    return (await this.query(params)).rows;
  }

  async run(...params: unknown[]): Promise<RunResult> {
    return { changes: (await this.query(params)).rowCount ?? 0 };
  }
}

/** The store over a pg pool. Transactions take one pooled client for their whole length. */
export class PgDb implements Db {
  readonly dialect = 'postgres' as const;
  readonly inTransaction = false;
  private closed = false;

  constructor(readonly pool: pg.Pool) {}

  get root(): Db {
    return this;
  }

  get open(): boolean {
    return !this.closed;
  }

  prepare(sql: string): Statement {
    return new PgStatement(this.pool, sql);
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  async transaction<T>(fn: (tx: Db) => Promise<T>, _opts?: TransactionOptions): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      let result: T;
      const tx = new PgTx(client, this);
      try {
        result = await fn(tx);
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
      await client.query('COMMIT');
      for (const hook of tx.commitHooks) hook();
      return result;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}

class PgTx implements Db {
  readonly dialect = 'postgres' as const;
  readonly inTransaction = true;
  readonly open = true;
  private depth = 0;
  /** Run by PgDb.transaction after COMMIT (onCommit). */
  readonly commitHooks: (() => void)[] = [];

  constructor(
    private readonly client: pg.PoolClient,
    readonly root: Db,
  ) {}

  onCommit(fn: () => void): void {
    this.commitHooks.push(fn);
  }

  prepare(sql: string): Statement {
    return new PgStatement(this.client, sql);
  }

  async exec(sql: string): Promise<void> {
    await this.client.query(sql);
  }

  async transaction<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    const name = `sp${++this.depth}`;
    await this.client.query(`SAVEPOINT ${name}`);
    try {
      const result = await fn(this);
      await this.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await this.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
      throw err;
    } finally {
      this.depth--;
    }
  }

  close(): Promise<void> {
    return Promise.reject(new Error('A transaction handle cannot close the store.'));
  }
}

/** Any number to lock on: servers starting together take turns migrating (pg_advisory_xact_lock). */
const MIGRATION_LOCK = 74_2021_0001;

/**
 * Applies pending PostgreSQL migrations in one transaction under an advisory lock, so processes
 * starting at once never race: the second waits, then finds nothing to do. Refuses a database
 * migrated by a newer Blueline with a message that says so.
 */
export async function migratePostgres(
  db: Db,
  migrations: readonly Migration[] = PG_MIGRATIONS,
): Promise<{ applied: number }> {
  checkNumbering(migrations);
  return await db.transaction(async (tx) => {
    await tx.prepare('SELECT pg_advisory_xact_lock(?)').get(MIGRATION_LOCK);
    await tx.exec(
      `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`,
    );
    const applied = (await tx
      .prepare('SELECT version, name FROM schema_migrations ORDER BY version')
      .all()) as { version: number; name: string }[];
    if (applied.length > migrations.length) {
      const newest = applied[applied.length - 1]!;
      throw new MigrationError(
        `The database was migrated by a newer Blueline (schema version ${newest.version} '${newest.name}'; this Blueline knows up to ${migrations.length}); refusing to start. Run a Blueline at least as new as the one that migrated it.`,
      );
    }
    checkApplied(applied, migrations);
    for (const m of migrations.slice(applied.length)) {
      await tx.exec(m.sql);
      await tx
        .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
        .run(m.version, m.name, new Date().toISOString());
    }
    return { applied: migrations.length - applied.length };
  });
}

/** A database whose schema is not the one this build knows (team mode's serve and worker). */
export class SchemaMismatchError extends MigrationError {
  constructor(
    message: string,
    /** 'pending': older than this build (run `blueline migrate`); 'newer' or 'different'. */
    readonly kind: 'pending' | 'newer' | 'different',
  ) {
    super(message);
    this.name = 'SchemaMismatchError';
  }
}

/**
 * Refuses (SchemaMismatchError) a database whose applied migrations are not exactly `migrations`:
 * unmigrated or older (run `blueline migrate`), newer, or numbered by a different Blueline.
 * Changes nothing.
 */
export async function checkPostgresSchema(
  db: Db,
  migrations: readonly Migration[] = PG_MIGRATIONS,
): Promise<void> {
  const table = await db.prepare(`SELECT to_regclass('schema_migrations') AS t`).get();
  const applied = (table as { t: string | null }).t
    ? ((await db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all()) as {
        version: number;
        name: string;
      }[])
    : [];
  const known = migrations.length;
  const mismatch = applied.find(
    (row, i) => i < known && (row.version !== i + 1 || migrations[i]!.name !== row.name),
  );
  if (mismatch)
    throw new SchemaMismatchError(
      `The database has migration ${mismatch.version} '${mismatch.name}', which this Blueline numbers differently: it was written by a different Blueline. Refusing to start.`,
      'different',
    );
  if (applied.length > known) {
    const newest = applied[applied.length - 1]!;
    throw new SchemaMismatchError(
      `The database is at schema version ${newest.version} ('${newest.name}'), newer than this Blueline (${known}). Refusing to start: run a Blueline at least as new as the one that migrated it.`,
      'newer',
    );
  }
  if (applied.length < known)
    throw new SchemaMismatchError(
      `The database is at schema version ${applied.length}${applied.length === 0 ? ' (not migrated)' : ''}; this Blueline needs ${known} ('${migrations[known - 1]!.name}'). Refusing to start: run \`blueline migrate --database URL\` first.`,
      'pending',
    );
}

/**
 * Connects to `url` (postgres://…), applies pending migrations (or, with `migrate: false`, refuses
 * a schema that is not exactly this build's), and returns the store.
 */
export async function openPostgres(
  url: string,
  opts: { max?: number; migrations?: readonly Migration[]; migrate?: boolean } = {},
): Promise<PgDb> {
  const pool = new pg.Pool({ connectionString: url, max: opts.max ?? 8 });
  // An idle client that loses its server (a restart) must not take the process down.
  pool.on('error', () => {});
  const db = new PgDb(pool);
  try {
    if (opts.migrate === false) await checkPostgresSchema(db, opts.migrations);
    else await migratePostgres(db, opts.migrations);
  } catch (err) {
    await db.close();
    throw err;
  }
  return db;
}
