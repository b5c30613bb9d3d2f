// `blueline keys …` and `blueline credits …` on a team server's PostgreSQL (issue 21): the same
// commands, output and exit codes as on the desktop's SQLite data dir (core/test/cli.test.ts), with
// --database postgres://… or $BLUELINE_DATABASE_URL; a database not at this build's schema refused
// like serve and worker refuse it (3 unmigrated, 1 newer). And the first start of API processes on
// one empty database: concurrent bootstraps on separate pools create exactly one organization and
// one first key (this one fails without the lock: with the check outside the transaction, or
// inside it but unlocked, pools all see no organization: a second key or a duplicate-key error),
// and three real `serve` processes started together print one key between them (end to end; their
// start-up times differ by seconds, so that test alone would seldom catch the race).
//
// Needs PostgreSQL: $BLUELINE_TEST_DATABASE (scripts/pg-test-cluster.sh start prints one). Without
// it the file is skipped, saying so, except under CI=true, where it starts its own throwaway cluster
// rather than skip (teamTestServer).
import { spawn } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../blobs/local-object-store';
import { startS3rver, TEST_BUCKET, TEST_CREDENTIALS } from '../blobs/s3rver.test-support';
import { migrateQueueSchema } from '../jobs/bullmq-dispatcher';
import { createTeamDatabase, teamTestServer } from '../jobs/team.process.test-support';
import { createService } from '../service';
import { bootstrapFirstKey, DEFAULT_ORGANIZATION_CREDITS } from '../services/credits.service';
import { openPostgres, type PgDb } from '../store/pg-db';
import { PG_MIGRATIONS } from '../store/migrations/postgres';
import {
  ensureOrganization,
  findActiveKey,
  hashKey,
} from '../store/repositories/organizations.repository';
import { httpsRequest } from '../test/harness';

const server = teamTestServer();
if (!server)
  console.warn(
    'team-keys.test.ts skipped: set BLUELINE_TEST_DATABASE=postgres://… (scripts/pg-test-cluster.sh start prints one) to run `keys`/`credits` and the first-key bootstrap on PostgreSQL.',
  );

const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const cleanups: (() => Promise<void> | void)[] = [];

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  server?.stop();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `blueline ARGS` as a user does (a child process), with only `env`'s Blueline variables. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const childEnv = { ...process.env };
  delete childEnv.BLUELINE_DATA_DIR;
  delete childEnv.BLUELINE_DATABASE_URL;
  delete childEnv.BLUELINE_STORAGE_URL;
  Object.assign(childEnv, env);
  return new Promise((done, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/cli/main.ts', ...args], {
      cwd: repoRoot,
      env: childEnv,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`blueline ${args.join(' ')} did not finish in time; stderr: ${stderr}`));
    }, 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

/** A new database on the test server; migrated unless `migrate: false`; dropped after the file. */
async function database(migrate = true): Promise<{ url: string; db: PgDb }> {
  const created = await createTeamDatabase(server!.url);
  const db = migrate
    ? await openPostgres(created.url, { max: 2 })
    : await openPostgres(created.url, { max: 2, migrations: [] });
  cleanups.push(async () => {
    await db.close();
    await created.drop();
  });
  return { url: created.url, db };
}

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** An API process (no workers run) on the team database: `status(key)` of GET /v1/projects. */
async function api(url: string): Promise<{ status(key: string): Promise<number> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'blueline-team-keys-api-'));
  const svc = await createService({
    dataDir,
    objects: new LocalObjectStore({ dataDir }),
    database: url,
    migrate: false,
    port: 0,
    workers: 1,
    warmWorkers: false,
    log: silent,
  });
  const { origin } = await svc.start();
  const agent = new https.Agent({ ca: svc.caCertPem });
  cleanups.push(async () => {
    agent.destroy();
    await svc.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    status: async (key) =>
      (await httpsRequest(agent, origin, 'GET', '/v1/projects', { key })).status,
  };
}

async function one<T>(db: PgDb, sql: string, ...params: unknown[]): Promise<T> {
  return (await db.prepare(sql).get(...params)) as T;
}

