import { ApiError, notFound } from '../domain/errors';
import { idKind, type IdKind } from '../domain/ids';
import type { Db } from '../store/db';
import { getRow } from '../store/list-query';
import {
  blockCountOfSheet,
  blockCountsOfDrawing,
  sheetsOfDrawing,
} from '../store/repositories/overlays.repository';
import type { Row } from '../store/repositories/row';
import { COST, reserveCredits } from './credits.service';
import { maxBlockPairs, pairSheets } from './pairing';

// Starting comparisons and change detection (contract §6, §7). Validates the request, estimates its
// cost, reserves the credits and queues the job — reservation and job in one transaction, so a
// refused request leaves nothing behind and 50 concurrent requests against a balance for 10 get
// exactly 10 jobs.

export type CompareType = 'Drawing' | 'Sheet' | 'Block';

import type { JobEnqueuer } from './context';

/** What the compare job reads from its payload. A is the older side (the output frame), B the newer. */
export interface ComparePayload {
  mode: 'drawing' | 'sheet' | 'block';
  a_id: string;
  b_id: string;
  analyze: boolean;
}

export interface AnalyzePayload {
  overlay_id: string;
}

const KIND: Record<
  CompareType,
  {
    kind: IdKind;
    prefix: string;
    table: string;
    noun: string;
    target: 'drawing' | 'sheet' | 'block';
  }
> = {
  Drawing: {
    kind: 'drawing',
    prefix: 'drw_',
    table: 'drawings',
    noun: 'drawing',
    target: 'drawing',
  },
  Sheet: { kind: 'sheet', prefix: 'sht_', table: 'sheets', noun: 'sheet', target: 'sheet' },
  Block: { kind: 'block', prefix: 'blk_', table: 'blocks', noun: 'block', target: 'block' },
};

export interface CompareRequest {
  type: CompareType;
  oldId: string;
  newId: string;
  analyze: boolean;
  /** JSON pointers naming the two ids in the request (errors name the field the client sent). */
  oldField: string;
  newField: string;
}

function wrongType(field: string, value: string, t: CompareType): ApiError {
  const given = idKind(value);
  return new ApiError(
    'validation_error',
    `${field.slice(1)} must be a ${KIND[t].noun} id (${KIND[t].prefix}…) for a ${t} comparison; got ${given ? `a ${given} id` : `'${value.slice(0, 60)}'`}.`,
    {
      errors: [
        {
          field,
          code: 'wrong_id_type',
          message: `expected an id starting with '${KIND[t].prefix}'`,
        },
      ],
    },
  );
}

function assertReady(drawing: Row): void {
  if (drawing.status === 'Processing') {
    throw new ApiError(
      'conflict',
      `Drawing ${drawing.id} is still Processing (job ${String(drawing.job_id)}); compare it once that job has completed and the drawing is Ready.`,
    );
  }
  if (drawing.status === 'Failed') {
    throw new ApiError(
      'conflict',
      `Drawing ${drawing.id} failed to process (see job ${String(drawing.job_id)}) and has no sheets to compare; upload the file again as a new drawing.`,
    );
  }
}

/** Upper bound of the overlays a Drawing comparison makes: the credits it reserves per cost unit. */
export async function estimateDrawingPairs(
  db: Db,
  oldDrawingId: string,
  newDrawingId: string,
): Promise<number> {
  const info = (rows: Row[]) =>
    rows.map((r) => ({
      id: r.id,
      sheet_number: r.sheet_number as string | null,
      title: r.title as string | null,
      page_index: r.page_index as number,
    }));
  const a = await sheetsOfDrawing(db, oldDrawingId);
  const b = await sheetsOfDrawing(db, newDrawingId);
  const countA = await blockCountsOfDrawing(db, oldDrawingId);
  const countB = await blockCountsOfDrawing(db, newDrawingId);
  // Number and title pairs are known now; leftovers may still pair by look in the job, so they
  // are bounded by min(left A, left B) pairs of the largest block counts.
  const p = pairSheets(info(a), info(b));
  let n = 0;
  for (const pair of p.pairs)
    n += maxBlockPairs(countA.get(pair.sheet_a_id) ?? 0, countB.get(pair.sheet_b_id) ?? 0);
  const k = Math.min(p.removed.length, p.added.length);
  if (k > 0) {
    const maxA = Math.max(0, ...p.removed.map((id) => countA.get(id) ?? 0));
    const maxB = Math.max(0, ...p.added.map((id) => countB.get(id) ?? 0));
    n += k * maxBlockPairs(maxA, maxB);
  }
  return n;
}

