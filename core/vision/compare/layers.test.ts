import { describe, expect, it } from 'vitest';
import type { GreyImage } from '../types';
import { coverage, diffMasks, packInk, popcount32 } from './diff';
import {
  diffFills,
  fillInkStyle,
  keepHiddenImage,
  keepHiddenLineWork,
  keepLineWork,
  lineWorkGrey,
  objectClassGrey,
  objectLayers,
  OBJECT_GREY,
  penStyle,
  speckNoise,
  splitFills,
  styleMasks,
  takeBits,
} from './layers';
import { decodeGrey, encodeLineWorkPng } from './encode.adapter';

// Layers by image analysis (issue 17) on synthetic sheets with known content.

function sheet(w: number, h: number): GreyImage {
  return { width: w, height: h, data: new Uint8Array(w * h).fill(255) };
}
function rect(img: GreyImage, x: number, y: number, w: number, h: number, v: number): void {
  for (let yy = y; yy < y + h; yy++) img.data.fill(v, yy * img.width + x, yy * img.width + x + w);
}
const bit = (m: Uint32Array, stride: number, x: number, y: number) =>
  (m[y * stride + (x >> 5)]! >>> (x & 31)) & 1;
const count = (m: Uint32Array) => m.reduce((s, w) => s + popcount32(w), 0);

/** A tone (grey 150, 200x120) with black lines over it, a small dark square and a thick grey line. */
function drawing(tone = true): GreyImage {
  const img = sheet(400, 260);
  if (tone) rect(img, 40, 40, 200, 120, 150);
  rect(img, 40, 100, 200, 2, 0); // a line across the tone
  rect(img, 120, 40, 2, 120, 20); // another
  rect(img, 300, 60, 20, 20, 60); // a small filled square: line work
  rect(img, 260, 200, 120, 10, 120); // a thick grey line: line work
  return img;
}

describe('splitFills', () => {
  it('puts the tone in the fill layer and keeps the lines over it, small shapes and thick lines as line work', () => {
    const img = drawing();
    const m = packInk(img, 160, 208, 240);
    const f = splitFills(img, m, undefined, 160, 208, 240)!;
    expect(f).not.toBeNull();
    const s = m.stride;
    expect(bit(f.fill, s, 80, 60)).toBe(1); // tone
    expect(bit(m.strong, s, 80, 60)).toBe(0);
    expect(bit(m.weak, s, 80, 60)).toBe(0);
    expect(bit(m.strong, s, 80, 100)).toBe(1); // line over the tone
    expect(bit(f.fill, s, 80, 100)).toBe(0);
    expect(bit(m.strong, s, 121, 70)).toBe(1);
    expect(bit(m.strong, s, 310, 70)).toBe(1); // small square
    expect(bit(f.fill, s, 310, 70)).toBe(0);
    expect(bit(m.strong, s, 300, 205)).toBe(1); // thick grey line
    expect(bit(f.fill, s, 300, 205)).toBe(0);
    // The tone's edge pixels (not whole cells) are fill too, not line work.
    expect(bit(f.fill, s, 40, 45)).toBe(1);
    expect(bit(m.strong, s, 40, 45)).toBe(0);
    expect(bit(f.fill, s, 239, 159)).toBe(1);
  });

  it('gives the same masks on its word-wise and pixel-wise paths (aligned rows or not)', () => {
    const img = drawing();
    // The same drawing one pixel to the right in a wider image, read through a window: rows no longer
    // start on a 4-byte boundary, so the pixel-wise path runs.
    const wide = sheet(401, 260);
    for (let y = 0; y < 260; y++)
      wide.data.set(img.data.subarray(y * 400, y * 400 + 400), y * 401 + 1);
    const win = { x: 1, y: 0, width: 400, height: 260 };
    const a = packInk(img, 160, 208, 240);
    const b = packInk(wide, 160, 208, 240, win);
    const fa = splitFills(img, a, undefined, 160, 208, 240)!;
    const fb = splitFills(wide, b, win, 160, 208, 240)!;
    expect([...fb.fill]).toEqual([...fa.fill]);
    expect([...b.strong]).toEqual([...a.strong]);
    expect([...b.weak]).toEqual([...a.weak]);
    expect([...b.pale]).toEqual([...a.pale]);
  });

  it('returns null and leaves the masks alone on a sheet without fills', () => {
    const img = drawing(false);
    const m = packInk(img, 160, 208, 240);
    const before = [...m.strong];
    expect(splitFills(img, m, undefined, 160, 208, 240)).toBeNull();
    expect([...m.strong]).toEqual(before);
  });
});

