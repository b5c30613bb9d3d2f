// Where a change lies, from the overlay it was found on to the newer revision's PDF page.
//
// Frames (core/jobs/compare-tasks.ts): an overlay's frame is block A's bbox on the OLDER sheet
// (overlay pixel (0,0) = A sheet pixel (bboxA.x, bboxA.y)); the overlay's `transform` maps block
// B's crop pixels (the NEWER sheet) to block A's crop pixels. A change's bbox is in overlay
// pixels. To cloud it on the newer revision the box goes back through the inverse transform into
// B's crop, then onto B's sheet (+ bboxB origin), then into B's PDF page space.
//
// Sheet pixels → PDF points: the sheet raster is the page's crop box after /Rotate, rendered at the
// sheet's dpi (core/vision/input/pdfium.adapter.ts: width = round(displayed width pt × dpi / 72),
// origin top-left, y down). The scale is taken from the stored raster size over the displayed page
// size, so the rounding of the raster size does not shift clouds on large sheets.
import { invertAffine, mapBox } from '../../vision/compare/register';

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A 2×3 affine [a, b, c, d, e, f]: x' = a·x + b·y + c, y' = d·x + e·y + f. */
export type Affine = readonly number[];

/**
 * A change's box (overlay pixels) on the newer sheet (B sheet pixels): through the inverse of the
 * overlay's B→A transform into B's crop, then offset by B's block origin.
 */
export function changeBoxOnNewerSheet(
  changeBox: Box,
  transformBtoA: Affine,
  blockB: { x: number; y: number },
): Box {
  const inCropB = mapBox(invertAffine(transformBtoA), changeBox);
  return { ...inCropB, x: inCropB.x + blockB.x, y: inCropB.y + blockB.y };
}

/** A PDF page's geometry as the rasterizer saw it. */
export interface PageGeometry {
  /** The crop box in default user space (points), as [x0, y0, x1, y1] with x0 < x1, y0 < y1. */
  cropBox: [number, number, number, number];
  /** /Rotate, normalised to 0, 90, 180 or 270 (clockwise, as displayed). */
  rotate: number;
  /** The sheet raster's size in pixels (the stored sheet's width and height). */
  rasterWidth: number;
  rasterHeight: number;
}

/**
 * Sheet pixel (x right, y down, on the page as displayed) → default user space (points, y up).
 * The displayed page is the crop box turned clockwise by /Rotate; u, v are offsets from the crop
 * box's lower-left corner in unrotated user space:
 *   0°: x = u,      y = h − v        90°: x = v,      y = u
 *   180°: x = w − u, y = v           270°: x = h − v, y = w − u
 * (w, h the unrotated crop box size; the same as pdf.js's viewport and PDFium's device mapping.)
 */
export function sheetPixelToUserSpace(g: PageGeometry, px: number, py: number): [number, number] {
  const [x0, y0, x1, y1] = g.cropBox;
  const w = x1 - x0;
  const h = y1 - y0;
  const quarter = g.rotate === 90 || g.rotate === 270;
  const displayW = quarter ? h : w;
  const displayH = quarter ? w : h;
  // Points per raster pixel along each displayed axis.
  const dx = (px * displayW) / g.rasterWidth;
  const dy = (py * displayH) / g.rasterHeight;
  let u: number, v: number;
  switch (g.rotate) {
    case 90:
      u = dy;
      v = dx;
      break;
    case 180:
      u = w - dx;
      v = dy;
      break;
    case 270:
      u = w - dy;
      v = h - dx;
      break;
    default:
      u = dx;
      v = h - dy;
  }
  return [x0 + u, y0 + v];
}

/** A box of sheet pixels as a user-space rectangle [x0, y0, x1, y1] (clipped to the crop box). */
export function sheetBoxToUserRect(g: PageGeometry, b: Box): [number, number, number, number] {
  const a = sheetPixelToUserSpace(g, b.x, b.y);
  const c = sheetPixelToUserSpace(g, b.x + b.width, b.y + b.height);
  const [cx0, cy0, cx1, cy1] = g.cropBox;
  const clip = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  return [
    clip(Math.min(a[0], c[0]), cx0, cx1),
    clip(Math.min(a[1], c[1]), cy0, cy1),
    clip(Math.max(a[0], c[0]), cx0, cx1),
    clip(Math.max(a[1], c[1]), cy0, cy1),
  ];
}

/**
 * Reading order for numbering a sheet's changes: top to bottom in bands, left to right within a
 * band, so the numbers on the report, the clouded PDF's tags and the CSV agree and a reader finds
 * "change 7" where they expect it. `band` is the band height (the image's pixels).
 */
