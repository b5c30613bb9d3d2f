// Request and response shapes of the Blueline HTTP API (docs/api.md §1–7).
// Records are the service's own schemas (core/contract, imported as types only, so the renderer
// cannot drift from what the service sends), plus the optional fields `?expand=` adds. Pixel units:
// sheet pixels for block bboxes, overlay pixels for change bboxes, origin top-left, y down.
import type { Static } from '@sinclair/typebox';
import type * as C from '../../../core/contract/schemas';

export type Id = string;
/** RFC 3339 UTC with milliseconds. */
export type Timestamp = string;

export interface ListMeta {
  next: string | null;
  prev: string | null;
  limit: number;
}

export interface ListEnvelope<T> {
  data: T[];
  _meta: ListMeta;
}

/** RFC 9457 Problem Details as the service sends them (contract §3). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  code: ProblemCode;
  request_id?: string;
  errors?: { field: string; code: string; message: string }[];
  required?: number;
  available?: number;
}

export type ProblemCode =
  | 'invalid_json'
  | 'validation_error'
  | 'missing_parameter'
  | 'invalid_parameter'
  | 'invalid_cursor'
  | 'invalid_expand'
  | 'expand_too_deep'
  | 'invalid_idempotency_key'
  | 'unauthorized'
  | 'insufficient_credits'
  | 'https_required'
  | 'invalid_signature'
  | 'not_found'
  | 'method_not_allowed'
  | 'idempotency_key_conflict'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable'
  // Client-side codes for failures that never reached the service as a Problem.
  | 'network_error'
  | 'bad_response'
  // Processing codes on failed jobs (contract §3: pdf_encrypted, page_too_large, …).
  | (string & {});

export interface BBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type Project = Static<typeof C.Project>;

export interface CreateProjectBody {
  name: string;
  description?: string;
}

export type FileStatus = 'pending' | 'uploaded';
export type AcceptedContentType = 'application/pdf' | 'image/png' | 'image/jpeg' | 'image/tiff';

export type FileRecord = Static<typeof C.FileObject>;

export interface CreateFileBody {
  project_id: Id;
  filename: string;
  content_type: AcceptedContentType;
  size_bytes?: number;
}

export interface CreatedFile extends FileRecord {
  upload_url: string;
  upload_expires_at: Timestamp;
}

export type DrawingStatus = 'Processing' | 'Ready' | 'Failed';

export type Drawing = Static<typeof C.Drawing> & { file?: FileRecord };

export interface CreateDrawingBody {
  project_id: Id;
  name: string;
  file_id: Id;
  revision?: string;
}

/** A person's values win over what processing reads, and survive re-processing (null: none). */
export interface PatchDrawingBody {
  name?: string;
  revision?: string | null;
  /** YYYY-MM-DD or null. */
  issued_at?: string | null;
}

export const DISCIPLINES = [
  'general',
  'hazardous_materials',
  'survey',
  'geotechnical',
  'civil',
  'landscape',
  'structural',
  'architectural',
  'interiors',
  'equipment',
  'fire_protection',
  'plumbing',
  'process',
  'mechanical',
  'electrical',
  'distributed_energy',
  'telecommunications',
  'resource',
  'other',
  'contractor',
  'operations',
  'unknown',
] as const;
export type Discipline = (typeof DISCIPLINES)[number];

export type Sheet = Static<typeof C.Sheet> & { drawing?: Drawing };

export interface PatchSheetBody {
  sheet_number?: string;
  title?: string;
  discipline?: string;
}

export const BLOCK_TYPES = [
  'Sheet',
  'Plan',
  'Elevation',
  'Section',
  'Detail',
  'Schedule',
  'Legend',
  'Notes',
  'KeyPlan',
  'TitleBlock',
  'Diagram',
  'Other',
] as const;
export type BlockType = (typeof BLOCK_TYPES)[number];

export type Block = Static<typeof C.Block> & { sheet?: Sheet };

/**
 * A tile pyramid for a large image (contract §5: "`<uri>/tiles/{z}/{x}/{y}.webp` or similar,
 * documented in OpenAPI"). The exact field is not fixed yet; the viewer accepts this shape when
 * present and falls back to the full image otherwise. Level `native_level` (default `max_level`)
 * is the image's own resolution; each lower level halves both dimensions, each deeper one doubles them.
 */