describe('diffFills and styleMasks', () => {
  it('a removed tone is a fill change, not removed line work; a line drawn on a fill is added', () => {
    const A = drawing(true),
      B = drawing(false);
    rect(B, 60, 130, 30, 4, 0); // a new line where A had the tone
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(B, 160, 208, 240);
    const fa = splitFills(A, ma, undefined, 160, 208, 240);
    const fb = splitFills(B, mb, undefined, 160, 208, 240);
    const cover = coverage([1, 0, 0, 0, 1, 0], 400, 260, 400, 260);
    const d = diffMasks(ma, mb, cover);
    const fd = diffFills(fa?.fill ?? null, fb?.fill ?? null, ma, mb, cover);
    expect(d.stats.removed_px).toBe(0);
    expect(fd.removed_px).toBeGreaterThan(0.8 * 200 * 120);
    expect(fd.added_px).toBe(0);
    expect(d.stats.added_px).toBe(30 * 4);
  });

  it('a line printed lighter or thicker is a style change; a new line is not', () => {
    const A = sheet(200, 100),
      B = sheet(200, 100);
    rect(A, 10, 20, 150, 2, 0);
    rect(B, 10, 20, 150, 2, 225); // printed much lighter
    rect(A, 10, 60, 150, 2, 0);
    rect(B, 10, 59, 150, 5, 0); // thicker
    rect(B, 10, 85, 150, 2, 0); // new
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(B, 160, 208, 240);
    const d = diffMasks(ma, mb, coverage([1, 0, 0, 0, 1, 0], 200, 100, 200, 100));
    const st = styleMasks(d);
    expect(st.removed_px).toBe(d.stats.removed_px + d.faint.removed_px);
    expect(count(st.geomAdded)).toBe(150 * 2);
    expect(st.added_px).toBeGreaterThan(0);
  });
});

describe('fillInkStyle', () => {
  it('the same ink called line work on one side and fill on the other is style; a line removed from over a tone is not', () => {
    const A = sheet(400, 260),
      B = sheet(400, 260);
    // A tone in both issues; a line over it in A only (removed).
    rect(A, 40, 20, 200, 120, 150);
    rect(B, 40, 20, 200, 120, 150);
    rect(A, 60, 100, 150, 2, 0);
    // A hatched band: in A its lines (grey 60) print darker than the band (90): line work over a tone;
    // in B the band is darker (60) and its lines lighter (90): all of it tone.
    rect(A, 40, 170, 300, 60, 90);
    rect(B, 40, 170, 300, 60, 60);
    for (let x = 44; x < 336; x += 8) {
      rect(A, x, 170, 2, 60, 60);
      rect(B, x, 170, 2, 60, 90);
    }
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(B, 160, 208, 240);
    const fa = splitFills(A, ma, undefined, 160, 208, 240);
    const fb = splitFills(B, mb, undefined, 160, 208, 240);
    expect(fa && fb).toBeTruthy();
    const cover = coverage([1, 0, 0, 0, 1, 0], 400, 260, 400, 260);
    const d = diffMasks(ma, mb, cover);
    d.style = styleMasks(d);
    d.fills = { a: fa!.fill, b: fb!.fill, ...diffFills(fa!.fill, fb!.fill, ma, mb, cover) };
    const s = d.stride;
    const inBand = (m: Uint32Array) => {
      let n = 0;
      for (let y = 170; y < 230; y++) for (let x = 40; x < 340; x++) n += bit(m, s, x, y);
      return n;
    };
    // Before the rule the hatch lines of A are removed geometry.
    const hatchBefore = inBand(d.style.geomRemoved);
    expect(hatchBefore).toBeGreaterThan(1000);
    const moved = fillInkStyle(d, A, undefined, B);
    expect(moved).toBeGreaterThanOrEqual(hatchBefore);
    expect(inBand(d.style.geomRemoved)).toBe(0);
    expect(inBand(d.style.geomAdded)).toBe(0);
    // The line removed from over the tone is darker than the tone by a line's margin: geometry still.
    let line = 0;
    for (let x = 60; x < 210; x++)
      line += bit(d.style.geomRemoved, s, x, 100) + bit(d.style.geomRemoved, s, x, 101);
    expect(line).toBe(300);
    expect(d.style.removed_px).toBe(count(d.style.removed));
  });
});

