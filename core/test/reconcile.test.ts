import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  blockCropKey,
  fileKey,
  imageTileKey,
  overlayImageKey,
  sheetImageKey,
  sheetThumbnailKey,
  drawingPrefix,
  overlayPrefix,
  projectPrefix,
  sheetPrefix,
} from '../blobs/keys';
import { LocalObjectStore } from '../blobs/local-object-store';
import { monotonicNow } from '../domain/clock';
import { newId } from '../domain/ids';
import { createService } from '../service';
import {
  DatabaseCorruptError,
  openCheckedDatabase,
  reconcile,
} from '../services/reconcile.service';
import { openDatabase, type SqliteDb } from '../store/db';
import { ensureOrganization } from '../store/repositories/organizations.repository';
import { seedGraph } from './seed';

// Boot-time reconciliation (issue 7): orphans made the way a crash makes them are removed, every
// keeper stays — above all the bytes of a file whose row exists, even a pending one — and a
// corrupt database stops the boot with a message that says what to do.

let dir: string;
let db: SqliteDb;
let objects: LocalObjectStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'blueline-reconcile-'));
  db = openDatabase(join(dir, 'blueline.db'));
  objects = new LocalObjectStore({ dataDir: dir });
});
afterEach(async () => {
  try {
    await db.close();
  } catch {
    // closed by the test
  }
  rmSync(dir, { recursive: true, force: true });
});

const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const put = (key: string) => objects.put(key, png, { contentType: 'image/png' });

async function insertFile(
  projectId: string,
  orgId: string,
  status: 'pending' | 'uploaded',
): Promise<string> {
  const id = newId('file');
  const t = monotonicNow();
  const key = fileKey(projectId, t, id);
  await db
    .prepare(
      `INSERT INTO files (id, organization_id, project_id, filename, content_type, status, object_key, created_at, updated_at)
     VALUES (?, ?, ?, 'a.pdf', 'application/pdf', ?, ?, ?, ?)`,
    )
    .run(id, orgId, projectId, status, key, t, t);
  return key;
}

const capture = () => {
  const lines: { level: string; obj: unknown; msg?: string }[] = [];
  const rec = (level: string) => (obj: unknown, msg?: string) => lines.push({ level, obj, msg });
  return { lines, log: { info: rec('info'), warn: rec('warn'), error: rec('error') } };
};

