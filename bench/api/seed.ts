import { monotonicNow } from '../../core/domain/clock';
import { newId } from '../../core/domain/ids';
import type { Db } from '../../core/store/db';
import { seedGraph } from '../../core/test/seed';

/**
 * `count` overlays of one comparison job: each pairs one of √N blocks on sheet A with one of √N
 * blocks on sheet B (overlays are unique per job and block pair), so an expanded page references
 * ~100 distinct blocks, 2 sheets, 2 drawings and 1 job, like a real drawing-set comparison.
 * With `images`, every overlay, block and sheet carries object keys, so pages also pay for URL
 * signing the way processed data does.
 */
export async function seedOverlays(
  db: Db,
  organizationId: string,
  count: number,
  opts: { images?: boolean } = {},
): Promise<void> {
  const g = await seedGraph(db, organizationId);
  const side = Math.ceil(Math.sqrt(count));
  const BLOCK_SQL = `INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, image_key, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'Detail', '{"x":0,"y":0,"width":10,"height":10}', ?, ?, ?)`;
  const OVERLAY_SQL = `INSERT INTO overlays (id, organization_id, project_id, job_id, block_a_id, block_b_id, score, has_changes, images, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
  await db.transaction(async (tx) => {
    const insBlock = tx.prepare(BLOCK_SQL);
    const insOverlay = tx.prepare(OVERLAY_SQL);
    if (opts.images) {
      const setKeys = tx.prepare('UPDATE sheets SET image_key = ?, thumbnail_key = ? WHERE id = ?');
      for (const s of g.sheetIds)
        await setKeys.run(
          `projects/${g.projectId}/sheets/${s}.png`,
          `projects/${g.projectId}/sheets/${s}.thumb.png`,
          s,
        );
    }
    const a: string[] = [];
    const b: string[] = [];
    for (let i = 0; i < side; i++) {
      for (const [list, k] of [
        [a, 0],
        [b, 1],
      ] as const) {
        const id = newId('block');
        const t = monotonicNow();
        const key = opts.images ? `projects/${g.projectId}/blocks/${id}.png` : null;
        await insBlock.run(
          id,
          organizationId,
          g.projectId,
          g.drawingIds[k],
          g.sheetIds[k],
          key,
          t,
          t,
        );
        list.push(id);
      }
    }
    // seedGraph already made one overlay (blocks 0/1 of the graph); add the rest.
    for (let n = 0; n < count - 1; n++) {
      const t = monotonicNow();
      const id = newId('overlay');
      const images = opts.images
        ? JSON.stringify(
            Object.fromEntries(
              ['combined', 'addition', 'deletion', 'aligned_b'].map((k) => [
                k,
                `projects/${g.projectId}/overlays/${id}/${k}.png`,
              ]),
            ),
          )
        : '{}';
      await insOverlay.run(
        id,
        organizationId,
        g.projectId,
        g.jobId,
        a[n % side],
        b[Math.floor(n / side) % side],
        0.9 + (n % 10) / 100,
        n % 2,
        images,
        t,
        t,
      );
    }
  });
}