describe('keepLineWork', () => {
  // A pen line barely darker than the tone it crosses (140 on 150): image analysis takes it for the
  // tone; the page's objects say it is line work.
  function penOverTone(): GreyImage {
    const img = sheet(400, 260);
    rect(img, 40, 40, 200, 120, 150);
    rect(img, 40, 70, 200, 2, 140);
    return img;
  }
  function lines(): GreyImage {
    const l = sheet(400, 260);
    rect(l, 40, 70, 200, 2, 0);
    return l;
  }

  it('gives the fill pixels on line work back to the line planes, by their grey', () => {
    const img = penOverTone();
    const m = packInk(img, 160, 208, 240);
    const f = splitFills(img, m, undefined, 160, 208, 240)!;
    const s = m.stride;
    expect(bit(f.fill, s, 100, 70)).toBe(1); // image analysis alone: the pen line is fill
    const px = f.px;
    const moved = keepLineWork(img, undefined, m, f, { image: lines() }, 160, 208, 240);
    expect(moved).toBe(400); // 200 x 2 px
    expect(f.px).toBe(px - 400);
    expect(bit(f.fill, s, 100, 70)).toBe(0);
    expect(bit(m.strong, s, 100, 70)).toBe(1); // 140 < 160
    expect(bit(m.weak, s, 100, 70)).toBe(1);
    expect(bit(f.fill, s, 100, 60)).toBe(1); // the tone stays fill
    expect(bit(m.weak, s, 100, 60)).toBe(0);
    expect(count(f.fill)).toBe(f.px);
  });

  it('reads the line-work image through the frame transform (a window of A, B scaled)', () => {
    // The masks are of A's window (20, 10, 300, 200); the line-work image is B's sheet drawn at 2x.
    const img = penOverTone();
    const win = { x: 20, y: 10, width: 300, height: 200 };
    const m = packInk(img, 160, 208, 240, win);
    const f = splitFills(img, m, win, 160, 208, 240)!;
    const big = sheet(800, 520);
    rect(big, 80, 140, 400, 4, 0);
    // window pixel (x, y) → sheet (x + 20, y + 10) → 2x.
    const moved = keepLineWork(
      img,
      win,
      m,
      f,
      { image: big, toImage: [2, 0, 40, 0, 2, 20] },
      160,
      208,
      240,
    );
    expect(moved).toBe(400);
    expect(bit(m.strong, m.stride, 100, 60)).toBe(1); // sheet (120, 70)
    expect(bit(f.fill, m.stride, 100, 60)).toBe(0);
  });
});

