// The per-pixel loops of splitFills (layers.ts), kept apart from its rules: which cells are candidates
// (all 64 pixels pale ink), their median tone, and the rewrite of the masks' bytes of the toned cells.
// The rules (the thresholds of a tone) come in as a table per tone (ToneRules), so the loops can work
// a mask word (4 cells of a row) at a time and read pixels 4 at a time without knowing them. Same
// results as the per-cell loops they replace (layers.test.ts, fill-kernels.test.ts): only the order
// in which disjoint bytes are written differs.

/** Scratch of the candidate list, kept across calls (grows only): 4 bytes a cell. */
let candScratch = new Int32Array(0);

/**
 * The cells (cy·cw + cx, ascending) whose 64 pixels are all set in `pale` (AND of 8 rows, then whole
 * bytes). The returned array is a view of a kept scratch array: valid until the next call.
 */
export function candidateCells(
  pale: Uint32Array,
  stride: number,
  cw: number,
  ch: number,
): Int32Array {
  if (candScratch.length < cw * ch) candScratch = new Int32Array(cw * ch);
  const out = candScratch;
  let n = 0;
  for (let cy = 0; cy < ch; cy++) {
    const r0 = cy * 8 * stride;
    const rowCell = cy * cw;
    for (let k = 0; k < stride; k++) {
      let acc = pale[r0 + k]!;
      if (acc === 0) continue;
      let o = r0 + k;
      for (let r = 1; r < 8 && acc !== 0; r++) {
        o += stride;
        acc &= pale[o]!;
      }
      if (acc === 0) continue;
      const cx0 = k << 2;
      if ((acc & 0xff) === 0xff && cx0 < cw) out[n++] = rowCell + cx0;
      if (((acc >>> 8) & 0xff) === 0xff && cx0 + 1 < cw) out[n++] = rowCell + cx0 + 1;
      if (((acc >>> 16) & 0xff) === 0xff && cx0 + 2 < cw) out[n++] = rowCell + cx0 + 2;
      if (acc >>> 24 === 0xff && cx0 + 3 < cw) out[n++] = rowCell + cx0 + 3;
    }
  }
  return out.subarray(0, n);
}

const hist = new Uint8Array(32);

/**
 * Median grey of each candidate cell wholly inside the image (its cell at image pixel (wx + 8·cx,
 * wy + 8·cy)), from 16 of its 64 pixels (odd rows and columns), as the bin centre of a 32-bin
 * histogram: median[c] = bin·8 + 4 when that is ≥ `black`. A cell whose 16 pixels share one bin (a
 * flat tone: most cells of a fill) is told from two reads a row without the histogram.
 */
export function cellMediansInside(
  data: Uint8Array,
  IW: number,
  wx: number,
  wy: number,
  cw: number,
  cand: Int32Array,
  median: Uint8Array,
  black: number,
): void {
  for (let q = 0; q < cand.length; q++) {
    const c = cand[q]!;
    const cx = c % cw,
      cy = (c / cw) | 0;
    const o0 = (wy + cy * 8 + 1) * IW + wx + cx * 8;
    // Fast path: every sampled pixel in the bin of the first one.
    const bin = data[o0 + 1]! >>> 3;
    let same = true;
    for (let r = 0, o = o0; r < 4; r++, o += 2 * IW) {
      if (
        data[o + 1]! >>> 3 !== bin ||
        data[o + 3]! >>> 3 !== bin ||
        data[o + 5]! >>> 3 !== bin ||
        data[o + 7]! >>> 3 !== bin
      ) {
        same = false;
        break;
      }
    }
    let b = bin;
    if (!same) {
      hist.fill(0);
      for (let r = 0, o = o0; r < 4; r++, o += 2 * IW) {
        hist[data[o + 1]! >>> 3]!++;
        hist[data[o + 3]! >>> 3]!++;
        hist[data[o + 5]! >>> 3]!++;
        hist[data[o + 7]! >>> 3]!++;
      }
      let n = 0;
      for (b = 0; b < 32; b++) {
        n += hist[b]!;
        if (n >= 8) break;
      }
    }
    const med = b * 8 + 4;
    if (med >= black) median[c] = med;
  }
}

