// Navigation across a comparison's sheets. Pure.
//
// One stop per sheet pair, in the comparison list's order (most changed first): the pair's
// whole-sheet overlay, which reports every change on the page (contract §6), or its first view
// for comparisons made before whole sheets. `[`/`]` step stop by stop; `j`/`k` walk a sheet's
// changes and past its last one go on to the next stop that has changes, so every change of the
// set is reached once.

import type { Overlay } from '../../api/types';
import { buildPairRows, isWholeSheet } from '../pair-rows';

/** Which sheet pair an overlay belongs to. */
export const pairKey = (o: Overlay): string =>
  `${o.block_a?.sheet_id ?? '?'}|${o.block_b?.sheet_id ?? '?'}`;

/** One overlay per sheet pair, in the comparison list's order. */
export function sheetStops(overlays: Overlay[]): Overlay[] {
  return buildPairRows(null, overlays, new Map()).flatMap((r) =>
    r.overlays[0] ? [r.overlays[0]] : [],
  );
}

/** The index of the stop an overlay (a whole sheet or one of its views) belongs to, or -1. */
export function stopIndex(stops: Overlay[], current: Overlay): number {
  const k = pairKey(current);
  return stops.findIndex((o) => pairKey(o) === k);
}

/** The next (+1) or previous (-1) sheet, or null at the end of the set. */
export function stepSheet(stops: Overlay[], current: Overlay, dir: 1 | -1): Overlay | null {
  const i = stopIndex(stops, current);
  if (i < 0) return null;
  return stops[i + dir] ?? null;
}

/** The next (+1) or previous (-1) sheet that has changes (an unknown count may have some). */
export function stepSheetWithChanges(
  stops: Overlay[],
  current: Overlay,
  dir: 1 | -1,
): Overlay | null {
  const i = stopIndex(stops, current);
  if (i < 0) return null;
  for (let j = i + dir; j >= 0 && j < stops.length; j += dir) {
    const s = stops[j] as Overlay;
    if ((s.change_count ?? 1) > 0 || !isWholeSheet(s)) return s;
  }
  return null;
}

export type ChangeStep =
  | { kind: 'select'; index: number }
  | { kind: 'sheet'; overlay: Overlay; land: 'first' | 'last' }
  | { kind: 'end'; dir: 1 | -1 };

/**
 * Where `j` (+1) or `k` (-1) goes from change `selected` (-1: none) of `count` on this overlay:
 * another change here, the first (or last) change of the next (or previous) sheet with changes,
 * or the end of the set.
 */
export function stepChange(
  selected: number,
  count: number,
  dir: 1 | -1,
  stops: Overlay[],
  current: Overlay,
): ChangeStep {
  if (count > 0) {
    if (selected < 0) return { kind: 'select', index: dir === 1 ? 0 : count - 1 };
    const next = selected + dir;
    if (next >= 0 && next < count) return { kind: 'select', index: next };
  }
  const sheet = stepSheetWithChanges(stops, current, dir);
  if (sheet) return { kind: 'sheet', overlay: sheet, land: dir === 1 ? 'first' : 'last' };
  return { kind: 'end', dir };
}
