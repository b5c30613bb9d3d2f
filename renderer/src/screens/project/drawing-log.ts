// The drawing log, pure: sets newest issue first with the current one marked, and each sheet's
// history across sets (one row per sheet number, one cell per set, oldest to newest).

import { compareIssues } from '../../api/issue-order';
import type { Drawing, Overlay, Sheet } from '../../api/types';

/** Sets newest issue first (issue date, then upload order: the service's rule). */
export function logOrder(sets: Drawing[]): Drawing[] {
  return [...sets].sort((a, b) => compareIssues(b, a));
}

/** The current set: the newest issue that processed. */
export function currentSet(sets: Drawing[]): Drawing | null {
  return logOrder(sets).find((d) => d.status === 'Ready') ?? null;
}

export interface HistoryRow {
  sheetNumber: string;
  title: string;
  /** Per set, oldest issue first: the sheet in that set, or null when the set lacks it. */
  cells: (Sheet | null)[];
  /** The newest sheet and the one before it (the previous revision), when both exist. */
  latest: Sheet | null;
  previous: Sheet | null;
}

/** Sheet history across `sets` (oldest issue first), sorted by sheet number. */
export function sheetHistory(sets: Drawing[], sheets: Sheet[]): HistoryRow[] {
  const order = [...sets].sort(compareIssues);
  const col = new Map(order.map((d, i) => [d.id, i]));
  const rows = new Map<string, HistoryRow>();
  for (const s of sheets) {
    const i = col.get(s.drawing_id);
    if (i === undefined) continue;
    const num = s.sheet_number || `page ${s.index + 1}`;
    let r = rows.get(num);
    if (!r) {
      r = {
        sheetNumber: num,
        title: '',
        cells: order.map(() => null),
        latest: null,
        previous: null,
      };
      rows.set(num, r);
    }
    r.cells[i] = s;
  }
  for (const r of rows.values()) {
    const present = r.cells.filter((c): c is Sheet => !!c);
    r.latest = present[present.length - 1] ?? null;
    r.previous = present[present.length - 2] ?? null;
    r.title = r.latest?.title ?? '';
  }
  return [...rows.values()].sort((a, b) =>
    a.sheetNumber.localeCompare(b.sheetNumber, undefined, { numeric: true }),
  );
}

/** An existing overlay comparing `older` with `newer` (the whole sheet preferred), if any. */
export function existingSheetOverlay(
  overlays: Overlay[],
  older: Sheet,
  newer: Sheet,
): Overlay | null {
  const match = overlays.filter(
    (o) => o.block_a?.sheet_id === older.id && o.block_b?.sheet_id === newer.id,
  );
  return match.find((o) => o.block_a?.type === 'Sheet') ?? match[0] ?? null;
}

/** What deleting goes with, counted from overlays: overlays, changes, comparisons. */
export function deleteCounts(overlays: Overlay[]): {
  overlays: number;
  changes: number;
  comparisons: number;
} {
  // A view's changes are the whole sheet's seen through the view: count each pair once.
  const pairs = new Map<string, Overlay[]>();
  for (const o of overlays) {
    const k = `${o.block_a?.sheet_id}|${o.block_b?.sheet_id}`;
    pairs.set(k, [...(pairs.get(k) ?? []), o]);
  }
  let changes = 0;
  for (const list of pairs.values()) {
    const whole = list.filter((o) => o.block_a?.type === 'Sheet');
    for (const o of whole.length ? whole : list) changes += o.change_count ?? 0;
  }
  return {
    overlays: overlays.length,
    changes,
    comparisons: new Set(overlays.map((o) => o.job_id).filter(Boolean)).size,
  };
}
