// Request and response shapes of the Blueline HTTP API (/work/shared/spec/contract.md §1–7).
// Written from the contract until core/contract publishes shared types; keep field names exactly
// as the API spells them. Pixel units: sheet pixels for block bboxes, overlay pixels for change
// bboxes, origin top-left, y down.

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
  | 'bad_response';

export interface BBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Project {
  id: Id;
  name: string;
  description: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CreateProjectBody {
  name: string;
  description?: string;
}

export type FileStatus = 'pending' | 'uploaded';
export type AcceptedContentType = 'application/pdf' | 'image/png' | 'image/jpeg' | 'image/tiff';

export interface FileRecord {
  id: Id;
  project_id: Id;
  filename: string;
  content_type: string;
  size_bytes: number | null;
  sha256: string | null;
  status: FileStatus;
  uri?: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

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

export interface Drawing {
  id: Id;
  project_id: Id;
  name: string;
  file_id: Id;
  file?: FileRecord;
  revision: string | null;
  status: DrawingStatus;
  sheet_count: number | null;
  job_id: Id | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface CreateDrawingBody {
  project_id: Id;
  name: string;
  file_id: Id;
  revision?: string;
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

export interface Sheet {
  id: Id;
  drawing_id: Id;
  project_id: Id;
  drawing?: Drawing;
  index: number;
  sheet_number: string | null;
  title: string | null;
  discipline: Discipline | string | null;
  revision: string | null;
  uri: string;
  thumbnail_uri: string;
  width: number;
  height: number;
  dpi: number;
  text_source: 'vector' | 'ocr' | 'none';
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PatchSheetBody {
  sheet_number?: string;
  title?: string;
  discipline?: string;
}

export const BLOCK_TYPES = [
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

export interface Block {
  id: Id;
  sheet_id: Id;
  drawing_id: Id;
  project_id: Id;
  sheet?: Sheet;
  type: BlockType | string;
  uri: string;
  description: string | null;
  /** Sheet pixels. */
  bbox: BBox;
  identifier: string | null;
  title: string | null;
  scale: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/**
 * A tile pyramid for a large image (contract §5: "`<uri>/tiles/{z}/{x}/{y}.webp` or similar,
 * documented in OpenAPI"). The exact field is not fixed yet; the viewer accepts this shape when
 * present and falls back to the full image otherwise. Level `max_level` is full resolution;
 * each lower level halves both dimensions.
 */
export interface TilePyramid {
  /** URL with `{z}`, `{x}`, `{y}` placeholders (signed, no auth needed). */
  url_template: string;
  tile_size: number;
  max_level: number;
  min_level?: number;
  width: number;
  height: number;
}

export interface Alignment {
  method: string;
  confidence: number;
  residual_px: number;
}

export interface OverlayStats {
  added_px: number;
  removed_px: number;
  unchanged_px: number;
  changed_fraction: number;
}

export interface Overlay {
  id: Id;
  project_id: Id;
  job_id: Id;
  job?: Job;
  block_a_id: Id;
  block_b_id: Id;
  block_a?: Block;
  block_b?: Block;
  /** Similarity in [0, 1]; 1 means no ink differs after alignment. */
  score: number;
  /** Combined image in A's frame: unchanged grey, removed red, added green (`?palette=` for colour-blind-safe). */
  uri: string;
  addition_uri: string;
  deletion_uri: string;
  /** Block B resampled into A's frame. */
  aligned_b_uri: string;
  width: number;
  height: number;
  /** 2×3 affine [a, b, c, d, e, f] mapping B pixels to A pixels. */
  transform: number[] | number[][];
  alignment: Alignment | null;
  stats: OverlayStats | null;
  has_changes: boolean;
  change_count: number | null;
  tiles?: TilePyramid | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export type ChangeKind = 'added' | 'removed' | 'modified' | 'moved';
export type ChangeCategory =
  'geometry' | 'text' | 'dimension' | 'annotation' | 'title_block' | 'noise';
export type ReviewStatus = 'open' | 'accepted' | 'rejected' | 'flagged';

export interface Change {
  id: Id;
  overlay_id: Id;
  project_id: Id;
  /** Overlay pixels. */
  bbox: BBox;
  kind: ChangeKind;
  category: ChangeCategory;
  area_px: number;
  confidence: number;
  text_before: string | null;
  text_after: string | null;
  description: string | null;
  review_status: ReviewStatus;
  note: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PatchChangeBody {
  review_status?: ReviewStatus;
  note?: string;
}

export type JobStatus = 'Queued' | 'Started' | 'Completed' | 'Failed' | 'Canceled';
export type JobType = 'process' | 'compare' | 'analyze' | 'parse' | string;
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

export interface Job {
  id: Id;
  project_id: Id;
  type: JobType;
  status: JobStatus;
  target_type: TargetType;
  target_id: Id;
  parent_id: Id | null;
  parent?: Job;
  progress: { completed: number; total: number } | null;
  result: unknown;
  error: Problem | null;
  credits_charged: number | null;
  started_at: Timestamp | null;
  finished_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface JobAccepted {
  job_id: Id;
  status: JobStatus;
}

export interface CompareDrawingsBody {
  /** The older drawing; the path id is the newer. */
  compare_to: Id;
  analyze?: boolean;
}

export interface SearchBody {
  query: string;
  discipline?: string;
  drawing_id?: Id;
  types?: string[];
  limit?: number;
}

export interface SearchHit {
  type: string;
  id: Id;
  sheet_id: Id | null;
  sheet_number: string | null;
  drawing_id: Id | null;
  snippet: string;
  bbox: BBox | null;
  score: number;
}

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ['Completed', 'Failed', 'Canceled'];
export function isTerminal(status: JobStatus): boolean {
  return TERMINAL_JOB_STATUSES.includes(status);
}
