import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { LocalObjectStore } from '../blobs/local-object-store';
import type { ObjectStore } from '../blobs/object-store';
import { projectPrefix } from '../blobs/keys';
import { newId } from '../domain/ids';
import type { Db } from '../store/db';
import { MIGRATIONS } from '../store/migrations/index';
import { BackupError } from './backup.service';

// Moving one project between stores (issue 21): `blueline backup DIR --project ID` writes a
// project archive from any store — the desktop's SQLite file and data dir, or team mode's
// PostgreSQL and bucket — and `blueline restore DIR` reads it into any store. The rows are the
// same on both engines (store/migrations/postgres.ts: same tables, columns and text encodings),
// so an archive is the project's rows as JSON plus its objects' bytes.
//
// What moves: the project, its files (uploads and exports), drawings, sheets, blocks, overlays,
// changes with their reviews and notes, symbols, jobs (history: status, result, credits charged)
// and the search index's text runs; every object under the project's key prefix, byte for byte,
// each checked against its sha256 on the way in and out. The organization moves by name and id:
// a restore uses the target's organization of the same id, else of the same name, else creates
// it — and only then brings its API keys along (stored only as SHA-256 hashes, contract §11, so an
// archive holds no secret; the same keys then work on the target). Credits belong to the
// organization (contract §7) and are not a project's: they never move (the source keeps its
// balance and ledger; grant credits on the target).
//
// Layout of the archive folder:
//   blueline-project.json  the manifest, written last (the commit point): format, version, the
//                          schema version of the rows, counts, the sha256 of records.json and
//                          the key, size and sha256 of every object
//   records.json           { table: rows[] } in insertion order
//   objects/…              the objects (a LocalObjectStore of their own)
//
// Refusals, each with a message saying what to do: a project with jobs still Queued or Started
// (wait or cancel), an archive of another schema version than this Blueline's, a damaged archive
// (records or object bytes not matching the manifest), a project id that exists in the target.

export const PROJECT_MANIFEST = 'blueline-project.json';
const RECORDS_FILE = 'records.json';

export interface ArchivedObject {
  key: string;
  size: number;
  sha256: string;
  content_type: string | null;
}

export interface ProjectManifest {
  format: 'blueline-project';
  version: 1;
  created_at: string;
  /** Highest migration of the store the rows were read from; a restore needs the same. */
  schema_version: number;
  source: { dialect: Db['dialect'] };
  project: { id: string; name: string };
  organization: { id: string; name: string };
  /** Rows per table. */
  tables: Record<string, number>;
  records_bytes: number;
  records_sha256: string;
  objects: ArchivedObject[];
  object_bytes: number;
  /** Keys the rows name that the source store did not have (lost before the backup). */
  missing_objects: string[];
}

export class ProjectArchiveError extends BackupError {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectArchiveError';
  }
}

/** A store pair: the records and the bytes. */
export interface Stores {
  db: Db;
  objects: ObjectStore;
}

type Row = Record<string, unknown>;

/**
 * Tables of a project, in an order that satisfies their foreign keys. Each is selected by its
 * project column; `organizations` and `api_keys` by the project's organization.
 */
const PROJECT_TABLES = [
  'projects',
  'files',
  'jobs',
  'drawings',
  'sheets',
  'blocks',
  'overlays',
  'changes',
  'symbols',
  'search_index',
] as const;
type ProjectTable = (typeof PROJECT_TABLES)[number];

/** Columns that are the engine's own, never data: PostgreSQL's generated tsvector columns and
 * search_index's serial key (SQLite's FTS5 table has none in `SELECT *`). */
const ENGINE_COLUMNS = new Set(['search_tsv', 'tsv', 'rowid']);

function stripEngineColumns(rows: Row[]): Row[] {
  return rows.map((r) => {
    const o: Row = {};
    for (const [k, v] of Object.entries(r)) if (!ENGINE_COLUMNS.has(k)) o[k] = v;
    return o;
  });
}

