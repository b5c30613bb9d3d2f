// Template variants for symbol matching: a template crop turned into "ink" (255 − grey, so paper
// is 0 and black ink 255), resampled to a scale, rotated by a multiple of 90°, and box-reduced to
// the pyramid levels the matcher searches. Pure typed-array code; units are pixels of the image the
// template was cropped from (origin top-left, x right, y down).
import type { GreyImage } from '../types';

export type Rotation = 0 | 90 | 180 | 270;

/** A float ink plane (0 = paper). */
export interface InkPlane {
  width: number;
  height: number;
  data: Float32Array;
}

/** One template pixel plane prepared for normalized cross-correlation. */
export interface NccKernel {
  width: number;
  height: number;
  /** Raw ink values, row-major. */
  data: Float32Array;
  /** Indices (row-major) of cells with ink: Σ T·I only runs over these (templates are mostly paper). */
  nz: Int32Array;
  /** Window column/row of each index in `nz` (so a window row stride can be applied). */
  nzX: Int32Array;
  nzY: Int32Array;
  mean: number;
  /** sqrt(Σ (T − mean)²): the zero-mean template's norm. */
  norm: number;
  /** Standard deviation of T over the window (norm / sqrt(n)). */
  std: number;
}

export function inkOf(img: GreyImage): InkPlane {
  const n = img.width * img.height;
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = 255 - img.data[i]!;
  return { width: img.width, height: img.height, data };
}

/**
 * Resample by `s` (output pixel centre (x+0.5)/s − 0.5 in the source, bilinear; paper outside).
 * For the small changes symbols see between sheets (±15 %) bilinear loses nothing that matters.
 */
export function scalePlane(p: InkPlane, s: number): InkPlane {
  if (s === 1) return p;
  const w = Math.max(1, Math.round(p.width * s));
  const h = Math.max(1, Math.round(p.height * s));
  const out = new Float32Array(w * h);
  const sx = p.width / w;
  const sy = p.height / h;
  const at = (x: number, y: number) =>
    x < 0 || y < 0 || x >= p.width || y >= p.height ? 0 : p.data[y * p.width + x]!;
  for (let y = 0; y < h; y++) {
    const fy = (y + 0.5) * sy - 0.5;
    const y0 = Math.floor(fy);
    const ty = fy - y0;
    for (let x = 0; x < w; x++) {
      const fx = (x + 0.5) * sx - 0.5;
      const x0 = Math.floor(fx);
      const tx = fx - x0;
      out[y * w + x] =
        (1 - ty) * ((1 - tx) * at(x0, y0) + tx * at(x0 + 1, y0)) +
        ty * ((1 - tx) * at(x0, y0 + 1) + tx * at(x0 + 1, y0 + 1));
    }
  }
  return { width: w, height: h, data: out };
}

/**
 * Rotate clockwise on the page (y down) by `r` degrees. For 90°: a source pixel (x, y) lands at
 * (h − 1 − y, x) in the w' = h, h' = w output, so the template's top edge becomes its right edge.
 */
export function rotatePlane(p: InkPlane, r: Rotation): InkPlane {
  if (r === 0) return p;
  const { width: w, height: h, data } = p;
  const ow = r === 180 ? w : h;
  const oh = r === 180 ? h : w;
  const out = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const v = data[y * w + x]!;
      let ox: number, oy: number;
      if (r === 90) {
        ox = h - 1 - y;
        oy = x;
      } else if (r === 180) {
        ox = w - 1 - x;
        oy = h - 1 - y;
      } else {
        ox = y;
        oy = w - 1 - x;
      }
      out[oy * ow + ox] = v;
    }
  }
  return { width: ow, height: oh, data: out };
}

/** Box-mean reduction by an integer factor (partial edge cells average what they cover). */
export function reducePlane(p: InkPlane, f: number): InkPlane {
  if (f === 1) return p;
  const w = Math.ceil(p.width / f);
  const h = Math.ceil(p.height / f);
  const sum = new Float32Array(w * h);
  const cnt = new Float32Array(w * h);
  for (let y = 0; y < p.height; y++) {
    const oy = ((y / f) | 0) * w;
    for (let x = 0; x < p.width; x++) {
      const o = oy + ((x / f) | 0);
      sum[o]! += p.data[y * p.width + x]!;
      cnt[o]!++;
    }
  }
  for (let i = 0; i < sum.length; i++) sum[i]! /= cnt[i]!;
  return { width: w, height: h, data: sum };
}

/** Statistics and the sparse ink index of a plane, for NCC. Cells below `eps` ink count as paper in the sparse sum. */
export function toKernel(p: InkPlane, eps = 0.5): NccKernel {
  const n = p.width * p.height;
  // Sparse Σ T·I skips cells ≤ eps: zero them first so the statistics describe what is summed.
  const data = new Float32Array(p.data);
  let s = 0;
  let ss = 0;
  let k = 0;
  for (let i = 0; i < n; i++) {
    let v = data[i]!;
    if (v <= eps) v = data[i] = 0;
    else k++;
    s += v;
    ss += v * v;
  }
  const mean = s / n;
  const norm = Math.sqrt(Math.max(0, ss - s * mean));
  const nz = new Int32Array(k);
  const nzX = new Int32Array(k);
  const nzY = new Int32Array(k);
  let j = 0;
  for (let y = 0; y < p.height; y++) {
    for (let x = 0; x < p.width; x++) {
      const i = y * p.width + x;
      if (data[i]! > 0) {
        nz[j] = i;
        nzX[j] = x;
        nzY[j] = y;
        j++;
      }
    }
  }
  return {
    width: p.width,
    height: p.height,
    data,
    nz,
    nzX,
    nzY,
    mean,
    norm,
    std: norm / Math.sqrt(n),
  };
}
