import { describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import {
  blankImage,
  drawGlyphs,
  drawLine,
  fillRect,
  rng,
  strokeRect,
} from '../compare/test-support';
import {
  chooseFactors,
  DEFAULT_THRESHOLD,
  flattenPaper,
  matchSymbols,
  type SymbolMatch,
} from './match';
import { iou, nms } from './nms';
import { inkOf, rotatePlane, type Rotation } from './variants';

// Synthetic sheets: a section-marker-like symbol (ring, filled flag, a bar and a dot so that every
// 90° rotation looks different) stamped at known centres, rotations and scales, among look-alike
// distractors (plain rings, rings with the flag on a bar-less symbol are NOT used: they would be
// true matches), text-like scribbles, lines and speckle noise.

/** Inside the symbol at local point (u, v) (pixels at scale 1, centre of the ring at 0,0). */
function insideSymbol(u: number, v: number): boolean {
  const r = Math.hypot(u, v);
  if (r >= 25.5 && r <= 29) return true; // ring
  // Flag: triangle (20,-30) (48,0) (20,30), outside the ring.
  if (u >= 20 && u <= 48 && Math.abs(v) <= 30 * (1 - (u - 20) / 28) && r > 29) return true;
  if (u >= -14 && u <= 8 && v >= -6 && v <= -2) return true; // bar
  if (Math.hypot(u + 9, v - 11) <= 4) return true; // dot
  return false;
}

/** Draws the symbol centred at (cx, cy), turned `rot` degrees clockwise on the page (y down), scaled by s. */
function stamp(img: GreyImage, cx: number, cy: number, rot: Rotation, s = 1, ink = 0): void {
  const R = 52 * s;
  for (let y = Math.floor(cy - R); y <= Math.ceil(cy + R); y++) {
    for (let x = Math.floor(cx - R); x <= Math.ceil(cx + R); x++) {
      if (x < 0 || y < 0 || x >= img.width || y >= img.height) continue;
      // Inverse of the clockwise rotation: page offset (dx, dy) → local (u, v).
      const dx = (x + 0.5 - cx) / s;
      const dy = (y + 0.5 - cy) / s;
      let u: number, v: number;
      if (rot === 0) [u, v] = [dx, dy];
      else if (rot === 90) [u, v] = [dy, -dx];
      else if (rot === 180) [u, v] = [-dx, -dy];
      else [u, v] = [-dy, dx];
      if (insideSymbol(u, v)) img.data[y * img.width + x] = ink;
    }
  }
}

function ring(img: GreyImage, cx: number, cy: number, r0: number, r1: number): void {
  for (let y = Math.floor(cy - r1); y <= cy + r1; y++)
    for (let x = Math.floor(cx - r1); x <= cx + r1; x++) {
      const r = Math.hypot(x + 0.5 - cx, y + 0.5 - cy);
      if (r >= r0 && r <= r1 && x >= 0 && y >= 0 && x < img.width && y < img.height)
        img.data[y * img.width + x] = 0;
    }
}

function crop(img: GreyImage, x: number, y: number, w: number, h: number): GreyImage {
  const out = new Uint8Array(w * h);
  for (let r = 0; r < h; r++)
    out.set(img.data.subarray((y + r) * img.width + x, (y + r) * img.width + x + w), r * w);
  return { width: w, height: h, data: out };
}

/** The template: the symbol at rotation 0, scale 1, cut from a small clean sheet with a margin. */
function template(): GreyImage {
  const img = blankImage(140, 100);
  stamp(img, 50, 50, 0);
  return crop(img, 12, 12, 92, 76); // u ∈ [−38, 54), v ∈ [−38, 38)
}

interface Truth {
  x: number;
  y: number;
  rot: Rotation;
  s: number;
}

function centre(m: SymbolMatch): { x: number; y: number } {
  return { x: m.bbox.x + m.bbox.width / 2, y: m.bbox.y + m.bbox.height / 2 };
}

/** Matches a detection to a truth when their symbol centres are within `tol` px (ring centre vs box centre offset handled by the caller). */
function score(matches: SymbolMatch[], truth: Truth[], tol: number) {
  const used = new Set<number>();
  let tp = 0;
  const wrongRotation: Truth[] = [];
  for (const t of truth) {
    // The template box centre sits 8 px right of the ring centre at rotation 0 (u range −38..54): turn that offset too.
    const off = { 0: [8, 0], 90: [0, 8], 180: [-8, 0], 270: [0, -8] }[t.rot];
    const ex = t.x + off[0]! * t.s;
    const ey = t.y + off[1]! * t.s;
    const i = matches.findIndex(
      (m, k) => !used.has(k) && Math.hypot(centre(m).x - ex, centre(m).y - ey) <= tol,
    );
    if (i >= 0) {
      used.add(i);
      tp++;
      if (matches[i]!.rotation !== t.rot) wrongRotation.push(t);
    }
  }
  return { tp, fp: matches.length - used.size, fn: truth.length - tp, wrongRotation };
}

describe('symbol matcher on synthetic sheets', () => {
  it('finds every instance at each rotation and at ±8 % scale among distractors and noise, with no false positives', () => {
    const rand = rng(7);
    const img = blankImage(1800, 1200);
    const truth: Truth[] = [];
    const rots: Rotation[] = [0, 90, 180, 270];
    const scales = [1, 0.92, 1.08];
    let k = 0;
    for (let gy = 0; gy < 4; gy++) {
      for (let gx = 0; gx < 6; gx++) {
        const x = 150 + gx * 280 + Math.round(rand() * 30);
        const y = 140 + gy * 280 + Math.round(rand() * 30);
        if ((gx + gy) % 3 === 2) {
          // Distractors: a plain ring of the same size, a ring with text, a box with a diagonal.
          if (gx % 2 === 0) {
            ring(img, x, y, 25.5, 29);
            drawGlyphs(img, x - 16, y - 8, 32, 14, rand, 2);
          } else {
            strokeRect(img, x - 30, y - 30, 60, 60, 3);
            drawLine(img, x - 30, y - 30, x + 30, y + 30, 3);
          }
          continue;
        }
        const rot = rots[k % 4]!;
        const s = scales[Math.floor(k / 4) % 3]!;
        k++;
        stamp(img, x, y, rot, s);
        truth.push({ x, y, rot, s });
        // Clutter touching the symbol: a leader line and some "text" beside it.
        drawLine(img, x - 120, y + 70, x - 40, y + 70, 2);
        drawGlyphs(img, x - 110, y + 80, 70, 16, rand, 2);
      }
    }
    // Long lines crossing the sheet and speckle noise.
    for (let i = 0; i < 6; i++) drawLine(img, 0, 60 + i * 200, 1800, 80 + i * 200, 2);
    for (let i = 0; i < 6000; i++) {
      const p = Math.floor(rand() * img.data.length);
      img.data[p] = Math.floor(rand() * 256);
    }
    expect(truth.length).toBe(16);

    const { matches, stats } = matchSymbols(img, [{ label: 'marker', image: template() }]);
    const r = score(matches, truth, 5);
    expect(r.fn, JSON.stringify({ r, stats, matches })).toBe(0);
    expect(r.fp).toBe(0);
    expect(r.wrongRotation).toEqual([]);
    for (const m of matches) {
      expect(m.label).toBe('marker');
      expect(m.confidence).toBeGreaterThanOrEqual(DEFAULT_THRESHOLD);
      expect(m.confidence).toBeLessThanOrEqual(1);
    }
    // Scales are recovered to the 0.05 grid.
    for (const t of truth) {
      const m = matches.find((q) => Math.hypot(centre(q).x - t.x, centre(q).y - t.y) < 20)!;
      expect(Math.abs(m.scale - t.s)).toBeLessThanOrEqual(0.051);
    }
    // The coarse stage pruned: far fewer candidates refined than windows scanned.
    expect(stats.templates[0]!.candidates).toBeLessThan(stats.templates[0]!.windows / 50);
  });

  it('restricts rotations when asked and respects the threshold', () => {
    const img = blankImage(800, 400);
    stamp(img, 150, 200, 0);
    stamp(img, 400, 200, 90);
    stamp(img, 650, 200, 180);
    const only0 = matchSymbols(img, [{ label: 'm', image: template() }], { rotations: [0] });
    expect(only0.matches.map((m) => m.rotation)).toEqual([0]);
    const all = matchSymbols(img, [{ label: 'm', image: template() }]);
    expect(all.matches.map((m) => m.rotation).sort()).toEqual([0, 180, 90].sort());
    // An impossible threshold finds nothing; exact copies score ~1.
    expect(
      matchSymbols(img, [{ label: 'm', image: template() }], { threshold: 1.01 }).matches,
    ).toEqual([]);
    for (const m of all.matches) expect(m.confidence).toBeGreaterThan(0.95);
  });

  it('sees a symbol on a light tint (paper level) and labels two templates separately', () => {
    const img = blankImage(900, 500);
    fillRect(img, 0, 0, 450, 500, 225); // light hatch fill behind the first symbol
    // CAD markers mask what is behind them: the ring's inside is paper white, the tint shows around it.
    for (let y = 220; y <= 280; y++)
      for (let x = 190; x <= 250; x++)
        if (Math.hypot(x + 0.5 - 220, y + 0.5 - 250) < 25.5) img.data[y * 900 + x] = 255;
    stamp(img, 220, 250, 0, 1, 60);
    // A second, different symbol: a filled square with a hole.
    fillRect(img, 620, 210, 80, 80, 0);
    fillRect(img, 640, 230, 40, 40, 255);
    const sq = blankImage(120, 120);
    fillRect(sq, 20, 20, 80, 80, 0);
    fillRect(sq, 40, 40, 40, 40, 255);
    const { matches } = matchSymbols(img, [
      { label: 'marker', image: template() },
      { label: 'square', image: crop(sq, 10, 10, 100, 100) },
    ]);
    const marker = matches.filter((m) => m.label === 'marker');
    const square = matches.filter((m) => m.label === 'square');
    expect(marker.length).toBe(1);
    expect(square.length).toBe(1);
    expect(Math.hypot(centre(square[0]!).x - 660, centre(square[0]!).y - 250)).toBeLessThan(3);
    // Without the paper level the tint dilutes the marker's score.
    const tinted = matchSymbols(img, [{ label: 'marker', image: template() }], {
      paperLevel: 255,
      threshold: 0,
    });
    const best = Math.max(...tinted.matches.map((m) => m.confidence));
    expect(marker[0]!.confidence).toBeGreaterThan(best);
  });

  it('scans a 34x22 in sheet at 200 dpi (30 MP) within seconds', () => {
    const img = blankImage(6800, 4400);
    const rand = rng(3);
    for (let i = 0; i < 400; i++) drawGlyphs(img, rand() * 6500, rand() * 4200, 200, 20, rand, 2);
    for (let i = 0; i < 60; i++)
      drawLine(img, rand() * 6800, rand() * 4400, rand() * 6800, rand() * 4400, 3);
    const truth: Truth[] = [];
    for (let i = 0; i < 12; i++) {
      const t: Truth = {
        x: 300 + i * 520,
        y: 500 + (i % 3) * 1400,
        rot: ([0, 90, 180, 270] as const)[i % 4]!,
        s: 1,
      };
      stamp(img, t.x, t.y, t.rot);
      truth.push(t);
    }
    // A template cut from a 200 dpi sheet is about this big (a 0.65 in marker).
    const big = blankImage(280, 200);
    stamp(big, 100, 100, 0, 1.6);
    const tplBig = crop(big, 100 - 61, 100 - 61, 148, 122);
    const bigImg = blankImage(6800, 4400);
    bigImg.data.set(img.data);
    for (const t of truth) stamp(bigImg, t.x, t.y + 200, t.rot, 1.6);
    const t0 = performance.now();
    const { matches, stats } = matchSymbols(bigImg, [{ label: 'big', image: tplBig }]);
    const ms = performance.now() - t0;
    console.log(`30 MP sheet, 148x122 template: ${Math.round(ms)} ms`, JSON.stringify(stats));
    expect(stats.templates[0]!.coarseFactor).toBe(8);
    expect(matches.length).toBe(12);
    expect(ms).toBeLessThan(30_000);
  });
});

describe('rotation convention and NMS', () => {
  it('rotates clockwise on the page: the top edge becomes the right edge', () => {
    const g = blankImage(3, 2);
    g.data[0] = 0; // top-left pixel
    const r = rotatePlane(inkOf(g), 90);
    expect([r.width, r.height]).toEqual([2, 3]);
    expect(r.data[0 * 2 + 1]).toBe(255); // now top-right
  });

  it('keeps the strongest of overlapping same-label boxes and both of different labels unless they coincide', () => {
    const b = (x: number, y: number, label = 'a', confidence = 0.8) => ({
      label,
      confidence,
      bbox: { x, y, width: 100, height: 100 },
    });
    const kept = nms([
      b(0, 0, 'a', 0.7),
      b(10, 10, 'a', 0.9),
      b(300, 0, 'a', 0.75),
      b(60, 60, 'a', 0.8),
      b(2, 2, 'b', 0.95),
      b(150, 150, 'b', 0.6),
    ]);
    // b(2,2) wins; a(10,10) nearly coincides with it (IoU 0.73 > 0.6) and goes although its label
    // differs; a(0,0) likewise (IoU 0.92); a(60,60) overlaps nothing much and stays.
    expect(kept.map((k) => [k.label, k.bbox.x, k.bbox.y])).toEqual([
      ['b', 2, 2],
      ['a', 60, 60],
      ['a', 300, 0],
      ['b', 150, 150],
    ]);
    // Same label: a centre inside a stronger box suppresses even at low IoU.
    const same = nms([b(0, 0, 'a', 0.9), b(45, 45, 'a', 0.8)]);
    expect(same.length).toBe(1);
    expect(iou(b(0, 0).bbox, b(50, 0).bbox)).toBeCloseTo(1 / 3, 6);
  });

  it('picks coarse factors from the template size', () => {
    expect(chooseFactors(140, 165, 30e6)).toEqual({ fc: 8, ff: 2 });
    expect(chooseFactors(60, 40, 30e6)).toEqual({ fc: 4, ff: 1 });
    expect(chooseFactors(20, 20, 1e6)).toEqual({ fc: 1, ff: 1 });
    expect(chooseFactors(20, 20, 30e6)).toEqual({ fc: 2, ff: 1 });
  });

  it('flattens light tints to paper and keeps black black', () => {
    const g: GreyImage = { width: 3, height: 1, data: Uint8Array.from([0, 225, 240]) };
    expect(Array.from(flattenPaper(g, 230).data)).toEqual([0, 249, 255]);
  });
});
