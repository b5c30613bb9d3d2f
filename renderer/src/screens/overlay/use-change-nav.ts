// Change navigation and review: the changes of this overlay in reading order, which one is
// selected, `j`/`k` across the whole set (on to the next sheet past the last change),
// `[`/`]` sheet by sheet, reviewing one change and finishing a sheet ("mark the rest accepted",
// with undo). One hook owns this state; the keys, the toolbar and the change list call it.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { errorDetail } from '../../api/client';
import { useChanges, useOverlays, usePatchChange } from '../../api/hooks';
import type { Change, Overlay, ReviewStatus } from '../../api/types';
import { navigate } from '../../app/use-route';
import { ui, useUi } from '../../state/ui-store';
import { readingOrder } from '../../viewer/change-nav';
import { sheetStops, stepChange, stepSheet, stopIndex } from './set-nav';

export interface ChangeNav {
  changesQ: ReturnType<typeof useChanges>;
  changes: Change[];
  selected: number;
  current: Change | undefined;
  reviewed: number;
  /** Sheets of the comparison (one stop per pair) and where this overlay is among them. */
  stops: Overlay[];
  stopAt: number;
  /** Every overlay of the comparison (the views of this sheet among them). */
  siblings: Overlay[];
  select: (i: number) => void;
  clear: () => void;
  step: (dir: 1 | -1) => void;
  sheet: (dir: 1 | -1) => void;
  review: (status: ReviewStatus) => void;
  /** Accepts every change still open on this sheet; `undo` puts them back. */
  acceptRest: () => void;
  lastBulk: string[] | null;
  undoBulk: () => void;
}

export function useChangeNav(
  overlay: Overlay,
  projectId: string,
  jobId: string | null,
  /** Called with a change after it is selected (the camera frames it). */
  onSelected: (c: Change | undefined) => void,
  /** A change named by the link (the CSV export's): selected once, when the changes are in. */
  initialChangeId: string | null = null,
): ChangeNav {
  const changesQ = useChanges(overlay.id, overlay.has_changes);
  const patch = usePatchChange(overlay.id);
  const changes = useMemo(() => readingOrder(changesQ.data ?? []), [changesQ.data]);
  const [selected, setSelected] = useState(-1);
  const [lastBulk, setLastBulk] = useState<string[] | null>(null);
  const current = selected >= 0 ? changes[selected] : undefined;
  const pending = useUi((s) => s.pendingChange);

  const siblingsQ = useOverlays(jobId ?? '', !!jobId);
  const siblings = useMemo(() => siblingsQ.data ?? [], [siblingsQ.data]);
  const stops = useMemo(() => sheetStops(siblings), [siblings]);
  const stopAt = stopIndex(stops, overlay);

  const select = useCallback(
    (i: number) => {
      setSelected(i);
      onSelected(changes[i]);
    },
    [changes, onSelected],
  );

  // Arriving from the previous (or next) sheet with j (or k): land on its first (or last) change.
  useEffect(() => {
    if (!pending || pending.overlayId !== overlay.id || !changesQ.isSuccess) return;
    ui.setPendingChange(null);
    if (changes.length > 0) select(pending.land === 'first' ? 0 : changes.length - 1);
  }, [pending, overlay.id, changesQ.isSuccess, changes.length, select]);

  const opened = useRef(false);
  useEffect(() => {
    if (opened.current || !initialChangeId) return;
    const i = changes.findIndex((c) => c.id === initialChangeId);
    if (i < 0) return;
    opened.current = true;
    select(i);
  }, [initialChangeId, changes, select]);

  const open = useCallback(
    (o: Overlay, land: 'first' | 'last' | null) => {
      ui.setPendingChange(land ? { overlayId: o.id, land } : null);
      navigate({ name: 'overlay', projectId, overlayId: o.id, jobId });
    },
    [projectId, jobId],
  );

  const step = useCallback(
    (dir: 1 | -1) => {
      const s = stepChange(selected, changes.length, dir, stops, overlay);
      if (s.kind === 'select') select(s.index);
      else if (s.kind === 'sheet') open(s.overlay, s.land);
      else
        ui.toast(
          dir === 1
            ? 'That was the last change in this comparison.'
            : 'That was the first change in this comparison.',
        );
    },
    [selected, changes.length, stops, overlay, select, open],
  );

  const sheet = useCallback(
    (dir: 1 | -1) => {
      const next = stepSheet(stops, overlay, dir);
      if (next) open(next, null);
    },
    [stops, overlay, open],
  );

  const save = useCallback(
    (ids: string[], status: ReviewStatus) => {
      for (const id of ids)
        patch.mutate(
          { id, body: { review_status: status } },
          { onError: (err) => ui.toast(`Could not save the review: ${errorDetail(err)}`, 'error') },
        );
    },
    [patch],
  );

  const review = useCallback(
    (status: ReviewStatus) => {
      if (current) save([current.id], status);
    },
    [current, save],
  );

  const acceptRest = useCallback(() => {
    const ids = changes.filter((c) => c.review_status === 'open').map((c) => c.id);
    if (ids.length === 0) return;
    save(ids, 'accepted');
    setLastBulk(ids);
  }, [changes, save]);

  const undoBulk = useCallback(() => {
    if (!lastBulk) return;
    save(lastBulk, 'open');
    setLastBulk(null);
  }, [lastBulk, save]);

  return {
    changesQ,
    changes,
    selected,
    current,
    reviewed: changes.filter((c) => c.review_status !== 'open').length,
    stops,
    stopAt,
    siblings,
    select,
    clear: () => setSelected(-1),
    step,
    sheet,
    review,
    acceptRest,
    lastBulk,
    undoBulk,
  };
}