export async function createComparison(
  db: Db,
  jobs: JobEnqueuer,
  organizationId: string,
  req: CompareRequest,
): Promise<{ id: string; status: string }> {
  const k = KIND[req.type];
  if (idKind(req.oldId) !== k.kind) throw wrongType(req.oldField, req.oldId, req.type);
  if (idKind(req.newId) !== k.kind) throw wrongType(req.newField, req.newId, req.type);
  const newer = await getRow<Row>(db, k.table, organizationId, req.newId);
  if (!newer) throw notFound(k.noun, req.newId);
  const older = await getRow<Row>(db, k.table, organizationId, req.oldId);
  if (!older) throw notFound(k.noun, req.oldId);
  if (older.project_id !== newer.project_id) {
    throw new ApiError(
      'validation_error',
      `${k.noun[0]!.toUpperCase()}${k.noun.slice(1)}s ${req.oldId} and ${req.newId} belong to different projects (${String(older.project_id)} and ${String(newer.project_id)}); only revisions within one project can be compared.`,
      {
        errors: [
          {
            field: req.oldField,
            code: 'project_mismatch',
            message: `belongs to project ${String(older.project_id)}, not ${String(newer.project_id)}`,
          },
        ],
      },
    );
  }

  let pairs: number;
  let what: string;
  if (req.type === 'Drawing') {
    assertReady(newer);
    assertReady(older);
    pairs = await estimateDrawingPairs(db, req.oldId, req.newId);
    what = `Comparing drawing ${req.newId} with ${req.oldId} (up to ${pairs} block pair${pairs === 1 ? '' : 's'})`;
  } else if (req.type === 'Sheet') {
    pairs = maxBlockPairs(
      await blockCountOfSheet(db, req.oldId),
      await blockCountOfSheet(db, req.newId),
    );
    what = `Comparing sheet ${req.newId} with ${req.oldId} (up to ${pairs} block pair${pairs === 1 ? '' : 's'})`;
  } else {
    pairs = 1;
    what = `Comparing block ${req.newId} with ${req.oldId}`;
  }
  const required = pairs * COST.compareOverlay + (req.analyze ? pairs * COST.analyzeOverlay : 0);
  const payload: ComparePayload = {
    mode: k.kind as ComparePayload['mode'],
    a_id: req.oldId,
    b_id: req.newId,
    analyze: req.analyze,
  };

  return await db.transaction(
    async (tx) => {
      await reserveCredits(
        tx,
        organizationId,
        required,
        req.analyze ? `${what} with change detection` : what,
      );
      return await jobs.enqueue(
        {
          organization_id: organizationId,
          project_id: String(newer.project_id),
          type: 'compare',
          target_type: k.target,
          target_id: req.newId,
          payload,
          credits_reserved: required,
        },
        tx,
      );
    },
    { immediate: true },
  );
}

/** POST /overlays/{id}/analyze: change detection on one stored overlay, later. */
export async function createAnalysis(
  db: Db,
  jobs: JobEnqueuer,
  organizationId: string,
  overlay: Row,
): Promise<{ id: string; status: string }> {
  const payload: AnalyzePayload = { overlay_id: overlay.id };
  return await db.transaction(
    async (tx) => {
      await reserveCredits(
        tx,
        organizationId,
        COST.analyzeOverlay,
        `Change detection on overlay ${overlay.id}`,
      );
      return await jobs.enqueue(
        {
          organization_id: organizationId,
          project_id: String(overlay.project_id),
          type: 'analyze',
          target_type: 'overlay',
          target_id: overlay.id,
          payload,
          credits_reserved: COST.analyzeOverlay,
        },
        tx,
      );
    },
    { immediate: true },
  );
}
