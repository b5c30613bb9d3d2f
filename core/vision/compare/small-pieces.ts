// The 8-connected pieces of a packed bit mask, found over its runs (speckNoise's specks).
//
// speckNoise used to flood every changed piece pixel by pixel (a stack of coordinates, nine
// neighbour reads per pixel) only to learn that most of them — lines, outlines — are larger than a
// speck. Here each row's runs of set bits are read word at a time (count-trailing-zeros over the
// words, never a pixel), a run is joined to the runs of the row above that touch it (8-connected:
// overlapping or diagonal by one pixel) in a union-find over runs whose roots sum their pixels; the
// small pieces' runs are then listed. The pieces are the flood's (8-connected components of the
// mask's bits below the width). Run arrays are kept between calls and grown as needed.

let cap = 0;
let rx0 = new Int32Array(0),
  rx1 = new Int32Array(0),
  ry = new Int32Array(0),
  par = new Int32Array(0),
  size = new Int32Array(0),
  head = new Int32Array(0),
  next = new Int32Array(0);

function grow(n: number): void {
  if (n <= cap) return;
  const c = Math.max(n, cap * 2, 4096);
  const g = (a: Int32Array) => {
    const b = new Int32Array(c);
    b.set(a);
    return b;
  };
  rx0 = g(rx0);
  rx1 = g(rx1);
  ry = g(ry);
  par = g(par);
  size = g(size);
  head = new Int32Array(c);
  next = new Int32Array(c);
  cap = c;
}

function find(i: number): number {
  let r = i;
  while (par[r]! !== r) r = par[r]!;
  while (par[i]! !== r) {
    const n = par[i]!;
    par[i] = r;
    i = n;
  }
  return r;
}

const ctz = (x: number): number => 31 - Math.clz32(x & -x);

/** The runs of a mask and their pieces (labelRuns): arrays shared by every call, valid until the next. */
export interface RunLabels {
  /** Runs, in raster order: run i is row ys[i], x from xs0[i] to xs1[i] (inclusive). */
  n: number;
  ys: Int32Array;
  xs0: Int32Array;
  xs1: Int32Array;
  /** Each run's piece, as the piece's first run in raster order (its top row's leftmost run). */
  root: Int32Array;
  /** A piece's pixels, at its root. */
  size: Int32Array;
  /** Index of each row's first run; row y's runs are rowStart[y] .. rowStart[y + 1] - 1. */
  rowStart: Int32Array;
  /** A piece's runs: head[root], then next[run] until -1 (filled for the pieces listPieces was asked for). */
  head: Int32Array;
  next: Int32Array;
}

let rows = new Int32Array(0);

/**
 * The runs of set bits of `mask` (W x H bits, rows of `stride` 32-bit words, bit x of word x >> 5 at
 * x & 31; bits at or past W are not part of the mask), read word at a time, and its 8-connected
 * pieces as a union-find over the runs (a piece's root is its first run in raster order).
 */
export function labelRuns(
  mask: Uint32Array,
  W: number,
  H: number,
  stride: number,
  words?: Int32Array,
): RunLabels {
  const lastBits = W - (stride - 1) * 32;
  const lastMask = lastBits >= 32 ? 0xffffffff : lastBits <= 0 ? 0 : (1 << lastBits) - 1;
  if (rows.length < H + 1) rows = new Int32Array(H + 1);
  let n = 0;
  let prevStart = 0,
    prevEnd = 0;
  // With `words`, only those words are read (ascending word indices holding every set bit of the
  // mask, and maybe others): a word left out is 0, which ends a run open before it.
  const nw = words ? words.length : 0;
  let q = 0;
  for (let y = 0; y < H; y++) {
    const rowStart = n;
    rows[y] = n;
    const base = y * stride;
    let open = -1;
    const rowEnd = base + stride;
    let last = -1;
    for (let k = 0; k < stride; k++) {
      if (words) {
        if (q >= nw || words[q]! >= rowEnd) {
          // The row's remaining words are 0: a run open here ends before the word after the last read.
          if (open >= 0 && last + 1 < stride) {
            if (n >= cap) grow(n + 1);
            rx0[n] = open;
            rx1[n] = (last + 1) * 32 - 1;
            ry[n] = y;
            par[n] = n;
            size[n] = rx1[n]! - open + 1;
            n++;
            open = -1;
          }
          break;
        }
        const next = words[q++]! - base;
        if (open >= 0 && next > last + 1) {
          // A 0 word between: the open run ends before it.
          if (n >= cap) grow(n + 1);
          rx0[n] = open;
          rx1[n] = (last + 1) * 32 - 1;
          ry[n] = y;
          par[n] = n;
          size[n] = rx1[n]! - open + 1;
          n++;
          open = -1;
        }
        k = next;
        last = k;
      }
      let w = mask[base + k]!;
      if (k === stride - 1) w &= lastMask;
      if (w === 0 && open < 0) continue;
      let pos = 0;
      while (pos < 32) {
        if (open < 0) {
          const rest = w >>> pos;
          if (rest === 0) break;
          pos += ctz(rest);
          open = k * 32 + pos;
        } else {
          const rest = ~w >>> pos;
          if (rest === 0) break; // the run goes on into the next word
          pos += ctz(rest);
          if (n >= cap) grow(n + 1);
          rx0[n] = open;
          rx1[n] = k * 32 + pos - 1;
          ry[n] = y;
          par[n] = n;
          size[n] = rx1[n]! - open + 1;
          n++;
          open = -1;
        }
      }
    }
    if (open >= 0) {
      if (n >= cap) grow(n + 1);
      rx0[n] = open;
      rx1[n] = stride * 32 - 1;
      ry[n] = y;
      par[n] = n;
      size[n] = rx1[n]! - open + 1;
      n++;
    }
    // Join the row's runs to the runs of the row above that touch them (8-connected).
    let j = prevStart;
    for (let r = rowStart; r < n; r++) {
      const a = rx0[r]! - 1,
        b = rx1[r]! + 1;
      while (j < prevEnd && rx1[j]! < a) j++;
      for (let q = j; q < prevEnd && rx0[q]! <= b; q++) {
        const ra = find(r),
          rb = find(q);
        if (ra === rb) continue;
        // The smaller index stays root: a piece's root is its first run.
        if (ra < rb) {
          par[rb] = ra;
          size[ra] = size[ra]! + size[rb]!;
        } else {
          par[ra] = rb;
          size[rb] = size[rb]! + size[ra]!;
        }
      }
    }
    prevStart = rowStart;
    prevEnd = n;
  }
  rows[H] = n;
  for (let i = 0; i < n; i++) par[i] = find(i);
  return {
    n,
    ys: ry,
    xs0: rx0,
    xs1: rx1,
    root: par,
    size,
    rowStart: rows,
    head,
    next,
  };
}

/**
 * Lists the runs of each piece of at most `maxPx` pixels (labels.head / labels.next, in raster
 * order); the other pieces' heads are -1. Returns the number of such pieces.
 */
export function listPieces(labels: RunLabels, maxPx: number): number {
  const { n } = labels;
  head.fill(-1, 0, n);
  let count = 0;
  for (let i = n - 1; i >= 0; i--) {
    const r = par[i]!;
    if (size[r]! > maxPx) continue;
    if (head[r] === -1) count++;
    next[i] = head[r]!;
    head[r] = i;
  }
  return count;
}
