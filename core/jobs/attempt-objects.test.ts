// attempt-objects.ts on the desktop's SQLite store and local objects: the units a run records are
// fenced by its attempt; a re-claimed job's new run deletes the units of earlier attempts that no
// row names, and never those a committed row names (adopted in the row's transaction, or found by
// id). The end-to-end case (a worker SIGKILLed mid-process on PostgreSQL + S3) is
// reliability/team-attempt-objects.test.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalObjectStore } from '../blobs/local-object-store';
import { overlayPrefix, sheetPrefix } from '../blobs/keys';
import { newId } from '../domain/ids';
import { openDatabase } from '../store/db';
import {
  adoptAttemptUnit,
  cleanEarlierAttempts,
  discardAttemptUnit,
  trackAttemptUnit,
} from './attempt-objects';
import { LeaseLostError } from './jobs.repository';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'blueline-attempt-objects-'));
  dirs.push(dir);
  const db = openDatabase(join(dir, 'blueline.db'));
  const objects = new LocalObjectStore({ dataDir: dir });
  const now = new Date().toISOString();
  const job = { id: newId('job'), attempts: 1 };
  await db
    .prepare(
      `INSERT INTO jobs (id, organization_id, type, status, target_type, target_id, attempts, created_at, updated_at)
       VALUES (?, 'org_x', 'process', 'Started', 'drawing', 'drw_x', 1, ?, ?)`,
    )
    .run(job.id, now, now);
  const claimAgain = async () => {
    await db.prepare('UPDATE jobs SET attempts = attempts + 1 WHERE id = ?').run(job.id);
    job.attempts++;
  };
  const keysUnder = async (prefix: string) =>
    (await objects.list(prefix, { limit: 100, direction: 'forward', token: null })).keys.map(
      (k) => k.key,
    );
  return { db, objects, job, claimAgain, keysUnder };
}

const prj = 'prj_0000000000000000000000000a';
const drw = 'drw_0000000000000000000000000b';

describe('objects of a run that died', () => {
  it('are deleted when the job is claimed again; adopted units and named units stay', async () => {
    const { db, objects, job, claimAgain, keysUnder } = await setup();
    const put = async (prefix: string) => {
      await objects.put(`${prefix}image.png`, Buffer.from('png'));
      await objects.put(`${prefix}thumbnail.webp`, Buffer.from('webp'));
    };
    const unit = (kind: 'sheet' | 'overlay') => {
      const id = newId(kind);
      return {
        kind,
        id,
        prefix: kind === 'sheet' ? sheetPrefix(prj, drw, id) : overlayPrefix(prj, id),
      };
    };
    // Attempt 1: a sheet committed (adopted), a sheet and an overlay written without their rows.
    const kept = unit('sheet');
    const lostSheet = unit('sheet');
    const lostOverlay = unit('overlay');
    for (const u of [kept, lostSheet, lostOverlay]) {
      await trackAttemptUnit(db, job, u);
      await put(u.prefix);
    }
    await db.transaction(async (tx) => await adoptAttemptUnit(tx, job.id, kept.prefix));
    // Attempt 1 dies; attempt 2 claims the job. The dead run's fenced record now fails.
    await claimAgain();
    await expect(trackAttemptUnit(db, { id: job.id, attempts: 1 }, unit('sheet'))).rejects.toThrow(
      LeaseLostError,
    );
    // Attempt 2's own unit, in flight: not an earlier attempt's.
    const mine = unit('sheet');
    await trackAttemptUnit(db, job, mine);
    await put(mine.prefix);
    expect(await cleanEarlierAttempts(db, objects, job)).toBe(2);
    expect(await keysUnder(lostSheet.prefix)).toEqual([]);
    expect(await keysUnder(lostOverlay.prefix)).toEqual([]);
    expect(await keysUnder(kept.prefix)).toHaveLength(2);
    expect(await keysUnder(mine.prefix)).toHaveLength(2);
    const left = (await db
      .prepare('SELECT prefix FROM job_attempt_objects WHERE job_id = ?')
      .all(job.id)) as { prefix: string }[];
    expect(left.map((r) => r.prefix)).toEqual([mine.prefix]);
    // Again: nothing more to do.
    expect(await cleanEarlierAttempts(db, objects, job)).toBe(0);
    await discardAttemptUnit(db, objects, job.id, mine.prefix);
    expect(await keysUnder(mine.prefix)).toEqual([]);
    await db.close();
  });

  it('never deletes a unit whose row exists, even if its entry was left', async () => {
    const { db, objects, job, claimAgain, keysUnder } = await setup();
    const id = newId('overlay');
    const prefix = overlayPrefix(prj, id);
    await trackAttemptUnit(db, job, { kind: 'overlay', id, prefix });
    await objects.put(`${prefix}combined.png`, Buffer.from('png'));
    // A row with that id, committed without adopting the entry (a guard against a handler bug).
    await db.exec('PRAGMA foreign_keys = OFF');
    await db
      .prepare(
        `INSERT INTO overlays (id, organization_id, project_id, job_id, block_a_id, block_b_id, score, width, height, transform, alignment, stats, images, created_at, updated_at)
         VALUES (?, 'org_x', ?, ?, 'blk_a', 'blk_b', 1, 1, 1, '{}', '{}', '{}', '{}', ?, ?)`,
      )
      .run(id, prj, job.id, new Date().toISOString(), new Date().toISOString());
    await claimAgain();
    expect(await cleanEarlierAttempts(db, objects, job)).toBe(0);
    expect(await keysUnder(prefix)).toEqual([`${prefix}combined.png`]);
    await db.close();
  });
});
