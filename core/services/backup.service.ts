import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  chmod,
  copyFile,
  mkdir,
  open,
  readFile,
  readdir,
  rename,
  rm,
  rmdir,
  stat,
  writeFile,
} from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteDb } from '../store/db';
import { LocalObjectStore } from '../blobs/local-object-store';
import type { ObjectStore } from '../blobs/object-store';
import {
  pendingFileKeys,
  referencedObjectKeys,
} from '../store/repositories/maintenance.repository';

// `blueline backup <dir>` / `blueline restore <dir>` (issue 7). A backup is taken while the
// service runs:
//  1. the database through SQLite's online backup API (a consistent snapshot, whatever the service
//     writes meanwhile), turned into a single self-contained file (journal_mode=DELETE);
//  2. the objects that snapshot references — copied AFTER the snapshot, which is safe because an
//     object is immutable once written (new sheets get new keys), so every key the snapshot names
//     is either still there or was deleted after the snapshot (then the whole backup is retried);
//     derived tiles beside a referenced image come along; objects the snapshot does not know
//     (written after it, or orphans) are left out;
//  3. the secrets (URL and cursor signing) and the TLS material, so signed URLs, cursors and the
//     pinned certificate keep working after a restore; private files keep mode 0600.
// The manifest `blueline-backup.json` is written last: a backup without it is incomplete.
//
// A restore builds the new data dir beside its destination and renames it into place, so an
// interrupted restore never leaves a half-restored data dir; it refuses a non-empty destination
// unless forced, and then moves the old contents aside instead of deleting them.

export const MANIFEST = 'blueline-backup.json';
const DB_FILE = 'blueline.db';
const PRIVATE_DIRS = ['secrets', 'tls'] as const;

export interface BackupManifest {
  format: 'blueline-backup';
  version: 1;
  created_at: string;
  /** Highest applied migration of the snapshot. */
  schema_version: number;
  db_bytes: number;
  db_sha256: string;
  objects: number;
  object_bytes: number;
  /** Keys the snapshot references that were gone already in the source (lost before the backup). */
  missing_objects: string[];
  /** secrets/… and tls/… files, relative to the data dir. */
  private_files: string[];
}

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

interface Progress {
  (msg: string): void;
}

async function isEmptyDir(dir: string): Promise<boolean> {
  try {
    return (await readdir(dir)).length === 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
}

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(file)) h.update(c as Buffer);
  return h.digest('hex');
}

