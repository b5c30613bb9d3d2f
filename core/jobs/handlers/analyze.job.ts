import type { ObjectStore } from '../../blobs/object-store';
import { sheetSource } from './sheet-source';
import type { AnalyzePayload } from '../../services/compare.service';
import type { Db } from '../../store/db';
import type { Row } from '../../store/repositories/row';
import {
  blocksOfSheet,
  getById,
  getOverlayById,
  overlaysOfJob,
  replaceChanges,
  sheetTextRuns,
  type NewChange,
} from '../../store/repositories/overlays.repository';
import {
  changeText,
  describeChange,
  diffRegionText,
  hasLinework,
  kindWithText,
  mergeValueChanges,
  sheetTokens,
  type TextDiff,
  type Token,
} from '../../vision/compare/change-text';
import type { BlockBox } from '../../services/pairing';
import type { RegionOut } from '../compare-tasks';
import { recordChangesAnalyzed } from '../../services/webhooks.service';
import { isNoise, NOISE_CONFIDENCE, reportedScore } from '../../vision/compare/score';
import type { JobHandler } from '../job-runner';

// The `analyze` job (contract §6, change detection on one overlay): the engine's change regions
// of the overlay (recomputed in the worker pool from the stored sheet images and the overlay's
// transform), each with a category from the text layers, replacing the overlay's earlier regions.
//
// Which changes an overlay reports (compare-tasks.ts, RegionsArgs): a whole-sheet overlay (block A
// is the Sheet block) every change on the page — in a view, across a view's edge (one region), in an
// empty margin — and a view that moved on the sheet as one `moved` change plus the changes inside it;
// a view overlay the changes touching its view, whole. Comparisons made before sheets had a Sheet
// block keep the older rule: each change goes to exactly one overlay of the sheet pair.
//
// A change's words (vision/compare/change-text.ts): text_before / text_after are the words in the
// region that differ between A's text layer and B's brought into A's frame through the registration —
// not every word under the region; the description names the change ("Dimension 10'-8 1/4" →
// 7'-3 1/2""). A dimension or tag whose value changed, found as a removal and an addition side by side,
// is one `modified` change.
//
// Categories, in order: `noise` (a few pixels, or low confidence), `fill` (a change of the fill
// layer: a tone, hatch or solid area, found apart from the line work — vision/compare/layers.ts),
// `title_block` (inside sheet A's title block box — date stamps and revision clouds there are kept,
// but labelled), `dimension` (the text under it changed and looks like a dimension, e.g. 12'-6"),
// `text` (the text changed), `style` (the same geometry drawn with another lineweight or pen shade),
// `annotation` (a change drawn by the pages' PDF annotations — the architect's revision clouds,
// callouts and markups, told by object (layers.ts objectLayers) — whatever its words; or words in
// the region, none changed: leaders, callouts redrawn, a label moved), `geometry` (everything else;
// a moved view too).
//
// An overlay with a change that is not noise never keeps a score of 1.000 (score.ts).

/** Dimension strings: feet-inches (12'-6", 3' 4 1/2"), inches (6"), metric (1200 mm). */
export const DIMENSION_RE =
  /\d+\s*'\s*-?\s*\d*(\s+\d+\/\d+)?\s*"?|\d+(\s+\d+\/\d+)?\s*"|\b\d+(\.\d+)?\s*(mm|cm|m)\b/;

/** compare-tasks' LOW_CONFIDENCE (not imported: that module is the worker side, with sharp). */
const LOW_CONFIDENCE = 0.3;

type Box = BlockBox;

