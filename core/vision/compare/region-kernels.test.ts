// shiftedHits (region-kernels.ts) against the per-pixel loop it replaces in regions.ts shapeMatch:
// random masks with padding bits past the row end, boxes at the image's edges and shifts that carry
// the search outside the image or past the added box's rows.
import { describe, expect, it } from 'vitest';
import { shiftedHits } from './region-kernels';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const bitAt = (m: Uint32Array, stride: number, x: number, y: number) =>
  (m[y * stride + (x >> 5)]! >>> (x & 31)) & 1;

/** The per-pixel loop of regions.ts shapeMatch (before the word loop), as counts. */
function reference(
  removed: Uint32Array,
  added: Uint32Array,
  stride: number,
  width: number,
  height: number,
  rb: { x0: number; y0: number; x1: number; y1: number },
  ab: { y0: number; y1: number },
  dx: number,
  dy: number,
) {
  let hit = 0,
    tot = 0;
  for (let y = rb.y0; y <= rb.y1; y++)
    for (let x = rb.x0; x <= rb.x1; x++) {
      if (!bitAt(removed, stride, x, y)) continue;
      tot++;
      const tx = x + dx,
        ty = y + dy;
      let found = 0;
      for (let yy = ty - 1; yy <= ty + 1 && !found; yy++) {
        if (yy < ab.y0 - 1 || yy > ab.y1 + 1 || yy < 0 || yy >= height) continue;
        for (let xx = tx - 1; xx <= tx + 1; xx++) {
          if (xx < 0 || xx >= width) continue;
          if (bitAt(added, stride, xx, yy)) {
            found = 1;
            break;
          }
        }
      }
      hit += found;
    }
  return { hit, tot };
}

describe('shiftedHits', () => {
  it('counts what the per-pixel loop counts', () => {
    const r = rng(7);
    let cases = 0,
      partial = 0;
    for (const [width, height] of [
      [77, 40],
      [96, 33],
      [131, 50],
    ] as const) {
      const stride = Math.ceil(width / 32);
      const removed = new Uint32Array(stride * height),
        added = new Uint32Array(stride * height);
      // Blobs so that shifted shapes overlap; random words elsewhere, padding bits included.
      for (let i = 0; i < removed.length; i++) {
        removed[i] = r() < 0.5 ? (r() * 2 ** 32) >>> 0 : 0;
        added[i] = r() < 0.5 ? (r() * 2 ** 32) >>> 0 : 0;
      }
      for (let t = 0; t < 300; t++) {
        const x0 = Math.floor(r() * width),
          y0 = Math.floor(r() * height);
        const x1 = Math.min(width - 1, x0 + Math.floor(r() * 80)),
          y1 = Math.min(height - 1, y0 + Math.floor(r() * 20));
        const ay0 = Math.floor(r() * height),
          ay1 = Math.min(height - 1, ay0 + Math.floor(r() * 30));
        const dx = Math.floor(r() * 2 * width) - width,
          dy = Math.floor(r() * 30) - 15;
        const want = reference(
          removed,
          added,
          stride,
          width,
          height,
          { x0, y0, x1, y1 },
          { y0: ay0, y1: ay1 },
          dx,
          dy,
        );
        const got = shiftedHits(
          removed,
          added,
          stride,
          width,
          height,
          x0,
          y0,
          x1,
          y1,
          ay0,
          ay1,
          dx,
          dy,
        );
        expect(got, `${width}x${height} box ${x0},${y0}-${x1},${y1} shift ${dx},${dy}`).toEqual(
          want,
        );
        cases++;
        if (want.hit > 0 && want.hit < want.tot) partial++;
      }
    }
    expect(cases).toBe(900);
    // Partial matches occurred (neither all nor none of the removed pixels found).
    expect(partial).toBeGreaterThan(100);
  });
});
