import type { ChangeKind } from './model';

// Change colours of the exports, the same as the viewer's (renderer/src/viewer/palette.ts) so a
// cloud in a PDF and a box on screen mean the same thing: standard (removed red, added green, as
// the overlay image) and colour-blind-safe (Okabe–Ito, as the overlay's `?palette=colorblind`).

export type PaletteName = 'standard' | 'colorblind';
export type Rgb = [number, number, number];

const hex = (h: string): Rgb => [
  parseInt(h.slice(1, 3), 16) / 255,
  parseInt(h.slice(3, 5), 16) / 255,
  parseInt(h.slice(5, 7), 16) / 255,
];

export const KIND_RGB: Record<PaletteName, Record<ChangeKind, Rgb>> = {
  standard: {
    added: hex('#1a9e3a'),
    removed: hex('#d7263d'),
    modified: hex('#e08a00'),
    moved: hex('#6a4cc2'),
  },
  colorblind: {
    added: hex('#0072b2'),
    removed: hex('#e67800'),
    modified: hex('#cc79a7'),
    moved: hex('#009e73'),
  },
};

export const KIND_LABEL: Record<ChangeKind, string> = {
  added: 'Added',
  removed: 'Removed',
  modified: 'Modified',
  moved: 'Moved',
};