export function categorize(
  region: Pick<RegionOut, 'area_px' | 'confidence' | 'layer'>,
  sheetBox: Box,
  titleBlocks: Box[],
  before: string | null,
  after: string | null,
  /** Words lie in the region, changed or not. */
  hasText = before !== null || after !== null,
): NewChange['category'] {
  const textChanged = (before ?? '') !== (after ?? '');
  const dimension = DIMENSION_RE.test(before ?? '') || DIMENSION_RE.test(after ?? '');
  // A changed dimension value is a handful of pixels at small text sizes (7'-6" → 8'-0" in 8 pt
  // type at 200 dpi: ~55 px, the strokes both strings share cancel out): kept when its text says so.
  if (isNoise(region) && !(textChanged && dimension && region.confidence >= NOISE_CONFIDENCE))
    return 'noise';
  // A change of the fill layer (vision/compare/layers.ts: a tone, hatch or solid area) is a fill,
  // whatever text its box takes in.
  if (region.layer === 'fill') return 'fill';
  const cx = sheetBox.x + sheetBox.width / 2;
  const cy = sheetBox.y + sheetBox.height / 2;
  if (
    titleBlocks.some((t) => cx >= t.x && cx <= t.x + t.width && cy >= t.y && cy <= t.y + t.height)
  )
    return 'title_block';
  // Drawn by the pages' annotations (the architect's clouds, callouts and markups, told by object):
  // a markup change, whatever its words say (a callout's words are the reviewer's, not the drawing's).
  if (region.layer === 'annotation') return 'annotation';
  if (textChanged) {
    if (dimension) return 'dimension';
    return 'text';
  }
  // The same geometry drawn with another lineweight or pen shade (the text under it did not change).
  if (region.layer === 'style') return 'style';
  if (hasText) return 'annotation';
  return 'geometry';
}

/** An overlay's transform (block B crop px → block A crop px) as B sheet px → A sheet px. */
function sheetTransformOf(blockT: number[], boxA: Box, boxB: Box): number[] {
  return [
    blockT[0]!,
    blockT[1]!,
    blockT[2]! - blockT[0]! * boxB.x - blockT[1]! * boxB.y + boxA.x,
    blockT[3]!,
    blockT[4]!,
    blockT[5]! - blockT[3]! * boxB.x - blockT[4]! * boxB.y + boxA.y,
  ];
}

function sameBox(a: Box, b: Box): boolean {
  return a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;
}

/** "View “2 DETAIL” moved 2 in right and 0.1 in down on the sheet." (distances in sheet inches). */
function describeMove(
  view: Row | undefined,
  move: { dx: number; dy: number },
  dpi: number,
): string {
  const name = view
    ? [view.identifier, view.title]
        .filter((v) => v !== null && v !== undefined && v !== '')
        .join(' ')
    : '';
  const inches = (px: number) => `${Math.round((Math.abs(px) / dpi) * 10) / 10} in`;
  const parts: string[] = [];
  if (Math.abs(move.dx) >= 0.05 * dpi)
    parts.push(`${inches(move.dx)} ${move.dx > 0 ? 'right' : 'left'}`);
  if (Math.abs(move.dy) >= 0.05 * dpi)
    parts.push(`${inches(move.dy)} ${move.dy > 0 ? 'down' : 'up'}`);
  return `${name ? `View “${name}”` : 'A view'} moved ${parts.join(' and ') || 'slightly'} on the sheet.`;
}

