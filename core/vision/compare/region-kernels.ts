// Word-at-a-time loops of the change regions (regions.ts), kept apart from its rules: the same counts
// as the per-pixel loops they replace (region-kernels.test.ts checks them against those), 32 pixels
// per step.

/** Bits x0..x0+31 of row y of `m` (bit i = pixel x0 + i); pixels outside 0..width−1 read as 0. */
function bits32(m: Uint32Array, stride: number, width: number, y: number, x0: number): number {
  if (x0 >= width || x0 <= -32) return 0;
  const row = y * stride;
  let v: number;
  if (x0 >= 0) {
    const k = x0 >>> 5,
      s = x0 & 31;
    v = m[row + k]! >>> s;
    if (s !== 0 && k + 1 < stride) v |= m[row + k + 1]! << (32 - s);
  } else v = m[row]! << -x0;
  const n = width - x0;
  if (n < 32) v &= (1 << n) - 1;
  return v | 0;
}

function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/**
 * The pixels set in `removed` inside the box (x0..x1, y0..y1 inclusive, inside the image) and how many
 * of them, shifted by (dx, dy), land within ±1 px of a pixel set in `added` on rows ay0 − 1 .. ay1 + 1
 * (and inside the image): regions.ts shapeMatch's counts, a mask word at a time.
 */
export function shiftedHits(
  removed: Uint32Array,
  added: Uint32Array,
  stride: number,
  width: number,
  height: number,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  ay0: number,
  ay1: number,
  dx: number,
  dy: number,
): { hit: number; tot: number } {
  let hit = 0,
    tot = 0;
  for (let y = y0; y <= y1; y++) {
    const ty = y + dy;
    const lo = Math.max(ty - 1, ay0 - 1, 0),
      hi = Math.min(ty + 1, ay1 + 1, height - 1);
    for (let x = x0; x <= x1; x += 32) {
      let r = bits32(removed, stride, width, y, x);
      const n = x1 - x + 1;
      if (n < 32) r &= (1 << n) - 1;
      if (r === 0) continue;
      tot += popcount32(r);
      let near = 0;
      const tx = x + dx;
      for (let yy = lo; yy <= hi; yy++)
        near |=
          bits32(added, stride, width, yy, tx - 1) |
          bits32(added, stride, width, yy, tx) |
          bits32(added, stride, width, yy, tx + 1);
      hit += popcount32(r & near);
    }
  }
  return { hit, tot };
}
