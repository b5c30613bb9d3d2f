// Webhook delivery with several delivery loops on one store (issue 21: every API process of a team
// server runs one): each delivery claimed atomically with a token and a lease
// (webhooks.repository.ts claimDueDeliveries, migration 15), its outcome recorded only while the
// claim holds. Contract §10 promises at-least-once from a persisted outbox: an event may arrive
// twice only when a loop died (or stalled past its lease) mid-attempt, and then with the same
// event id (`webhook-id`), which receivers de-duplicate on. It names no ordering.
//
// - Two loop processes and N events: each event is delivered (answered 2xx) exactly once, to a
//   local HTTPS receiver.
// - A loop process SIGKILLed mid-attempt: another loop sends the event again after the lease,
//   same event id and body; the delivery ends `delivered` with the one recorded attempt.
// - An attempt that outlived its lease (its loop stalled before recording): it cannot overwrite
//   the claim of the loop that took the delivery over, so no third, concurrent attempt is made.
//   This one fails on the code before claim tokens (the stale record set the delivery due again).
//
// On SQLite always (two connections to one file), and on PostgreSQL with $BLUELINE_TEST_DATABASE
// (scripts/pg-test-cluster.sh start prints one; under CI=true a throwaway cluster is started).
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateTls } from '../http/tls';
import { createTeamDatabase, teamTestServer } from '../jobs/team.process.test-support';
import { createWebhookDelivery } from '../services/webhook-delivery';
import { newWebhookSecret, recordEvent } from '../services/webhooks.service';
import { openDatabase, type Db } from '../store/db';
import { openPostgres } from '../store/pg-db';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { insertWebhook } from '../store/repositories/webhooks.repository';

const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const loopScript = join(repoRoot, 'core/services/webhook-loop.test-support.ts');
const server = teamTestServer();
if (!server)
  console.warn(
    'webhook-claims.test.ts: PostgreSQL cases skipped; set BLUELINE_TEST_DATABASE=postgres://… (scripts/pg-test-cluster.sh start prints one) to run them.',
  );

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  server?.stop();
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'blueline-webhook-claims-'));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

interface Store {
  /** What a loop process opens: a PostgreSQL URL or the SQLite file. */
  target: string;
  open(): Promise<Db>;
}

async function newStore(kind: 'sqlite' | 'postgres'): Promise<Store> {
  if (kind === 'sqlite') {
    const file = join(tempDir(), 'blueline.db');
    openDatabase(file).close(); // created and migrated
    return { target: file, open: async () => openDatabase(file) };
  }
  const created = await createTeamDatabase(server!.url);
  cleanups.push(() => created.drop());
  await (await openPostgres(created.url, { max: 1 })).close(); // migrated
  return {
    target: created.url,
    open: async () => await openPostgres(created.url, { migrate: false, max: 4 }),
  };
}

async function opened(store: Store): Promise<Db> {
  const db = await store.open();
  cleanups.push(() => db.close());
  return db;
}

interface Request {
  id: string;
  body: string;
  /** The status the receiver answered, once it did. */
  status?: number;
}

interface Receiver {
  url: string;
  requests: Request[];
  /** The answer to the n-th request (0-based): a status, or a promise of one (held until then). */
  respond: (n: number) => number | Promise<number>;
  /** PEM of the receiver's certificate (for NODE_EXTRA_CA_CERTS of the loop processes). */
  caFile?: string;
}

