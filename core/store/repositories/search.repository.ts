import type { Db } from '../db';

// Full-text queries behind POST /projects/{id}/search and /ask (contract §7). Five sources: sheet
// numbers/titles, block titles, change descriptions, symbol labels (migration 005) and sheet text
// runs (`search_index`, migration 002, written by processing). Every query is scoped to one
// organization and project and takes a match expression that the search service built from user
// text (never the raw text), written for both engines (`SearchMatch`).
//
// SQLite: each source is an FTS5 index (external content kept current by triggers, except
// `search_index`, which is the FTS5 table itself); `r` is bm25() — lower is better (negative).
// PostgreSQL: each source's table has a generated `tsvector` column with a GIN index (migrations
// 2, 5, 13: accents folded, letters and digits only, as FTS5's unicode61 tokenizer cuts text); the
// match is a tsquery and `r` is minus ts_rank() with the same column weights, so lower is better
// there too. The two rank differently inside a result; which records match is the same (the
// search parity test compares the result sets of both engines).

export interface SearchScope {
  organizationId: string;
  projectId: string;
  drawingId: string | null;
  discipline: string | null;
}

/** One match expression in each engine's syntax: FTS5 MATCH text and PostgreSQL tsquery text. */
export interface SearchMatch {
  fts5: string;
  tsquery: string;
}

export interface SheetHitRow {
  id: string;
  sheet_number: string | null;
  title: string | null;
  drawing_id: string;
  r: number;
}

export interface BlockHitRow {
  id: string;
  title: string | null;
  type: string;
  bbox: string;
  sheet_id: string;
  sheet_number: string | null;
  drawing_id: string;
  r: number;
}

export interface TextHitRow {
  rid: number;
  text: string;
  /** 'text': a run of the drawing's text; 'markup': a PDF markup annotation's text. */
  kind: 'text' | 'markup';
  bbox: string | null;
  sheet_id: string;
  sheet_number: string | null;
  drawing_id: string;
  r: number;
}

export interface ChangeHitRow {
  id: string;
  overlay_id: string;
  description: string | null;
  text_before: string | null;
  text_after: string | null;
  note: string | null;
  kind: string;
  category: string;
  bbox: string;
  /** Block A's box on its sheet: the overlay frame is block A's crop (sheet pixels). */
  block_bbox: string;
  sheet_id: string;
  sheet_number: string | null;
  drawing_id: string;
  r: number;
}

export interface SymbolHitRow {
  id: string;
  label: string;
  bbox: string;
  confidence: number;
  sheet_id: string;
  sheet_number: string | null;
  drawing_id: string;
  r: number;
}

// `(CAST(? AS TEXT) IS NULL OR col = ?)` keeps one prepared statement per source whatever filters
// are given (the CAST tells PostgreSQL the type of a parameter it would otherwise see only in `IS NULL`).
const SHEET_FILTER =
  's.project_id = @project AND s.organization_id = @org AND (CAST(@drawing AS TEXT) IS NULL OR s.drawing_id = @drawing) AND (CAST(@discipline AS TEXT) IS NULL OR s.discipline = @discipline)';

const params = (scope: SearchScope, match: string, limit: number) => ({
  match,
  project: scope.projectId,
  org: scope.organizationId,
  drawing: scope.drawingId,
  discipline: scope.discipline,
  limit,
});

/**
 * Above this many matches in an index, a source is not ranked: scoring tens of thousands of
 * near-identical runs ("1", "x") costs hundreds of milliseconds and tells little. Such a query
 * returns the newest matching records instead (the latest processed drawings), with the rank
 * computed only for the rows returned. Checking is cheap: it walks at most CAP index entries.
 */
export const RANK_CAP = 1000;

/** One source's query on one engine: `select` ends with its WHERE clause (match and filters). */
interface SourceSql {
  select: string;
  /** ORDER BY of a ranked result (by `r`, then id). */
  ranked: string;
  /** ORDER BY of a broad query's result: the newest records first. */
  recent: string;
  /** Counts matches (for the cap): a query with one `?`, the match expression. */
  broad: string;
}

async function rankedOrRecent<T>(
  db: Db,
  sources: { sqlite: SourceSql; postgres: SourceSql },
  match: SearchMatch,
  p: ReturnType<typeof params>,
): Promise<T[]> {
  const src = sources[db.dialect];
  const expr = db.dialect === 'postgres' ? match.tsquery : match.fts5;
  const broad = (await db.prepare(src.broad).get(expr)) !== undefined;
  return (await db
    .prepare(`${src.select} ORDER BY ${broad ? src.recent : src.ranked} LIMIT @limit`)
    .all({ ...p, match: expr })) as T[];
}

