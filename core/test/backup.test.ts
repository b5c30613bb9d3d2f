import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, startTestService, type TestService } from './harness';

// `blueline backup` while the service runs (and writes), then `blueline restore` into a new data
// dir, a service started there, and every record and every byte compared with the original.

const repoRoot = resolve(import.meta.dirname, '../..');
const FIXTURES = resolve(repoRoot, 'fixtures/drawings');

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'core/cli/main.ts', ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => res({ code, stdout, stderr }));
  });
}

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
/** A record without its signed URLs (their expiry moves with the clock). */
const stripUris = (r: Record<string, unknown>) =>
  Object.fromEntries(
    Object.entries(r).filter(
      ([k]) => !k.endsWith('uri') && k !== 'upload_url' && k !== 'upload_expires_at',
    ),
  );

async function listAll(
  t: TestService,
  path: string,
  key: string,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let url: string | null = path;
  while (url) {
    const res: {
      status: number;
      body: { data: Record<string, unknown>[]; _meta: { next: string | null } };
    } = await t.request('GET', url, { key });
    expect(res.status, url).toBe(200);
    out.push(...res.body.data);
    // `next` is a cursor that remembers the filters and limit.
    url =
      res.body._meta.next === null
        ? null
        : `${path.split('?')[0]}?cursor=${encodeURIComponent(res.body._meta.next)}`;
  }
  return out;
}

let t: TestService;
let restored: TestService | undefined;
const scratch = mkdtempSync(join(tmpdir(), 'blueline-backup-test-'));

