// Starts `s3rver` (npm devDependency, an S3-compatible server on the local filesystem) as a child
// process on loopback for the tests of the S3 object store and of team-mode storage.
//
// A child process, not in-process: s3rver's ListObjectsV2 continuation tokens use DES, which
// OpenSSL 3 only has with --openssl-legacy-provider, a flag the test process should not carry.
// s3rver accepts any credentials and does not check SigV4 signatures; it is a conformance target,
// not a security one.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const TEST_BUCKET = 'blueline-test';
export const TEST_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface S3rverProcess {
  endpoint: string;
  port: number;
  dir: string;
  /** Stops the server (SIGTERM) and waits for its exit. The data dir stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data dir. */
  restart(): Promise<void>;
  /** Stops it and removes its data dir. */
  dispose(): Promise<void>;
}

function s3rverBin(): string {
  const require = createRequire(import.meta.url);
  const bin = path.join(path.dirname(require.resolve('s3rver/package.json')), 'bin', 's3rver.js');
  if (!existsSync(bin)) throw new Error(`s3rver is installed without its CLI (${bin}).`);
  return bin;
}

const WRAPPER = `process.on('disconnect', () => {
  require('node:fs').rmSync(process.argv[process.argv.indexOf('-d') + 1], { recursive: true, force: true });
  process.exit(0);
});
require(process.argv[1]);`;

async function launch(
  dir: string,
  port: number,
  bucket: string,
): Promise<{ child: ChildProcess; port: number }> {
  // Through a small wrapper holding an IPC channel: when the test process ends in any way (a test
  // runner kills its workers without an 'exit' event), the channel closes and s3rver exits,
  // removing its data dir.
  const child = spawn(
    process.execPath,
    [
      '-e',
      WRAPPER,
      s3rverBin(),
      '-d',
      dir,
      '-a',
      '127.0.0.1',
      '-p',
      String(port),
      '-s',
      '--no-vhost-buckets',
      '--configure-bucket',
      bucket,
    ],
    {
      env: { ...process.env, NODE_OPTIONS: '--openssl-legacy-provider' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    },
  );
  child.channel?.unref();
  let out = '';
  const bound = await new Promise<number>((resolve, reject) => {
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /S3rver listening on [\d.]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', (code) =>
      reject(new Error(`s3rver exited with code ${code} before listening:\n${out}`)),
    );
    child.once('error', reject);
  });
  child.stdout!.resume();
  child.stderr!.resume();
  return { child, port: bound };
}

/** Starts s3rver on a free loopback port with `bucket` created. */
export async function startS3rver(bucket = TEST_BUCKET): Promise<S3rverProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), 'blueline-s3rver-'));
  let { child, port } = await launch(dir, 0, bucket);
  let alive = true;
  const stop = async () => {
    if (!alive) return;
    alive = false;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    await exited;
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get port() {
      return port;
    },
    dir,
    stop,
    async restart() {
      await stop();
      ({ child, port } = await launch(dir, port, bucket));
      alive = true;
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
