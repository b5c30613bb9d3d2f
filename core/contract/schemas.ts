// Request and response schemas of the HTTP API (contract §4). The same TypeBox objects validate
// requests (Fastify/Ajv) and generate /v1/openapi.json; `Static<>` gives the TypeScript types the
// renderer imports (types only).
//
// Response schemas with an `$id` are OpenAPI components: other response schemas point at them with
// `Ref()` (a `$ref` into `#/components/schemas/`), never by nesting them, so each one appears once
// in the document under its own name. Request bodies never use `Ref()`: Fastify validates them
// without the component table.
import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox';

const Nullable = <T extends TSchema>(t: T, options: { description?: string } = {}) =>
  Type.Union([t, Type.Null()], options);
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601, UTC' });
// `<prefix>_<ULID>` for new ids; ids stored before ULIDs have 20 lowercase characters. The body
// pattern is domain/ids.ts's ID_BODY_SOURCE (contract/ imports nothing of core; ids.test.ts checks
// the two agree).
export const ID_BODY_PATTERN = '[0-9A-Za-z]{1,64}';

/** The pattern of `prefix`'s ids (new ULID ids and the older 20-character ones). */
export const idPattern = (prefix: string) => `^${prefix}_${ID_BODY_PATTERN}$`;
export const Id = (prefix: string, description = `${prefix}_ id`) =>
  Type.String({ pattern: idPattern(prefix), description });

/** Where `Ref()` keeps the component it points at (the OpenAPI generator collects them). */
export const COMPONENT = Symbol.for('blueline.openapi.component');

/** A `$ref` to the component `schema` (which must have an `$id`); typed as the component. */
export function Ref<T extends TSchema>(
  schema: T,
  options: { description?: string } = {},
): TUnsafe<Static<T>> {
  if (!schema.$id) throw new TypeError('Ref() needs a schema with an $id');
  return Object.assign(
    Type.Unsafe<Static<T>>({ $ref: `#/components/schemas/${schema.$id}`, ...options }),
    { [COMPONENT]: schema },
  );
}

/** `field` expanded with `?expand=field`: the referenced record, or null when it is gone. */
const Expanded = <T extends TSchema>(field: string, schema: T) =>
  Type.Optional(
    Nullable(Ref(schema), {
      description: `Present with ?expand=${field} (nested paths with dots, at most 3 levels): the ${field}_id record, null when it no longer exists`,
    }),
  );

export const BBox = Type.Object(
  { x: Type.Number(), y: Type.Number(), width: Type.Number(), height: Type.Number() },
  { $id: 'BBox', description: 'Box in pixels, origin top-left' },
);

export const Problem = Type.Object(
  {
    type: Type.String({
      description: '/problems/<code>, at the server root: GET it for an explanation',
    }),
    title: Type.String({ description: 'short, fixed per code' }),
    status: Type.Integer({ description: 'the HTTP status' }),
    detail: Type.String({ description: 'what was wrong with this request' }),
    instance: Type.Optional(
      Type.String({ description: 'the request path (a failed job: the job path)' }),
    ),
    code: Type.String({ description: 'stable machine code (contract §3)' }),
    request_id: Type.Optional(Type.String({ description: 'same as the X-Request-Id header' })),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          field: Type.String({
            description: 'JSON pointer into the body, or the query parameter name',
          }),
          code: Type.String(),
          message: Type.String(),
        }),
        { description: 'validation problems: one entry per field' },
      ),
    ),
  },
  {
    $id: 'Problem',
    additionalProperties: true,
    description: 'RFC 9457 Problem Details (Content-Type: application/problem+json)',
  },
);

export const ListMeta = Type.Object(
  {
    next: Nullable(Type.String(), {
      description: 'cursor of the next page (pass as ?cursor=); null on the last page',
    }),
    prev: Nullable(Type.String(), {
      description: 'cursor of the previous page; null on the first page',
    }),
    limit: Type.Integer({ minimum: 1, maximum: 100, description: 'the page size applied' }),
  },
  { $id: 'ListMeta' },
);

export const listOf = <T extends TSchema>(item: T) =>
  Type.Object({
    data: Type.Array(item.$id ? Ref(item) : item),
    _meta: Ref(ListMeta),
  });

export const Project = Type.Object(
  {
    id: Id('prj'),
    name: Type.String(),
    description: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'Project' },
);
export type Project = Static<typeof Project>;

export const ProjectCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  },
  { additionalProperties: false },
);
export const ProjectPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  },
  { additionalProperties: false },
);

