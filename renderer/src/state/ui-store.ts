// UI state in one zustand store behind a small wrapper: components read with `useUi(selector)`
// and change state only through `ui.*` actions, so the store's shape can change without
// touching screens. Server data never lives here (React Query owns it).

import { create } from 'zustand';
import type { PaletteName } from '../viewer/palette';

export type ViewerMode = 'overlay' | 'old' | 'new' | 'side-by-side' | 'swipe' | 'blink';
export const VIEWER_MODES: { mode: ViewerMode; label: string; key: string }[] = [
  { mode: 'overlay', label: 'Overlay', key: '1' },
  { mode: 'old', label: 'Old', key: '2' },
  { mode: 'new', label: 'New', key: '3' },
  { mode: 'side-by-side', label: 'Side by side', key: '4' },
  { mode: 'swipe', label: 'Swipe', key: '5' },
  { mode: 'blink', label: 'Blink', key: '6' },
];

export interface Upload {
  localId: string;
  projectId: string;
  filename: string;
  size: number;
  phase: 'uploading' | 'registering' | 'processing' | 'ready' | 'failed';
  uploaded: number;
  drawingId: string | null;
  jobId: string | null;
  error: string | null;
}

export interface Toast {
  id: number;
  kind: 'info' | 'error';
  text: string;
}

interface UiState {
  palette: PaletteName;
  viewerMode: ViewerMode;
  overlayOpacity: number;
  showRegions: boolean;
  blinkMs: number;
  jobsPanelOpen: boolean;
  sheetFilter: { discipline: string; sheetNumber: string; drawingId: string };
  uploads: Upload[];
  toasts: Toast[];
  /**
   * Change navigation across the set: which change to select once the next sheet's overlay has
   * loaded (`j` past a sheet's last change opens the next sheet on its first change, `k` before
   * the first opens the previous one on its last).
   */
  pendingChange: { overlayId: string; land: 'first' | 'last' } | null;
  /**
   * Comparisons deleted by the reviewer: the service has no DELETE for jobs, so their overlays
   * are deleted and the job is hidden from the list (kept on this machine).
   */
  hiddenComparisons: string[];
}

const PREFS_KEY = 'blueline.prefs';
const HIDDEN_KEY = 'blueline.hiddenComparisons';

function loadHidden(): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(HIDDEN_KEY) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

function loadPrefs(): Partial<UiState> {
  try {
    const raw = localStorage.getItem(PREFS_KEY);
    if (!raw) return {};
    const p = JSON.parse(raw) as Partial<UiState>;
    return {
      palette: p.palette === 'colorblind' ? 'colorblind' : 'standard',
      overlayOpacity:
        typeof p.overlayOpacity === 'number' ? Math.min(1, Math.max(0, p.overlayOpacity)) : 1,
    };
  } catch {
    return {};
  }
}

const useStore = create<UiState>(() => ({
  palette: 'standard',
  viewerMode: 'overlay',
  overlayOpacity: 1,
  showRegions: true,
  blinkMs: 600,
  jobsPanelOpen: false,
  sheetFilter: { discipline: '', sheetNumber: '', drawingId: '' },
  uploads: [],
  toasts: [],
  pendingChange: null,
  hiddenComparisons: loadHidden(),
  ...loadPrefs(),
}));

// Persist only preferences a reviewer expects to stick (palette, opacity).
useStore.subscribe((s, prev) => {
  if (s.palette !== prev.palette || s.overlayOpacity !== prev.overlayOpacity) {
    try {
      localStorage.setItem(
        PREFS_KEY,
        JSON.stringify({ palette: s.palette, overlayOpacity: s.overlayOpacity }),
      );
    } catch {
      // storage full or disabled: preferences just do not persist
    }
  }
});

useStore.subscribe((s, prev) => {
  if (s.hiddenComparisons !== prev.hiddenComparisons) {
    try {
      localStorage.setItem(HIDDEN_KEY, JSON.stringify(s.hiddenComparisons));
    } catch {
      // storage disabled: hidden only for this session
    }
  }
});

export function useUi<T>(selector: (s: UiState) => T): T {
  return useStore(selector);
}

let toastSeq = 0;

export const ui = {
  get: (): UiState => useStore.getState(),
  setPalette: (palette: PaletteName) => useStore.setState({ palette }),
  togglePalette: () =>
    useStore.setState((s) => ({ palette: s.palette === 'standard' ? 'colorblind' : 'standard' })),
  setViewerMode: (viewerMode: ViewerMode) => useStore.setState({ viewerMode }),
  hideComparison: (jobId: string) =>
    useStore.setState((s) => ({ hiddenComparisons: [...s.hiddenComparisons, jobId] })),
  setPendingChange: (pendingChange: UiState['pendingChange']) =>
    useStore.setState({ pendingChange }),
  setOpacity: (overlayOpacity: number) =>
    useStore.setState({ overlayOpacity: Math.min(1, Math.max(0, overlayOpacity)) }),
  toggleRegions: () => useStore.setState((s) => ({ showRegions: !s.showRegions })),
  toggleJobsPanel: (open?: boolean) =>
    useStore.setState((s) => ({ jobsPanelOpen: open ?? !s.jobsPanelOpen })),
  setSheetFilter: (patch: Partial<UiState['sheetFilter']>) =>
    useStore.setState((s) => ({ sheetFilter: { ...s.sheetFilter, ...patch } })),
  addUpload: (u: Upload) => useStore.setState((s) => ({ uploads: [...s.uploads, u] })),
  updateUpload: (localId: string, patch: Partial<Upload>) =>
    useStore.setState((s) => ({
      uploads: s.uploads.map((u) => (u.localId === localId ? { ...u, ...patch } : u)),
    })),
  /** Drops the upload entries of a set that is gone (removed, or replaced by a retry). */
  forgetUploadsOf: (drawingId: string) =>
    useStore.setState((s) => ({ uploads: s.uploads.filter((u) => u.drawingId !== drawingId) })),
  clearFinishedUploads: () =>
    useStore.setState((s) => ({
      uploads: s.uploads.filter((u) => u.phase !== 'ready' && u.phase !== 'failed'),
    })),
  toast: (text: string, kind: Toast['kind'] = 'info') => {
    const id = ++toastSeq;
    useStore.setState((s) => ({ toasts: [...s.toasts.slice(-3), { id, kind, text }] }));
    setTimeout(
      () => useStore.setState((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
      kind === 'error' ? 8000 : 4000,
    );
  },
  dismissToast: (id: number) =>
    useStore.setState((s) => ({ toasts: s.toasts.filter((t) => t.id !== id) })),
};
