import { describe, expect, it } from 'vitest';
import { TileStore, type LoadTile, type TileOwner } from './tile-store';

interface Call {
  url: string;
  priority: string;
  signal: AbortSignal;
  resolve: (b: ImageBitmap) => void;
  reject: (e: unknown) => void;
}

/** A loader whose fetches the test settles by hand; an abort rejects as fetch does. */
function fakeLoader() {
  const calls: Call[] = [];
  const load: LoadTile = (url, priority, signal) =>
    new Promise<ImageBitmap>((resolve, reject) => {
      calls.push({ url, priority, signal, resolve, reject });
      signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
    });
  return { calls, load };
}

const bitmap = () => {
  const b = { closed: false, close: () => (b.closed = true) };
  return b as unknown as ImageBitmap & { closed: boolean };
};

function owner() {
  const o = {
    landed: [] as string[],
    failed: [] as string[],
    owner: {
      landed: (u: string) => o.landed.push(u),
      failed: (u: string) => o.failed.push(u),
    } satisfies TileOwner,
  };
  return o;
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('TileStore', () => {
  it('aborts the fetch of a tile that left the view, silently', async () => {
    const { calls, load } = fakeLoader();
    const store = new TileStore(load);
    const a = owner();
    store.request('/t/5/1/1', a.owner, false);
    store.request('/t/5/2/1', a.owner, false);
    expect(calls.map((c) => c.url)).toEqual(['/t/5/1/1', '/t/5/2/1']);
    // The view moved: only 2/1 is still wanted.
    store.release(a.owner, new Set(['/t/5/2/1']));
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(calls[1]!.signal.aborted).toBe(false);
    expect(store.aborted).toBe(1);
    await settle();
    // No owner told, nothing marked failed, not loading any more: a later view asks again.
    expect(a.landed).toEqual([]);
    expect(a.failed).toEqual([]);
    expect(store.failed('/t/5/1/1')).toBe(false);
    expect(store.loading('/t/5/1/1')).toBe(false);
    store.request('/t/5/1/1', a.owner, false);
    expect(calls).toHaveLength(3);
    expect(calls[2]!.signal.aborted).toBe(false);
    // The kept one lands and is drawn.
    const b = bitmap();
    calls[1]!.resolve(b);
    await settle();
    expect(a.landed).toEqual(['/t/5/2/1']);
    expect(store.bitmap('/t/5/2/1')).toBe(b);
  });

  it('keeps a fetch another layer still waits for; going away releases everything', async () => {
    const { calls, load } = fakeLoader();
    const store = new TileStore(load);
    const a = owner();
    const b = owner();
    store.request('/t/6/0/0', a.owner, false);
    store.request('/t/6/0/0', b.owner, true); // on its way: no second fetch
    expect(calls).toHaveLength(1);
    store.release(a.owner, null);
    expect(calls[0]!.signal.aborted).toBe(false);
    store.release(b.owner, null);
    expect(calls[0]!.signal.aborted).toBe(true);
    await settle();
    expect(a.failed).toEqual([]);
    expect(b.failed).toEqual([]);
  });

  it('never aborts a tile already here, and closes a bitmap decoded after its abort', async () => {
    const calls: Call[] = [];
    // A loader that ignores the signal (its decode finishes anyway).
    const load: LoadTile = (url, priority, signal) =>
      new Promise<ImageBitmap>((resolve, reject) =>
        calls.push({ url, priority, signal, resolve, reject }),
      );
    const store = new TileStore(load);
    const a = owner();
    store.request('/t/4/0/0', a.owner, false);
    store.request('/t/4/1/0', a.owner, false);
    const here = bitmap();
    calls[0]!.resolve(here);
    await settle();
    store.release(a.owner, new Set());
    expect(calls[0]!.signal.aborted).toBe(false);
    expect(store.bitmap('/t/4/0/0')).toBe(here);
    expect(calls[1]!.signal.aborted).toBe(true);
    const late = bitmap();
    calls[1]!.resolve(late);
    await settle();
    expect(late.closed).toBe(true);
    expect(store.bitmap('/t/4/1/0')).toBe(null);
    expect(a.landed).toEqual(['/t/4/0/0']);
  });

  it('a failed fetch (not an abort) is marked and its owners told', async () => {
    const { calls, load } = fakeLoader();
    const store = new TileStore(load);
    const a = owner();
    store.request('/t/3/0/0', a.owner, true);
    expect(calls[0]!.priority).toBe('low');
    calls[0]!.reject(new Error('tile 404'));
    await settle();
    expect(a.failed).toEqual(['/t/3/0/0']);
    expect(store.failed('/t/3/0/0')).toBe(true);
    store.request('/t/3/0/0', a.owner, false);
    expect(calls).toHaveLength(1);
  });
});
