import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type SqliteDb } from '../db';
import { MIGRATIONS } from './index';
import { ensureOrganization } from '../repositories/organizations.repository';
import { seedGraph } from '../../test/seed';

// Migration 8 gives every sheet processed before it its Sheet block (contract §4): the whole page,
// the sheet's own image, created when the sheet was — and never a second one.

let db: SqliteDb | undefined;
afterEach(async () => await db?.close());

describe('migration 8 (sheet-blocks)', () => {
  it('adds one Sheet block covering the page to every sheet that has none, and only those', async () => {
    db = openDatabase(':memory:', MIGRATIONS.slice(0, 7));
    const org = (await ensureOrganization(db, 'Migration org')).id;
    const g = await seedGraph(db, org);
    await db
      .prepare(`UPDATE sheets SET image_key = 'projects/x/image.png', width = 640, height = 480`)
      .run();
    // The second sheet already has one (processed by a newer version): it keeps exactly that one.
    await db
      .prepare(
        `INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, created_at, updated_at)
       SELECT 'blk_existing', organization_id, project_id, drawing_id, id, 'Sheet', '{"x":0,"y":0,"width":640,"height":480}', created_at, created_at
       FROM sheets WHERE id = ?`,
      )
      .run(g.sheetIds[1]);
    migrate(db.raw, MIGRATIONS);
    for (const sheetId of g.sheetIds) {
      const sheet = (await db.prepare('SELECT * FROM sheets WHERE id = ?').get(sheetId)) as any;
      const rows = (await db
        .prepare(`SELECT * FROM blocks WHERE sheet_id = ? AND type = 'Sheet'`)
        .all(sheetId)) as any[];
      expect(rows, sheetId).toHaveLength(1);
      const b = rows[0];
      expect(JSON.parse(b.bbox)).toEqual({ x: 0, y: 0, width: 640, height: 480 });
      if (sheetId === g.sheetIds[1]) {
        expect(b.id).toBe('blk_existing');
        continue;
      }
      expect(b.id).toMatch(/^blk_[0-9a-f]{20}$/);
      expect(b.image_key).toBe(sheet.image_key);
      expect(b.created_at).toBe(sheet.created_at);
      expect([b.organization_id, b.project_id, b.drawing_id]).toEqual([
        sheet.organization_id,
        sheet.project_id,
        sheet.drawing_id,
      ]);
      expect([b.title, b.identifier, b.scale]).toEqual([null, null, null]);
    }
    // The views are untouched.
    expect(
      await db.prepare(`SELECT count(*) AS n FROM blocks WHERE type <> 'Sheet'`).get(),
    ).toEqual({
      n: g.blockIds.length,
    });
  });
});
