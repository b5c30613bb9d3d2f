// splitFills' loops (fill-kernels.ts) against per-pixel / per-cell references written the plain way:
// random images with tone patches of every kind of tone (light tones split from the masks with either
// line plane, darker tones read pixel by pixel), word- and non-word-aligned windows and windows across
// the image's edge.
import { describe, expect, it } from 'vitest';
import { packInk, type PixelWindow } from './diff';
import {
  candidateCells,
  cellMediansInside,
  rewriteTonedCells,
  type ToneRules,
} from './fill-kernels';
import type { GreyImage } from '../types';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Paper with patches of tone (some with noise and darker lines over them), some lines. */
function toneImage(w: number, h: number, seed: number): GreyImage {
  const r = rng(seed);
  const data = new Uint8Array(w * h).fill(255);
  for (let p = 0; p < 40; p++) {
    const x0 = Math.floor(r() * w),
      y0 = Math.floor(r() * h);
    const pw = 8 + Math.floor(r() * 60),
      ph = 8 + Math.floor(r() * 60);
    const t = Math.floor(r() * 250);
    const noisy = r() < 0.5;
    for (let y = y0; y < Math.min(h, y0 + ph); y++)
      for (let x = x0; x < Math.min(w, x0 + pw); x++)
        data[y * w + x] = noisy ? Math.max(0, Math.min(255, t + Math.floor(r() * 24) - 12)) : t;
  }
  for (let l = 0; l < 30; l++) {
    const y = Math.floor(r() * h),
      x0 = Math.floor(r() * w),
      v = Math.floor(r() * 200);
    for (let x = x0; x < Math.min(w, x0 + 50); x++) data[y * w + x] = v;
  }
  return { width: w, height: h, data };
}

function rules(inkT: number, weakT: number): ToneRules {
  const r = { mode: new Uint8Array(256), strongT: new Int16Array(256), weakT: new Int16Array(256) };
  for (let t = 0; t < 256; t++) {
    r.strongT[t] = Math.min(inkT, t - Math.max(16, Math.round(0.3 * t)));
    r.weakT[t] = Math.min(weakT, t - Math.max(8, Math.round(0.1 * t)));
    if (t >= 176 && inkT + 16 <= t)
      r.mode[t] = t - Math.max(8, Math.round(0.1 * t)) >= weakT ? 2 : 1;
  }
  return r;
}

const bit = (m: Uint32Array, stride: number, x: number, y: number) =>
  (m[y * stride + (x >>> 5)]! >>> (x & 31)) & 1;
const setBit = (m: Uint32Array, stride: number, x: number, y: number, v: number) => {
  const i = y * stride + (x >>> 5);
  m[i] = v ? m[i]! | (1 << (x & 31)) : m[i]! & ~(1 << (x & 31));
};

