// Line work and fills apart, by image analysis of one side's grey image (issue 17). Sheets rendered
// from scans and from raster-printed PDFs (the Bluebeam sets among the fixtures are tiles of pixels)
// carry no object information, so the layers are told apart by what they look like:
//
//   - a fill (tone, solid area, shading) is a wide area with no paper in it: 8x8-px cells whose 64
//     pixels are all ink (grey < paleThreshold), whose median grey is not black (black wide areas are
//     bold text, wall poche drawn as ink, thick pens: line work), joined with neighbouring cells of a
//     similar median into components; a component smaller than MIN_FILL_CELLS, or with fewer than
//     MIN_INTERIOR_CELLS cells surrounded by it on all four sides, is a small filled shape (an
//     arrowhead, a column symbol, a filled dot): line work;
//   - the tone T of a fill cell is its median grey; cells next to a fill (one cell ring: the fill's
//     edge, which never fills a whole cell) take the darkest tone of the fill cells around them;
//   - in those cells, line work is what is darker than the tone (strong ink: grey < T − max(16, 0.3·T),
//     weak: grey < T − max(8, 0.1·T), the usual thresholds when they are lower); the rest of the ink
//     (lighter than the weak threshold and < paleThreshold) is the fill layer. Elsewhere the masks stay
//     as packInk made them.
//
// The line-work masks are then compared exactly as before (diffMasks): a tone under the lines neither
// hides line changes (a line drawn over a fill is darker than the fill) nor floods the diff when the
// tone goes. The fill layers are compared on their own (diffFills) into fill changes.
import type { GreyImage } from '../types';
import type { DiffResult, InkMasks, PixelWindow, WordSource, Coverage } from './diff';
import {
  candidateCells,
  cellMediansInside,
  rewriteTonedCells,
  type ToneRules,
} from './fill-kernels';

/** Scratch arrays of splitFills, kept across calls (grow only): cell-grid sized, ~5 bytes a cell. */
const scratch = {
  median: new Uint8Array(0),
  label: new Int32Array(0),
  tone: new Uint8Array(0),
  isFill: new Uint8Array(0),
  ring: new Uint16Array(0),
};
function cellArrays(n: number) {
  if (scratch.median.length < n) {
    scratch.median = new Uint8Array(n);
    scratch.label = new Int32Array(n);
    scratch.tone = new Uint8Array(n);
    scratch.isFill = new Uint8Array(n);
    scratch.ring = new Uint16Array(n);
  }
  const median = scratch.median.subarray(0, n);
  median.fill(0);
  return {
    median,
    label: scratch.label.subarray(0, n),
    tone: scratch.tone.subarray(0, n),
    isFill: scratch.isFill.subarray(0, n),
    ring: scratch.ring.subarray(0, n),
  };
}

/** Cell size (px): one byte of a mask word. */
export const CELL = 8;
/** A cell whose median grey is below this is not a tone (0: black wide areas are fills too: shadows, poche). */
const BLACK = 0;
/** Neighbouring fill cells whose medians differ by more than this belong to different fills. */
const TONE_STEP = 40;
/** Smallest fill, in cells (24 cells of 8x8 px: about 40x40 px, 0.2 in at 200 dpi). */
const MIN_FILL_CELLS = 24;
/** A fill needs this many cells with all four neighbours in it (thick lines of grey have none). */
const MIN_INTERIOR_CELLS = 3;
/**
 * Line work in a tone of grey T is darker than T by max(16, 0.3·T) (strong ink) or max(8, 0.1·T) (weak
 * ink, the tolerance): thin lines printed over a dark tone keep little contrast.
 */
const strongMargin = (t: number) => Math.max(16, Math.round(0.3 * t));
/**
 * Tones at least this light keep the strong ink (grey < inkThreshold) as their line work, without a
 * tolerance band between line and tone: their cells are split from the masks alone (no pixel read).
 */
const LIGHT_TONE = 176;
const weakMargin = (t: number) => Math.max(8, Math.round(0.1 * t));

export interface FillLayer {
  /** Fill pixels (1 bit each, the layout of InkMasks). */
  fill: Uint32Array;
  /** Fill pixels counted. */
  px: number;
  /** Cells that are fill (not the ring around them). */
  cells: number;
}

/** The mask plane slots splitFills and diffFills take from a WordSource. */
export const FILL_SLOTS = {
  a: 'a.fill',
  b: 'b.fill',
  added: 'fill.added',
  removed: 'fill.removed',
};
/** styleMasks' slots. */
export const STYLE_SLOTS = ['style.added', 'style.removed', 'geom.added', 'geom.removed'] as const;

/**
 * Split the fills out of `m` (packInk's masks of `img`, or of its `window`) in place: the strong,
 * weak and pale planes keep line work only, and the returned plane holds the fill pixels. Null (and
 * `m` untouched) when the image has no fill. Cost: one pass over the pale plane (AND of 8 rows) when
 * there is no fill; 64 grey reads per cell of and around each fill when there is.
 */
