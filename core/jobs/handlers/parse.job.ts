import type { ObjectStore } from '../../blobs/object-store';
import { ApiError } from '../../domain/errors';
import { compareIssues, type IssueOrderKey } from '../../domain/issue-date';
import type { ParsePayload } from '../../services/parse.service';
import type { Db } from '../../store/db';
import type { Row } from '../../store/repositories/row';
import {
  blocksOfSheetOrdered,
  completedParseJobs,
  replaceUnitSymbols,
  rowById,
  sheetsOfDrawingOrdered,
  symbolCountsOfJob,
  type NewSymbol,
} from '../../store/repositories/symbols.repository';
import type { BBox } from '../../vision/types';
import type { JobHandler, JobRow } from '../job-runner';
import { DEFAULT_THRESHOLD } from '../../vision/symbols/match';
import type { SymbolMatchArgs } from '../worker-tasks';

// The `parse` job (contract §7): symbol detection on every sheet of a drawing, one sheet, or one
// block. Each unit (sheet or block) is matched in the worker pool (vision/symbols/match.ts), as many
// at once as the pool has workers; its instances are then stored in one transaction that replaces
// whatever an earlier attempt of this job stored for that unit — so the handler is re-runnable and
// never stores an instance twice. Progress counts units scanned (credits: 1 per sheet scanned).
//
// Boxes are stored in SHEET pixels (origin top-left) whatever the target: a block target's matches
// are shifted by the block's bbox. An instance found on a whole sheet gets the block whose bbox
// contains its centre (the smallest such view, a TitleBlock only when nothing else contains it).
//
// Result:
//   { threshold, labels, sheets_scanned,
//     sheets: [{sheet_id, sheet_number, block_id?, counts: {label: n}}],   every scanned unit, zeros included
//     totals: {label: n},
//     deltas: null | { baseline_job_id, baseline_drawing_id, sheets: [{sheet_number, sheet_id,
//               baseline_sheet_id, counts: {label: {before, after, delta}}}], totals: {label: {before, after, delta}} } }
// Deltas (revision count changes): the baseline is the newest Completed parse job of the same
// project whose labels are exactly this job's labels and whose target lies in ANOTHER drawing
// created before this one (the earlier revision); sheets pair by sheet number, and only sheets
// scanned by both jobs are compared. Null when no such job exists or the target is a block.

interface Unit {
  sheet: Row;
  block: Row | null;
}

interface SheetCount {
  sheet_id: string;
  sheet_number: string | null;
  block_id?: string;
  counts: Record<string, number>;
}

function bboxOf(row: Row): BBox {
  return JSON.parse(String(row.bbox)) as BBox;
}

/**
 * The view an instance centred at (x, y) (sheet pixels) lies in: the smallest view containing it, a
 * TitleBlock last; null outside every view (the Sheet block, the whole page, names no view).
 */
function blockAt(blocks: Row[], x: number, y: number): string | null {
  let best: Row | null = null;
  let bestKey = Infinity;
  for (const b of blocks) {
    if (b.type === 'Sheet') continue;
    const bb = bboxOf(b);
    if (x < bb.x || y < bb.y || x >= bb.x + bb.width || y >= bb.y + bb.height) continue;
    const key = (b.type === 'TitleBlock' ? 1e12 : 0) + bb.width * bb.height;
    if (key < bestKey) {
      bestKey = key;
      best = b;
    }
  }
  return best ? best.id : null;
}

async function drawingOf(db: Db, targetType: string, targetId: string): Promise<Row | undefined> {
  if (targetType === 'drawing') return await rowById(db, 'drawings', targetId);
  const r = await rowById(db, targetType === 'sheet' ? 'sheets' : 'blocks', targetId);
  return r ? await rowById(db, 'drawings', String(r.drawing_id)) : undefined;
}

const issueKey = (d: Row): IssueOrderKey => ({
  issued_at: d.issued_at === null || d.issued_at === undefined ? null : String(d.issued_at),
  created_at: String(d.created_at),
  id: d.id,
});

