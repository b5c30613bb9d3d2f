// Pixel comparison of two sheet renders on 1-bit packed ink masks (sheet pixels of A, origin top-left).
//
// Masks: bit (x & 31) of word (y·stride + x>>5) is pixel (x, y). Two masks per image:
//   strong = grey < inkThreshold   (the ink that counts),
//   weak   = grey < weakThreshold  (also faint anti-aliased edges and light fills).
// A pixel is a change only when it is strong ink on one side and there is not even weak ink within
// 1 px (3x3 dilation) on the other side:
//   added   = strongB ∧ ¬dilate(weakA),   removed = strongA ∧ ¬dilate(weakB).
// The weak/strong split (hysteresis) is what keeps anti-aliasing and sub-pixel ghosts of a resampled
// line from counting: a line that went from 150 to 190 grey after resampling is still weak ink.
// Faint-ink pass: light-grey content (date stamps, grey text, screened linework: grey between the ink
// and the weak threshold) never counts as strong ink, so its changes are found one level down with the
// same hysteresis: a third mask per image, pale = grey < paleThreshold (default 240), and
//   faint added = weakB ∧ ¬dilate(paleA),   faint removed = weakA ∧ ¬dilate(paleB).
// Faint changes join the added/removed masks (regions and overlays show them) but not the counts or
// the score, which stay on strong ink.
// B is sampled through the transform (nearest neighbour) straight into A's frame from B's own packed
// masks, word by word, skipping words whose source bits are all paper: no warped grey copy is made.
import type { GreyImage } from '../types';
import {
  diffMasksSimd,
  packRowsSimd,
  simdPackAvailable,
  warpSegments,
  type DiffCounts,
  type WarpFields,
} from './masks-simd';
import { invertAffine, type Affine } from './register';

export interface DiffOptions {
  /** Grey below this is ink (0–255). Default 160: keeps light grey fills (≈ 176–240) out of the count. */
  inkThreshold?: number;
  /** Grey below this is faint ink, used only as tolerance. Default 208. Must be ≥ inkThreshold. */
  weakThreshold?: number;
  /**
   * Grey below this is pale ink: the tolerance of the faint-ink pass. Default 240. Must be ≥
   * weakThreshold; equal to it turns the faint-ink pass off.
   */
  paleThreshold?: number;
}

export interface DiffStats {
  /** Strong-ink pixels of aligned B with no ink of A within 1 px. */
  added_px: number;
  /** Strong-ink pixels of A with no ink of aligned B within 1 px. */
  removed_px: number;
  /** Strong-ink pixels of A ∪ aligned B that are neither added nor removed. */
  unchanged_px: number;
  /** (added_px + removed_px) / (strong-ink pixels of A ∪ aligned B); 0 when there is no ink at all. */
  changed_fraction: number;
}

export interface DiffResult {
  width: number;
  height: number;
  /** Uint32 words per mask row. */
  stride: number;
  strongA: Uint32Array;
  weakA: Uint32Array;
  /** B's masks resampled into A's frame. */
  strongB: Uint32Array;
  weakB: Uint32Array;
  /** Pale ink of A and of aligned B (the same arrays as weakA / weakB when the faint pass is off). */
  paleA: Uint32Array;
  paleB: Uint32Array;
  /** Changed pixels: strong-ink changes plus faint-ink changes (see the header). */
  added: Uint32Array;
  removed: Uint32Array;
  /**
   * The fill layers (layers.ts) when either side has fills: A's and aligned B's fill pixels and the fill
   * changes. The masks above are then line work only.
   */
  fills?: {
    a: Uint32Array | null;
    b: Uint32Array | null;
    added: Uint32Array;
    removed: Uint32Array;
    added_px: number;
    removed_px: number;
    union_px: number;
  };
  /**
   * Style changes (layers.ts styleMasks): the part of `added` / `removed` within 2 px of the other
   * side's ink (another lineweight or pen shade of the same geometry). Overlays draw them as unchanged
   * ink; regions report them apart, as `style`.
   */
  style?: {
    added: Uint32Array;
    removed: Uint32Array;
    added_px: number;
    removed_px: number;
    /** The rest of `added` / `removed`: geometry. */
    geomAdded: Uint32Array;
    geomRemoved: Uint32Array;
    /**
     * The words (indices into the planes, ascending) where `added` or `removed` held a bit when the
     * style masks were made. The rules after it only take bits out of those planes (and of the style
     * and geometry planes, their subsets), so these words are all they have to look at: a few
     * thousand of the page's ~940 000 at 200 dpi. Absent: every word is looked at.
     */
    words?: Int32Array;
  };
  /**
   * Ink drawn by the pages' annotations (layers.ts objectLayers: clouds, callouts, markups), A's and
   * aligned B's, when a side's line-work image says where they are. Still line work in the masks above;
   * regions measure their share of a change (ChangeRegion.annotation_share).
   */
  annotations?: { a: Uint32Array | null; b: Uint32Array | null };
  stats: DiffStats;
  /** Faint-ink changes (weak ink with no pale ink within 1 px on the other side), in `added`/`removed` too. */
  faint: { added_px: number; removed_px: number };
  /**
   * Similarity in [0, 1]: 1 − changed ink / union ink = 1 − stats.changed_fraction.
   * 1 means no ink differs after alignment (beyond the 1 px tolerance).
   */
  score: number;
}

export interface InkMasks {
  width: number;
  height: number;
  stride: number;
  strong: Uint32Array;
  weak: Uint32Array;
  /** grey < paleThreshold; the same array as `weak` when the faint-ink pass is off. */
  pale: Uint32Array;
}

/** A rectangle of an image in its pixels (origin top-left); may reach outside the image (paper there). */
export interface PixelWindow {
  x: number;
  y: number;
  width: number;
  height: number;
}

const H = 0x80808080;

/**
 * SWAR "byte < t" for the 4 bytes of w: returns a word with bit 7 of each byte set where byte < t.
 * For t ≤ 128: byte ≥ t ⟺ high bit set or low 7 bits ≥ t. For t > 128: byte ≥ t ⟺ high bit set and
 * low 7 bits ≥ t − 128. (w | H) − T never borrows across bytes because every byte is ≥ 0x80 and T's
 * bytes are ≤ 0x80.
 */
function lessThanMask(w: number, T: number, high: boolean): number {
  const d = ((w | H) >>> 0) - T;
  const ge = high ? d & w & H : (d | w) & H;
  return ~ge & H;
}

function thresholdConst(t: number): { T: number; high: boolean } {
  if (!(t >= 1 && t <= 255) || !Number.isInteger(t))
    throw new Error(`Expected an integer ink threshold in 1..255 but received ${t}`);
  return t > 128
    ? { T: (t - 128) * 0x01010101, high: true }
    : { T: (t * 0x01010101) >>> 0, high: false };
}

/**
 * Where the mask arrays come from: fresh ones, or kept ones handed out zeroed (CompareBuffers, for a
 * process that runs compare after compare: no first-touch page faults). `slot` names the array.
 */
export interface WordSource {
  words(slot: string, n: number): Uint32Array;
  /** words() without the zeroing, for arrays the caller writes in full (CompareBuffers). */
  wordsToOverwrite?(slot: string, n: number): Uint32Array;
}

/** The planes of an InkMasks: packInk's slots are `${slot}weak` etc. */
export const MASK_PLANES = ['weak', 'strong', 'pale'] as const;
/** diffMasks' slots. */
export const DIFF_SLOTS = ['added', 'removed'] as const;

function newWords(ws: WordSource | undefined, slot: string, n: number): Uint32Array {
  return ws ? ws.words(slot, n) : new Uint32Array(n);
}

/**
 * Pack a grey image (or a window of it, see PixelWindow) into strong/weak/pale ink masks, 32 pixels
 * per step: rows are read through a Uint32 view (in place when they start on a 4-byte boundary, else
 * copied into an aligned scratch row padded with paper), 4 pixels per load; groups of 8 words whose bytes are all ≥ paleThreshold (the common case: paper) are
 * skipped with one test, and weak/strong are only computed where there is pale ink. With a window,
 * mask pixel (x, y) is image pixel (window.x + x, window.y + y): no cropped copy of the image is made.
 */
export function packInk(
  img: GreyImage,
  inkThreshold = 160,
  weakThreshold = 208,
  paleThreshold = Math.max(240, weakThreshold),
  window?: PixelWindow,
  ws?: WordSource,
  slot = '',
): InkMasks {
  if (weakThreshold < inkThreshold)
    throw new Error(
      `Expected weakThreshold ≥ inkThreshold but received ${weakThreshold} < ${inkThreshold}`,
    );
  if (paleThreshold < weakThreshold)
    throw new Error(
      `Expected paleThreshold ≥ weakThreshold but received ${paleThreshold} < ${weakThreshold}`,
    );
  // The SIMD packer writes every word of every row: kept arrays need no zeroing first.
  const whole = maskKernels.simd && simdPackAvailable();
  const m = allocMasks(img, weakThreshold, paleThreshold, window, ws, slot, whole);
  packInkRows(img, m, 0, m.height, inkThreshold, weakThreshold, paleThreshold, window);
  return m;
}

