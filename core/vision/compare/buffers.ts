// Reusable output buffers for a process that runs many compares one after another (a kept-alive compare
// worker). A fresh 90 MB RGB overlay (200 DPI; 202 MB at 300 DPI) costs ~40 ms (~90 ms) of first-touch
// page faults on the thread that first writes it (performance-anchors §3: a fresh fill runs at memset
// speed at best); a buffer kept from the previous compare is already mapped. The catch is ownership: what
// a compare returns in these buffers (the overlay images, the masks of its DiffResult) is only valid
// until the next compare that is given the same CompareBuffers.

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
