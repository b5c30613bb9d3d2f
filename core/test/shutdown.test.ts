import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { httpsRequest, startTestService, type HttpResult } from './harness';
import { seedGraph } from './seed';
import type { JobContext, JobRunner } from '../jobs/job-runner';
import { JobAbortedError } from '../jobs/job-runner';
import { ensureOrganization } from '../store/repositories/organizations.repository';

// Graceful shutdown (contract §11: drain in-flight requests, leave running jobs resumable).
// 1. stop() while a request is being handled: that request still gets its full answer; new
//    connections are refused or answered 503.
// 2. stop() while a job runs: the handler is aborted with reason 'shutdown', the job stays Started
//    (never Failed); a new service on the same data dir runs it again to Completed.

describe('graceful shutdown', () => {
  it('a request in flight when stop() begins finishes with its full response', async () => {
    let entered!: () => void;
    const handlerEntered = new Promise<void>((r) => (entered = r));
    const t = await startTestService({
      configureApp: (app, db) => {
        app.get('/v1/test/slow', async () => {
          entered();
          await sleep(600);
          // The store is still open while the request runs.
          const n = (
            (await db.prepare('SELECT COUNT(*) AS n FROM projects').get()) as { n: number }
          ).n;
          return { ok: true, projects: n, payload: 'x'.repeat(100_000) };
        });
      },
    });
    await t.request('POST', '/v1/projects', { body: { name: 'before stop' } });
    const inFlight = t.request('GET', '/v1/test/slow');
    await handlerEntered;
    const stopped = t.svc.stop();
    await sleep(50);

    // New work during the drain: a new connection is refused (or answered 503), never served.
    const fresh = new https.Agent({ ca: t.svc.caCertPem, keepAlive: false });
    const late: HttpResult | Error = await httpsRequest(fresh, t.origin, 'GET', '/v1/projects', {
      key: t.key,
    }).catch((e: Error) => e);
    if (late instanceof Error)
      expect((late as NodeJS.ErrnoException).code).toMatch(/ECONNREFUSED|ECONNRESET/);
    else {
      expect(late.status).toBe(503);
      expect(late.body.code).toBe('unavailable');
      expect(late.headers['retry-after']).toBeTruthy();
    }

    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, projects: 1 });
    expect(res.body.payload).toHaveLength(100_000);
    await stopped;
    t.agent.destroy();
    fresh.destroy();
  });

  it('a job running at stop() stays Started, not Failed, and completes on the next start from the same data dir', async () => {
    const runs: { jobId: string; attempt: number; outcome: string }[] = [];
    let started!: () => void;
    const firstRunStarted = new Promise<void>((r) => (started = r));
    let type = 'parse';
    const handler = async (ctx: JobContext<{ steps: number }>) => {
      const attempt = ctx.job.attempts;
      if (attempt === 1) {
        // First run: works until the service stops under it.
        await ctx.progress(1, ctx.payload.steps);
        started();
        try {
          await sleep(60_000, undefined, { signal: ctx.signal });
        } catch {
          const reason =
            ctx.signal.reason instanceof JobAbortedError ? ctx.signal.reason.reason : 'other';
          runs.push({ jobId: ctx.job.id, attempt, outcome: `aborted:${reason}` });
          throw ctx.signal.reason;
        }
      }
      for (let i = 0; i < ctx.payload.steps; i++) {
        await sleep(5);
        await ctx.progress(i + 1, ctx.payload.steps);
      }
      runs.push({ jobId: ctx.job.id, attempt, outcome: 'completed' });
      return { attempt, steps: ctx.payload.steps };
    };
    const registerHandlers = (runner: JobRunner) => {
      try {
        runner.register(type, handler);
      } catch {
        type = 'test-resume';
        runner.register(type, handler);
      }
    };

    const first = await startTestService({ registerHandlers });
    const org = (await ensureOrganization(first.svc.db, 'Test Org')).id;
    const g = await seedGraph(first.svc.db, org);
    const job = await first.svc.jobs.enqueue({
      organization_id: org,
      project_id: g.projectId,
      type,
      target_type: 'drawing',
      target_id: g.drawingIds[0],
      payload: { steps: 5 },
    });
    await firstRunStarted;
    expect((await first.request('GET', `/v1/jobs/${job.id}`)).body).toMatchObject({
      status: 'Started',
      progress: { completed: 1, total: 5 },
    });
    const dataDir = first.dataDir;
    await first.stop({ keepDir: true });
    expect(runs).toEqual([{ jobId: job.id, attempt: 1, outcome: 'aborted:shutdown' }]);

    const second = await startTestService({ dataDir, registerHandlers });
    try {
      // Still there after the restart, and run again to the end (boot puts Started back to Queued).
      const until = Date.now() + 15_000;
      let now = (await second.request('GET', `/v1/jobs/${job.id}`)).body;
      while (now.status !== 'Completed' && Date.now() < until) {
        expect(['Queued', 'Started']).toContain(now.status);
        await sleep(25);
        now = (await second.request('GET', `/v1/jobs/${job.id}`)).body;
      }
      expect(now).toMatchObject({
        status: 'Completed',
        progress: { completed: 5, total: 5 },
        result: { attempt: 2, steps: 5 },
      });
      expect(now.error ?? null).toBeNull();
      expect(runs).toEqual([
        { jobId: job.id, attempt: 1, outcome: 'aborted:shutdown' },
        { jobId: job.id, attempt: 2, outcome: 'completed' },
      ]);
      // The project seeded before the stop survived too.
      expect((await second.request('GET', `/v1/projects/${g.projectId}`)).status).toBe(200);
    } finally {
      await second.stop();
    }
  });
});