const ftsBroad = (fts: string) =>
  `SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? LIMIT 1 OFFSET ${RANK_CAP}`;
const pgBroad = (table: string, tsv: string) =>
  `SELECT 1 AS hit FROM ${table} WHERE ${tsv} @@ bl_tsquery(?) LIMIT 1 OFFSET ${RANK_CAP}`;

/**
 * ts_rank over columns weighted as bm25's weights are on SQLite: `columns` are [expression,
 * weight], at most four, the weights relative (the heaviest column gets PostgreSQL's weight A).
 */
function pgRank(columns: [string, number][]): string {
  if (columns.length === 1) return `-ts_rank(bl_tsv(${columns[0]![0]}), bl_tsquery(@match))`;
  const max = Math.max(...columns.map((c) => c[1]));
  const letters = ['A', 'B', 'C', 'D'] as const;
  // ts_rank's weights array is {D, C, B, A}.
  const weights = [1, 1, 1, 1];
  const parts = columns.map(([expr, w], i) => {
    weights[3 - i] = w / max;
    return `setweight(bl_tsv(${expr}), '${letters[i]}')`;
  });
  return `-ts_rank('{${weights.join(',')}}'::float4[], ${parts.join(' || ')}, bl_tsquery(@match))`;
}

export async function searchSheets(
  db: Db,
  scope: SearchScope,
  match: SearchMatch,
  limit: number,
): Promise<SheetHitRow[]> {
  // The number column weighs more than the title: "S101" should rank the sheet S101 first.
  const cols = 's.id, s.sheet_number, s.title, s.drawing_id';
  return await rankedOrRecent<SheetHitRow>(
    db,
    {
      sqlite: {
        select: `SELECT ${cols}, bm25(sheet_search, 4.0, 1.0) AS r
          FROM sheet_search JOIN sheets s ON s.rowid = sheet_search.rowid
          WHERE sheet_search MATCH @match AND ${SHEET_FILTER}`,
        ranked: 'r, s.id',
        recent: 'sheet_search.rowid DESC',
        broad: ftsBroad('sheet_search'),
      },
      postgres: {
        select: `SELECT ${cols}, ${pgRank([
          ['s.sheet_number', 4],
          ['s.title', 1],
        ])} AS r
          FROM sheets s WHERE s.search_tsv @@ bl_tsquery(@match) AND ${SHEET_FILTER}`,
        ranked: 'r, s.id',
        recent: 's.created_at DESC, s.id DESC',
        broad: pgBroad('sheets', 'search_tsv'),
      },
    },
    match,
    params(scope, '', limit),
  );
}

/**
 * View titles and types. Sheet blocks are left out: the whole page is the sheet, found by the sheet's
 * number, title and text; its block would answer "sheet" (its type) for every sheet of the project.
 */
export async function searchBlocks(
  db: Db,
  scope: SearchScope,
  match: SearchMatch,
  limit: number,
): Promise<BlockHitRow[]> {
  const cols = 'b.id, b.title, b.type, b.bbox, s.id AS sheet_id, s.sheet_number, s.drawing_id';
  return await rankedOrRecent<BlockHitRow>(
    db,
    {
      sqlite: {
        select: `SELECT ${cols}, bm25(block_search, 2.0, 1.0) AS r
          FROM block_search JOIN blocks b ON b.rowid = block_search.rowid JOIN sheets s ON s.id = b.sheet_id
          WHERE block_search MATCH @match AND b.type <> 'Sheet' AND ${SHEET_FILTER}`,
        ranked: 'r, b.id',
        recent: 'block_search.rowid DESC',
        broad: ftsBroad('block_search'),
      },
      postgres: {
        select: `SELECT ${cols}, ${pgRank([
          ['b.title', 2],
          ['b.type', 1],
        ])} AS r
          FROM blocks b JOIN sheets s ON s.id = b.sheet_id
          WHERE b.search_tsv @@ bl_tsquery(@match) AND b.type <> 'Sheet' AND ${SHEET_FILTER}`,
        ranked: 'r, b.id',
        recent: 'b.created_at DESC, b.id DESC',
        broad: pgBroad('blocks', 'search_tsv'),
      },
    },
    match,
    params(scope, '', limit),
  );
}

