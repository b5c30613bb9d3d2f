import { afterEach, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type SqliteDb } from '../db';
import { MIGRATIONS } from './index';
import { ensureOrganization } from '../repositories/organizations.repository';
import { seedGraph } from '../../test/seed';

// Migration 9 (drawing-issued): drawings get an issue date and the sources of it and of their
// revision label. Labels stored before it came from POST (processing did not write drawings.revision
// then), so they are marked a person's, which processing never replaces.

const VERSION = MIGRATIONS.findIndex((m) => m.name === 'drawing-issued') + 1;

let db: SqliteDb | undefined;
afterEach(async () => await db?.close());

describe('migration drawing-issued', () => {
  it('marks every label stored before it as a person’s and leaves dates unknown', async () => {
    db = openDatabase(':memory:', MIGRATIONS.slice(0, VERSION - 1));
    const org = (await ensureOrganization(db, 'Migration org')).id;
    const g = await seedGraph(db, org);
    await db.prepare('UPDATE drawings SET revision = NULL WHERE id = ?').run(g.drawingIds[1]);
    migrate(db.raw, MIGRATIONS);
    const rows = (await db
      .prepare(
        'SELECT id, revision, revision_source, issued_at, issued_at_source FROM drawings ORDER BY created_at',
      )
      .all()) as Record<string, unknown>[];
    expect(rows).toEqual([
      {
        id: g.drawingIds[0],
        revision: 'Rev 0',
        revision_source: 'person',
        issued_at: null,
        issued_at_source: null,
      },
      {
        id: g.drawingIds[1],
        revision: null,
        revision_source: null,
        issued_at: null,
        issued_at_source: null,
      },
    ]);
    expect(await db.prepare('SELECT issued FROM sheets').all()).toEqual(
      g.sheetIds.map(() => ({ issued: null })),
    );
  });

  it('refuses a source it does not know', async () => {
    db = openDatabase(':memory:');
    const g = await seedGraph(db, (await ensureOrganization(db, 'Migration org')).id);
    await expect(
      (async () =>
        await db!
          .prepare(`UPDATE drawings SET issued_at_source = 'guess' WHERE id = ?`)
          .run(g.drawingIds[0]))(),
    ).rejects.toThrow(/CHECK constraint/);
  });
});
