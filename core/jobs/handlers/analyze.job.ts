import type { ObjectStore } from '../../blobs/object-store';
import type { AnalyzePayload } from '../../services/compare.service';
import type { Db } from '../../store/db';
import {
  blocksOfSheet,
  getById,
  getOverlayById,
  overlaysOfJob,
  replaceChanges,
  sheetTextRuns,
  type NewChange,
  type TextRun,
} from '../../store/repositories/overlays.repository';
import { invertAffine } from '../../vision/compare/register';
import type { BlockBox } from '../../services/pairing';
import type { RegionOut } from '../compare-tasks';
import { recordChangesAnalyzed } from '../../services/webhooks.service';
import type { JobHandler } from '../job-runner';

// The `analyze` job (contract §6, change detection on one overlay): the engine's change regions
// of the overlay (recomputed in the worker pool from the stored sheet images and the overlay's
// transform), each with a category from the text layers, replacing the overlay's earlier regions.
//
// Categories, in order: `noise` (a few pixels, or low confidence), `title_block` (inside sheet A's
// title block box — date stamps and revision clouds there are kept, but labelled), `dimension`
// (the text under it changed and looks like a dimension, e.g. 12'-6"), `text` (the text changed),
// `annotation` (the same words, redrawn or moved: leaders, callouts), `geometry` (everything else).

/** Dimension strings: feet-inches (12'-6", 3' 4 1/2"), inches (6"), metric (1200 mm). */
export const DIMENSION_RE =
  /\d+\s*'\s*-?\s*\d*(\s+\d+\/\d+)?\s*"?|\d+(\s+\d+\/\d+)?\s*"|\b\d+(\.\d+)?\s*(mm|cm|m)\b/;

/** Regions with fewer changed pixels than this are noise (anti-alias ghosts, specks). */
const NOISE_AREA_PX = 60;
const NOISE_CONFIDENCE = 0.2;
/** compare-tasks' LOW_CONFIDENCE (not imported: that module is the worker side, with sharp). */
const LOW_CONFIDENCE = 0.3;

type Box = BlockBox;

const intersects = (a: Box, b: Box, pad = 0): boolean =>
  a.x - pad < b.x + b.width &&
  b.x < a.x + a.width + pad &&
  a.y - pad < b.y + b.height &&
  b.y < a.y + a.height + pad;

function textIn(runs: TextRun[], box: Box): string | null {
  const hits = runs
    .filter((r) => intersects(box, r.bbox, 4))
    .sort((p, q) => p.bbox.y - q.bbox.y || p.bbox.x - q.bbox.x)
    .map((r) => r.text.trim())
    .filter(Boolean);
  const s = [...new Set(hits)].join(' ');
  return s ? s.slice(0, 500) : null;
}

function mapBox(t: readonly number[], b: Box): Box {
  const pts = [
    [b.x, b.y],
    [b.x + b.width, b.y],
    [b.x, b.y + b.height],
    [b.x + b.width, b.y + b.height],
  ].map(([x, y]) => [t[0]! * x! + t[1]! * y! + t[2]!, t[3]! * x! + t[4]! * y! + t[5]!]);
  const xs = pts.map((p) => p[0]!);
  const ys = pts.map((p) => p[1]!);
  const x = Math.min(...xs);
  const y = Math.min(...ys);
  return { x, y, width: Math.max(...xs) - x, height: Math.max(...ys) - y };
}

export function categorize(
  region: Pick<RegionOut, 'area_px' | 'confidence'>,
  sheetBox: Box,
  titleBlocks: Box[],
  before: string | null,
  after: string | null,
): NewChange['category'] {
  if (region.area_px < NOISE_AREA_PX || region.confidence < NOISE_CONFIDENCE) return 'noise';
  const cx = sheetBox.x + sheetBox.width / 2;
  const cy = sheetBox.y + sheetBox.height / 2;
  if (
    titleBlocks.some((t) => cx >= t.x && cx <= t.x + t.width && cy >= t.y && cy <= t.y + t.height)
  )
    return 'title_block';
  if ((before ?? '') !== (after ?? '')) {
    if (DIMENSION_RE.test(before ?? '') || DIMENSION_RE.test(after ?? '')) return 'dimension';
    return 'text';
  }
  if (before) return 'annotation';
  return 'geometry';
}

function describe(
  kind: string,
  category: string,
  before: string | null,
  after: string | null,
  area: number,
): string {
  const what = category === 'title_block' ? 'title block' : category;
  if ((category === 'text' || category === 'dimension') && before !== after) {
    if (before && after)
      return `${what === 'dimension' ? 'Dimension' : 'Text'} changed from “${before}” to “${after}”.`;
    if (after) return `${what === 'dimension' ? 'Dimension' : 'Text'} added: “${after}”.`;
    if (before) return `${what === 'dimension' ? 'Dimension' : 'Text'} removed: “${before}”.`;
  }
  const verb =
    { added: 'Added', removed: 'Removed', modified: 'Modified', moved: 'Moved' }[kind] ?? 'Changed';
  return `${verb} ${what} (${area} changed px)${after || before ? ` near “${(after ?? before)!.slice(0, 80)}”` : ''}.`;
}

