/**
 * Random sheet pairs for the rule tests that check a rewritten rule against its reference (pen-pass,
 * speck-runs): tones, strokes and dots, a twin with lighter and extra dots, and the diff the rules see.
 */
import type { GreyImage } from '../types';
import { coverage, diffMasks, packInk, type DiffResult, type PixelWindow } from './diff';
import { splitFills, styleMasks } from './layers';
import { blankImage as sheet, fillRect as rect } from './test-support';

/** A sheet of tones, strokes and dots; `twin` draws most of `base`'s dots again, some lighter. */
export function randomSheet(w: number, h: number, r: () => number): GreyImage {
  const img = sheet(w, h);
  for (let i = 0; i < 3; i++)
    rect(
      img,
      (r() * w) | 0,
      (r() * h) | 0,
      (r() * w * 0.5) | 0,
      (r() * h * 0.5) | 0,
      170 + ((r() * 40) | 0),
    );
  for (let i = 0; i < 25; i++) {
    const long = r() < 0.5;
    rect(
      img,
      (r() * w) | 0,
      (r() * h) | 0,
      long ? (r() * 60) | 0 : 1 + ((r() * 3) | 0),
      long ? 1 + ((r() * 3) | 0) : (r() * 60) | 0,
      (r() * 120) | 0,
    );
  }
  for (let i = 0; i < 300; i++)
    rect(
      img,
      (r() * w) | 0,
      (r() * h) | 0,
      1 + ((r() * 3) | 0),
      1 + ((r() * 3) | 0),
      (r() * 200) | 0,
    );
  return img;
}
export function twin(base: GreyImage, r: () => number): GreyImage {
  const img = { ...base, data: Uint8Array.from(base.data) };
  for (let i = 0; i < img.data.length; i++) {
    const v = img.data[i]!;
    if (v < 200 && r() < 0.02) img.data[i] = Math.min(255, v + 60 + ((r() * 100) | 0));
  }
  for (let i = 0; i < 200; i++)
    rect(
      img,
      (r() * img.width) | 0,
      (r() * img.height) | 0,
      1 + ((r() * 2) | 0),
      1 + ((r() * 2) | 0),
      (r() * 220) | 0,
    );
  return img;
}

/** A's pixels inside a window (0, 0 when none) as the diff's W x H frame sees them. */
export function crop(A: GreyImage, W: number, H: number, window?: PixelWindow): GreyImage {
  const c = sheet(W, H);
  const ox = window?.x ?? 0,
    oy = window?.y ?? 0;
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const ax = x + ox,
        ay = y + oy;
      if (ax >= 0 && ay >= 0 && ax < A.width && ay < A.height)
        c.data[y * W + x] = A.data[ay * A.width + ax]!;
    }
  return c;
}

export function diffOf(src: GreyImage, B: GreyImage): DiffResult {
  const W = B.width,
    H = B.height;
  const ma = packInk(src, 160, 208, 240),
    mb = packInk(B, 160, 208, 240);
  splitFills(src, ma, undefined, 160, 208, 240);
  splitFills(B, mb, undefined, 160, 208, 240);
  const d = diffMasks(ma, mb, coverage([1, 0, 0, 0, 1, 0], W, H, W, H));
  d.style = styleMasks(d);
  return d;
}

/**
 * Frames drawn in both issues with other pens, beside a grey pane both have (A202's window frames):
 * in A `wa` px wide and dark, in B `wb` px dark and, sometimes, a lighter band for the rest of A's
 * width. A is drawn through the window's offset.
 */
export function pens(A: GreyImage, B: GreyImage, ox: number, oy: number, r: () => number): void {
  for (let i = 0; i < 6; i++) {
    const x = (r() * B.width) | 0,
      y = (r() * B.height) | 0,
      long = 20 + ((r() * 60) | 0),
      wa = 2 + ((r() * 9) | 0),
      wb = 1 + ((r() * 3) | 0),
      band = r() < 0.7,
      across = r() < 0.5;
    const draw = (img: GreyImage, dx: number, dy: number, at: number, w: number, v: number) =>
      across
        ? rect(img, x + dx, y + dy + at, long, w, v)
        : rect(img, x + dx + at, y + dy, w, long, v);
    draw(A, ox, oy, wa, 40, 206);
    draw(B, 0, 0, wa, 40, 206);
    draw(A, ox, oy, 0, wa, (r() * 80) | 0);
    if (band) draw(B, 0, 0, 0, wa, 170 + ((r() * 30) | 0));
    draw(B, 0, 0, 0, wb, (r() * 80) | 0);
  }
}