export function splitFills(
  img: GreyImage,
  m: InkMasks,
  window: PixelWindow | undefined,
  inkThreshold: number,
  weakThreshold: number,
  paleThreshold: number,
  ws?: WordSource,
  slot = 'a.fill',
): FillLayer | null {
  const { width: W, height: H, stride, pale } = m;
  const cw = W >>> 3,
    ch = H >>> 3; // whole cells only
  if (cw === 0 || ch === 0) return null;
  // 1. Candidate cells: all 64 pixels pale ink (AND of 8 rows, then whole bytes).
  const cand = candidateCells(pale, stride, cw, ch);
  if (cand.length < MIN_FILL_CELLS) return null;
  // 2. Median grey of each candidate (32-bin histogram of its 64 pixels).
  const { width: IW, height: IH, data } = img;
  const wx = window ? Math.round(window.x) : 0,
    wy = window ? Math.round(window.y) : 0;
  // Cells wholly inside the image are read without per-pixel bounds checks.
  const inside = wx >= 0 && wy >= 0 && wx + cw * 8 <= IW && wy + ch * 8 <= IH;
  const cell = new Uint8Array(64);
  // A cell across the image's edge (paper outside).
  const readCell = (cx: number, cy: number): void => {
    for (let r = 0; r < 8; r++) {
      const sy = wy + cy * 8 + r;
      for (let i = 0; i < 8; i++) {
        const sx = wx + cx * 8 + i;
        cell[r * 8 + i] = sy < 0 || sy >= IH || sx < 0 || sx >= IW ? 255 : data[sy * IW + sx]!;
      }
    }
  };
  const N = cw * ch;
  const { median, label, tone, isFill, ring } = cellArrays(N); // median 0: not a candidate
  if (inside) cellMediansInside(data, IW, wx, wy, cw, cand, median, BLACK);
  else {
    const hist = new Uint8Array(32);
    for (let q = 0; q < cand.length; q++) {
      const c = cand[q]!;
      const cx = c % cw,
        cy = (c / cw) | 0;
      // 16 of the 64 pixels (odd rows and columns) tell the tone well enough.
      hist.fill(0);
      readCell(cx, cy);
      for (let r = 1; r < 8; r += 2) for (let i = 1; i < 8; i += 2) hist[cell[r * 8 + i]! >>> 3]!++;
      let n = 0,
        b = 0;
      for (; b < 32; b++) {
        n += hist[b]!;
        if (n >= 8) break;
      }
      const med = b * 8 + 4;
      if (med >= BLACK) median[c] = med;
    }
  }
  // 3. Components of similar tone (4-neighbours); big, thick ones are fills.
  label.fill(-1);
  tone.fill(0); // fill cells: their median; ring cells: darkest fill around
  isFill.fill(0);
  const stack = new Int32Array(cand.length);
  const members = new Int32Array(cand.length);
  let fillCells = 0;
  for (let q = 0; q < cand.length; q++) {
    const seed = cand[q]!;
    if (median[seed] === 0 || label[seed] !== -1) continue;
    let nm = 0,
      sp = 0;
    label[seed] = seed;
    stack[sp++] = seed;
    while (sp > 0) {
      const c = stack[--sp]!;
      members[nm++] = c;
      const cx = c % cw,
        v = median[c]!;
      for (let e = 0; e < 4; e++) {
        const d =
          e === 0
            ? cx > 0
              ? c - 1
              : -1
            : e === 1
              ? cx + 1 < cw
                ? c + 1
                : -1
              : e === 2
                ? c - cw
                : c + cw;
        if (d < 0 || d >= N || median[d] === 0 || label[d] !== -1) continue;
        const dv = median[d]!;
        if (dv > v + TONE_STEP || dv + TONE_STEP < v) continue;
        label[d] = seed;
        stack[sp++] = d;
      }
    }
    if (nm < MIN_FILL_CELLS) continue;
    let interior = 0;
    for (let i = 0; i < nm && interior < MIN_INTERIOR_CELLS; i++) {
      const c = members[i]!;
      const cx = c % cw;
      if (
        cx > 0 &&
        cx + 1 < cw &&
        c >= cw &&
        c + cw < N &&
        label[c - 1] === seed &&
        label[c + 1] === seed &&
        label[c - cw] === seed &&
        label[c + cw] === seed
      )
        interior++;
    }
    if (interior < MIN_INTERIOR_CELLS) continue;
    for (let i = 0; i < nm; i++) {
      const c = members[i]!;
      isFill[c] = 1;
      tone[c] = median[c]!;
    }
    fillCells += nm;
  }
  if (fillCells === 0) return null;
  // Ring: cells next to a fill (8-neighbourhood) take the darkest tone of the fill cells around them.
  ring.fill(256);
  for (let q = 0; q < cand.length; q++) {
    const c = cand[q]!;
    if (!isFill[c]) continue;
    const cx = c % cw,
      cy = (c / cw) | 0,
      t = tone[c]!;
    for (let y = Math.max(0, cy - 1); y <= Math.min(ch - 1, cy + 1); y++)
      for (let x = Math.max(0, cx - 1); x <= Math.min(cw - 1, cx + 1); x++) {
        const d = y * cw + x;
        if (!isFill[d] && t < ring[d]!) ring[d] = t;
      }
  }
  // 4. Rewrite the masks' bytes of every toned cell: line work darker than the tone, fill the rest.
  const fill = ws ? ws.words(slot, stride * H) : new Uint32Array(stride * H);
  // Every toned cell's tone in one array (ring cells hold theirs already; 256: not toned).
  for (let q = 0; q < cand.length; q++) {
    const c = cand[q]!;
    if (isFill[c]) ring[c] = tone[c]!;
  }
  // Rows of the image on 4-byte boundaries (and cells inside it): 4 pixels per word, SWAR compares.
  const aligned = inside && (IW & 3) === 0 && (wx & 3) === 0 && (data.byteOffset & 3) === 0;
  const px = rewriteTonedCells(
    {
      strong: m.strong,
      weak: m.weak,
      pale,
      fill,
      stride,
      cw,
      ch,
      rules: toneRules(inkThreshold, weakThreshold),
      data,
      IW,
      IH,
      wx,
      wy,
      inside,
      aligned,
      paleThreshold,
    },
    ring,
  );
  return { fill, px, cells: fillCells };
}

const toneRuleCache = new Map<string, ToneRules>();
/**
 * The rule of step 4 of splitFills per tone t, as a table (fill-kernels.ts ToneRules): a light tone
 * (t ≥ LIGHT_TONE, inkThreshold + 16 ≤ t) is split from the masks alone, its line work the strong ink
 * (both line thresholds snap to inkThreshold; mode 1) or, from LIGHT_TONE + 40 on, the weak ink with
 * its own threshold (mode 2); darker tones read their pixels against min(inkThreshold, t − max(16,
 * 0.3·t)) and min(weakThreshold, t − max(8, 0.1·t)) (mode 0).
 */
function toneRules(inkThreshold: number, weakThreshold: number): ToneRules {
  const key = `${inkThreshold}/${weakThreshold}`;
  let r = toneRuleCache.get(key);
  if (r) return r;
  r = { mode: new Uint8Array(256), strongT: new Int16Array(256), weakT: new Int16Array(256) };
  for (let t = 0; t < 256; t++) {
    r.strongT[t] = Math.min(inkThreshold, t - strongMargin(t));
    r.weakT[t] = Math.min(weakThreshold, t - weakMargin(t));
    if (t >= LIGHT_TONE && inkThreshold + 16 <= t)
      r.mode[t] = t - weakMargin(t) >= weakThreshold ? 2 : 1;
  }
  toneRuleCache.set(key, r);
  return r;
}

/** Words (k−1, k, k+1 of rows y−2..y+2) of `a | b` dilated by 2 px (5x5). */
function dilated5(
  a: Uint32Array,
  b: Uint32Array,
  stride: number,
  height: number,
  y: number,
  k: number,
): number {
  let v = 0,
    p = 0,
    n = 0;
  for (let yy = Math.max(0, y - 2); yy <= Math.min(height - 1, y + 2); yy++) {
    const o = yy * stride + k;
    v |= a[o]! | b[o]!;
    if (k > 0) p |= a[o - 1]! | b[o - 1]!;
    if (k + 1 < stride) n |= a[o + 1]! | b[o + 1]!;
  }
  return (
    v |
    (v << 1) |
    (v << 2) |
    (v >>> 1) |
    (v >>> 2) |
    (p >>> 31) |
    (p >>> 30) |
    (n << 31) |
    (n << 30)
  );
}

