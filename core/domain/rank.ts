/**
 * Ranks order work waiting for a worker (WorkerPool TaskOptions.rank, the tile service's renders):
 * compared element by element, lower first; a rank that is a prefix of the other is lower.
 */
export function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
