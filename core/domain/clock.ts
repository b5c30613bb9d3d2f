// Creation timestamps are ISO 8601 strings with millisecond precision (UTC, `Z`). They sort
// lexicographically, and the list engine orders by (created_at, id). `monotonicNow` never returns
// the same or an earlier instant twice in one process, so records created back to back keep the
// order they were created in, which keyset paging relies on.
let last = 0;

export function monotonicNow(): string {
  let t = Date.now();
  if (t <= last) t = last + 1;
  last = t;
  return new Date(t).toISOString();
}

export function nowIso(): string {
  return new Date().toISOString();
}
