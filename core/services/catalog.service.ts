import { ApiError } from '../domain/errors';
import type { Db } from '../store/db';
import {
  deleteRecord,
  overlayIdsOfDrawing,
  updateRecord,
} from '../store/repositories/records.repository';
import { deleteDrawingSearchRows } from '../store/repositories/drawings.repository';
import type { Row } from '../store/repositories/row';
import { disciplineFromSheetNumber } from '../vision/sheet/discipline';
import { RESOURCES, type ResourceKind } from './resources';

// Person-made edits and deletions of pipeline records.

export interface CatalogEffects {
  /** Cancels every non-terminal job whose target is one of these ids (and their descendants). */
  cancelJobsForTargets(organizationId: string, targetIds: string[]): Promise<void>;
  /** Removes stored objects under each prefix. */
  deleteObjectPrefixes(prefixes: string[]): Promise<void>;
  /** Object-key prefix of a drawing's images and of an overlay's images. */
  drawingPrefix(projectId: string, drawingId: string): string;
  overlayPrefix(projectId: string, overlayId: string): string;
}

const parseObj = (v: unknown): Record<string, unknown> =>
  typeof v === 'string' ? (JSON.parse(v) as Record<string, unknown>) : {};

/**
 * Applies a validated PATCH body. For sheets and blocks the fields a person set are also recorded
 * in `overrides`, for drawings in the `*_source` columns, so re-processing never overwrites a
 * person's correction (contract §4).
 */
export async function patchRecord(
  db: Db,
  organizationId: string,
  kind: ResourceKind,
  row: Row,
  body: Record<string, unknown>,
): Promise<Row> {
  const values: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (v !== undefined) values[k] = v;
  // The Sheet block is the whole page, one per sheet (contract §4): it stays what it is. (The
  // schema already keeps a view from becoming one.)
  if (
    kind === 'block' &&
    row.type === 'Sheet' &&
    values.type !== undefined &&
    values.type !== 'Sheet'
  )
    throw new ApiError(
      'validation_error',
      `Block ${row.id} is its sheet's Sheet block (the whole page); its type cannot change.`,
      {
        errors: [{ field: '/type', code: 'immutable', message: 'the Sheet block keeps its type' }],
      },
    );
  if (kind === 'sheet' || kind === 'block') {
    const overrides = { ...parseObj(row.overrides), ...values };
    if (
      kind === 'sheet' &&
      typeof values.sheet_number === 'string' &&
      values.discipline === undefined &&
      overrides.discipline === undefined
    ) {
      // A corrected number implies its discipline unless a person chose one explicitly.
      values.discipline = disciplineFromSheetNumber(values.sheet_number);
    }
    values.overrides = JSON.stringify(overrides);
  }
  if (kind === 'drawing') {
    // A person's issue date or revision, null included ("the set has none"), is marked as theirs,
    // so processing never replaces it (contract §4 Drawing).
    if ('issued_at' in values) values.issued_at_source = 'person';
    if ('revision' in values) values.revision_source = 'person';
  }
  if (Object.keys(values).length === 0) return row;
  return await db.transaction(
    async (tx) =>
      (await updateRecord(tx, RESOURCES[kind].table, organizationId, row.id, values)) ?? row,
  );
}

export async function deleteDrawing(
  db: Db,
  effects: CatalogEffects,
  organizationId: string,
  drawing: Row,
): Promise<void> {
  const projectId = String(drawing.project_id);
  const overlayIds = await overlayIdsOfDrawing(db, organizationId, drawing.id);
  await effects.cancelJobsForTargets(organizationId, [drawing.id, ...overlayIds]);
  // Foreign keys cascade to sheets, blocks, overlays (through their blocks) and changes.
  await db.transaction(async (tx) => {
    await deleteDrawingSearchRows(tx, drawing.id);
    await deleteRecord(tx, 'drawings', organizationId, drawing.id);
  });
  await effects.deleteObjectPrefixes([
    effects.drawingPrefix(projectId, drawing.id),
    ...overlayIds.map((o) => effects.overlayPrefix(projectId, o)),
  ]);
}

export async function deleteOverlay(
  db: Db,
  effects: CatalogEffects,
  organizationId: string,
  overlay: Row,
): Promise<void> {
  await effects.cancelJobsForTargets(organizationId, [overlay.id]);
  await deleteRecord(db, 'overlays', organizationId, overlay.id);
  await effects.deleteObjectPrefixes([
    effects.overlayPrefix(String(overlay.project_id), overlay.id),
  ]);
}