export async function searchText(
  db: Db,
  scope: SearchScope,
  match: SearchMatch,
  limit: number,
): Promise<TextHitRow[]> {
  const cols =
    'i.rowid AS rid, i.text, i.kind, i.bbox, s.id AS sheet_id, s.sheet_number, s.drawing_id';
  const where = `i.kind IN ('text', 'markup') AND i.project_id = @project AND i.organization_id = @org AND ${SHEET_FILTER}`;
  return await rankedOrRecent<TextHitRow>(
    db,
    {
      sqlite: {
        select: `SELECT ${cols}, bm25(search_index) AS r
          FROM search_index i JOIN sheets s ON s.id = i.sheet_id
          WHERE search_index MATCH @match AND ${where}`,
        ranked: 'r, i.rowid',
        recent: 'i.rowid DESC',
        broad: ftsBroad('search_index'),
      },
      postgres: {
        select: `SELECT ${cols}, -ts_rank(i.tsv, bl_tsquery(@match)) AS r
          FROM search_index i JOIN sheets s ON s.id = i.sheet_id
          WHERE i.tsv @@ bl_tsquery(@match) AND ${where}`,
        ranked: 'r, i.rowid',
        recent: 'i.rowid DESC',
        broad: pgBroad('search_index', 'tsv'),
      },
    },
    match,
    params(scope, '', limit),
  );
}

export async function searchChanges(
  db: Db,
  scope: SearchScope,
  match: SearchMatch,
  limit: number,
): Promise<ChangeHitRow[]> {
  // A change belongs to a pair of drawings; the drawing filter accepts either side. Its sheet and
  // box are block A's (the overlay's frame), so the box can be drawn on that sheet.
  const cols = `c.id, c.overlay_id, c.description, c.text_before, c.text_after, c.note, c.kind, c.category, c.bbox,
            ba.bbox AS block_bbox, s.id AS sheet_id, s.sheet_number, s.drawing_id`;
  const joins = `JOIN overlays o ON o.id = c.overlay_id
       JOIN blocks ba ON ba.id = o.block_a_id JOIN blocks bb ON bb.id = o.block_b_id
       JOIN sheets s ON s.id = ba.sheet_id`;
  const where = `c.project_id = @project AND c.organization_id = @org
       AND (CAST(@drawing AS TEXT) IS NULL OR ba.drawing_id = @drawing OR bb.drawing_id = @drawing)
       AND (CAST(@discipline AS TEXT) IS NULL OR s.discipline = @discipline)`;
  return await rankedOrRecent<ChangeHitRow>(
    db,
    {
      sqlite: {
        select: `SELECT ${cols}, bm25(change_search, 2.0, 1.0, 1.0, 1.0) AS r
          FROM change_search JOIN changes c ON c.rowid = change_search.rowid ${joins}
          WHERE change_search MATCH @match AND ${where}`,
        ranked: 'r, c.id',
        recent: 'change_search.rowid DESC',
        broad: ftsBroad('change_search'),
      },
      postgres: {
        select: `SELECT ${cols}, ${pgRank([
          ['c.description', 2],
          ['c.text_before', 1],
          ['c.text_after', 1],
          ['c.note', 1],
        ])} AS r
          FROM changes c ${joins}
          WHERE c.search_tsv @@ bl_tsquery(@match) AND ${where}`,
        ranked: 'r, c.id',
        recent: 'c.created_at DESC, c.id DESC',
        broad: pgBroad('changes', 'search_tsv'),
      },
    },
    match,
    params(scope, '', limit),
  );
}

export async function searchSymbols(
  db: Db,
  scope: SearchScope,
  match: SearchMatch,
  limit: number,
): Promise<SymbolHitRow[]> {
  const cols =
    'y.id, y.label, y.bbox, y.confidence, s.id AS sheet_id, s.sheet_number, s.drawing_id';
  const where = `y.project_id = @project AND y.organization_id = @org AND ${SHEET_FILTER}`;
  return await rankedOrRecent<SymbolHitRow>(
    db,
    {
      sqlite: {
        select: `SELECT ${cols}, bm25(symbol_search) AS r
          FROM symbol_search JOIN symbols y ON y.rowid = symbol_search.rowid JOIN sheets s ON s.id = y.sheet_id
          WHERE symbol_search MATCH @match AND ${where}`,
        ranked: 'r, y.id',
        recent: 'symbol_search.rowid DESC',
        broad: ftsBroad('symbol_search'),
      },
      postgres: {
        select: `SELECT ${cols}, -ts_rank(y.search_tsv, bl_tsquery(@match)) AS r
          FROM symbols y JOIN sheets s ON s.id = y.sheet_id
          WHERE y.search_tsv @@ bl_tsquery(@match) AND ${where}`,
        ranked: 'r, y.id',
        recent: 'y.created_at DESC, y.id DESC',
        broad: pgBroad('symbols', 'search_tsv'),
      },
    },
    match,
    params(scope, '', limit),
  );
}

