import { ApiError, notFound } from '../domain/errors';
import { idKind } from '../domain/ids';
import type { Db } from '../store/db';
import { getRow } from '../store/list-query';
import { countSheets } from '../store/repositories/drawings.repository';
import type { Row } from '../store/repositories/row';
import type { JobEnqueuer } from './context';
import { reserveCredits } from './credits.service';

// Starting symbol detection (contract §7, POST /parse). Validates the target and the templates,
// reserves the cost (1 credit per sheet scanned) and queues the `parse` job — reservation and job
// in one transaction, so a refused request leaves nothing behind.

/** Credits per sheet scanned (a block target scans one sheet's worth). */
export const PARSE_COST_PER_SHEET = 1;
/** Templates per request: each one multiplies the matching work on every sheet. */
export const MAX_TEMPLATES = 20;
/** Template crops are matched as given; bigger than this is a view, not a symbol. */
export const MAX_TEMPLATE_SIDE = 1000;
export const MIN_TEMPLATE_SIDE = 8;

export interface TemplateSpec {
  label: string;
  source_id: string;
  /** Pixels of the source sheet or block image, origin top-left. */
  bbox: { x: number; y: number; width: number; height: number };
}

export interface ParseRequest {
  target_id: string;
  templates: TemplateSpec[];
  threshold?: number;
}

/** What the parse job reads from its payload. */
export interface ParsePayload {
  target_type: 'drawing' | 'sheet' | 'block';
  target_id: string;
  templates: TemplateSpec[];
  /** Absent: the matcher's default (DEFAULT_THRESHOLD in vision/symbols/match.ts). */
  threshold?: number;
}

function invalid(field: string, code: string, message: string, detail: string): ApiError {
  return new ApiError('validation_error', detail, { errors: [{ field, code, message }] });
}

const TABLE = { drawing: 'drawings', sheet: 'sheets', block: 'blocks' } as const;

/** Width and height of the image a template may be cut from (sheet pixels; a block's crop is its bbox). */
function sourceSize(row: Row, kind: 'sheet' | 'block'): { width: number; height: number } {
  if (kind === 'sheet') return { width: Number(row.width), height: Number(row.height) };
  const b = JSON.parse(String(row.bbox)) as { width: number; height: number };
  return { width: b.width, height: b.height };
}

export async function createParse(
  db: Db,
  jobs: JobEnqueuer,
  organizationId: string,
  req: ParseRequest,
): Promise<{ id: string; status: string }> {
  const kind = idKind(req.target_id);
  if (kind !== 'drawing' && kind !== 'sheet' && kind !== 'block') {
    throw invalid(
      '/target_id',
      'wrong_id_type',
      "expected an id starting with 'drw_', 'sht_' or 'blk_'",
      `target_id must be a drawing, sheet or block id (drw_…, sht_… or blk_…); got ${kind ? `a ${kind} id` : `'${req.target_id.slice(0, 60)}'`}.`,
    );
  }
  // Templates are checked for shape before anything is looked up, so every malformed field is a 400.
  req.templates.forEach((t, i) => {
    const k = idKind(t.source_id);
    if (k !== 'sheet' && k !== 'block') {
      throw invalid(
        `/templates/${i}/source_id`,
        'wrong_id_type',
        "expected an id starting with 'sht_' or 'blk_'",
        `templates[${i}].source_id must be a sheet or block id (sht_… or blk_…) whose image shows the symbol; got ${k ? `a ${k} id` : `'${t.source_id.slice(0, 60)}'`}.`,
      );
    }
    const b = t.bbox;
    for (const [name, v] of Object.entries(b)) {
      if (!Number.isInteger(v) || v < 0) {
        throw invalid(
          `/templates/${i}/bbox/${name}`,
          'invalid',
          'must be a non-negative integer (pixels)',
          `templates[${i}].bbox.${name} must be a non-negative whole number of pixels; got ${v}.`,
        );
      }
    }
    if (
      b.width < MIN_TEMPLATE_SIDE ||
      b.height < MIN_TEMPLATE_SIDE ||
      b.width > MAX_TEMPLATE_SIDE ||
      b.height > MAX_TEMPLATE_SIDE
    ) {
      throw invalid(
        `/templates/${i}/bbox`,
        'out_of_range',
        `width and height must be ${MIN_TEMPLATE_SIDE}–${MAX_TEMPLATE_SIDE} pixels`,
        `templates[${i}].bbox is ${b.width}x${b.height} px; a symbol template must be ${MIN_TEMPLATE_SIDE}–${MAX_TEMPLATE_SIDE} px on each side (crop just the symbol, with a few pixels of margin).`,
      );
    }
  });

  const target = await getRow<Row>(db, TABLE[kind], organizationId, req.target_id);
  if (!target) throw notFound(kind, req.target_id);
  let sheets: number;
  if (kind === 'drawing') {
    if (target.status !== 'Ready') {
      throw new ApiError(
        'conflict',
        target.status === 'Processing'
          ? `Drawing ${target.id} is still Processing (job ${String(target.job_id)}); parse it once that job has completed and the drawing is Ready.`
          : `Drawing ${target.id} failed to process (see job ${String(target.job_id)}) and has no sheets to parse; upload the file again as a new drawing.`,
      );
    }
    sheets = await countSheets(db, target.id);
  } else sheets = 1;

  for (const [i, t] of req.templates.entries()) {
    const k = idKind(t.source_id) as 'sheet' | 'block';
    const src = await getRow<Row>(db, TABLE[k], organizationId, t.source_id);
    if (!src) throw notFound(k, t.source_id);
    const size = sourceSize(src, k);
    const b = t.bbox;
    if (b.x + b.width > size.width || b.y + b.height > size.height) {
      throw invalid(
        `/templates/${i}/bbox`,
        'outside_source',
        `must lie inside the ${k} image (${size.width}x${size.height} px)`,
        `templates[${i}].bbox (x ${b.x}, y ${b.y}, ${b.width}x${b.height}) reaches outside ${k} ${t.source_id}, whose image is ${size.width}x${size.height} px.`,
      );
    }
  }

  const required = sheets * PARSE_COST_PER_SHEET;
  const payload: ParsePayload = {
    target_type: kind,
    target_id: target.id,
    templates: req.templates.map((t) => ({
      label: t.label,
      source_id: t.source_id,
      bbox: { x: t.bbox.x, y: t.bbox.y, width: t.bbox.width, height: t.bbox.height },
    })),
    ...(req.threshold === undefined ? {} : { threshold: req.threshold }),
  };
  const what = `Parsing ${kind} ${target.id} (${sheets} sheet${sheets === 1 ? '' : 's'} at ${PARSE_COST_PER_SHEET} credit each)`;
  return await db.transaction(
    async (tx) => {
      await reserveCredits(tx, organizationId, required, what);
      return await jobs.enqueue(
        {
          organization_id: organizationId,
          project_id: String(target.project_id),
          type: 'parse',
          target_type: kind,
          target_id: target.id,
          payload,
          credits_reserved: required,
        },
        tx,
      );
    },
    { immediate: true },
  );
}