function allocMasks(
  img: GreyImage,
  weakThreshold: number,
  paleThreshold: number,
  window?: PixelWindow,
  ws?: WordSource,
  slot = '',
  overwrite = false,
): InkMasks {
  const W = window ? Math.max(1, Math.round(window.width)) : img.width,
    Ht = window ? Math.max(1, Math.round(window.height)) : img.height;
  const stride = Math.ceil(W / 32);
  const [weakP, strongP, paleP] = MASK_PLANES;
  const take = (name: string) =>
    overwrite && ws?.wordsToOverwrite
      ? ws.wordsToOverwrite(`${slot}${name}`, stride * Ht)
      : newWords(ws, `${slot}${name}`, stride * Ht);
  const weak = take(weakP);
  return {
    width: W,
    height: Ht,
    stride,
    strong: take(strongP),
    weak,
    pale: paleThreshold === weakThreshold ? weak : take(paleP),
  };
}

/**
 * Which loops packInk and diffMasks run: `simd` (default) uses masks-simd.ts where WebAssembly SIMD is
 * available, else the JS loops here; tests set it false to run the JS loops.
 */
export const maskKernels = { simd: true };

/** Pack rows [y0, y1) of the (window of the) image into `m` (allocated by allocMasks). */
function packInkRows(
  img: GreyImage,
  m: InkMasks,
  y0: number,
  y1: number,
  inkThreshold: number,
  weakThreshold: number,
  paleThreshold: number,
  window?: PixelWindow,
): void {
  // Checks the thresholds (integers 1..255) for both paths.
  thresholdConst(inkThreshold);
  thresholdConst(weakThreshold);
  thresholdConst(paleThreshold);
  if (
    maskKernels.simd &&
    packRowsSimd(img, m, y0, y1, inkThreshold, weakThreshold, paleThreshold, window)
  )
    return;
  packInkRowsJs(img, m, y0, y1, inkThreshold, weakThreshold, paleThreshold, window);
}

/** packInkRows in JS: SWAR on 4 pixels per word, paper groups skipped. */
function packInkRowsJs(
  img: GreyImage,
  m: InkMasks,
  y0: number,
  y1: number,
  inkThreshold: number,
  weakThreshold: number,
  paleThreshold: number,
  window?: PixelWindow,
): void {
  const { width: IW, height: IH, data } = img;
  const wx = window ? Math.round(window.x) : 0,
    wy = window ? Math.round(window.y) : 0;
  const { width: W, stride, strong, weak, pale } = m;
  const samePale = paleThreshold === weakThreshold;
  const row = new Uint8Array(stride * 32);
  const r32 = new Uint32Array(row.buffer);
  const s = thresholdConst(inkThreshold),
    wk = thresholdConst(weakThreshold),
    pl = thresholdConst(paleThreshold);
  const sT = s.T,
    sH = s.high,
    wT = wk.T,
    wH = wk.high,
    pT = pl.T,
    pH = pl.high;
  // The part of each row inside the image, in window x: [cx0, cx1).
  const cx0 = Math.max(0, -wx),
    cx1 = Math.min(W, IW - wx);
  const clipped = cx0 > 0 || cx1 < W;
  // Rows of the image start on a 4-byte boundary (and the window is not clipped): the whole 32-pixel
  // groups are read in place through a word view of the image, and only a row's partial last group goes
  // through the padded scratch row — no copy of every row.
  const inPlace = !clipped && (IW & 3) === 0 && (wx & 3) === 0 && (data.byteOffset & 3) === 0;
  const img32 = inPlace
    ? new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2)
    : new Uint32Array(0);
  const fullGroups = inPlace ? W >>> 5 : 0;
  row.fill(255);
  for (let y = y0; y < y1; y++) {
    const sy = wy + y;
    if (sy < 0 || sy >= IH || cx1 <= cx0) continue; // outside the image: paper
    if (clipped) row.fill(255);
    const src = sy * IW + wx;
    if (inPlace) {
      const tail = fullGroups * 32;
      if (tail < W) row.set(data.subarray(src + tail, src + W), tail);
    } else {
      row.set(data.subarray(src + cx0, src + cx1), cx0);
    }
    const ob = y * stride;
    const src32 = src >>> 2;
    for (let k = 0; k < stride; k++) {
      const q32 = k < fullGroups ? img32 : r32;
      const b = k < fullGroups ? src32 + k * 8 : k * 8;
      // AND of the bytes is ≤ each byte: if it is paper-light everywhere, so are all 32 pixels.
      const all =
        q32[b]! &
        q32[b + 1]! &
        q32[b + 2]! &
        q32[b + 3]! &
        q32[b + 4]! &
        q32[b + 5]! &
        q32[b + 6]! &
        q32[b + 7]!;
      if (lessThanMask(all, pT, pH) === 0) continue;
      // Only pale ink here (anti-aliasing fringes, light fills): no weak or strong bit to pack.
      const inkHere = samePale || lessThanMask(all, wT, wH) !== 0;
      let pm = 0,
        wm = 0,
        sm = 0;
      // Per word: SWAR "byte < t" (lessThanMask, written out: V8 did not inline the helper calls
      // here) and bit 7 of each byte (pixels 0..3) gathered into a nibble with one multiply.
      for (let j = 0; j < 8; j++) {
        const w = q32[b + j]!;
        const sh = j << 2;
        const wh = (w | H) >>> 0;
        const dp = wh - pT;
        const lp = ~(pH ? dp & w & H : (dp | w) & H) & H;
        if (lp === 0) continue; // four paper pixels
        pm |= ((Math.imul(lp >>> 7, 0x204081) >>> 21) & 0xf) << sh;
        if (inkHere) {
          const dw = wh - wT;
          const lw = ~(wH ? dw & w & H : (dw | w) & H) & H;
          if (lw !== 0) {
            wm |= ((Math.imul(lw >>> 7, 0x204081) >>> 21) & 0xf) << sh;
            const ds = wh - sT;
            const ls = ~(sH ? ds & w & H : (ds | w) & H) & H;
            sm |= ((Math.imul(ls >>> 7, 0x204081) >>> 21) & 0xf) << sh;
          }
        }
      }
      if (!samePale) pale[ob + k] = pm;
      if (wm !== 0) weak[ob + k] = wm;
      if (sm !== 0) strong[ob + k] = sm;
    }
  }
}

function isIdentity(t: readonly number[]): boolean {
  return t[0] === 1 && t[1] === 0 && t[2] === 0 && t[3] === 0 && t[4] === 1 && t[5] === 0;
}

/** The same words as signed 32-bit integers. */
function i32(m: Uint32Array): Int32Array {
  return new Int32Array(m.buffer, m.byteOffset, m.length);
}

/**
 * What warpMasks' row writers read and write (one monomorphic shape): the inverse map, B's size and
 * WarpFields (masks-simd.ts: source masks as Int32 views — loads stay small integers, a Uint32 load
 * ≥ 2^31 deoptimised —, output masks, row segments).
 */
interface WarpCtx extends WarpFields {
  ia: number;
  ib: number;
  ic: number;
  id: number;
  ie: number;
  iF: number;
  SW: number;
}

/** Most segments segmentRow makes for one row; a row that needs more takes the per-word writer. */
const MAX_SEGMENTS = 256;

/**
 * Resample B's masks into an outW x outH frame through `t` (B → A), nearest neighbour: output pixel
 * (x, y) is source pixel (⌊ia·x + (ib·y + ic + 0.5)⌋, ⌊id·x + (ie·y + iF + 0.5)⌋) of the inverse map,
 * paper outside B.
 *
 * Rows are cut into segments over which the source row is constant and the source x is x plus a
 * constant (segmentRow: a few per row at a scale near 1 — a 0.2 % scale slips one pixel every ~500);
 * every word inside one segment is then a funnel shift of two source words with no arithmetic on
 * coordinates, skipped when the source holds no pale ink; only words across a segment boundary or the
 * edge of B gather pixel by pixel. Rows segmentRow cannot cut (|ia − 1| ≤ 1e-9, scales far from 1,
 * more than MAX_SEGMENTS segments) take the per-word writer (warpRowWords). Both give the same bits as
 * the per-pixel formula above.
 */
