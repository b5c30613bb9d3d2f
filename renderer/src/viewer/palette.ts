// Region and legend colours. The standard palette matches the overlay image (removed red,
// added green); the colour-blind-safe one uses Okabe–Ito blue/orange, which stay distinct
// under protanopia, deuteranopia and tritanopia. The overlay image itself is re-rendered by the
// service with `?palette=` so the pixels and the boxes agree.

import type { ChangeKind, ReviewStatus } from '../api/types';

export type PaletteName = 'standard' | 'colorblind';

/** Query value for the overlay `uri` (contract §4: a colour-blind-safe palette selectable with `?palette=`). */
export const OVERLAY_PALETTE_PARAM: Record<PaletteName, string | null> = {
  standard: null,
  colorblind: 'colorblind',
};

export const KIND_COLOURS: Record<PaletteName, Record<ChangeKind, string>> = {
  standard: { added: '#1a9e3a', removed: '#d7263d', modified: '#e08a00', moved: '#6a4cc2' },
  colorblind: { added: '#0072b2', removed: '#e67800', modified: '#cc79a7', moved: '#009e73' },
};

export const REVIEW_LABELS: Record<ReviewStatus, string> = {
  open: 'Open',
  accepted: 'Accepted',
  rejected: 'Rejected',
  flagged: 'Flagged',
};
