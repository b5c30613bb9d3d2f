import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ObjectNotFoundError, ObjectStoreUnavailableError, type ObjectStore } from './object-store';
import { OutageWaitingObjectStore } from './outage-wait';

// The job handlers' object store (outage-wait.ts): a retryable outage is waited out with growing
// pauses up to a bound; everything else passes straight through. A fake store and a fake clock:
// no real waiting.

const down = () =>
  new ObjectStoreUnavailableError(
    'The object storage s3://b/p/ did not answer PutObject (ECONNREFUSED); retry shortly.',
    true,
  );

/** A store whose every operation fails `failures` times with `error()`, then succeeds. */
function flaky(failures: number, error: () => unknown = down) {
  const calls: string[] = [];
  let left = failures;
  const op =
    <T>(name: string, value: T) =>
    async () => {
      calls.push(name);
      if (left > 0) {
        left--;
        throw error();
      }
      return value;
    };
  const put = { key: 'k', size: 1, sha256: 'a'.repeat(64), etag: `"${'a'.repeat(64)}"` };
  const store: ObjectStore = {
    put: op('put', put),
    putFile: op('putFile', put),
    get: op('get', null),
    stat: op('stat', null),
    delete: op('delete', true),
    deletePrefix: op('deletePrefix', 3),
    list: op('list', { keys: [], nextToken: null, prevToken: null }),
    localPath: op('localPath', '/tmp/x'),
    sweepTemp: op('sweepTemp', { tempFiles: 0, orphanVersions: 0, brokenKeys: [], trash: 0 }),
  };
  return { store, calls };
}

function clock() {
  let now = 0;
  const pauses: number[] = [];
  return {
    pauses,
    now: () => now,
    sleep: async (ms: number) => {
      pauses.push(ms);
      now += ms;
    },
  };
}

describe('OutageWaitingObjectStore', () => {
  it('waits out a retryable outage with growing pauses, then returns the result', async () => {
    const { store, calls } = flaky(6);
    const c = clock();
    const logs: string[] = [];
    const log = {
      warn: (_o: object, m?: string) => logs.push(`warn ${m}`),
      info: (_o: object, m?: string) => logs.push(`info ${m}`),
    };
    const s = new OutageWaitingObjectStore(store, {
      ...c,
      log,
      firstPauseMs: 250,
      maxPauseMs: 2000,
    });
    expect(await s.localPath('a/b')).toBe('/tmp/x');
    expect(calls).toEqual(Array(7).fill('localPath'));
    expect(c.pauses).toEqual([250, 500, 1000, 2000, 2000, 2000]);
    // Said once when it began waiting and once when it got through, not at every try.
    expect(logs).toEqual([
      'warn Object storage unavailable; the job waits for it (up to 120 s)',
      'info Object storage answered again; the job carries on',
    ]);
  });

  it('gives up after waitMs with a retryable 503 that says how long it waited', async () => {
    const { store, calls } = flaky(1000);
    const c = clock();
    const s = new OutageWaitingObjectStore(store, { ...c, waitMs: 10_000, maxPauseMs: 4000 });
    const err = (await s
      .put('a/b', Buffer.from('x'))
      .catch((e: unknown) => e)) as ObjectStoreUnavailableError;
    expect(err).toBeInstanceOf(ObjectStoreUnavailableError);
    expect(err.retryable).toBe(true);
    expect(err.status).toBe(503);
    expect(err.code).toBe('unavailable');
    expect(err.headers).toEqual({ 'Retry-After': '5' });
    expect(err.detail).toBe(
      "The object storage s3://b/p/ did not answer PutObject (ECONNREFUSED); retry shortly. It stayed unavailable for 10 s of tries (put of 'a/b').",
    );
    // 250 + 500 + 1000 + 2000 + 4000 = 7750, then the last pause is cut to the 10 s bound.
    expect(c.pauses).toEqual([250, 500, 1000, 2000, 4000, 2250]);
    expect(calls).toHaveLength(7);
  });

  it('does not retry what waiting cannot fix', async () => {
    const c = clock();
    const cases: [string, unknown][] = [
      ['a missing bucket', new ObjectStoreUnavailableError('The bucket does not exist.', false)],
      ['a missing key', new ObjectNotFoundError('a/b')],
      ['a bad range', new RangeError('Expected 0 <= start <= end')],
    ];
    for (const [what, error] of cases) {
      const { store, calls } = flaky(1, () => error);
      await expect(new OutageWaitingObjectStore(store, c).localPath('a/b'), what).rejects.toBe(
        error,
      );
      expect(calls, what).toEqual(['localPath']);
    }
    expect(c.pauses).toEqual([]);
  });

  it('retries every operation of the interface, and puts of a Buffer but not of a stream', async () => {
    const c = clock();
    const ops: [string, (s: ObjectStore) => Promise<unknown>][] = [
      ['put', (s) => s.put('a/b', Buffer.from('x'))],
      ['putFile', (s) => s.putFile('a/b', '/tmp/x')],
      ['get', (s) => s.get('a/b')],
      ['stat', (s) => s.stat('a/b')],
      ['delete', (s) => s.delete('a/b')],
      ['deletePrefix', (s) => s.deletePrefix('a/')],
      ['list', (s) => s.list('a/', { limit: 5, direction: 'forward' })],
      ['localPath', (s) => s.localPath('a/b')],
      ['sweepTemp', (s) => s.sweepTemp()],
    ];
    for (const [name, op] of ops) {
      const { store, calls } = flaky(2);
      await op(new OutageWaitingObjectStore(store, c));
      expect(calls, name).toEqual([name, name, name]);
    }
    // A stream is consumed by the first try: it cannot be sent again.
    const { store, calls } = flaky(1);
    await expect(
      new OutageWaitingObjectStore(store, c).put('a/b', Readable.from([Buffer.from('x')])),
    ).rejects.toBeInstanceOf(ObjectStoreUnavailableError);
    expect(calls).toEqual(['put']);
  });
});