export function warpMasks(
  src: InkMasks,
  t: readonly number[],
  outW: number,
  outH: number,
  ws?: WordSource,
): InkMasks {
  const stride = Math.ceil(outW / 32);
  if (isIdentity(t) && src.width === outW && src.height === outH) return src;
  const strong = newWords(ws, 'warp.strong', stride * outH);
  const weak = newWords(ws, 'warp.weak', stride * outH);
  const samePale = src.pale === src.weak;
  const pale = samePale ? weak : newWords(ws, 'warp.pale', stride * outH);
  const inv = invertAffine(t);
  const c: WarpCtx = {
    ia: inv[0],
    ib: inv[1],
    ic: inv[2],
    id: inv[3],
    ie: inv[4],
    iF: inv[5],
    SW: src.width,
    SH: src.height,
    ss: src.stride,
    sp: i32(src.pale),
    sw: i32(src.weak),
    sst: i32(src.strong),
    outW,
    stride,
    samePale,
    pale,
    weak,
    strong,
    segX0: new Int32Array(MAX_SEGMENTS),
    segX1: new Int32Array(MAX_SEGMENTS),
    segDx: new Int32Array(MAX_SEGMENTS),
    segSy: new Int32Array(MAX_SEGMENTS),
  };
  const segOk = segmentable(c, outH);
  const done =
    segOk &&
    maskKernels.simd &&
    warpSegments(
      c,
      outH,
      (y) => segmentRow(c, y),
      (y) => warpRowWords(c, y),
    );
  if (!done)
    for (let y = 0; y < outH; y++) {
      const n = segOk ? segmentRow(c, y) : 0;
      if (n > 0) warpRowSegments(c, y, n);
      else warpRowWords(c, y);
    }
  return { width: outW, height: outH, stride, strong, weak, pale };
}

/**
 * Whether segmentRow may cut this map's rows: every step of the source x must lie on one side of 1
 * (see segmentRow), with coordinates small enough that rounding stays far below the 1e-9 margin
 * (< 2^16 px; segmentRow checks the row offsets).
 */
function segmentable(c: WarpCtx, outH: number): boolean {
  return (
    c.ia > 0 &&
    c.ia < 2 &&
    Math.abs(c.ia - 1) > 1e-9 &&
    c.outW < 1 << 16 &&
    outH < 1 << 16 &&
    c.SW < 1 << 16 &&
    c.SH < 1 << 16
  );
}

/**
 * Cut output row y into segments [x0, x1] with a constant source row sy(x) = ⌊ry + id·x⌋ and a constant
 * sx(x) − x, where sx(x) = ⌊rx + ia·x⌋ (the same floating-point expressions as the per-pixel formula).
 * Returns the number of segments (0: more than MAX_SEGMENTS, or row offsets of 2^17 px or more).
 *
 * Why the end points decide: rounding is monotone, so sx and sy are monotone in x. With ia > 1 + 1e-9
 * every step sx(x + 1) − sx(x) is ≥ 1 (the exact step is ia; with |ia·x|, |rx| < 2^17 each rounding is
 * at most half an ulp of 2^18, ~3e-11, so the computed step is within ~1.2e-10 of ia), with
 * ia < 1 − 1e-9 every step is ≤ 1: either way sx(x) − x is monotone, so two points with equal sx − x
 * and equal sy have equal values everywhere between them. The end of each segment is then found by
 * bisection.
 */
function segmentRow(c: WarpCtx, y: number): number {
  const { ia, id, outW, segX0, segX1, segDx, segSy } = c;
  const rx = c.ib * y + c.ic + 0.5,
    ry = c.ie * y + c.iF + 0.5;
  if (!(Math.abs(rx) < 1 << 17 && Math.abs(ry) < 1 << 17)) return 0;
  let n = 0;
  let a = 0;
  while (a < outW) {
    if (n === MAX_SEGMENTS) return 0;
    const dx = Math.floor(rx + ia * a) - a,
      sy = Math.floor(ry + id * a);
    let lo = a,
      hi = outW - 1;
    if (Math.floor(rx + ia * hi) - hi !== dx || Math.floor(ry + id * hi) !== sy) {
      // Invariant: lo is in the segment, hi is not.
      while (hi - lo > 1) {
        const mid = (lo + hi) >>> 1;
        if (Math.floor(rx + ia * mid) - mid === dx && Math.floor(ry + id * mid) === sy) lo = mid;
        else hi = mid;
      }
      hi = lo;
    }
    segX0[n] = a;
    segX1[n] = hi;
    segDx[n] = dx;
    segSy[n] = sy;
    n++;
    a = hi + 1;
  }
  return n;
}

/**
 * Write output row y from its n segments (segmentRow). Each word is the OR of its pieces, one per
 * segment it overlaps (almost always one): a piece is a funnel shift of two source words of the
 * segment's row, at the segment's x offset, masked to the piece's bits. Source words left or right of
 * the row read as paper, and the bits past B's width in its last word are paper already (packInk pads
 * rows with paper), so B's left and right edges need no pixel test.
 */
function warpRowSegments(c: WarpCtx, y: number, n: number): void {
  const {
    SH,
    ss,
    sp,
    sw,
    sst,
    outW,
    stride,
    samePale,
    pale,
    weak,
    strong,
    segX0,
    segX1,
    segDx,
    segSy,
  } = c;
  const ob = y * stride;
  let si = 0;
  for (let k = 0; k < stride; k++) {
    const x0 = k * 32;
    const x1 = Math.min(outW, x0 + 32) - 1;
    while (segX1[si]! < x0) si++; // segments cover [0, outW) in order: now segX0[si] ≤ x0
    let pv = 0,
      wv = 0,
      sv = 0;
    for (let q = si; q < n; q++) {
      const p0 = Math.max(x0, segX0[q]!);
      if (p0 > x1) break;
      const p1 = Math.min(x1, segX1[q]!);
      const sy = segSy[q]!;
      if (sy < 0 || sy >= SH) continue; // above or below B: paper
      const sxs = p0 + segDx[q]!; // source x of the piece's first pixel
      const kk = sxs >> 5, // floor, also for negative x
        sh = sxs & 31;
      const rb = sy * ss;
      const in0 = kk >= 0 && kk < ss,
        in1 = kk + 1 >= 0 && kk + 1 < ss;
      const a0 = in0 ? sp[rb + kk]! : 0,
        a1 = in1 ? sp[rb + kk + 1]! : 0;
      if ((a0 | a1) === 0) continue; // paper (pale ⊇ weak ⊇ strong)
      const nb = p1 - p0 + 1,
        at = p0 - x0;
      const keep = nb === 32 ? -1 : ~(-1 << nb); // not (1 << nb) − 1: it leaves int32 at nb = 31
      let pp: number, ww: number, ssv: number;
      if (sh === 0) {
        pp = a0;
        ww = in0 ? sw[rb + kk]! : 0;
        ssv = in0 ? sst[rb + kk]! : 0;
      } else {
        pp = (a0 >>> sh) | (a1 << (32 - sh));
        ww = ((in0 ? sw[rb + kk]! : 0) >>> sh) | ((in1 ? sw[rb + kk + 1]! : 0) << (32 - sh));
        ssv = ((in0 ? sst[rb + kk]! : 0) >>> sh) | ((in1 ? sst[rb + kk + 1]! : 0) << (32 - sh));
      }
      pv |= (pp & keep) << at;
      wv |= (ww & keep) << at;
      sv |= (ssv & keep) << at;
    }
    if (pv === 0) continue;
    if (!samePale) pale[ob + k] = pv;
    weak[ob + k] = wv;
    strong[ob + k] = sv;
  }
}

/** Output word k of row y, pixel by pixel through the per-pixel formula. */
function gatherWord(c: WarpCtx, y: number, k: number): void {
  const { ia, id, SW, SH, ss, sp, sw, sst, outW, stride, samePale, pale, weak, strong } = c;
  const rx = c.ib * y + c.ic + 0.5,
    ry = c.ie * y + c.iF + 0.5;
  const x0 = k * 32;
  const x1 = Math.min(outW, x0 + 32) - 1;
  let pm = 0,
    wm = 0,
    sm = 0;
  for (let x = x0; x <= x1; x++) {
    const sx = Math.floor(rx + ia * x),
      sy = Math.floor(ry + id * x);
    if (sx < 0 || sy < 0 || sx >= SW || sy >= SH) continue;
    const wi = sy * ss + (sx >>> 5),
      sh = sx & 31;
    pm |= ((sp[wi]! >>> sh) & 1) << (x - x0);
    wm |= ((sw[wi]! >>> sh) & 1) << (x - x0);
    sm |= ((sst[wi]! >>> sh) & 1) << (x - x0);
  }
  const ob = y * stride;
  if (!samePale) pale[ob + k] = pm;
  weak[ob + k] = wm;
  strong[ob + k] = sm;
}

/**
 * Output row y word by word (rows segmentRow cannot cut): when every source word the output word can
 * touch is empty, the word stays 0.
 */
