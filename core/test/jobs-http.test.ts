import { createHash } from 'node:crypto';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './harness';
import { seedGraph, type SeededGraph } from './seed';
import type { JobContext, JobRunner } from '../jobs/job-runner';
import { ensureOrganization } from '../store/repositories/organizations.repository';

// Jobs over real HTTPS (contract §4 Job): a real handler registered through `registerHandlers`
// that does work in steps, reports progress and creates child jobs (a three-level tree);
// GET /v1/jobs/{id}; the SSE stream of the job object on every change, ending at the terminal
// status; cancel reaching every descendant (and aborting their running handlers); 409 for a
// finished job; the per-key SSE stream limit.

interface TreePayload {
  /** Children per level below this job (e.g. [2, 2] = 2 children with 2 children each). */
  fanout?: number[];
  steps: number;
  stepMs: number;
}

const aborted = new Set<string>();
let jobType = 'parse';

/** A handler doing real work: hashes a buffer per step, reports progress, creates and awaits children. */
async function treeHandler(ctx: JobContext<TreePayload>): Promise<unknown> {
  const { fanout = [], steps, stepMs } = ctx.payload;
  ctx.signal.addEventListener('abort', () => aborted.add(ctx.job.id), { once: true });
  if (fanout.length > 0) {
    const [n, ...rest] = fanout;
    for (let i = 0; i < n!; i++) {
      await ctx.createChild(`child-${i}`, {
        type: jobType,
        target_type: ctx.job.target_type,
        target_id: ctx.job.target_id,
        payload: { fanout: rest, steps, stepMs } satisfies TreePayload,
      });
    }
    await ctx.progress(0, n!);
    const children = await ctx.waitForChildren();
    await ctx.progress(children.length, n!);
    return { children: children.map((c) => c.id) };
  }
  let digest = Buffer.alloc(32);
  for (let i = 0; i < steps; i++) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    digest = createHash('sha256')
      .update(digest)
      .update(Buffer.alloc(64 * 1024, i))
      .digest();
    await sleep(stepMs, undefined, { signal: ctx.signal }).catch(() => {});
    if (ctx.signal.aborted) throw ctx.signal.reason;
    await ctx.progress(i + 1, steps);
  }
  return { steps, digest: digest.toString('hex') };
}

let t: TestService;
let orgId: string;
let g: SeededGraph;
const MAX_STREAMS = 3;

beforeAll(async () => {
  t = await startTestService({
    config: { maxSseStreamsPerKey: MAX_STREAMS },
    registerHandlers: (runner: JobRunner) => {
      // 'parse' is one of the types GET /v1/jobs?type= accepts; if the service already registers
      // its own parse handler, the tree runs under a private type instead.
      try {
        runner.register(jobType, treeHandler);
      } catch {
        jobType = 'test-tree';
        runner.register(jobType, treeHandler);
      }
    },
  });
  orgId = (await ensureOrganization(t.svc.db, 'Test Org')).id;
  g = await seedGraph(t.svc.db, orgId);
});

afterAll(async () => {
  await t?.stop();
});

async function enqueue(payload: TreePayload, type = jobType) {
  return await t.svc.jobs.enqueue({
    organization_id: orgId,
    project_id: g.projectId,
    type,
    target_type: 'drawing',
    target_id: g.drawingIds[0],
    payload,
  });
}

interface SseEvent {
  id?: string;
  event?: string;
  data: any;
}

interface SseStream {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  events: SseEvent[];
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  body: string;
  close(): void;
  waitFor(pred: (e: SseEvent) => boolean, ms?: number): Promise<SseEvent>;
}

function openSse(path: string, key = t.key): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(path, t.origin),
      { agent: t.agent, headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } },
      (res) => {
        const stream: SseStream = {
          status: res.statusCode ?? 0,
          headers: res.headers,
          events: [],
          body: '',
          ended: new Promise((r) => res.on('end', () => r())),
          close: () => req.destroy(),
          waitFor: (pred, ms = 10_000) =>
            new Promise((ok, fail) => {
              const found = stream.events.find(pred);
              if (found) return ok(found);
              const timer = setTimeout(
                () =>
                  fail(
                    new Error(
                      `no matching SSE event within ${ms} ms; got ${stream.events.map((e) => e.data?.status).join(',')}`,
                    ),
                  ),
                ms,
              );
              listeners.push((e) => {
                if (!pred(e)) return false;
                clearTimeout(timer);
                ok(e);
                return true;
              });
            }),
        };
        let listeners: ((e: SseEvent) => boolean)[] = [];
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          stream.body += chunk;
          buffer += chunk;
          let sep: number;
          while ((sep = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, sep);
            buffer = buffer.slice(sep + 2);
            const ev: SseEvent = { data: undefined };
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue; // comment / keep-alive
              const i = line.indexOf(':');
              const field = i < 0 ? line : line.slice(0, i);
              const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
              if (field === 'data') data.push(value);
              else if (field === 'event') ev.event = value;
              else if (field === 'id') ev.id = value;
            }
            if (data.length === 0) continue;
            ev.data = JSON.parse(data.join('\n'));
            stream.events.push(ev);
            listeners = listeners.filter((l) => !l(ev));
          }
        });
        resolve(stream);
      },
    );
    req.on('error', (err) => {
      if ((err as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(err);
    });
    req.end();
  });
}