/** Jobs with each parent before its children (a foreign key). */
function parentsFirst(jobs: Row[]): Row[] {
  const byId = new Map(jobs.map((j) => [j.id as string, j]));
  const out: Row[] = [];
  const done = new Set<string>();
  const visit = (j: Row) => {
    const id = j.id as string;
    if (done.has(id)) return;
    done.add(id);
    const parent = j.parent_id as string | null;
    if (parent && byId.has(parent)) visit(byId.get(parent)!);
    out.push(j);
  };
  for (const j of jobs) visit(j);
  return out;
}

/** Object keys the rows need: uploaded files, sheet images and thumbnails, crops, overlays. */
function referencedKeys(records: Record<string, Row[]>): Set<string> {
  const keys = new Set<string>();
  for (const f of records.files ?? [])
    if (f.status === 'uploaded') keys.add(f.object_key as string);
  for (const s of records.sheets ?? []) {
    if (typeof s.image_key === 'string') keys.add(s.image_key);
    if (typeof s.thumbnail_key === 'string') keys.add(s.thumbnail_key);
  }
  for (const b of records.blocks ?? []) if (typeof b.image_key === 'string') keys.add(b.image_key);
  for (const o of records.overlays ?? []) {
    try {
      for (const v of Object.values(JSON.parse(String(o.images)) as Record<string, unknown>))
        if (typeof v === 'string') keys.add(v);
    } catch {
      // not JSON: no images
    }
  }
  return keys;
}

async function schemaVersion(db: Db): Promise<number> {
  const row = (await db.prepare('SELECT max(version) AS v FROM schema_migrations').get()) as {
    v: number | null;
  };
  return Number(row.v ?? 0);
}

async function allKeys(store: ObjectStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  let token: string | null = null;
  for (;;) {
    const page = await store.list(prefix, { limit: 1000, direction: 'forward', token });
    for (const e of page.keys) out.push(e.key);
    if (page.nextToken === null) return out;
    token = page.nextToken;
  }
}

/** Copies `key`; null when the source has no such key. Checks the sha256 end to end. */
async function copyObject(
  from: ObjectStore,
  to: ObjectStore,
  key: string,
  expectSha256?: string,
): Promise<ArchivedObject | null> {
  const o = await from.get(key);
  if (!o) return null;
  const r = await to.put(key, o.stream(), o.contentType ? { contentType: o.contentType } : {});
  const want = expectSha256 ?? o.sha256;
  if (r.sha256 !== want)
    throw new ProjectArchiveError(
      `The bytes of ${key} do not match their sha256 (read ${r.sha256}, expected ${want}): the ${expectSha256 ? 'archive is damaged' : 'object changed during the copy; try again'}.`,
    );
  return { key, size: r.size, sha256: r.sha256, content_type: o.contentType ?? null };
}