function warpRowWords(c: WarpCtx, y: number): void {
  const { ia, id, SW, SH, ss, sp, sw, sst, outW, stride, samePale, pale, weak, strong } = c;
  // +0.5 so floor() rounds to the nearest source pixel centre.
  const rx = c.ib * y + c.ic + 0.5,
    ry = c.ie * y + c.iF + 0.5;
  const ob = y * stride;
  for (let k = 0; k < stride; k++) {
    const x0 = k * 32;
    const x1 = Math.min(outW, x0 + 32) - 1;
    const sx0 = Math.floor(rx + ia * x0),
      sy0 = Math.floor(ry + id * x0);
    const sx1 = Math.floor(rx + ia * x1),
      sy1 = Math.floor(ry + id * x1);
    const lx = Math.max(0, Math.min(sx0, sx1)),
      hx = Math.min(SW - 1, Math.max(sx0, sx1));
    const ly = Math.max(0, Math.min(sy0, sy1)),
      hy = Math.min(SH - 1, Math.max(sy0, sy1));
    if (lx > hx || ly > hy) continue; // entirely outside B: paper
    // Word fast path (scale near 1, rotation near 0): the source row is constant over the word and the
    // source x advances by exactly 1 per pixel. sx(x) and sy(x) are linear, so sy0 === sy1 means a
    // constant row, and (for 0 < ia < 2) a total advance of n − 1 over n − 1 steps means every step is
    // exactly 1. Then the output word is source bits sx0.. as a funnel shift of two source words — the
    // same bits the per-pixel gather below would pick.
    if (
      sy0 === sy1 &&
      sx1 - sx0 === x1 - x0 &&
      ia > 0 &&
      ia < 2 &&
      sx0 >= 0 &&
      sx1 < SW &&
      sy0 >= 0 &&
      sy0 < SH
    ) {
      const rb = sy0 * ss,
        kk = sx0 >> 5,
        sh = sx0 & 31;
      let pv: number, wv: number, sv: number;
      if (sh === 0) {
        pv = sp[rb + kk]!;
        if (pv === 0) continue;
        wv = sw[rb + kk]!;
        sv = sst[rb + kk]!;
      } else {
        const nx = kk + 1 < ss;
        const p0 = sp[rb + kk]!,
          p1 = nx ? sp[rb + kk + 1]! : 0;
        if ((p0 | p1) === 0) continue; // paper (pale ⊇ weak ⊇ strong)
        pv = (p0 >>> sh) | (p1 << (32 - sh));
        wv = (sw[rb + kk]! >>> sh) | (nx ? sw[rb + kk + 1]! << (32 - sh) : 0);
        sv = (sst[rb + kk]! >>> sh) | (nx ? sst[rb + kk + 1]! << (32 - sh) : 0);
      }
      const n = x1 - x0 + 1;
      if (n < 32) {
        const keep = (1 << n) - 1;
        pv &= keep;
        wv &= keep;
        sv &= keep;
      }
      if (!samePale) pale[ob + k] = pv;
      weak[ob + k] = wv;
      strong[ob + k] = sv;
      continue;
    }
    let any = 0;
    const kx0 = lx >> 5,
      kx1 = hx >> 5;
    for (let yy = ly; yy <= hy && any === 0; yy++) {
      const rb = yy * ss;
      for (let kk = kx0; kk <= kx1; kk++) any |= sp[rb + kk]!;
    }
    if (any === 0) continue;
    gatherWord(c, y, k);
  }
}

/** Horizontal 3-px dilation of every row (carry bits across word boundaries). */
export function dilateRows(m: Uint32Array, stride: number, height: number): Uint32Array {
  const out = new Uint32Array(m.length);
  for (let y = 0; y < height; y++) {
    const b = y * stride;
    let prev = 0;
    let cur = m[b]!;
    for (let k = 0; k < stride; k++) {
      const next = k + 1 < stride ? m[b + k + 1]! : 0;
      if ((prev | cur | next) !== 0) {
        out[b + k] = cur | (cur << 1) | (prev >>> 31) | (cur >>> 1) | (next << 31);
      }
      prev = cur;
      cur = next;
    }
  }
  return out;
}

/** Full 3x3 dilation (for tests and callers that want the mask itself). */
export function dilate3x3(m: Uint32Array, stride: number, height: number): Uint32Array {
  const h = dilateRows(m, stride, height);
  const out = new Uint32Array(m.length);
  for (let y = 0; y < height; y++) {
    const b = y * stride,
      up = y > 0 ? b - stride : -1,
      dn = y + 1 < height ? b + stride : -1;
    for (let k = 0; k < stride; k++) {
      out[b + k] = h[b + k]! | (up >= 0 ? h[up + k]! : 0) | (dn >= 0 ? h[dn + k]! : 0);
    }
  }
  return out;
}

export function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Zero the padding bits beyond `width` in the last word of every row (so counts stay exact). */
function clearPadding(m: Uint32Array, stride: number, height: number, width: number): void {
  const rem = width & 31;
  if (rem === 0) return;
  const keep = (1 << rem) - 1;
  for (let y = 0; y < height; y++) m[y * stride + stride - 1]! &= keep;
}

/**
 * Compare A with B (B mapped into A's frame by `transform`, B → A). Output is in A's pixel frame.
 */
export function diffImages(
  a: GreyImage,
  b: GreyImage,
  transform: readonly number[] = [1, 0, 0, 0, 1, 0],
  opts: DiffOptions = {},
): DiffResult {
  const it = opts.inkThreshold ?? 160,
    wt = opts.weakThreshold ?? 208,
    pt = opts.paleThreshold ?? Math.max(240, wt);
  const ma = packInk(a, it, wt, pt);
  const mb0 = packInk(b, it, wt, pt);
  const mb = warpMasks(mb0, transform, a.width, a.height);
  return diffMasks(ma, mb, coverage(transform, b.width, b.height, a.width, a.height));
}

/** Per row of the output frame, the inclusive x range whose B source lies inside B (lo > hi: none). */
export interface Coverage {
  lo: Int32Array;
  hi: Int32Array;
}

/**
 * Where B covers A's frame. Ink of A outside B's page cannot be judged (B was plotted shifted or on a
 * smaller sheet), so it is never reported as removed. A 1 px margin inside B keeps edge resampling out.
 */
export function coverage(
  transform: readonly number[],
  bw: number,
  bh: number,
  outW: number,
  outH: number,
): Coverage {
  const inv = invertAffine(transform as Affine);
  const lo = new Int32Array(outH),
    hi = new Int32Array(outH);
  for (let y = 0; y < outH; y++) {
    let x0 = 0,
      x1 = outW - 1;
    // sx(x) = inv0·x + kx must stay in [1, bw − 2]; sy(x) = inv3·x + ky in [1, bh − 2] (j = 0, 1; no
    // arrays per row).
    for (let j = 0; j < 2; j++) {
      const c = j === 0 ? inv[0] : inv[3],
        k = j === 0 ? inv[1] * y + inv[2] : inv[4] * y + inv[5],
        size = j === 0 ? bw : bh;
      const min = 1,
        max = size - 2;
      if (Math.abs(c) < 1e-12) {
        if (k < min || k > max) {
          x0 = 1;
          x1 = 0;
        }
      } else {
        const p = (min - k) / c,
          q = (max - k) / c;
        x0 = Math.max(x0, Math.ceil(Math.min(p, q)));
        x1 = Math.min(x1, Math.floor(Math.max(p, q)));
      }
    }
    lo[y] = x0;
    hi[y] = x1;
  }
  return { lo, hi };
}

/** Bits of word k (pixels 32k..32k+31) that fall inside [lo, hi]. */
function rangeBits(k: number, lo: number, hi: number): number {
  const a = Math.max(lo - k * 32, 0),
    b = Math.min(hi - k * 32, 31);
  if (a > b) return 0;
  const upper = b === 31 ? 0xffffffff : (1 << (b + 1)) - 1;
  return (upper & ~((1 << a) - 1)) | 0;
}

/**
 * 3x3 dilation of mask m at word k of the row at `cur`, rows `up` and `dn` around it (the row itself at
 * the sheet's edges): the horizontal 3-px dilation of the OR of the three rows (horizontal dilation
 * distributes over OR, so this is the OR of the three dilated rows).
 */
function dilated(
  m: Int32Array,
  up: number,
  cur: number,
  dn: number,
  k: number,
  last: number,
): number {
  const v = m[up + k]! | m[cur + k]! | m[dn + k]!;
  const p = k > 0 ? m[up + k - 1]! | m[cur + k - 1]! | m[dn + k - 1]! : 0;
  const n = k < last ? m[up + k + 1]! | m[cur + k + 1]! | m[dn + k + 1]! : 0;
  return v | (v << 1) | (p >>> 31) | (v >>> 1) | (n << 31);
}

/**
 * The mask-level part of diffImages, for callers that already hold packed masks in one frame. One pass
 * over the words: paper words (no weak ink on either side) are skipped, and the other side's 3x3
 * dilation is computed only for the words and masks a test needs (strong ink on this side, or weak ink
 * left for the faint test) — no dilated copies or row rings are made. The word loop runs on WebAssembly
 * SIMD (masks-simd.ts diffMasksSimd, 4 words per step, the same words and counts) where available.
 */
