// Builds the comparison screen's pair list from the job result and its overlays. Pure.
//
// A drawing comparison pairs sheets, then blocks within each pair; each block pair is one
// overlay, and the Sheet blocks (the whole pages) always pair: every sheet pair has a whole-sheet
// overlay, which reports every change on the page (contract §6). One row per sheet pair; its score
// is the lowest of its overlays' (the most changed view decides how much the sheet changed), its
// change count the whole-sheet overlay's (a view's changes are the same changes seen through the
// view; comparisons made before whole sheets add up their views'). Rows sort ascending by score:
// most changed first. A row opens on its whole-sheet overlay; its views follow.

import type { CompareResult, Overlay, Sheet } from '../api/types';

export interface PairRow {
  key: string;
  sheetAId: string | null;
  sheetBId: string | null;
  sheetNumber: string;
  oldNumber: string | null;
  title: string;
  method: string | null;
  confidence: number | null;
  score: number;
  changeCount: number | null;
  /** An overlay of this pair whose alignment is not trusted: its "no change" proves nothing. */
  lowConfidence: boolean;
  /** Overlays of this pair: the whole-sheet overlay first, then the views, lowest score first. */
  overlays: Overlay[];
}

/**
 * A pair's status in words: 'changed' when it has changes, scores below the top band, or its
 * alignment is not trusted (its "no change" proves nothing); else 'unchanged'.
 */
export function pairStatus(r: PairRow): 'changed' | 'unchanged' {
  return r.score < 0.95 || (r.changeCount ?? 0) > 0 || r.lowConfidence ? 'changed' : 'unchanged';
}

/** Whether an overlay compares whole sheets (its blocks are the Sheet blocks). */
export const isWholeSheet = (o: Overlay): boolean => o.block_a?.type === 'Sheet';

/** The whole-sheet overlay first, then the views, lowest score first (a new array). */
export function orderPairOverlays(list: Overlay[]): Overlay[] {
  return [...list].sort(
    (x, y) => Number(isWholeSheet(y)) - Number(isWholeSheet(x)) || (x.score ?? 0) - (y.score ?? 0),
  );
}

/**
 * Every overlay of a comparison in viewing order: sheet pair by sheet pair, most changed pair first,
 * each pair's whole sheet before its views (what [ and ] step through in the viewer).
 */
export function viewingOrder(overlays: Overlay[]): Overlay[] {
  return buildPairRows(null, overlays, new Map()).flatMap((r) => r.overlays);
}

export function buildPairRows(
  result: CompareResult | null,
  overlays: Overlay[],
  sheetById: Map<string, Sheet>,
): PairRow[] {
  const rows = new Map<string, PairRow>();
  const sheetOf = (id: string | null | undefined, embedded?: Sheet): Sheet | undefined =>
    embedded ?? (id ? sheetById.get(id) : undefined);

  const ensure = (a: string | null, b: string | null): PairRow => {
    const key = `${a ?? '?'}|${b ?? '?'}`;
    let row = rows.get(key);
    if (!row) {
      const sa = sheetOf(a);
      const sb = sheetOf(b);
      row = {
        key,
        sheetAId: a,
        sheetBId: b,
        sheetNumber: sb?.sheet_number ?? sa?.sheet_number ?? '—',
        oldNumber: sa?.sheet_number ?? null,
        title: sb?.title ?? sa?.title ?? '',
        method: null,
        confidence: null,
        score: 1,
        changeCount: null,
        lowConfidence: false,
        overlays: [],
      };
      rows.set(key, row);
    }
    return row;
  };

  for (const p of result?.pairs ?? []) {
    const row = ensure(p.sheet_a_id, p.sheet_b_id);
    row.method = p.method;
    row.confidence = p.confidence;
  }

  for (const o of overlays) {
    const a = o.block_a?.sheet_id ?? null;
    const b = o.block_b?.sheet_id ?? null;
    const row = ensure(a, b);
    const sa = sheetOf(a, o.block_a?.sheet);
    const sb = sheetOf(b, o.block_b?.sheet);
    if (row.sheetNumber === '—') row.sheetNumber = sb?.sheet_number ?? sa?.sheet_number ?? '—';
    if (!row.oldNumber) row.oldNumber = sa?.sheet_number ?? null;
    if (!row.title) row.title = sb?.title ?? sa?.title ?? '';
    row.overlays.push(o);
  }

  for (const row of rows.values()) {
    row.overlays = orderPairOverlays(row.overlays);
    if (row.overlays.length > 0) {
      row.score = Math.min(...row.overlays.map((o) => o.score ?? 1));
      const whole = row.overlays.filter(isWholeSheet);
      const counted = whole.length > 0 ? whole : row.overlays;
      const counts = counted.map((o) => o.change_count);
      row.changeCount = counts.every((c) => c == null)
        ? null
        : counts.reduce<number>((s, c) => s + (c ?? 0), 0);
      row.lowConfidence = counted.some((o) => !!o.alignment?.low_confidence);
    }
  }

  return [...rows.values()].sort(
    (x, y) =>
      x.score - y.score || x.sheetNumber.localeCompare(y.sheetNumber, undefined, { numeric: true }),
  );
}
