// Text items → lines. PDF text arrives in runs of any length (a whole title, a word, or single
// glyphs), so everything in this folder first merges items into lines by geometry. All boxes are in
// sheet pixels, origin top-left.

import type { BBox, TextItem } from '../types';

export interface TextLine {
  text: string;
  /** Axis-aligned box on the sheet (sheet pixels). */
  bbox: BBox;
  /** Median font size of its items (sheet pixels). */
  fontSize: number;
  /** Reading direction: 0 = left to right, 90 = bottom to top, 270 = top to bottom (degrees). */
  angle: 0 | 90 | 270;
  items: TextItem[];
}

/** Item box expressed in the line's reading frame: u along the text, v across (down = +v). */
interface Framed {
  item: TextItem;
  u0: number;
  u1: number;
  v0: number;
  v1: number;
}

function toFrame(it: TextItem, angle: 0 | 90 | 270): Framed {
  if (angle === 0)
    return { item: it, u0: it.x, u1: it.x + it.width, v0: it.y, v1: it.y + it.height };
  // Reading bottom to top: "along" is −y, "down" (towards the glyph baseline side) is +x.
  if (angle === 90)
    return { item: it, u0: -(it.y + it.height), u1: -it.y, v0: it.x, v1: it.x + it.width };
  // Reading top to bottom: along is +y, down is −x.
  return { item: it, u0: it.y, u1: it.y + it.height, v0: -(it.x + it.width), v1: -it.x };
}

function quantizeAngle(a: number): 0 | 90 | 270 | null {
  const n = ((a % 360) + 360) % 360;
  if (n <= 5 || n >= 355) return 0;
  if (Math.abs(n - 90) <= 5) return 90;
  if (Math.abs(n - 270) <= 5) return 270;
  return null;
}

export function median(values: number[]): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

export function union(a: BBox, b: BBox): BBox {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return {
    x,
    y,
    width: Math.max(a.x + a.width, b.x + b.width) - x,
    height: Math.max(a.y + a.height, b.y + b.height) - y,
  };
}

export function contains(outer: BBox, x: number, y: number): boolean {
  return x >= outer.x && x <= outer.x + outer.width && y >= outer.y && y <= outer.y + outer.height;
}

export function centerOf(b: BBox): { x: number; y: number } {
  return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
}

/** Fraction of `a`'s area that lies inside `b`. */
export function overlapFraction(a: BBox, b: BBox): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (w <= 0 || h <= 0) return 0;
  return (w * h) / Math.max(1e-9, a.width * a.height);
}

/**
 * Merges items into lines: same reading direction, overlapping vertically by at least half the
 * smaller height, similar font size, and a horizontal gap under `maxGapEm` font sizes. Items that
 * lie inside an already merged item and repeat its text (some PDFs draw a glyph twice) are dropped.
 * Items at other angles (e.g. 45° callouts) become one-item lines of their own, angle 0.
 */
export function buildLines(items: TextItem[], maxGapEm = 0.9): TextLine[] {
  const lines: TextLine[] = [];
  const byAngle = new Map<0 | 90 | 270, Framed[]>();
  for (const it of items) {
    if (it.text.trim() === '') continue;
    const a = quantizeAngle(it.angle);
    if (a === null) continue;
    const list = byAngle.get(a) ?? [];
    list.push(toFrame(it, a));
    byAngle.set(a, list);
  }
  for (const [angle, framed] of byAngle) {
    framed.sort((p, q) => p.u0 - q.u0);
    // Greedy grouping: each open line keeps its v-span, font size and right end.
    const open: { parts: Framed[]; v0: number; v1: number; fs: number; uEnd: number }[] = [];
    for (const f of framed) {
      const fs = f.item.fontSize;
      let best = -1;
      let bestGap = Infinity;
      for (let i = 0; i < open.length; i++) {
        const l = open[i] as (typeof open)[number];
        const ratio = fs / l.fs;
        if (ratio < 0.7 || ratio > 1.43) continue;
        const ov = Math.min(l.v1, f.v1) - Math.max(l.v0, f.v0);
        if (ov < 0.5 * Math.min(l.v1 - l.v0, f.v1 - f.v0)) continue;
        const gap = f.u0 - l.uEnd;
        if (gap > maxGapEm * Math.max(fs, l.fs)) continue;
        if (gap < -0.5 * (f.u1 - f.u0) - 0.5 * fs) {
          // Largely overlapping an earlier run: a duplicate glyph drawn over the same text.
          const joined = l.parts.map((p) => p.item.text).join('');
          if (joined.includes(f.item.text.trim())) {
            best = -2;
            break;
          }
        }
        if (Math.abs(gap) < bestGap) {
          bestGap = Math.abs(gap);
          best = i;
        }
      }
      if (best === -2) continue;
      if (best >= 0) {
        const l = open[best] as (typeof open)[number];
        l.parts.push(f);
        l.v0 = Math.min(l.v0, f.v0);
        l.v1 = Math.max(l.v1, f.v1);
        l.uEnd = Math.max(l.uEnd, f.u1);
      } else {
        open.push({ parts: [f], v0: f.v0, v1: f.v1, fs, uEnd: f.u1 });
      }
    }
    for (const l of open) {
      let text = '';
      let prevEnd = -Infinity;
      for (const p of l.parts) {
        const gap = p.u0 - prevEnd;
        const t = p.item.text;
        if (
          text !== '' &&
          gap > 0.15 * p.item.fontSize &&
          !text.endsWith(' ') &&
          !t.startsWith(' ')
        )
          text += ' ';
        text += t;
        prevEnd = Math.max(prevEnd, p.u1);
      }
      let bbox: BBox | null = null;
      for (const p of l.parts) {
        const b = { x: p.item.x, y: p.item.y, width: p.item.width, height: p.item.height };
        bbox = bbox ? union(bbox, b) : b;
      }
      lines.push({
        text: text.replace(/\s+/g, ' ').trim(),
        bbox: bbox as BBox,
        fontSize: median(l.parts.map((p) => p.item.fontSize)),
        angle,
        items: l.parts.map((p) => p.item),
      });
    }
  }
  return lines.filter((l) => l.text !== '');
}
