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

// Runs in the s3rver child before s3rver itself.
//
// 1. An IPC channel: when the test process ends in any way (a test runner kills its workers without
//    an 'exit' event), the channel closes and s3rver exits, removing its data dir.
// 2. s3rver 3.7.1 answers a PUT (and an UploadPart) before the bytes are in its file: its
//    FilesystemStore.putObject resolves on the 'finish' of the md5 Transform piped into the file's
//    WriteStream — not on the WriteStream's own 'finish' — then writes the .md5 and metadata.json
//    files and answers 200. A HEAD then reads the size with fs.stat() of the object file, which
//    until the WriteStream's write lands is 0 bytes (opened with O_TRUNC), or a partial size. Under
//    load the conformance suite saw a 4-byte object HEAD as 0 bytes (once in about 4,000 put+stat
//    pairs at load 21). putPart has the same gap, and CompleteMultipartUpload concatenates the part
//    files, so a part still being written would be cut short in the object. Real S3 answers only once
//    the object is durable (read-after-write consistency), so the test double is fixed to do the
//    same: both wait for the file stream to finish before answering.
// 3. S3RVER_SLOW_FIRST_WRITE_MS (s3rver-double.test.ts): the first write(2) into each object or
//    part file waits that long, which opens the window above wide enough to hit on every run.
//    Hooked before s3rver loads (its graceful-fs keeps the fs.open it finds then).
const WRAPPER = `process.on('disconnect', () => {
  require('node:fs').rmSync(process.argv[process.argv.indexOf('-d') + 1], { recursive: true, force: true });
  process.exit(0);
});
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { Readable, Transform } = require('node:stream');
const { pipeline } = require('node:stream/promises');
const slowMs = Number(process.env.S3RVER_SLOW_FIRST_WRITE_MS || 0);
if (slowMs > 0) {
  const slowFds = new Set();
  const open = fs.open;
  fs.open = function (file, ...rest) {
    const cb = rest.pop();
    return open.call(fs, file, ...rest, (err, fd) => {
      if (!err && /_S3rver_object$|_S3rver_uploads[\\/][^\\/]+[\\/]\\d+$/.test(String(file))) slowFds.add(fd);
      cb(err, fd);
    });
  };
  const write = fs.write;
  fs.write = function (fd, ...rest) {
    if (!slowFds.delete(fd)) return write.call(fs, fd, ...rest);
    setTimeout(() => write.call(fs, fd, ...rest), slowMs);
  };
  const writev = fs.writev;
  fs.writev = function (fd, ...rest) {
    if (!slowFds.delete(fd)) return writev.call(fs, fd, ...rest);
    setTimeout(() => writev.call(fs, fd, ...rest), slowMs);
  };
}
const FilesystemStore = require(path.join(path.dirname(process.argv[1]), '..', 'lib', 'stores', 'filesystem.js'));
async function writeHashed(file, content) {
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  const md5 = crypto.createHash('md5');
  let size = 0;
  await pipeline(
    Buffer.isBuffer(content) ? Readable.from([content]) : content,
    new Transform({ transform(chunk, _enc, cb) { md5.update(chunk); size += chunk.length; cb(null, chunk); } }),
    fs.createWriteStream(file),
  );
  return { size, md5: md5.digest('hex') };
}
FilesystemStore.prototype.putObject = async function (object) {
  const { size, md5 } = await writeHashed(this.getResourcePath(object.bucket, object.key, 'object'), object.content);
  await this.putMetadata(object.bucket, object.key, object.metadata, md5);
  return { size, md5 };
};
FilesystemStore.prototype.putPart = async function (bucket, uploadId, partNumber, content) {
  const partPath = path.join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(partNumber));
  const { size, md5 } = await writeHashed(partPath, content);
  await fs.promises.writeFile(partPath + '.md5', md5);
  return { size, md5 };
};
require(process.argv[1]);`;

async function launch(
  dir: string,
  port: number,
  bucket: string,
  slowFirstWriteMs: number,
): Promise<{ child: ChildProcess; port: number }> {
  // Through the wrapper above (IPC channel, s3rver's PUT fixed).
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
      env: {
        ...process.env,
        NODE_OPTIONS: '--openssl-legacy-provider',
        S3RVER_SLOW_FIRST_WRITE_MS: String(slowFirstWriteMs),
      },
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

/**
 * Starts s3rver on a free loopback port with `bucket` created. `slowFirstWriteMs` delays the first
 * write into each object or part file (tests of the wrapper's PUT fix); default none.
 */
export async function startS3rver(
  bucket = TEST_BUCKET,
  opts: { slowFirstWriteMs?: number } = {},
): Promise<S3rverProcess> {
  const dir = mkdtempSync(path.join(tmpdir(), 'blueline-s3rver-'));
  const slow = opts.slowFirstWriteMs ?? 0;
  let { child, port } = await launch(dir, 0, bucket, slow);
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
      ({ child, port } = await launch(dir, port, bucket, slow));
      alive = true;
    },
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
