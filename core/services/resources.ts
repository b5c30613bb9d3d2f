// Every API resource described once: its table, how a row becomes the API object, and which
// `_id` fields expand into which resource. The list engine, the expansion engine, single reads and
// the isolation tests are all driven from this table.

export type ResourceKind =
  | 'project'
  | 'file'
  | 'drawing'
  | 'sheet'
  | 'block'
  | 'overlay'
  | 'change'
  | 'symbol'
  | 'job'
  | 'ledger'
  | 'webhook'
  | 'webhook_delivery';

export interface SerializeContext {
  /** Absolute signed HTTPS URL for an object key (null key → null). */
  signedUrl(key: string | null | undefined): string | null;
}

import type { Row } from '../store/repositories/row';
export type { Row };

export interface Relation {
  /** Row column holding the referenced id. */
  column: string;
  kind: ResourceKind;
}

export interface ResourceDef {
  kind: ResourceKind;
  table: string;
  /** Human noun used in error details. */
  noun: string;
  toApi(row: Row, ctx: SerializeContext): Record<string, unknown>;
  /**
   * The columns `toApi` reads (and nothing more): lists and expansions select only these, so a
   * page does not carry internal columns (organization_id, overrides, …) through SQLite and V8.
   * resources.test.ts checks that `toApi` reads no other column.
   */
  columns: readonly string[];
  /** Expandable fields: API field name (without `_id`) → relation. */
  relations: Record<string, Relation>;
}