function labelsOf(p: Pick<ParsePayload, 'templates'>): string[] {
  return [...new Set(p.templates.map((t) => t.label))].sort();
}

export function createParseHandler(env: {
  db: Db;
  objects: ObjectStore;
}): JobHandler<ParsePayload> {
  const { db, objects } = env;

  async function units(p: ParsePayload): Promise<Unit[]> {
    const gone = () =>
      new ApiError(
        'conflict',
        `The ${p.target_type} ${p.target_id} was deleted while the parse job was queued.`,
      );
    if (p.target_type === 'drawing') {
      if (!(await rowById(db, 'drawings', p.target_id))) throw gone();
      return (await sheetsOfDrawingOrdered(db, p.target_id)).map((sheet) => ({
        sheet,
        block: null,
      }));
    }
    if (p.target_type === 'sheet') {
      const sheet = await rowById(db, 'sheets', p.target_id);
      if (!sheet) throw gone();
      return [{ sheet, block: null }];
    }
    const block = await rowById(db, 'blocks', p.target_id);
    const sheet = block && (await rowById(db, 'sheets', String(block.sheet_id)));
    if (!block || !sheet) throw gone();
    return [{ sheet, block }];
  }

  async function deltas(job0: JobRow, p: ParsePayload, mine: SheetCount[]) {
    if (p.target_type === 'block' || !job0.project_id) return null;
    const drawing = await drawingOf(db, p.target_type, p.target_id);
    if (!drawing) return null;
    const labels = labelsOf(p);
    const key = JSON.stringify(labels);
    const myByNumber = new Map(mine.filter((s) => s.sheet_number).map((s) => [s.sheet_number!, s]));
    // The baseline is the previous issue: of the earlier issues counted with these labels, the
    // latest by issue date (then upload order); its newest count when it was counted twice.
    let best: { job: Row; other: Row; pairs: SheetCount[] } | null = null;
    for (const job of await completedParseJobs(db, job0.project_id, job0.id)) {
      let payload: ParsePayload;
      let result: { sheets?: SheetCount[] };
      try {
        payload = JSON.parse(String(job.payload)) as ParsePayload;
        result = JSON.parse(String(job.result ?? '{}')) as { sheets?: SheetCount[] };
      } catch {
        continue;
      }
      if (payload.target_type === 'block' || JSON.stringify(labelsOf(payload)) !== key) continue;
      const other = await drawingOf(db, payload.target_type, payload.target_id);
      // An earlier issue by date, not by upload (contract §4 Drawing, issued_at).
      if (
        !other ||
        other.id === drawing.id ||
        compareIssues(issueKey(other), issueKey(drawing)) >= 0
      )
        continue;
      const pairs = (result.sheets ?? []).filter(
        (s) => s.sheet_number && myByNumber.has(s.sheet_number),
      );
      if (pairs.length === 0) continue;
      if (!best || compareIssues(issueKey(other), issueKey(best.other)) > 0)
        best = { job, other, pairs };
    }
    if (!best) return null;
    const { job, other, pairs } = best;
    const totals: Record<string, { before: number; after: number; delta: number }> = {};
    for (const l of labels) totals[l] = { before: 0, after: 0, delta: 0 };
    const sheets = pairs.map((b) => {
      const a = myByNumber.get(b.sheet_number!)!;
      const counts: Record<string, { before: number; after: number; delta: number }> = {};
      for (const l of labels) {
        const before = b.counts[l] ?? 0;
        const after = a.counts[l] ?? 0;
        counts[l] = { before, after, delta: after - before };
        totals[l]!.before += before;
        totals[l]!.after += after;
        totals[l]!.delta += after - before;
      }
      return {
        sheet_number: a.sheet_number,
        sheet_id: a.sheet_id,
        baseline_sheet_id: b.sheet_id,
        counts,
      };
    });
    return { baseline_job_id: job.id, baseline_drawing_id: other.id, sheets, totals };
  }

  return async (ctx) => {
    const p = ctx.payload;
    const list = await units(p);
    const templates: SymbolMatchArgs['templates'] = [];
    for (const [i, t] of p.templates.entries()) {
      const src = await rowById(
        db,
        t.source_id.startsWith('blk_') ? 'blocks' : 'sheets',
        t.source_id,
      );
      if (!src || !src.image_key)
        throw new ApiError(
          'conflict',
          `The source ${t.source_id} of templates[${i}] was deleted while the parse job was queued.`,
        );
      templates.push({
        label: t.label,
        path: await objects.localPath(String(src.image_key)),
        bbox: t.bbox,
      });
    }
    const total = list.length;
    let done = 0;
    let matchMs = 0;
    await ctx.progress(0, total);
    let next = 0;
    const lane = async () => {
      while (next < total) {
        const unit = list[next++]!;
        ctx.signal.throwIfAborted();
        const image = unit.block ?? unit.sheet;
        if (!image.image_key)
          throw new ApiError(
            'conflict',
            `The image of ${image.id} is missing; process the drawing again.`,
          );
        const args: SymbolMatchArgs = {
          target: { path: await objects.localPath(String(image.image_key)) },
          templates,
          ...(p.threshold === undefined ? {} : { threshold: p.threshold }),
        };
        const out = await ctx.pool.run('symbols.match', args, [], ctx.signal);
        matchMs += out.stats.ms.total;
        const off = unit.block ? bboxOf(unit.block) : { x: 0, y: 0 };
        const blocks = unit.block ? [] : await blocksOfSheetOrdered(db, unit.sheet.id);
        const symbols: NewSymbol[] = out.matches.map((m) => {
          const bbox = {
            x: m.bbox.x + off.x,
            y: m.bbox.y + off.y,
            width: m.bbox.width,
            height: m.bbox.height,
          };
          return {
            label: m.label,
            bbox,
            confidence: m.confidence,
            rotation: m.rotation,
            blockId: unit.block
              ? unit.block.id
              : blockAt(blocks, bbox.x + bbox.width / 2, bbox.y + bbox.height / 2),
          };
        });
        ctx.signal.throwIfAborted();
        await db.transaction(
          async (tx) =>
            await replaceUnitSymbols(
              tx,
              {
                organizationId: ctx.job.organization_id,
                projectId: String(unit.sheet.project_id),
                jobId: ctx.job.id,
                sheetId: unit.sheet.id,
                blockId: unit.block?.id ?? null,
              },
              symbols,
            ),
        );
        done++;
        await ctx.progress(done, total);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(ctx.pool.size, total)) }, lane));

    const labels = labelsOf(p);
    const counted = new Map<string, Record<string, number>>();
    for (const c of await symbolCountsOfJob(db, ctx.job.id)) {
      const m = counted.get(c.sheet_id) ?? {};
      m[c.label] = c.count;
      counted.set(c.sheet_id, m);
    }
    const totals: Record<string, number> = {};
    for (const l of labels) totals[l] = 0;
    const sheets: SheetCount[] = list.map((u) => {
      const found = counted.get(u.sheet.id) ?? {};
      const counts: Record<string, number> = {};
      for (const l of labels) {
        counts[l] = found[l] ?? 0;
        totals[l]! += counts[l]!;
      }
      return {
        sheet_id: u.sheet.id,
        sheet_number: (u.sheet.sheet_number as string | null) ?? null,
        ...(u.block ? { block_id: u.block.id } : {}),
        counts,
      };
    });
    return {
      threshold: p.threshold ?? DEFAULT_THRESHOLD,
      labels,
      sheets_scanned: total,
      sheets,
      totals,
      deltas: await deltas(ctx.job, p, sheets),
      match_ms: Math.round(matchMs),
    };
  };
}