export function diffMasks(
  ma: InkMasks,
  mb: InkMasks,
  cover?: Coverage,
  ws?: WordSource,
): DiffResult {
  const { width, height, stride } = ma;
  if (mb.width !== width || mb.height !== height) throw new Error('Masks must share one frame');
  const faintPass = ma.pale !== ma.weak && mb.pale !== mb.weak;
  for (const m of new Set([ma.strong, ma.weak, ma.pale, mb.strong, mb.weak, mb.pale]))
    clearPadding(m, stride, height, width);
  // The SIMD word loop writes every word of both: kept arrays need no zeroing first (7.5 MB of
  // memset a compare at 200 dpi); the JS loop writes the changed words only.
  const whole = maskKernels.simd && simdPackAvailable();
  const take = (slot: string) =>
    whole && ws?.wordsToOverwrite
      ? ws.wordsToOverwrite(slot, stride * height)
      : newWords(ws, slot, stride * height);
  const added = take(DIFF_SLOTS[0]);
  const removed = take(DIFF_SLOTS[1]);
  let counts = maskKernels.simd ? diffMasksSimd(ma, mb, cover, faintPass, added, removed) : null;
  if (!counts) {
    if (whole) {
      added.fill(0);
      removed.fill(0);
    }
    counts = diffWordsJs(ma, mb, cover, faintPass, added, removed);
  }
  const { addedPx, removedPx, unionPx } = counts;
  const changed = addedPx + removedPx;
  const changedFraction = unionPx > 0 ? changed / unionPx : 0;
  return {
    width,
    height,
    stride,
    strongA: ma.strong,
    weakA: ma.weak,
    strongB: mb.strong,
    weakB: mb.weak,
    paleA: ma.pale,
    paleB: mb.pale,
    added,
    removed,
    stats: {
      added_px: addedPx,
      removed_px: removedPx,
      unchanged_px: unionPx - changed,
      changed_fraction: changedFraction,
    },
    faint: { added_px: counts.faintAddedPx, removed_px: counts.faintRemovedPx },
    score: 1 - changedFraction,
  };
}

/** diffMasks' word loop in JS: writes `added`/`removed` (zeroed) and returns the counts. */
function diffWordsJs(
  ma: InkMasks,
  mb: InkMasks,
  cover: Coverage | undefined,
  faintPass: boolean,
  added: Uint32Array,
  removed: Uint32Array,
): DiffCounts {
  const { width, height, stride } = ma;
  // Int32 views: loads stay small integers in optimised code (a Uint32 load ≥ 2^31 deoptimised).
  const sA = i32(ma.strong),
    sB = i32(mb.strong),
    wA = i32(ma.weak),
    wB = i32(mb.weak),
    pA = i32(ma.pale),
    pB = i32(mb.pale);
  const last = stride - 1;
  let addedPx = 0,
    removedPx = 0,
    unionPx = 0,
    faintAddedPx = 0,
    faintRemovedPx = 0;
  for (let y = 0; y < height; y++) {
    const b = y * stride;
    const up = y > 0 ? b - stride : b,
      dn = y + 1 < height ? b + stride : b;
    const lo = cover ? cover.lo[y]! : 0,
      hi = cover ? cover.hi[y]! : width - 1;
    for (let k = 0; k < stride; k++) {
      // weak ⊇ strong: a word with no weak ink on either side holds no change of either kind.
      const wa = wA[b + k]!,
        wb = wB[b + k]!;
      if ((wa | wb) === 0) continue;
      const sa = sA[b + k]!,
        sb = sB[b + k]!;
      // Outside B's coverage nothing of A can be judged as removed.
      const inCover = k * 32 >= lo && k * 32 + 31 <= hi ? -1 : rangeBits(k, lo, hi);
      let rem = 0,
        add = 0;
      if ((sa | sb) !== 0) {
        unionPx += popcount32(sa | sb);
        if ((sa & inCover) !== 0) {
          rem = sa & ~dilated(wB, up, b, dn, k, last) & inCover;
          if (rem !== 0) removedPx += popcount32(rem);
        }
        if (sb !== 0) {
          add = sb & ~dilated(wA, up, b, dn, k, last);
          if (add !== 0) addedPx += popcount32(add);
        }
      }
      if (faintPass) {
        const fa0 = wb & ~add,
          fr0 = wa & ~rem & inCover;
        if (fa0 !== 0) {
          const fa = fa0 & ~dilated(pA, up, b, dn, k, last);
          if (fa !== 0) {
            faintAddedPx += popcount32(fa);
            add |= fa;
          }
        }
        if (fr0 !== 0) {
          const fr = fr0 & ~dilated(pB, up, b, dn, k, last);
          if (fr !== 0) {
            faintRemovedPx += popcount32(fr);
            rem |= fr;
          }
        }
      }
      if (rem !== 0) removed[b + k] = rem;
      if (add !== 0) added[b + k] = add;
    }
  }
  return { unionPx, addedPx, removedPx, faintAddedPx, faintRemovedPx };
}

// ---------------------------------------------------------------------------------------------
// Overlays

export type OverlayKind = 'combined' | 'additions' | 'deletions';
export type PaletteName = 'standard' | 'colorblind';

/**
 * RGB triples. 'colorblind' uses blue/orange, distinguishable with protanopia and deuteranopia. Fills
 * (layers.ts) are light tints, so line work over them stays legible: unchanged fill a light grey,
 * removed / added fill a light tint of the removed / added colour.
 */
export const PALETTES: Record<
  PaletteName,
  {
    added: [number, number, number];
    removed: [number, number, number];
    ink: [number, number, number];
    faint: [number, number, number];
    fill: [number, number, number];
    fillRemoved: [number, number, number];
    fillAdded: [number, number, number];
  }
> = {
  standard: {
    added: [0, 170, 0],
    removed: [225, 20, 20],
    ink: [70, 70, 70],
    faint: [200, 200, 200],
    fill: [226, 226, 226],
    fillRemoved: [255, 196, 196],
    fillAdded: [190, 236, 190],
  },
  colorblind: {
    added: [0, 114, 178],
    removed: [230, 120, 0],
    ink: [70, 70, 70],
    faint: [200, 200, 200],
    fill: [226, 226, 226],
    fillRemoved: [252, 216, 170],
    fillAdded: [184, 216, 240],
  },
};

/**
 * Palette index of each pixel code, per overlay kind. A code is 4 bits b3b2b1b0: 0 paper, 1 faint, 2 ink,
 * 3 removed, 4 added (line work), 8 fill, 9 removed fill, 10 added fill; other codes do not occur.
 * The 2-bit images have no room for fill tints and are rendered without fills (their fill codes, which
 * do not occur, take the faint entry).
 */
const CODE_INDEX: Record<OverlayKind, number[]> = {
  combined: [0, 1, 2, 3, 4, 0, 0, 0, 5, 6, 7, 0, 0, 0, 0, 0],
  additions: [0, 1, 2, 0, 3, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0],
  deletions: [0, 1, 2, 3, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0],
};

/** The code of pixel `px` (0..3) of a 4-pixel LUT index (4 bit-planes x 4 pixels). */
function codeOf(idx: number, px: number): number {
  return (
    ((idx >> px) & 1) |
    (((idx >> (4 + px)) & 1) << 1) |
    (((idx >> (8 + px)) & 1) << 2) |
    (((idx >> (12 + px)) & 1) << 3)
  );
}

export interface RgbImage {
  width: number;
  height: number;
  channels: 3;
  data: Uint8Array;
}

/** Little-endian platforms only: the LUT words below are written through Uint32 views of RGB bytes. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

const overlayLuts = new Map<string, Uint32Array>();

/**
 * 4-pixel LUT for the overlay writer: index = 4 bit-planes x 4 pixels (b0 | b1 << 4 | b2 << 8 |
 * b3 << 12; codes as CODE_INDEX), entry = the 12 RGB bytes of the 4 pixels as 3 little-endian words.
 */
function overlayLut(palette: PaletteName): Uint32Array {
  let lut = overlayLuts.get(palette);
  if (lut) return lut;
  const colours = overlayPalette(palette, 'combined');
  const index = CODE_INDEX.combined;
  lut = new Uint32Array(65536 * 3);
  const bytes = new Uint8Array(lut.buffer);
  for (let idx = 0; idx < 65536; idx++) {
    for (let px = 0; px < 4; px++) {
      const c = colours[index[codeOf(idx, px)]!]!;
      bytes[idx * 12 + px * 3] = c[0];
      bytes[idx * 12 + px * 3 + 1] = c[1];
      bytes[idx * 12 + px * 3 + 2] = c[2];
    }
  }
  overlayLuts.set(palette, lut);
  return lut;
}

/**
 * The 4 code planes of mask word k of row base b (see CODE_INDEX): line work where either side has weak
 * ink, fills (tints) elsewhere. Returns false when the word is paper on the image's sides.
 */