/** Words (k−1, k, k+1 of rows y−1..y+1) of `a | b` dilated by 1 px (3x3). */
function dilated3(
  a: Uint32Array,
  b: Uint32Array,
  stride: number,
  height: number,
  y: number,
  k: number,
): number {
  const o = y * stride + k;
  const up = y > 0 ? o - stride : o,
    dn = y + 1 < height ? o + stride : o;
  const v = a[up]! | b[up]! | a[o]! | b[o]! | a[dn]! | b[dn]!;
  const p = k > 0 ? a[up - 1]! | b[up - 1]! | a[o - 1]! | b[o - 1]! | a[dn - 1]! | b[dn - 1]! : 0;
  const n =
    k + 1 < stride ? a[up + 1]! | b[up + 1]! | a[o + 1]! | b[o + 1]! | a[dn + 1]! | b[dn + 1]! : 0;
  return v | (v << 1) | (v >>> 1) | (p >>> 31) | (n << 31);
}

export interface FillDiff {
  added: Uint32Array;
  removed: Uint32Array;
  added_px: number;
  removed_px: number;
  /** Fill pixels of A ∪ B. */
  union_px: number;
}

/**
 * Fill changes: fill of one side with neither fill nor line work of the other side within 1 px
 * (a fill drawn over by line work on the other side did not go: something was drawn on it).
 * Removed fill is judged only where B covers A's frame.
 */
export function diffFills(
  fa: Uint32Array | null,
  fb: Uint32Array | null,
  ma: InkMasks,
  mb: InkMasks,
  cover: Coverage | undefined,
  ws?: WordSource,
): FillDiff {
  const { stride, height, width } = ma;
  const n = stride * height;
  const added = ws ? ws.words(FILL_SLOTS.added, n) : new Uint32Array(n);
  const removed = ws ? ws.words(FILL_SLOTS.removed, n) : new Uint32Array(n);
  const none = new Uint32Array(0);
  const A = fa ?? none,
    B = fb ?? none;
  let addedPx = 0,
    removedPx = 0,
    unionPx = 0;
  const padBits = width & 31 ? (2 ** (width & 31) - 1) | 0 : -1;
  for (let y = 0; y < height; y++) {
    const lo = cover ? cover.lo[y]! : 0,
      hi = cover ? cover.hi[y]! : width - 1;
    for (let k = 0; k < stride; k++) {
      const i = y * stride + k;
      const pad = k === stride - 1 ? padBits : -1;
      const a = (fa ? A[i]! : 0) & pad,
        b = (fb ? B[i]! : 0) & pad;
      if ((a | b) === 0) continue;
      unionPx += popcount32(a | b);
      if (a !== 0) {
        const other = dilated3(fb ? B : mb.weak, mb.weak, stride, height, y, k);
        const r = a & ~other & rangeBits(k, lo, hi);
        if (r !== 0) {
          removed[i] = r;
          removedPx += popcount32(r);
        }
      }
      if (b !== 0) {
        const other = dilated3(fa ? A : ma.weak, ma.weak, stride, height, y, k);
        const d = b & ~other;
        if (d !== 0) {
          added[i] = d;
          addedPx += popcount32(d);
        }
      }
    }
  }
  return { added, removed, added_px: addedPx, removed_px: removedPx, union_px: unionPx };
}

function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

function rangeBits(k: number, lo: number, hi: number): number {
  const a = Math.max(lo - k * 32, 0),
    b = Math.min(hi - k * 32, 31);
  if (a > b) return 0;
  const upper = b === 31 ? 0xffffffff : (1 << (b + 1)) - 1;
  return (upper & ~((1 << a) - 1)) | 0;
}

/**
 * Style share of a change region (A's frame, inclusive box): the part of its changed line-work pixels
 * that lie within 2 px of ink of the other side (pale or darker) — the same geometry drawn with another
 * lineweight or pen shade leaves the other side's ink right there; a line that appeared or went does
 * not. Word-wise over the box's rows.
 */
export function styleShare(
  d: {
    stride: number;
    height: number;
    added: Uint32Array;
    removed: Uint32Array;
    paleA: Uint32Array;
    paleB: Uint32Array;
  },
  box: { x: number; y: number; width: number; height: number },
): { changed: number; near: number } {
  const { stride, height, added, removed, paleA, paleB } = d;
  const k0 = Math.max(0, box.x >> 5),
    k1 = Math.min(stride - 1, (box.x + box.width - 1) >> 5);
  const x0 = box.x,
    x1 = box.x + box.width - 1;
  let changed = 0,
    near = 0;
  for (let y = Math.max(0, box.y); y <= Math.min(height - 1, box.y + box.height - 1); y++) {
    for (let k = k0; k <= k1; k++) {
      const i = y * stride + k;
      const inBox = rangeBits(k, x0, x1);
      const a = added[i]! & inBox,
        r = removed[i]! & inBox;
      if ((a | r) === 0) continue;
      changed += popcount32(a | r);
      let nb = 0;
      if (a !== 0) nb |= a & dilated5(paleA, paleA, stride, height, y, k);
      if (r !== 0) nb |= r & dilated5(paleB, paleB, stride, height, y, k);
      near += popcount32(nb);
    }
  }
  return { changed, near };
}

/**
 * Style changes (issue 17): changed line-work pixels lying within 2 px of weak ink of the other side,
 * or on its pale ink (the same shape printed much lighter) — the same geometry drawn with another lineweight or pen shade. Only words holding a
 * change are looked at. The returned masks are subsets of `added` / `removed`.
 */
export function styleMasks(
  d: {
    stride: number;
    height: number;
    added: Uint32Array;
    removed: Uint32Array;
    weakA: Uint32Array;
    weakB: Uint32Array;
    paleA: Uint32Array;
    paleB: Uint32Array;
  },
  ws?: WordSource,
): {
  added: Uint32Array;
  removed: Uint32Array;
  added_px: number;
  removed_px: number;
  geomAdded: Uint32Array;
  geomRemoved: Uint32Array;
} {
  const { stride, height, added, removed, weakA, weakB, paleA, paleB } = d;
  const n = stride * height;
  const sa = ws ? ws.words(STYLE_SLOTS[0], n) : new Uint32Array(n);
  const sr = ws ? ws.words(STYLE_SLOTS[1], n) : new Uint32Array(n);
  const ga = ws ? ws.words(STYLE_SLOTS[2], n) : new Uint32Array(n);
  const gr = ws ? ws.words(STYLE_SLOTS[3], n) : new Uint32Array(n);
  let ap = 0,
    rp = 0;
  for (let y = 0; y < height; y++) {
    for (let k = 0; k < stride; k++) {
      const i = y * stride + k;
      const a = added[i]!,
        r = removed[i]!;
      if ((a | r) === 0) continue;
      if (a !== 0) {
        const v = a & (dilated5(weakA, weakA, stride, height, y, k) | paleA[i]!);
        if (v !== 0) {
          sa[i] = v;
          ap += popcount32(v);
        }
        if (v !== a) ga[i] = a & ~v;
      }
      if (r !== 0) {
        const v = r & (dilated5(weakB, weakB, stride, height, y, k) | paleB[i]!);
        if (v !== 0) {
          sr[i] = v;
          rp += popcount32(v);
        }
        if (v !== r) gr[i] = r & ~v;
      }
    }
  }
  return { added: sa, removed: sr, added_px: ap, removed_px: rp, geomAdded: ga, geomRemoved: gr };
}

