// Deleting a set, a project or a comparison, each behind a confirmation that says what goes with
// it; retrying or removing a set whose processing failed.

import { useState } from 'react';
import { errorDetail } from '../../api/client';
import {
  useApi,
  useDeleteComparison,
  useDeleteDrawing,
  useDeleteProject,
  useProjectOverlays,
  useDrawings,
} from '../../api/hooks';
import type { Drawing } from '../../api/types';
import { navigate } from '../../app/use-route';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ui } from '../../state/ui-store';
import { plural } from '../../viewer/words';
import { useQueryClient } from '@tanstack/react-query';
import { deleteCounts } from './drawing-log';

function Counts({
  overlays,
  loading,
}: {
  overlays: ReturnType<typeof deleteCounts>;
  loading: boolean;
}) {
  if (loading) return <li className="muted">counting overlays and changes…</li>;
  return (
    <>
      <li>
        {plural(overlays.overlays, 'overlay')} in {plural(overlays.comparisons, 'comparison')}
      </li>
      <li>
        {overlays.changes === 0
          ? 'no detected changes'
          : `${plural(overlays.changes, 'detected change')} and ${overlays.changes === 1 ? 'its' : 'their'} review status`}
      </li>
    </>
  );
}

export function DeleteDrawingButton({
  drawing,
  projectId,
  label = 'Delete',
}: {
  drawing: Drawing;
  projectId: string;
  label?: string;
}) {
  const [open, setOpen] = useState(false);
  const overlays = useProjectOverlays({ drawing_id: drawing.id }, open);
  const del = useDeleteDrawing(projectId);
  const counts = deleteCounts(overlays.data ?? []);
  const failed = drawing.status === 'Failed';
  return (
    <>
      <button
        type="button"
        className="btn btn-small btn-link-danger"
        onClick={() => setOpen(true)}
        aria-label={`${label} ${drawing.name}`}
        data-testid="delete-drawing"
      >
        {label}
      </button>
      {open && (
        <ConfirmDialog
          title={
            failed ? `Remove the failed set ${drawing.name}?` : `Delete the set ${drawing.name}?`
          }
          confirmLabel={failed ? 'Remove set' : 'Delete set'}
          busy={del.isPending}
          onCancel={() => setOpen(false)}
          onConfirm={() =>
            del.mutate(drawing.id, {
              onSuccess: () => {
                setOpen(false);
                ui.forgetUploadsOf(drawing.id);
                ui.toast(`${failed ? 'Removed' : 'Deleted'} ${drawing.name}`);
              },
              onError: (err) => ui.toast(`Could not delete: ${errorDetail(err)}`, 'error'),
            })
          }
        >
          {failed ? (
            <p data-testid="delete-counts">
              Processing failed, so no sheets were read from it; nothing else goes with it.
            </p>
          ) : (
            <>
              <p>This deletes, for good:</p>
              <ul data-testid="delete-counts">
                <li>{plural(drawing.sheet_count ?? 0, 'sheet')} and their views</li>
                <Counts overlays={counts} loading={overlays.isPending} />
              </ul>
            </>
          )}
          <p className="muted small">The uploaded PDF stays with the project's files.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** A failed set: process the same file again as a new set (and drop the failed one). */
export function RetryDrawingButton({
  drawing,
  projectId,
}: {
  drawing: Drawing;
  projectId: string;
}) {
  const api = useApi();
  const qc = useQueryClient();
  const [busy, setBusy] = useState(false);
  const retry = async () => {
    setBusy(true);
    try {
      await api.createDrawing({
        project_id: projectId,
        name: drawing.name,
        file_id: drawing.file_id,
        ...(drawing.revision ? { revision: drawing.revision } : {}),
      });
      await api.deleteDrawing(drawing.id);
      ui.forgetUploadsOf(drawing.id);
      ui.toast(`Processing ${drawing.name} again`);
    } catch (err) {
      ui.toast(`Could not retry: ${errorDetail(err)}`, 'error');
    } finally {
      setBusy(false);
      void qc.invalidateQueries({ queryKey: ['drawings', projectId] });
    }
  };
  return (
    <button
      type="button"
      className="btn btn-small"
      onClick={() => void retry()}
      disabled={busy}
      data-testid="retry-drawing"
    >
      {busy ? 'Retrying…' : 'Retry'}
    </button>
  );
}

export function DeleteProjectButton({ projectId, name }: { projectId: string; name: string }) {
  const [open, setOpen] = useState(false);
  const drawings = useDrawings(projectId);
  const overlays = useProjectOverlays({ project_id: projectId }, open);
  const del = useDeleteProject();
  const sets = drawings.data ?? [];
  const sheets = sets.reduce((s, d) => s + (d.sheet_count ?? 0), 0);
  return (
    <>
      <button
        type="button"
        className="btn btn-small btn-link-danger"
        onClick={() => setOpen(true)}
        data-testid="delete-project"
      >
        Delete project
      </button>
      {open && (
        <ConfirmDialog
          title={`Delete the project ${name}?`}
          confirmLabel="Delete project"
          busy={del.isPending}
          onCancel={() => setOpen(false)}
          onConfirm={() =>
            del.mutate(projectId, {
              onSuccess: () => {
                ui.toast(`Deleted ${name}`);
                navigate({ name: 'projects' });
              },
              onError: (err) => ui.toast(`Could not delete: ${errorDetail(err)}`, 'error'),
            })
          }
        >
          <p>This deletes everything the project holds, for good:</p>
          <ul data-testid="delete-counts">
            <li>
              {plural(sets.length, 'drawing set')} with {plural(sheets, 'sheet')}
            </li>
            <Counts overlays={deleteCounts(overlays.data ?? [])} loading={overlays.isPending} />
            <li>the uploaded files</li>
          </ul>
        </ConfirmDialog>
      )}
    </>
  );
}

export function DeleteComparisonButton({ jobId, label }: { jobId: string; label: string }) {
  const [open, setOpen] = useState(false);
  const overlays = useProjectOverlays({ job_id: jobId }, open);
  const del = useDeleteComparison();
  return (
    <>
      <button
        type="button"
        className="btn btn-small btn-link-danger"
        onClick={() => setOpen(true)}
        aria-label={`Delete the comparison ${label}`}
        data-testid="delete-comparison"
      >
        Delete
      </button>
      {open && (
        <ConfirmDialog
          title="Delete this comparison?"
          confirmLabel="Delete comparison"
          busy={del.isPending}
          onCancel={() => setOpen(false)}
          onConfirm={() =>
            del.mutate(jobId, {
              onSuccess: () => {
                ui.hideComparison(jobId);
                setOpen(false);
                ui.toast('Comparison deleted');
              },
              onError: (err) => ui.toast(`Could not delete: ${errorDetail(err)}`, 'error'),
            })
          }
        >
          <p>{label}</p>
          <ul data-testid="delete-counts">
            <Counts overlays={deleteCounts(overlays.data ?? [])} loading={overlays.isPending} />
          </ul>
          <p className="muted small">The drawing sets and their sheets stay.</p>
        </ConfirmDialog>
      )}
    </>
  );
}
