// Builds the comparison screen's pair list from the job result and its overlays. Pure.
//
// A drawing comparison pairs sheets, then blocks within each pair; each block pair is one
// overlay. One row per sheet pair; its score is the lowest of its overlays' (the most changed
// view decides how much the sheet changed). Rows sort ascending by score: most changed first.

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
  /** Overlays of this pair, lowest score first. */
  overlays: Overlay[];
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
    row.overlays.sort((x, y) => (x.score ?? 0) - (y.score ?? 0));
    if (row.overlays.length > 0) {
      row.score = row.overlays[0]?.score ?? 1;
      const counts = row.overlays.map((o) => o.change_count);
      row.changeCount = counts.every((c) => c == null)
        ? null
        : counts.reduce<number>((s, c) => s + (c ?? 0), 0);
    }
  }

  return [...rows.values()].sort(
    (x, y) =>
      x.score - y.score || x.sheetNumber.localeCompare(y.sheetNumber, undefined, { numeric: true }),
  );
}