/**
 * Tone and line told apart differently on the two sides (issue 17, A202): image analysis (splitFills)
 * calls the same ink line work on one side and fill on the other when the pixels around it differ a
 * little — a hatch over a band whose lines print darker than the band in one issue and lighter in the
 * other, a window frame of the same grey as the pane beside it, anti-aliased edges shifted by a
 * sub-pixel. The masks then lose that ink on the fill side, and the line-work side's pixels read as
 * added or removed while the other side is just as dark there. A geometry pixel (style.geomAdded /
 * geomRemoved) of grey g with a fill pixel of the other side in its 3x3 neighbourhood (sub-pixel
 * shifts) of grey f where g is not darker than f by the strong margin of line work over a tone
 * (g > f − max(16, 0.3·f): splitFills would not call it a line over that fill) is a style change: it
 * moves to style.added / style.removed (the overlay draws it as unchanged ink; regions report it as
 * style). A line removed from over a tone (or drawn over one) keeps its geometry: it is darker than
 * the tone by that margin. `greyA` is the image A's masks were packed from (read through `windowA`),
 * `greyB` aligned B (the diff's frame).
 * Returns the pixels moved.
 */
export function fillInkStyle(
  d: DiffResult,
  greyA: GreyImage,
  windowA: PixelWindow | undefined,
  greyB: GreyImage,
): number {
  const st = d.style,
    fills = d.fills;
  if (!st || !fills || (!fills.a && !fills.b)) return 0;
  const { width: W, height: H, stride } = d;
  const wx = windowA ? Math.round(windowA.x) : 0,
    wy = windowA ? Math.round(windowA.y) : 0;
  const AW = greyA.width,
    AH = greyA.height,
    AD = greyA.data,
    BD = greyB.data;
  const greyAt = (side: 0 | 1, x: number, y: number): number => {
    if (side === 1) return BD[y * W + x]!;
    const ax = x + wx,
      ay = y + wy;
    return ax < 0 || ay < 0 || ax >= AW || ay >= AH ? 255 : AD[ay * AW + ax]!;
  };
  /** The other side's fill ink within 1 px of (x, y) that `g` is not a line over. */
  const sameInk = (fill: Uint32Array, side: 0 | 1, x: number, y: number, g: number): boolean => {
    let f = 0;
    for (let yy = Math.max(0, y - 1); yy <= Math.min(H - 1, y + 1); yy++)
      for (let xx = Math.max(0, x - 1); xx <= Math.min(W - 1, x + 1); xx++)
        if (
          (fill[yy * stride + (xx >> 5)]! >>> (xx & 31)) & 1 &&
          g > (f = greyAt(side, xx, yy)) - strongMargin(f)
        )
          return true;
    return false;
  };
  const pass = (
    geom: Uint32Array,
    style: Uint32Array,
    fill: Uint32Array | null,
    own: 0 | 1,
  ): number => {
    if (!fill) return 0;
    const other = own === 0 ? 1 : 0;
    let n = 0;
    for (let y = 0; y < H; y++)
      for (let k = 0; k < stride; k++) {
        const i = y * stride + k;
        let bits = geom[i]!;
        if (bits === 0) continue;
        let back = 0;
        while (bits !== 0) {
          const low = bits & -bits;
          bits ^= low;
          const x = k * 32 + (31 - Math.clz32(low));
          if (x >= W) break;
          if (sameInk(fill, other, x, y, greyAt(own, x, y))) back |= low;
        }
        if (back === 0) continue;
        geom[i] = geom[i]! & ~back;
        style[i] = style[i]! | back;
        n += popcount32(back);
      }
    return n;
  };
  const r = pass(st.geomRemoved, st.removed, fills.b, 0);
  const a = pass(st.geomAdded, st.added, fills.a, 1);
  st.removed_px += r;
  st.added_px += a;
  return r + a;
}

/**
 * Whether the line-work image holds class `grey` (OBJECT_GREY) at mask pixel (x, y): its nearest
 * pixel, or any of its footprint when the mask frame is reduced from the image by 1.33x or more (as
 * keepHiddenLineWork reads it).
 */
function classAtPixel(lines: LineWorkImage, x: number, y: number, grey: number): boolean {
  const { width: LW, height: LH, data: L } = lines.image;
  const [a, b, c, d, e, f] = lines.toImage ?? [1, 0, 0, 0, 1, 0];
  const scale = Math.sqrt(Math.abs(a! * e! - b! * d!));
  const foot = scale > 1 / 0.75 ? Math.min(4, Math.max(1, Math.round(scale))) : 1;
  const half = foot / 2;
  const sx0 = Math.floor(a! * x + b! * y + c! - half + 1),
    sy0 = Math.floor(d! * x + e! * y + f! - half + 1);
  for (let yy = Math.max(0, sy0); yy < Math.min(LH, sy0 + foot); yy++)
    for (let xx = Math.max(0, sx0); xx < Math.min(LW, sx0 + foot); xx++)
      if (L[yy * LW + xx] === grey) return true;
  return false;
}

/**
 * A piece of a changed tone's weak line work at most this long (px, its box's longer side) is the
 * tone's texture (fillTexture): a hatch stripe's piece, a stipple dot; 2.5 mm at 200 dpi.
 */