async function startReceiver(tls: boolean): Promise<Receiver> {
  const r: Receiver = { url: '', requests: [], respond: () => 200 };
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: Request = {
        id: String(req.headers['webhook-id']),
        body: Buffer.concat(chunks).toString('utf8'),
      };
      const n = r.requests.push(entry) - 1;
      void Promise.resolve(r.respond(n)).then((status) => {
        if (res.destroyed) return;
        entry.status = status;
        res.writeHead(status, { 'content-type': 'text/plain' }).end('ok');
      });
    });
  };
  let srv: http.Server | https.Server;
  if (tls) {
    const dir = tempDir();
    const material = await loadOrCreateTls(dir);
    r.caFile = join(dir, 'receiver-ca.pem');
    writeFileSync(r.caFile, material.cert);
    srv = https.createServer({ cert: material.cert, key: material.key }, handler);
  } else srv = http.createServer(handler);
  await new Promise<void>((done) => srv.listen(0, '127.0.0.1', done));
  r.url = `${tls ? 'https' : 'http'}://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;
  cleanups.push(
    () =>
      new Promise<void>((done) => {
        srv.closeAllConnections();
        srv.close(() => done());
      }),
  );
  return r;
}

interface LoopProcess {
  child: ChildProcessWithoutNullStreams;
  lines: Record<string, unknown>[];
}

/** A delivery loop in a process of its own (an API process's loop, without the rest of it). */
async function startLoop(
  store: Store,
  receiver: Receiver,
  options: Record<string, number>,
): Promise<LoopProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', loopScript, store.target, JSON.stringify(options)],
    {
      cwd: repoRoot,
      env: { ...process.env, ...(receiver.caFile ? { NODE_EXTRA_CA_CERTS: receiver.caFile } : {}) },
    },
  );
  const lines: Record<string, unknown>[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not ours (a warning of node's)
      }
    }
  });
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let closed = false;
  child.on('close', () => (closed = true));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await until(
    'the loop process to start',
    () => {
      if (closed) throw new Error(`loop process exited (${child.exitCode}): ${stderr}`);
      return lines.some((l) => l.ready !== undefined);
    },
    60_000,
  );
  return { child, lines };
}

async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 60_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}.`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An organization with one webhook on `url` subscribed to job.completed. */
async function subscribe(db: Db, url: string): Promise<{ org: string; webhook: string }> {
  const org = (await ensureOrganization(db, 'Hooks')).id;
  const w = await insertWebhook(db, org, {
    url,
    events: ['job.completed'],
    secret: newWebhookSecret(),
  });
  return { org, webhook: w.id as string };
}

async function deliveryRows(db: Db): Promise<
  {
    event_id: string;
    status: string;
    attempts: number;
    next_attempt_at: string | null;
    claim_token: string | null;
  }[]
> {
  return (await db
    .prepare(
      'SELECT event_id, status, attempts, next_attempt_at, claim_token FROM webhook_deliveries ORDER BY event_id',
    )
    .all()) as never;
}

const silent = { info: () => {}, warn: () => {}, error: () => {} };

/** Each event id with the number of requests for it that the receiver answered 2xx. */
function answered2xx(r: Receiver): Map<string, number> {
  const m = new Map<string, number>();
  for (const q of r.requests)
    if (q.status !== undefined && q.status < 300) m.set(q.id, (m.get(q.id) ?? 0) + 1);
  return m;
}

const stores: ('sqlite' | 'postgres')[] = ['sqlite', ...(server ? (['postgres'] as const) : [])];