/**
 * What splitFills does with a cell of tone t (0..255), per tone: `mode` 0 reads the cell's pixels
 * against `strongT` / `weakT` (line work darker than the tone, fill the rest of the pale ink); 1 and 2
 * are light tones split from the masks alone — line work is the strong plane's byte (1: the weak plane
 * is set to it too) or the weak plane's (2: the weak plane keeps its own threshold), fill the rest of
 * the pale byte.
 */
export interface ToneRules {
  mode: Uint8Array;
  strongT: Int16Array;
  weakT: Int16Array;
}

export interface RewriteArgs {
  strong: Uint32Array;
  weak: Uint32Array;
  pale: Uint32Array;
  fill: Uint32Array;
  stride: number;
  cw: number;
  ch: number;
  rules: ToneRules;
  /** The image and the window origin (pixels outside the image read as paper, 255). */
  data: Uint8Array;
  IW: number;
  IH: number;
  wx: number;
  wy: number;
  /** Every cell inside the image: rows copied without bounds checks. */
  inside: boolean;
  /** Cells inside the image, rows on 4-byte boundaries: 4 pixels per word read. */
  aligned: boolean;
  paleThreshold: number;
}

const HI = 0x80808080;

/** The 4 byte flags of a SWAR "byte < t" (bit 7 of each byte) as bits 0..3 (byte 0 → bit 0). */
function nibble(l: number): number {
  return (Math.imul(l >>> 7, 0x204081) >>> 21) & 0xf;
}

function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

const cellBuf = new Uint8Array(64);

/**
 * Rewrite the masks' bytes of every toned cell (step 4 of splitFills): line work darker than the tone
 * stays in the strong / weak / pale planes, the rest of the pale ink goes to `fill`. Works a mask word
 * (the 4 cells of a row it covers) at a time for light tones; darker ones read their pixels. Returns
 * the fill pixels counted. `tones`: per cell its tone, 256 for a cell that is not toned.
 */