export const TEXTURE_PX = 20;
/**
 * A tone's own texture out of the line-work changes (issue 17, A103): a hatched or stippled tone
 * (the old plan's roof hatch, grey 95–127 in stripes) has ink a little darker than its cells' median
 * grey, which splitFills keeps as weak line work (a thin line printed over a dark tone keeps little
 * contrast) in some cells and not in others as the hatch's phase moves against the 8 px cells. When
 * the tone goes, those pixels read as removed line work: short red dashes in bands across it. A changed
 * pixel that is weak ink only (not strong, nor next to strong ink: a stroke's fringe) with its side's
 * fill within 1 px, where that fill changed too (a removed / added fill pixel within 1 px), and whose
 * piece of the side's line work (8-connected through its weak plane) is at most TEXTURE_PX long, is
 * that fill's texture: it moves from the line work (its weak and pale bits, `removed` / `added` and
 * the style masks, the faint count) to the fill layer and its change. A line drawn over the tone (a
 * terrain contour: long, joined through its strong and unchanged pixels), strong ink (darker than
 * the tone by a line's margin), or weak ink over a fill that stays keep their line-work change.
 * Pixels the page's objects draw as line work (`lines`: A's and B's line-work images, as
 * keepHiddenLineWork reads them) stay line work. Returns the pixels moved.
 */
export function fillTexture(
  d: DiffResult,
  lines: { a?: LineWorkImage | undefined; b?: LineWorkImage | undefined } = {},
): number {
  const fills = d.fills;
  if (!fills) return 0;
  const { stride, height } = d;
  const sides = [
    {
      changed: d.removed,
      strong: d.strongA,
      weak: d.weakA,
      pale: d.paleA,
      fill: fills.a,
      fillChanged: fills.removed,
      lines: lines.a,
      style: d.style ? [d.style.removed, d.style.geomRemoved] : [],
    },
    {
      changed: d.added,
      strong: d.strongB,
      weak: d.weakB,
      pale: d.paleB,
      fill: fills.b,
      fillChanged: fills.added,
      lines: lines.b,
      style: d.style ? [d.style.added, d.style.geomAdded] : [],
    },
  ] as const;
  const moved = [0, 0, 0, 0];
  const W = d.width;
  sides.forEach((sd, side) => {
    const fill = sd.fill;
    if (!fill) return;
    // Candidates, decided on the planes as they were: weak-only changed ink, not the fringe of a strong
    // stroke, in a fill that changed.
    const cand = new Uint32Array(stride * height);
    let any = false;
    for (let y = 0; y < height; y++)
      for (let k = 0; k < stride; k++) {
        const i = y * stride + k;
        const c = sd.changed[i]! & ~sd.strong[i]!;
        if (c === 0) continue;
        const t =
          c &
          ~dilated3(sd.strong, sd.strong, stride, height, y, k) &
          dilated3(fill, fill, stride, height, y, k) &
          dilated3(sd.fillChanged, sd.fillChanged, stride, height, y, k);
        if (t !== 0) {
          cand[i] = t;
          any = true;
        }
      }
    if (!any) return;
    // Each candidate's 8-connected piece of the side's line work (its weak plane: strong and weak ink,
    // changed or not): texture when it is short (a hatch stripe's piece, a stipple dot) — its
    // candidates move; a line drawn over the tone (a terrain contour, faint over a dark tone, in
    // pieces as its pixels pass from weak to strong ink) runs on, joined through its other pixels, and
    // stays line work.
    // The flood from a candidate stays within TEXTURE_PX of it (a piece that reaches further is
    // long), visited pixels stamped in a box around the seed: a piece joined to the whole plan's line
    // work costs that box, not the plan.
    const T = TEXTURE_PX,
      B = 2 * T + 1;
    const stamp = new Int32Array(B * B);
    let gen = 0;
    const weak = sd.weak;
    // Pixels of pieces found long: a flood that reaches one is long at once.
    const longBits = new Uint32Array(stride * height);
    const stack: number[] = [];
    const piece: number[] = [];
    const seen: number[] = [];
    const moves: number[] = [];
    for (let y = 0; y < height; y++)
      for (let k = 0; k < stride; k++) {
        while (cand[y * stride + k]! !== 0) {
          const w0 = cand[y * stride + k]!;
          const x0 = k * 32 + (31 - Math.clz32(w0 & -w0));
          gen++;
          stamp[T * B + T] = gen;
          stack.length = 0;
          stack.push(x0, y);
          piece.length = 0;
          seen.length = 0;
          let minX = x0,
            maxX = x0,
            minY = y,
            maxY = y,
            long = false;
          while (stack.length > 0) {
            const py = stack.pop()!,
              px = stack.pop()!;
            seen.push(px, py);
            if ((longBits[py * stride + (px >> 5)]! >>> (px & 31)) & 1) {
              long = true;
              break;
            }
            if ((cand[py * stride + (px >> 5)]! >>> (px & 31)) & 1) piece.push(px, py);
            if (px < minX) minX = px;
            if (px > maxX) maxX = px;
            if (py < minY) minY = py;
            if (py > maxY) maxY = py;
            if (maxX - minX >= T || maxY - minY >= T) {
              long = true;
              break;
            }
            for (let yy = Math.max(0, py - 1); yy <= Math.min(height - 1, py + 1); yy++)
              for (let xx = Math.max(0, px - 1); xx <= Math.min(W - 1, px + 1); xx++) {
                if (!((weak[yy * stride + (xx >> 5)]! >>> (xx & 31)) & 1)) continue;
                // Within T of the seed while the piece's extent is under T.
                const si = (yy - y + T) * B + (xx - x0 + T);
                if (stamp[si] === gen) continue;
                stamp[si] = gen;
                stack.push(xx, yy);
              }
          }
          if (long)
            for (let j = 0; j < seen.length; j += 2) {
              const px = seen[j]!,
                li = seen[j + 1]! * stride + (px >> 5);
              longBits[li] = longBits[li]! | (1 << (px & 31));
            }
          // Every candidate reached is decided: long, it stays; short, it moves (below, once all
          // pieces are decided on the planes as they were).
          for (let j = 0; j < piece.length; j += 2) {
            const px = piece[j]!,
              i = piece[j + 1]! * stride + (px >> 5),
              t = 1 << (px & 31);
            cand[i] = cand[i]! & ~t;
            // What the page's objects draw as line work stays line work (keepLineWork).
            if (!long && !(sd.lines && classAtPixel(sd.lines, px, piece[j + 1]!, OBJECT_GREY.line)))
              moves.push(i, t);
          }
        }
      }
    for (let j = 0; j < moves.length; j += 2) {
      const i = moves[j]!,
        t = moves[j + 1]!;
      sd.changed[i] = sd.changed[i]! & ~t;
      if (sd.style.length > 0) {
        if (sd.style[0]![i]! & t) moved[2 + side]!++;
        sd.style[0]![i] = sd.style[0]![i]! & ~t;
        sd.style[1]![i] = sd.style[1]![i]! & ~t;
      }
      sd.weak[i] = sd.weak[i]! & ~t;
      if (sd.pale !== sd.weak) sd.pale[i] = sd.pale[i]! & ~t;
      fill[i] = fill[i]! | t;
      sd.fillChanged[i] = sd.fillChanged[i]! | t;
      moved[side]!++;
    }
  });
  const [r, a, sr, sa] = moved as [number, number, number, number];
  d.faint.removed_px = Math.max(0, d.faint.removed_px - r);
  d.faint.added_px = Math.max(0, d.faint.added_px - a);
  fills.removed_px += r;
  fills.added_px += a;
  if (d.style) {
    d.style.removed_px -= sr;
    d.style.added_px -= sa;
  }
  return r + a;
}