describe.each(stores)('webhook delivery with several loops on %s', (kind) => {
  it('two loop processes and 40 events: each event delivered exactly once, over HTTPS', async () => {
    const store = await newStore(kind);
    const db = await opened(store);
    const receiver = await startReceiver(true);
    // Answers take a moment, so the two loops' attempts overlap.
    receiver.respond = () => new Promise((done) => setTimeout(() => done(200), 20));
    const { org } = await subscribe(db, receiver.url);
    const options = { pollIntervalMs: 100, concurrency: 4, timeoutMs: 10_000 };
    const loops = [
      await startLoop(store, receiver, options),
      await startLoop(store, receiver, options),
    ];
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      ids.push(
        (await recordEvent(db, { organization_id: org, type: 'job.completed', data: { i } }))!,
      );
    }
    await until('every delivery to end', async () =>
      (await deliveryRows(db)).every((d) => d.status === 'delivered'),
    );
    const counts = answered2xx(receiver);
    expect([...counts.keys()].sort()).toEqual([...ids].sort());
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(receiver.requests).toHaveLength(40);
    const rows = await deliveryRows(db);
    expect(rows.map((r) => r.attempts)).toEqual(rows.map(() => 1));
    expect(rows.every((r) => r.claim_token === null)).toBe(true);
    const byLoop = loops.map((l) => l.lines.filter((x) => x.msg === 'Webhook delivered').length);
    expect(byLoop[0]! + byLoop[1]!).toBe(40);
    console.log(`[${kind}] deliveries per loop process: ${byLoop.join(' + ')}`);
  }, 180_000);

  it('a loop process killed mid-attempt: another loop delivers the event after the lease, same id', async () => {
    const store = await newStore(kind);
    const db = await opened(store);
    const receiver = await startReceiver(true);
    let answerFirst!: (status: number) => void;
    receiver.respond = (n) => (n === 0 ? new Promise<number>((done) => (answerFirst = done)) : 200);
    const { org } = await subscribe(db, receiver.url);
    const options = { pollIntervalMs: 100, timeoutMs: 2_000, leaseMarginMs: 500 };
    const first = await startLoop(store, receiver, options);
    const id = (await recordEvent(db, {
      organization_id: org,
      type: 'job.completed',
      data: { job: 'killed mid-attempt' },
    }))!;
    await until('the first attempt to reach the receiver', () => receiver.requests.length === 1);
    first.child.kill('SIGKILL');
    await new Promise((done) => first.child.once('exit', done));
    answerFirst(200); // too late: its sender is gone
    const second = await startLoop(store, receiver, options);
    await until('the delivery to end', async () =>
      (await deliveryRows(db)).every((d) => d.status === 'delivered'),
    );
    expect(receiver.requests.map((q) => q.id)).toEqual([id, id]);
    expect(receiver.requests[1]!.body).toBe(receiver.requests[0]!.body);
    expect(receiver.requests[1]!.status).toBe(200);
    expect(answered2xx(receiver).get(id)).toBe(1);
    const [row] = await deliveryRows(db);
    expect(row).toMatchObject({
      event_id: id,
      status: 'delivered',
      attempts: 1,
      claim_token: null,
    });
    expect(second.lines.filter((x) => x.msg === 'Webhook delivered')).toHaveLength(1);
  }, 180_000);

  it('an attempt that outlived its lease records nothing: the loop that took over decides, no concurrent third attempt', async () => {
    const store = await newStore(kind);
    const dbA = await opened(store);
    const dbB = await opened(store);
    // In this process (to hold loop A's write), so a plain-HTTP loopback receiver (allowed by
    // the URL policy): loop A's TLS trust cannot be changed in a running process.
    const receiver = await startReceiver(false);
    let answerSecond!: (status: number) => void;
    receiver.respond = (n) =>
      n === 0 ? 500 : n === 1 ? new Promise<number>((done) => (answerSecond = done)) : 200;
    const { org } = await subscribe(dbA, receiver.url);

    // Loop A's store: the write that records an attempt waits until the test lets it go, as if
    // its process stalled between the receiver's answer and the database.
    let release!: () => void;
    const held = new Promise<void>((done) => (release = done));
    let recorded!: () => void;
    const recordedA = new Promise<void>((done) => (recorded = done));
    let recordsHeld = 0;
    const stalled = new Proxy(dbA, {
      get(target, prop, recv) {
        if (prop === 'prepare')
          return (sql: string) => {
            const stmt = target.prepare(sql);
            if (!/attempts = attempts \+ 1/.test(sql)) return stmt;
            return {
              ...stmt,
              get: stmt.get.bind(stmt),
              all: stmt.all.bind(stmt),
              run: async (...args: unknown[]) => {
                recordsHeld++;
                await held;
                try {
                  return await stmt.run(...args);
                } finally {
                  recorded();
                }
              },
            };
          };
        const v = Reflect.get(target, prop, recv) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const base = { pollIntervalMs: 100, backoffBaseMs: 50, jitter: 0, retryWindowMs: 600_000 };
    const loopA = createWebhookDelivery({
      db: stalled,
      log: silent,
      options: { ...base, timeoutMs: 1_000, leaseMarginMs: 300 },
    });
    // Loop B's attempts may take long (its lease is long): its held attempt is in flight meanwhile.
    const loopB = createWebhookDelivery({
      db: dbB,
      log: silent,
      options: { ...base, timeoutMs: 60_000, leaseMarginMs: 300 },
    });
    cleanups.push(async () => {
      release();
      answerSecond?.(200);
      await loopA.stop();
      await loopB.stop();
    });
    loopA.start();
    const id = (await recordEvent(dbA, {
      organization_id: org,
      type: 'job.completed',
      data: { job: 'stalled' },
    }))!;
    await until('loop A to hold its record of a 500', () => recordsHeld === 1);
    expect(receiver.requests[0]!.status).toBe(500);
    // Loop A's lease ends; loop B takes the delivery over and its attempt is in flight.
    loopB.start();
    await until('loop B to send the event', () => receiver.requests.length === 2);
    const [taken] = await deliveryRows(dbB);
    expect(taken!.attempts).toBe(0);
    // Loop A comes back and records its 500: it no longer holds the delivery, so nothing changes
    // (before claim tokens this set it due again and counted the attempt; a loop then sent the
    // event a third time while loop B's attempt was still in flight).
    release();
    await recordedA;
    const [after] = await deliveryRows(dbB);
    expect(after).toEqual(taken);
    answerSecond(200);
    await until('the delivery to end', async () =>
      (await deliveryRows(dbB)).every((d) => d.status === 'delivered'),
    );
    expect(receiver.requests.map((q) => q.id)).toEqual([id, id]);
    expect(answered2xx(receiver).get(id)).toBe(1);
    const [done] = await deliveryRows(dbB);
    expect(done).toMatchObject({ status: 'delivered', attempts: 1, claim_token: null });
  }, 180_000);
});