/**
 * Re-reads every external-content index from its table. Needed only after something renumbers
 * rowids (a VACUUM); cheap enough to run at any time. PostgreSQL's indexes are generated columns
 * of the rows themselves: nothing to rebuild.
 */
export async function rebuildRecordSearch(db: Db): Promise<void> {
  if (db.dialect === 'postgres') return;
  for (const t of ['sheet_search', 'block_search', 'change_search', 'symbol_search'])
    await db.exec(`INSERT INTO ${t} (${t}) VALUES ('rebuild')`);
}

/**
 * Checks the search indexes against their tables: FTS5's own integrity check on SQLite; on
 * PostgreSQL, that every generated tsvector equals the one its row's text gives now. Throws when
 * an index disagrees with its records.
 */
export async function checkSearchIndexes(db: Db): Promise<void> {
  if (db.dialect === 'sqlite') {
    for (const t of ['sheet_search', 'block_search', 'change_search', 'symbol_search'])
      await db.exec(`INSERT INTO ${t} (${t}, rank) VALUES ('integrity-check', 1)`);
    return;
  }
  const checks: [string, string, string][] = [
    ['sheets', 'search_tsv', 'bl_tsv_columns(sheet_number, title)'],
    ['blocks', 'search_tsv', 'bl_tsv_columns(title, type)'],
    ['changes', 'search_tsv', 'bl_tsv_columns(description, text_before, text_after, note)'],
    ['symbols', 'search_tsv', 'bl_tsv(label)'],
    ['search_index', 'tsv', 'bl_tsv(text)'],
  ];
  for (const [table, col, text] of checks) {
    const bad = (await db
      .prepare(`SELECT count(*) AS n FROM ${table} WHERE ${col} IS DISTINCT FROM ${text}`)
      .get()) as { n: number };
    if (bad.n > 0) throw new Error(`${bad.n} rows of ${table} have a stale ${col}.`);
  }
}

// ── Reads for /ask: the project's records by what a question names ──────────────────────────────

export interface DrawingRow {
  id: string;
  name: string;
  revision: string | null;
  status: string;
  issued_at: string | null;
  created_at: string;
}

export async function projectDrawings(
  db: Db,
  organizationId: string,
  projectId: string,
): Promise<DrawingRow[]> {
  return (await db
    .prepare(
      'SELECT id, name, revision, status, issued_at, created_at FROM drawings WHERE organization_id = ? AND project_id = ? ORDER BY created_at, id',
    )
    .all(organizationId, projectId)) as DrawingRow[];
}

export interface SheetRow {
  id: string;
  drawing_id: string;
  sheet_number: string | null;
  title: string | null;
  page_index: number;
  created_at: string;
}

export async function projectSheets(
  db: Db,
  organizationId: string,
  projectId: string,
): Promise<SheetRow[]> {
  return (await db
    .prepare(
      'SELECT id, drawing_id, sheet_number, title, page_index, created_at FROM sheets WHERE organization_id = ? AND project_id = ? ORDER BY created_at, id',
    )
    .all(organizationId, projectId)) as SheetRow[];
}

export interface OverlayPairRow {
  id: string;
  job_id: string | null;
  score: number | null;
  stats: string | null;
  has_changes: number;
  change_count: number;
  created_at: string;
  block_a_id: string;
  block_b_id: string;
  sheet_a_id: string;
  sheet_b_id: string;
  drawing_a_id: string;
  drawing_b_id: string;
  /** Type of block A: 'Sheet' for a whole-sheet overlay. */
  block_a_type: string;
  /** The overlay's alignment (JSON): `low_confidence` when it is not trusted. */
  alignment: string | null;
  /** Change regions that are not noise (only meaningful when has_changes = 1). */
  real_changes: number;
}

