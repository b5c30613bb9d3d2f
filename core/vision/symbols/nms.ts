// Non-maximum suppression of symbol matches: one detection per symbol instance. Boxes are in the
// target's pixels (origin top-left).
import type { BBox } from '../types';

export interface Scored {
  label: string;
  bbox: BBox;
  confidence: number;
}

export function iou(a: BBox, b: BBox): number {
  const x0 = Math.max(a.x, b.x);
  const y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.width, b.x + b.width);
  const y1 = Math.min(a.y + a.height, b.y + b.height);
  const inter = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 ? inter / union : 0;
}

function centreInside(a: BBox, b: BBox): boolean {
  const cx = a.x + a.width / 2;
  const cy = a.y + a.height / 2;
  return cx >= b.x && cx < b.x + b.width && cy >= b.y && cy < b.y + b.height;
}

export interface NmsOptions {
  /** Same label: suppress when IoU exceeds this, or when either box's centre lies inside the other. Default 0.3. */
  sameLabelIou?: number;
  /** Different labels: suppress the weaker only when the boxes nearly coincide (IoU above this). Default 0.6. */
  crossLabelIou?: number;
}

/**
 * Greedy NMS: strongest first (ties: smaller y, then x, so the result does not depend on input
 * order); a match is dropped when it overlaps one already kept as described in NmsOptions.
 */
export function nms<T extends Scored>(items: readonly T[], opts: NmsOptions = {}): T[] {
  const same = opts.sameLabelIou ?? 0.3;
  const cross = opts.crossLabelIou ?? 0.6;
  const sorted = [...items].sort(
    (a, b) => b.confidence - a.confidence || a.bbox.y - b.bbox.y || a.bbox.x - b.bbox.x,
  );
  const kept: T[] = [];
  for (const m of sorted) {
    let drop = false;
    for (const k of kept) {
      const o = iou(m.bbox, k.bbox);
      if (
        k.label === m.label
          ? o > same || centreInside(m.bbox, k.bbox) || centreInside(k.bbox, m.bbox)
          : o > cross
      ) {
        drop = true;
        break;
      }
    }
    if (!drop) kept.push(m);
  }
  return kept;
}
