import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobsRepository, type NewJob } from './jobs.repository';
import { seedOrgAndProject, tempDb, type TempDb } from './test-support';

let t: TempDb;
let repo: JobsRepository;
let orgId: string;
let projectId: string;

beforeEach(async () => {
  t = tempDb();
  repo = new JobsRepository(t.db);
  ({ orgId, projectId } = await seedOrgAndProject(t.db));
});
afterEach(() => t.cleanup());

const spec = (over: Partial<NewJob> = {}): NewJob => ({
  organization_id: orgId,
  project_id: projectId,
  type: 'compare',
  target_type: 'drawing',
  target_id: 'drw_1',
  ...over,
});

describe('jobs repository', () => {
  it('inserts Queued jobs with their payload as JSON', async () => {
    const { row, created } = await repo.insert(spec({ payload: { analyze: true } }));
    expect(created).toBe(true);
    expect(row).toMatchObject({ status: 'Queued', attempts: 0, parent_id: null, started_at: null });
    expect(JSON.parse(row.payload)).toEqual({ analyze: true });
    expect((await repo.get(orgId, row.id))?.id).toBe(row.id);
    expect(await repo.get('org_other', row.id)).toBeUndefined();
  });

  it('inserts a child idempotently by (parent_id, child_key)', async () => {
    const parent = (await repo.insert(spec())).row;
    const a = await repo.insert(spec({ parent_id: parent.id, child_key: 'sheet-1', type: 'pair' }));
    const b = await repo.insert(spec({ parent_id: parent.id, child_key: 'sheet-1', type: 'pair' }));
    expect(a.created).toBe(true);
    expect(b).toEqual({ row: a.row, created: false });
    expect(await repo.children(parent.id)).toHaveLength(1);
    // The same key naming different work is a bug in the caller, not a silent success.
    await expect(
      (async () =>
        await repo.insert(spec({ parent_id: parent.id, child_key: 'sheet-1', type: 'other' })))(),
    ).rejects.toThrow(/already names a pair job/);
    // Top-level jobs (no parent) never collide on a NULL key.
    expect((await repo.insert(spec())).created).toBe(true);
    await expect((async () => await repo.insert(spec({ child_key: 'x' })))()).rejects.toThrow(
      /needs a parent_id/,
    );
  });

  it('claims the oldest Queued job of a handled type, once', async () => {
    const first = (await repo.insert(spec({ type: 'a' }))).row;
    const other = (await repo.insert(spec({ type: 'b' }))).row;
    const second = (await repo.insert(spec({ type: 'a' }))).row;
    const c1 = (await repo.claimNext(['a']))!;
    expect(c1).toMatchObject({ id: first.id, status: 'Started', attempts: 1 });
    expect(c1.started_at).not.toBeNull();
    expect((await repo.claimNext(['a']))!.id).toBe(second.id);
    expect(await repo.claimNext(['a'])).toBeUndefined();
    expect(await repo.claimNext([])).toBeUndefined();
    expect((await repo.claimNext(['a', 'b']))!.id).toBe(other.id);
  });

  it('guards every status write with the status machine', async () => {
    const q = (await repo.insert(spec())).row;
    // Queued cannot complete, fail or record progress.
    expect(await repo.complete(q.id, { ok: 1 })).toBeUndefined();
    expect(await repo.fail(q.id, { code: 'x' })).toBeUndefined();
    expect(await repo.updateProgress(q.id, 1, 2)).toBeUndefined();
    await repo.claimNext(['compare']);
    expect(await repo.updateProgress(q.id, 1, 2)).toMatchObject({
      progress_completed: 1,
      progress_total: 2,
    });
    expect(await repo.updateProgress(q.id, 1, 2)).toBeUndefined(); // unchanged: no write, no event
    const done = (await repo.complete(q.id, { ok: 1 }))!;
    expect(done).toMatchObject({ status: 'Completed', result: '{"ok":1}' });
    expect(done.finished_at).not.toBeNull();
    // Nothing leaves a terminal status.
    expect(await repo.fail(q.id, { code: 'x' })).toBeUndefined();
    expect(await repo.cancelTree(q.id)).toEqual([]);
    expect(await repo.updateProgress(q.id, 2, 2)).toBeUndefined();
    expect(await repo.resetStarted()).toEqual([]);
    expect((await repo.getById(q.id))?.status).toBe('Completed');

    const c = (await repo.insert(spec())).row;
    await repo.claimNext(['compare']);
    expect((await repo.cancelTree(c.id)).map((r) => r.status)).toEqual(['Canceled']);
    expect(await repo.complete(c.id, {})).toBeUndefined();
    expect(await repo.fail(c.id, {})).toBeUndefined();
    expect(await repo.getById(c.id)).toMatchObject({
      status: 'Canceled',
      result: null,
      error: null,
    });
  });

  it('does not complete or fail a parent while a child is open', async () => {
    const parent = (await repo.insert(spec())).row;
    await repo.claimNext(['compare']);
    const child = (await repo.insert(spec({ parent_id: parent.id, child_key: 'k', type: 'pair' })))
      .row;
    expect(await repo.complete(parent.id, {})).toBeUndefined();
    expect(await repo.fail(parent.id, {})).toBeUndefined();
    expect(await repo.openChildCount(parent.id)).toBe(1);
    await repo.claimNext(['pair']);
    await repo.complete(child.id, {});
    expect(await repo.openChildCount(parent.id)).toBe(0);
    expect((await repo.complete(parent.id, {}))?.status).toBe('Completed');
  });

  it('lists descendants across generations and cancels the whole open tree', async () => {
    const root = (await repo.insert(spec())).row;
    const a = (await repo.insert(spec({ parent_id: root.id, child_key: 'a' }))).row;
    const b = (await repo.insert(spec({ parent_id: root.id, child_key: 'b' }))).row;
    const a1 = (await repo.insert(spec({ parent_id: a.id, child_key: '1' }))).row;
    const a1x = (await repo.insert(spec({ parent_id: a1.id, child_key: 'x' }))).row;
    const unrelated = (await repo.insert(spec())).row;
    expect((await repo.descendants(root.id)).map((r) => r.id)).toEqual([a.id, b.id, a1.id, a1x.id]);
    expect(await repo.descendants(a1x.id)).toEqual([]);

    // b finished before the cancel: it keeps its status.
    await t.db.prepare(`UPDATE jobs SET status = 'Completed' WHERE id = ?`).run(b.id);
    const canceled = await repo.cancelTree(root.id);
    expect(canceled.map((r) => r.id).sort()).toEqual([root.id, a.id, a1.id, a1x.id].sort());
    expect(canceled.every((r) => r.status === 'Canceled' && r.finished_at !== null)).toBe(true);
    expect((await repo.getById(b.id))?.status).toBe('Completed');
    expect((await repo.getById(unrelated.id))?.status).toBe('Queued');
  });

  it('puts Started jobs back to Queued at boot, keeping progress and attempts', async () => {
    const j = (await repo.insert(spec())).row;
    const queued = (await repo.insert(spec())).row;
    await repo.claimNext(['compare']);
    await repo.updateProgress(j.id, 3, 10);
    const reset = await repo.resetStarted();
    expect(reset.map((r) => r.id)).toEqual([j.id]);
    expect(reset[0]).toMatchObject({
      status: 'Queued',
      started_at: null,
      attempts: 1,
      progress_completed: 3,
    });
    expect((await repo.getById(queued.id))?.status).toBe('Queued');
    expect(await repo.claimNext(['compare'])).toMatchObject({ id: j.id, attempts: 2 });
  });
});
