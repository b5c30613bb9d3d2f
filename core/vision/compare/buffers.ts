// Reusable output buffers for a process that runs many compares one after another (a kept-alive compare
// worker). A fresh array is written at page-fault speed by the thread that first touches it
// (performance-anchors §3; a plain fill of a fresh 90 MB buffer took ~40 ms); an array kept from the
// previous compare is already mapped (bench/compare README: kept buffers). They hold the ink masks, the
// warped and changed masks and the overlays' palette indices. The catch is ownership: what a compare
// returns in these buffers (the overlay indices, the masks of its DiffResult) is only valid until the
// next compare that is given the same CompareBuffers.

import type { WordSource } from './diff';

export class CompareBuffers implements WordSource {
  private readonly u32 = new Map<string, Uint32Array>();

  /**
   * A zeroed Uint32Array of n words for `slot` (the mask arrays: diff.ts WordSource): the one kept from
   * the previous call when it is big enough (zeroing mapped memory runs at memset speed), else a new one.
   */
  words(slot: string, n: number): Uint32Array {
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`Expected a word count ≥ 0 but received ${n}`);
    const kept = this.u32.get(slot);
    if (kept && kept.length >= n) {
      const v = kept.subarray(0, n);
      v.fill(0);
      return v;
    }
    const fresh = new Uint32Array(n);
    this.u32.set(slot, fresh);
    return fresh;
  }

  /** Let every kept buffer go (e.g. before a long idle period). */
  clear(): void {
    this.u32.clear();
  }
}
