// Kept arrays handed out without zeroing (CompareBuffers.bytesToOverwrite / wordsToOverwrite: aligned
// B, the combined overlay's inked-word list, the ink masks when the SIMD packer writes them whole, the
// changed masks when the SIMD diff writes them whole): a
// compare into buffers full of another compare's (or junk) values gives the same images and regions as
// one into fresh arrays, with the SIMD packer and with the JS one (which skips paper words).
import { describe, expect, it } from 'vitest';
import { CompareBuffers } from './buffers';
import { compareToPng, IMAGE_KINDS } from './compare-pipeline.adapter';
import { maskKernels } from './diff';
import { rng, strokeRect } from './test-support';
import type { GreyImage } from '../types';

const mk = (seed: number): GreyImage => {
  const r = rng(seed);
  const img: GreyImage = { width: 310, height: 130, data: new Uint8Array(310 * 130).fill(255) };
  for (let i = 0; i < 40; i++) strokeRect(img, r() * 270, r() * 100, 30, 20, 1 + (i % 3));
  return img;
};

describe('CompareBuffers arrays to overwrite', () => {
  it('keep what they held, and compares into them match compares into fresh arrays', async () => {
    const buffers = new CompareBuffers();
    buffers.wordsToOverwrite('z', 8).fill(7);
    expect([...buffers.wordsToOverwrite('z', 6)]).toEqual([7, 7, 7, 7, 7, 7]);
    expect([...buffers.bytesToOverwrite('z', 5)]).toEqual([7, 0, 0, 0, 7]);
    const made = buffers.made;
    buffers.bytesToOverwrite('z', 40); // more than kept: a new (zeroed) array
    expect(buffers.made).toBe(made + 1);
    expect([...buffers.wordsToOverwrite('z', 10)].every((v) => v === 0)).toBe(true);

    const A = mk(1),
      B = mk(2),
      C = mk(3);
    const opts = {
      skipRegistration: true,
      transform: [1, 0, 2.4, 0, 1, -3.2] as [number, number, number, number, number, number],
      images: [...IMAGE_KINDS],
    };
    const slots = ['aligned_b', 'overlay.inked', 'added', 'removed'];
    for (const side of ['a.', 'b.'])
      for (const p of ['weak', 'strong', 'pale']) slots.push(side + p);
    for (const [x, y, simd] of [
      [A, B, true],
      [A, C, true],
      [C, B, false],
      [B, A, false],
    ] as const) {
      maskKernels.simd = simd;
      // Junk in every kept array the compare takes without zeroing.
      for (const slot of slots) buffers.wordsToOverwrite(slot, 310 * 130).fill(0x5a5a5a5a);
      const kept = await compareToPng(x, y, { ...opts, buffers });
      const plain = await compareToPng(x, y, opts);
      expect(Buffer.compare(Buffer.from(kept.pngs.aligned_b!), plain.pngs.aligned_b!)).toBe(0);
      for (const k of IMAGE_KINDS) expect(kept.pngs[k]!.equals(plain.pngs[k]!), k).toBe(true);
      expect(kept.regions).toEqual(plain.regions);
      expect(kept.stats).toEqual(plain.stats);
      expect(kept.diff.added).toEqual(plain.diff.added);
      expect(kept.diff.removed).toEqual(plain.diff.removed);
      expect(kept.diff.added.some((v) => v !== 0)).toBe(true);
    }
    maskKernels.simd = true;
  });
});