describe('objectLayers (fills and annotations by object)', () => {
  // A page whose objects say: a tone of the fill layer at 40..240 x 40..160 (OBJECT_GREY.fill), a
  // line across it (line work), and an annotation (a cloud's stroke) at 300..320 x 60..80.
  function classes(): GreyImage {
    const c = sheet(400, 260);
    rect(c, 40, 40, 200, 120, OBJECT_GREY.fill);
    rect(c, 240, 40, 40, 6, OBJECT_GREY.fill);
    rect(c, 40, 100, 200, 2, OBJECT_GREY.line);
    rect(c, 300, 60, 20, 20, OBJECT_GREY.annotation);
    return c;
  }
  // The page's pixels: a dark tone (grey 40) with a strip of it 6 px tall at 240..280 x 40..46 —
  // image analysis alone calls that thin strip line work; the objects say it is fill.
  function page(): GreyImage {
    const img = sheet(400, 260);
    rect(img, 40, 40, 200, 120, 40);
    rect(img, 240, 40, 40, 6, 40);
    rect(img, 40, 100, 200, 2, 0);
    rect(img, 300, 60, 20, 20, 60);
    return img;
  }

  it('moves ink on fills by object to the fill layer, keeps line work, and marks the annotations', () => {
    const img = page();
    const m = packInk(img, 160, 208, 240);
    const fill = splitFills(img, m, undefined, 160, 208, 240);
    expect(bit(m.strong, m.stride, 260, 42)).toBe(1); // image analysis: the strip is line work
    const out = objectLayers(m, fill, { image: classes() });
    expect(bit(out.fill!.fill, m.stride, 260, 42)).toBe(1); // by object: fill
    expect(bit(m.strong, m.stride, 260, 42)).toBe(0);
    expect(out.fill).not.toBeNull();
    const F = out.fill!.fill;
    expect(bit(F, m.stride, 100, 60)).toBe(1); // the tone
    expect(bit(m.strong, m.stride, 100, 60)).toBe(0);
    expect(bit(m.pale, m.stride, 100, 60)).toBe(0);
    expect(bit(F, m.stride, 100, 100)).toBe(0); // the line over it
    expect(bit(m.strong, m.stride, 100, 100)).toBe(1);
    // Every pixel of the tone but the line's is fill; the count is kept.
    expect(count(F)).toBe(200 * 120 - 200 * 2 + 40 * 6);
    expect(out.fill!.px).toBe(count(F));
    // The annotation stays line work, marked apart.
    expect(out.annotations).not.toBeNull();
    expect(out.annotation_px).toBe(400);
    expect(bit(out.annotations!, m.stride, 310, 70)).toBe(1);
    expect(bit(m.strong, m.stride, 310, 70)).toBe(1);
    expect(bit(out.annotations!, m.stride, 100, 100)).toBe(0);
  });

  it('makes a fill layer when image analysis found none, and reads the image through the frame transform', () => {
    // The page at half size (B on a sheet twice as large, reduced): each mask pixel is a 2x2 footprint.
    const img = page();
    const small = sheet(200, 130);
    for (let y = 0; y < 130; y++)
      for (let x = 0; x < 200; x++)
        small.data[y * 200 + x] = Math.min(
          img.data[2 * y * 400 + 2 * x]!,
          img.data[(2 * y + 1) * 400 + 2 * x]!,
          img.data[2 * y * 400 + 2 * x + 1]!,
          img.data[(2 * y + 1) * 400 + 2 * x + 1]!,
        );
    const m = packInk(small, 160, 208, 240);
    const out = objectLayers(m, null, { image: classes(), toImage: [2, 0, 0, 0, 2, 0] });
    const F = out.fill!.fill;
    expect(bit(F, m.stride, 50, 30)).toBe(1);
    expect(bit(F, m.stride, 50, 50)).toBe(0); // the line's footprint: line work first
    expect(bit(m.strong, m.stride, 50, 50)).toBe(1);
    expect(bit(out.annotations!, m.stride, 155, 35)).toBe(1);
  });

  it('leaves the masks alone when the image has no fills or annotations (a plain line-work image)', () => {
    const img = page();
    const m = packInk(img, 160, 208, 240);
    const before = m.strong.slice();
    const plain = sheet(400, 260);
    rect(plain, 40, 100, 200, 2, OBJECT_GREY.line);
    const out = objectLayers(m, null, { image: plain });
    expect(out).toEqual({ fill: null, annotations: null, annotation_px: 0 });
    expect(m.strong).toEqual(before);
  });
});