const ORDER: Record<string, number> = {
  Queued: 0,
  Started: 1,
  Completed: 2,
  Failed: 2,
  Canceled: 2,
};

async function waitForStatus(id: string, status: string, ms = 15_000) {
  const until = Date.now() + ms;
  for (;;) {
    const r = await t.request('GET', `/v1/jobs/${id}`);
    if (r.body.status === status) return r.body;
    if (Date.now() > until)
      throw new Error(`job ${id} is ${r.body.status}, not ${status}, after ${ms} ms`);
    await sleep(25);
  }
}

describe('jobs over HTTPS', () => {
  it('GET /v1/jobs/{id} and the SSE stream follow a job tree to Completed, then the stream ends', async () => {
    const root = await enqueue({ fanout: [2, 2], steps: 4, stepMs: 15 });
    const sse = await openSse(`/v1/jobs/${root.id}/events`);
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(sse.headers['x-request-id']).toMatch(/^req_/);
    await Promise.race([
      sse.ended,
      sleep(20_000).then(() => Promise.reject(new Error('SSE stream did not end'))),
    ]);

    const statuses = sse.events.map((e) => e.data.status as string);
    expect(sse.events.every((e) => e.event === 'job' && e.data.id === root.id)).toBe(true);
    // Ids count up; statuses never go backwards; the last event is the terminal one.
    expect(sse.events.map((e) => Number(e.id))).toEqual(sse.events.map((_, i) => i + 1));
    for (let i = 1; i < statuses.length; i++)
      expect(ORDER[statuses[i]!]).toBeGreaterThanOrEqual(ORDER[statuses[i - 1]!]!);
    expect(statuses).toContain('Started');
    expect(statuses.at(-1)).toBe('Completed');
    expect(statuses.filter((s) => s === 'Completed')).toHaveLength(1);
    // Every change is sent: the progress 0/2 → 2/2 of the root shows up as its own events.
    const progress = sse.events.map(
      (e) => `${e.data.progress?.completed}/${e.data.progress?.total}`,
    );
    expect(progress).toContain('0/2');
    expect(progress.at(-1)).toBe('2/2');

    const job = await t.request('GET', `/v1/jobs/${root.id}`);
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({
      id: root.id,
      type: jobType,
      status: 'Completed',
      target_type: 'drawing',
      target_id: g.drawingIds[0],
      project_id: g.projectId,
      parent_id: null,
    });
    expect(job.body.started_at).toBeTruthy();
    expect(job.body.finished_at >= job.body.started_at).toBe(true);
    expect(job.body).toEqual(sse.events.at(-1)!.data);

    const children = await t.request('GET', `/v1/jobs?parent_id=${root.id}&limit=100`);
    expect(children.body.data).toHaveLength(2);
    expect([...children.body.data.map((c: { id: string }) => c.id)].sort()).toEqual(
      [...job.body.result.children].sort(),
    );
    for (const child of children.body.data) {
      expect(child).toMatchObject({ status: 'Completed', parent_id: root.id, type: jobType });
      const leaves = await t.request('GET', `/v1/jobs?parent_id=${child.id}&expand=parent`);
      expect(leaves.body.data).toHaveLength(2);
      for (const leaf of leaves.body.data) {
        expect(leaf).toMatchObject({
          status: 'Completed',
          progress: { completed: 4, total: 4 },
          parent: { id: child.id },
        });
        expect(leaf.result.digest).toMatch(/^[0-9a-f]{64}$/);
      }
    }

    // A stream opened on a finished job sends the job once and ends.
    const late = await openSse(`/v1/jobs/${root.id}/events`);
    await late.ended;
    expect(late.events.map((e) => e.data.status)).toEqual(['Completed']);

    // Cancel of a finished job: 409 conflict; nothing changes.
    const cancel = await t.request('POST', `/v1/jobs/${root.id}/cancel`);
    expect(cancel.status).toBe(409);
    expect(cancel.body.code).toBe('conflict');
    expect((await t.request('GET', `/v1/jobs/${root.id}`)).body.status).toBe('Completed');
    expect((await t.request('POST', '/v1/jobs/job_doesnotexist/cancel')).status).toBe(404);
  });

  it('cancel → 202 and reaches every descendant, aborting the running handlers; SSE ends with Canceled', async () => {
    const root = await enqueue({ fanout: [2, 2], steps: 400, stepMs: 25 }); // leaves would run ~10 s
    const sse = await openSse(`/v1/jobs/${root.id}/events`);
    // Wait until leaves are running (the tree is three levels deep).
    const until = Date.now() + 10_000;
    let tree: { id: string; status: string; parent_id: string | null }[] = [];
    for (;;) {
      const children = (await t.request('GET', `/v1/jobs?parent_id=${root.id}&limit=100`)).body
        .data;
      const leaves = [];
      for (const c of children)
        leaves.push(...(await t.request('GET', `/v1/jobs?parent_id=${c.id}&limit=100`)).body.data);
      tree = [(await t.request('GET', `/v1/jobs/${root.id}`)).body, ...children, ...leaves];
      if (tree.length === 7 && leaves.some((l: { status: string }) => l.status === 'Started'))
        break;
      if (Date.now() > until)
        throw new Error(`tree not running: ${JSON.stringify(tree.map((j) => j.status))}`);
      await sleep(20);
    }
    const running = tree.filter((j) => j.status === 'Started').map((j) => j.id);

    const cancel = await t.request('POST', `/v1/jobs/${root.id}/cancel`);
    expect(cancel.status).toBe(202);
    expect(cancel.body).toMatchObject({ id: root.id, status: 'Canceled' });
    await Promise.race([
      sse.ended,
      sleep(10_000).then(() => Promise.reject(new Error('SSE stream did not end after cancel'))),
    ]);
    expect(sse.events.at(-1)!.data.status).toBe('Canceled');

    for (const j of tree) {
      const now = await t.request('GET', `/v1/jobs/${j.id}`);
      expect(now.body.status, `${j.id} (parent ${j.parent_id})`).toBe('Canceled');
      expect(now.body.finished_at).toBeTruthy();
    }
    // Every handler that was running saw its abort signal.
    await sleep(100);
    for (const id of running) expect(aborted.has(id), id).toBe(true);
    // Nothing leaves a terminal status: the aborted handlers did not complete or fail anything.
    await sleep(300);
    for (const j of tree)
      expect((await t.request('GET', `/v1/jobs/${j.id}`)).body.status).toBe('Canceled');
    expect((await t.request('POST', `/v1/jobs/${root.id}/cancel`)).status).toBe(409);
    // The runner is free again: a new job still completes.
    const after = await enqueue({ steps: 2, stepMs: 5 });
    await waitForStatus(after.id, 'Completed');
  });

  it(`at most ${MAX_STREAMS} SSE streams per key: the next is 429 rate_limited with Retry-After; closing one frees a slot`, async () => {
    // A job whose one step lasts until it is canceled: its streams stay open. (Not a job of a type
    // no handler runs: in team mode a worker fails a delivered job it has no handler for.)
    const idle = await enqueue({ steps: 1, stepMs: 600_000 });
    const open: SseStream[] = [];
    for (let i = 0; i < MAX_STREAMS; i++) {
      const s = await openSse(`/v1/jobs/${idle.id}/events`);
      expect(s.status).toBe(200);
      await s.waitFor((e) => e.data.status === 'Queued' || e.data.status === 'Started');
      open.push(s);
    }
    const refused = await t.request('GET', `/v1/jobs/${idle.id}/events`);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['content-type']).toContain('application/problem+json');

    // The limit is per key: another key of the same organization may still open a stream.
    const otherKey = await t.newOrgKey('Test Org');
    const other = await openSse(`/v1/jobs/${idle.id}/events`, otherKey);
    expect(other.status).toBe(200);

    open.shift()!.close();
    // The server notices the closed connection; then a slot is free again.
    let again: SseStream | undefined;
    for (let i = 0; i < 50 && !again; i++) {
      await sleep(20);
      const s = await openSse(`/v1/jobs/${idle.id}/events`);
      if (s.status === 200) again = s;
      else s.close();
    }
    expect(again?.status).toBe(200);
    open.push(again!);

    // Canceling the job ends every stream with the Canceled job.
    expect((await t.request('POST', `/v1/jobs/${idle.id}/cancel`)).status).toBe(202);
    await Promise.all([...open, other].map((s) => s.ended));
    for (const s of [...open, other]) expect(s.events.at(-1)!.data.status).toBe('Canceled');
    // All slots are free afterwards.
    const done = await enqueue({ steps: 1, stepMs: 1 });
    await waitForStatus(done.id, 'Completed');
    const streams = await Promise.all(
      Array.from({ length: MAX_STREAMS }, () => openSse(`/v1/jobs/${done.id}/events`)),
    );
    expect(streams.map((s) => s.status)).toEqual(Array(MAX_STREAMS).fill(200));
    await Promise.all(streams.map((s) => s.ended));
  });
});
