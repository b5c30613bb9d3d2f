import { describe, expect, it } from 'vitest';
import {
  constrainView,
  fitView,
  hitTest,
  lerpView,
  MAX_SCALE,
  regionView,
  screenToWorld,
  visibleWorldRect,
  wheelZoomFactor,
  worldToScreen,
  zoomAt,
} from './view-transform';

const vp = { width: 800, height: 600 };

describe('view transform', () => {
  it('round-trips world and screen points', () => {
    const v = { scale: 0.25, x: 13, y: -40 };
    const p = { x: 1234, y: 567 };
    const back = screenToWorld(v, worldToScreen(v, p));
    expect(back.x).toBeCloseTo(p.x, 9);
    expect(back.y).toBeCloseTo(p.y, 9);
  });

  it('fits a 34x22 in sheet at 300 DPI into the viewport, centred, limited by width', () => {
    const sheet = { x: 0, y: 0, width: 10200, height: 6600 };
    const v = fitView(vp, sheet, 20);
    expect(v.scale).toBeCloseTo(760 / 10200, 9);
    const tl = worldToScreen(v, { x: 0, y: 0 });
    const br = worldToScreen(v, { x: 10200, y: 6600 });
    expect(tl.x).toBeCloseTo(20, 6);
    expect(br.x).toBeCloseTo(780, 6);
    expect((tl.y + br.y) / 2).toBeCloseTo(300, 6);
  });

  it('keeps the world point under the cursor fixed when zooming', () => {
    const v = { scale: 0.1, x: 50, y: 20 };
    const anchor = { x: 310, y: 222 };
    const before = screenToWorld(v, anchor);
    const z = zoomAt(v, 3.7, anchor);
    const after = screenToWorld(z, anchor);
    expect(z.scale).toBeCloseTo(0.37, 9);
    expect(after.x).toBeCloseTo(before.x, 6);
    expect(after.y).toBeCloseTo(before.y, 6);
  });

  it('clamps zoom and still keeps the anchor fixed', () => {
    const v = { scale: 4, x: 0, y: 0 };
    const z = zoomAt(v, 100, { x: 100, y: 100 });
    expect(z.scale).toBe(MAX_SCALE);
    expect(screenToWorld(z, { x: 100, y: 100 }).x).toBeCloseTo(25, 9);
  });

  it('makes wheel zoom in and out by the same delta cancel exactly', () => {
    expect(wheelZoomFactor(120) * wheelZoomFactor(-120)).toBeCloseTo(1, 12);
    expect(wheelZoomFactor(-100)).toBeGreaterThan(1);
    expect(wheelZoomFactor(3, 1)).toBeCloseTo(wheelZoomFactor(48, 0), 12);
  });

  it('reports the visible world rectangle', () => {
    const r = visibleWorldRect({ scale: 0.5, x: -100, y: 0 }, vp);
    expect(r).toEqual({ x: 200, y: 0, width: 1600, height: 1200 });
  });

  it('never lets the content leave the viewport entirely', () => {
    const c = constrainView({ scale: 1, x: -5000, y: 4000 }, vp, { width: 1000, height: 1000 }, 64);
    expect(c.x).toBe(64 - 1000);
    expect(c.y).toBe(600 - 64);
  });

  it('interpolates views with endpoints exact and geometric scale', () => {
    const a = { scale: 0.1, x: 0, y: 0 };
    const b = { scale: 1.6, x: -500, y: -300 };
    const mid = lerpView(a, b, 0.5, vp);
    expect(mid.scale).toBeCloseTo(0.4, 9);
    expect(lerpView(a, b, 0, vp).scale).toBeCloseTo(0.1, 12);
    expect(lerpView(a, b, 1, vp)).toEqual(b);
  });

  it('zooms to a region with context, centred on it and not past the cap', () => {
    const rect = { x: 5000, y: 3000, width: 100, height: 50 };
    const v = regionView(vp, rect, 400, 2);
    const c = screenToWorld(v, { x: 400, y: 300 });
    expect(c.x).toBeCloseTo(5050, 6);
    expect(c.y).toBeCloseTo(3025, 6);
    expect(v.scale).toBeLessThanOrEqual(2);
    const vis = visibleWorldRect(v, vp);
    expect(vis.width).toBeGreaterThanOrEqual(400);
  });

  it('hit-tests the smallest region containing the point', () => {
    const items = [
      { id: 'big', bbox: { x: 0, y: 0, width: 100, height: 100 } },
      { id: 'small', bbox: { x: 40, y: 40, width: 10, height: 10 } },
    ];
    expect(hitTest(items, { x: 45, y: 45 })?.id).toBe('small');
    expect(hitTest(items, { x: 5, y: 5 })?.id).toBe('big');
    expect(hitTest(items, { x: 200, y: 5 })).toBeNull();
    expect(hitTest(items, { x: 103, y: 5 }, 4)?.id).toBe('big');
  });
});