describe('objectClassGrey and the stored line-work PNG', () => {
  it('stores the four classes in a 2-bit PNG that decodes to the same greys', async () => {
    const W = 37,
      H = 11,
      rb = Math.ceil(W / 8) + 1;
    const line = new Uint8Array(rb * H),
      fills = new Uint8Array(rb * H),
      annots = new Uint8Array(rb * H);
    const set = (m: Uint8Array, x: number, y: number) =>
      (m[y * rb + 1 + (x >> 3)]! |= 0x80 >> (x & 7));
    for (let x = 0; x < W; x++) set(line, x, 2);
    for (let y = 4; y < 9; y++) for (let x = 3; x < 36; x++) set(fills, x, y);
    for (let x = 10; x < 20; x++) {
      set(annots, x, 6);
      set(annots, x, 2);
    }
    const grey = objectClassGrey(W, H, line, fills, annots);
    expect(grey.data[2 * W + 15]).toBe(OBJECT_GREY.line); // line over annotation
    expect(grey.data[6 * W + 15]).toBe(OBJECT_GREY.annotation); // annotation over fill
    expect(grey.data[5 * W + 30]).toBe(OBJECT_GREY.fill);
    expect(grey.data[0]).toBe(OBJECT_GREY.paper);
    const png = await encodeLineWorkPng(W, H, line, { fills, annotations: annots });
    expect(png[24]).toBe(2); // IHDR bit depth
    const back = await decodeGrey(png);
    expect([back.width, back.height]).toEqual([W, H]);
    expect(Array.from(back.data)).toEqual(Array.from(grey.data));
    // Without them: the 1-bit PNG of line work as before.
    const plain = await encodeLineWorkPng(W, H, line);
    expect(plain[24]).toBe(1);
    expect(Array.from((await decodeGrey(plain)).data)).toEqual(
      Array.from(lineWorkGrey(W, H, line).data),
    );
  });
});

describe('keepHiddenLineWork', () => {
  it('gives back removals that B’s objects still draw under something on its page (a markup’s box), counts and score too', () => {
    // A: two lines. B's page: neither shows — one is under a white markup box (B's objects still
    // draw it: its line-work image has it), the other was deleted (not in B's line-work image).
    const A = sheet(200, 100);
    rect(A, 20, 30, 160, 2, 0); // hidden in B
    rect(A, 20, 70, 160, 2, 0); // deleted in B
    const B = sheet(200, 100);
    const linesB = sheet(200, 100);
    rect(linesB, 20, 30, 160, 2, OBJECT_GREY.line);
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(B, 160, 208, 240);
    const d = diffMasks(ma, mb, coverage([1, 0, 0, 0, 1, 0], 200, 100, 200, 100));
    expect(d.stats.removed_px).toBe(640);
    expect(d.score).toBe(0);
    const back = keepHiddenLineWork(d, { image: linesB });
    expect(back).toBe(320);
    expect(bit(d.removed, d.stride, 100, 30)).toBe(0);
    expect(bit(d.removed, d.stride, 100, 70)).toBe(1);
    expect(count(d.removed)).toBe(320);
    expect(d.stats.removed_px).toBe(320);
    expect(d.stats.unchanged_px).toBe(320);
    expect(d.stats.changed_fraction).toBe(0.5);
    expect(d.score).toBe(0.5);
  });

  it('reads B’s line-work image through the frame transform, and leaves a diff alone when it has no line there', () => {
    const A = sheet(200, 100);
    rect(A, 20, 30, 160, 2, 0);
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(sheet(200, 100), 160, 208, 240);
    const cover = coverage([1, 0, 0, 0, 1, 0], 200, 100, 200, 100);
    // B's sheet is twice as large: its line at 40..360 x 60..63.
    const big = sheet(400, 200);
    rect(big, 40, 60, 320, 4, OBJECT_GREY.line);
    const d = diffMasks(ma, mb, cover);
    expect(keepHiddenLineWork(d, { image: big, toImage: [2, 0, 0, 0, 2, 0] })).toBe(320);
    expect(d.stats.removed_px).toBe(0);
    const plain = diffMasks(ma, mb, cover);
    expect(keepHiddenLineWork(plain, { image: sheet(400, 200), toImage: [2, 0, 0, 0, 2, 0] })).toBe(
      0,
    );
    expect(plain.stats.removed_px).toBe(320);
  });
});