async function isEmptyDir(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Reads the project's rows in one consistent snapshot of the store. */
async function readRecords(
  db: Db,
  projectId: string,
): Promise<{ records: Record<string, Row[]>; schema: number }> {
  return await db.transaction(async (tx) => {
    // One snapshot for every table (SQLite's transaction is one; PostgreSQL's needs asking).
    if (tx.dialect === 'postgres')
      await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const schema = await schemaVersion(tx);
    const project = (await tx.prepare('SELECT * FROM projects WHERE id = ?').get(projectId)) as
      Row | undefined;
    if (!project) throw new ProjectArchiveError(`No project '${projectId}' in this store.`);
    const open = (await tx
      .prepare(
        `SELECT id FROM jobs WHERE project_id = ? AND status IN ('Queued', 'Started') ORDER BY id`,
      )
      .all(projectId)) as { id: string }[];
    if (open.length > 0)
      throw new ProjectArchiveError(
        `Project ${projectId} has ${open.length} job(s) still Queued or Started (e.g. ${open[0]!.id}); wait for them to end or cancel them, then back up again.`,
      );
    const org = project.organization_id as string;
    const records: Record<string, Row[]> = {
      organizations: (await tx
        .prepare('SELECT id, name, created_at, updated_at FROM organizations WHERE id = ?')
        .all(org)) as Row[],
      api_keys: (await tx
        .prepare('SELECT * FROM api_keys WHERE organization_id = ? ORDER BY created_at, id')
        .all(org)) as Row[],
    };
    for (const t of PROJECT_TABLES) {
      const where = t === 'projects' ? 'id = ?' : 'project_id = ?';
      // search_index has no id: its text runs in the order they were written.
      const order = t === 'search_index' ? 'sheet_id, ref_id, text' : 'created_at, id';
      let rows = stripEngineColumns(
        (await tx
          .prepare(`SELECT * FROM ${t} WHERE ${where} ORDER BY ${order}`)
          .all(projectId)) as Row[],
      );
      if (t === 'jobs') rows = parentsFirst(rows);
      records[t] = rows;
    }
    return { records, schema };
  });
}

/**
 * Writes project `projectId` of `source` into the new or empty folder `dest`. Safe while a service
 * uses the store: the rows are one snapshot, and objects are immutable once written (new versions
 * get new keys), so the objects copied after the snapshot are the ones it names.
 */
export async function backupProject(
  source: Stores,
  projectId: string,
  dest: string,
  progress: (msg: string) => void = () => {},
): Promise<ProjectManifest> {
  dest = resolve(dest);
  if (!(await isEmptyDir(dest)))
    throw new ProjectArchiveError(
      `The backup folder ${dest} is not empty; choose a new or empty folder.`,
    );
  const { records, schema } = await readRecords(source.db, projectId);
  try {
    return await writeArchive(source, projectId, dest, records, schema, progress);
  } catch (err) {
    await rm(dest, { recursive: true, force: true }); // it was new or empty: nothing else was there
    throw err;
  }
}

async function writeArchive(
  source: Stores,
  projectId: string,
  dest: string,
  records: Record<string, Row[]>,
  schema: number,
  progress: (msg: string) => void,
): Promise<ProjectManifest> {
  const project = records.projects![0]!;
  const org = records.organizations![0]!;
  progress(
    `records: ${Object.entries(records)
      .map(([t, rows]) => `${rows.length} ${t}`)
      .join(', ')}`,
  );

  await mkdir(dest, { recursive: true, mode: 0o700 });
  const stage = new LocalObjectStore({ dataDir: dest });
  const objects: ArchivedObject[] = [];
  let objectBytes = 0;
  for (const key of await allKeys(source.objects, projectPrefix(projectId))) {
    const o = await copyObject(source.objects, stage, key);
    if (!o) continue; // deleted since the listing (a tile cache entry, a replaced export)
    objects.push(o);
    objectBytes += o.size;
  }
  const copied = new Set(objects.map((o) => o.key));
  const missing = [...referencedKeys(records)].filter((k) => !copied.has(k)).sort();
  progress(
    `objects: ${objects.length} (${objectBytes} bytes)${missing.length ? `; ${missing.length} the rows name were missing in the source` : ''}`,
  );

  const recordsJson = Buffer.from(JSON.stringify(records));
  await writeFile(join(dest, RECORDS_FILE), recordsJson, { mode: 0o600 });
  const manifest: ProjectManifest = {
    format: 'blueline-project',
    version: 1,
    created_at: new Date().toISOString(),
    schema_version: schema,
    source: { dialect: source.db.dialect },
    project: { id: projectId, name: String(project.name) },
    organization: { id: String(org.id), name: String(org.name) },
    tables: Object.fromEntries(Object.entries(records).map(([t, rows]) => [t, rows.length])),
    records_bytes: recordsJson.length,
    records_sha256: sha256(recordsJson),
    objects,
    object_bytes: objectBytes,
    missing_objects: missing,
  };
  // The manifest is the commit point: an archive without it is incomplete.
  const tmp = join(dest, `.${PROJECT_MANIFEST}.${randomBytes(4).toString('hex')}`);
  await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
  await rename(tmp, join(dest, PROJECT_MANIFEST));
  return manifest;
}

/** Whether `dir` holds a project archive (rather than a data-dir backup). */
export async function isProjectArchive(dir: string): Promise<boolean> {
  try {
    return (await stat(join(resolve(dir), PROJECT_MANIFEST))).isFile();
  } catch {
    return false;
  }
}

/** Reads and checks an archive's manifest and records (not yet its objects). */
export async function readProjectArchive(
  dir: string,
  knownSchema: number = MIGRATIONS.length,
): Promise<{ manifest: ProjectManifest; records: Record<string, Row[]> }> {
  dir = resolve(dir);
  let manifest: ProjectManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, PROJECT_MANIFEST), 'utf8')) as ProjectManifest;
  } catch {
    throw new ProjectArchiveError(
      `${dir} is not a finished Blueline project backup (no readable ${PROJECT_MANIFEST}).`,
    );
  }
  if (manifest?.format !== 'blueline-project' || manifest.version !== 1)
    throw new ProjectArchiveError(
      `${dir} holds an unknown backup format (${String(manifest?.format)} version ${String(manifest?.version)}); this Blueline reads blueline-project version 1.`,
    );
  if (!Number.isInteger(manifest.schema_version) || manifest.schema_version > knownSchema)
    throw new ProjectArchiveError(
      `The backup in ${dir} was made by a newer Blueline (schema version ${manifest.schema_version}; this Blueline knows up to ${knownSchema}). Restore it with a Blueline at least as new as the one that made it.`,
    );
  if (manifest.schema_version < knownSchema)
    throw new ProjectArchiveError(
      `The backup in ${dir} is of schema version ${manifest.schema_version} and this Blueline's is ${knownSchema}. Restore it with the Blueline that made it, let that one upgrade (\`blueline migrate\`, or start it once), and back the project up again.`,
    );
  let raw: Buffer;
  try {
    raw = await readFile(join(dir, RECORDS_FILE));
  } catch {
    throw new ProjectArchiveError(`The backup in ${dir} is damaged: ${RECORDS_FILE} is missing.`);
  }
  if (raw.length !== manifest.records_bytes || sha256(raw) !== manifest.records_sha256)
    throw new ProjectArchiveError(
      `The backup in ${dir} is damaged: ${RECORDS_FILE} does not match the sha256 its manifest records.`,
    );
  const records = JSON.parse(raw.toString('utf8')) as Record<string, Row[]>;
  if (!records.projects?.[0] || records.projects[0].id !== manifest.project.id)
    throw new ProjectArchiveError(
      `The backup in ${dir} does not hold the project its manifest names.`,
    );
  return { manifest, records };
}

