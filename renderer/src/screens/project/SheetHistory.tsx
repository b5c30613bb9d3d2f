// Each sheet's history across the sets, oldest issue to newest: open any revision of a sheet,
// and compare the newest with its previous revision in one click (an existing comparison opens
// at once; otherwise POST /compare {type: 'Sheet'} starts one).

import { useMemo } from 'react';
import { errorDetail } from '../../api/client';
import { useCompareSheets, useProjectOverlays, useSheets } from '../../api/hooks';
import { compareIssues, issueDate } from '../../api/issue-order';
import type { Drawing } from '../../api/types';
import { href, navigate } from '../../app/use-route';
import { Spinner } from '../../components/common';
import { ui } from '../../state/ui-store';
import { plural } from '../../viewer/words';
import { existingSheetOverlay, sheetHistory } from './drawing-log';

export function SheetHistory({ projectId, drawings }: { projectId: string; drawings: Drawing[] }) {
  const ready = useMemo(
    () => drawings.filter((d) => d.status === 'Ready').sort(compareIssues),
    [drawings],
  );
  const sheets = useSheets({ project_id: projectId }, ready.length > 1);
  const overlays = useProjectOverlays({ project_id: projectId }, ready.length > 1);
  const compare = useCompareSheets();
  const rows = useMemo(() => sheetHistory(ready, sheets.data ?? []), [ready, sheets.data]);
  if (ready.length < 2) return null;
  return (
    <section className="card" aria-labelledby="hist-h" data-testid="sheet-history">
      <h2 id="hist-h" className="card-title">
        Sheet history{' '}
        <span className="hint">{plural(ready.length, 'set')}, oldest issue first</span>
      </h2>
      {sheets.isPending && <Spinner label="Loading sheets…" />}
      {rows.length > 0 && (
        <table className="table history-table">
          <thead>
            <tr>
              <th>Sheet</th>
              <th>Title</th>
              {ready.map((d) => (
                <th key={d.id} className="nowrap" title={d.name}>
                  {d.revision ? `Rev ${d.revision}` : d.name}
                  <div className="muted small">{issueDate(d)}</div>
                </th>
              ))}
              <th>Since previous</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => {
              const existing =
                r.latest && r.previous
                  ? existingSheetOverlay(overlays.data ?? [], r.previous, r.latest)
                  : null;
              return (
                <tr key={r.sheetNumber} data-testid="history-row" data-sheet={r.sheetNumber}>
                  <td>
                    <span className="sheet-number">{r.sheetNumber}</span>
                  </td>
                  <td className="ellipsis" title={r.title}>
                    {r.title}
                  </td>
                  {r.cells.map((c, i) => (
                    <td key={ready[i]?.id ?? i}>
                      {c ? (
                        <a
                          href={href({ name: 'sheet', projectId, sheetId: c.id })}
                          title={`Open ${c.sheet_number ?? 'this sheet'} in ${ready[i]?.name ?? 'this set'}`}
                        >
                          {c.revision ? `Rev ${c.revision}` : 'View'}
                        </a>
                      ) : (
                        <span className="muted small">not in set</span>
                      )}
                    </td>
                  ))}
                  <td className="nowrap small" data-testid="history-change">
                    {existing?.change_count != null &&
                      (existing.change_count === 0 ? (
                        <span className="muted">no changes</span>
                      ) : (
                        <strong>{plural(existing.change_count, 'change')}</strong>
                      ))}
                  </td>
                  <td className="nowrap">
                    {existing ? (
                      <a
                        className="btn btn-small"
                        href={href({
                          name: 'overlay',
                          projectId,
                          overlayId: existing.id,
                          jobId: existing.job_id ?? null,
                        })}
                        data-testid="open-previous-comparison"
                      >
                        Compare with previous
                      </a>
                    ) : r.latest && r.previous ? (
                      <button
                        type="button"
                        className="btn btn-small"
                        disabled={compare.isPending}
                        data-testid="compare-previous"
                        onClick={() =>
                          compare.mutate(
                            { oldId: r.previous!.id, newId: r.latest!.id },
                            {
                              onSuccess: (j) =>
                                navigate({ name: 'comparison', projectId, jobId: j.job_id }),
                              onError: (err) =>
                                ui.toast(`Could not compare: ${errorDetail(err)}`, 'error'),
                            },
                          )
                        }
                      >
                        Compare with previous
                      </button>
                    ) : (
                      <span className="muted small">first issue</span>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