describe('keepHiddenImage', () => {
  it('gives back image content under B’s markup; image content removed elsewhere and vector line work under it stay removed', () => {
    // A: an image's dark area (x 20–100) and a vector line. B: a white markup box (an annotation)
    // over x 40–80 of the image, and over the vector line; the rest of the image gone from B's page.
    const A = sheet(200, 100);
    rect(A, 20, 20, 80, 20, 30); // image pixels: paper in A's line-work image
    rect(A, 120, 60, 60, 2, 0); // vector line work
    const linesA = sheet(200, 100);
    rect(linesA, 120, 60, 60, 2, OBJECT_GREY.line);
    const B = sheet(200, 100);
    const linesB = sheet(200, 100);
    rect(linesB, 40, 10, 40, 40, OBJECT_GREY.annotation); // the box (its white fill)
    rect(linesB, 110, 50, 80, 20, OBJECT_GREY.annotation); // a box over the line B deleted
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(B, 160, 208, 240);
    const d = diffMasks(ma, mb, coverage([1, 0, 0, 0, 1, 0], 200, 100, 200, 100));
    expect(d.stats.removed_px).toBe(80 * 20 + 120);
    const back = keepHiddenImage(d, { image: linesA }, { image: linesB });
    expect(back).toBe(40 * 20);
    expect(bit(d.removed, d.stride, 60, 30)).toBe(0); // under the box
    expect(bit(d.removed, d.stride, 30, 30)).toBe(1); // image content gone from B's page
    expect(bit(d.removed, d.stride, 90, 30)).toBe(1);
    expect(bit(d.removed, d.stride, 150, 60)).toBe(1); // vector line B's objects no longer draw
    expect(d.stats.removed_px).toBe(40 * 20 + 120);
    expect(d.stats.unchanged_px).toBe(40 * 20);
    expect(d.score).toBeCloseTo(1 - (40 * 20 + 120) / (80 * 20 + 120), 10);
  });

  it('reads B’s image through the frame transform; a B without annotations (a 1-bit line-work image) gives nothing back', () => {
    const A = sheet(200, 100);
    rect(A, 20, 20, 80, 20, 30);
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(sheet(200, 100), 160, 208, 240);
    const cover = coverage([1, 0, 0, 0, 1, 0], 200, 100, 200, 100);
    // B's sheet twice as large, its box at 80..160 x 20..100; A without a line-work image (a scan).
    const big = sheet(400, 200);
    rect(big, 80, 20, 80, 80, OBJECT_GREY.annotation);
    const d = diffMasks(ma, mb, cover);
    expect(keepHiddenImage(d, undefined, { image: big, toImage: [2, 0, 0, 0, 2, 0] })).toBe(
      40 * 20,
    );
    const plain = diffMasks(ma, mb, cover);
    const oneBit = sheet(400, 200);
    rect(oneBit, 300, 150, 40, 2, OBJECT_GREY.line); // line work and paper only
    expect(keepHiddenImage(plain, undefined, { image: oneBit, toImage: [2, 0, 0, 0, 2, 0] })).toBe(
      0,
    );
    expect(plain.stats.removed_px).toBe(80 * 20);
  });
});

describe('takeBits', () => {
  it('takes the set bits its test holds for, word by word, and never looks past the width', () => {
    // 40 px wide: 2 words a row, the second word's bits 8–31 past the width.
    const stride = 2,
      W = 40,
      H = 3;
    const plane = new Uint32Array(stride * H);
    plane[0] = 0b1011; // x 0, 1, 3 of row 0
    plane[3] = 0xffffffff; // x 32–39 of row 1, and 24 bits past the width
    const looked: string[] = [];
    const words: [number, number][] = [];
    const n = takeBits(
      plane,
      W,
      H,
      stride,
      (x, y) => {
        looked.push(`${x},${y}`);
        return x % 2 === 1;
      },
      (i, bits) => words.push([i, bits]),
    );
    expect(looked).toEqual([
      '0,0',
      '1,0',
      '3,0',
      ...[32, 33, 34, 35, 36, 37, 38, 39].map((x) => `${x},1`),
    ]);
    expect(n).toBe(2 + 4);
    expect(plane[0]).toBe(0b0001);
    expect(plane[3]! >>> 0).toBe((0xffffffff & ~0b10101010) >>> 0);
    expect(words).toEqual([
      [0, 0b1010],
      [3, 0b10101010],
    ]);
  });
});