export const FILE_CONTENT_TYPES = [
  'application/pdf',
  'image/png',
  'image/jpeg',
  'image/tiff',
] as const;

/** Types of the files the service writes itself (exports, contract §6); never accepted as uploads. */
export const GENERATED_FILE_CONTENT_TYPES = ['text/csv'] as const;

export const FileObject = Type.Object(
  {
    id: Id('fil'),
    project_id: Id('prj'),
    filename: Type.String(),
    content_type: Type.Union(
      [...FILE_CONTENT_TYPES, ...GENERATED_FILE_CONTENT_TYPES].map((t) => Type.Literal(t)),
    ),
    size_bytes: Nullable(Type.Integer()),
    sha256: Nullable(Type.String()),
    status: Type.Union([Type.Literal('pending'), Type.Literal('uploaded')]),
    uri: Nullable(Type.String({ description: 'Signed download URL (1 h), null while pending' })),
    created_at: Timestamp,
    updated_at: Timestamp,
    project: Expanded('project', Project),
  },
  { $id: 'File' },
);
export type FileObject = Static<typeof FileObject>;

export const FileCreate = Type.Object(
  {
    project_id: Id('prj'),
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    content_type: Type.Union(FILE_CONTENT_TYPES.map((t) => Type.Literal(t))),
    size_bytes: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

export const JOB_STATUSES = ['Queued', 'Started', 'Completed', 'Failed', 'Canceled'] as const;
export const JOB_TYPES = ['process', 'compare', 'analyze', 'parse', 'export'] as const;
export const TARGET_TYPES = ['drawing', 'sheet', 'block', 'overlay'] as const;

export const Job = Type.Object(
  {
    id: Id('job'),
    project_id: Nullable(Id('prj')),
    type: Type.String({ description: `one of ${JOB_TYPES.join(', ')}` }),
    status: Type.Union(JOB_STATUSES.map((s) => Type.Literal(s))),
    target_type: Type.Union(TARGET_TYPES.map((s) => Type.Literal(s))),
    target_id: Type.String({ description: 'id of the target record (drw_, sht_, blk_ or ovl_)' }),
    parent_id: Nullable(Id('job')),
    progress: Type.Object({ completed: Type.Integer(), total: Type.Integer() }),
    result: Type.Unknown({ description: 'per job type (contract §4, §6, §7); null until it ends' }),
    error: Nullable(Ref(Problem), { description: 'why it failed (Failed only)' }),
    credits_charged: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: Nullable(Timestamp),
    finished_at: Nullable(Timestamp),
    parent: Type.Optional(
      Nullable(Type.Unsafe<unknown>({ $ref: '#/components/schemas/Job' }), {
        description: 'Present with ?expand=parent: the parent job, null for a top-level job',
      }),
    ),
    project: Expanded('project', Project),
  },
  { $id: 'Job' },
);
export type Job = Static<typeof Job>;

export const DRAWING_STATUSES = ['Processing', 'Ready', 'Failed'] as const;

/** A calendar day, `YYYY-MM-DD` (RFC 3339 full-date): an issue date has no time or time zone. */
const IssueDate = () => Type.String({ format: 'date' });
// Descriptions of nullable fields go on the union, where the document's readers (the reference,
// generated client types) show them, not on its non-null branch.

const REVISION_DESCRIPTION =
  'Free label such as "Rev B" or "Addendum 2". Set by a person (POST or PATCH), else read from the ' +
  "title blocks once processed: the label of the sheets that carry the set's issue date (the most " +
  'frequent among them). A person’s value, null included, is never replaced by processing.';

const ISSUED_AT_DESCRIPTION =
  'The issue date (YYYY-MM-DD), or null when none is known. Read when the drawing is processed: ' +
  "the latest date of the sheets' title blocks (DATE field or revision table), else a date in the " +
  "file name (e.g. 20130718_set.pdf, 2013-07-18 set.pdf, Set 18 Jul 2013.pdf), else the PDF's " +
  'creation date. A value set with PATCH (null included) wins and survives re-processing. Of two ' +
  'issues the one with the later date is the newer; same-day issues, or a pair where either date ' +
  'is unknown, keep their upload order (created_at).';

export const Drawing = Type.Object(
  {
    id: Id('drw'),
    project_id: Id('prj'),
    name: Type.String(),
    file_id: Id('fil'),
    revision: Nullable(Type.String(), { description: REVISION_DESCRIPTION }),
    status: Type.Union(DRAWING_STATUSES.map((s) => Type.Literal(s))),
    sheet_count: Type.Integer(),
    job_id: Nullable(Id('job', 'the processing job')),
    issued_at: Nullable(IssueDate(), { description: ISSUED_AT_DESCRIPTION }),
    created_at: Timestamp,
    updated_at: Timestamp,
    file: Expanded('file', FileObject),
    project: Expanded('project', Project),
    job: Expanded('job', Job),
  },
  { $id: 'Drawing' },
);
export type Drawing = Static<typeof Drawing>;

export const DrawingCreate = Type.Object(
  {
    project_id: Id('prj'),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    file_id: Id('fil'),
    revision: Type.Optional(
      Nullable(Type.String({ maxLength: 100 }), {
        description:
          'The revision label, kept as given (processing never replaces it); omitted or null: read from the title blocks when processed.',
      }),
    ),
  },
  { additionalProperties: false },
);
export const DrawingPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    revision: Type.Optional(
      Nullable(Type.String({ maxLength: 100 }), {
        description:
          'The revision label; null says the set has none. Either way processing no longer reads it from the title blocks.',
      }),
    ),
    issued_at: Type.Optional(
      Nullable(IssueDate(), {
        description:
          'The issue date, a real calendar day as YYYY-MM-DD (2013-07-18); null says the set has no known issue date. Either way it replaces the date read from the title blocks, file name or PDF, and re-processing keeps it.',
      }),
    ),
  },
  { additionalProperties: false },
);

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