const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : (v ?? null));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export const RESOURCES: Record<ResourceKind, ResourceDef> = {
  project: {
    kind: 'project',
    table: 'projects',
    columns: ['id', 'name', 'description', 'created_at', 'updated_at'],
    noun: 'project',
    relations: {},
    toApi: (r) => ({
      id: r.id,
      name: r.name,
      description: str(r.description),
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  file: {
    kind: 'file',
    table: 'files',
    columns: [
      'id',
      'project_id',
      'filename',
      'content_type',
      'size_bytes',
      'declared_size',
      'sha256',
      'status',
      'object_key',
      'created_at',
      'updated_at',
    ],
    noun: 'file',
    relations: { project: { column: 'project_id', kind: 'project' } },
    toApi: (r, ctx) => ({
      id: r.id,
      project_id: r.project_id,
      filename: r.filename,
      content_type: r.content_type,
      size_bytes: r.size_bytes ?? r.declared_size ?? null,
      sha256: str(r.sha256),
      status: r.status,
      uri: r.status === 'uploaded' ? ctx.signedUrl(r.object_key as string) : null,
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  drawing: {
    kind: 'drawing',
    table: 'drawings',
    columns: [
      'id',
      'project_id',
      'name',
      'file_id',
      'revision',
      'status',
      'sheet_count',
      'job_id',
      'issued_at',
      'created_at',
      'updated_at',
    ],
    noun: 'drawing',
    relations: {
      file: { column: 'file_id', kind: 'file' },
      project: { column: 'project_id', kind: 'project' },
      job: { column: 'job_id', kind: 'job' },
    },
    toApi: (r) => ({
      id: r.id,
      project_id: r.project_id,
      name: r.name,
      file_id: r.file_id,
      revision: str(r.revision),
      status: r.status,
      sheet_count: r.sheet_count,
      job_id: str(r.job_id),
      issued_at: str(r.issued_at),
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  sheet: {
    kind: 'sheet',
    table: 'sheets',
    columns: [
      'id',
      'drawing_id',
      'project_id',
      'page_index',
      'sheet_number',
      'title',
      'discipline',
      'revision',
      'image_key',
      'thumbnail_key',
      'width',
      'height',
      'dpi',
      'text_source',
      'created_at',
      'updated_at',
    ],
    noun: 'sheet',
    relations: {
      drawing: { column: 'drawing_id', kind: 'drawing' },
      project: { column: 'project_id', kind: 'project' },
    },
    toApi: (r, ctx) => ({
      id: r.id,
      drawing_id: r.drawing_id,
      project_id: r.project_id,
      index: r.page_index,
      sheet_number: str(r.sheet_number),
      title: str(r.title),
      discipline: r.discipline,
      revision: str(r.revision),
      uri: ctx.signedUrl(r.image_key as string | null),
      thumbnail_uri: ctx.signedUrl(r.thumbnail_key as string | null),
      width: r.width,
      height: r.height,
      dpi: r.dpi,
      text_source: r.text_source,
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  block: {
    kind: 'block',
    table: 'blocks',
    columns: [
      'id',
      'sheet_id',
      'drawing_id',
      'project_id',
      'type',
      'image_key',
      'description',
      'bbox',
      'identifier',
      'title',
      'scale',
      'created_at',
      'updated_at',
    ],
    noun: 'block',
    relations: {
      sheet: { column: 'sheet_id', kind: 'sheet' },
      drawing: { column: 'drawing_id', kind: 'drawing' },
      project: { column: 'project_id', kind: 'project' },
    },
    toApi: (r, ctx) => ({
      id: r.id,
      sheet_id: r.sheet_id,
      drawing_id: r.drawing_id,
      project_id: r.project_id,
      type: r.type,
      uri: ctx.signedUrl(r.image_key as string | null),
      description: str(r.description),
      bbox: json(r.bbox),
      identifier: str(r.identifier),
      title: str(r.title),
      scale: str(r.scale),
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  overlay: {
    kind: 'overlay',
    table: 'overlays',
    columns: [
      'id',
      'project_id',
      'job_id',
      'block_a_id',
      'block_b_id',
      'score',
      'images',
      'width',
      'height',
      'transform',
      'alignment',
      'stats',
      'has_changes',
      'change_count',
      'created_at',
      'updated_at',
    ],
    noun: 'overlay',
    relations: {
      block_a: { column: 'block_a_id', kind: 'block' },
      block_b: { column: 'block_b_id', kind: 'block' },
      job: { column: 'job_id', kind: 'job' },
      project: { column: 'project_id', kind: 'project' },
    },
    toApi: (r, ctx) => {
      const images = (json(r.images) ?? {}) as Record<string, string | undefined>;
      return {
        id: r.id,
        project_id: r.project_id,
        job_id: str(r.job_id),
        block_a_id: r.block_a_id,
        block_b_id: r.block_b_id,
        score: r.score ?? null,
        uri: ctx.signedUrl(images.combined),
        addition_uri: ctx.signedUrl(images.addition),
        deletion_uri: ctx.signedUrl(images.deletion),
        aligned_b_uri: ctx.signedUrl(images.aligned_b),
        width: r.width ?? null,
        height: r.height ?? null,
        transform: json(r.transform),
        alignment: json(r.alignment),
        stats: json(r.stats),
        has_changes: r.has_changes === 1,
        change_count: r.change_count,
        created_at: r.created_at,
        updated_at: r.updated_at,
      };
    },
  },
  change: {
    kind: 'change',
    table: 'changes',
    columns: [
      'id',
      'overlay_id',
      'project_id',
      'bbox',
      'kind',
      'category',
      'area_px',
      'confidence',
      'text_before',
      'text_after',
      'description',
      'review_status',
      'note',
      'created_at',
      'updated_at',
    ],
    noun: 'change',
    relations: {
      overlay: { column: 'overlay_id', kind: 'overlay' },
      project: { column: 'project_id', kind: 'project' },
    },
    toApi: (r) => ({
      id: r.id,
      overlay_id: r.overlay_id,
      project_id: r.project_id,
      bbox: json(r.bbox),
      kind: r.kind,
      category: r.category,
      area_px: r.area_px,
      confidence: r.confidence,
      text_before: str(r.text_before),
      text_after: str(r.text_after),
      description: str(r.description),
      review_status: r.review_status,
      note: str(r.note),
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  symbol: {
    kind: 'symbol',
    table: 'symbols',
    columns: [
      'id',
      'project_id',
      'job_id',
      'sheet_id',
      'block_id',
      'label',
      'bbox',
      'confidence',
      'rotation',
      'created_at',
      'updated_at',
    ],
    noun: 'symbol',
    relations: {
      sheet: { column: 'sheet_id', kind: 'sheet' },
      block: { column: 'block_id', kind: 'block' },
      job: { column: 'job_id', kind: 'job' },
      project: { column: 'project_id', kind: 'project' },
    },
    toApi: (r) => ({
      id: r.id,
      project_id: r.project_id,
      job_id: str(r.job_id),
      sheet_id: r.sheet_id,
      block_id: str(r.block_id),
      label: r.label,
      bbox: json(r.bbox),
      confidence: r.confidence,
      rotation: r.rotation,
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  job: {
    kind: 'job',
    table: 'jobs',
    columns: [
      'id',
      'project_id',
      'type',
      'status',
      'target_type',
      'target_id',
      'parent_id',
      'progress_completed',
      'progress_total',
      'result',
      'error',
      'credits_charged',
      'created_at',
      'updated_at',
      'started_at',
      'finished_at',
    ],
    noun: 'job',
    relations: {
      parent: { column: 'parent_id', kind: 'job' },
      project: { column: 'project_id', kind: 'project' },
    },
    toApi: (r) => ({
      id: r.id,
      project_id: str(r.project_id),
      type: r.type,
      status: r.status,
      target_type: r.target_type,
      target_id: r.target_id,
      parent_id: str(r.parent_id),
      progress: { completed: r.progress_completed, total: r.progress_total },
      result: json(r.result),
      error: json(r.error),
      credits_charged: r.credits_charged,
      created_at: r.created_at,
      updated_at: r.updated_at,
      started_at: str(r.started_at),
      finished_at: str(r.finished_at),
    }),
  },
  // Credit ledger entries (contract §7): grants (+) and charges (−) of the organization's credits.
  ledger: {
    kind: 'ledger',
    table: 'credit_ledger',
    columns: ['id', 'amount', 'reason', 'job_id', 'created_at'],
    noun: 'ledger entry',
    relations: { job: { column: 'job_id', kind: 'job' } },
    toApi: (r) => ({
      id: r.id,
      amount: r.amount,
      reason: r.reason,
      job_id: str(r.job_id),
      created_at: r.created_at,
    }),
  },
  // The signing secret is never part of the API object: it is shown once, by POST /webhooks.
  webhook: {
    kind: 'webhook',
    table: 'webhooks',
    columns: ['id', 'url', 'events', 'created_at', 'updated_at'],
    noun: 'webhook',
    relations: {},
    toApi: (r) => ({
      id: r.id,
      url: r.url,
      events: json(r.events),
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
  webhook_delivery: {
    kind: 'webhook_delivery',
    table: 'webhook_deliveries',
    columns: [
      'id',
      'webhook_id',
      'event_id',
      'type',
      'status',
      'attempts',
      'last_status_code',
      'last_error',
      'next_attempt_at',
      'delivered_at',
      'created_at',
      'updated_at',
    ],
    noun: 'webhook delivery',
    relations: { webhook: { column: 'webhook_id', kind: 'webhook' } },
    toApi: (r) => ({
      id: r.id,
      webhook_id: r.webhook_id,
      event_id: r.event_id,
      type: r.type,
      status: r.status,
      attempt: r.attempts,
      status_code: r.last_status_code ?? null,
      error: str(r.last_error),
      next_attempt_at: str(r.next_attempt_at),
      delivered_at: str(r.delivered_at),
      created_at: r.created_at,
      updated_at: r.updated_at,
    }),
  },
};
