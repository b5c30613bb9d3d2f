// The viewer's toolbar: sheet and view title, the score in words, modes, opacity, regions,
// zoom and sheet-by-sheet navigation.

import { ui, useUi, VIEWER_MODES } from '../../state/ui-store';
import type { View } from '../../viewer/view-transform';
import { MAX_SCALE } from '../../viewer/view-transform';
import type { ReadyOverlay } from '../../api/types';
import { ScoreWordsBadge } from '../../components/ScoreWordsBadge';

export function ViewerToolbar(props: {
  overlay: ReadyOverlay;
  viewTitle: string;
  changeCount: number;
  view: View | null;
  fit: () => void;
  zoomBy: (f: number) => void;
  stopAt: number;
  stopCount: number;
  sheet: (dir: 1 | -1) => void;
}) {
  const { overlay, view, stopAt, stopCount } = props;
  const mode = useUi((s) => s.viewerMode);
  const opacity = useUi((s) => s.overlayOpacity);
  const showRegions = useUi((s) => s.showRegions);
  const a = overlay.block_a?.sheet;
  const b = overlay.block_b?.sheet;
  return (
    <div className="viewer-toolbar" role="toolbar" aria-label="Viewer">
      <div className="viewer-title">
        <span className="sheet-number" data-testid="viewer-sheet-number">
          {b?.sheet_number ?? a?.sheet_number ?? '—'}
        </span>
        <span className="ellipsis" title={b?.title ?? a?.title ?? ''}>
          {b?.title ?? a?.title ?? ''}
        </span>
        <span className="muted small nowrap" data-testid="viewer-view-title">
          · {props.viewTitle}
        </span>
        {overlay.score != null && (
          <ScoreWordsBadge score={overlay.score} changeCount={props.changeCount} />
        )}
      </div>
      <div className="segmented" role="radiogroup" aria-label="View mode">
        {VIEWER_MODES.map((m) => (
          <button
            key={m.mode}
            type="button"
            role="radio"
            aria-checked={mode === m.mode}
            className={mode === m.mode ? 'active' : ''}
            onClick={() => ui.setViewerMode(m.mode)}
            title={`${m.label} (${m.key})`}
          >
            {m.label}
          </button>
        ))}
      </div>
      <label className="slider" title="Overlay opacity over the new drawing">
        <span>Opacity</span>
        <input
          type="range"
          min={0}
          max={1}
          step={0.05}
          value={opacity}
          onChange={(e) => ui.setOpacity(Number(e.target.value))}
          disabled={mode !== 'overlay'}
          aria-label="Overlay opacity"
        />
        <span className="mono small">{Math.round(opacity * 100)}%</span>
      </label>
      <label className="check">
        <input type="checkbox" checked={showRegions} onChange={ui.toggleRegions} /> Regions
      </label>
      <div className="zoom-controls">
        <button
          type="button"
          className="btn btn-small"
          onClick={() => props.zoomBy(1 / 1.5)}
          aria-label="Zoom out"
        >
          −
        </button>
        <span className="mono small zoom-pct" data-testid="zoom-pct">
          {view ? `${Math.round(view.scale * 100)}%` : '—'}
        </span>
        <button
          type="button"
          className="btn btn-small"
          onClick={() => props.zoomBy(1.5)}
          aria-label="Zoom in"
          disabled={!!view && view.scale >= MAX_SCALE}
        >
          +
        </button>
        <button type="button" className="btn btn-small" onClick={props.fit} title="Fit sheet (0)">
          Fit
        </button>
      </div>
      {stopCount > 1 && (
        <div className="row gap-s">
          <button
            type="button"
            className="btn btn-small"
            disabled={stopAt <= 0}
            onClick={() => props.sheet(-1)}
            title="Previous sheet ([)"
            aria-label="Previous sheet"
          >
            ‹
          </button>
          <span className="muted small nowrap" data-testid="sheet-position">
            Sheet {stopAt + 1} of {stopCount}
          </span>
          <button
            type="button"
            className="btn btn-small"
            disabled={stopAt < 0 || stopAt >= stopCount - 1}
            onClick={() => props.sheet(1)}
            title="Next sheet (])"
            aria-label="Next sheet"
          >
            ›
          </button>
        </div>
      )}
    </div>
  );
}