const planes = { b0: 0, b1: 0, b2: 0, b3: 0 };
function wordPlanes(
  d: DiffResult,
  i: number,
  useA: boolean,
  useB: boolean,
  showAdd: boolean,
  showRem: boolean,
  mask: number,
): boolean {
  const { weakA, weakB, strongA, strongB, added, removed, style } = d;
  // Fill tints on the combined overlay only (renderOverlayIndexed).
  const fills = useA && useB ? d.fills : undefined;
  const m = ((useA ? weakA[i]! : 0) | (useB ? weakB[i]! : 0)) & mask;
  const fm = fills
    ? ((useA && fills.a ? fills.a[i]! : 0) | (useB && fills.b ? fills.b[i]! : 0)) & mask
    : 0;
  if ((m | fm) === 0) return false;
  const st = ((useA ? strongA[i]! : 0) | (useB ? strongB[i]! : 0)) & m;
  const a = showAdd ? added[i]! & m & ~(style ? style.added[i]! : 0) : 0;
  const r = showRem ? removed[i]! & m & ~a & ~(style ? style.removed[i]! : 0) : 0;
  const s = st & ~a & ~r;
  const f = m & ~st & ~a & ~r;
  const fl = fm & ~m;
  const fr = fills && showRem ? fills.removed[i]! & fl : 0;
  const fa = fills && showAdd ? fills.added[i]! & fl & ~fr : 0;
  planes.b0 = r | f | fr;
  planes.b1 = r | s | fa;
  planes.b2 = a;
  planes.b3 = fl;
  return true;
}

/**
 * Render an overlay as RGB (3 bytes per pixel) from the masks only. Colours: added / removed from the
 * palette, unchanged strong ink dark grey, faint-only ink light grey, paper white.
 *   combined  — A ∪ B ink, removed and added coloured;
 *   additions — B's ink, added coloured;
 *   deletions — A's ink, removed coloured.
 * Per row, words holding ink are written 4 pixels (12 bytes, 3 Uint32 words) per step from a LUT into
 * a word-aligned scratch row, paper words are left white (only words dirtied by the row before are
 * reset), and the row is copied out with one memcpy (no separate white prefill of the image).
 * The reference RGB writer (compareImages, tests); the service writes renderOverlayIndexed's 4-bit
 * palette PNGs, which decode to these pixels.
 */
export function renderOverlay(
  d: DiffResult,
  kind: OverlayKind = 'combined',
  palette: PaletteName = 'standard',
  out?: Uint8Array,
): RgbImage {
  const { width, height, stride } = d;
  const n = width * height * 3;
  const given = out !== undefined && out.length >= n;
  const data = given ? out.subarray(0, n) : new Uint8Array(n);
  if (!LITTLE_ENDIAN) throw new Error('renderOverlay expects a little-endian platform');
  const lut = overlayLut(palette);
  const useA = kind !== 'additions',
    useB = kind !== 'deletions';
  const showAdd = kind !== 'deletions',
    showRem = kind !== 'additions';
  // 96 bytes (24 words) per mask word of 32 pixels.
  const row = new Uint32Array(stride * 24);
  const rowBytes = new Uint8Array(row.buffer, 0, width * 3);
  row.fill(0xffffffff);
  const dirty = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const b = y * stride;
    for (let k = 0; k < stride; k++) {
      const o = k * 24;
      if (!wordPlanes(d, b + k, useA, useB, showAdd, showRem, -1)) {
        if (dirty[k] !== 0) {
          row.fill(0xffffffff, o, o + 24);
          dirty[k] = 0;
        }
        continue;
      }
      dirty[k] = 1;
      const { b0, b1, b2, b3 } = planes;
      for (let j = 0; j < 8; j++) {
        const sh = j << 2;
        const idx =
          (((b0 >>> sh) & 15) |
            (((b1 >>> sh) & 15) << 4) |
            (((b2 >>> sh) & 15) << 8) |
            (((b3 >>> sh) & 15) << 12)) *
          3;
        const q = o + j * 3;
        row[q] = lut[idx]!;
        row[q + 1] = lut[idx + 1]!;
        row[q + 2] = lut[idx + 2]!;
      }
    }
    data.set(rowBytes, y * width * 3);
  }
  return { width, height, channels: 3, data };
}

/**
 * An overlay as PNG scanlines of palette indices, ready to deflate: `height` rows of `rowBytes` bytes,
 * each a filter byte (0, None) and the pixels at `bitDepth` bits each, leftmost pixel in the high bits.
 * 'combined' has five colours (4 bits: 0 paper, 1 faint, 2 ink, 3 removed, 4 added); 'additions' and
 * 'deletions' four (2 bits: 0 paper, 1 faint, 2 ink, 3 added / removed) — overlayPalette's order. The
 * palette is chosen only when the PNG is written (encode.adapter's encodeIndexedPngs), so one render
 * serves the standard and the colour-blind image.
 */
export interface IndexedOverlay {
  width: number;
  height: number;
  bitDepth: 2 | 4;
  rowBytes: number;
  data: Uint8Array;
}

/** The RGB entries of an indexed overlay's palette (see IndexedOverlay for the order). */
export function overlayPalette(
  palette: PaletteName,
  kind: OverlayKind = 'combined',
): [number, number, number][] {
  const p = PALETTES[palette];
  const base: [number, number, number][] = [[255, 255, 255], p.faint, p.ink];
  if (kind === 'additions') return [...base, p.added];
  if (kind === 'deletions') return [...base, p.removed];
  return [...base, p.removed, p.added, p.fill, p.fillRemoved, p.fillAdded];
}

/** Bits per pixel of an overlay kind's indexed image. */
export function overlayBitDepth(kind: OverlayKind): 2 | 4 {
  return kind === 'combined' ? 4 : 2;
}

const indexLuts = new Map<OverlayKind, Uint16Array>();

/**
 * 4-pixel LUT of the indexed writer: index = 4 bit-planes x 4 pixels (as overlayLut; codes as
 * CODE_INDEX), entry = the bytes of the 4 pixels' indices: two bytes of nibbles (first byte in the low
 * 8 bits) for 'combined', one byte of 2-bit indices for the others.
 */
function indexLut(kind: OverlayKind): Uint16Array {
  let lut = indexLuts.get(kind);
  if (lut) return lut;
  const index = CODE_INDEX[kind];
  lut = new Uint16Array(65536);
  for (let idx = 0; idx < 65536; idx++) {
    const c = [0, 0, 0, 0];
    for (let px = 0; px < 4; px++) c[px] = index[codeOf(idx, px)]!;
    lut[idx] =
      kind === 'combined'
        ? (c[0]! << 4) | c[1]! | (((c[2]! << 4) | c[3]!) << 8)
        : (c[0]! << 6) | (c[1]! << 4) | (c[2]! << 2) | c[3]!;
  }
  indexLuts.set(kind, lut);
  return lut;
}

/**
 * Render an overlay (kinds as renderOverlay) as palette indices in PNG scanline layout (IndexedOverlay:
 * 4 bits per pixel for 'combined', 2 for 'additions' / 'deletions') instead of renderOverlay's 24, so
 * a fraction of the memory to touch and to deflate, and one render serves both palettes. Only 4-pixel
 * groups holding ink are written: `out` (≥ height·rowBytes bytes) must be zeroed — paper and the
 * filter bytes are 0; a fresh array is when `out` is not given.
 */