export function createAnalyzeHandler(env: {
  db: Db;
  objects: ObjectStore;
}): JobHandler<AnalyzePayload> {
  const { db, objects } = env;
  return async (ctx) => {
    const overlay = getOverlayById(db, ctx.payload.overlay_id);
    if (!overlay) return { skipped: 'the overlay was deleted' };
    const blockA = getById(db, 'blocks', String(overlay.block_a_id));
    const blockB = getById(db, 'blocks', String(overlay.block_b_id));
    if (!blockA || !blockB) return { skipped: 'a block of the overlay was deleted' };
    const sheetA = getById(db, 'sheets', String(blockA.sheet_id))!;
    const sheetB = getById(db, 'sheets', String(blockB.sheet_id))!;
    ctx.progress(0, 1);
    const boxA = JSON.parse(String(blockA.bbox)) as Box;
    const boxB = JSON.parse(String(blockB.bbox)) as Box;
    const blockT = JSON.parse(String(overlay.transform)) as number[];
    const alignment = JSON.parse(String(overlay.alignment)) as { confidence: number };
    // Block B crop px → block A crop px, as stored; back to sheet pixels: B sheet px → A sheet px.
    const sheetT = [
      blockT[0]!,
      blockT[1]!,
      blockT[2]! - blockT[0]! * boxB.x - blockT[1]! * boxB.y + boxA.x,
      blockT[3]!,
      blockT[4]!,
      blockT[5]! - blockT[3]! * boxB.x - blockT[4]! * boxB.y + boxA.y,
    ];
    // The overlays of the same sheet pair in this comparison: the worker compares the whole sheet and
    // reports here only the changes this overlay owns (a change straddling block boxes, or outside
    // every block, is reported once and whole). Low-confidence overlays report nothing, so they own
    // nothing either.
    const siblings: { box: Box; sheetAligned: boolean }[] = [];
    let self = -1;
    for (const ov of overlaysOfJob(db, String(overlay.job_id))) {
      const mine = ov.id === overlay.id;
      const ba = mine ? blockA : getById(db, 'blocks', String(ov.block_a_id));
      const bb = mine ? blockB : getById(db, 'blocks', String(ov.block_b_id));
      if (!ba || !bb || ba.sheet_id !== blockA.sheet_id || bb.sheet_id !== blockB.sheet_id)
        continue;
      const al = JSON.parse(String(ov.alignment)) as { method?: string; confidence: number };
      if (!mine && !(al.confidence >= LOW_CONFIDENCE)) continue;
      if (mine) self = siblings.length;
      siblings.push({
        box: JSON.parse(String(ba.bbox)) as Box,
        sheetAligned: String(al.method ?? '').startsWith('sheet:'),
      });
    }
    const out = await ctx.pool.run(
      'compare.regions',
      {
        a: { path: await objects.localPath(String(sheetA.image_key)) },
        b: { path: await objects.localPath(String(sheetB.image_key)) },
        aBox: boxA,
        sheetTransform: sheetT,
        alignmentConfidence: alignment.confidence,
        ...(self >= 0 ? { siblings, self } : {}),
      },
      [],
      ctx.signal,
    );
    const runsA = sheetTextRuns(db, sheetA.id);
    const runsB = sheetTextRuns(db, sheetB.id);
    const titleBlocks = blocksOfSheet(db, sheetA.id)
      .filter((b) => b.type === 'TitleBlock')
      .map((b) => JSON.parse(String(b.bbox)) as Box);
    const toB = invertAffine(sheetT);
    const changes: NewChange[] = out.regions.map((r) => {
      const inA: Box = {
        x: r.bbox.x + boxA.x,
        y: r.bbox.y + boxA.y,
        width: r.bbox.width,
        height: r.bbox.height,
      };
      const before = textIn(runsA, inA);
      const after = textIn(runsB, mapBox(toB, inA));
      const category = categorize(r, inA, titleBlocks, before, after);
      return {
        bbox: r.bbox,
        kind: r.kind,
        category,
        areaPx: r.area_px,
        confidence: r.confidence,
        textBefore: before,
        textAfter: after,
        description: describe(r.kind, category, before, after, r.area_px),
      };
    });
    ctx.signal.throwIfAborted();
    // changes.analyzed goes into the webhook outbox in the transaction that stores the regions (contract §10).
    db.transaction(() => {
      replaceChanges(db, overlay, changes);
      recordChangesAnalyzed(db, getOverlayById(db, overlay.id)!, ctx.job.id);
    })();
    ctx.progress(1, 1);
    const byCategory: Record<string, number> = {};
    for (const c of changes) byCategory[c.category] = (byCategory[c.category] ?? 0) + 1;
    return { overlay_id: overlay.id, change_count: changes.length, by_category: byCategory };
  };
}
