// Reusable output buffers for a process that runs many compares one after another (a kept-alive compare
// worker). A fresh array is written at page-fault speed by the thread that first touches it
// (performance-anchors §3; a plain fill of a fresh 90 MB buffer took ~40 ms); an array kept from the
// previous compare is already mapped (bench/compare README: kept buffers). They hold the ink masks, aligned B,
// the changed masks and the overlays' palette indices. The catch is ownership: what a compare returns
// in these buffers (the overlay indices, aligned B, the masks of its DiffResult) is only valid until
// the next compare that is given the same CompareBuffers.

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
    const kept = this.kept(slot, n);
    if (!kept) return this.grow(slot, n);
    const v = kept.subarray(0, n);
    v.fill(0);
    return v;
  }

  /**
   * words() without the zeroing, for an array the caller writes in full before reading (aligned B:
   * alignGrey writes every pixel; a list read only as far as it was written): what the kept array held
   * is left there. Zeroing aligned B alone was a 30 MB memset a compare at 200 dpi (67 MB at 300).
   */
  wordsToOverwrite(slot: string, n: number): Uint32Array {
    const kept = this.kept(slot, n);
    return kept ? kept.subarray(0, n) : this.grow(slot, n);
  }

  /** bytes() without the zeroing (wordsToOverwrite). */
  bytesToOverwrite(slot: string, n: number): Uint8Array {
    const w = this.wordsToOverwrite(slot, (n + 3) >>> 2);
    return new Uint8Array(w.buffer, w.byteOffset, n);
  }

  /** words(), as n zeroed bytes (aligned B, the overlays' palette indices). */
  bytes(slot: string, n: number): Uint8Array {
    const w = this.words(slot, (n + 3) >>> 2);
    return new Uint8Array(w.buffer, w.byteOffset, n);
  }

  /**
   * Make `slot` hold at least n words now, touching every page of a new array (so its page faults are
   * taken here, e.g. while libvips decodes, not by the first compare stage that writes it). A kept
   * array of n words or more is left as it is.
   */
  reserve(slot: string, n: number): void {
    if (this.kept(slot, n)) return;
    const fresh = this.grow(slot, n);
    // One write per 4 KiB page maps it (a fresh array is all zeros already).
    for (let i = 0; i < n; i += 1024) fresh[i] = 0;
  }

  /** The array kept for `slot` when it holds n words or more. */
  private kept(slot: string, n: number): Uint32Array | undefined {
    if (!Number.isInteger(n) || n < 0)
      throw new Error(`Expected a word count ≥ 0 but received ${n}`);
    const kept = this.u32.get(slot);
    return kept && kept.length >= n ? kept : undefined;
  }

  /** A new zeroed array of n words, kept for `slot` from now on. */
  private grow(slot: string, n: number): Uint32Array {
    const fresh = new Uint32Array(n);
    this.made++;
    this.u32.set(slot, fresh);
    return fresh;
  }

  /** Let every kept buffer go (e.g. before a long idle period). */
  clear(): void {
    this.u32.clear();
  }
}
