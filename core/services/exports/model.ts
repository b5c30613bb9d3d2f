import { ApiError } from '../../domain/errors';
import type { Db } from '../../store/db';
import {
  changesOfOverlay,
  overlaysWithBlocksOfJob,
  rowById,
  sheetsByIds,
  type OverlayWithBlocks,
} from '../../store/repositories/exports.repository';
import type { Row } from '../../store/repositories/row';
import { changeBoxOnNewerSheet, groupTouching, readingOrder, unionBox, type Box } from './geometry';

// The export model: everything a report, a clouded PDF or a CSV needs from one finished
// comparison, read once from the store into plain JSON (so it can be handed to a worker thread).
//
// "The changes exported are those of the whole-sheet overlays" (contract §6): one overlay per sheet
// pair, found by wholeSheetOverlays. A view's overlay shows the same changes through a view; they
// are not repeated.

export const REVIEW_STATUSES = ['open', 'accepted', 'rejected', 'flagged'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export type ChangeKind = 'added' | 'removed' | 'modified' | 'moved';

export interface ExportChange {
  id: string;
  overlay_id: string;
  /**
   * The number of its group (ExportGroup) on the sheet, in reading order, among the exported
   * non-noise changes; null for noise. Changes of one group share it.
   */
  number: number | null;
  /** How many changes share this number (1: a change of its own; 0 for noise). */
  group_size: number;
  /** The first change of its group: the one whose cloud carries the number's tag. */
  tagged: boolean;
  /** Overlay pixels (the older sheet's frame). */
  bbox: Box;
  /** The same box on the newer sheet (sheet pixels), for clouds on the newer revision's PDF. */
  box_on_newer: Box;
  kind: ChangeKind;
  category: string;
  description: string | null;
  text_before: string | null;
  text_after: string | null;
  review_status: ReviewStatus;
  note: string | null;
}

export interface ExportSheet {
  id: string;
  drawing_id: string;
  page_index: number;
  sheet_number: string | null;
  title: string | null;
  width: number;
  height: number;
  dpi: number;
}

/**
 * `not_aligned`: the sheets could not be aligned with confidence (alignment.low_confidence) and no
 * change was listed from the overlay, so whether the sheet changed is not known — never reported
 * as unchanged.
 */
export type PairStatus = 'changed' | 'unchanged' | 'not_aligned' | 'added' | 'removed';

/**
 * One numbered item of a sheet: changes of the same kind, category and description whose boxes
 * touch (change detection splits a large region, such as a fill removed over a whole plan, into
 * pieces), or a change alone. The report clouds and lists groups; the clouded PDF keeps a cloud per
 * change and tags each group once; the CSV gives every change its group's number.
 */
export interface ExportGroup {
  number: number;
  /** Union of the members' boxes, overlay pixels. */
  bbox: Box;
  /** Ids of the member changes, in reading order. */
  change_ids: string[];
}

export interface ExportPair {
  status: PairStatus;
  sheet_a: ExportSheet | null;
  sheet_b: ExportSheet | null;
  overlay: {
    id: string;
    width: number;
    height: number;
    score: number | null;
    /** Change detection has run on it (has_changes). */
    analyzed: boolean;
    /** The alignment is not trusted (contract §4 Overlay alignment.low_confidence). */
    low_confidence: boolean;
    /** Its confidence (0–1) and why it is not trusted, in words, when it is not. */
    alignment_confidence: number | null;
    alignment_warning: string | null;
    /** Object keys of the combined image, standard and colour-blind palettes. */
    image_key: string;
    image_key_colorblind: string;
  } | null;
  /**
   * The changes exported (after the review_status filter): numbered ones by number (reading order
   * within a group), then noise.
   */
  changes: ExportChange[];
  /** The numbered groups of `changes`, by number. */
  groups: ExportGroup[];
  /** Non-noise changes of the whole-sheet overlay by review status, before any filter. */
  counts: Record<ReviewStatus, number>;
  /** Noise regions of the overlay (not clouded, not listed in the report). */
  noise: number;
}

export interface ExportDrawing {
  id: string;
  name: string;
  revision: string | null;
  issued_at: string | null;
  file_id: string;
  file_object_key: string;
  file_content_type: string;
  filename: string;
}

export interface ExportModel {
  project: { id: string; name: string };
  comparison: { id: string; mode: string; created_at: string; finished_at: string | null };
  older: ExportDrawing;
  newer: ExportDrawing;
  pairs: ExportPair[];
  /** The review_status filter of the request, or null for every change. */
  review_status: ReviewStatus[] | null;
}

/** The score bands of contract §4 (Overlay). */
export function scoreBand(score: number | null): string {
  if (score === null) return 'not scored';
  if (score >= 0.95) return 'nearly identical';
  if (score >= 0.8) return 'moderate changes';
  if (score >= 0.6) return 'significant changes';
  return 'major or different content';
}

const json = <T>(v: unknown): T => JSON.parse(String(v)) as T;

/**
 * The whole-sheet overlay of each sheet pair of a comparison, keyed `sheetA:sheetB`.
 *
 * The comparison pairs every sheet pair's `Sheet` blocks (the whole page, contract §4 Block), and
 * that overlay is the one whose changes cover the page. Comparisons run before Sheet blocks existed
 * have none: for them the overlay of the largest block pair (by A's area, normally the drawing
 * area) stands in, so their exports still work. This function is the one place that choice lives.
 */
export async function wholeSheetOverlays(
  db: Db,
  comparisonJobId: string,
): Promise<Map<string, OverlayWithBlocks>> {
  const best = new Map<string, OverlayWithBlocks>();
  const area = (o: OverlayWithBlocks) => {
    const b = json<Box>(o.block_a_bbox);
    return b.width * b.height;
  };
  for (const o of await overlaysWithBlocksOfJob(db, comparisonJobId)) {
    const key = `${o.sheet_a_id}:${o.sheet_b_id}`;
    const cur = best.get(key);
    const isSheet = o.block_a_type === 'Sheet' && o.block_b_type === 'Sheet';
    const curIsSheet = cur?.block_a_type === 'Sheet' && cur?.block_b_type === 'Sheet';
    if (!cur || (isSheet && !curIsSheet) || (isSheet === curIsSheet && area(o) > area(cur)))
      best.set(key, o);
  }
  return best;
}

function sheetOf(r: Row): ExportSheet {
  return {
    id: r.id,
    drawing_id: String(r.drawing_id),
    page_index: Number(r.page_index),
    sheet_number: (r.sheet_number as string | null) ?? null,
    title: (r.title as string | null) ?? null,
    width: Number(r.width),
    height: Number(r.height),
    dpi: Number(r.dpi),
  };
}

async function drawingOf(db: Db, id: string): Promise<ExportDrawing> {
  const d = await rowById(db, 'drawings', id);
  const f = d ? await rowById(db, 'files', String(d.file_id)) : undefined;
  if (!d || !f) throw deleted(`drawing ${id}`);
  return {
    id: d.id,
    name: String(d.name),
    revision: (d.revision as string | null) ?? null,
    // issued_at arrives with the title-block reading (contract §4 Drawing); absent before it.
    issued_at: (d.issued_at as string | null | undefined) ?? null,
    file_id: f.id,
    file_object_key: String(f.object_key),
    file_content_type: String(f.content_type),
    filename: String(f.filename),
  };
}

/** The Problem an export fails with when what it exports was deleted under it. */
export function deleted(what: string): ApiError {
  return new ApiError(
    'conflict',
    `The comparison's ${what} was deleted while it was being exported; nothing was exported. Run the comparison again to export it.`,
  );
}

/** Reading-order band: about a twentieth of the image, so a row of notes reads as one line. */
const bandOf = (height: number) => Math.max(50, Math.round(height / 20));

/**
 * Reads the model of comparison `jobId` (a root compare job, Completed). Throws `conflict` when
 * part of it has been deleted since (the export then fails cleanly, with nothing stored).
 */
export async function loadExportModel(
  db: Db,
  jobId: string,
  reviewStatus: ReviewStatus[] | null,
): Promise<ExportModel> {
  const job = await rowById(db, 'jobs', jobId);
  if (!job) throw deleted(`job ${jobId}`);
  const project = await rowById(db, 'projects', String(job.project_id));
  if (!project) throw deleted(`project ${String(job.project_id)}`);
  const result = (job.result ? json<Record<string, unknown>>(job.result) : {}) as {
    pairs?: { sheet_a_id: string; sheet_b_id: string }[];
    added_sheets?: string[];
    removed_sheets?: string[];
  };
  const overlays = await wholeSheetOverlays(db, jobId);
  // Sheet pairs: the comparison's own pairing where it has one (Drawing and Sheet comparisons),
  // else the pairs its overlays show (a Block comparison).
  const pairKeys: [string, string][] = result.pairs
    ? result.pairs.map((p) => [p.sheet_a_id, p.sheet_b_id])
    : [...overlays.values()].map((o) => [o.sheet_a_id, o.sheet_b_id]);
  const added = result.added_sheets ?? [];
  const removed = result.removed_sheets ?? [];
  const sheets = await sheetsByIds(db, [...new Set([...pairKeys.flat(), ...added, ...removed])]);
  const sheet = (id: string) => {
    const r = sheets.get(id);
    if (!r) throw deleted(`sheet ${id}`);
    return sheetOf(r);
  };
  if (pairKeys.length === 0) throw deleted('overlays');
  const first = pairKeys[0]!;
  const older = await drawingOf(db, sheet(first[0]).drawing_id);
  const newer = await drawingOf(db, sheet(first[1]).drawing_id);
  const filter = reviewStatus ? new Set<string>(reviewStatus) : null;

  const pairs: ExportPair[] = [];
  for (const [aId, bId] of pairKeys) {
    const a = sheet(aId);
    const b = sheet(bId);
    const o = overlays.get(`${aId}:${bId}`);
    if (!o) throw deleted(`overlay of sheets ${a.sheet_number ?? aId} / ${b.sheet_number ?? bId}`);
    const transform = json<number[]>(o.transform);
    const blockB = json<Box>(o.block_b_bbox);
    const all = (await changesOfOverlay(db, o.id)).map((c): ExportChange => ({
      id: c.id,
      overlay_id: o.id,
      number: null,
      group_size: 0,
      tagged: false,
      bbox: json<Box>(c.bbox),
      box_on_newer: changeBoxOnNewerSheet(json<Box>(c.bbox), transform, blockB),
      kind: c.kind as ChangeKind,
      category: String(c.category),
      description: (c.description as string | null) ?? null,
      text_before: (c.text_before as string | null) ?? null,
      text_after: (c.text_after as string | null) ?? null,
      review_status: c.review_status as ReviewStatus,
      note: (c.note as string | null) ?? null,
    }));
    const counts: Record<ReviewStatus, number> = { open: 0, accepted: 0, rejected: 0, flagged: 0 };
    let noise = 0;
    for (const c of all) {
      if (c.category === 'noise') noise++;
      else counts[c.review_status]++;
    }
    const band = bandOf(Number(o.height));
    const kept = readingOrder(
      all.filter((c) => !filter || filter.has(c.review_status)),
      band,
    );
    const { changes, groups } = numberGroups(
      kept,
      band,
      groupGap(Number(o.width), Number(o.height)),
    );
    const analyzed = Number(o.has_changes) === 1;
    const score = o.score === null ? null : Number(o.score);
    const alignment = (o.alignment ? json<Record<string, unknown>>(o.alignment) : null) as {
      confidence?: number;
      low_confidence?: boolean;
      warning?: string;
    } | null;
    const lowConfidence = alignment?.low_confidence === true;
    const realChanges = all.length - noise;
    const changed = analyzed ? realChanges > 0 : score !== null && score < 0.95;
    const images = json<Record<string, string>>(o.images);
    pairs.push({
      status: changed ? 'changed' : lowConfidence ? 'not_aligned' : 'unchanged',
      sheet_a: a,
      sheet_b: b,
      overlay: {
        id: o.id,
        width: Number(o.width),
        height: Number(o.height),
        score,
        analyzed,
        low_confidence: lowConfidence,
        alignment_confidence:
          typeof alignment?.confidence === 'number' ? alignment.confidence : null,
        alignment_warning: lowConfidence ? (alignment?.warning ?? null) : null,
        image_key: String(images.combined),
        image_key_colorblind: String(images.combined_colorblind ?? images.combined),
      },
      changes,
      groups,
      counts,
      noise,
    });
  }
  pairs.sort((p, q) => p.sheet_b!.page_index - q.sheet_b!.page_index);
  const none = { open: 0, accepted: 0, rejected: 0, flagged: 0 };
  for (const id of added)
    pairs.push({
      status: 'added',
      sheet_a: null,
      sheet_b: sheet(id),
      overlay: null,
      changes: [],
      groups: [],
      counts: { ...none },
      noise: 0,
    });
  for (const id of removed)
    pairs.push({
      status: 'removed',
      sheet_a: sheet(id),
      sheet_b: null,
      overlay: null,
      changes: [],
      groups: [],
      counts: { ...none },
      noise: 0,
    });

  return {
    project: { id: project.id, name: String(project.name) },
    comparison: {
      id: job.id,
      mode: String(json<{ mode?: string }>(job.payload).mode ?? 'drawing'),
      created_at: String(job.created_at),
      finished_at: (job.finished_at as string | null) ?? null,
    },
    older,
    newer,
    pairs,
    review_status: reviewStatus,
  };
}

/**
 * How far apart two pieces of one change may be and still be one group: 1/200 of the overlay's
 * shorter side (about 0.1 in on a printed sheet), at least 4 px.
 */
const groupGap = (width: number, height: number) =>
  Math.max(4, Math.round(Math.min(width, height) / 200));

/**
 * Numbers the non-noise changes of a sheet (in reading order) by group: pieces of one change
 * (same kind, category and description, boxes touching) share a number, given in the reading order
 * of their union box. Returns the changes by number, then the noise, and the groups.
 */
export function numberGroups(
  ordered: ExportChange[],
  band: number,
  gap: number,
): { changes: ExportChange[]; groups: ExportGroup[] } {
  const real = ordered.filter((c) => c.category !== 'noise');
  const found = groupTouching(
    real,
    (c) => `${c.kind}\u0000${c.category}\u0000${c.description ?? ''}`,
    gap,
  ).map((members) => ({ members, bbox: unionBox(members.map((m) => m.bbox)) }));
  const groups: ExportGroup[] = [];
  const changes: ExportChange[] = [];
  readingOrder(found, band).forEach((g, i) => {
    const number = i + 1;
    g.members.forEach((c, j) => {
      c.number = number;
      c.group_size = g.members.length;
      c.tagged = j === 0;
      changes.push(c);
    });
    groups.push({ number, bbox: g.bbox, change_ids: g.members.map((c) => c.id) });
  });
  for (const c of ordered) if (c.category === 'noise') changes.push(c);
  return { changes, groups };
}

/** The sheet label a person reads: its number, else its page. */
export function sheetLabel(s: ExportSheet | null): string {
  if (!s) return '—';
  return s.sheet_number ?? `page ${s.page_index + 1}`;
}
