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
  /** Arrays made so far (by words() and reserve()): none while the kept ones are large enough. */
  made = 0;

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
    this.made++;
    this.u32.set(slot, fresh);
    return fresh;
  }

  /**
   * Make `slot` hold at least n words now, touching every page of a new array (so its page faults are
   * taken here, e.g. while libvips decodes, not by the first compare stage that writes it). A kept
   * array of n words or more is left as it is.
   */
  reserve(slot: string, n: number): void {
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`Expected a word count ≥ 0 but received ${n}`);
    const kept = this.u32.get(slot);
    if (kept && kept.length >= n) return;
    const fresh = new Uint32Array(n);
    this.made++;
    // One write per 4 KiB page maps it (a fresh array is all zeros already).
    for (let i = 0; i < n; i += 1024) fresh[i] = 0;
    this.u32.set(slot, fresh);
  }

  /** Let every kept buffer go (e.g. before a long idle period). */
  clear(): void {
    this.u32.clear();
  }
}