describe('fill kernels', () => {
  it('candidateCells lists exactly the cells whose 64 pixels are all pale ink, in order', () => {
    for (const [w, h, seed] of [
      [200, 120, 1],
      [161, 97, 2],
      [64, 64, 3],
    ] as const) {
      const img = toneImage(w, h, seed);
      const m = packInk(img, 160, 208, 240);
      const cw = w >>> 3,
        ch = h >>> 3;
      const want: number[] = [];
      for (let cy = 0; cy < ch; cy++)
        for (let cx = 0; cx < cw; cx++) {
          let all = true;
          for (let y = 0; y < 8 && all; y++)
            for (let x = 0; x < 8; x++)
              if (!bit(m.pale, m.stride, cx * 8 + x, cy * 8 + y)) {
                all = false;
                break;
              }
          if (all) want.push(cy * cw + cx);
        }
      expect(want.length).toBeGreaterThan(10);
      expect([...candidateCells(m.pale, m.stride, cw, ch)]).toEqual(want);
    }
  });

  it('cellMediansInside gives the median bin of the 16 sampled pixels of each cell', () => {
    const img = toneImage(203, 131, 4);
    const wx = 3,
      wy = 2;
    const cw = 24,
      ch = 15;
    const cand = Int32Array.from({ length: cw * ch }, (_, i) => i);
    const median = new Uint8Array(cw * ch);
    cellMediansInside(img.data, img.width, wx, wy, cw, cand, median, 0);
    let flat = 0,
      mixed = 0;
    for (let c = 0; c < cw * ch; c++) {
      const cx = c % cw,
        cy = (c / cw) | 0;
      const v: number[] = [];
      for (let r = 1; r < 8; r += 2)
        for (let i = 1; i < 8; i += 2)
          v.push(img.data[(wy + cy * 8 + r) * img.width + wx + cx * 8 + i]! >>> 3);
      v.sort((a, b) => a - b);
      if (v[0] === v[15]) flat++;
      else mixed++;
      expect(median[c]).toBe(v[7]! * 8 + 4);
    }
    // Both paths ran.
    expect(flat).toBeGreaterThan(10);
    expect(mixed).toBeGreaterThan(10);
    // A cell whose median is below `black` keeps 0.
    const m2 = new Uint8Array(cw * ch);
    cellMediansInside(img.data, img.width, wx, wy, cw, cand, m2, 256);
    expect(m2.every((v) => v === 0)).toBe(true);
  });

  const cases: [string, number, number, PixelWindow | undefined][] = [
    ['aligned rows, whole image', 256, 136, undefined],
    ['a window off the 4-byte grid', 203, 141, { x: 5, y: 3, width: 180, height: 128 }],
    ['a window across the image edge', 160, 100, { x: -6, y: -5, width: 170, height: 112 }],
  ];
  for (const [name, w, h, win] of cases) {
    it(`rewriteTonedCells splits line work and fill per pixel as the tone's rule says: ${name}`, () => {
      const img = toneImage(w, h, w + h);
      const inkT = 160,
        weakT = 208,
        paleT = 240;
      const m = packInk(img, inkT, weakT, paleT, win);
      const { stride } = m;
      const cw = m.width >>> 3,
        ch = m.height >>> 3;
      const r = rng(99);
      const tones = new Uint16Array(cw * ch).fill(256);
      // Every tone from 0 to 255 on some cells; the rest not toned.
      for (let c = 0; c < cw * ch; c++) if (r() < 0.6) tones[c] = Math.floor(r() * 256);
      const tr = rules(inkT, weakT);
      expect(new Set(tr.mode).size).toBe(3);
      const wx = win ? Math.round(win.x) : 0,
        wy = win ? Math.round(win.y) : 0;
      const inside = wx >= 0 && wy >= 0 && wx + cw * 8 <= w && wy + ch * 8 <= h;
      const aligned = inside && (w & 3) === 0 && (wx & 3) === 0;
      // Reference, pixel by pixel.
      const ref = {
        strong: m.strong.slice(),
        weak: m.weak.slice(),
        pale: m.pale.slice(),
        fill: new Uint32Array(m.weak.length),
      };
      let refPx = 0;
      for (let c = 0; c < cw * ch; c++) {
        const t = tones[c]!;
        if (t === 256) continue;
        const cx = c % cw,
          cy = (c / cw) | 0;
        for (let y = cy * 8; y < cy * 8 + 8; y++)
          for (let x = cx * 8; x < cx * 8 + 8; x++) {
            const pale = bit(m.pale, stride, x, y);
            let line: number, strong: number, fill: number;
            if (tr.mode[t] === 1 || tr.mode[t] === 2) {
              line = bit(tr.mode[t] === 2 ? m.weak : m.strong, stride, x, y);
              strong = bit(m.strong, stride, x, y);
              fill = pale & (line ^ 1);
            } else {
              const sx = wx + x,
                sy = wy + y;
              const v = sx < 0 || sy < 0 || sx >= w || sy >= h ? 255 : img.data[sy * w + sx]!;
              line = v < tr.weakT[t]! ? 1 : 0;
              strong = line && v < tr.strongT[t]! ? 1 : 0;
              // The aligned path takes the fill from the pale plane, the others from the pixel.
              fill = line ? 0 : aligned ? pale : v < paleT ? 1 : 0;
            }
            setBit(ref.strong, stride, x, y, strong);
            setBit(ref.weak, stride, x, y, line);
            setBit(ref.pale, stride, x, y, line);
            setBit(ref.fill, stride, x, y, fill);
            refPx += fill;
          }
      }
      const fill = new Uint32Array(m.weak.length);
      const px = rewriteTonedCells(
        {
          strong: m.strong,
          weak: m.weak,
          pale: m.pale,
          fill,
          stride,
          cw,
          ch,
          rules: tr,
          data: img.data,
          IW: w,
          IH: h,
          wx,
          wy,
          inside,
          aligned,
          paleThreshold: paleT,
        },
        tones,
      );
      expect(refPx).toBeGreaterThan(100);
      expect(px).toBe(refPx);
      expect(m.strong).toEqual(ref.strong);
      expect(m.weak).toEqual(ref.weak);
      expect(m.pale).toEqual(ref.pale);
      expect(fill).toEqual(ref.fill);
    });
  }
});
