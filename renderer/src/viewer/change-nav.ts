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
