// Order and step through change regions. Pure.

import type { BBox } from '../api/types';

/**
 * Reading order: rows of `band` world pixels from the top, left to right within a row, so
 * `j` walks the sheet the way a reviewer scans it rather than in detection order.
 */
export function readingOrder<T extends { id: string; bbox: BBox }>(
  items: readonly T[],
  band = 300,
): T[] {
  return [...items].sort((a, b) => {
    const ra = Math.floor((a.bbox.y + a.bbox.height / 2) / band);
    const rb = Math.floor((b.bbox.y + b.bbox.height / 2) / band);
    if (ra !== rb) return ra - rb;
    const dx = a.bbox.x - b.bbox.x;
    if (dx !== 0) return dx;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  });
}

/** Next (+1) or previous (-1) index, wrapping; from "nothing selected" (-1) next is 0 and previous is the last. */
export function stepIndex(current: number, count: number, dir: 1 | -1): number {
  if (count <= 0) return -1;
  if (current < 0 || current >= count) return dir === 1 ? 0 : count - 1;
  return (current + dir + count) % count;
}

/** How a change region sits in the overlay's frame (the image spans 0..width × 0..height). */
export interface FramedRegion {
  /** The part of the region inside the frame, or null when none of it is. */
  inFrame: BBox | null;
  /** 'inside': wholly in the frame; 'partial': continues beyond it; 'outside': wholly beyond it. */
  fit: 'inside' | 'partial' | 'outside';
}

/**
 * Change regions are found on the whole sheet and reported whole by one overlay, so a change
 * straddling the block's box (or near no block at all) reaches beyond the overlay image. The
 * viewer draws and zooms to the part inside the image and says that the rest lies outside,
 * instead of outlining blank canvas.
 */
export function frameRegion(bbox: BBox, frame: { width: number; height: number }): FramedRegion {
  const x0 = Math.max(0, bbox.x);
  const y0 = Math.max(0, bbox.y);
  const x1 = Math.min(frame.width, bbox.x + bbox.width);
  const y1 = Math.min(frame.height, bbox.y + bbox.height);
  if (x1 <= x0 || y1 <= y0) return { inFrame: null, fit: 'outside' };
  const inside =
    bbox.x >= 0 &&
    bbox.y >= 0 &&
    bbox.x + bbox.width <= frame.width &&
    bbox.y + bbox.height <= frame.height;
  return {
    inFrame: inside ? bbox : { x: x0, y: y0, width: x1 - x0, height: y1 - y0 },
    fit: inside ? 'inside' : 'partial',
  };
}