export interface RestoreProjectResult {
  manifest: ProjectManifest;
  projectId: string;
  organization: { id: string; name: string; created: boolean; keys: number };
  objects: number;
  rows: number;
}

/**
 * Restores the project archive in `dir` into `target`. The organization: `organizationName` when
 * given (created if new), else the target's organization with the archive's id, else one with its
 * name, else a new one with the archive's id and name and its API keys (hashes).
 *
 * Order: the objects first, then every row in one transaction (so the project appears whole or not
 * at all; in team mode the orphan sweep's grace period keeps the bytes meanwhile), then a check
 * that every object is there with its sha256 (re-put if a sweep took one during a long restore).
 */
export async function restoreProject(
  target: Stores,
  dir: string,
  opts: { organizationName?: string; progress?: (msg: string) => void } = {},
): Promise<RestoreProjectResult> {
  const progress = opts.progress ?? (() => {});
  dir = resolve(dir);
  const { manifest, records } = await readProjectArchive(dir);
  const { db, objects } = target;
  const targetSchema = await schemaVersion(db);
  if (targetSchema !== manifest.schema_version)
    throw new ProjectArchiveError(
      `The target store is at schema version ${targetSchema} and the backup at ${manifest.schema_version}; migrate the target first (\`blueline migrate\`).`,
    );
  const projectId = manifest.project.id;
  const existing = (await db
    .prepare('SELECT id, name, created_at FROM projects WHERE id = ?')
    .get(projectId)) as { name: string; created_at: string } | undefined;
  if (existing)
    throw new ProjectArchiveError(
      `Project ${projectId} ('${existing.name}', created ${existing.created_at}) already exists in the target store; delete it there first (DELETE /v1/projects/${projectId}) or restore into another store.`,
    );

  // 1. Objects, checked against the manifest's sha256 as they are written; 2. rows, in one
  // transaction. On any failure nothing of the project stays: no row was committed, and its bytes
  // (the project did not exist in the target) are removed.
  const archived = new LocalObjectStore({ dataDir: dir });
  const prefix = projectPrefix(projectId);
  let n = 0;
  let org!: RestoreProjectResult['organization'];
  let rows = 0;
  try {
    for (const o of manifest.objects) {
      if (!o.key.startsWith(prefix))
        throw new ProjectArchiveError(
          `The backup is damaged: object ${o.key} lies outside its project.`,
        );
      if (!(await copyObject(archived, objects, o.key, o.sha256)))
        throw new ProjectArchiveError(
          `The backup in ${dir} is damaged: object ${o.key} is missing.`,
        );
      n++;
    }
    progress(`objects: ${n} (${manifest.object_bytes} bytes)`);
    await db.transaction(async (tx) => {
      org = await targetOrganization(tx, manifest, records, opts.organizationName);
      for (const t of PROJECT_TABLES) {
        for (const r of records[t] ?? []) {
          await insertRow(tx, t, { ...r, organization_id: org.id });
          rows++;
        }
      }
    });
  } catch (err) {
    await objects.deletePrefix(prefix).catch(() => {});
    if (err instanceof ProjectArchiveError) throw err;
    const msg = (err as Error).message;
    if (/unique|duplicate key/i.test(msg))
      throw new ProjectArchiveError(
        `A record of the backup already exists in the target store (${msg}); was this project restored there before under another id?`,
      );
    throw err;
  }
  progress(`records: ${rows} rows`);

  // 3. Every object still there (a team-mode sweep never takes young objects; this is the check).
  for (const o of manifest.objects) {
    const info = await objects.stat(o.key);
    if (info?.sha256 !== o.sha256) await copyObject(archived, objects, o.key, o.sha256);
  }
  return { manifest, projectId, organization: org, objects: n, rows };
}