/**
 * The greys of a sheet's stored object classes (encodeLineWorkPng, decoded by decodeGrey): line work
 * (stroked paths, text, small filled symbols), the page's annotations (markups, clouds), its fill
 * layer by object (area fills of tone, shadings), and the rest (paper, or images: image analysis).
 * Line work and annotations are below 128 (keepLineWork's line work), fill and paper above.
 */
export const OBJECT_GREY = { line: 0, annotation: 96, fill: 176, paper: 255 } as const;

/**
 * A sheet's line work as PDFium draws it from the page's objects (PageRaster.lineWork decoded: grey,
 * 0 where line work, 255 elsewhere), in the sheet's pixels, and how the masks' frame maps into it.
 */
export interface LineWorkImage {
  image: GreyImage;
  /** Output (mask) pixel → line-work image pixel; undefined: the identity. */
  toImage?: readonly number[];
}

/**
 * Vector line work out of the fill layer (issue 17, item 1): where the page's objects say a pixel
 * is line work (a stroked path, text, a small filled symbol drawn there), splitFills' image analysis
 * does not get to call it fill — a lighter pen over a tone, a stipple or hatch dense enough to leave
 * no paper in a cell, a dimension over a shadow stay line work. Only fill pixels are looked at: each
 * one's place in the line-work image (nearest pixel, or the darkest of its footprint when the mask
 * frame is reduced from the image by 1.33x or more, as alignGrey does), and the ones on line work go
 * back to the strong / weak / pale planes by their grey (`grey`, the image the masks were packed
 * from, read through `window`). Returns the pixels moved; `fill.px` is updated.
 */
