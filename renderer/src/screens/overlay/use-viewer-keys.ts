// The viewer's keyboard: one table of keys to actions, ignored while typing in a field.

import { useEffect, useRef } from 'react';
import type { ReviewStatus } from '../../api/types';
import { ui, VIEWER_MODES } from '../../state/ui-store';

export interface ViewerActions {
  step: (dir: 1 | -1) => void;
  sheet: (dir: 1 | -1) => void;
  review: (status: ReviewStatus) => void;
  acceptRest: () => void;
  undoBulk: () => void;
  clear: () => void;
  fit: () => void;
  zoomBy: (factor: number) => void;
}

function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement | null;
  return (
    !!t &&
    (t.tagName === 'INPUT' ||
      t.tagName === 'TEXTAREA' ||
      t.tagName === 'SELECT' ||
      t.isContentEditable)
  );
}

/** The action for a key, or null when the viewer does not use it. */
export function keyAction(key: string, a: ViewerActions): (() => void) | null {
  const modeKey = VIEWER_MODES.find((m) => m.key === key);
  if (modeKey) return () => ui.setViewerMode(modeKey.mode);
  const table: Record<string, () => void> = {
    j: () => a.step(1),
    n: () => a.step(1),
    ArrowDown: () => a.step(1),
    k: () => a.step(-1),
    p: () => a.step(-1),
    ArrowUp: () => a.step(-1),
    ']': () => a.sheet(1),
    '[': () => a.sheet(-1),
    a: () => a.review('accepted'),
    x: () => a.review('rejected'),
    f: () => a.review('flagged'),
    o: () => a.review('open'),
    A: a.acceptRest,
    u: a.undoBulk,
    '0': a.fit,
    '+': () => a.zoomBy(1.5),
    '=': () => a.zoomBy(1.5),
    '-': () => a.zoomBy(1 / 1.5),
    r: ui.toggleRegions,
    c: ui.togglePalette,
    Escape: a.clear,
  };
  return table[key] ?? null;
}

export function useViewerKeys(actions: ViewerActions): void {
  // The latest actions, read at key time: one listener for the viewer's life.
  const ref = useRef(actions);
  ref.current = actions;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (isTyping(e) || e.metaKey || e.ctrlKey || e.altKey) return;
      const act = keyAction(e.key, ref.current);
      if (!act) return;
      act();
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