async function insertRow(tx: Db, table: ProjectTable, row: Row): Promise<void> {
  const cols = Object.keys(row);
  for (const c of cols)
    if (!/^[a-z_][a-z0-9_]*$/.test(c))
      throw new ProjectArchiveError(`The backup is damaged: column '${c}' of ${table}.`);
  await tx
    .prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`)
    .run(...cols.map((c) => row[c]));
}

async function targetOrganization(
  tx: Db,
  manifest: ProjectManifest,
  records: Record<string, Row[]>,
  name: string | undefined,
): Promise<RestoreProjectResult['organization']> {
  const byName = tx.prepare('SELECT id, name FROM organizations WHERE name = ?');
  if (name === undefined) {
    const same = (await tx
      .prepare('SELECT id, name FROM organizations WHERE id = ?')
      .get(manifest.organization.id)) as { id: string; name: string } | undefined;
    if (same) return { ...same, created: false, keys: 0 };
  }
  const wanted = name ?? manifest.organization.name;
  const found = (await byName.get(wanted)) as { id: string; name: string } | undefined;
  if (found) return { ...found, created: false, keys: 0 };
  // A new organization: the archive's id when it names this one (so its keys come along).
  const src = records.organizations?.[0];
  const now = new Date().toISOString();
  const asArchived = name === undefined && src;
  const id = asArchived ? String(src.id) : newId('organization');
  await tx
    .prepare('INSERT INTO organizations (id, name, created_at, updated_at) VALUES (?, ?, ?, ?)')
    .run(id, wanted, asArchived ? src.created_at : now, asArchived ? src.updated_at : now);
  let keys = 0;
  if (asArchived) {
    const known = tx.prepare('SELECT 1 AS one FROM api_keys WHERE id = ? OR key_hash = ?');
    for (const k of records.api_keys ?? []) {
      if ((await known.get(k.id, k.key_hash)) !== undefined) continue;
      await tx
        .prepare(
          `INSERT INTO api_keys (id, organization_id, key_hash, key_hint, label, created_at, last_used_at, revoked_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          k.id,
          id,
          k.key_hash,
          k.key_hint,
          k.label ?? null,
          k.created_at,
          k.last_used_at ?? null,
          k.revoked_at ?? null,
        );
      keys++;
    }
  }
  return { id, name: wanted, created: true, keys };
}
