import { describe, expect, it } from 'vitest';
import { objectCacheBytes, parseStorageUrl, StorageUrlError } from './storage';

describe('--storage URL', () => {
  it('reads bucket, prefix, endpoint, region and path style', () => {
    expect(parseStorageUrl('s3://blueline-files')).toEqual({
      bucket: 'blueline-files',
      prefix: '',
    });
    expect(
      parseStorageUrl(
        's3://blueline-files/team/a?endpoint=http://127.0.0.1:9000/&region=eu-west-3&path_style=false',
      ),
    ).toEqual({
      bucket: 'blueline-files',
      prefix: 'team/a/',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-3',
      forcePathStyle: false,
    });
    expect(parseStorageUrl('s3://b.example.com/p/').prefix).toBe('p/');
  });

  it.each([
    ['/tmp/objects', "--storage '/tmp/objects' is not a URL"],
    ['file:///tmp/objects', '--storage takes an s3:// URL'],
    ['s3://AB', "--storage names bucket 'AB', which is not an S3 bucket name"],
    ['s3://key:secret@bucket', '--storage must not carry credentials'],
    ['s3://bucket:9000', 'give the server as ?endpoint=http://host:9000'],
    ['s3://bucket/Upper', "--storage prefix 'Upper' is not usable as a key prefix"],
    ['s3://bucket/a/../b', '--storage prefix'],
    ['s3://bucket?endpoint=ftp://x', '--storage endpoint must be an http:// or https:// URL'],
    ['s3://bucket?endpoint=nope', "--storage endpoint 'nope' is not a URL."],
    ['s3://bucket?region=EU%20West', "--storage region 'EU West' is not a region name."],
    [
      's3://bucket?path_style=yes',
      "--storage path_style must be true or false but received 'yes'.",
    ],
    [
      's3://bucket?acl=public',
      "--storage has an unknown parameter 'acl'; known: endpoint, region, path_style.",
    ],
  ])('refuses %s', (url, message) => {
    expect(() => parseStorageUrl(url)).toThrow(StorageUrlError);
    expect(() => parseStorageUrl(url)).toThrow(message);
  });

  it('bounds the object cache from BLUELINE_OBJECT_CACHE_MB', () => {
    expect(objectCacheBytes({})).toBe(2048 * 1024 * 1024);
    expect(objectCacheBytes({ BLUELINE_OBJECT_CACHE_MB: '64' })).toBe(64 * 1024 * 1024);
    expect(() => objectCacheBytes({ BLUELINE_OBJECT_CACHE_MB: '0' })).toThrow(
      "Expected a positive integer of MiB in BLUELINE_OBJECT_CACHE_MB but received '0'.",
    );
  });
});