export function renderOverlayIndexed(
  d: DiffResult,
  kind: OverlayKind = 'combined',
  out?: Uint8Array,
  inked?: InkedWords,
): IndexedOverlay {
  const { width, height, stride, weakA, weakB, strongA, strongB, added, removed, style } = d;
  // Fill tints only on the combined overlays: the 2-bit additions / deletions images have no entry for
  // them (CODE_INDEX) and leave them out, which saves rendering every fill word twice more.
  const fills = kind === 'combined' ? d.fills : undefined;
  const fA = fills && fills.a ? fills.a : EMPTY_U32,
    fB = fills && fills.b ? fills.b : EMPTY_U32,
    fAdd = fills ? fills.added : EMPTY_U32,
    fRem = fills ? fills.removed : EMPTY_U32;
  const hasFA = fills !== undefined && fills.a !== null,
    hasFB = fills !== undefined && fills.b !== null,
    hasF = fills !== undefined;
  const sAdd = style ? style.added : EMPTY_U32,
    sRem = style ? style.removed : EMPTY_U32,
    hasS = style !== undefined;
  const bitDepth = overlayBitDepth(kind);
  const pixelBytes = Math.ceil((width * bitDepth) / 8);
  const rowBytes = 1 + pixelBytes;
  const n = rowBytes * height;
  if (out !== undefined && out.length < n)
    throw new Error(`Expected an output of at least ${n} bytes but received ${out.length}`);
  const data = out ? out.subarray(0, n) : new Uint8Array(n);
  const lut = indexLut(kind);
  // Whole words' bytes are stored 4 (or 2) at a time: the stores, not the lookups, were the cost.
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (inked) {
    if (kind !== 'combined')
      throw new Error(
        `Expected the 'combined' overlay to list its inked words but received '${kind}'`,
      );
    if (inked.words.length < stride * height)
      throw new Error(
        `Expected room for ${stride * height} word indices but received ${inked.words.length}`,
      );
    inked.n = 0;
  }
  const useA = kind !== 'additions',
    useB = kind !== 'deletions';
  const showAdd = kind !== 'deletions',
    showRem = kind !== 'additions';
  const nibbles = bitDepth === 4;
  // The inked list's words and count in locals (the count written back after the loop).
  const listInked = inked !== undefined,
    inkedList = inked ? inked.words : EMPTY_U32;
  let nInked = 0;
  // Bytes per 4-pixel group and per mask word of 32 pixels.
  const groupShift = nibbles ? 1 : 0,
    wordShift = nibbles ? 4 : 3;
  const fullWords = width >>> 5;
  // Bits of the last, partial mask word that are pixels of the row (masks may hold padding bits).
  const tailMask = width & 31 ? (2 ** (width & 31) - 1) | 0 : -1;
  for (let y = 0; y < height; y++) {
    const b = y * stride,
      ro = y * rowBytes + 1;
    const last = ro + pixelBytes;
    for (let k = 0; k < stride; k++) {
      const full = k < fullWords;
      const i = b + k;
      const mask = full ? -1 : tailMask;
      // wordPlanes, written out (the hottest loop of the overlays).
      const m = ((useA ? weakA[i]! : 0) | (useB ? weakB[i]! : 0)) & mask;
      const fm = ((useA && hasFA ? fA[i]! : 0) | (useB && hasFB ? fB[i]! : 0)) & mask;
      if ((m | fm) === 0) continue; // paper: already 0
      if (m !== 0 && listInked) inkedList[nInked++] = i;
      const st = ((useA ? strongA[i]! : 0) | (useB ? strongB[i]! : 0)) & m;
      const a = showAdd ? added[i]! & m & ~(hasS ? sAdd[i]! : 0) : 0;
      const r = showRem ? removed[i]! & m & ~a & ~(hasS ? sRem[i]! : 0) : 0;
      const s = st & ~a & ~r;
      const f = m & ~st & ~a & ~r;
      const fl = fm & ~m;
      const fr = hasF && showRem ? fRem[i]! & fl : 0;
      const fa = hasF && showAdd ? fAdd[i]! & fl & ~fr : 0;
      const b0 = r | f | fr,
        b1 = r | s | fa,
        b2 = a,
        b3 = fl;
      const o = ro + (k << wordShift);
      if (full && uniformWord(b0, b1, b2, b3)) {
        // 32 pixels of one code (inside a fill, a solid area): one lookup, the same byte throughout.
        const v = lut[(b0 & 15) | ((b1 & 15) << 4) | ((b2 & 15) << 8) | ((b3 & 15) << 12)]! & 255;
        // 4-byte stores (unaligned: DataView), not data.fill: a builtin call per word cost more than
        // its 8–16 byte stores, and those more than these 2–4.
        if (v !== 0) {
          const v4 = v * 0x01010101;
          for (let q = o, e = o + (8 << groupShift); q < e; q += 4) view.setUint32(q, v4, true);
        }
        continue;
      }
      if (full && nibbles) {
        // A whole word of the combined image (most of them): no end-of-row checks.
        writeCodes4(view, o, b0, b1, b2, b3);
        continue;
      }
      for (let j = 0; j < 8; j++) {
        const sh = j << 2;
        const code =
          ((b0 >>> sh) & 15) |
          (((b1 >>> sh) & 15) << 4) |
          (((b2 >>> sh) & 15) << 8) |
          (((b3 >>> sh) & 15) << 12);
        if (code === 0) continue; // four paper pixels
        const v = lut[code]!;
        const q = o + (j << groupShift);
        if (nibbles) {
          // The row's last word: only the bytes inside the row.
          if (full || q < last) data[q] = v & 255;
          if (full || q + 1 < last) data[q + 1] = v >>> 8;
        } else if (full || q < last) data[q] = v;
      }
    }
  }
  if (inked) inked.n = nInked;
  return { width, height, bitDepth, rowBytes, data };
}

/**
 * Bit i of a byte (pixel i of 8) moved to bit 0 of its pixel's field in PNG order, the fields' bytes
 * little-endian: SPREAD4 — 4-bit fields, pixel 0 in the high nibble of the first byte (8 pixels, 4
 * bytes); SPREAD2 — 2-bit fields, pixel 0 in the top 2 bits of the first byte (8 pixels, 2 bytes).
 * A palette index is then a weighted sum of the code planes' spread bytes (writeCodes4 / writeCodes2).
 */
const SPREAD4 = new Uint32Array(256),
  SPREAD2 = new Uint32Array(256);
for (let v = 0; v < 256; v++)
  for (let i = 0; i < 8; i++)
    if ((v >> i) & 1) {
      SPREAD4[v]! |= 1 << (8 * (i >> 1) + (i & 1 ? 0 : 4));
      SPREAD2[v]! |= 1 << (8 * (i >> 2) + 6 - 2 * (i & 3));
    }

/**
 * The 16 bytes (4 bits a pixel) of one whole mask word's code planes b0..b3 at `o`: renderOverlayIndexed's
 * loop for a word inside the row, without its end-of-row checks. 8 pixels per step: the codes that occur
 * (CODE_INDEX: 0..4 line work, 8..10 fills, where b3 excludes b2) have the palette index
 * b0 + 2·b1 + 4·b2 + 5·b3, so each pixel's nibble is that sum of the planes' spread bits (at most 7:
 * no carry into the next nibble).
 */
function writeCodes4(
  view: DataView,
  o: number,
  b0: number,
  b1: number,
  b2: number,
  b3: number,
): void {
  for (let j = 0; j < 4; j++) {
    const sh = j << 3;
    const v =
      (SPREAD4[(b0 >>> sh) & 255]! |
        (SPREAD4[(b1 >>> sh) & 255]! << 1) |
        (SPREAD4[(b2 >>> sh) & 255]! << 2)) +
      SPREAD4[(b3 >>> sh) & 255]! * 5;
    if (v === 0) continue; // eight paper pixels
    view.setUint32(o + (j << 2), v, true);
  }
}

/** Whether each of the four code planes of a word is all 0 or all 1: its 32 pixels share one code. */
function uniformWord(b0: number, b1: number, b2: number, b3: number): boolean {
  return (
    ((b0 + 1) | 1) === 1 && ((b1 + 1) | 1) === 1 && ((b2 + 1) | 1) === 1 && ((b3 + 1) | 1) === 1
  );
}

/**
 * renderOverlayIndexed's 'additions' and 'deletions' images in one pass over the masks: the same
 * bytes as rendering each on its own (B's line work with the additions; A's with the removals), with
 * one loop over the words instead of two. `outAdd` / `outDel` as renderOverlayIndexed's `out`.
 */
export function renderAddDelIndexed(
  d: DiffResult,
  outAdd?: Uint8Array,
  outDel?: Uint8Array,
  inked?: InkedWords,
): { additions: IndexedOverlay; deletions: IndexedOverlay } {
  const { width, height, stride, weakA, weakB, strongA, strongB, added, removed, style } = d;
  const sAdd = style ? style.added : EMPTY_U32,
    sRem = style ? style.removed : EMPTY_U32,
    hasS = style !== undefined;
  const pixelBytes = Math.ceil((width * 2) / 8);
  const rowBytes = 1 + pixelBytes;
  const n = rowBytes * height;
  for (const out of [outAdd, outDel])
    if (out !== undefined && out.length < n)
      throw new Error(`Expected an output of at least ${n} bytes but received ${out.length}`);
  const dataAdd = outAdd ? outAdd.subarray(0, n) : new Uint8Array(n);
  const dataDel = outDel ? outDel.subarray(0, n) : new Uint8Array(n);
  const fullWords = width >>> 5;
  const tailMask = width & 31 ? (2 ** (width & 31) - 1) | 0 : -1;
  const w: AddDelWord = {
    weakA,
    weakB,
    strongA,
    strongB,
    added,
    removed,
    sAdd,
    sRem,
    hasS,
    dataAdd,
    dataDel,
    viewAdd: new DataView(dataAdd.buffer, dataAdd.byteOffset, dataAdd.byteLength),
    viewDel: new DataView(dataDel.buffer, dataDel.byteOffset, dataDel.byteLength),
  };
  if (inked) {
    // Only the combined overlay's inked words: the others are paper in both images.
    // The list is ascending: its row is followed word by word, not divided out of each index.
    const list = inked.words;
    let rowStart = 0,
      ro = 1;
    for (let q = 0; q < inked.n; q++) {
      const i = list[q]!;
      while (i >= rowStart + stride) {
        rowStart += stride;
        ro += rowBytes;
      }
      const k = i - rowStart;
      addDelWord(w, i, ro + (k << 3), ro + pixelBytes, k < fullWords, tailMask);
    }
  } else
    for (let y = 0; y < height; y++) {
      const ro = y * rowBytes + 1;
      for (let k = 0; k < stride; k++)
        addDelWord(w, y * stride + k, ro + (k << 3), ro + pixelBytes, k < fullWords, tailMask);
    }
  return {
    additions: { width, height, bitDepth: 2, rowBytes, data: dataAdd },
    deletions: { width, height, bitDepth: 2, rowBytes, data: dataDel },
  };
}

