// Count a symbol (issue 18 part 6): draw a box around one on the sheet, count it across this set
// (POST /parse on the drawing) and, when the project holds another issue, across that one first so
// the newer set's job result carries the per-sheet deltas (parse.job.ts: baseline = the previous
// issue counted with the same label). Progress from the job's events; credits from the job and
// GET /credits. The instances found on this sheet are drawn on the canvas by the sheet viewer.
import { useEffect, useState } from 'react';
import { navigate } from '../app/use-route';
import { ErrorNote, ProgressBar } from '../components/common';
import { useApi, useDrawings, useLiveJob } from '../api/hooks';
import { compareIssues, previousIssue } from '../api/issue-order';
import type { BBox, Drawing, Id, ReadySheet } from '../api/types';
import { useCredits, useStartParse, type ParseResult } from '../api/vision';
import { useQueryClient } from '@tanstack/react-query';
import './search-ask.css';
import { plural } from '../viewer/words';

interface Run {
  drawing: Drawing;
  jobId: Id | null;
}

export function CountPanel({
  sheet,
  projectId,
  template,
  drawing,
  onDraw,
  onClear,
  onJob,
}: {
  sheet: ReadySheet;
  projectId: Id;
  template: BBox | null;
  drawing: boolean;
  onDraw: () => void;
  onClear: () => void;
  /** The parse job of this sheet's set (its instances are drawn on the canvas). */
  onJob: (jobId: Id | null) => void;
}) {
  const api = useApi();
  const drawings = useDrawings(projectId);
  const credits = useCredits();
  const qc = useQueryClient();
  const start = useStartParse();
  const [label, setLabel] = useState('Symbol');
  const [withPrevious, setWithPrevious] = useState(true);
  const [threshold, setThreshold] = useState(0.6);
  const [runs, setRuns] = useState<Run[]>([]);
  const [step, setStep] = useState(0);
  const [charged, setCharged] = useState(0);
  const mine = drawings.data?.find((d) => d.id === sheet.drawing_id) ?? null;
  const other = mine && drawings.data ? previousIssue(drawings.data, mine) : null;
  const current = runs[step] ?? null;
  const job = useLiveJob(current?.jobId ?? null);
  const status = job.data?.status;

  // Runs go one after the other, the older issue first: the newer one's result then holds deltas.
  useEffect(() => {
    if (!current || current.jobId || !template) return;
    start.mutate(
      {
        target_id: current.drawing.id,
        threshold,
        templates: [
          {
            label: label.trim() || 'Symbol',
            source_id: sheet.id,
            // Whole sheet pixels, inside the sheet.
            bbox: {
              x: Math.max(0, Math.round(template.x)),
              y: Math.max(0, Math.round(template.y)),
              width: Math.max(
                1,
                Math.min(Math.round(template.width), sheet.width - Math.round(template.x)),
              ),
              height: Math.max(
                1,
                Math.min(Math.round(template.height), sheet.height - Math.round(template.y)),
              ),
            },
          },
        ],
      },
      {
        onSuccess: (r) =>
          setRuns((rs) => rs.map((x, i) => (i === step ? { ...x, jobId: r.job_id } : x))),
      },
    );
  }, [current, step]);
  useEffect(() => {
    if (status !== 'Completed') return;
    void qc.invalidateQueries({ queryKey: ['credits'] });
    if (step < runs.length - 1) setStep(step + 1);
  }, [status, step, runs.length, qc]);
  const done = runs.length > 0 && step === runs.length - 1 && status === 'Completed';
  useEffect(() => {
    const own = runs.find((r) => r.drawing.id === sheet.drawing_id);
    if (done && own?.jobId) onJob(own.jobId);
    if (!done) return;
    // Credits charged by the finished jobs (settled with the job: read them back once done).
    let live = true;
    void Promise.all(runs.map((r) => (r.jobId ? api.getJob(r.jobId) : null))).then((jobs) => {
      if (live) setCharged(jobs.reduce((n, j) => n + (j?.credits_charged ?? 0), 0));
    });
    return () => {
      live = false;
    };
  }, [api, done, runs, sheet.drawing_id, onJob]);

  const count = () => {
    if (!mine || !template) return;
    const sets = withPrevious && other ? [mine, other] : [mine];
    sets.sort((a, b) => compareIssues(a, b));
    onJob(null);
    setRuns(sets.map((d) => ({ drawing: d, jobId: null })));
    setStep(0);
    setCharged(0);
  };
  const result = done ? (job.data?.result as ParseResult | null) : null;
  const newer = runs[runs.length - 1]?.drawing;
  const lbl = result?.labels[0] ?? label;

  return (
    <div className="panel-section sa-count" aria-label="Count a symbol" data-testid="count-panel">
      <h2 className="card-title">Count a symbol</h2>
      {!template && (
        <>
          <p className="muted small">
            Draw a box around one symbol on the sheet; it is counted on every sheet of the set.
          </p>
          <button
            type="button"
            className={`btn btn-small${drawing ? ' btn-primary' : ''}`}
            onClick={onDraw}
            data-testid="count-draw"
            aria-pressed={drawing}
          >
            {drawing ? 'Drag a box on the sheet…' : 'Draw a box'}
          </button>
        </>
      )}
      {template && (
        <div className="form">
          <p className="small">
            Template {Math.round(template.width)}×{Math.round(template.height)} px{' '}
            <button type="button" className="btn btn-small" onClick={onClear}>
              Clear
            </button>
          </p>
          <label className="field">
            <span>Label</span>
            <input
              value={label}
              onChange={(e) => setLabel(e.target.value)}
              data-testid="count-label"
            />
          </label>
          <label className="field">
            <span>Match</span>
            <select
              value={threshold}
              onChange={(e) => setThreshold(Number(e.target.value))}
              data-testid="count-threshold"
            >
              <option value={0.6}>Loose (finds more, some look-alikes)</option>
              <option value={0.75}>Balanced</option>
              <option value={0.85}>Strict (close matches only)</option>
            </select>
          </label>
          {other && (
            <label className="row gap-s small">
              <input
                type="checkbox"
                checked={withPrevious}
                onChange={(e) => setWithPrevious(e.target.checked)}
              />
              <span>
                Also count in <strong>{other.name}</strong> (issued {other.issued_at ?? '—'}) for
                the change between issues
              </span>
            </label>
          )}
          <button
            type="button"
            className="btn btn-primary btn-small"
            onClick={count}
            disabled={!mine || (runs.length > 0 && !done && status !== 'Failed')}
            data-testid="count-run"
          >
            Count
          </button>
          <p className="muted small">
            1 credit per sheet scanned
            {credits.data ? ` · ${plural(credits.data.balance, 'credit')} left` : ''}
          </p>
        </div>
      )}
      {runs.length > 0 && !done && !start.isError && status !== 'Failed' && (
        <div data-testid="count-progress">
          <p className="small">
            Counting in {current?.drawing.name} ({step + 1} of {runs.length})
            {status ? ` · ${status}` : ''}
          </p>
          <ProgressBar
            value={job.data?.progress.completed ?? 0}
            total={job.data?.progress.total ?? 0}
            label="Counting"
          />
        </div>
      )}
      {start.isError && <ErrorNote error={start.error} title="Could not start counting" />}
      {status === 'Failed' && <ErrorNote error={job.data?.error} title="Counting failed" />}
      {result && (
        <div data-testid="count-result">
          <p className="small">
            <strong data-testid="count-total">
              {result.totals[lbl] ?? 0} × {lbl}
            </strong>{' '}
            in {newer?.name} ({result.sheets_scanned} sheets) ·{' '}
            <span data-testid="count-credits">{plural(charged, 'credit')} used</span>
          </p>
          <table className="sa-table" data-testid="count-table">
            <thead>
              <tr>
                <th>Sheet</th>
                {result.deltas && <th>Before</th>}
                <th>{result.deltas ? 'After' : 'Count'}</th>
                {result.deltas && <th>Change</th>}
              </tr>
            </thead>
            <tbody>
              {result.sheets.map((s) => {
                const d = result.deltas?.sheets.find((x) => x.sheet_id === s.sheet_id)?.counts[lbl];
                return (
                  <tr key={s.sheet_id} data-testid="count-row">
                    <td>
                      <button
                        type="button"
                        className="linklike"
                        onClick={() => navigate({ name: 'sheet', projectId, sheetId: s.sheet_id })}
                      >
                        {s.sheet_number ?? '—'}
                      </button>
                    </td>
                    {result.deltas && <td className="num">{d?.before ?? '—'}</td>}
                    <td className="num">{s.counts[lbl] ?? 0}</td>
                    {result.deltas && (
                      <td
                        className={`num ${d && d.delta > 0 ? 'sa-up' : d && d.delta < 0 ? 'sa-down' : ''}`}
                        data-testid="count-delta"
                      >
                        {d ? (d.delta > 0 ? `+${d.delta}` : String(d.delta)) : '—'}
                      </td>
                    )}
                  </tr>
                );
              })}
            </tbody>
            {result.deltas && (
              <tfoot>
                <tr>
                  <td>Total</td>
                  <td className="num">{result.deltas.totals[lbl]?.before}</td>
                  <td className="num">{result.deltas.totals[lbl]?.after}</td>
                  <td className="num" data-testid="count-total-delta">
                    {(result.deltas.totals[lbl]?.delta ?? 0) > 0 ? '+' : ''}
                    {result.deltas.totals[lbl]?.delta}
                  </td>
                </tr>
              </tfoot>
            )}
          </table>
          {!result.deltas && runs.length > 1 && (
            <p className="muted small">No sheets in common with the other issue to compare.</p>
          )}
        </div>
      )}
    </div>
  );
}