describe.skipIf(!server)('blueline keys and credits on PostgreSQL', () => {
  it('create prints only a key stored by hash; list never shows a secret; revoke; credits grant adds; --database or $BLUELINE_DATABASE_URL', async () => {
    const { url, db } = await database();
    const server = await api(url);
    const created = await cli([
      'keys',
      'create',
      '--org',
      'Acme Builders',
      '--credits',
      '5',
      '--database',
      url,
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^sk_[A-Za-z0-9]{40}\n$/);
    const acmeKey = created.stdout.trim();
    const row = await findActiveKey(db, acmeKey);
    expect(row).toBeDefined();
    expect(row!.key_hash).toBe(hashKey(acmeKey));
    const acme = await one<{ id: string; credit_balance: number }>(
      db,
      'SELECT id, credit_balance FROM organizations WHERE name = ?',
      'Acme Builders',
    );
    expect(row!.organization_id).toBe(acme.id);
    expect(acme.credit_balance).toBe(5);
    expect(await server.status(acmeKey)).toBe(200);

    // Through $BLUELINE_DATABASE_URL: a second key of the same organization, not a new one.
    const again = await cli(['keys', 'create', '--org', 'Acme Builders'], {
      BLUELINE_DATABASE_URL: url,
    });
    expect(again.code, again.stderr).toBe(0);
    const acmeKey2 = again.stdout.trim();
    expect(acmeKey2).toMatch(/^sk_[A-Za-z0-9]{40}$/);
    expect(acmeKey2).not.toBe(acmeKey);
    expect((await findActiveKey(db, acmeKey2))!.organization_id).toBe(acme.id);
    expect((await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM organizations')).n).toBe(
      1,
    );

    const list = await cli(['keys', 'list'], { BLUELINE_DATABASE_URL: url });
    expect(list.code, list.stderr).toBe(0);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const secret of [acmeKey, acmeKey2]) {
      expect(list.stdout).not.toContain(secret);
      expect(list.stdout).not.toContain(secret.slice(3, 20));
    }
    const line = lines.find((l) => l.includes(acmeKey.slice(-4)))!;
    expect(line.split('\t')).toEqual([
      row!.id,
      'Acme Builders',
      `sk_…${acmeKey.slice(-4)}`,
      row!.created_at,
      'active',
    ]);

    const revoked = await cli(['keys', 'revoke', row!.id, '--database', url]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`revoked ${row!.id}\n`);
    expect(await findActiveKey(db, acmeKey)).toBeUndefined();
    expect(await findActiveKey(db, acmeKey2)).toBeDefined();
    // The running API process refuses the revoked key at its next request.
    expect(await server.status(acmeKey)).toBe(401);
    expect(await server.status(acmeKey2)).toBe(200);
    const listed = await cli(['keys', 'list', '--database', url]);
    expect(listed.stdout.split('\n').find((l) => l.startsWith(row!.id))).toMatch(/\trevoked /);
    const twice = await cli(['keys', 'revoke', row!.id, '--database', url]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`No active key with id '${row!.id}'.`);

    const granted = await cli([
      'credits',
      'grant',
      '--org',
      'Acme Builders',
      '--amount',
      '7',
      '--database',
      url,
    ]);
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stdout).toBe('Acme Builders: balance 12\n');
    expect(
      (
        await one<{ credit_balance: number }>(
          db,
          'SELECT credit_balance FROM organizations WHERE id = ?',
          acme.id,
        )
      ).credit_balance,
    ).toBe(12);

    // --data-dir wins over $BLUELINE_DATABASE_URL: an empty data dir has no keys.
    const dir = mkdtempSync(join(tmpdir(), 'blueline-team-keys-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const local = await cli(['keys', 'list', '--data-dir', dir], { BLUELINE_DATABASE_URL: url });
    expect(local.code, local.stderr).toBe(0);
    expect(local.stdout).toBe('');

    for (const [bad, message] of [
      [['keys', 'list', '--data-dir', dir, '--database', url], 'Give --data-dir or --database'],
      [
        ['credits', 'grant', '--org', 'X', '--amount', '1', '--database', 'sqlite:/tmp/x.db'],
        'PostgreSQL URL',
      ],
    ] as const) {
      const r = await cli([...bad]);
      expect(r.code, bad.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(message);
    }
  }, 300_000);

  it('keys create is one transaction: a failure at the key leaves no organization, grant or key behind', async () => {
    const { url, db } = await database();
    // The key's INSERT fails after the organization and the grant were written.
    await db.exec(`CREATE FUNCTION test_fail_key() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected key failure'; END $$;
      CREATE TRIGGER test_fail_key BEFORE INSERT ON api_keys FOR EACH ROW EXECUTE FUNCTION test_fail_key();`);
    const existing = await ensureOrganization(db, 'Existing Co');
    for (const org of ['Fresh Co', 'Existing Co']) {
      const failed = await cli([
        'keys',
        'create',
        '--org',
        org,
        '--credits',
        '50',
        '--database',
        url,
      ]);
      expect(failed.code, org).not.toBe(0);
      expect(failed.stdout).toBe('');
      expect(failed.stderr).toContain('injected key failure');
    }
    const count = async (sql: string, ...params: unknown[]) =>
      (await one<{ n: number }>(db, sql, ...params)).n;
    expect(
      await count('SELECT count(*)::int AS n FROM organizations WHERE name = ?', 'Fresh Co'),
    ).toBe(0);
    expect(
      await count('SELECT credit_balance AS n FROM organizations WHERE id = ?', existing.id),
    ).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM credit_ledger')).toBe(0);
    expect(await count('SELECT count(*)::int AS n FROM api_keys')).toBe(0);

    await db.exec('DROP TRIGGER test_fail_key ON api_keys');
    const ok = await cli([
      'keys',
      'create',
      '--org',
      'Fresh Co',
      '--credits',
      '50',
      '--database',
      url,
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    const key = await findActiveKey(db, ok.stdout.trim());
    expect(key).toBeDefined();
    expect(
      await count(
        'SELECT credit_balance AS n FROM organizations WHERE id = ?',
        key!.organization_id,
      ),
    ).toBe(50);
    expect(await count('SELECT count(*)::int AS n FROM credit_ledger')).toBe(1);
  }, 300_000);

  it('refuse an unmigrated database (exit 3) and a newer one (exit 1), changing nothing', async () => {
    const empty = await database(false);
    const pending = await cli(['keys', 'create', '--org', 'Acme', '--database', empty.url]);
    expect(pending.code, pending.stderr).toBe(3);
    expect(pending.stdout).toBe('');
    expect(pending.stderr).toMatch(/not migrated.*blueline migrate --database URL/);
    expect(
      (await one<{ t: string | null }>(empty.db, `SELECT to_regclass('organizations') AS t`)).t,
    ).toBeNull();

    const newer = await database();
    await newer.db
      .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
      .run(PG_MIGRATIONS.length + 1, 'from-the-future', new Date().toISOString());
    const refused = await cli(['credits', 'grant', '--org', 'Acme', '--amount', '3'], {
      BLUELINE_DATABASE_URL: newer.url,
    });
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toMatch(/newer than this Blueline/);
    expect(
      (await one<{ n: number }>(newer.db, 'SELECT count(*)::int AS n FROM organizations')).n,
    ).toBe(0);
  }, 120_000);
});

describe.skipIf(!server)('first start of several API processes on one empty database', () => {
  it('concurrent bootstraps on separate pools create one organization and one first key', async () => {
    const { url, db } = await database();
    const N = 6;
    // One pool (one connection) per "process", connected before they start together.
    const apis = await Promise.all(
      Array.from({ length: N }, () => openPostgres(url, { max: 1, migrate: false })),
    );
    cleanups.push(async () => {
      for (const a of apis) await a.close();
    });
    const secrets = await Promise.all(apis.map((a) => bootstrapFirstKey(a)));
    const printed = secrets.filter((s): s is string => s !== undefined);
    expect(printed).toHaveLength(1);
    const orgs = (await db.prepare('SELECT id, name, credit_balance FROM organizations').all()) as {
      id: string;
      name: string;
      credit_balance: number;
    }[];
    expect(orgs).toEqual([
      { id: orgs[0]!.id, name: 'Default', credit_balance: DEFAULT_ORGANIZATION_CREDITS },
    ]);
    const keys = (await db.prepare('SELECT key_hash, label FROM api_keys').all()) as {
      key_hash: string;
      label: string;
    }[];
    expect(keys).toEqual([{ key_hash: hashKey(printed[0]!), label: 'first key' }]);
    expect((await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM credit_ledger')).n).toBe(
      1,
    );
    // A later start on the same database creates nothing.
    expect(await Promise.all(apis.map((a) => bootstrapFirstKey(a)))).toEqual(
      Array(N).fill(undefined),
    );
    expect((await db.prepare('SELECT id FROM api_keys').all()).length).toBe(1);
    // `keys create --org NAME` run at once on several machines: one organization of that name.
    const made = await Promise.all(apis.map((a) => ensureOrganization(a, 'Acme Builders')));
    expect(new Set(made.map((o) => o.id)).size).toBe(1);
    expect(
      (
        await one<{ n: number }>(
          db,
          'SELECT count(*)::int AS n FROM organizations WHERE name = ?',
          'Acme Builders',
        )
      ).n,
    ).toBe(1);
  }, 120_000);
});

describe.skipIf(!server)(
  'first start of several `blueline serve` processes on one empty database',
  () => {
    it('three started at once print one first key between them', async () => {
      const { url, db } = await database();
      await migrateQueueSchema(url);
      const s3 = await startS3rver();
      cleanups.push(() => s3.dispose());
      const storage = `s3://${TEST_BUCKET}/keys/?endpoint=${encodeURIComponent(s3.endpoint)}&region=us-east-1`;
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
      };
      delete env.BLUELINE_DATA_DIR;
      delete env.BLUELINE_DATABASE_URL;
      delete env.BLUELINE_STORAGE_URL;
      const procs = Array.from({ length: 3 }, () => {
        const dataDir = mkdtempSync(join(tmpdir(), 'blueline-team-keys-serve-'));
        const child = spawn(
          process.execPath,
          [
            ...['--import', 'tsx', 'core/cli/main.ts', 'serve', '--port', '0', '--no-web'],
            ...['--no-warmup', '--no-workers', '--data-dir', dataDir],
            ...['--database', url, '--storage', storage],
          ],
          { cwd: repoRoot, env },
        );
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
        cleanups.push(() => {
          child.kill('SIGKILL');
          rmSync(dataDir, { recursive: true, force: true });
        });
        return { child, exited, out: () => out, err: () => err };
      });
      // Each prints its banner once listening, after the first-key step (or exits on an error).
      const deadline = Date.now() + 120_000;
      while (
        !procs.every((p) => /Blueline API: https:/.test(p.out()) || p.child.exitCode !== null)
      ) {
        if (Date.now() > deadline) throw new Error('serve printed no banner in 120 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      await new Promise((r) => setTimeout(r, 300)); // the lines after the banner, same tick
      for (const p of procs) expect(p.child.exitCode, p.err()).toBeNull();
      const printed = procs.flatMap((p) =>
        [...p.out().matchAll(/API key \(organization "Default", shown once\): (sk_\w+)/g)].map(
          (m) => m[1]!,
        ),
      );
      expect(printed).toHaveLength(1);
      const keys = (await db.prepare('SELECT key_hash FROM api_keys').all()) as {
        key_hash: string;
      }[];
      expect(keys).toEqual([{ key_hash: hashKey(printed[0]!) }]);
      expect((await one<{ n: number }>(db, 'SELECT count(*)::int AS n FROM organizations')).n).toBe(
        1,
      );
      for (const p of procs) p.child.kill('SIGTERM');
      expect(await Promise.all(procs.map((p) => p.exited))).toEqual([0, 0, 0]);
    }, 240_000);
  },
);
