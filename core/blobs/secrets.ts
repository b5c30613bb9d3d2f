import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';

// Service secrets (URL signing, cursor signing): 32 random bytes each, created on first start
// under `<dataDir>/secrets/<name>.key` with mode 0600 and kept across restarts, so signed URLs
// and cursors survive a restart. Stored as 64 hex characters plus a newline.

export const SECRET_BYTES = 32;
const NAME_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** Path of the secret file `name` in `dataDir`. */
export function secretPath(dataDir: string, name: string): string {
  if (typeof name !== 'string' || !NAME_RE.test(name) || name.length > 64)
    throw new TypeError(
      `Expected a lowercase name such as 'url-signing' for the secret but received '${name}'.`,
    );
  return path.join(path.resolve(dataDir), 'secrets', `${name}.key`);
}

/**
 * The secret `name`, created on first use. Creation is atomic and race-free: the bytes go to a
 * fsynced temp file (mode 0600) that is then hard-linked to the final name, which fails if another
 * process got there first; that process's secret is then read and used. A crash leaves no
 * half-written secret, at most a temp file.
 */
export async function loadOrCreateSecret(dataDir: string, name: string): Promise<Buffer> {
  const file = secretPath(dataDir, name);
  const existing = await readSecret(file);
  if (existing !== null) return existing;

  const dir = path.dirname(file);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.tmp-${name}-${randomBytes(6).toString('hex')}`);
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(`${randomBytes(SECRET_BYTES).toString('hex')}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await link(tmp, file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // EEXIST: another process created it first (use theirs). EPERM/ENOTSUP: no hard links on this
    // filesystem; fall back to an exclusive create, which is still never overwritten.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EXDEV')
      await createExclusive(file, await readFile(tmp));
    else if (code !== 'EEXIST') throw err;
  } finally {
    await unlink(tmp).catch(() => {});
  }
  await fsyncDir(dir);
  const secret = await readSecret(file);
  if (secret === null) throw new Error(`Could not create the secret file ${file}.`);
  return secret;
}

async function readSecret(file: string): Promise<Buffer | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const hex = text.trim();
  if (!/^[0-9a-f]+$/.test(hex) || hex.length !== SECRET_BYTES * 2)
    throw new Error(
      `The secret file ${file} is corrupt (expected ${SECRET_BYTES * 2} hex characters). Delete it to create a new one; URLs and cursors signed with the old one stop working.`,
    );
  // Someone loosened the mode (a copy, a restore): tighten it again rather than refuse to start.
  if (process.platform !== 'win32' && ((await stat(file)).mode & 0o077) !== 0)
    await chmod(file, 0o600);
  return Buffer.from(hex, 'hex');
}

async function createExclusive(file: string, data: Buffer): Promise<void> {
  let fh;
  try {
    fh = await open(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  try {
    await fh.writeFile(data);
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return;
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
