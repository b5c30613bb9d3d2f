import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate } from '../db';
import { MIGRATIONS } from './index';

// Migration 008 rebuilds `changes` for the categories `fill` and `style` (contract §4): rows, rowids
// and the change search index survive; the new categories are accepted and unknown ones still refused.
describe('migration 012 change-categories', () => {
  it('keeps existing changes searchable and accepts fill and style', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 11));
    db.pragma('foreign_keys = OFF'); // parent rows are beside the point here
    const insert = db.prepare(
      `INSERT INTO changes (id, organization_id, project_id, overlay_id, bbox, kind, category, area_px, confidence, description, created_at, updated_at)
       VALUES (?, 'org_1', 'prj_1', 'ovl_1', '{}', 'removed', ?, 10, 0.9, ?, 't', 't')`,
    );
    insert.run('chg_1', 'geometry', 'Removed geometry near kitchen');
    expect(() => insert.run('chg_2', 'fill', 'x')).toThrow(/CHECK/);
    migrate(db, MIGRATIONS);
    insert.run('chg_2', 'fill', 'Removed fill: tone near garage');
    insert.run('chg_3', 'style', 'Lineweight or pen shade changed');
    expect(() => insert.run('chg_4', 'paint', 'x')).toThrow(/CHECK/);
    const ids = (q: string) =>
      (
        db
          .prepare(
            `SELECT c.id FROM change_search s JOIN changes c ON c.rowid = s.rowid WHERE change_search MATCH ? ORDER BY c.id`,
          )
          .all(q) as { id: string }[]
      ).map((r) => r.id);
    expect(ids('kitchen')).toEqual(['chg_1']);
    expect(ids('garage')).toEqual(['chg_2']);
    db.prepare(`UPDATE changes SET note = 'hatch' WHERE id = 'chg_3'`).run();
    expect(ids('hatch')).toEqual(['chg_3']);
    db.prepare(`DELETE FROM changes WHERE id = 'chg_1'`).run();
    expect(ids('kitchen')).toEqual([]);
    expect(
      (
        db
          .prepare(
            `SELECT name FROM sqlite_master WHERE tbl_name = 'changes' AND type = 'index' ORDER BY name`,
          )
          .all() as { name: string }[]
      ).map((r) => r.name),
    ).toEqual(
      expect.arrayContaining(['changes_org_created', 'changes_overlay', 'changes_project']),
    );
  });
});
