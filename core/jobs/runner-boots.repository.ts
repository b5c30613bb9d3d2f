// SQL for `runner_boots`: one row per start of a job runner. A row without `ended_at` belongs to a
// runner that is running now or whose process died; the next start (there is one runner per
// database) reads the latter as "died" and closes it (crash-attribution.ts).
import type { Db } from '../store/db';
import { monotonicNow } from '../domain/clock';

export interface RunnerBootRow {
  id: string;
  started_at: string;
  ended_at: string | null;
  end_reason: 'stopped' | 'died' | null;
}

/** Ended boots kept (for claims that still name them); older ones are deleted at each start. */
const KEEP_ENDED = 100;

export class RunnerBootsRepository {
  private readonly s;

  constructor(readonly db: Db) {
    this.s = {
      insert: db.prepare(`INSERT INTO runner_boots (id, started_at) VALUES (?, ?)`),
      open: db.prepare(`SELECT * FROM runner_boots WHERE ended_at IS NULL AND id <> ?`),
      get: db.prepare(`SELECT * FROM runner_boots WHERE id = ?`),
      end: db.prepare(
        `UPDATE runner_boots SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL`,
      ),
      prune: db.prepare(`
        DELETE FROM runner_boots WHERE ended_at IS NOT NULL AND id NOT IN (
          SELECT id FROM runner_boots WHERE ended_at IS NOT NULL ORDER BY started_at DESC LIMIT ${KEEP_ENDED}
        ) AND id NOT IN (SELECT claim_boot FROM jobs WHERE status = 'Started' AND claim_boot IS NOT NULL)`),
    };
  }

  async insert(id: string): Promise<void> {
    await this.s.insert.run(id, monotonicNow());
  }

  /** Boots other than `exceptId` that never ended: their processes died. */
  async openBoots(exceptId: string): Promise<RunnerBootRow[]> {
    return (await this.s.open.all(exceptId)) as RunnerBootRow[];
  }

  async get(id: string): Promise<RunnerBootRow | undefined> {
    return (await this.s.get.get(id)) as RunnerBootRow | undefined;
  }

  async end(id: string, reason: 'stopped' | 'died'): Promise<void> {
    await this.s.end.run(monotonicNow(), reason, id);
  }

  async prune(): Promise<void> {
    await this.s.prune.run();
  }
}
