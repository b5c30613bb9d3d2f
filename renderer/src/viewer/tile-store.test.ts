import { describe, expect, it } from 'vitest';
import { TileStore, tileCell, type LoadTile, type TileOwner } from './tile-store';

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

  it('runs at most maxInFlight fetches; a landed or aborted one lets the next queued start', async () => {
    const { calls, load } = fakeLoader();
    const store = new TileStore(load, { maxInFlight: 3 });
    const a = owner();
    store.requestAll(['/t/7/0/0', '/t/7/1/0', '/t/7/2/0', '/t/7/3/0', '/t/7/4/0'], a.owner, false);
    expect(calls.map((c) => c.url)).toEqual(['/t/7/0/0', '/t/7/1/0', '/t/7/2/0']);
    expect(calls.every((c) => c.priority === 'high')).toBe(true);
    expect(store.inFlight).toBe(3);
    expect(store.loading('/t/7/4/0')).toBe(true);
    expect(store.fetching('/t/7/4/0')).toBe(false);
    calls[1]!.resolve(bitmap());
    await settle();
    expect(calls.map((c) => c.url).slice(3)).toEqual(['/t/7/3/0']);
    // The view left 0/0 (running) and 4/0 (queued): the abort frees a connection at once, the
    // queued one is dropped unfetched.
    store.release(a.owner, new Set(['/t/7/2/0', '/t/7/3/0']));
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(store.dropped).toBe(1);
    expect(store.inFlight).toBe(2);
    expect(calls).toHaveLength(4);
    store.requestAll(['/t/7/5/0', '/t/7/6/0'], a.owner, false);
    expect(calls.map((c) => c.url).slice(4)).toEqual(['/t/7/5/0']);
    expect(store.inFlight).toBe(3);
  });

  it("starts the newest view's tiles first, in the order asked for", async () => {
    const { calls, load } = fakeLoader();
    const store = new TileStore(load, { maxInFlight: 2 });
    const a = owner();
    // A zoom step: four tiles, two start.
    store.requestAll(['/t/8/0/0', '/t/8/1/0', '/t/8/2/0', '/t/8/3/0'], a.owner, false);
    await settle();
    // The next step (a later commit) before any landed; it still shows 3/0 of the last one.
    store.requestAll(['/t/9/1/1', '/t/9/0/1', '/t/8/3/0'], a.owner, false);
    calls[0]!.resolve(bitmap());
    calls[1]!.resolve(bitmap());
    await settle();
    expect(calls.map((c) => c.url).slice(2)).toEqual(['/t/9/1/1', '/t/9/0/1']);
    calls[2]!.resolve(bitmap());
    await settle();
    // Then 3/0 (asked again by the newest view), before 2/0 of the older one.
    expect(calls[4]!.url).toBe('/t/8/3/0');
    calls[3]!.resolve(bitmap());
    await settle();
    expect(calls[5]!.url).toBe('/t/8/2/0');
  });

  it('holds prefetch while tiles of a view are queued, on at most maxPrefetchInFlight fetches', async () => {
    const { calls, load } = fakeLoader();
    const store = new TileStore(load, { maxInFlight: 3, maxPrefetchInFlight: 1 });
    const a = owner();
    store.requestAll(['/t/5/0/0', '/t/5/1/0', '/t/5/2/0', '/t/5/3/0'], a.owner, false);
    store.requestAll(['/t/5/8/8', '/t/5/9/9'], a.owner, true);
    expect(calls.map((c) => c.url)).toEqual(['/t/5/0/0', '/t/5/1/0', '/t/5/2/0']);
    calls[0]!.resolve(bitmap());
    await settle();
    // The view's last tile before any prefetch.
    expect(calls[3]!.url).toBe('/t/5/3/0');
    calls[1]!.resolve(bitmap());
    await settle();
    expect(calls[4]!.url).toBe('/t/5/8/8');
    expect(calls[4]!.priority).toBe('low');
    calls[2]!.resolve(bitmap());
    await settle();
    // One prefetch at a time, even with free connections.
    expect(calls).toHaveLength(5);
    expect(store.inFlight).toBe(2);
    // A view asking for a queued prefetch tile upgrades it.
    store.requestAll(['/t/5/9/9'], a.owner, false);
    expect(calls[5]!.url).toBe('/t/5/9/9');
    expect(calls[5]!.priority).toBe('high');
  });

  it("fetches a tile with its 2x2 cell's other queued tiles, as connections allow", async () => {
    expect(tileCell('/o/tiles/8/5/7.webp?sig=1')).toBe('/o/tiles/8/2/3?sig=1');
    expect(tileCell('/o/tiles/8/4/6.webp?sig=1')).toBe(tileCell('/o/tiles/8/5/7.webp?sig=1'));
    expect(tileCell('/o/tiles/7/4/6.webp?sig=1')).not.toBe(tileCell('/o/tiles/8/4/6.webp?sig=1'));
    const { calls, load } = fakeLoader();
    const store = new TileStore(load, { maxInFlight: 5 });
    const a = owner();
    const t = (x: number, y: number) => `/o/tiles/8/${x}/${y}.webp?sig=1`;
    // Nearest the centre first: (5,5) of cell (2,2), then (6,5) of cell (3,2), ...
    store.requestAll(
      [t(5, 5), t(6, 5), t(5, 6), t(4, 5), t(6, 6), t(4, 4), t(7, 4)],
      a.owner,
      false,
    );
    // (5,5) goes with (4,5) and (4,4), its cell's; then (6,5) with (7,4) until five run.
    expect(calls.map((c) => c.url)).toEqual([t(5, 5), t(4, 5), t(4, 4), t(6, 5), t(7, 4)]);
    calls[0]!.resolve(bitmap());
    await settle();
    // The next free connection: (5,6), then its cell's queued ones as connections free up.
    expect(calls.map((c) => c.url).slice(5)).toEqual([t(5, 6)]);
    calls[1]!.resolve(bitmap());
    await settle();
    expect(calls.map((c) => c.url).slice(6)).toEqual([t(6, 6)]);
  });

  it("over HTTP/2 a step's view tiles all start at once, centre first with their cells", async () => {
    const { calls, load } = fakeLoader();
    const store = new TileStore(load, { protocolOf: () => 'h2' });
    const a = owner();
    const t = (x: number, y: number) => `/o/tiles/8/${x}/${y}.webp?sig=1`;
    // A 1440x900 view at 512 px tiles: up to 4x3 tiles and a backdrop, nearest the centre first.
    const view = [t(5, 5), t(6, 5), t(5, 6), t(4, 5), t(6, 6), t(4, 4), t(7, 4), t(3, 6)];
    store.requestAll(view, a.owner, false);
    // The same order as over HTTP/1.1 (each with its 2x2 cell's queued tiles), none held back.
    expect(calls.map((c) => c.url)).toEqual([
      t(5, 5),
      t(4, 5),
      t(4, 4),
      t(6, 5),
      t(7, 4),
      t(5, 6),
      t(6, 6),
      t(3, 6),
    ]);
    expect(store.maxInFlight).toBe(64);
    expect(store.inFlight).toBe(8);
    // Prefetch (the ring) waits for no view tile and may run 16 at once.
    const ring = Array.from({ length: 20 }, (_, i) => `/o/tiles/8/${10 + i}/0.webp?sig=1`);
    store.requestAll(ring, a.owner, true);
    expect(calls.slice(8).map((c) => c.url)).toEqual(ring.slice(0, 16));
    expect(calls.slice(8).every((c) => c.priority === 'low')).toBe(true);
    calls[8]!.resolve(bitmap());
    await settle();
    expect(calls[24]!.url).toBe(ring[16]);
  });

  it('keeps 5 at once until a response says the connection is HTTP/2, and over HTTP/1.1', async () => {
    let protocol: string | undefined = undefined;
    const { calls, load } = fakeLoader();
    const store = new TileStore(load, { protocolOf: () => protocol });
    const a = owner();
    const urls = Array.from({ length: 9 }, (_, i) => `/t/7/${i}/0`);
    store.requestAll(urls, a.owner, false);
    expect(calls).toHaveLength(5);
    expect(store.protocol).toBeUndefined();
    // The first tile lands over HTTP/2: the rest go at once.
    protocol = 'h2';
    calls[0]!.resolve(bitmap());
    await settle();
    expect(calls.map((c) => c.url)).toEqual(urls);
    expect(store.inFlight).toBe(8);

    const h1 = fakeLoader();
    const over11 = new TileStore(h1.load, { protocolOf: () => 'http/1.1' });
    over11.requestAll(urls, a.owner, false);
    expect(h1.calls).toHaveLength(5);
    expect(over11.maxInFlight).toBe(5);
    h1.calls[0]!.resolve(bitmap());
    await settle();
    expect(h1.calls).toHaveLength(6);
  });
});
