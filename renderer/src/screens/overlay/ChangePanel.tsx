// The viewer's side panel: what is compared (sheets, view, alignment in words with details
// behind a disclosure), the sheet's views to jump to, the change list and the selected change
// with its review buttons and "accept the rest".

import { useEffect, useRef, useState } from 'react';
import { useAnalyzeOverlay, useLiveJob } from '../../api/hooks';
import type { BBox, Change, Overlay, ReviewStatus } from '../../api/types';
import { isTerminal } from '../../api/types';
import { Empty, ErrorNote, Kbd, ProgressBar, Spinner, StatusBadge } from '../../components/common';
import type { PaletteName } from '../../viewer/palette';
import { KIND_COLOURS, REVIEW_LABELS } from '../../viewer/palette';
import { frameRegion } from '../../viewer/change-nav';
import { alignmentWords, changeLabel, kindWords, plural } from '../../viewer/words';
import { isWholeSheet } from '../pair-rows';
import type { ChangeNav } from './use-change-nav';

export interface ViewLink {
  id: string;
  label: string;
  /** The view's box on the whole sheet, when this overlay is the whole sheet. */
  bbox: BBox | null;
}

export function SheetFacts({
  overlay,
  viewTitle,
  palette,
}: {
  overlay: Overlay;
  viewTitle: string;
  palette: PaletteName;
}) {
  const a = overlay.block_a?.sheet;
  const b = overlay.block_b?.sheet;
  const al = alignmentWords(overlay.alignment);
  return (
    <div className="panel-section">
      <dl className="facts">
        <dt>Old</dt>
        <dd>
          {a?.sheet_number ?? '—'} <span className="muted small">{a?.title}</span>
        </dd>
        <dt>New</dt>
        <dd>
          {b?.sheet_number ?? '—'} <span className="muted small">{b?.title}</span>
        </dd>
        <dt>View</dt>
        <dd data-testid="overlay-view-name">{viewTitle}</dd>
        <dt>Alignment</dt>
        <dd className="small" data-testid="alignment-words">
          <span className={al.ok ? 'ok-text' : 'state-error-inline'}>{al.label}</span>
          {(al.details || overlay.stats) && (
            <details className="inline-details" data-testid="overlay-details">
              <summary>details</summary>
              <span className="muted">{al.details}</span>
              {/* Pixel counts are the engine's measure, not a reviewer's: behind the disclosure. */}
              {overlay.stats && (
                <span className="muted">
                  {al.details ? ' · ' : ''}ink{' '}
                  <span className="ink-add" style={{ color: KIND_COLOURS[palette].added }}>
                    +{overlay.stats.added_px.toLocaleString()}
                  </span>{' '}
                  <span className="ink-rem" style={{ color: KIND_COLOURS[palette].removed }}>
                    −{overlay.stats.removed_px.toLocaleString()}
                  </span>{' '}
                  px
                </span>
              )}
            </details>
          )}
        </dd>
        {overlay.alignment?.low_confidence && (
          <dd className="state-error-inline small" data-testid="alignment-warning">
            {overlay.alignment.warning ??
              'Poor alignment: this overlay may not show real changes. Check it by eye.'}
          </dd>
        )}
      </dl>
    </div>
  );
}

/** The sheet's views: on the whole sheet, jump to a view's box; from a view, back to the sheet. */
export function ViewLinks({ links, onJump }: { links: ViewLink[]; onJump: (l: ViewLink) => void }) {
  if (links.length === 0) return null;
  return (
    <div className="panel-section" data-testid="view-links">
      <h2 className="card-title">Views</h2>
      <div className="view-links">
        {links.map((l) => (
          <button
            key={l.id}
            type="button"
            className="btn btn-small"
            onClick={() => onJump(l)}
            title={l.bbox ? 'Zoom to this view' : 'Open this view'}
          >
            {l.label}
          </button>
        ))}
      </div>
    </div>
  );
}

/** Where a change wholly outside the frame lies, in words: "right", "above left", … */
function describeOffset(b: BBox, frame: { width: number; height: number }): string {
  const cx = b.x + b.width / 2;
  const cy = b.y + b.height / 2;
  const v = cy < 0 ? 'above' : cy > frame.height ? 'below' : '';
  const h = cx < 0 ? 'left' : cx > frame.width ? 'right' : '';
  return [v, h].filter(Boolean).join(' ') || 'at the edge';
}