const OVERLAY_PAIRS = `SELECT o.id, o.job_id, o.score, o.stats, o.alignment, o.has_changes, o.change_count, o.created_at, o.block_a_id, o.block_b_id,
    ba.sheet_id AS sheet_a_id, bb.sheet_id AS sheet_b_id, ba.drawing_id AS drawing_a_id, bb.drawing_id AS drawing_b_id, ba.type AS block_a_type,
    (SELECT count(*) FROM changes c WHERE c.overlay_id = o.id AND c.category <> 'noise') AS real_changes
  FROM overlays o JOIN blocks ba ON ba.id = o.block_a_id JOIN blocks bb ON bb.id = o.block_b_id`;

/** Overlays comparing drawing `x` with drawing `y` (either side), oldest first. */
export async function overlaysBetweenDrawings(
  db: Db,
  organizationId: string,
  x: string,
  y: string,
): Promise<OverlayPairRow[]> {
  return (await db
    .prepare(
      `${OVERLAY_PAIRS} WHERE o.organization_id = ?
       AND ((ba.drawing_id = ? AND bb.drawing_id = ?) OR (ba.drawing_id = ? AND bb.drawing_id = ?))
     ORDER BY o.created_at, o.id`,
    )
    .all(organizationId, x, y, y, x)) as OverlayPairRow[];
}

/** Overlays that involve any of the given sheets (either side), oldest first. */
export async function overlaysOfSheets(
  db: Db,
  organizationId: string,
  sheetIds: string[],
): Promise<OverlayPairRow[]> {
  if (sheetIds.length === 0) return [];
  const marks = sheetIds.map(() => '?').join(',');
  // The number of marks varies with the question; prepared() caches one statement per count.
  return (await db
    .prepare(
      `${OVERLAY_PAIRS} WHERE o.organization_id = ? AND (ba.sheet_id IN (${marks}) OR bb.sheet_id IN (${marks}))
     ORDER BY o.created_at, o.id`,
    )
    .all(organizationId, ...sheetIds, ...sheetIds)) as OverlayPairRow[];
}

export interface ChangeRow {
  id: string;
  overlay_id: string;
  kind: string;
  category: string;
  description: string | null;
  text_before: string | null;
  text_after: string | null;
  review_status: string;
  bbox: string;
}

export async function changesOfOverlays(
  db: Db,
  organizationId: string,
  overlayIds: string[],
): Promise<ChangeRow[]> {
  const out: ChangeRow[] = [];
  for (let i = 0; i < overlayIds.length; i += 200) {
    const chunk = overlayIds.slice(i, i + 200);
    out.push(
      ...((await db
        .prepare(
          `SELECT id, overlay_id, kind, category, description, text_before, text_after, review_status, bbox FROM changes
         WHERE organization_id = ? AND overlay_id IN (${chunk.map(() => '?').join(',')}) ORDER BY area_px DESC, id`,
        )
        .all(organizationId, ...chunk)) as ChangeRow[]),
    );
  }
  return out;
}

export interface SymbolCountRow {
  sheet_id: string;
  label: string;
  n: number;
  ids: string;
}

/** Symbol instances per sheet for labels equal (case-insensitively) to one of `labels`. */
export async function symbolCounts(
  db: Db,
  organizationId: string,
  projectId: string,
  labels: string[],
): Promise<SymbolCountRow[]> {
  if (labels.length === 0) return [];
  return (await db
    .prepare(
      `SELECT sheet_id, label, count(*) AS n, ${db.dialect === 'postgres' ? "string_agg(id, ',')" : 'group_concat(id)'} AS ids FROM symbols
     WHERE organization_id = ? AND project_id = ? AND lower(label) IN (${labels.map(() => '?').join(',')})
     GROUP BY sheet_id, label ORDER BY n DESC, sheet_id`,
    )
    .all(organizationId, projectId, ...labels.map((l) => l.toLowerCase()))) as SymbolCountRow[];
}

export async function projectSymbolLabels(
  db: Db,
  organizationId: string,
  projectId: string,
): Promise<string[]> {
  return (
    (await db
      .prepare(
        'SELECT DISTINCT label FROM symbols WHERE organization_id = ? AND project_id = ? ORDER BY label',
      )
      .all(organizationId, projectId)) as {
      label: string;
    }[]
  ).map((r) => r.label);
}
