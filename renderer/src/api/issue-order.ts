// Which of two issues of a set is the newer (contract §4 Drawing, issued_at): the issue date
// decides; same-day issues, and pairs where a date is unknown, keep their upload order. The same
// rule as the service's core/domain/issue-date.ts (compareIssues): the renderer may import only
// types from core, so it keeps its own copy of these few lines.
import type { CompareResult, Drawing, Id, Job, Sheet, UnpairedSheetRef } from './types';

type IssueKey = Pick<Drawing, 'issued_at' | 'created_at' | 'id'>;

/** Negative when `a` is the older issue, positive when it is the newer, 0 for the same record. */
export function compareIssues(a: IssueKey, b: IssueKey): number {
  if (a.issued_at && b.issued_at && a.issued_at !== b.issued_at)
    return a.issued_at < b.issued_at ? -1 : 1;
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The pair a comparison of `sets` starts with: the newest issue, and the issue just before it (the
 * newest of the others that is older), or null when fewer than two sets are given.
 */
export function defaultPair<T extends IssueKey>(sets: T[]): { newer: T; older: T } | null {
  if (sets.length < 2) return null;
  const newer = sets.reduce((a, b) => (compareIssues(b, a) > 0 ? b : a));
  return { newer, older: previousIssue(sets, newer)! };
}

/**
 * The issue to compare `newer` against: the latest of the sets issued before it, else (it is the
 * oldest) the latest of the others; null when there is no other set.
 */
export function previousIssue<T extends IssueKey>(sets: T[], newer: IssueKey): T | null {
  const others = sets.filter((d) => d.id !== newer.id);
  const before = others.filter((d) => compareIssues(d, newer) < 0);
  const pool = before.length ? before : others;
  return pool.length ? pool.reduce((a, b) => (compareIssues(b, a) > 0 ? b : a)) : null;
}

/** "2013-07-18", or "date unknown". */
export const issueDate = (d: Pick<Drawing, 'issued_at'>): string => d.issued_at ?? 'date unknown';

/**
 * The direction of a comparison in words: "<older> → <newer>, issued 2013-07-18 → 2013-07-24".
 * `reversed` is true when the set taken as newer was issued (or, same day, uploaded) before the
 * older one: the overlay would show additions as removals.
 */
export function describeDirection(
  older: Pick<Drawing, 'name' | 'issued_at' | 'created_at' | 'id'>,
  newer: Pick<Drawing, 'name' | 'issued_at' | 'created_at' | 'id'>,
): { text: string; reversed: boolean } {
  return {
    text: `${older.name} → ${newer.name}, issued ${issueDate(older)} → ${issueDate(newer)}`,
    reversed: compareIssues(newer, older) < 0,
  };
}

const refSheetId = (r: UnpairedSheetRef): Id | undefined =>
  typeof r === 'string' ? r : (r.sheet_id ?? r.id);

/**
 * The two sets of a Drawing comparison job. Its target is the newer set; the older one shows only in
 * its result (the sheets of side A), so it is null until the job has completed with one.
 */
export function comparisonSides(
  job: Pick<Job, 'target_id' | 'result'>,
  sheetDrawing: ReadonlyMap<Id, Id>,
): { newerId: Id; olderId: Id | null } {
  const result = job.result as Partial<CompareResult> | null;
  const sheetA =
    result?.pairs?.[0]?.sheet_a_id ??
    (result?.removed_sheets?.length ? refSheetId(result.removed_sheets[0]!) : undefined);
  return {
    newerId: job.target_id,
    olderId: (sheetA && sheetDrawing.get(sheetA)) ?? null,
  };
}

/** Sheet id → drawing id, for comparisonSides. */
export const sheetDrawingMap = (sheets: readonly Pick<Sheet, 'id' | 'drawing_id'>[]) =>
  new Map(sheets.map((s) => [s.id, s.drawing_id]));