export function rewriteTonedCells(a: RewriteArgs, tones: Uint16Array): number {
  const { strong, weak, pale, fill, stride, cw, ch, rules, data, IW, wx, wy, aligned } = a;
  const { mode, strongT, weakT } = rules;
  const samePale = pale === weak;
  const img32 = aligned
    ? new Uint32Array(data.buffer, data.byteOffset, data.length >>> 2)
    : new Uint32Array(0);
  const cell = cellBuf;
  let px = 0;
  for (let cy = 0; cy < ch; cy++) {
    const crow = cy * cw;
    for (let k = 0, cx0 = 0; cx0 < cw; k++, cx0 += 4) {
      // Byte masks of the word's light cells: line work from the weak plane (mW) or the strong one (mS).
      let mW = 0,
        mS = 0,
        dark = 0;
      for (let j = 0; j < 4 && cx0 + j < cw; j++) {
        const t = tones[crow + cx0 + j]!;
        if (t === 256) continue;
        const md = mode[t]!;
        if (md === 2) mW |= 0xff << (j * 8);
        else if (md === 1) mS |= 0xff << (j * 8);
        else dark |= 1 << j;
      }
      const mL = mW | mS;
      if (mL !== 0) {
        for (let r = 0, wi = cy * 8 * stride + k; r < 8; r++, wi += stride) {
          const wv = weak[wi]!;
          const lb = (wv & mW) | (strong[wi]! & mS);
          const pv = pale[wi]!;
          const fb = pv & mL & ~lb;
          if (mS !== 0) weak[wi] = (wv & ~mS) | (lb & mS);
          if (!samePale) pale[wi] = (pv & ~mL) | lb;
          if (fb !== 0) {
            fill[wi] = fill[wi]! | fb;
            px += popcount32(fb);
          }
        }
      }
      if (dark === 0) continue;
      for (let j = 0; j < 4; j++) {
        if (!(dark & (1 << j))) continue;
        const cx = cx0 + j;
        const t = tones[crow + cx]!;
        const sT = strongT[t]!,
          wT = weakT[t]!;
        const sh = j * 8;
        const keep = ~(0xff << sh);
        if (aligned) {
          // SWAR "byte < t" (lessThan) written out with plain numbers; t < 1: nothing is below it.
          const wOn = wT >= 1,
            sOn = sT >= 1;
          const wHigh = wT > 128,
            sHigh = sT > 128;
          const wK = wHigh ? (wT - 128) * 0x01010101 : (Math.max(wT, 0) * 0x01010101) >>> 0,
            sK = sHigh ? (sT - 128) * 0x01010101 : (Math.max(sT, 0) * 0x01010101) >>> 0;
          for (let r = 0; r < 8; r++) {
            const wi = (cy * 8 + r) * stride + k;
            const base = ((wy + cy * 8 + r) * IW + wx + cx * 8) >>> 2;
            const w0 = img32[base]!,
              w1 = img32[base + 1]!;
            let wb = 0,
              sb = 0;
            if (wOn) {
              const h0 = (w0 | HI) >>> 0,
                h1 = (w1 | HI) >>> 0;
              const d0 = h0 - wK,
                d1 = h1 - wK;
              const l0 = ~(wHigh ? d0 & w0 & HI : (d0 | w0) & HI) & HI,
                l1 = ~(wHigh ? d1 & w1 & HI : (d1 | w1) & HI) & HI;
              wb = nibble(l0) | (nibble(l1) << 4);
              if (wb !== 0 && sOn) {
                const e0 = h0 - sK,
                  e1 = h1 - sK;
                const m0 = ~(sHigh ? e0 & w0 & HI : (e0 | w0) & HI) & HI,
                  m1 = ~(sHigh ? e1 & w1 & HI : (e1 | w1) & HI) & HI;
                sb = nibble(m0) | (nibble(m1) << 4);
              }
            }
            // The fill: pale ink that is not line work (the pale plane still holds packInk's bits here).
            const fb = (pale[wi]! >>> sh) & 0xff & ~wb;
            strong[wi] = (strong[wi]! & keep) | (sb << sh);
            weak[wi] = (weak[wi]! & keep) | (wb << sh);
            if (!samePale) pale[wi] = (pale[wi]! & keep) | (wb << sh);
            if (fb !== 0) {
              fill[wi] = fill[wi]! | (fb << sh);
              px += popcount32(fb);
            }
          }
          continue;
        }
        for (let r = 0; r < 8; r++) {
          const sy = wy + cy * 8 + r;
          if (a.inside) {
            const o = sy * IW + wx + cx * 8;
            cell.set(data.subarray(o, o + 8), r * 8);
            continue;
          }
          for (let i = 0; i < 8; i++) {
            const sx = wx + cx * 8 + i;
            cell[r * 8 + i] =
              sy < 0 || sy >= a.IH || sx < 0 || sx >= IW ? 255 : data[sy * IW + sx]!;
          }
        }
        const pT = a.paleThreshold;
        for (let r = 0; r < 8; r++) {
          let sb = 0,
            wb = 0,
            fb = 0;
          for (let i = 0; i < 8; i++) {
            const v = cell[r * 8 + i]!;
            if (v < wT) {
              wb |= 1 << i;
              if (v < sT) sb |= 1 << i;
            } else if (v < pT) fb |= 1 << i;
          }
          const wi = (cy * 8 + r) * stride + k;
          strong[wi] = (strong[wi]! & keep) | (sb << sh);
          weak[wi] = (weak[wi]! & keep) | (wb << sh);
          if (!samePale) pale[wi] = (pale[wi]! & keep) | (wb << sh);
          if (fb !== 0) {
            fill[wi] = fill[wi]! | (fb << sh);
            px += popcount32(fb);
          }
        }
      }
    }
  }
  return px;
}
