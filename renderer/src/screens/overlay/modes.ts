// Viewer modes: which images each canvas draws in each mode (overlay, old, new, side by side,
// swipe, blink). Pure.

import type { ViewerMode } from '../../state/ui-store';
import type { ImageLayerSpec } from '../../viewer/SheetCanvas';
import type { TilePyramid } from '../../api/types';

export interface ModeImages {
  overlay: { src: string; tiles: TilePyramid | null };
  old: { src: string | null; tiles: TilePyramid | null };
  new: { src: string | null; tiles: TilePyramid | null };
}

export interface ModeState {
  mode: ViewerMode;
  opacity: number;
  /** Blink: whether the old image is the one showing now. */
  blinkOld: boolean;
  /** Swipe: world x of the divider (old left of it), when known. */
  swipeWorldX: number | null;
}

type Which = 'overlay' | 'old' | 'new';

/** Whether a canvas ('main', or side by side's 'old' and 'new') draws an image in a mode. */
export function shows(side: 'main' | 'old' | 'new', s: ModeState, which: Which): boolean {
  if (side === 'old') return which === 'old';
  if (side === 'new') return which === 'new';
  switch (s.mode) {
    case 'overlay':
      return which === 'overlay' || (which === 'new' && s.opacity < 1);
    case 'old':
      return which === 'old';
    case 'new':
      return which === 'new';
    case 'swipe':
      return which === 'old' || which === 'new';
    case 'blink':
      return which === (s.blinkOld ? 'old' : 'new');
    default:
      return false;
  }
}

/** The image layers of one canvas; hidden layers stay mounted so switching modes reloads nothing. */
export function layersFor(
  side: 'main' | 'old' | 'new',
  s: ModeState,
  img: ModeImages,
): ImageLayerSpec[] {
  return [
    { key: 'new', src: img.new.src, tiles: img.new.tiles, visible: shows(side, s, 'new') },
    {
      key: 'old',
      src: img.old.src,
      tiles: img.old.tiles,
      visible: shows(side, s, 'old'),
      clipRightOf:
        s.mode === 'swipe' && side === 'main' && s.swipeWorldX !== null ? s.swipeWorldX : undefined,
    },
    {
      key: 'overlay',
      src: img.overlay.src,
      tiles: img.overlay.tiles,
      visible: shows(side, s, 'overlay'),
      opacity: s.mode === 'overlay' ? s.opacity : 1,
    },
  ];
}

/** The corner label of the main canvas: which drawing it shows when that is not obvious. */
export function modeLabel(s: ModeState): string | undefined {
  if (s.mode === 'blink') return s.blinkOld ? 'OLD' : 'NEW';
  if (s.mode === 'old') return 'OLD';
  if (s.mode === 'new') return 'NEW';
  return undefined;
}
