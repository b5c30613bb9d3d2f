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
import { labelRuns, listPieces } from './small-pieces';
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
let lineLimitTable: Int16Array | null = null;
/** t − strongMargin(t) for every grey t: a pixel darker than this is a line over a tone of grey t. */
function lineLimits(): Int16Array {
  if (lineLimitTable) return lineLimitTable;
  const l = new Int16Array(256);
  for (let t = 0; t < 256; t++) l[t] = t - strongMargin(t);
  return (lineLimitTable = l);
}

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
      // The other side's own word first: its 3x3 dilation only holds more (exact shortcut).
      if (a !== 0 && (a & ~((fb ? B[i]! : 0) | mb.weak[i]!)) !== 0) {
        const other = dilated3(fb ? B : mb.weak, mb.weak, stride, height, y, k);
        const r = a & ~other & rangeBits(k, lo, hi);
        if (r !== 0) {
          removed[i] = r;
          removedPx += popcount32(r);
        }
      }
      if (b !== 0 && (b & ~((fa ? A[i]! : 0) | ma.weak[i]!)) !== 0) {
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
  words: Int32Array;
} {
  const { stride, height, added, removed, weakA, weakB, paleA, paleB } = d;
  const n = stride * height;
  const sa = ws ? ws.words(STYLE_SLOTS[0], n) : new Uint32Array(n);
  const sr = ws ? ws.words(STYLE_SLOTS[1], n) : new Uint32Array(n);
  const ga = ws ? ws.words(STYLE_SLOTS[2], n) : new Uint32Array(n);
  const gr = ws ? ws.words(STYLE_SLOTS[3], n) : new Uint32Array(n);
  let ap = 0,
    rp = 0;
  let words = new Int32Array(4096),
    nw = 0;
  for (let y = 0; y < height; y++) {
    for (let k = 0; k < stride; k++) {
      const i = y * stride + k;
      const a = added[i]!,
        r = removed[i]!;
      if ((a | r) === 0) continue;
      if (nw === words.length) {
        const grown = new Int32Array(2 * nw);
        grown.set(words);
        words = grown;
      }
      words[nw++] = i;
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
  return {
    added: sa,
    removed: sr,
    added_px: ap,
    removed_px: rp,
    geomAdded: ga,
    geomRemoved: gr,
    words: words.subarray(0, nw),
  };
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
  const lineBelow = lineLimits();
  /** The other side's fill ink within 1 px of (x, y) that `g` is not a line over. */
  const sameInk = (fill: Uint32Array, side: 0 | 1, x: number, y: number, g: number): boolean => {
    for (let yy = Math.max(0, y - 1); yy <= Math.min(H - 1, y + 1); yy++)
      for (let xx = Math.max(0, x - 1); xx <= Math.min(W - 1, x + 1); xx++)
        if (
          (fill[yy * stride + (xx >> 5)]! >>> (xx & 31)) & 1 &&
          g > lineBelow[greyAt(side, xx, yy)]!
        )
          return true;
    return false;
  };
  const padBits = W & 31 ? (2 ** (W & 31) - 1) | 0 : -1;
  const words = st.words;
  // Every geometry bit (x < W) for which sameInk holds moves to style. Only the words that held a
  // change are looked at (style.words), and in them only the bits with a fill pixel of the other
  // side within 1 px (the fill's 3x3 dilation, a word at a time): sameInk is false for the others.
  const pass = (
    geom: Uint32Array,
    style: Uint32Array,
    fill: Uint32Array | null,
    own: 0 | 1,
  ): number => {
    if (!fill) return 0;
    const other = own === 0 ? 1 : 0;
    let n = 0;
    const count = words ? words.length : stride * H;
    let y = 0,
      rowEnd = stride;
    for (let q = 0; q < count; q++) {
      const i = words ? words[q]! : q;
      const g0 = geom[i]!;
      if (g0 === 0) continue;
      while (i >= rowEnd) {
        y++;
        rowEnd += stride;
      }
      const k = i - (rowEnd - stride);
      let bits = g0 & (k === stride - 1 ? padBits : -1) & dilated3(fill, fill, stride, H, y, k);
      let back = 0;
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        const x = k * 32 + (31 - Math.clz32(low));
        if (sameInk(fill, other, x, y, greyAt(own, x, y))) back |= low;
      }
      if (back === 0) continue;
      geom[i] = g0 & ~back;
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

/** fillTexture's candidate and long-piece planes, kept all zeros between calls (grow only). */
let textureCand = new Uint32Array(0),
  textureLong = new Uint32Array(0);
function textureScratch(n: number): { cand: Uint32Array; longBits: Uint32Array } {
  if (textureCand.length < n) {
    textureCand = new Uint32Array(n);
    textureLong = new Uint32Array(n);
  }
  return { cand: textureCand, longBits: textureLong };
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
  greys?: { a: GreyImage; windowA?: PixelWindow | undefined; b: GreyImage },
): number {
  const fills = d.fills;
  if (!fills) return 0;
  const { stride, height } = d;
  const wx = greys?.windowA ? Math.round(greys.windowA.x) : 0,
    wy = greys?.windowA ? Math.round(greys.windowA.y) : 0;
  /** Grey of side `side` at output pixel (x, y): A through its window, aligned B; paper outside. */
  const greyAt = (side: number, x: number, y: number): number => {
    if (!greys || x < 0 || y < 0 || x >= d.width || y >= height) return 255;
    if (side === 1) return greys.b.data[y * d.width + x]!;
    const ax = x + wx,
      ay = y + wy;
    return ax < 0 || ay < 0 || ax >= greys.a.width || ay >= greys.a.height
      ? 255
      : greys.a.data[ay * greys.a.width + ax]!;
  };
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
  const words = d.style?.words;
  sides.forEach((sd, side) => {
    const fill = sd.fill;
    if (!fill) return;
    // Candidates, decided on the planes as they were: weak-only changed ink, not the fringe of a strong
    // stroke, in a fill that changed.
    // Only the words that held a change (style.words; all of them without it), in raster order.
    const n = stride * height;
    const count = words ? words.length : n;
    const { cand, longBits } = textureScratch(n);
    let any = false;
    for (let q = 0, y = 0, rowEnd = stride; q < count; q++) {
      const i = words ? words[q]! : q;
      const c = sd.changed[i]! & ~sd.strong[i]!;
      if (c === 0) continue;
      while (i >= rowEnd) {
        y++;
        rowEnd += stride;
      }
      const k = i - (rowEnd - stride);
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
    // Pixels of pieces found long (longBits): a flood that reaches one is long at once. The words
    // set in it, to clear them after (textureScratch).
    const longWords: number[] = [];
    const stack: number[] = [];
    const piece: number[] = [];
    const seen: number[] = [];
    const moves: number[] = [];
    try {
      for (let q = 0, y = 0, rowEnd = stride; q < count; q++) {
        const i0 = words ? words[q]! : q;
        if (cand[i0] === 0) continue;
        while (i0 >= rowEnd) {
          y++;
          rowEnd += stride;
        }
        const k = i0 - (rowEnd - stride);
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
          // A long piece of a hatch is still the tone's texture: its stripes repeat (hatchStripes).
          if (long && greys && hatchStripes(piece, (x, y) => greyAt(side, x, y))) long = false;
          else if (long)
            for (let j = 0; j < seen.length; j += 2) {
              const px = seen[j]!,
                li = seen[j + 1]! * stride + (px >> 5);
              if (longBits[li] === 0) longWords.push(li);
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
    } finally {
      // The scratch planes go back to all zeros: every candidate was decided (its bit cleared) unless
      // this threw.
      for (let q = 0; q < count; q++) cand[words ? words[q]! : q] = 0;
      for (const li of longWords) longBits[li] = 0;
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

/** Hatch periods looked for (hatchStripes), px: from 3 to 12 (0.4–1.5 mm at 200 dpi). */
const HATCH_MIN = 3,
  HATCH_MAX = 12;
/** A stripe's copy is at most this much lighter than it, the gap between copies this much lighter. */
const HATCH_DELTA = 8;

/**
 * Whether the pixels of a piece of line work (`piece`: x, y pairs) are stripes of a hatch — dark
 * pixels whose copies lie at one offset p (HATCH_MIN ≤ max(|px|, |py|) ≤ HATCH_MAX) on the same
 * side's image, as dark (within HATCH_DELTA), with lighter grey halfway (by HATCH_DELTA): at least
 * 80 % of the piece's pixels have such a copy at +p or −p. A line drawn over a tone (a terrain
 * contour) has the tone beside it, not copies of itself; a hatch's stripe joined to a grid line that
 * crosses the hatch is a long piece (fillTexture) with copies beside it all along.
 */
function hatchStripes(piece: number[], grey: (x: number, y: number) => number): boolean {
  const n = piece.length >> 1;
  if (n < 4) return false;
  const need = Math.ceil(0.8 * n);
  const g = new Int16Array(n);
  for (let q = 0; q < n; q++) g[q] = grey(piece[2 * q]!, piece[2 * q + 1]!);
  /** Whether pixel q of the piece has its copy at +p or −p (dx, dy), lighter halfway. */
  const copied = (q: number, dx: number, dy: number): boolean => {
    const x = piece[2 * q]!,
      y = piece[2 * q + 1]!,
      v = g[q]!;
    const hx = Math.round(dx / 2),
      hy = Math.round(dy / 2);
    return (
      (grey(x + dx, y + dy) <= v + HATCH_DELTA && grey(x + hx, y + hy) >= v + HATCH_DELTA) ||
      (grey(x - dx, y - dy) <= v + HATCH_DELTA && grey(x - hx, y - hy) >= v + HATCH_DELTA)
    );
  };
  // Offsets are tried only where two pixels of the piece (its first and its middle one) have their
  // copies: a line over a flat tone has none, and is decided after those reads.
  const mid = n >> 1;
  for (let dy = 0; dy <= HATCH_MAX; dy++)
    for (let dx = -HATCH_MAX; dx <= HATCH_MAX; dx++) {
      if (dy === 0 && dx <= 0) continue; // one of ±p
      if (Math.max(Math.abs(dx), dy) < HATCH_MIN) continue;
      if (!copied(0, dx, dy) || !copied(mid, dx, dy)) continue;
      let hit = 0,
        miss = 0;
      for (let q = 0; q < n && miss <= n - need; q++)
        if (copied(q, dx, dy)) hit++;
        else miss++;
      if (hit >= need) return true;
    }
  return false;
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
  const count = strongFaint(strongA);
  // The row's part of the transform, once per row.
  let ry0 = -1,
    rx = 0,
    ry = 0;
  takeBits(
    removed,
    W,
    H,
    stride,
    (x, y) => {
      if (y !== ry0) {
        ry0 = y;
        rx = b! * y + c! - half + 1;
        ry = e! * y + f! - half + 1;
      }
      const sx0 = Math.floor(a! * x + rx),
        sy0 = Math.floor(dd! * x + ry);
      for (let yy = Math.max(0, sy0); yy < Math.min(LH, sy0 + foot); yy++)
        for (let xx = Math.max(0, sx0); xx < Math.min(LW, sx0 + foot); xx++)
          if (L[yy * LW + xx] === LINE) return true;
      return false;
    },
    count.taken,
  );
  return givenBack(d, count.strong, count.faint);
}

/**
 * The set-bit walk of the rules that take pixels out of a mask plane (keepHiddenLineWork,
 * keepHiddenImage, fillInkStyle): every set bit of `plane` (rows of `stride` words; bits of x ≥ W
 * are not looked at) for which `take(x, y)` holds leaves the plane, and `taken(i, bits)` is told each
 * word's taken bits. Returns the number of bits taken.
 */
export function takeBits(
  plane: Uint32Array,
  W: number,
  H: number,
  stride: number,
  take: (x: number, y: number) => boolean,
  taken?: (i: number, bits: number) => void,
): number {
  let n = 0;
  for (let y = 0; y < H; y++) {
    const row = y * stride;
    for (let k = 0; k < stride; k++) {
      let bits = plane[row + k]!;
      if (bits === 0) continue;
      let back = 0;
      while (bits !== 0) {
        const low = bits & -bits;
        bits ^= low;
        const x = k * 32 + (31 - Math.clz32(low));
        if (x >= W) break;
        if (take(x, y)) back |= low;
      }
      if (back === 0) continue;
      plane[row + k] = plane[row + k]! & ~back;
      if (taken) taken(row + k, back);
      n += popcount32(back);
    }
  }
  return n;
}

/** Counts the taken removed pixels of takeBits as strong (on `strongA`) and faint (the rest). */
function strongFaint(strongA: Uint32Array): {
  strong: number;
  faint: number;
  taken: (i: number, bits: number) => void;
} {
  const c = {
    strong: 0,
    faint: 0,
    taken: (i: number, back: number): void => {
      const s = back & strongA[i]!;
      c.strong += popcount32(s);
      c.faint += popcount32(back & ~s);
    },
  };
  return c;
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
  const count = strongFaint(strongA);
  takeBits(
    removed,
    W,
    H,
    stride,
    (x, y) => classAtPixel(linesB, x, y, OBJECT_GREY.annotation) && isImage(x, y),
    count.taken,
  );
  return givenBack(d, count.strong, count.faint);
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

/** A stroke at most this wide (px, across it) is one pen's line (penStyle): 1.3 mm at 200 dpi. */
export const PEN_PX = 10;

/**
 * A grey image read at output pixel (x, y) as (x + dx, y + dy), 255 outside it; with `frame`, also
 * 255 outside the diff's W x H (aligned B), without it not (A through its window: a pixel just past
 * the frame is still A's).
 */
interface OtherGrey {
  data: Uint8Array;
  width: number;
  height: number;
  dx: number;
  dy: number;
  frame: boolean;
}

function otherGreyAt(g: OtherGrey, W: number, H: number, x: number, y: number): number {
  if (g.frame && (x < 0 || y < 0 || x >= W || y >= H)) return 255;
  const ax = x + g.dx,
    ay = y + g.dy;
  return ax >= 0 && ay >= 0 && ax < g.width && ay < g.height ? g.data[ay * g.width + ax]! : 255;
}

/**
 * Whether pixel (x, y) of a stroke of `own` (a packed ink plane) is the same line as ink of `other`
 * drawn with another pen: the stroke's cross-section through the pixel — its run of `own` ink across
 * the line (the shorter of the horizontal and the vertical run, each at most PEN_PX long between
 * paper on both ends) — holds line work of `other`, and where the pixel lies beyond that line work,
 * the other side's grey there (`g`) is a band that ends with the stroke: darker by HATCH_DELTA than
 * the other side's grey just past the run's far end (the stroke drawn lighter there, not a wide fill
 * it was drawn over). Bits outside W x H read as 0.
 */
function sameStroke(
  own: Uint32Array,
  other: Uint32Array,
  stride: number,
  W: number,
  H: number,
  x: number,
  y: number,
  g: OtherGrey,
): boolean {
  const row = y * stride;
  let x0 = x,
    x1 = x;
  while (x1 - x0 < PEN_PX) {
    const u = x0 - 1;
    if (u < 0 || !((own[row + (u >> 5)]! >>> (u & 31)) & 1)) break;
    x0 = u;
  }
  while (x1 - x0 < PEN_PX) {
    const u = x1 + 1;
    if (u >= W || !((own[row + (u >> 5)]! >>> (u & 31)) & 1)) break;
    x1 = u;
  }
  const col = x >> 5,
    sh = x & 31;
  let y0 = y,
    y1 = y;
  while (y1 - y0 < PEN_PX) {
    const u = y0 - 1;
    if (u < 0 || !((own[u * stride + col]! >>> sh) & 1)) break;
    y0 = u;
  }
  while (y1 - y0 < PEN_PX) {
    const u = y1 + 1;
    if (u >= H || !((own[u * stride + col]! >>> sh) & 1)) break;
    y1 = u;
  }
  const h = x1 - x0 < PEN_PX ? x1 - x0 : Infinity,
    v = y1 - y0 < PEN_PX ? y1 - y0 : Infinity;
  if (h === Infinity && v === Infinity) return false;
  // The run as positions t0..t1 along one axis, the pixel at t.
  const across = h <= v;
  const t0 = across ? x0 : y0,
    t1 = across ? x1 : y1,
    t = across ? x : y;
  let lo = Infinity,
    hi = -Infinity;
  // The run lies inside the frame (its ends were read there).
  if (across) {
    for (let u = t0; u <= t1; u++)
      if ((other[row + (u >> 5)]! >>> (u & 31)) & 1) {
        if (u < lo) lo = u;
        hi = u;
      }
  } else {
    for (let u = t0; u <= t1; u++)
      if ((other[u * stride + col]! >>> sh) & 1) {
        if (u < lo) lo = u;
        hi = u;
      }
  }
  if (hi < lo) return false;
  if (t >= lo && t <= hi) return true;
  const far = t > hi ? t1 + 1 : t0 - 1;
  const farGrey = across ? otherGreyAt(g, W, H, far, y) : otherGreyAt(g, W, H, x, far);
  return farGrey >= otherGreyAt(g, W, H, x, y) + HATCH_DELTA;
}

/**
 * penStyle's pass over one side: every pixel of `geom` (x < W) where the other side has ink
 * (`g` darker than paleThreshold) and that is the same stroke (sameStroke) leaves `geom` for
 * `style`. Returns the pixels moved.
 */
function penPass(
  geom: Uint32Array,
  style: Uint32Array,
  own: Uint32Array,
  other: Uint32Array,
  W: number,
  H: number,
  stride: number,
  g: OtherGrey,
  paleThreshold: number,
  words: Int32Array | undefined,
): number {
  let n = 0;
  // Only the words that held a change (style.words), in raster order; all of them without it.
  const count = words ? words.length : stride * H;
  let y = 0,
    rowEnd = stride;
  for (let q = 0; q < count; q++) {
    const i = words ? words[q]! : q;
    let bits = geom[i]!;
    if (bits === 0) continue;
    while (i >= rowEnd) {
      y++;
      rowEnd += stride;
    }
    const k = i - (rowEnd - stride);
    let back = 0;
    while (bits !== 0) {
      const low = bits & -bits;
      bits ^= low;
      const x = k * 32 + (31 - Math.clz32(low));
      if (x >= W) break;
      if (
        otherGreyAt(g, W, H, x, y) < paleThreshold &&
        sameStroke(own, other, stride, W, H, x, y, g)
      )
        back |= low;
    }
    if (back === 0) continue;
    geom[i] = geom[i]! & ~back;
    style[i] = style[i]! | back;
    n += popcount32(back);
  }
  return n;
}

/**
 * Another pen on the same line (issue 17, Build 2; barber A202's window frames, drawn 5–7 px wide
 * and dark in the old issue, 2 px dark beside a grey band of the frame's width in the new): styleMasks
 * calls a changed pixel style when the other side's line work lies within 2 px of it, so the part of
 * a heavier stroke further than 2 px from the thinner one stayed geometry — red slivers along the
 * frames (image analysis puts the new issue's grey band in its fill layer, and it is too light for a
 * line over a tone by fillInkStyle's margin). A geometry pixel (style.geomRemoved / geomAdded) where
 * the other side still has ink (grey < paleThreshold, of any layer) and whose stroke's cross-section
 * on its own side (its run of weak ink across the line, at most PEN_PX wide between paper at both
 * ends) holds line work of the other side (weak ink), with the other side's ink there a band that
 * ends with the stroke (sameStroke), is the same line drawn with another pen: it moves to
 * style.removed / style.added. A line that went or came has paper on the other side, or no line of
 * the other side in its cross-section, or the other side's fill going on past it: a leader drawn
 * along an old edge over a fill (beam S101's callout) stays geometry; a wall drawn solid (wider than
 * PEN_PX) is not a pen. `greyA` is the image A's masks were packed
 * from (through `windowA`), `greyB` aligned B. Returns the pixels moved.
 */
export function penStyle(
  d: DiffResult,
  greyA: GreyImage,
  windowA: PixelWindow | undefined,
  greyB: GreyImage,
  paleThreshold = 240,
): number {
  const st = d.style;
  if (!st) return 0;
  const { width: W, height: H, stride, weakA, weakB } = d;
  const wx = windowA ? Math.round(windowA.x) : 0,
    wy = windowA ? Math.round(windowA.y) : 0;
  const ofA: OtherGrey = { ...greyA, dx: wx, dy: wy, frame: false };
  const ofB: OtherGrey = { data: greyB.data, width: W, height: H, dx: 0, dy: 0, frame: true };
  const r = penPass(
    st.geomRemoved,
    st.removed,
    weakA,
    weakB,
    W,
    H,
    stride,
    ofB,
    paleThreshold,
    st.words,
  );
  const a = penPass(
    st.geomAdded,
    st.added,
    weakB,
    weakA,
    W,
    H,
    stride,
    ofA,
    paleThreshold,
    st.words,
  );
  st.removed_px += r;
  st.added_px += a;
  return r + a;
}

/** A changed piece of at most this many pixels (8-connected) is a speck (speckNoise): a 3 x 3 dot. */
export const SPECK_PX = 9;

/**
 * Specks are noise (issue 17, Build 2; barber A102's stippled floors): a stipple dot printed in both
 * issues, lighter over a tone in one (image analysis keeps it in the fill layer) and dark on paper in
 * the other, reads as a 1–3 px added or removed speck, hundreds of them over a floor — drawn green
 * or red and grouped into regions. A changed piece (8-connected pixels of `added` or `removed`, style
 * or geometry) of at most SPECK_PX pixels where the other side has a dot of its own within 2 px (a
 * pixel of ink darker by 8 than the median of the ring 3–4 px around the piece: a dot over a tone,
 * or on paper) is the same dot: it is given back as unchanged (its bits leave `added` / `removed`
 * and the style masks; the counts and the score follow). A speck with nothing of the other side
 * there (a dot that came or went, a stroke's fragment on paper) stays a change. `greyA` is the image
 * A's masks were packed from (through `windowA`), `greyB` aligned B. Returns the pixels given back.
 * The pieces are found over the changed masks' runs (small-pieces.ts), not flooded pixel by pixel;
 * the results are the first version's to the bit (speck-runs.test.ts), including its quirk: a
 * pixel of a piece that stays, in the same 32-px word of the piece's first row as its first pixel,
 * is looked at once more as a speck of one pixel (and goes when the other side has a dot there).
 */
export function speckNoise(
  d: DiffResult,
  greyA: GreyImage,
  windowA: PixelWindow | undefined,
  greyB: GreyImage,
  paleThreshold = 240,
): number {
  const { width: W, height: H, stride } = d;
  const wx = windowA ? Math.round(windowA.x) : 0,
    wy = windowA ? Math.round(windowA.y) : 0;
  const st = d.style;
  const counts = [0, 0, 0, 0]; // strong removed, faint removed, strong added, faint added
  for (let side = 0; side < 2; side++) {
    const changed = side === 0 ? d.removed : d.added;
    const strong = side === 0 ? d.strongA : d.strongB;
    const style = st ? (side === 0 ? [st.removed, st.geomRemoved] : [st.added, st.geomAdded]) : [];
    // The other side's grey: aligned B (the diff's frame) for a removed speck, A through its window.
    const other =
      side === 0
        ? { data: greyB.data, width: W, height: H, dx: 0, dy: 0 }
        : { data: greyA.data, width: greyA.width, height: greyA.height, dx: wx, dy: wy };
    let styleBack = 0;
    const clear = (y: number, x0: number, x1: number) => {
      for (let x = x0; x <= x1; x++) {
        const j = y * stride + (x >> 5),
          t = 1 << (x & 31);
        changed[j] = changed[j]! & ~t;
        if (style.length > 0) {
          if (style[0]![j]! & t) styleBack++;
          style[0]![j] = style[0]![j]! & ~t;
          style[1]![j] = style[1]![j]! & ~t;
        }
        if (strong[j]! & t) counts[2 * side]!++;
        else counts[2 * side + 1]!++;
      }
    };
    const lab = labelRuns(changed, W, H, stride, st?.words);
    if (lab.n === 0) continue;
    listPieces(lab, SPECK_PX);
    const { ys, xs0, xs1, root, size, rowStart, head, next } = lab;
    // The pieces as the rule has always visited them: word by word in raster order, a piece from its
    // first pixel (its root run's first). A speck with a dot of the other side near it goes whole.
    // The pixels of a piece that goes on in the word of its first pixel, when the piece stays (larger
    // than a speck, or no dot near it), are each looked at again as a speck of one pixel, in order,
    // until one goes: then the rest of the word's pieces already looked at are passed over.
    for (let y = 0; y < H; y++) {
      const r0 = rowStart[y]!,
        r1 = rowStart[y + 1]!;
      let r = r0;
      while (r < r1) {
        // The next word of this row holding a piece's first pixel.
        while (r < r1 && root[r] !== r) r++;
        if (r >= r1) break;
        const k = xs0[r]! >> 5,
          lo = k * 32,
          hi = lo + 31;
        // This row's runs over the word, from the first piece starting in it.
        let e = r;
        while (e < r1 && xs0[e]! <= hi) e++;
        // After a piece or pixel went at x, the word's other pixels of pieces whose first pixel is at
        // or before x are passed over (they were looked at: their bits are done).
        let passed = -1;
        for (let q = r; q < e; q++) {
          const rq = root[q]!;
          // Only the pieces whose first pixel is in this word: the others were done before it.
          if (rq < r || ys[rq] !== y) continue;
          const a = Math.max(xs0[q]!, lo),
            b = Math.min(xs1[q]!, hi);
          const seedX = xs0[rq]!;
          for (let x = a; x <= b; x++) {
            if (rq === q && x === seedX) {
              // A piece's first pixel.
              if (size[rq]! > SPECK_PX) continue;
              let x0 = Infinity,
                x1 = -Infinity,
                y1 = -Infinity;
              for (let i = head[rq]!; i !== -1; i = next[i]!) {
                if (xs0[i]! < x0) x0 = xs0[i]!;
                if (xs1[i]! > x1) x1 = xs1[i]!;
                if (ys[i]! > y1) y1 = ys[i]!;
              }
              if (!dotNear(other, W, H, x0, y, x1, y1, paleThreshold)) continue;
              for (let i = head[rq]!; i !== -1; i = next[i]!) clear(ys[i]!, xs0[i]!, xs1[i]!);
              passed = x;
            } else {
              if (seedX <= passed) continue;
              if (!dotNear(other, W, H, x, y, x, y, paleThreshold)) continue;
              clear(y, x, x);
              passed = x;
            }
          }
        }
        r = e;
      }
    }
    if (st) {
      if (side === 0) st.removed_px -= styleBack;
      else st.added_px -= styleBack;
    }
  }
  const [sr, fr, sa, fa] = counts as [number, number, number, number];
  if (sr + fr + sa + fa === 0) return 0;
  const s = d.stats;
  s.removed_px -= sr;
  s.added_px -= sa;
  s.unchanged_px += sr + sa;
  const union = s.added_px + s.removed_px + s.unchanged_px;
  s.changed_fraction = union > 0 ? (s.added_px + s.removed_px) / union : 0;
  d.score = 1 - s.changed_fraction;
  d.faint.removed_px = Math.max(0, d.faint.removed_px - fr);
  d.faint.added_px = Math.max(0, d.faint.added_px - fa);
  return sr + fr + sa + fa;
}

/** The ring's greys (dotNear), kept: at most (9 + 8)^2 of them for a speck's box. */
const speckRing = new Uint8Array(512);

/**
 * Whether a grey image (`g`, read at x + dx, y + dy; 255 outside it and outside the diff's W x H) has
 * a dot within 2 px of box x0..x1, y0..y1: a pixel there darker than `paleThreshold` and by 8 than
 * the median of the ring 2–4 px outside the box (the upper median, as sorting the ring gives it).
 */
function dotNear(
  g: { data: Uint8Array; width: number; height: number; dx: number; dy: number },
  W: number,
  H: number,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  paleThreshold: number,
): boolean {
  const { data, width: gw, height: gh, dx, dy } = g;
  const at = (x: number, y: number): number => {
    if (x < 0 || y < 0 || x >= W || y >= H) return 255;
    const ax = x + dx,
      ay = y + dy;
    return ax < 0 || ay < 0 || ax >= gw || ay >= gh ? 255 : data[ay * gw + ax]!;
  };
  // The darkest pixel near the box first: with none darker than paleThreshold (most boxes), no ring.
  let min = 255;
  for (let y = y0 - 2; y <= y1 + 2; y++)
    for (let x = x0 - 2; x <= x1 + 2; x++) {
      const v = at(x, y);
      if (v < min) min = v;
    }
  if (!(min < paleThreshold)) return false;
  let n = 0;
  for (let y = y0 - 4; y <= y1 + 4; y++)
    for (let x = x0 - 4; x <= x1 + 4; x++) {
      if (x >= x0 - 2 && x <= x1 + 2 && y >= y0 - 2 && y <= y1 + 2) continue;
      speckRing[n++] = at(x, y);
    }
  const ring = speckRing.subarray(0, n).sort();
  return min < ring[n >> 1]! - 8;
}