async function fsyncPath(p: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(p, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Every key the database references, plus the file keys of every file row (pending included). */
async function referencedKeys(
  raw: Database.Database,
): Promise<{ required: Set<string>; optional: Set<string> }> {
  const db = new SqliteDb(raw);
  const required = new Set(await referencedObjectKeys(db));
  // Bytes of a pending file may exist (a crash between the upload's bytes and its row update).
  const optional = new Set(await pendingFileKeys(db));
  return { required, optional };
}

async function allKeys(store: ObjectStore): Promise<string[]> {
  const out: string[] = [];
  let token: string | null = null;
  for (;;) {
    const page = await store.list('', { limit: 1000, direction: 'forward', token });
    for (const e of page.keys) out.push(e.key);
    if (page.nextToken === null) return out;
    token = page.nextToken;
  }
}

/** Copies one object; false when it vanished in the source meanwhile. Verifies the bytes' hash. */
async function copyObject(
  from: ObjectStore,
  to: ObjectStore,
  key: string,
): Promise<number | false> {
  const o = await from.get(key);
  if (!o) return false;
  try {
    const r = await to.put(key, o.stream(), o.contentType ? { contentType: o.contentType } : {});
    if (r.sha256 !== o.sha256)
      throw new BackupError(
        `The bytes of ${key} changed while they were copied (sha256 ${r.sha256} ≠ ${o.sha256}).`,
      );
    return r.size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false; // replaced or deleted between get and read
    throw err;
  }
}

async function copyPrivateFiles(fromDir: string, toDir: string): Promise<string[]> {
  const copied: string[] = [];
  for (const d of PRIVATE_DIRS) {
    let names: string[];
    try {
      names = await readdir(join(fromDir, d));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    await mkdir(join(toDir, d), { recursive: true, mode: 0o700 });
    for (const n of names) {
      if (n.startsWith('.')) continue; // temp files of an interrupted write
      const src = join(fromDir, d, n);
      if (!(await stat(src)).isFile()) continue;
      const dst = join(toDir, d, n);
      const mode = (await stat(src)).mode & 0o777;
      await copyFile(src, dst);
      // Private keys stay private; a world-readable certificate stays readable.
      await chmod(dst, n.endsWith('.key') || n === 'key.pem' ? 0o600 : mode & 0o644);
      await fsyncPath(dst);
      copied.push(`${d}/${n}`);
    }
  }
  return copied;
}

/**
 * Backs up the data dir `dataDir` (service running or not) into `dest`, which must be empty or
 * new. Retries when objects the snapshot references were deleted during the copy.
 */
export async function backupDataDir(
  dataDir: string,
  dest: string,
  progress: Progress = () => {},
): Promise<BackupManifest> {
  dataDir = resolve(dataDir);
  dest = resolve(dest);
  const dbFile = join(dataDir, DB_FILE);
  try {
    await stat(dbFile);
  } catch {
    throw new BackupError(`No Blueline database at ${dbFile}: is --data-dir right?`);
  }
  if (!(await isEmptyDir(dest)))
    throw new BackupError(`The backup folder ${dest} is not empty; choose a new or empty folder.`);
  if (dest === dataDir || dest.startsWith(dataDir + '/'))
    throw new BackupError('The backup folder must be outside the data dir.');

  for (let attempt = 1; ; attempt++) {
    await rm(dest, { recursive: true, force: true });
    await mkdir(dest, { recursive: true, mode: 0o700 });
    const snapFile = join(dest, DB_FILE);

    // 1. Snapshot. A separate connection; the service keeps writing through its own.
    const src = new Database(dbFile, { fileMustExist: true });
    try {
      src.pragma('busy_timeout = 5000');
      // Big steps: each step is consistent, and few steps leave the service few chances to
      // restart the copy by writing between them.
      await src.backup(snapFile, { progress: () => 1 << 20 });
    } finally {
      src.close();
    }
    const snap = new Database(snapFile);
    let required: Set<string>;
    let optional: Set<string>;
    let schemaVersion: number;
    try {
      snap.pragma('journal_mode = DELETE'); // one self-contained file
      const problems = snap.pragma('integrity_check', { simple: false }) as {
        integrity_check: string;
      }[];
      if (problems.length !== 1 || problems[0]!.integrity_check !== 'ok')
        throw new BackupError(
          `The snapshot failed SQLite's integrity check: ${problems
            .map((p) => p.integrity_check)
            .slice(0, 5)
            .join('; ')}`,
        );
      ({ required, optional } = await referencedKeys(snap));
      schemaVersion = snap
        .prepare('SELECT max(version) FROM schema_migrations')
        .pluck()
        .get() as number;
    } finally {
      snap.close();
    }
    progress(`database snapshot: ${required.size} referenced objects`);

    // 2. Objects, after the snapshot.
    const from = new LocalObjectStore({ dataDir });
    const to = new LocalObjectStore({ dataDir: dest });
    const present = new Set(await allKeys(from));
    const wanted = (k: string) => {
      if (required.has(k) || optional.has(k)) return true;
      const i = k.indexOf('.tiles/'); // derived tiles beside a referenced image
      return i > 0 && required.has(k.slice(0, i));
    };
    let objects = 0;
    let objectBytes = 0;
    const copied = new Set<string>();
    for (const k of present) {
      if (!wanted(k)) continue;
      const n = await copyObject(from, to, k);
      if (n === false) continue;
      copied.add(k);
      objects++;
      objectBytes += n;
    }
    const missing = [...required].filter((k) => !copied.has(k));
    // Referenced but absent: deleted after the snapshot (retry), or lost before it (report).
    const vanished = missing.filter((k) => present.has(k));
    if (vanished.length > 0) {
      if (attempt >= 3)
        throw new BackupError(
          `Objects kept disappearing during the backup (e.g. ${vanished[0]}); is something deleting records right now? Try again.`,
        );
      progress(`${vanished.length} objects were deleted during the copy; starting over`);
      continue;
    }
    progress(
      `objects: ${objects} (${objectBytes} bytes)${missing.length ? `; ${missing.length} referenced objects were already missing in the source` : ''}`,
    );

    // 3. Secrets and TLS material.
    const privateFiles = await copyPrivateFiles(dataDir, dest);

    const manifest: BackupManifest = {
      format: 'blueline-backup',
      version: 1,
      created_at: new Date().toISOString(),
      schema_version: schemaVersion,
      db_bytes: (await stat(snapFile)).size,
      db_sha256: await sha256File(snapFile),
      objects,
      object_bytes: objectBytes,
      missing_objects: missing,
      private_files: privateFiles,
    };
    await fsyncPath(snapFile);
    // The manifest is the commit point of the backup.
    const tmp = join(dest, `.${MANIFEST}.${randomBytes(4).toString('hex')}`);
    await writeFile(tmp, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
    await fsyncPath(tmp);
    await rename(tmp, join(dest, MANIFEST));
    await fsyncPath(dest);
    return manifest;
  }
}

export interface RestoreResult {
  dataDir: string;
  manifest: BackupManifest;
  /** Where the previous contents of the data dir went (with force), else null. */
  movedAside: string | null;
}

/**
 * Restores the backup in `backupDir` as the data dir `dataDir`. Refuses a non-empty `dataDir`
 * unless `force`, which moves its contents aside to `<dataDir>.before-restore-<time>`. Stop any
 * service using `dataDir` first.
 */
export async function restoreDataDir(
  backupDir: string,
  dataDir: string,
  opts: { force?: boolean; progress?: Progress } = {},
): Promise<RestoreResult> {
  const progress = opts.progress ?? (() => {});
  backupDir = resolve(backupDir);
  dataDir = resolve(dataDir);
  let manifest: BackupManifest;
  try {
    manifest = JSON.parse(await readFile(join(backupDir, MANIFEST), 'utf8')) as BackupManifest;
  } catch {
    throw new BackupError(
      `${backupDir} is not a finished Blueline backup (no readable ${MANIFEST}).`,
    );
  }
  if (manifest.format !== 'blueline-backup' || manifest.version !== 1)
    throw new BackupError(`${backupDir} holds an unknown backup format.`);
  const dbSrc = join(backupDir, DB_FILE);
  if ((await sha256File(dbSrc)) !== manifest.db_sha256)
    throw new BackupError(
      `The database in ${backupDir} does not match its manifest (altered or damaged backup).`,
    );
  if (!(await isEmptyDir(dataDir)) && !opts.force)
    throw new BackupError(
      `The data dir ${dataDir} is not empty; restore into a new folder, or pass --force to move its contents aside first.`,
    );

  // Build beside the destination, then rename into place.
  const parent = dirname(dataDir);
  await mkdir(parent, { recursive: true });
  const stage = join(parent, `.${basename(dataDir)}.restoring-${randomBytes(4).toString('hex')}`);
  await mkdir(stage, { mode: 0o700 });
  try {
    await copyFile(dbSrc, join(stage, DB_FILE));
    await fsyncPath(join(stage, DB_FILE));
    const check = new Database(join(stage, DB_FILE));
    try {
      const rows = check.pragma('integrity_check') as { integrity_check: string }[];
      if (rows.length !== 1 || rows[0]!.integrity_check !== 'ok')
        throw new BackupError('The backed-up database fails SQLite’s integrity check.');
    } finally {
      check.close();
    }
    const from = new LocalObjectStore({ dataDir: backupDir });
    const to = new LocalObjectStore({ dataDir: stage });
    let n = 0;
    for (const k of await allKeys(from)) {
      if ((await copyObject(from, to, k)) === false)
        throw new BackupError(`Object ${k} of the backup could not be read.`);
      n++;
    }
    if (n !== manifest.objects)
      throw new BackupError(
        `The backup holds ${n} objects but its manifest says ${manifest.objects}.`,
      );
    progress(`objects: ${n}`);
    await copyPrivateFiles(backupDir, stage);
    await fsyncPath(stage);
  } catch (err) {
    await rm(stage, { recursive: true, force: true });
    throw err;
  }

  let movedAside: string | null = null;
  if (!(await isEmptyDir(dataDir))) {
    movedAside = `${dataDir}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    await rename(dataDir, movedAside);
  } else {
    await rmdir(dataDir).catch(() => {});
  }
  await rename(stage, dataDir);
  await fsyncPath(parent);
  return { dataDir, manifest, movedAside };
}