export const Sheet = Type.Object(
  {
    id: Id('sht'),
    drawing_id: Id('drw'),
    project_id: Id('prj'),
    index: Type.Integer({ description: '0-based page' }),
    sheet_number: Nullable(Type.String()),
    title: Nullable(Type.String()),
    discipline: Type.Union(DISCIPLINES.map((d) => Type.Literal(d))),
    revision: Nullable(Type.String()),
    uri: Nullable(Type.String()),
    thumbnail_uri: Nullable(Type.String()),
    width: Type.Integer(),
    height: Type.Integer(),
    dpi: Type.Integer(),
    text_source: Type.Union([Type.Literal('vector'), Type.Literal('ocr'), Type.Literal('none')]),
    created_at: Timestamp,
    updated_at: Timestamp,
    drawing: Expanded('drawing', Drawing),
    project: Expanded('project', Project),
  },
  { $id: 'Sheet' },
);
export const SheetPatch = Type.Object(
  {
    sheet_number: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
    title: Type.Optional(Type.String({ maxLength: 300 })),
    discipline: Type.Optional(Type.Union(DISCIPLINES.map((d) => Type.Literal(d)))),
  },
  { additionalProperties: false },
);

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
export const Block = Type.Object(
  {
    id: Id('blk'),
    sheet_id: Id('sht'),
    drawing_id: Id('drw'),
    project_id: Id('prj'),
    type: Type.Union(BLOCK_TYPES.map((t) => Type.Literal(t))),
    uri: Nullable(Type.String()),
    description: Nullable(Type.String()),
    bbox: Ref(BBox, { description: 'in sheet pixels' }),
    identifier: Nullable(Type.String()),
    title: Nullable(Type.String()),
    scale: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    sheet: Expanded('sheet', Sheet),
    drawing: Expanded('drawing', Drawing),
    project: Expanded('project', Project),
  },
  { $id: 'Block' },
);
/** The types a person may give a view: `Sheet` is the whole page, one per sheet, never a view's. */
export const VIEW_BLOCK_TYPES = BLOCK_TYPES.filter((t) => t !== 'Sheet');
export const BlockPatch = Type.Object(
  {
    type: Type.Optional(Type.Union(VIEW_BLOCK_TYPES.map((t) => Type.Literal(t)))),
    title: Type.Optional(Nullable(Type.String({ maxLength: 300 }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  },
  { additionalProperties: false },
);

export const Overlay = Type.Object(
  {
    id: Id('ovl'),
    project_id: Id('prj'),
    job_id: Nullable(Id('job', 'the comparison job the client started')),
    block_a_id: Id('blk'),
    block_b_id: Id('blk'),
    score: Nullable(Type.Number({ minimum: 0, maximum: 1 })),
    uri: Nullable(Type.String()),
    addition_uri: Nullable(Type.String()),
    deletion_uri: Nullable(Type.String()),
    aligned_b_uri: Nullable(Type.String()),
    width: Nullable(Type.Integer()),
    height: Nullable(Type.Integer()),
    transform: Nullable(Type.Array(Type.Number(), { minItems: 6, maxItems: 6 })),
    alignment: Nullable(
      Type.Object({
        method: Type.String(),
        confidence: Type.Number(),
        residual_px: Type.Number(),
        low_confidence: Type.Optional(
          Type.Boolean({
            description:
              'Present and true when the alignment is not trustworthy (its confidence, which falls as the residual grows, is below 0.3): the overlay may not show real changes, and change detection seeks none on it, so an empty change list means "not known", not "no changes".',
          }),
        ),
        warning: Type.Optional(
          Type.String({ description: 'Why the alignment is not trusted, in words.' }),
        ),
      }),
    ),
    stats: Nullable(
      Type.Object({
        added_px: Type.Integer(),
        removed_px: Type.Integer(),
        unchanged_px: Type.Integer(),
        changed_fraction: Type.Number(),
      }),
    ),
    has_changes: Type.Boolean(),
    change_count: Type.Integer(),
    created_at: Timestamp,
    updated_at: Timestamp,
    block_a: Expanded('block_a', Block),
    block_b: Expanded('block_b', Block),
    job: Expanded('job', Job),
    project: Expanded('project', Project),
  },
  { $id: 'Overlay' },
);

export const CHANGE_KINDS = ['added', 'removed', 'modified', 'moved'] as const;
export const CHANGE_CATEGORIES = [
  'geometry',
  'text',
  'dimension',
  'annotation',
  'title_block',
  'fill',
  'style',
  'noise',
] as const;
export const REVIEW_STATUSES = ['open', 'accepted', 'rejected', 'flagged'] as const;
export const Change = Type.Object(
  {
    id: Id('chg'),
    overlay_id: Id('ovl'),
    project_id: Id('prj'),
    bbox: Ref(BBox, { description: 'in overlay pixels' }),
    kind: Type.Union(CHANGE_KINDS.map((k) => Type.Literal(k))),
    category: Type.Union(CHANGE_CATEGORIES.map((k) => Type.Literal(k))),
    area_px: Type.Integer(),
    confidence: Type.Number(),
    text_before: Nullable(Type.String(), {
      description:
        'The words in the region that only the older revision has (removed or replaced), in reading order; dimension strings as one word (10\'-8 1/4"). At most 200 characters, cut at a word with …; null when no word went',
    }),
    text_after: Nullable(Type.String(), {
      description:
        "The words in the region that only the newer revision has (added or replacing), read in the older one's frame through the alignment; at most 200 characters; null when no word came",
    }),
    description: Nullable(Type.String(), {
      description:
        "The change in a reviewer's words, e.g. Dimension 10'-8 1/4\" → 7'-3 1/2\", Tag W3 → W5, Added: ‘GLULAM COLUMN’ (with linework), Fill removed",
    }),
    review_status: Type.Union(REVIEW_STATUSES.map((k) => Type.Literal(k))),
    note: Nullable(Type.String()),
    created_at: Timestamp,
    updated_at: Timestamp,
    overlay: Expanded('overlay', Overlay),
    project: Expanded('project', Project),
  },
  { $id: 'Change' },
);
export const ChangePatch = Type.Object(
  {
    review_status: Type.Optional(Type.Union(REVIEW_STATUSES.map((k) => Type.Literal(k)))),
    note: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  },
  { additionalProperties: false },
);

export const SymbolInstance = Type.Object(
  {
    id: Id('sym'),
    project_id: Id('prj'),
    job_id: Nullable(Id('job', 'the parse job that found it')),
    sheet_id: Id('sht'),
    block_id: Nullable(Id('blk')),
    label: Type.String(),
    bbox: Ref(BBox, { description: 'in sheet pixels' }),
    confidence: Type.Number(),
    rotation: Type.Union([Type.Literal(0), Type.Literal(90), Type.Literal(180), Type.Literal(270)]),
    created_at: Timestamp,
    updated_at: Timestamp,
    sheet: Expanded('sheet', Sheet),
    block: Expanded('block', Block),
    job: Expanded('job', Job),
    project: Expanded('project', Project),
  },
  { $id: 'Symbol' },
);

export const JobAccepted = Type.Object(
  {
    job_id: Id('job'),
    status: Type.Union(
      JOB_STATUSES.map((s) => Type.Literal(s)),
      {
        description: 'Queued for a new job; a replay returns the original answer',
      },
    ),
  },
  { $id: 'JobAccepted', description: 'The job started; follow it at Location: /v1/jobs/<job_id>' },
);
