import { monotonicNow } from '../domain/clock';
import { newId } from '../domain/ids';
import type { Db } from '../store/db';

// Inserts a realistic graph of records straight into the store, for list/expansion/isolation tests
// that must not depend on the vision pipeline. Test-only.

export interface SeededGraph {
  projectId: string;
  fileId: string;
  drawingIds: [string, string];
  sheetIds: string[];
  blockIds: string[];
  jobId: string;
  overlayIds: string[];
  changeIds: string[];
  symbolIds: string[];
}

export async function seedGraph(
  db: Db,
  organizationId: string,
  opts: { overlays?: number; projectId?: string } = {},
): Promise<SeededGraph> {
  const now = () => monotonicNow();
  const projectId = opts.projectId ?? newId('project');
  return await db.transaction(async (tx) => {
    if (!opts.projectId) {
      const t = now();
      await tx
        .prepare(
          'INSERT INTO projects (id, organization_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
        )
        .run(projectId, organizationId, 'Seeded project', t, t);
    }
    const fileId = newId('file');
    let t = now();
    await tx
      .prepare(
        `INSERT INTO files (id, organization_id, project_id, filename, content_type, size_bytes, sha256, status, object_key, created_at, updated_at)
       VALUES (?, ?, ?, 'set.pdf', 'application/pdf', 1234, 'ab', 'uploaded', ?, ?, ?)`,
      )
      .run(fileId, organizationId, projectId, `projects/${projectId}/files/seed_${fileId}`, t, t);
    const drawingIds = [newId('drawing'), newId('drawing')] as [string, string];
    const sheetIds: string[] = [];
    const blockIds: string[] = [];
    for (const [i, d] of drawingIds.entries()) {
      t = now();
      await tx
        .prepare(
          `INSERT INTO drawings (id, organization_id, project_id, name, file_id, revision, status, sheet_count, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'Ready', 1, ?, ?)`,
        )
        .run(d, organizationId, projectId, `Issue ${i + 1}`, fileId, `Rev ${i}`, t, t);
      const s = newId('sheet');
      t = now();
      await tx
        .prepare(
          `INSERT INTO sheets (id, organization_id, project_id, drawing_id, page_index, sheet_number, title, discipline, width, height, dpi, created_at, updated_at)
         VALUES (?, ?, ?, ?, 0, 'A-101', 'FIRST FLOOR PLAN', 'architectural', 100, 100, 150, ?, ?)`,
        )
        .run(s, organizationId, projectId, d, t, t);
      sheetIds.push(s);
      const b = newId('block');
      t = now();
      await tx
        .prepare(
          `INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'Plan', '{"x":0,"y":0,"width":100,"height":100}', ?, ?)`,
        )
        .run(b, organizationId, projectId, d, s, t, t);
      blockIds.push(b);
    }
    const jobId = newId('job');
    t = now();
    await tx
      .prepare(
        `INSERT INTO jobs (id, organization_id, project_id, type, status, target_type, target_id, created_at, updated_at)
       VALUES (?, ?, ?, 'compare', 'Completed', 'drawing', ?, ?, ?)`,
      )
      .run(jobId, organizationId, projectId, drawingIds[1], t, t);
    const overlayIds: string[] = [];
    const changeIds: string[] = [];
    const symbolIds: string[] = [];
    const n = opts.overlays ?? 1;
    // Overlays are unique per (job, block_a, block_b): give each side k blocks and use k*k pairs.
    const k = Math.ceil(Math.sqrt(n));
    const sideA = [blockIds[0]!];
    const sideB = [blockIds[1]!];
    const insBlock = tx.prepare(
      `INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, 'Detail', '{"x":0,"y":0,"width":10,"height":10}', ?, ?)`,
    );
    for (const [side, di] of [
      [sideA, 0],
      [sideB, 1],
    ] as const) {
      while (side.length < k) {
        const b = newId('block');
        t = now();
        await insBlock.run(b, organizationId, projectId, drawingIds[di], sheetIds[di], t, t);
        side.push(b);
      }
    }
    const insOverlay = tx.prepare(
      `INSERT INTO overlays (id, organization_id, project_id, job_id, block_a_id, block_b_id, score, has_changes, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 0.97, ?, ?, ?)`,
    );
    for (let i = 0; i < n; i++) {
      const o = newId('overlay');
      t = now();
      await insOverlay.run(
        o,
        organizationId,
        projectId,
        jobId,
        sideA[i % k],
        sideB[Math.floor(i / k)],
        i % 2,
        t,
        t,
      );
      overlayIds.push(o);
    }
    const c = newId('change');
    t = now();
    await tx
      .prepare(
        `INSERT INTO changes (id, organization_id, project_id, overlay_id, bbox, kind, category, area_px, confidence, created_at, updated_at)
       VALUES (?, ?, ?, ?, '{"x":1,"y":2,"width":3,"height":4}', 'added', 'geometry', 12, 0.9, ?, ?)`,
      )
      .run(c, organizationId, projectId, overlayIds[0], t, t);
    changeIds.push(c);
    const sy = newId('symbol');
    t = now();
    await tx
      .prepare(
        `INSERT INTO symbols (id, organization_id, project_id, job_id, sheet_id, block_id, label, bbox, confidence, rotation, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'door', '{"x":1,"y":2,"width":3,"height":4}', 0.8, 90, ?, ?)`,
      )
      .run(sy, organizationId, projectId, jobId, sheetIds[0], blockIds[0], t, t);
    symbolIds.push(sy);
    return {
      projectId,
      fileId,
      drawingIds,
      sheetIds,
      blockIds,
      jobId,
      overlayIds,
      changeIds,
      symbolIds,
    };
  });
}
