// Helpers for the jobs tests: a real SQLite file in a temp dir, a seeded organization and
// project, waiting on conditions, and a handler with an idempotent, observable side effect.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../store/db';
import { newId } from '../domain/ids';
import { monotonicNow } from '../domain/clock';
import type { JobHandler } from './job-runner';

export interface TempDb {
  db: Db;
  file: string;
  dir: string;
  /** Closes the handle and removes the directory. */
  cleanup(): void;
}

export function tempDb(): TempDb {
  const dir = mkdtempSync(path.join(tmpdir(), 'blueline-jobs-'));
  const file = path.join(dir, 'blueline.db');
  const db = openDatabase(file);
  return {
    db,
    file,
    dir,
    cleanup() {
      if (db.open) db.raw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function seedOrgAndProject(db: Db): Promise<{ orgId: string; projectId: string }> {
  const orgId = newId('organization');
  const projectId = newId('project');
  const now = monotonicNow();
  await db
    .prepare('INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)')
    .run(orgId, `org ${orgId}`, now, now);
  await db
    .prepare(
      'INSERT INTO projects (id, organization_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    )
    .run(projectId, orgId, 'Tower A', now, now);
  return { orgId, projectId };
}

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * The side-effect table of the `steps` handler. Deliberately without a UNIQUE constraint: only the
 * handler's own check keeps a step from being stored twice, so a test can see duplicates.
 */
export async function createEffectsTable(db: Db): Promise<void> {
  await db.exec(
    'CREATE TABLE IF NOT EXISTS test_effects (job_id TEXT NOT NULL, step INTEGER NOT NULL, attempt INTEGER NOT NULL) STRICT',
  );
}

/**
 * A re-runnable handler written as the JobHandler contract asks: payload {steps, stepMs}; each
 * step is slow work followed by one transaction that stores its effect only if no earlier attempt
 * stored it; progress after each step.
 */
export function stepsHandler(db: Db): JobHandler<{ steps: number; stepMs: number }> {
  const HAS = 'SELECT 1 AS one FROM test_effects WHERE job_id = ? AND step = ?';
  const PUT = 'INSERT INTO test_effects (job_id, step, attempt) VALUES (?, ?, ?)';
  return async (ctx) => {
    const { steps, stepMs } = ctx.payload;
    for (let step = 0; step < steps; step++) {
      if (await db.prepare(HAS).get(ctx.job.id, step)) continue; // done by an earlier attempt
      await sleep(stepMs, ctx.signal);
      await db.transaction(async (tx) => {
        if (!(await tx.prepare(HAS).get(ctx.job.id, step)))
          await tx.prepare(PUT).run(ctx.job.id, step, ctx.job.attempts);
      });
      await ctx.progress(step + 1, steps);
    }
    return { steps };
  };
}
