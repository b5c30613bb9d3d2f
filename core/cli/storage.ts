import { join } from 'node:path';
import { keyProblem } from '../blobs/object-store';
import { S3ObjectStore } from '../blobs/s3-object-store';

// `--storage URL` (contract §11, team mode): where the service keeps its objects. Only
// S3-compatible buckets are named by URL; without --storage (and $BLUELINE_STORAGE_URL) the
// objects stay in the data dir, as on the desktop.
//
//   s3://BUCKET[/PREFIX][?endpoint=URL][&region=R][&path_style=true|false]
//
// Credentials come from the AWS SDK's standard chain: AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
// (/ AWS_SESSION_TOKEN), or AWS_PROFILE and ~/.aws, or an instance role. AWS_REGION is the region
// when the URL names none. The local copy of objects that pixel work reads (S3ObjectStore's
// localPath cache) lives in <data dir>/object-cache, bounded by $BLUELINE_OBJECT_CACHE_MB
// (default 2048).

export class StorageUrlError extends Error {}

export interface S3StorageConfig {
  bucket: string;
  /** '' or ending with '/'. */
  prefix: string;
  endpoint?: string;
  region?: string;
  forcePathStyle?: boolean;
}

const PARAMS = ['endpoint', 'region', 'path_style'] as const;

export function parseStorageUrl(raw: string): S3StorageConfig {
  const example = 's3://bucket/prefix?endpoint=https://minio.example:9000&region=us-east-1';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new StorageUrlError(`--storage '${raw}' is not a URL; expected ${example}.`);
  }
  if (url.protocol !== 's3:')
    throw new StorageUrlError(
      `--storage takes an s3:// URL (${example}) but received '${url.protocol}' ('${raw}'); leave it out to keep objects in the data dir.`,
    );
  if (url.username || url.password)
    throw new StorageUrlError(
      '--storage must not carry credentials; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead.',
    );
  const bucket = url.hostname;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
    throw new StorageUrlError(
      `--storage names bucket '${bucket}', which is not an S3 bucket name (3-63 lowercase letters, digits, dots and hyphens).`,
    );
  if (url.port)
    throw new StorageUrlError(
      `--storage has a port after the bucket name; give the server as ?endpoint=http://host:${url.port}.`,
    );
  // URL parsing resolves dot segments ('a/../b' → 'b'): refuse them rather than use another prefix.
  const rawPath = raw.replace(/^s3:\/\/[^/?#]*/i, '').replace(/[?#].*$/, '');
  if (/(^|\/)\.{1,2}(\/|$)/.test(rawPath))
    throw new StorageUrlError(`--storage prefix '${rawPath}' has '.' or '..' segments.`);
  const path = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  if (path !== '') {
    const p = keyProblem(path);
    if (p !== null)
      throw new StorageUrlError(
        `--storage prefix '${path}' is not usable as a key prefix: ${p} (use lowercase letters, digits, '_', '-', '.', '/').`,
      );
  }
  for (const name of url.searchParams.keys())
    if (!(PARAMS as readonly string[]).includes(name))
      throw new StorageUrlError(
        `--storage has an unknown parameter '${name}'; known: ${PARAMS.join(', ')}.`,
      );
  const config: S3StorageConfig = { bucket, prefix: path === '' ? '' : `${path}/` };
  const endpoint = url.searchParams.get('endpoint');
  if (endpoint !== null) {
    let e: URL;
    try {
      e = new URL(endpoint);
    } catch {
      throw new StorageUrlError(`--storage endpoint '${endpoint}' is not a URL.`);
    }
    if (e.protocol !== 'http:' && e.protocol !== 'https:')
      throw new StorageUrlError(
        `--storage endpoint must be an http:// or https:// URL but received '${endpoint}'.`,
      );
    config.endpoint = endpoint.replace(/\/+$/, '');
  }
  const region = url.searchParams.get('region');
  if (region !== null) {
    if (!/^[a-z0-9-]{1,64}$/.test(region))
      throw new StorageUrlError(`--storage region '${region}' is not a region name.`);
    config.region = region;
  }
  const pathStyle = url.searchParams.get('path_style');
  if (pathStyle !== null) {
    if (pathStyle !== 'true' && pathStyle !== 'false')
      throw new StorageUrlError(
        `--storage path_style must be true or false but received '${pathStyle}'.`,
      );
    config.forcePathStyle = pathStyle === 'true';
  }
  return config;
}

/** Bytes of the localPath cache: $BLUELINE_OBJECT_CACHE_MB MiB, default 2048. */
export function objectCacheBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.BLUELINE_OBJECT_CACHE_MB;
  if (raw === undefined || raw === '') return 2048 * 1024 * 1024;
  if (!/^\d+$/.test(raw) || Number(raw) < 1)
    throw new StorageUrlError(
      `Expected a positive integer of MiB in BLUELINE_OBJECT_CACHE_MB but received '${raw}'.`,
    );
  return Number(raw) * 1024 * 1024;
}

/**
 * The S3 object store `url` names, after checking that its bucket answers (so a wrong endpoint,
 * bucket or credentials stop `serve` at once, with the reason, instead of failing requests later).
 */
export async function openS3Storage(
  url: string,
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<S3ObjectStore> {
  const config = parseStorageUrl(url);
  const store = new S3ObjectStore({
    ...config,
    cacheDir: join(dataDir, 'object-cache'),
    cacheMaxBytes: objectCacheBytes(env),
  });
  try {
    await store.checkReachable();
  } catch (err) {
    store.close();
    throw err;
  }
  return store;
}

/** What `serve` prints about where the objects are (never credentials). */
export function describeStorage(config: S3StorageConfig): string {
  return `s3://${config.bucket}/${config.prefix}${config.endpoint ? ` at ${config.endpoint}` : ''}`;
}
