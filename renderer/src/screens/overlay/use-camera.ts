// The viewer's camera: the view (pan and zoom), the canvas size, animated moves, fit and zoom.
// One hook owns it; the toolbar, the keys and change navigation call its actions.

import { useCallback, useEffect, useRef, useState } from 'react';
import type { BBox } from '../../api/types';
import {
  centreOn,
  easeInOutCubic,
  fitView,
  lerpView,
  regionView,
  viewCentre,
  zoomAt,
  type Size,
  type View,
} from '../../viewer/view-transform';

export interface Camera {
  view: View | null;
  viewport: Size | null;
  /** Set at once (pan and wheel zoom from the canvas). */
  setViewNow: (v: View) => void;
  onViewport: (s: Size) => void;
  fit: () => void;
  zoomBy: (factor: number) => void;
  /** Animate to a world region (a change, a view's box). */
  showRegion: (b: BBox, minPx?: number) => void;
}

export function useCamera(world: Size): Camera {
  const [view, setView] = useState<View | null>(null);
  const viewport = useRef<Size | null>(null);
  const viewRef = useRef<View | null>(null);
  viewRef.current = view;
  const anim = useRef(0);
  // A region asked for before the canvas was measured (landing on a change from another sheet).
  const pendingRegion = useRef<{ b: BBox; minPx: number } | null>(null);

  const stopAnim = () => {
    cancelAnimationFrame(anim.current);
    anim.current = 0;
  };
  const setViewNow = useCallback((v: View) => {
    stopAnim();
    setView(v);
  }, []);

  const animateTo = useCallback((target: View) => {
    const vp = viewport.current;
    const from = viewRef.current;
    stopAnim();
    if (!vp || !from || window.matchMedia?.('(prefers-reduced-motion: reduce)').matches) {
      setView(target);
      return;
    }
    const t0 = performance.now();
    const dur = 320;
    const tick = (now: number) => {
      const t = Math.min(1, (now - t0) / dur);
      setView(lerpView(from, target, easeInOutCubic(t), vp));
      anim.current = t < 1 ? requestAnimationFrame(tick) : 0;
    };
    anim.current = requestAnimationFrame(tick);
  }, []);
  useEffect(() => () => stopAnim(), []);

  const fit = useCallback(() => {
    if (viewport.current) animateTo(fitView(viewport.current, { x: 0, y: 0, ...world }));
  }, [animateTo, world]);

  const zoomBy = useCallback(
    (factor: number) => {
      const vp = viewport.current;
      const v = viewRef.current;
      if (vp && v) animateTo(zoomAt(v, factor, { x: vp.width / 2, y: vp.height / 2 }));
    },
    [animateTo],
  );

  const showRegion = useCallback(
    (b: BBox, minPx = 600) => {
      if (viewport.current) animateTo(regionView(viewport.current, b, minPx, 1));
      else pendingRegion.current = { b, minPx };
    },
    [animateTo],
  );

  const onViewport = useCallback(
    (s: Size) => {
      const prev = viewport.current;
      viewport.current = s;
      const pr = pendingRegion.current;
      pendingRegion.current = null;
      setView((v) => {
        if (!v || !prev)
          return pr ? regionView(s, pr.b, pr.minPx, 1) : fitView(s, { x: 0, y: 0, ...world });
        // Keep the same world point in the middle when the canvas is resized (e.g. side-by-side).
        return centreOn(s, viewCentre(v, prev), v.scale);
      });
    },
    [world],
  );

  return {
    view,
    viewport: viewport.current,
    setViewNow,
    onViewport,
    fit,
    zoomBy,
    showRegion,
  };
}
