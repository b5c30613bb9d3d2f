// Issue 19: "while a deep tile renders, the viewer shows the enlarged lower level (never a blank
// or a Loading sheet)". The tiled layer's flow as SheetCanvas runs it — wantedTiles for the view,
// release + requestAll on the real TileStore, layerLoad for the canvas's status — played over the
// deep pass's script (bench/viewer/deep-zoom.ts): zoom steps 100 → 1,600 % anchored on a place,
// pans at 1,600 %, at three places of a 6800 x 4400 overlay (beam S101's), with deep tiles held
// back by the fake service until checked. The "Loading drawing…" status shows exactly when a
// shown layer is 'loading', so any 'loading' during a step fails the test.
import { describe, expect, it } from 'vitest';
import type { TilePyramid } from '../api/types';
import { TileStore, type LoadTile, type TileOwner } from './tile-store';
import { layerLoad, nativeLevel, wantedTiles, type TileRef, type WantedTiles } from './tiles';
import { centreOn, worldToScreen, zoomAt, type View } from './view-transform';

const pyramid: TilePyramid = {
  url_template: '/o/tiles/{z}/{x}/{y}.webp',
  tile_size: 512,
  native_level: 4,
  max_level: 8,
  min_level: 0,
  width: 6800,
  height: 4400,
};
const viewport = { width: 1360, height: 760 };
const levelOf = (url: string) => Number(/\/tiles\/(\d+)\//.exec(url)![1]);

interface Pending {
  url: string;
  resolve: (b: ImageBitmap) => void;
  signal: AbortSignal;
}

function harness() {
  const pending: Pending[] = [];
  const load: LoadTile = (url, _priority, signal) =>
    new Promise((resolve, reject) => {
      pending.push({ url, resolve, signal });
      signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
    });
  const store = new TileStore(load, { maxInFlight: 4, maxPrefetchInFlight: 2 });
  const owner: TileOwner = { landed: () => {}, failed: () => {} };
  const isReady = (t: TileRef) => store.isReady(t.url);
  const failed = (t: TileRef) => store.failed(t.url);
  let view: View = { scale: 1, x: 0, y: 0 };
  let wanted: WantedTiles | null = null;
  const settle = () => new Promise((r) => setTimeout(r, 0));
  /** A commit of the layer: its wanted tiles, then the effect (release, request). */
  const commit = () => {
    wanted = wantedTiles(view, viewport, pyramid, 1, isReady);
    store.release(owner, wanted.keep);
    store.requestAll(
      wanted.all.map((t) => t.url),
      owner,
      false,
    );
    return layerLoad(wanted, isReady, failed);
  };
  /** The service answers every running fetch that `which` accepts, until none is left. */
  const serve = async (which: (url: string) => boolean) => {
    for (;;) {
      const i = pending.findIndex((p) => !p.signal.aborted && which(p.url));
      if (i < 0) return;
      const [p] = pending.splice(i, 1);
      p!.resolve({ close() {} } as unknown as ImageBitmap);
      await settle();
      commit(); // a tile landed: the layer re-renders
    }
  };
  const prefetchRing = async () => {
    if (layerLoad(wanted!, isReady, failed) !== 'ready') return;
    store.requestAll(
      wanted!.ring.map((t) => t.url),
      owner,
      true,
    );
    await serve(() => true);
  };
  return {
    store,
    get view() {
      return view;
    },
    set view(v: View) {
      view = v;
    },
    commit,
    serve,
    prefetchRing,
    state: () => layerLoad(wanted!, isReady, failed),
  };
}

describe('a zoom step never shows the Loading status', () => {
  it('zoom 100 → 1,600 % and pans at three places: refining until the deep tiles land', async () => {
    const h = harness();
    const native = nativeLevel(pyramid);
    const places = [
      { x: 4100, y: 2500 },
      { x: 3200, y: 3000 },
      { x: 4800, y: 1900 },
    ];
    const states: string[] = [];
    for (const place of places) {
      // Fit to the place at 100 %; it may load like a new view does.
      h.view = centreOn(viewport, place, 1);
      h.commit();
      await h.serve(() => true);
      expect(h.state()).toBe('ready');
      await h.prefetchRing();
      for (const s of [2, 4, 8, 16]) {
        const anchor = worldToScreen(h.view, place);
        // The wheel's steps (a few intermediate views per step, one commit each).
        const k = Math.cbrt(s / h.view.scale);
        for (let i = 0; i < 2; i++) {
          h.view = zoomAt(h.view, k, anchor);
          expect(h.commit(), `${s * 100} %: on the way`).not.toBe('loading');
        }
        h.view = zoomAt(h.view, s / h.view.scale, anchor);
        const now = h.commit();
        states.push(now);
        expect(now, `${s * 100} %: the moment of the step`).not.toBe('loading');
        // The backdrop (at most native) lands; the deep tiles are still rendering.
        await h.serve((u) => levelOf(u) <= native);
        const during = h.state();
        states.push(during);
        expect(during, `${s * 100} %: while the deep tiles render`).toBe('refining');
        await h.serve(() => true);
        expect(h.state()).toBe('ready');
        await h.prefetchRing();
      }
      for (const [dx, dy] of [
        [-300, 0],
        [0, -250],
        [300, 0],
      ] as const) {
        h.view = { ...h.view, x: h.view.x + dx, y: h.view.y + dy };
        const now = h.commit();
        expect(now, 'a pan at 1,600 %').not.toBe('loading');
        await h.serve((u) => levelOf(u) <= native);
        expect(h.state()).not.toBe('loading');
        await h.serve(() => true);
        await h.prefetchRing();
      }
    }
    expect(states).toContain('refining');
  });

  it("is 'refining', not 'loading', when the view's own tiles are here and only a backdrop is on its way", () => {
    const w = wantedTiles(
      centreOn(viewport, { x: 4100, y: 2500 }, 16),
      viewport,
      pyramid,
      1,
      () => false,
    );
    const coarse = new Set(w.backdrop.map((t) => t.url));
    const state = layerLoad(
      w,
      (t) => !coarse.has(t.url),
      () => false,
    );
    expect(state).toBe('refining');
    // Nothing to show where a tile of the view is missing and no coarser tile covers it.
    expect(
      layerLoad(
        w,
        () => false,
        () => false,
      ),
    ).toBe('loading');
    // All here: ready.
    expect(
      layerLoad(
        w,
        () => true,
        () => false,
      ),
    ).toBe('ready');
  });

  it('asks for the backdrop first, then the tiles nearest the centre of the view', () => {
    const view = centreOn(viewport, { x: 4100, y: 2500 }, 16);
    const w = wantedTiles(view, viewport, pyramid, 1, () => false);
    const urls = w.all.map((t) => t.url);
    expect(levelOf(urls[0]!)).toBe(nativeLevel(pyramid));
    const current = w.current;
    expect(current.length).toBeGreaterThan(4);
    const d = (t: TileRef) =>
      Math.hypot(t.rect.x + t.rect.width / 2 - 4100, t.rect.y + t.rect.height / 2 - 2500);
    for (let i = 1; i < current.length; i++)
      expect(d(current[i]!)).toBeGreaterThanOrEqual(d(current[i - 1]!));
  });
});