export function ChangeList(props: {
  overlay: Overlay;
  frame: { width: number; height: number };
  nav: ChangeNav;
  palette: PaletteName;
  onAnalyzed: () => void;
}) {
  const { overlay, frame, nav, palette } = props;
  const { changesQ, changes, selected, reviewed } = nav;
  const listRef = useRef<HTMLOListElement>(null);
  useEffect(() => {
    listRef.current
      ?.querySelector<HTMLElement>(`[data-index="${selected}"]`)
      ?.scrollIntoView({ block: 'nearest' });
  }, [selected]);

  if (!overlay.has_changes) return <AnalyzePrompt overlay={overlay} onDone={props.onAnalyzed} />;
  const open = changes.length - reviewed;
  return (
    <div className="panel-section grow">
      <div className="row between">
        <h2 className="card-title">
          Changes{' '}
          <span className="count" data-testid="change-count">
            {changes.length}
          </span>
        </h2>
        {changes.length > 0 && (
          <span className="muted small" data-testid="reviewed-count">
            {reviewed} of {changes.length} reviewed
          </span>
        )}
      </div>
      {changes.length > 0 && (
        <div className="row between gap-s finish-row">
          <ProgressBar value={reviewed} total={changes.length} label="Sheet review progress" />
          {nav.lastBulk ? (
            <button
              type="button"
              className="btn btn-small"
              onClick={nav.undoBulk}
              data-testid="undo-accept-rest"
            >
              Undo <Kbd>u</Kbd>
            </button>
          ) : (
            <button
              type="button"
              className="btn btn-small"
              disabled={open === 0}
              onClick={nav.acceptRest}
              data-testid="accept-rest"
              title="Accept every change on this sheet still open (Shift+A); undo with u"
            >
              Accept the rest <Kbd>⇧A</Kbd>
            </button>
          )}
        </div>
      )}
      {nav.lastBulk && (
        <p className="small muted" role="status" data-testid="accept-rest-note">
          {plural(nav.lastBulk.length, 'change')} marked accepted.
        </p>
      )}
      {changesQ.isPending && <Spinner label="Loading changes…" />}
      {changesQ.isError && (
        <ErrorNote
          error={changesQ.error}
          title="Could not load changes"
          onRetry={() => void changesQ.refetch()}
        />
      )}
      {changesQ.isSuccess &&
        changes.length === 0 &&
        (overlay.alignment?.low_confidence ? (
          <Empty title="Changes not detected">
            The alignment is not trusted, so no changes were sought. Compare the images by eye.
          </Empty>
        ) : (
          <Empty title="No changes found">
            After alignment, nothing on this {isWholeSheet(overlay) ? 'sheet' : 'view'} differs
            beyond noise.
          </Empty>
        ))}
      <ol className="change-list" ref={listRef} data-testid="change-list">
        {changes.map((c, i) => {
          const fit = frameRegion(c.bbox, frame).fit;
          const label = changeLabel(c);
          const kind = kindWords(c);
          return (
            <li key={c.id} data-index={i}>
              <button
                type="button"
                className={`change-item${i === selected ? ' selected' : ''}`}
                onClick={() => nav.select(i)}
                aria-current={i === selected}
              >
                <span className="change-idx">{i + 1}</span>
                <span
                  className="kind-dot"
                  style={{ background: KIND_COLOURS[palette][c.kind] }}
                  aria-hidden
                />
                <span className="change-text">
                  <span className="change-kind">{label}</span>
                  {label !== kind && <span className="ellipsis small muted">{kind}</span>}
                  {fit !== 'inside' && (
                    <span
                      className="small muted"
                      data-testid="change-outside"
                      title="Changes are found on the whole sheet; this one reaches beyond this view's image, which shows only the block."
                    >
                      {fit === 'partial'
                        ? 'continues beyond this view'
                        : `beside this view (${describeOffset(c.bbox, frame)})`}
                    </span>
                  )}
                </span>
                <span className={`review review-${c.review_status}`}>
                  {REVIEW_LABELS[c.review_status]}
                </span>
              </button>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

export function ChangeDetail({
  change,
  index,
  count,
  palette,
  review,
}: {
  change: Change;
  index: number;
  count: number;
  palette: PaletteName;
  review: (s: ReviewStatus) => void;
}) {
  const label = changeLabel(change);
  return (
    <div className="panel-section change-detail" data-testid="change-detail">
      <div className="row between">
        <strong>
          Change {index + 1} of {count}
        </strong>
        <span className={`review review-${change.review_status}`} data-testid="change-status">
          {REVIEW_LABELS[change.review_status]}
        </span>
      </div>
      <p data-testid="change-label">{label}</p>
      <p className="small muted">
        <span className="kind-chip" style={{ borderColor: KIND_COLOURS[palette][change.kind] }}>
          {kindWords(change)}
        </span>{' '}
        · {Math.round(change.confidence * 100)}% confidence
      </p>
      {/* The same words on both sides (ink changed around unchanged text) are the context of
          the change, not an edit: shown once, not struck out. */}
      {change.text_before && change.text_before === change.text_after
        ? label === kindWords(change) && (
            <p className="mono small" data-testid="change-text-context">
              near {change.text_before}
            </p>
          )
        : (change.text_before || change.text_after) && (
            <p className="mono small">
              {change.text_before && (
                <del style={{ color: KIND_COLOURS[palette].removed }}>{change.text_before}</del>
              )}{' '}
              {change.text_after && (
                <ins style={{ color: KIND_COLOURS[palette].added }}>{change.text_after}</ins>
              )}
            </p>
          )}
      <div className="review-buttons" role="group" aria-label="Review">
        {(
          [
            ['accepted', 'Accept', 'a', 'btn-accept'],
            ['rejected', 'Reject', 'x', 'btn-reject'],
            ['flagged', 'Flag', 'f', 'btn-flag'],
          ] as const
        ).map(([status, text, key, cls]) => (
          <button
            key={status}
            type="button"
            className={`btn btn-small ${cls}${change.review_status === status ? ' active' : ''}`}
            onClick={() => review(status)}
          >
            {text} <Kbd>{key}</Kbd>
          </button>
        ))}
        {change.review_status !== 'open' && (
          <button type="button" className="btn btn-small" onClick={() => review('open')}>
            Reopen <Kbd>o</Kbd>
          </button>
        )}
      </div>
    </div>
  );
}

export function KeysHelp() {
  return (
    <div className="panel-section keys small muted">
      <Kbd>j</Kbd>/<Kbd>k</Kbd> next/previous change, across sheets · <Kbd>[</Kbd>/<Kbd>]</Kbd>{' '}
      sheets · <Kbd>⇧A</Kbd> accept the rest · <Kbd>1</Kbd>–<Kbd>6</Kbd> modes · <Kbd>0</Kbd> fit ·{' '}
      <Kbd>+</Kbd>/<Kbd>−</Kbd> zoom · <Kbd>r</Kbd> regions · <Kbd>c</Kbd> colours · wheel zooms at
      the cursor, drag pans
    </div>
  );
}

function AnalyzePrompt({ overlay, onDone }: { overlay: Overlay; onDone: () => void }) {
  const analyze = useAnalyzeOverlay();
  const [jobId, setJobId] = useState<string | null>(null);
  const job = useLiveJob(jobId);
  const status = job.data?.status;
  useEffect(() => {
    if (status && isTerminal(status)) onDone();
  }, [status, onDone]);
  return (
    <div className="panel-section">
      <h2 className="card-title">Changes</h2>
      <p className="muted small">Change detection has not run on this overlay yet.</p>
      {!jobId && (
        <button
          type="button"
          className="btn btn-primary btn-small"
          disabled={analyze.isPending}
          onClick={() => analyze.mutate(overlay.id, { onSuccess: (r) => setJobId(r.job_id) })}
        >
          Detect changes
        </button>
      )}
      {job.data && (
        <div className="stack-s">
          <StatusBadge status={job.data.status} />
          {!isTerminal(job.data.status) && (
            <ProgressBar
              value={job.data.progress?.completed ?? 0}
              total={job.data.progress?.total ?? 0}
              label="Change detection"
            />
          )}
          {job.data.error && (
            <div className="state-error-inline small">{job.data.error.detail}</div>
          )}
        </div>
      )}
      {analyze.isError && (
        <ErrorNote error={analyze.error} title="Could not start change detection" />
      )}
    </div>
  );
}

export function Legend({ palette, show }: { palette: PaletteName; show: boolean }) {
  if (!show) return null;
  const c = KIND_COLOURS[palette];
  return (
    <div className="legend" aria-label="Legend">
      <span>
        <i style={{ background: c.removed }} /> Removed
      </span>
      <span>
        <i style={{ background: c.added }} /> Added
      </span>
      <span>
        <i style={{ background: '#555' }} /> Unchanged
      </span>
    </div>
  );
}
