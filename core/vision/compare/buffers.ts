// Reusable output buffers for a process that runs many compares one after another (a kept-alive compare
// worker). A fresh RGB overlay (90 MB at 200 DPI, 202 MB at 300 DPI) is written at page-fault speed by the
// thread that first touches it (performance-anchors §3; a plain fill of a fresh 90 MB buffer took ~40 ms);
// a buffer kept from the previous compare is already mapped (bench/compare README, per-pixel slice: the
// overlay phase of a third compare in one process 52–78 → 14–18 ms at 200 DPI, 111–113 → 26–28 ms at
// 300 DPI). The catch is ownership: what a compare returns in these buffers (the overlay images, the
// masks of its DiffResult) is only valid until the next compare that is given the same CompareBuffers.

import type { WordSource } from './diff';

export class CompareBuffers implements WordSource {
  private readonly bytes = new Map<string, Uint8Array>();
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

  /**
   * A byte buffer of n bytes for `slot` (e.g. the image kind): the one kept from the previous call when
   * it is big enough, else a new one (kept for the next call). Contents are whatever was written last:
   * callers overwrite every byte.
   */
  take(slot: string, n: number): Uint8Array {
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`Expected a byte count ≥ 0 but received ${n}`);
    let b = this.bytes.get(slot);
    if (!b || b.length < n) {
      b = new Uint8Array(n);
      this.bytes.set(slot, b);
    }
    return b.subarray(0, n);
  }

  /** Let every kept buffer go (e.g. before a long idle period). */
  clear(): void {
    this.bytes.clear();
    this.u32.clear();
  }
}