interface AddDelWord {
  weakA: Uint32Array;
  weakB: Uint32Array;
  strongA: Uint32Array;
  strongB: Uint32Array;
  added: Uint32Array;
  removed: Uint32Array;
  sAdd: Uint32Array;
  sRem: Uint32Array;
  hasS: boolean;
  dataAdd: Uint8Array;
  dataDel: Uint8Array;
  /** The images' bytes, for whole words' 2-byte stores (unaligned). */
  viewAdd: DataView;
  viewDel: DataView;
}

/** Mask word i of renderAddDelIndexed: its 8 bytes of each image at `o` (the row ends at `last`). */
function addDelWord(
  w: AddDelWord,
  i: number,
  o: number,
  last: number,
  full: boolean,
  tailMask: number,
): void {
  const mask = full ? -1 : tailMask;
  const mA = w.weakA[i]! & mask,
    mB = w.weakB[i]! & mask;
  if ((mA | mB) === 0) return; // paper in both: already 0
  if (mB !== 0) {
    // additions: B's line work, added ink that is not a style change.
    const st = w.strongB[i]! & mB;
    const a = w.added[i]! & mB & ~(w.hasS ? w.sAdd[i]! : 0);
    writeCodes2(w.dataAdd, w.viewAdd, o, last, full, mB & ~st & ~a, st & ~a, a);
  }
  if (mA !== 0) {
    // deletions: A's line work, removed ink that is not a style change.
    const st = w.strongA[i]! & mA;
    const r = w.removed[i]! & mA & ~(w.hasS ? w.sRem[i]! : 0);
    const f = mA & ~st & ~r;
    writeCodes2(w.dataDel, w.viewDel, o, last, full, r | f, r | (st & ~r), 0);
  }
}

/**
 * The 8 bytes (2 bits a pixel) of one mask word's planes at `o` (the row ends at `last`): the additions'
 * (b0 faint, b1 ink, b2 added: palette index b0 + 2·b1 + 3·b2, the three disjoint) or the deletions'
 * (b0 = removed or faint, b1 = removed or ink, b2 = 0: index b0 + 2·b1), 8 pixels per step from the
 * planes' spread bytes (SPREAD2); the 2-bit codes of renderOverlayIndexed's LUTs for the codes that occur.
 */
function writeCodes2(
  data: Uint8Array,
  view: DataView,
  o: number,
  last: number,
  full: boolean,
  b0: number,
  b1: number,
  b2: number,
): void {
  if (full) {
    // Two 4-byte stores (unaligned: DataView) of 16 pixels each.
    for (let h = 0; h < 2; h++) {
      const v = codes2(b0, b1, b2, h << 4) | (codes2(b0, b1, b2, (h << 4) + 8) << 16);
      if (v !== 0) view.setUint32(o + (h << 2), v, true);
    }
    return;
  }
  for (let j = 0; j < 4; j++) {
    const v = codes2(b0, b1, b2, j << 3);
    if (v === 0) continue; // eight paper pixels
    const q = o + (j << 1);
    if (q < last) data[q] = v;
    if (q + 1 < last) data[q + 1] = v >>> 8;
  }
}

/** writeCodes2's two bytes of the 8 pixels from bit `sh` of the planes. */
function codes2(b0: number, b1: number, b2: number, sh: number): number {
  const c = SPREAD2[(b2 >>> sh) & 255]!;
  return SPREAD2[(b0 >>> sh) & 255]! | (SPREAD2[(b1 >>> sh) & 255]! << 1) | c | (c << 1);
}

/**
 * The inked words of a render (renderOverlayIndexed 'combined': the indices of the mask words with A's
 * or B's line work, ascending, in words[0..n)), for renderAddDelIndexed to visit only those.
 */
export interface InkedWords {
  words: Uint32Array;
  n: number;
}

const NO_I32 = new Int32Array(0);
const EMPTY_U32 = new Uint32Array(0);
const NO_U32 = new Uint32Array(0);

/**
 * B resampled into A's frame (outW x outH), nearest neighbour, white outside B: the "aligned B" image.
 * Only made on request (it is a full grey copy); the compare itself never needs it. Output pixel (x, y)
 * is B's pixel (⌊ia·x + (ib·y + ic + 0.5)⌋, ⌊id·x + (ie·y + iF + 0.5)⌋) of the inverse map, as
 * warpMasks; rows are cut by the same segmentRow, so each segment is one copy of part of a B row
 * (a few per row at a scale near 1), and only rows it cannot cut are gathered pixel by pixel.
 * `out` (≥ outW·outH bytes; e.g. kept from an earlier compare) is written in full.
 */
export function alignGrey(
  b: GreyImage,
  transform: readonly number[],
  outW: number,
  outH: number,
  out?: Uint8Array,
  opts: { darkestBelow?: number } = {},
): GreyImage {
  const n = outW * outH;
  if (out !== undefined && out.length < n)
    throw new Error(`Expected an output of at least ${n} bytes but received ${out.length}`);
  const data = out ? out.subarray(0, n) : new Uint8Array(n);
  if (isIdentity(transform) && b.width === outW && b.height === outH) {
    data.set(b.data.subarray(0, n));
    return { width: outW, height: outH, data };
  }
  const inv = invertAffine(transform as Affine);
  const [ia, ib, ic, id, ie, iF] = inv;
  const SW = b.width,
    SH = b.height,
    s = b.data;
  // With opts.darkestBelow, B drawn at a larger scale (another paper size: B → A scale 0.5) is reduced
  // by taking the darkest pixel of each output pixel's footprint (f x f B pixels) when the scale is
  // below it, instead of the nearest one: nearest neighbour keeps every f-th row and column, so B's
  // one-pixel lines came out broken or gone and read as removed (issue 17: "lines that print lighter in
  // the new issue show as red"). diffStage asks for it below 0.75.
  const scale = Math.sqrt(Math.abs(transform[0]! * transform[4]! - transform[1]! * transform[3]!));
  const f = scale < (opts.darkestBelow ?? 0) ? Math.min(4, Math.max(1, Math.round(1 / scale))) : 1;
  if (f > 1) {
    const half = f / 2;
    for (let y = 0; y < outH; y++) {
      const ob = y * outW;
      const rx = ib * y + ic,
        ry = ie * y + iF;
      for (let x = 0; x < outW; x++) {
        const sx0 = Math.ceil(rx + ia * x - half),
          sy0 = Math.ceil(ry + id * x - half);
        let v = 255;
        for (let yy = Math.max(0, sy0); yy < Math.min(SH, sy0 + f); yy++) {
          const o = yy * SW;
          for (let xx = Math.max(0, sx0); xx < Math.min(SW, sx0 + f); xx++) {
            const p = s[o + xx]!;
            if (p < v) v = p;
          }
        }
        data[ob + x] = v;
      }
    }
    return { width: outW, height: outH, data };
  }
  // warpMasks' context shape (no masks), so segmentRow stays monomorphic.
  const c: WarpCtx = {
    ia,
    ib,
    ic,
    id,
    ie,
    iF,
    SW,
    SH,
    ss: 0,
    sp: NO_I32,
    sw: NO_I32,
    sst: NO_I32,
    outW,
    stride: 0,
    samePale: true,
    pale: NO_U32,
    weak: NO_U32,
    strong: NO_U32,
    segX0: new Int32Array(MAX_SEGMENTS),
    segX1: new Int32Array(MAX_SEGMENTS),
    segDx: new Int32Array(MAX_SEGMENTS),
    segSy: new Int32Array(MAX_SEGMENTS),
  };
  const segOk = segmentable(c, outH);
  for (let y = 0; y < outH; y++) {
    const ob = y * outW;
    const segs = segOk ? segmentRow(c, y) : 0;
    if (segs > 0) {
      for (let i = 0; i < segs; i++) {
        const x0 = c.segX0[i]!,
          x1 = c.segX1[i]!,
          dx = c.segDx[i]!,
          sy = c.segSy[i]!;
        // The part of [x0, x1] whose source x = x + dx lies in B; white around it.
        const lo = sy < 0 || sy >= SH ? x1 + 1 : Math.max(x0, -dx),
          hi = Math.min(x1, SW - 1 - dx);
        if (lo > hi) {
          data.fill(255, ob + x0, ob + x1 + 1);
          continue;
        }
        if (lo > x0) data.fill(255, ob + x0, ob + lo);
        const so = sy * SW + dx;
        data.set(s.subarray(so + lo, so + hi + 1), ob + lo);
        if (hi < x1) data.fill(255, ob + hi + 1, ob + x1 + 1);
      }
      continue;
    }
    const rx = ib * y + ic + 0.5,
      ry = ie * y + iF + 0.5;
    for (let x = 0; x < outW; x++) {
      const sx = Math.floor(rx + ia * x),
        sy = Math.floor(ry + id * x);
      data[ob + x] = sx < 0 || sy < 0 || sx >= SW || sy >= SH ? 255 : s[sy * SW + sx]!;
    }
  }
  return { width: outW, height: outH, data };
}