export function readingOrder<T extends { bbox: Box }>(items: T[], band: number): T[] {
  return [...items].sort((p, q) => {
    const bp = Math.floor((p.bbox.y + p.bbox.height / 2) / band);
    const bq = Math.floor((q.bbox.y + q.bbox.height / 2) / band);
    return bp - bq || p.bbox.x - q.bbox.x || p.bbox.y - q.bbox.y;
  });
}

/** A cloud around a rectangle: the outline as scallops (circular arcs bulging outwards). */
export interface CloudArc {
  /** Start and end of the arc, on the rectangle's outline. */
  from: [number, number];
  to: [number, number];
  /** Two Bézier control points of the scallop (cubic approximation of a half circle). */
  c1: [number, number];
  c2: [number, number];
}

/**
 * The scallops of a revision cloud around [x0, y0, x1, y1] with scallops about `arc` long, in
 * whatever y direction the caller's space has (the bulge goes away from the rectangle's centre).
 * Each side gets a whole number of scallops, so the corners meet.
 */
export function cloudArcs(rect: [number, number, number, number], arc: number): CloudArc[] {
  const [x0, y0, x1, y1] = rect;
  const cx = (x0 + x1) / 2;
  const cy = (y0 + y1) / 2;
  const corners: [number, number][] = [
    [x0, y0],
    [x1, y0],
    [x1, y1],
    [x0, y1],
  ];
  const out: CloudArc[] = [];
  // 4/3 · tan(π/4) · r, the usual cubic approximation of a quarter circle, applied to a half
  // circle as two control points at the bulge height 4/3 · r (a semicircle's Bézier envelope).
  for (let s = 0; s < 4; s++) {
    const [ax, ay] = corners[s]!;
    const [bx, by] = corners[(s + 1) % 4]!;
    const len = Math.hypot(bx - ax, by - ay);
    const n = Math.max(1, Math.round(len / arc));
    const ux = (bx - ax) / len || 0;
    const uy = (by - ay) / len || 0;
    // Outward normal: the one pointing away from the centre.
    let nx = -uy,
      ny = ux;
    const mx = (ax + bx) / 2,
      my = (ay + by) / 2;
    if ((mx + nx - cx) ** 2 + (my + ny - cy) ** 2 < (mx - cx) ** 2 + (my - cy) ** 2) {
      nx = -nx;
      ny = -ny;
    }
    const step = len / n;
    const bulge = (4 / 3) * (step / 2);
    for (let i = 0; i < n; i++) {
      const fx = ax + ux * step * i,
        fy = ay + uy * step * i;
      const tx = ax + ux * step * (i + 1),
        ty = ay + uy * step * (i + 1);
      out.push({
        from: [fx, fy],
        to: [tx, ty],
        c1: [fx + nx * bulge, fy + ny * bulge],
        c2: [tx + nx * bulge, ty + ny * bulge],
      });
    }
  }
  return out;
}

/** The smallest box holding every box of `boxes` (at least one). */
export function unionBox(boxes: Box[]): Box {
  const x0 = Math.min(...boxes.map((b) => b.x));
  const y0 = Math.min(...boxes.map((b) => b.y));
  const x1 = Math.max(...boxes.map((b) => b.x + b.width));
  const y1 = Math.max(...boxes.map((b) => b.y + b.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * Groups of items that are one change to a reader: the same `key` (kind, category and description)
 * and boxes touching or overlapping within `gap` pixels, chained (a fill removed over a whole plan,
 * stored as the 59 pieces change detection split it into, is one group). Groups come in the order
 * of their first item; items keep their order inside a group.
 */
export function groupTouching<T extends { bbox: Box }>(
  items: T[],
  key: (t: T) => string,
  gap: number,
): T[][] {
  const parent = items.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i]!]!;
    return i;
  };
  const near = (a: Box, b: Box) =>
    a.x <= b.x + b.width + gap &&
    b.x <= a.x + a.width + gap &&
    a.y <= b.y + b.height + gap &&
    b.y <= a.y + a.height + gap;
  const keys = items.map(key);
  for (let i = 0; i < items.length; i++)
    for (let j = i + 1; j < items.length; j++)
      if (keys[i] === keys[j] && near(items[i]!.bbox, items[j]!.bbox)) {
        const [a, b] = [find(i), find(j)];
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
  const groups = new Map<number, T[]>();
  items.forEach((t, i) => {
    const r = find(i);
    const g = groups.get(r);
    if (g) g.push(t);
    else groups.set(r, [t]);
  });
  return [...groups.values()];
}
