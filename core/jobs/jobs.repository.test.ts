import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobsRepository, type NewJob } from './jobs.repository';
import { seedOrgAndProject, tempDb, type TempDb } from './test-support';

let t: TempDb;
let repo: JobsRepository;
let orgId: string;
let projectId: string;

beforeEach(() => {
  t = tempDb();
  repo = new JobsRepository(t.db);
  ({ orgId, projectId } = seedOrgAndProject(t.db));
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
  it('inserts Queued jobs with their payload as JSON', () => {
    const { row, created } = repo.insert(spec({ payload: { analyze: true } }));
    expect(created).toBe(true);
    expect(row).toMatchObject({ status: 'Queued', attempts: 0, parent_id: null, started_at: null });
    expect(JSON.parse(row.payload)).toEqual({ analyze: true });
    expect(repo.get(orgId, row.id)?.id).toBe(row.id);
    expect(repo.get('org_other', row.id)).toBeUndefined();
  });

  it('inserts a child idempotently by (parent_id, child_key)', () => {
    const parent = repo.insert(spec()).row;
    const a = repo.insert(spec({ parent_id: parent.id, child_key: 'sheet-1', type: 'pair' }));
    const b = repo.insert(spec({ parent_id: parent.id, child_key: 'sheet-1', type: 'pair' }));
    expect(a.created).toBe(true);
    expect(b).toEqual({ row: a.row, created: false });
    expect(repo.children(parent.id)).toHaveLength(1);
    // The same key naming different work is a bug in the caller, not a silent success.
    expect(() =>
      repo.insert(spec({ parent_id: parent.id, child_key: 'sheet-1', type: 'other' })),
    ).toThrow(/already names a pair job/);
    // Top-level jobs (no parent) never collide on a NULL key.
    expect(repo.insert(spec()).created).toBe(true);
    expect(() => repo.insert(spec({ child_key: 'x' }))).toThrow(/needs a parent_id/);
  });

  it('claims the oldest Queued job of a handled type, once', () => {
    const first = repo.insert(spec({ type: 'a' })).row;
    const other = repo.insert(spec({ type: 'b' })).row;
    const second = repo.insert(spec({ type: 'a' })).row;
    const c1 = repo.claimNext(['a'])!;
    expect(c1).toMatchObject({ id: first.id, status: 'Started', attempts: 1 });
    expect(c1.started_at).not.toBeNull();
    expect(repo.claimNext(['a'])!.id).toBe(second.id);
    expect(repo.claimNext(['a'])).toBeUndefined();
    expect(repo.claimNext([])).toBeUndefined();
    expect(repo.claimNext(['a', 'b'])!.id).toBe(other.id);
  });

  it('guards every status write with the status machine', () => {
    const q = repo.insert(spec()).row;
    // Queued cannot complete, fail or record progress.
    expect(repo.complete(q.id, { ok: 1 })).toBeUndefined();
    expect(repo.fail(q.id, { code: 'x' })).toBeUndefined();
    expect(repo.updateProgress(q.id, 1, 2)).toBeUndefined();
    repo.claimNext(['compare']);
    expect(repo.updateProgress(q.id, 1, 2)).toMatchObject({
      progress_completed: 1,
      progress_total: 2,
    });
    expect(repo.updateProgress(q.id, 1, 2)).toBeUndefined(); // unchanged: no write, no event
    const done = repo.complete(q.id, { ok: 1 })!;
    expect(done).toMatchObject({ status: 'Completed', result: '{"ok":1}' });
    expect(done.finished_at).not.toBeNull();
    // Nothing leaves a terminal status.
    expect(repo.fail(q.id, { code: 'x' })).toBeUndefined();
    expect(repo.cancelTree(q.id)).toEqual([]);
    expect(repo.updateProgress(q.id, 2, 2)).toBeUndefined();
    expect(repo.resetStarted()).toEqual([]);
    expect(repo.getById(q.id)?.status).toBe('Completed');

    const c = repo.insert(spec()).row;
    repo.claimNext(['compare']);
    expect(repo.cancelTree(c.id).map((r) => r.status)).toEqual(['Canceled']);
    expect(repo.complete(c.id, {})).toBeUndefined();
    expect(repo.fail(c.id, {})).toBeUndefined();
    expect(repo.getById(c.id)).toMatchObject({ status: 'Canceled', result: null, error: null });
  });

  it('does not complete or fail a parent while a child is open', () => {
    const parent = repo.insert(spec()).row;
    repo.claimNext(['compare']);
    const child = repo.insert(spec({ parent_id: parent.id, child_key: 'k', type: 'pair' })).row;
    expect(repo.complete(parent.id, {})).toBeUndefined();
    expect(repo.fail(parent.id, {})).toBeUndefined();
    expect(repo.openChildCount(parent.id)).toBe(1);
    repo.claimNext(['pair']);
    repo.complete(child.id, {});
    expect(repo.openChildCount(parent.id)).toBe(0);
    expect(repo.complete(parent.id, {})?.status).toBe('Completed');
  });

  it('lists descendants across generations and cancels the whole open tree', () => {
    const root = repo.insert(spec()).row;
    const a = repo.insert(spec({ parent_id: root.id, child_key: 'a' })).row;
    const b = repo.insert(spec({ parent_id: root.id, child_key: 'b' })).row;
    const a1 = repo.insert(spec({ parent_id: a.id, child_key: '1' })).row;
    const a1x = repo.insert(spec({ parent_id: a1.id, child_key: 'x' })).row;
    const unrelated = repo.insert(spec()).row;
    expect(repo.descendants(root.id).map((r) => r.id)).toEqual([a.id, b.id, a1.id, a1x.id]);
    expect(repo.descendants(a1x.id)).toEqual([]);

    // b finished before the cancel: it keeps its status.
    t.db.prepare(`UPDATE jobs SET status = 'Completed' WHERE id = ?`).run(b.id);
    const canceled = repo.cancelTree(root.id);
    expect(canceled.map((r) => r.id).sort()).toEqual([root.id, a.id, a1.id, a1x.id].sort());
    expect(canceled.every((r) => r.status === 'Canceled' && r.finished_at !== null)).toBe(true);
    expect(repo.getById(b.id)?.status).toBe('Completed');
    expect(repo.getById(unrelated.id)?.status).toBe('Queued');
  });

  it('puts Started jobs back to Queued at boot, keeping progress and attempts', () => {
    const j = repo.insert(spec()).row;
    const queued = repo.insert(spec()).row;
    repo.claimNext(['compare']);
    repo.updateProgress(j.id, 3, 10);
    const reset = repo.resetStarted();
    expect(reset.map((r) => r.id)).toEqual([j.id]);
    expect(reset[0]).toMatchObject({
      status: 'Queued',
      started_at: null,
      attempts: 1,
      progress_completed: 3,
    });
    expect(repo.getById(queued.id)?.status).toBe('Queued');
    expect(repo.claimNext(['compare'])).toMatchObject({ id: j.id, attempts: 2 });
  });
});