export interface TilePyramid {
  /** URL with `{z}`, `{x}`, `{y}` placeholders (signed, no auth needed). */
  url_template: string;
  tile_size: number;
  /** The deepest level (past native_level for images of vector pages, rendered from the PDF). */
  max_level: number;
  /** The level at the image's own resolution; max_level when absent. */
  native_level?: number;
  min_level?: number;
  width: number;
  height: number;
}

export type Alignment = NonNullable<Overlay['alignment']>;

export type OverlayStats = NonNullable<Overlay['stats']>;

export type Overlay = Static<typeof C.Overlay> & {
  job?: Job;
  block_a?: Block;
  block_b?: Block;
  /** A pyramid the service may announce; otherwise the viewer derives it from `uri`. */
  tiles?: TilePyramid | null;
};

export type ChangeKind = 'added' | 'removed' | 'modified' | 'moved';
export type ChangeCategory =
  'geometry' | 'text' | 'dimension' | 'annotation' | 'title_block' | 'fill' | 'style' | 'noise';
export type ReviewStatus = 'open' | 'accepted' | 'rejected' | 'flagged';

export type Change = Static<typeof C.Change>;

export interface PatchChangeBody {
  review_status?: ReviewStatus;
  note?: string;
}

export type JobStatus = 'Queued' | 'Started' | 'Completed' | 'Failed' | 'Canceled';
export type JobType = 'process' | 'compare' | 'analyze' | 'parse' | 'export' | string;
export type TargetType = 'drawing' | 'sheet' | 'block' | 'overlay';

export interface SheetPair {
  /** Older sheet (the drawing named by `compare_to`). */
  sheet_a_id: Id;
  /** Newer sheet. */
  sheet_b_id: Id;
  method: string;
  confidence: number;
}

/** Sheets only on one side: the contract writes `[...]`, so accept ids or sheet-like objects. */
export type UnpairedSheetRef =
  Id | { id?: Id; sheet_id?: Id; sheet_number?: string | null; title?: string | null };

export interface CompareResult {
  pairs: SheetPair[];
  added_sheets: UnpairedSheetRef[];
  removed_sheets: UnpairedSheetRef[];
  overlay_count: number;
}

export type Job = Static<typeof C.Job> & { parent?: Job };

export interface JobAccepted {
  job_id: Id;
  status: JobStatus;
}

export type ExportFormat = 'pdf_report' | 'clouded_pdf' | 'csv';

/** POST /exports (contract §6): an export of a completed comparison. */
export interface CreateExportBody {
  job_id: Id;
  format: ExportFormat;
  review_status?: ReviewStatus[];
  page_size?: 'letter' | 'a4' | 'tabloid';
  palette?: 'standard' | 'colorblind';
}

/** The result of a Completed export job. */
export interface ExportResult {
  file_id: Id;
  format: ExportFormat;
}

export interface CompareDrawingsBody {
  /** The older drawing; the path id is the newer. */
  compare_to: Id;
  analyze?: boolean;
}

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['Completed', 'Failed', 'Canceled'];
export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_JOB_STATUSES.includes(status);
}

/** An overlay whose images exist (the contract allows nulls while none are stored). */
export type ReadyOverlay = Overlay & {
  uri: string;
  aligned_b_uri: string;
  width: number;
  height: number;
};
export function isReadyOverlay(o: Overlay): o is ReadyOverlay {
  return o.uri != null && o.aligned_b_uri != null && o.width != null && o.height != null;
}

/** A sheet whose image exists. */
export type ReadySheet = Sheet & { uri: string };
export function isReadySheet(s: Sheet): s is ReadySheet {
  return s.uri != null;
}

// The renderer needs these lists as values, which it may not import from core; the checks below
// fail the typecheck if they ever differ from the service's.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const DISCIPLINES_MATCH_CONTRACT: Same<Discipline, Sheet['discipline']> = true;
export const BLOCK_TYPES_MATCH_CONTRACT: Same<BlockType, Block['type']> = true;