export function keepLineWork(
  grey: GreyImage,
  window: PixelWindow | undefined,
  m: InkMasks,
  fill: FillLayer,
  lines: LineWorkImage,
  inkThreshold: number,
  weakThreshold: number,
  paleThreshold: number,
): number {
  const { width: W, height: H, stride, strong, weak, pale } = m;
  const F = fill.fill;
  const { width: LW, height: LH, data: L } = lines.image;
  const [a, b, c, d, e, f] = lines.toImage ?? [1, 0, 0, 0, 1, 0];
  const scale = Math.sqrt(Math.abs(a! * e! - b! * d!));
  const foot = scale > 1 / 0.75 ? Math.min(4, Math.max(1, Math.round(scale))) : 1;
  const half = foot / 2;
  const { width: IW, height: IH, data: G } = grey;
  const wx = window ? Math.round(window.x) : 0,
    wy = window ? Math.round(window.y) : 0;
  let moved = 0;
  const sa = a!,
    sd = d!;
  for (let y = 0; y < H; y++) {
    const row = y * stride;
    const gy = y + wy;
    const rx = b! * y + c! - half + 1,
      ry = e! * y + f! - half + 1;
    for (let k = 0; k < stride; k++) {
      let bits = F[row + k]!;
      if (bits === 0) continue;
      let back = 0;
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        const x = k * 32 + (31 - Math.clz32(low));
        if (x >= W) break;
        // ceil(v - half) as floor(v - half + 1) for the non-integers a transform gives.
        const sx0 = Math.floor(sa * x + rx),
          sy0 = Math.floor(sd * x + ry);
        let on = false;
        if (foot === 1) {
          on = sx0 >= 0 && sx0 < LW && sy0 >= 0 && sy0 < LH && L[sy0 * LW + sx0]! < 128;
        } else {
          for (let yy = Math.max(0, sy0); yy < Math.min(LH, sy0 + foot) && !on; yy++)
            for (let xx = Math.max(0, sx0); xx < Math.min(LW, sx0 + foot); xx++)
              if (L[yy * LW + xx]! < 128) {
                on = true;
                break;
              }
        }
        if (!on) continue;
        back |= low;
        const gx = x + wx;
        const g = gx >= 0 && gx < IW && gy >= 0 && gy < IH ? G[gy * IW + gx]! : 255;
        if (g < inkThreshold) strong[row + k] = strong[row + k]! | low;
        if (g < weakThreshold) weak[row + k] = weak[row + k]! | low;
        if (g < paleThreshold) pale[row + k] = pale[row + k]! | low;
      }
      if (back === 0) continue;
      F[row + k] = F[row + k]! & ~back;
      let n = back;
      n = n - ((n >>> 1) & 0x55555555);
      n = (n & 0x33333333) + ((n >>> 2) & 0x33333333);
      moved += (((n + (n >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
  }
  fill.px -= moved;
  return moved;
}

/** Tile size (px of a line-work image) of classTiles. */
const CLASS_TILE = 32;
const classTileCache = new WeakMap<
  Uint8Array,
  { flags: Uint8Array; tw: number; th: number } | null
>();

/**
 * Where a line-work image holds fills or annotations (OBJECT_GREY), by CLASS_TILE tiles, each tile
 * flagged when such a pixel lies within 2 tiles of it (a mask word mapped into the image spans up
 * to 4 x 32 px of it); null when none does (a plain line-work image: 0 and 255 only). Kept per image
 * (its pixel array): the windows of one sheet pair look at the same image.
 */
function classTiles(img: GreyImage): { flags: Uint8Array; tw: number; th: number } | null {
  const cached = classTileCache.get(img.data);
  if (cached !== undefined) return cached;
  const { width: W, height: H, data } = img;
  const tw = Math.ceil(W / CLASS_TILE),
    th = Math.ceil(H / CLASS_TILE);
  const own = new Uint8Array(tw * th);
  let any = false;
  const aligned = (data.byteOffset & 3) === 0;
  const words = aligned ? new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2) : null;
  for (let y = 0; y < H; y++) {
    const r = y * W,
      trow = (y / CLASS_TILE) | 0;
    let x = 0;
    if (words && (r & 3) === 0) {
      // 4 pixels at a time: all line work (0) or all paper (255) is the common case.
      for (; x + 4 <= W; x += 4) {
        const v = words[(r + x) >>> 2]!;
        if (v === 0 || v === 0xffffffff) continue;
        for (let j = 0; j < 4; j++) {
          const p = data[r + x + j]!;
          if (p !== 0 && p !== 255) {
            own[trow * tw + (((x + j) / CLASS_TILE) | 0)] = 1;
            any = true;
          }
        }
      }
    }
    for (; x < W; x++) {
      const p = data[r + x]!;
      if (p !== 0 && p !== 255) {
        own[trow * tw + ((x / CLASS_TILE) | 0)] = 1;
        any = true;
      }
    }
  }
  let out: { flags: Uint8Array; tw: number; th: number } | null = null;
  if (any) {
    const flags = new Uint8Array(tw * th);
    for (let ty = 0; ty < th; ty++)
      for (let tx = 0; tx < tw; tx++) {
        if (!own[ty * tw + tx]) continue;
        for (let yy = Math.max(0, ty - 2); yy <= Math.min(th - 1, ty + 2); yy++)
          for (let xx = Math.max(0, tx - 2); xx <= Math.min(tw - 1, tx + 2); xx++)
            flags[yy * tw + xx] = 1;
      }
    out = { flags, tw, th };
  }
  classTileCache.set(img.data, out);
  return out;
}

/**
 * The fill layer and the annotations by object (issue 17, items 1 and 2), for a side whose line-work
 * image holds the page's object classes (OBJECT_GREY: a 2-bit lineWork PNG from a PDF page with area
 * fills of tone, shadings or annotations). Every ink pixel (pale plane, after splitFills and
 * keepLineWork) is looked up in the image (nearest pixel, or its footprint when the mask frame is
 * reduced by 1.33x or more, as keepLineWork): one on a fill of the page (and on no line work or
 * annotation of its footprint) leaves the strong / weak / pale planes for the fill plane, whatever
 * image analysis said (a dark pen stroke over a tone is line work in the image; a tone too small or
 * too thin for image analysis is still a fill); one on an annotation is marked in the returned
 * annotation plane (it stays line work: a cloud is drawn like one). Pixels on images or paper of the
 * image keep image analysis. `fill` is splitFills' layer (null when it found none: a new one is made
 * when a pixel moves). Returns the fill layer (or null) and the annotation plane (null when none).
 */
export function objectLayers(
  m: InkMasks,
  fill: FillLayer | null,
  lines: LineWorkImage,
  ws?: WordSource,
  slots: { fill: string; annotations: string } = { fill: 'a.fill', annotations: 'a.annot' },
): { fill: FillLayer | null; annotations: Uint32Array | null; annotation_px: number } {
  const { width: W, height: H, stride, strong, weak, pale } = m;
  const { width: LW, height: LH, data: L } = lines.image;
  const [a, b, c, d, e, f] = lines.toImage ?? [1, 0, 0, 0, 1, 0];
  const scale = Math.sqrt(Math.abs(a! * e! - b! * d!));
  const foot = scale > 1 / 0.75 ? Math.min(4, Math.max(1, Math.round(scale))) : 1;
  const half = foot / 2;
  const FILL = OBJECT_GREY.fill,
    ANNOT = OBJECT_GREY.annotation;
  const tiles = classTiles(lines.image);
  if (!tiles) return { fill, annotations: null, annotation_px: 0 };
  const { flags, tw, th } = tiles;
  let F = fill ? fill.fill : null;
  let annot: Uint32Array | null = null;
  let moved = 0,
    annotPx = 0;
  /** Class of the footprint at (sx0, sy0): line work / annotation first, then fill; 255 otherwise. */
  const classAt = (sx0: number, sy0: number): number => {
    if (foot === 1) return sx0 >= 0 && sx0 < LW && sy0 >= 0 && sy0 < LH ? L[sy0 * LW + sx0]! : 255;
    let cls = 255;
    for (let yy = Math.max(0, sy0); yy < Math.min(LH, sy0 + foot); yy++)
      for (let xx = Math.max(0, sx0); xx < Math.min(LW, sx0 + foot); xx++) {
        const v = L[yy * LW + xx]!;
        if (v === OBJECT_GREY.line) return v;
        if (v === ANNOT) cls = ANNOT;
        else if (v === FILL && cls !== ANNOT) cls = FILL;
      }
    return cls;
  };
  for (let y = 0; y < H; y++) {
    const row = y * stride;
    const rx = b! * y + c! - half + 1,
      ry = e! * y + f! - half + 1;
    for (let k = 0; k < stride; k++) {
      let bits = pale[row + k]!;
      if (bits === 0) continue;
      // Words far from every fill and annotation of the image are skipped whole.
      const cx = k * 32 + 16;
      const tx = Math.floor((a! * cx + b! * y + c!) / CLASS_TILE),
        ty = Math.floor((d! * cx + e! * y + f!) / CLASS_TILE);
      if (tx < 0 || ty < 0 || tx >= tw || ty >= th || flags[ty * tw + tx] === 0) continue;
      let toFill = 0,
        onAnnot = 0;
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        const x = k * 32 + (31 - Math.clz32(low));
        if (x >= W) break;
        const v = classAt(Math.floor(a! * x + rx), Math.floor(d! * x + ry));
        if (v === FILL) toFill |= low;
        else if (v === ANNOT) onAnnot |= low;
      }
      if (onAnnot !== 0) {
        annot ??= ws ? ws.words(slots.annotations, stride * H) : new Uint32Array(stride * H);
        annot[row + k] = onAnnot;
        annotPx += popcount32(onAnnot);
      }
      if (toFill === 0) continue;
      if (!F) F = ws ? ws.words(slots.fill, stride * H) : new Uint32Array(stride * H);
      strong[row + k] = strong[row + k]! & ~toFill;
      weak[row + k] = weak[row + k]! & ~toFill;
      if (pale !== weak) pale[row + k] = pale[row + k]! & ~toFill;
      F[row + k] = F[row + k]! | toFill;
      moved += popcount32(toFill);
    }
  }
  let out = fill;
  if (moved > 0) {
    if (out) out.px += moved;
    else out = { fill: F!, px: moved, cells: 0 };
  }
  return { fill: out, annotations: annot, annotation_px: annotPx };
}

/**
 * Removals that are only hidden (issue 17, item 4: an overlay an architect can read): a pixel of A's
 * ink with no ink of B around it, where B's own objects still draw line work (B's line-work image:
 * OBJECT_GREY.line at the pixel, or in its footprint when B is reduced) — B's drawing has the line,
 * and something drawn over it on B's page hides it: the white box of a markup callout, a cloud's
 * fill, an image. Such a pixel is not removed: its bit leaves `removed` and the counts follow
 * (strong ink: stats.removed_px, unchanged_px, changed_fraction and score; weak ink: the faint count).
 * `lines.toImage` maps the diff's pixels to B's line-work image (the inverse of B's transform into
 * the frame). Returns the pixels given back. Only for B: A's line work hidden on A's page and shown
 * on B's is drawn by B — an addition.
 */
export function keepHiddenLineWork(d: DiffResult, lines: LineWorkImage): number {
  const { width: W, height: H, stride, removed, strongA } = d;
  const { width: LW, height: LH, data: L } = lines.image;
  const [a, b, c, dd, e, f] = lines.toImage ?? [1, 0, 0, 0, 1, 0];
  const scale = Math.sqrt(Math.abs(a! * e! - b! * dd!));
  const foot = scale > 1 / 0.75 ? Math.min(4, Math.max(1, Math.round(scale))) : 1;
  const half = foot / 2;
  const LINE = OBJECT_GREY.line;
  let strong = 0,
    faint = 0;
  for (let y = 0; y < H; y++) {
    const row = y * stride;
    const rx = b! * y + c! - half + 1,
      ry = e! * y + f! - half + 1;
    for (let k = 0; k < stride; k++) {
      let bits = removed[row + k]!;
      if (bits === 0) continue;
      let back = 0;
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        const x = k * 32 + (31 - Math.clz32(low));
        if (x >= W) break;
        const sx0 = Math.floor(a! * x + rx),
          sy0 = Math.floor(dd! * x + ry);
        let on = false;
        for (let yy = Math.max(0, sy0); yy < Math.min(LH, sy0 + foot) && !on; yy++)
          for (let xx = Math.max(0, sx0); xx < Math.min(LW, sx0 + foot); xx++)
            if (L[yy * LW + xx] === LINE) {
              on = true;
              break;
            }
        if (on) back |= low;
      }
      if (back === 0) continue;
      removed[row + k] = removed[row + k]! & ~back;
      const s = back & strongA[row + k]!;
      strong += popcount32(s);
      faint += popcount32(back & ~s);
    }
  }
  return givenBack(d, strong, faint);
}

/** The counts after `strong` + `faint` removed pixels were given back as unchanged (keepHidden…). */
function givenBack(d: DiffResult, strong: number, faint: number): number {
  if (strong + faint === 0) return 0;
  const st = d.stats;
  const union = st.added_px + st.removed_px + st.unchanged_px;
  st.removed_px -= strong;
  st.unchanged_px += strong;
  st.changed_fraction = union > 0 ? (st.added_px + st.removed_px) / union : 0;
  d.score = 1 - st.changed_fraction;
  d.faint.removed_px = Math.max(0, d.faint.removed_px - faint);
  return strong + faint;
}

/**
 * Image content hidden under a markup (issue 17 follow-up): a pixel of A's ink that is image content
 * on A's page (A's line-work image: neither line work, fill nor annotation there — pixels of an
 * image; no image at all: a scan's), removed, where B's page draws an annotation (B's line-work
 * image: OBJECT_GREY.annotation, which holds a callout's or markup box's light fill) — B's markup
 * covers it, and what B's image holds beneath cannot be seen: not removed. Its bit leaves `removed`
 * and the counts follow, as keepHiddenLineWork (which gives back the vector line work B still draws
 * under a markup; line work of A that B's objects no longer draw stays removed). `linesA.toImage`
 * maps the diff's pixels to A's image (its window's offset), `linesB.toImage` to B's. Returns the
 * pixels given back.
 */
export function keepHiddenImage(
  d: DiffResult,
  linesA: LineWorkImage | undefined,
  linesB: LineWorkImage,
): number {
  if (!classTiles(linesB.image)) return 0;
  const { width: W, height: H, stride, removed, strongA } = d;
  const isImage = (x: number, y: number): boolean =>
    !linesA ||
    !(
      classAtPixel(linesA, x, y, OBJECT_GREY.line) ||
      classAtPixel(linesA, x, y, OBJECT_GREY.fill) ||
      classAtPixel(linesA, x, y, OBJECT_GREY.annotation)
    );
  let strong = 0,
    faint = 0;
  for (let y = 0; y < H; y++)
    for (let k = 0; k < stride; k++) {
      const i = y * stride + k;
      let bits = removed[i]!;
      if (bits === 0) continue;
      let back = 0;
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        const x = k * 32 + (31 - Math.clz32(low));
        if (x >= W) break;
        if (classAtPixel(linesB, x, y, OBJECT_GREY.annotation) && isImage(x, y)) back |= low;
      }
      if (back === 0) continue;
      removed[i] = removed[i]! & ~back;
      const s = back & strongA[i]!;
      strong += popcount32(s);
      faint += popcount32(back & ~s);
    }
  return givenBack(d, strong, faint);
}

