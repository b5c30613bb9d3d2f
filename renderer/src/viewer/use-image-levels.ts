// Loads an image by URL (signed URLs need no auth) and builds shrunken copies with
// createImageBitmap, which decodes and resizes off the main thread where the browser can.

import { useEffect, useState } from 'react';
import { mipWidths, pickLevel } from './mip-levels';

export interface ImageLevels {
  status: 'loading' | 'loaded' | 'failed';
  full: HTMLImageElement | null;
  levels: { width: number; bitmap: ImageBitmap }[];
}

const EMPTY: ImageLevels = { status: 'loading', full: null, levels: [] };

export function useImageLevels(src: string | null): ImageLevels {
  const [state, setState] = useState<ImageLevels>(EMPTY);
  useEffect(() => {
    if (!src) {
      setState({ status: 'failed', full: null, levels: [] });
      return;
    }
    let cancelled = false;
    const made: ImageBitmap[] = [];
    setState(EMPTY);
    const img = new window.Image();
    img.decoding = 'async';
    img.onload = () => {
      if (cancelled) return;
      setState({ status: 'loaded', full: img, levels: [] });
      const widths = mipWidths(img.naturalWidth);
      if (widths.length === 0 || typeof createImageBitmap !== 'function') return;
      void Promise.all(
        widths.map((w) =>
          createImageBitmap(img, {
            resizeWidth: w,
            resizeHeight: Math.max(1, Math.round((img.naturalHeight * w) / img.naturalWidth)),
            resizeQuality: 'medium',
          }).then((bitmap) => {
            made.push(bitmap);
            return { width: w, bitmap };
          }),
        ),
      ).then(
        (levels) => {
          if (!cancelled) setState({ status: 'loaded', full: img, levels });
        },
        () => undefined, // keep drawing the full image
      );
    };
    img.onerror = () => {
      if (!cancelled) setState({ status: 'failed', full: null, levels: [] });
    };
    img.src = src;
    return () => {
      cancelled = true;
      img.onload = null;
      img.onerror = null;
      for (const b of made) b.close();
    };
  }, [src]);
  return state;
}

/** The source to draw at `scale` (canvas pixels per image pixel). */
export function sourceForScale(
  levels: ImageLevels,
  scale: number,
  dpr: number,
): CanvasImageSource | null {
  if (!levels.full) return null;
  const i = pickLevel(
    levels.levels.map((l) => l.width),
    levels.full.naturalWidth,
    scale,
    dpr,
  );
  return i >= 0 ? (levels.levels[i]?.bitmap ?? levels.full) : levels.full;
}
