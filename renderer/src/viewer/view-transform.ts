// Pure view-transform helpers for the sheet viewer. No DOM, no Konva: easy to test, cheap to run
// on every wheel event.
//
// Coordinates: "world" is overlay (or sheet) pixels, origin top-left, y down. "Screen" is CSS
// pixels relative to the canvas' top-left. A View maps world → screen as
//   screen = world * scale + (x, y)

import type { BBox } from '../api/types';

export interface View {
  scale: number;
  x: number;
  y: number;
}

export interface Size {
  width: number;
  height: number;
}

export interface Point {
  x: number;
  y: number;
}

/**
 * 1 % to 1,600 % of image pixels: far enough out to see an E-size sheet whole, in far enough to
 * read the smallest text and see whether two lines touch. Vector pages stay sharp all the way
 * (their deep tiles are rendered from the PDF at 16x the 200-DPI image).
 */
export const MIN_SCALE = 0.01;
export const MAX_SCALE = 16;

export function clampScale(scale: number, min = MIN_SCALE, max = MAX_SCALE): number {
  return Math.min(max, Math.max(min, scale));
}

export function worldToScreen(view: View, p: Point): Point {
  return { x: p.x * view.scale + view.x, y: p.y * view.scale + view.y };
}

export function screenToWorld(view: View, p: Point): Point {
  return { x: (p.x - view.x) / view.scale, y: (p.y - view.y) / view.scale };
}

/** The world-space rectangle the viewport shows. */
export function visibleWorldRect(view: View, viewport: Size): BBox {
  const tl = screenToWorld(view, { x: 0, y: 0 });
  return {
    x: tl.x,
    y: tl.y,
    width: viewport.width / view.scale,
    height: viewport.height / view.scale,
  };
}

/** A view that shows `rect` whole and centred, leaving `padding` screen pixels on each side. */
export function fitView(viewport: Size, rect: BBox, padding = 24, maxScale = MAX_SCALE): View {
  const availW = Math.max(1, viewport.width - 2 * padding);
  const availH = Math.max(1, viewport.height - 2 * padding);
  const w = Math.max(1, rect.width);
  const h = Math.max(1, rect.height);
  const scale = clampScale(Math.min(availW / w, availH / h), MIN_SCALE, maxScale);
  return centreOn(viewport, { x: rect.x + rect.width / 2, y: rect.y + rect.height / 2 }, scale);
}

/** A view at `scale` with world point `centre` in the middle of the viewport. */
export function centreOn(viewport: Size, centre: Point, scale: number): View {
  return {
    scale,
    x: viewport.width / 2 - centre.x * scale,
    y: viewport.height / 2 - centre.y * scale,
  };
}

export function viewCentre(view: View, viewport: Size): Point {
  return screenToWorld(view, { x: viewport.width / 2, y: viewport.height / 2 });
}

/** Zooms by `factor`, keeping the world point under `anchor` (screen) fixed. */
export function zoomAt(
  view: View,
  factor: number,
  anchor: Point,
  min = MIN_SCALE,
  max = MAX_SCALE,
): View {
  const scale = clampScale(view.scale * factor, min, max);
  const world = screenToWorld(view, anchor);
  return { scale, x: anchor.x - world.x * scale, y: anchor.y - world.y * scale };
}

export function panBy(view: View, dx: number, dy: number): View {
  return { scale: view.scale, x: view.x + dx, y: view.y + dy };
}

/**
 * Zoom factor for one wheel event. Trackpads send many small deltas, mice a few large ones;
 * an exponential keeps both smooth and makes zoom-in then zoom-out by the same delta exact.
 * deltaMode: 0 pixels, 1 lines (~16 px), 2 pages (~800 px).
 */
export function wheelZoomFactor(deltaY: number, deltaMode = 0, ctrlKey = false): number {
  const px = deltaMode === 1 ? deltaY * 16 : deltaMode === 2 ? deltaY * 800 : deltaY;
  // Pinch gestures arrive as ctrl+wheel with small deltas: make them more sensitive.
  const k = ctrlKey ? 0.01 : 0.0015;
  const clamped = Math.max(-400, Math.min(400, px));
  return Math.exp(-clamped * k);
}

/**
 * Keeps at least `margin` screen pixels of the content inside the viewport, so the sheet can
 * never be panned out of sight.
 */
export function constrainView(view: View, viewport: Size, content: Size, margin = 64): View {
  const w = content.width * view.scale;
  const h = content.height * view.scale;
  const mX = Math.min(margin, w);
  const mY = Math.min(margin, h);
  const x = Math.min(viewport.width - mX, Math.max(mX - w, view.x));
  const y = Math.min(viewport.height - mY, Math.max(mY - h, view.y));
  return { scale: view.scale, x, y };
}

/**
 * Interpolates between two views for animated "zoom to region": scale moves geometrically
 * (equal-looking steps), the centre linearly in world space. t in [0, 1].
 */
export function lerpView(a: View, b: View, t: number, viewport: Size): View {
  const ca = viewCentre(a, viewport);
  const cb = viewCentre(b, viewport);
  const scale = Math.exp(Math.log(a.scale) + (Math.log(b.scale) - Math.log(a.scale)) * t);
  const centre = { x: ca.x + (cb.x - ca.x) * t, y: ca.y + (cb.y - ca.y) * t };
  if (t >= 1) return b;
  return centreOn(viewport, centre, scale);
}

export function easeInOutCubic(t: number): number {
  return t < 0.5 ? 4 * t * t * t : 1 - Math.pow(-2 * t + 2, 3) / 2;
}

/** Whether two world rectangles overlap (touching edges do not count). */
export function intersects(a: BBox, b: BBox): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/**
 * The region under a world point: the smallest one containing it, so a small change inside a
 * large one stays clickable. `slop` (world pixels) widens thin regions for the pointer.
 */
export function hitTest<T extends { bbox: BBox }>(
  items: readonly T[],
  p: Point,
  slop = 0,
): T | null {
  let best: T | null = null;
  let bestArea = Infinity;
  for (const it of items) {
    const b = it.bbox;
    if (
      p.x >= b.x - slop &&
      p.x <= b.x + b.width + slop &&
      p.y >= b.y - slop &&
      p.y <= b.y + b.height + slop
    ) {
      const area = b.width * b.height;
      if (area < bestArea) {
        best = it;
        bestArea = area;
      }
    }
  }
  return best;
}

/** A view that shows a change region with context: at least `minWorld` world pixels wide and never above `maxScale`. */
export function regionView(viewport: Size, rect: BBox, minWorld = 400, maxScale = 2): View {
  const grow = (len: number) => Math.max(len * 2.2, minWorld);
  const w = grow(rect.width);
  const h = grow(rect.height);
  const cx = rect.x + rect.width / 2;
  const cy = rect.y + rect.height / 2;
  return fitView(viewport, { x: cx - w / 2, y: cy - h / 2, width: w, height: h }, 16, maxScale);
}