/** PageRaster.lineWork (1-bit PNG scanlines, 1 = line work) as grey: 0 line work, 255 elsewhere. */
export function lineWorkGrey(width: number, height: number, rows: Uint8Array): GreyImage {
  const rb = Math.ceil(width / 8);
  if (rows.length < (rb + 1) * height)
    throw new Error(
      `Expected ${height} scanlines of ${rb + 1} bytes for a ${width}x${height} line-work mask but received ${rows.length} bytes`,
    );
  const data = new Uint8Array(width * height).fill(255);
  for (let y = 0; y < height; y++) {
    const r = y * (rb + 1) + 1;
    for (let k = 0; k < rb; k++) {
      const v = rows[r + k]!;
      if (v === 0) continue;
      for (let j = 0; j < 8; j++) if (v & (0x80 >> j)) data[y * width + k * 8 + j] = 0;
    }
  }
  return { width, height, data };
}

/**
 * PageRaster.lineWork with the page's fills and annotations by object (fillWork / annotWork, the same
 * 1-bit layout) as the grey of OBJECT_GREY, as encodeLineWorkPng stores them and decodeGrey reads
 * them back: line work, else annotation, else fill, else paper.
 */
export function objectClassGrey(
  width: number,
  height: number,
  lineWork: Uint8Array,
  fillWork?: Uint8Array,
  annotWork?: Uint8Array,
): GreyImage {
  const img = lineWorkGrey(width, height, lineWork);
  const rb = Math.ceil(width / 8);
  const mark = (rows: Uint8Array | undefined, v: number) => {
    if (!rows) return;
    if (rows.length < (rb + 1) * height)
      throw new Error(
        `Expected ${height} scanlines of ${rb + 1} bytes for a ${width}x${height} object mask but received ${rows.length} bytes`,
      );
    for (let y = 0; y < height; y++) {
      const r = y * (rb + 1) + 1;
      for (let k = 0; k < rb; k++) {
        const bits = rows[r + k]!;
        if (bits === 0) continue;
        for (let j = 0; j < 8; j++) {
          const i = y * width + k * 8 + j;
          if (bits & (0x80 >> j) && img.data[i] === OBJECT_GREY.paper) img.data[i] = v;
        }
      }
    }
  };
  // Annotations first: a pixel of both is an annotation's (they are drawn over the page).
  mark(annotWork, OBJECT_GREY.annotation);
  mark(fillWork, OBJECT_GREY.fill);
  return img;
}