beforeAll(async () => {
  // `blueline backup --data-dir` copies a desktop data dir: SQLite and local files in any lane.
  t = await startTestService({ workers: 1, desktop: true });
});
afterAll(async () => {
  await restored?.stop();
  await t.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe('backup and restore', () => {
  it('backs up a running service with data, restores into a new dir, and the restored service serves the same records and bytes', async () => {
    // Data: a processed drawing (sheet, thumbnail, block crops, search rows), an uploaded file, a pending file.
    const project = (await t.request('POST', '/v1/projects', { body: { name: 'Backed up' } })).body;
    const bytes = readFileSync(
      join(FIXTURES, '20150115_ASK-003_exterior-west-wall-window-locations.pdf'),
    );
    const file = await t.request('POST', '/v1/files', {
      body: {
        project_id: project.id,
        filename: 'ask-003.pdf',
        content_type: 'application/pdf',
        size_bytes: bytes.length,
      },
    });
    expect(
      (
        await t.request('PUT', file.body.upload_url, {
          rawBody: bytes,
          headers: { 'content-type': 'application/pdf' },
          key: null,
        })
      ).status,
    ).toBe(200);
    const drawing = (
      await t.request('POST', '/v1/drawings', {
        body: { project_id: project.id, name: 'ASK-003', file_id: file.body.id },
      })
    ).body;
    for (const start = Date.now(); ;) {
      const job = await t.request('GET', `/v1/jobs/${drawing.job_id}`);
      if (job.body.status === 'Completed') break;
      expect(['Queued', 'Started'], JSON.stringify(job.body.error)).toContain(job.body.status);
      expect(Date.now() - start).toBeLessThan(240_000);
      await new Promise((r) => setTimeout(r, 300));
    }
    const pending = (
      await t.request('POST', '/v1/files', {
        body: { project_id: project.id, filename: 'later.pdf', content_type: 'application/pdf' },
      })
    ).body;

    // Backup while the service keeps writing (new projects) — the snapshot is consistent anyway.
    const backupDir = join(scratch, 'backup');
    let writing = true;
    const writes = (async () => {
      let n = 0;
      while (writing) {
        expect(
          (await t.request('POST', '/v1/projects', { body: { name: `during backup ${n++}` } }))
            .status,
        ).toBe(201);
      }
      return n;
    })();
    const b = await cli(['backup', backupDir, '--data-dir', t.dataDir]);
    writing = false;
    const writtenDuring = await writes;
    expect(b.code, b.stderr).toBe(0);
    expect(b.stdout).toMatch(/Backed up .* objects/);
    expect(writtenDuring).toBeGreaterThan(0);
    const manifest = JSON.parse(readFileSync(join(backupDir, 'blueline-backup.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'blueline-backup', version: 1, missing_objects: [] });
    expect(manifest.objects).toBeGreaterThanOrEqual(4); // file bytes, sheet image, thumbnail, ≥1 block crop
    expect(manifest.private_files.sort()).toEqual([
      'secrets/cursor.key',
      'secrets/url-signing.key',
      'tls/cert.pem',
      'tls/key.pem',
    ]);
    expect(readdirSync(backupDir).sort()).toEqual([
      'blueline-backup.json',
      'blueline.db',
      'objects',
      'secrets',
      'tls',
    ]);
    for (const f of ['secrets/cursor.key', 'secrets/url-signing.key', 'tls/key.pem'])
      expect(statSync(join(backupDir, f)).mode & 0o777, f).toBe(0o600);

    // A second backup into the same (now non-empty) folder is refused.
    const again = await cli(['backup', backupDir, '--data-dir', t.dataDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty/);

    // Restore: refused into a non-empty dir without --force; fine into a new one.
    const occupied = join(scratch, 'occupied');
    mkdirSync(occupied);
    writeFileSync(join(occupied, 'something.txt'), 'mine');
    const refused = await cli(['restore', backupDir, '--data-dir', occupied]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/not empty.*--force/);
    expect(readdirSync(occupied)).toEqual(['something.txt']);
    const forced = await cli(['restore', backupDir, '--data-dir', occupied, '--force']);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/Moved the previous contents/);
    expect(readdirSync(scratch).some((n) => n.startsWith('occupied.before-restore-'))).toBe(true);

    const target = join(scratch, 'restored');
    const r = await cli(['restore', backupDir, '--data-dir', target]);
    expect(r.code, r.stderr).toBe(0);
    expect(statSync(join(target, 'secrets/url-signing.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(target, 'tls/key.pem')).mode & 0o777).toBe(0o600);

    restored = await startTestService({ dataDir: target, workers: 1, desktop: true });
    // The certificate came along: the restored service presents the same one.
    expect(restored.svc.certFingerprint256).toBe(t.svc.certFingerprint256);
    const key = t.key; // the original organization's key works on the restored service

    // Records: the processed drawing and everything under it, identical.
    const q = `project_id=${project.id}&limit=100`;
    for (const path of [
      `/v1/drawings?${q}`,
      `/v1/files?${q}`,
      `/v1/sheets?drawing_id=${drawing.id}&limit=100`,
      `/v1/blocks?drawing_id=${drawing.id}&limit=100`,
    ]) {
      const before = await listAll(t, path, key);
      const after = await listAll(restored, path, key);
      expect(after.map(stripUris), path).toEqual(before.map(stripUris));
      expect(after.length, path).toBeGreaterThan(0);
    }
    expect(
      stripUris((await restored.request('GET', `/v1/files/${pending.id}`, { key })).body),
    ).toEqual(stripUris((await t.request('GET', `/v1/files/${pending.id}`)).body));
    expect(
      stripUris((await restored.request('GET', `/v1/jobs/${drawing.job_id}`, { key })).body),
    ).toEqual(stripUris((await t.request('GET', `/v1/jobs/${drawing.job_id}`)).body));
    // Projects: everything created before the backup; of those written during it, a prefix in time
    // (the snapshot), never a project that did not exist in the original.
    const pBefore = await listAll(t, '/v1/projects?limit=100', key);
    const pAfter = await listAll(restored, '/v1/projects?limit=100', key);
    const originals = new Map(pBefore.map((p) => [p.id, p]));
    for (const p of pAfter) expect(p).toEqual(originals.get(p.id));
    expect(pAfter.some((p) => p.id === project.id)).toBe(true);

    // Bytes: every sheet image, thumbnail, block crop and the file, identical.
    const uris: [string, string][] = [];
    for (const s of await listAll(restored, `/v1/sheets?drawing_id=${drawing.id}&limit=100`, key))
      uris.push([String(s.uri), 'sheet'], [String(s.thumbnail_uri), 'thumb']);
    for (const bl of await listAll(restored, `/v1/blocks?drawing_id=${drawing.id}&limit=100`, key))
      uris.push([String(bl.uri), 'block']);
    const fileAfter = (await restored.request('GET', `/v1/files/${file.body.id}`, { key })).body;
    uris.push([String(fileAfter.uri), 'file']);
    for (const [uri] of uris) {
      const got = await download(restored, uri);
      const orig = await download(t, uri); // same signing secret: the same URL is valid on both
      expect(got.length, uri).toBeGreaterThan(0);
      expect(sha(got), uri).toBe(sha(orig));
    }
    expect(sha(await download(restored, String(fileAfter.uri)))).toBe(sha(bytes));

    // Search rows came along too.
    const search = await restored.request('POST', `/v1/projects/${project.id}/search`, {
      key,
      body: { query: 'window' },
    });
    if (search.status !== 404) expect(search.status).toBe(200);
  }, 420_000);

  it('refuses to restore a folder that is not a finished backup', async () => {
    const notBackup = join(scratch, 'not-a-backup');
    mkdirSync(notBackup);
    const r = await cli(['restore', notBackup, '--data-dir', join(scratch, 'nowhere')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not a finished Blueline backup/);
  }, 60_000);
});