describe('penStyle', () => {
  it('a line drawn with a heavier pen is style across its whole width; a line that went beside it, or came touching an old one, stays geometry', () => {
    const A = sheet(200, 120),
      B = sheet(200, 120);
    // A window frame beside a grey pane: 7 px wide and dark in A; in B a 2 px line on its left edge
    // and a grey band (the frame drawn light) for the rest of its width, which image analysis takes
    // into the pane's fill.
    rect(A, 47, 10, 60, 100, 206);
    rect(B, 47, 10, 60, 100, 206);
    rect(A, 40, 10, 7, 100, 60);
    rect(B, 42, 10, 5, 100, 180);
    rect(B, 40, 10, 2, 100, 60);
    // A line removed 4 px beside a line both issues have (paper between them in A).
    rect(A, 120, 10, 2, 100, 0);
    rect(B, 120, 10, 2, 100, 0);
    rect(A, 126, 10, 2, 100, 0);
    // A line added in B touching a line both issues have (a leader drawn along an old edge).
    rect(A, 160, 10, 2, 100, 0);
    rect(B, 160, 10, 2, 100, 0);
    rect(B, 162, 10, 5, 100, 0);
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(B, 160, 208, 240);
    expect(splitFills(A, ma, undefined, 160, 208, 240)).toBeTruthy();
    expect(splitFills(B, mb, undefined, 160, 208, 240)).toBeTruthy();
    const d = diffMasks(ma, mb, coverage([1, 0, 0, 0, 1, 0], 200, 120, 200, 120));
    d.style = styleMasks(d);
    const s = d.stride;
    // styleMasks reaches 2 px from B's line: the frame's far side is still geometry.
    expect(bit(d.style.geomRemoved, s, 45, 50)).toBe(1);
    const before = count(d.style.geomRemoved);
    const addedBefore = count(d.style.geomAdded);
    const moved = penStyle(d, A, undefined, B);
    let frame = 0;
    for (let y = 10; y < 110; y++)
      for (let x = 40; x < 47; x++) frame += bit(d.style.geomRemoved, s, x, y);
    expect(frame).toBe(0);
    expect(moved).toBe(before - count(d.style.geomRemoved));
    // The removed line beside the kept one has paper between them: geometry still, all of it.
    let line = 0;
    for (let y = 10; y < 110; y++)
      line += bit(d.style.geomRemoved, s, 126, y) + bit(d.style.geomRemoved, s, 127, y);
    expect(line).toBe(200);
    // The added line touching the old one: A has paper there, so it stays added geometry.
    expect(addedBefore).toBeGreaterThan(0);
    expect(count(d.style.geomAdded)).toBe(addedBefore);
    expect(bit(d.style.geomAdded, s, 165, 50)).toBe(1);
    expect(d.style.removed_px).toBe(count(d.style.removed));
  });
});

describe('speckNoise', () => {
  it('a stipple dot printed in both issues (light over a tone in A, dark on paper in B) is no change; a dot that came is', () => {
    const A = sheet(200, 100),
      B = sheet(200, 100);
    // A: a light tone with a dot a little darker than it; B: paper with the same dot dark.
    rect(A, 10, 10, 180, 80, 192);
    rect(A, 50, 50, 2, 2, 168);
    rect(B, 50, 50, 2, 2, 30);
    // A dot only B has, on the tone's flat part.
    rect(B, 120, 50, 2, 2, 30);
    const ma = packInk(A, 160, 208, 240),
      mb = packInk(B, 160, 208, 240);
    const fa = splitFills(A, ma, undefined, 160, 208, 240);
    expect(fa).toBeTruthy();
    const cover = coverage([1, 0, 0, 0, 1, 0], 200, 100, 200, 100);
    const d = diffMasks(ma, mb, cover);
    d.style = styleMasks(d);
    const s = d.stride;
    expect(bit(d.added, s, 50, 50)).toBe(1);
    expect(bit(d.added, s, 120, 50)).toBe(1);
    const addedBefore = d.stats.added_px;
    const back = speckNoise(d, A, undefined, B);
    expect(back).toBe(4);
    expect(bit(d.added, s, 50, 50)).toBe(0);
    expect(bit(d.style.geomAdded, s, 50, 50)).toBe(0);
    expect(bit(d.added, s, 120, 50)).toBe(1);
    expect(d.stats.added_px).toBe(addedBefore - 4);
    expect(d.score).toBeCloseTo(1 - d.stats.changed_fraction, 12);
  });
});
