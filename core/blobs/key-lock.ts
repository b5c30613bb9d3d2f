/**
 * Serializes async work per key within this process: a second call for a key waits for the
 * first to finish (the object stores' commits and deletions of one key).
 */
export class KeyLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Whether work for `key` is running or waiting. */
  has(key: string): boolean {
    return this.tails.has(key);
  }

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