export function createAnalyzeHandler(env: {
  db: Db;
  objects: ObjectStore;
}): JobHandler<AnalyzePayload> {
  const { db, objects } = env;
  return async (ctx) => {
    const overlay = await getOverlayById(db, ctx.payload.overlay_id);
    if (!overlay) return { skipped: 'the overlay was deleted' };
    const blockA = await getById(db, 'blocks', String(overlay.block_a_id));
    const blockB = await getById(db, 'blocks', String(overlay.block_b_id));
    if (!blockA || !blockB) return { skipped: 'a block of the overlay was deleted' };
    const sheetA = (await getById(db, 'sheets', String(blockA.sheet_id)))!;
    const sheetB = (await getById(db, 'sheets', String(blockB.sheet_id)))!;
    await ctx.progress(0, 1);
    const boxA = JSON.parse(String(blockA.bbox)) as Box;
    const boxB = JSON.parse(String(blockB.bbox)) as Box;
    const blockT = JSON.parse(String(overlay.transform)) as number[];
    const alignment = JSON.parse(String(overlay.alignment)) as {
      method?: string;
      confidence: number;
    };
    // Block B crop px → block A crop px, as stored; back to sheet pixels: B sheet px → A sheet px.
    const sheetT = sheetTransformOf(blockT, boxA, boxB);
    const ownAligned = !String(alignment.method ?? '').startsWith('sheet:');
    // The overlays of the same sheet pair in this comparison decide what this one reports (see the
    // header): the worker compares the whole sheet and keeps the changes that are this overlay's.
    // Low-confidence overlays report nothing, so they own nothing either.
    const pairOverlays: {
      box: Box;
      sheetT: number[];
      method: string;
      confidence: number;
      type: string;
      mine: boolean;
    }[] = [];
    for (const ov of await overlaysOfJob(db, String(overlay.job_id))) {
      const mine = ov.id === overlay.id;
      const ba = mine ? blockA : await getById(db, 'blocks', String(ov.block_a_id));
      const bb = mine ? blockB : await getById(db, 'blocks', String(ov.block_b_id));
      if (!ba || !bb || ba.sheet_id !== blockA.sheet_id || bb.sheet_id !== blockB.sheet_id)
        continue;
      const al = JSON.parse(String(ov.alignment)) as { method?: string; confidence: number };
      if (!mine && !(al.confidence >= LOW_CONFIDENCE)) continue;
      pairOverlays.push({
        box: JSON.parse(String(ba.bbox)) as Box,
        sheetT: sheetTransformOf(
          JSON.parse(String(ov.transform)) as number[],
          JSON.parse(String(ba.bbox)) as Box,
          JSON.parse(String(bb.bbox)) as Box,
        ),
        method: String(al.method ?? ''),
        confidence: al.confidence,
        type: String(ba.type),
        mine,
      });
    }
    const whole = blockA.type === 'Sheet';
    // A whole-sheet overlay whose alignment is not trusted reports nothing and is left out above: the
    // views then share the sheet's changes by the older rule, so none is lost.
    const hasWhole = pairOverlays.some((o) => o.type === 'Sheet');
    const scope = whole
      ? {
          // The views registered on their own: the worker tells which of them moved.
          views: pairOverlays
            .filter((o) => !o.mine && o.type !== 'Sheet' && !o.method.startsWith('sheet:'))
            .map((o) => ({ box: o.box, transform: o.sheetT, confidence: o.confidence })),
        }
      : hasWhole
        ? { sheetAligned: !ownAligned }
        : {
            siblings: pairOverlays.map((o) => ({
              box: o.box,
              sheetAligned: o.method.startsWith('sheet:'),
            })),
            self: pairOverlays.findIndex((o) => o.mine),
          };
    const out = await ctx.pool.run(
      'compare.regions',
      {
        a: await sheetSource(objects, sheetA),
        b: await sheetSource(objects, sheetB),
        aBox: boxA,
        sheetTransform: sheetT,
        alignmentConfidence: alignment.confidence,
        ...scope,
      },
      [],
      ctx.signal,
    );
    const blocksA = await blocksOfSheet(db, sheetA.id);
    const titleBlocks = blocksA
      .filter((b) => b.type === 'TitleBlock')
      .map((b) => JSON.parse(String(b.bbox)) as Box);
    const dpi = Number(sheetA.dpi) || 200;
    // Words of both sheets, B's in A's frame: through the overlay's registration, or a moved view's
    // own for the changes found through it (its words on B are where the view is now).
    const tokensA = sheetTokens(await sheetTextRuns(db, sheetA.id));
    const runsB = await sheetTextRuns(db, sheetB.id);
    const tokensB = new Map<string, Token[]>();
    const frameOf = (t: number[] | undefined) => (t ? JSON.stringify(t) : '');
    const tokensOfB = (frame: string) => {
      let toks = tokensB.get(frame);
      if (!toks) {
        toks = sheetTokens(runsB, frame ? (JSON.parse(frame) as number[]) : sheetT);
        tokensB.set(frame, toks);
      }
      return toks;
    };
    const diffAt = (box: Box, frame = '') => diffRegionText(box, tokensA, tokensOfB(frame));
    const toSheet = (b: Box): Box => ({ ...b, x: b.x + boxA.x, y: b.y + boxA.y });
    type Found = { r: RegionOut; box: Box; kind: RegionOut['kind']; diff: TextDiff; frame: string };
    const noWords: TextDiff = { removed: [], added: [], moved: [], kept: [] };
    const moves = out.regions.filter((r) => r.move);
    const found = mergeValueChanges<Found>(
      out.regions
        .filter((r) => !r.move)
        .map((r) => {
          const frame = frameOf(r.transform);
          const box = toSheet(r.bbox);
          return { r, box, kind: r.kind, diff: diffAt(box, frame), frame };
        }),
      (box, frame) => diffAt(box, frame),
      // A removed value beside its added value: one change over both, modified.
      (a, b, box, diff) => ({
        r: {
          ...a.r,
          bbox: { ...box, x: box.x - boxA.x, y: box.y - boxA.y },
          area_px: a.r.area_px + b.r.area_px,
          added_px: a.r.added_px + b.r.added_px,
          removed_px: a.r.removed_px + b.r.removed_px,
          kind: 'modified',
          confidence: Math.max(a.r.confidence, b.r.confidence),
        },
        box,
        kind: 'modified',
        diff,
        frame: a.frame,
      }),
    );
    const changes: NewChange[] = moves.map((r) => {
      // A view that moved on the sheet: its words did not change with the move (the changes inside
      // it are regions of their own), so no text is read under it.
      const view = blocksA.find((b) => sameBox(JSON.parse(String(b.bbox)) as Box, r.move!.view));
      return {
        bbox: r.bbox,
        kind: r.kind,
        category: 'geometry',
        areaPx: r.area_px,
        confidence: r.confidence,
        textBefore: null,
        textAfter: null,
        description: describeMove(view, r.move!, dpi),
      };
    });
    for (const { r, box, diff: regionWords } of found) {
      const changed = changeText(regionWords);
      const words =
        regionWords.removed.length +
        regionWords.added.length +
        regionWords.moved.length +
        regionWords.kept.length;
      const category = categorize(r, box, titleBlocks, changed.before, changed.after, words > 0);
      // A fill change (a tone, hatch or solid area; the layers work) has no words of its own: the
      // words in its box changed with the line work, which reports them.
      const diff = category === 'fill' ? noWords : regionWords;
      const { before, after } = changeText(diff);
      const kind = kindWithText(r.kind, diff, r);
      changes.push({
        bbox: r.bbox,
        kind,
        category,
        areaPx: r.area_px,
        confidence: r.confidence,
        textBefore: before,
        textAfter: after,
        description: describeChange({
          kind,
          category,
          diff,
          area_px: r.area_px,
          linework: hasLinework(box, diff),
          markup: r.layer === 'annotation' && category === 'annotation',
        }),
      });
    }
    const real = changes.some((c) => c.category !== 'noise');
    const score = overlay.score === null ? undefined : reportedScore(Number(overlay.score), real);
    ctx.signal.throwIfAborted();
    // changes.analyzed goes into the webhook outbox in the transaction that stores the regions (contract §10).
    await db.transaction(async (tx) => {
      await replaceChanges(tx, overlay, changes, score);
      await recordChangesAnalyzed(tx, (await getOverlayById(tx, overlay.id))!, ctx.job.id);
    });
    await ctx.progress(1, 1);
    const byCategory: Record<string, number> = {};
    for (const c of changes) byCategory[c.category] = (byCategory[c.category] ?? 0) + 1;
    return {
      overlay_id: overlay.id,
      change_count: changes.length,
      by_category: byCategory,
      // Nothing reported from an untrusted alignment is not "no changes": the result says so.
      ...(alignment.confidence < LOW_CONFIDENCE
        ? {
            warning: 'The alignment is not trusted: no change regions were sought on this overlay.',
          }
        : {}),
    };
  };
}