describe('reconcile', () => {
  it('removes orphaned objects and rows, keeps every object a row owns', async () => {
    const org = (await ensureOrganization(db, 'Org')).id;
    const g = await seedGraph(db, org);
    const [drw] = g.drawingIds;
    const [sht] = g.sheetIds;
    const [blk] = g.blockIds;
    const [ovl] = g.overlayIds;
    const prj = g.projectId;

    // Keepers: everything a row names, plus derived tiles beside kept images.
    const keepers = [
      sheetImageKey(prj, drw, sht!),
      sheetThumbnailKey(prj, drw, sht!),
      imageTileKey(sheetImageKey(prj, drw, sht!), 0, 0, 0),
      blockCropKey(prj, drw, sht!, blk!),
      imageTileKey(blockCropKey(prj, drw, sht!, blk!), 1, 0, 1),
      overlayImageKey(prj, ovl!, 'combined'),
      overlayImageKey(prj, ovl!, 'aligned-b'),
      await insertFile(prj, org, 'uploaded'),
      // A pending file's bytes (a crash between the PUT's bytes and its row update): kept.
      await insertFile(prj, org, 'pending'),
    ];
    // Orphans, as a kill between "bytes first" and "rows after" (or a half-done delete) leaves them.
    const deadSheet = newId('sheet');
    const deadBlock = newId('block');
    const deadDrawing = newId('drawing');
    const deadOverlay = newId('overlay');
    const deadProject = newId('project');
    const orphans = [
      sheetImageKey(prj, drw, deadSheet),
      sheetThumbnailKey(prj, drw, deadSheet),
      blockCropKey(prj, drw, deadSheet, newId('block')),
      blockCropKey(prj, drw, sht!, deadBlock),
      imageTileKey(blockCropKey(prj, drw, sht!, deadBlock), 0, 0, 0),
      sheetImageKey(prj, deadDrawing, newId('sheet')),
      overlayImageKey(prj, deadOverlay, 'combined'),
      overlayImageKey(prj, deadOverlay, 'deletion'),
      fileKey(prj, monotonicNow(), newId('file')), // bytes of a deleted file
      sheetImageKey(deadProject, newId('drawing'), newId('sheet')),
      fileKey(deadProject, monotonicNow(), newId('file')),
    ];
    for (const k of [...keepers, ...orphans]) await put(k);
    // A temp file of an interrupted write.
    writeFileSync(join(objects.root, projectPrefix(prj), '.tmp-deadbeefdeadbeef'), 'half');

    // Rows: search rows of a deleted sheet/drawing; a drawing left Processing by a finished job.
    const ins = db.prepare(
      'INSERT INTO search_index (text, kind, ref_id, sheet_id, drawing_id, project_id, organization_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    await ins.run('kept text', 'text', sht, sht, drw, prj, org);
    await ins.run('orphan text', 'text', deadSheet, deadSheet, drw, prj, org);
    await ins.run('orphan drawing', 'sheet', deadSheet, deadSheet, deadDrawing, prj, org);
    await ins.run('orphan project', 'sheet', 'x', null, null, deadProject, org);
    await db
      .prepare(
        "UPDATE drawings SET status = 'Processing', job_id = ?, sheet_count = 0 WHERE id = ?",
      )
      .run(g.jobId, drw);

    const { lines, log } = capture();
    const report = await reconcile({ db, objects, log });

    for (const k of keepers) expect(await objects.stat(k), `kept ${k}`).not.toBeNull();
    for (const k of orphans) expect(await objects.stat(k), `removed ${k}`).toBeNull();
    expect(report.orphanObjects).toBe(orphans.length);
    expect(report.orphanPrefixes.sort()).toEqual(
      [
        projectPrefix(deadProject),
        drawingPrefix(prj, deadDrawing),
        sheetPrefix(prj, drw, deadSheet),
        overlayPrefix(prj, deadOverlay),
      ].sort(),
    );
    expect(report.sweep.tempFiles).toBe(1);
    expect(
      readdirSync(join(objects.root, projectPrefix(prj))).some((n) => n.startsWith('.tmp-')),
    ).toBe(false);
    expect(existsSync(join(objects.root, projectPrefix(deadProject)))).toBe(false);
    expect(report.orphanSearchRows).toBe(3);
    expect(await db.prepare('SELECT text FROM search_index').all()).toEqual([
      { text: 'kept text' },
    ]);
    expect(report.repairedDrawings).toBe(1);
    expect(
      await db.prepare('SELECT status, sheet_count FROM drawings WHERE id = ?').get(drw),
    ).toEqual({
      status: 'Ready',
      sheet_count: 1,
    });
    // The seeded rows name no bytes except what we stored: the seed's file key is a fake one.
    expect(report.missingObjects).toEqual([`projects/${prj}/files/seed_${g.fileId}`]);
    const line = lines.find((l) => l.msg === 'Boot reconciliation');
    expect(line?.obj).toMatchObject({
      orphan_objects: orphans.length,
      temp_files: 1,
      orphan_search_rows: 3,
      repaired_drawings: 1,
    });
    expect(lines.some((l) => l.level === 'warn' && /lost bytes/.test(l.msg ?? ''))).toBe(true);

    // Idempotent: a second pass finds nothing more to do.
    const again = await reconcile({ db, objects });
    expect(again).toMatchObject({
      orphanObjects: 0,
      orphanSearchRows: 0,
      repairedDrawings: 0,
      orphanPrefixes: [],
    });
    expect(again.sweep.tempFiles).toBe(0);
  });

  it('a drawing left Processing by a canceled or vanished job becomes Failed; a running one stays', async () => {
    const org = (await ensureOrganization(db, 'Org')).id;
    const g = await seedGraph(db, org);
    const [d1, d2] = g.drawingIds;
    await db.prepare("UPDATE jobs SET status = 'Canceled' WHERE id = ?").run(g.jobId);
    await db
      .prepare("UPDATE drawings SET status = 'Processing', job_id = ? WHERE id = ?")
      .run(g.jobId, d1);
    const running = newId('job');
    const t = monotonicNow();
    await db
      .prepare(
        `INSERT INTO jobs (id, organization_id, project_id, type, status, target_type, target_id, created_at, updated_at) VALUES (?, ?, ?, 'process', 'Queued', 'drawing', ?, ?, ?)`,
      )
      .run(running, org, g.projectId, d2, t, t);
    await db
      .prepare("UPDATE drawings SET status = 'Processing', job_id = ? WHERE id = ?")
      .run(running, d2);
    const r = await reconcile({ db, objects });
    expect(r.repairedDrawings).toBe(1);
    const status = async (id: string) =>
      ((await db.prepare('SELECT status FROM drawings WHERE id = ?').get(id)) as { status: string })
        .status;
    expect(await status(d1)).toBe('Failed');
    expect(await status(d2)).toBe('Processing');
  });

  it('the service reconciles at boot: orphans gone before the port opens', async () => {
    const org = (await ensureOrganization(db, 'Org')).id;
    const g = await seedGraph(db, org);
    const orphan = sheetImageKey(g.projectId, g.drawingIds[0], newId('sheet'));
    const kept = blockCropKey(g.projectId, g.drawingIds[0], g.sheetIds[0]!, g.blockIds[0]!);
    await put(orphan);
    await put(kept);
    await db.close();
    const { lines, log } = capture();
    const svc = await createService({ dataDir: dir, port: 0, log, workers: 1 });
    try {
      expect(await objects.stat(orphan)).toBeNull();
      expect(await objects.stat(kept)).not.toBeNull();
      expect(lines.find((l) => l.msg === 'Boot reconciliation')?.obj).toMatchObject({
        orphan_objects: 1,
      });
    } finally {
      await svc.stop();
    }
  });
});

describe('integrity check at boot', () => {
  function corruptPage(file: string, page: number) {
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, (page - 1) * 4096);
    closeSync(fd);
  }

  it('opens a sound database', async () => {
    await db.close();
    const checked = await openCheckedDatabase(join(dir, 'blueline.db'));
    await checked.close();
  });

  it('refuses a database with a damaged b-tree page, saying how to recover', async () => {
    const org = (await ensureOrganization(db, 'Org')).id;
    for (let i = 0; i < 400; i++) await seedGraph(db, org);
    db.raw.pragma('wal_checkpoint(TRUNCATE)');
    await db.close();
    const file = join(dir, 'blueline.db');
    const pages = statSync(file).size / 4096;
    expect(pages).toBeGreaterThan(10);
    corruptPage(file, Math.floor(pages / 2));
    let err: unknown;
    try {
      await (await openCheckedDatabase(file))?.close();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DatabaseCorruptError);
    expect((err as Error).message).toMatch(/is corrupt \(SQLite integrity check: .+\)/);
    expect((err as Error).message).toMatch(/blueline restore/);
    // And the service itself does not start on it.
    await expect(
      createService({ dataDir: dir, port: 0, log: capture().log, workers: 1 }),
    ).rejects.toBeInstanceOf(DatabaseCorruptError);
  });

  it('refuses a file whose header is not SQLite any more', async () => {
    await db.close();
    const file = join(dir, 'blueline.db');
    corruptPage(file, 1);
    await expect((async () => await openCheckedDatabase(file))()).rejects.toThrow(
      DatabaseCorruptError,
    );
  });
});
