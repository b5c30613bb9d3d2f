import type { Migration } from './index';
import { sql as initial } from './001-initial.migration';
import { sql as compare } from './003-compare.migration';
import { sql as webhooks } from './004-webhooks.migration';
import { sql as symbolIndexes } from './006-symbol-indexes.migration';
import { sql as jobStalls } from './007-job-stalls.migration';
import { sql as drawingIssued } from './009-drawing-issued.migration';
import { sql as jobClaims } from './010-job-claims.migration';
import { sql as exportFiles } from './011-export-files.migration';
import { sql as jobDispatch, pgNotify } from './013-job-dispatch.migration';
import { sql as webhookClaims } from './015-webhook-claims.migration';
import { sql as attemptObjects } from './016-attempt-objects.migration';

// The PostgreSQL schema (team mode), numbered and named exactly as the SQLite migrations
// (index.ts), so one schema version means the same tables on both engines. Forward-only: append,
// never edit one that has shipped.
//
// Tables, columns and types are the same as SQLite's: ids and timestamps are text (ISO 8601 UTC
// with milliseconds, which sort as text), JSON is text, booleans are 0/1 integers. So every row
// reads back the same on both engines and the repositories convert nothing. Migrations that are
// plain DDL are SQLite's own text through `fromSqlite` (STRICT dropped, REAL and INTEGER widened
// to PostgreSQL's double precision and bigint). Full-text search is PostgreSQL's own: a generated
// `tsvector` column with a GIN index where SQLite has an FTS5 table (002, 005).

/** SQLite DDL (STRICT tables, REAL, INTEGER) as PostgreSQL DDL. Only for the migrations above. */
export function fromSqlite(sql: string): string {
  return sql
    .replace(/\)\s*STRICT\s*;/g, ');')
    .replace(/\bREAL\b/g, 'DOUBLE PRECISION')
    .replace(/\bINTEGER\b/g, 'BIGINT');
}

/**
 * `bl_search_text(t)`: the text a search index holds — accents removed (FTS5's
 * `remove_diacritics 2`) and `- _ / .` turned into spaces, so the sheet number `A-601` is the
 * words `a` and `601` (PostgreSQL's parser would read `-601` as one negative number, and `601`
 * would not find it; FTS5's unicode61 splits there too). IMMUTABLE so generated columns can use
 * it: `unaccent` with its dictionary named is.
 */
const searchText = /* sql */ `
CREATE EXTENSION IF NOT EXISTS unaccent;
CREATE OR REPLACE FUNCTION bl_search_text(t text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT regexp_replace(unaccent('unaccent'::regdictionary, coalesce(t, '')), '[-_/.]', ' ', 'g') $$;
CREATE OR REPLACE FUNCTION bl_tsv(t text) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT to_tsvector('simple'::regconfig, bl_search_text(t)) $$;
`;

/** Migration 002: the sheet text runs (SQLite: an FTS5 table whose rowid the search reads). */
const searchIndex = /* sql */ `
${searchText}
CREATE TABLE search_index (
  rowid BIGSERIAL PRIMARY KEY,
  text TEXT NOT NULL,
  kind TEXT,
  ref_id TEXT,
  sheet_id TEXT,
  drawing_id TEXT,
  project_id TEXT,
  organization_id TEXT,
  bbox TEXT,
  tsv tsvector GENERATED ALWAYS AS (bl_tsv(text)) STORED
);
CREATE INDEX search_index_tsv ON search_index USING GIN (tsv);
CREATE INDEX search_index_sheet ON search_index(sheet_id);
CREATE INDEX search_index_drawing ON search_index(drawing_id);
CREATE INDEX search_index_project ON search_index(project_id);
`;

/** Migration 005: searchable columns of sheets, blocks, changes and symbols. */
const tsvColumn = (table: string, columns: string[]) => /* sql */ `
ALTER TABLE ${table} ADD COLUMN search_tsv tsvector
  GENERATED ALWAYS AS (bl_tsv(${columns.map((c) => `coalesce(${c}, '')`).join(` || ' ' || `)})) STORED;
CREATE INDEX ${table}_search ON ${table} USING GIN (search_tsv);`;

const searchRecords = [
  tsvColumn('sheets', ['sheet_number', 'title']),
  tsvColumn('blocks', ['title', 'type']),
  tsvColumn('changes', ['description', 'text_before', 'text_after', 'note']),
  tsvColumn('symbols', ['label']),
  'CREATE INDEX IF NOT EXISTS symbols_sheet_label ON symbols(sheet_id, label);',
  'CREATE INDEX IF NOT EXISTS changes_project ON changes(project_id);',
].join('\n');

/** Migration 008: every sheet gets its whole-sheet block (a no-op on a new database). */
const sheetBlocks = /* sql */ `
INSERT INTO blocks (id, organization_id, project_id, drawing_id, sheet_id, type, bbox, identifier, title, scale, image_key, created_at, updated_at)
SELECT 'blk_' || substr(md5(random()::text || s.id), 1, 20), s.organization_id, s.project_id, s.drawing_id, s.id, 'Sheet',
       json_build_object('x', 0, 'y', 0, 'width', s.width, 'height', s.height)::text, NULL, NULL, NULL, s.image_key,
       s.created_at, s.created_at
FROM sheets s
WHERE NOT EXISTS (SELECT 1 FROM blocks b WHERE b.sheet_id = s.id AND b.type = 'Sheet');
`;

/** Migration 012: two more change categories (SQLite rebuilds the table; PostgreSQL swaps the CHECK). */
const changeCategories = /* sql */ `
ALTER TABLE changes DROP CONSTRAINT changes_category_check;
ALTER TABLE changes ADD CONSTRAINT changes_category_check
  CHECK (category IN ('geometry', 'text', 'dimension', 'annotation', 'title_block', 'fill', 'style', 'noise'));
`;

/**
 * Migration 14: the index cuts text as FTS5's unicode61 does — letters and digits only, and no
 * phrase across two columns.
 *
 * - Migration 2 turned `- _ / .` into spaces and left the rest to PostgreSQL's parser, which reads
 *   more than words: `<FIRE>` is an XML tag (dropped), `+601` a signed integer, `a@b.com` one
 *   e-mail token, `www.x.org/a/b` a URL — none found by the words inside, as FTS5 finds them. Every
 *   ASCII punctuation character becomes a space now (other punctuation is already a blank to the
 *   parser; a fixed list, not `[:punct:]`, so the result does not depend on the locale).
 * - Migration 5 indexed a record's columns as one text, so the phrase "floor plan" matched a
 *   block titled "1st Floor" of type "Plan"; FTS5 matches a phrase inside one column only.
 *   `bl_tsv_columns` leaves one empty position between columns (a filler word, deleted after
 *   the vector is built), so `<->` never joins the last word of one column to the first of the
 *   next, while `&` still combines words from any column, as FTS5's AND does.
 *
 * The generated columns are dropped and added again (their indexes with them), which recomputes
 * them. `bl_tsquery` is the query side: the same accent folding over a query written in tsquery
 * syntax by the search service.
 */
const retsv = (table: string, column: string, expr: string, index: string) => /* sql */ `
ALTER TABLE ${table} DROP COLUMN ${column};
ALTER TABLE ${table} ADD COLUMN ${column} tsvector GENERATED ALWAYS AS (${expr}) STORED;
CREATE INDEX ${index} ON ${table} USING GIN (${column});`;

const searchWords = /* sql */ `
CREATE OR REPLACE FUNCTION bl_search_text(t text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT regexp_replace(unaccent('unaccent'::regdictionary, coalesce(t, '')), '[\\x21-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7e]+', ' ', 'g') $$;
CREATE FUNCTION bl_tsv_columns(VARIADIC cols text[]) RETURNS tsvector
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT ts_delete(to_tsvector('simple'::regconfig,
    array_to_string(ARRAY(SELECT bl_search_text(c) FROM unnest(cols) AS c), ' blcolumngap0 ')), 'blcolumngap0') $$;
CREATE FUNCTION bl_tsquery(q text) RETURNS tsquery
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT to_tsquery('simple'::regconfig, unaccent('unaccent'::regdictionary, q)) $$;
${retsv('search_index', 'tsv', 'bl_tsv(text)', 'search_index_tsv')}
${retsv('sheets', 'search_tsv', 'bl_tsv_columns(sheet_number, title)', 'sheets_search')}
${retsv('blocks', 'search_tsv', 'bl_tsv_columns(title, type)', 'blocks_search')}
${retsv('changes', 'search_tsv', 'bl_tsv_columns(description, text_before, text_after, note)', 'changes_search')}
${retsv('symbols', 'search_tsv', 'bl_tsv(label)', 'symbols_search')}
`;

export const PG_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'initial', sql: fromSqlite(initial) },
  { version: 2, name: 'search-index', sql: searchIndex },
  { version: 3, name: 'compare', sql: fromSqlite(compare) },
  { version: 4, name: 'webhooks', sql: fromSqlite(webhooks) },
  { version: 5, name: 'search-records', sql: searchRecords },
  { version: 6, name: 'symbol-indexes', sql: fromSqlite(symbolIndexes) },
  { version: 7, name: 'job-stalls', sql: fromSqlite(jobStalls) },
  { version: 8, name: 'sheet-blocks', sql: sheetBlocks },
  { version: 9, name: 'drawing-issued', sql: fromSqlite(drawingIssued) },
  { version: 10, name: 'job-claims', sql: fromSqlite(jobClaims) },
  { version: 11, name: 'export-files', sql: fromSqlite(exportFiles) },
  { version: 12, name: 'change-categories', sql: changeCategories },
  { version: 13, name: 'job-dispatch', sql: fromSqlite(jobDispatch) + pgNotify },
  { version: 14, name: 'search-words', sql: searchWords },
  { version: 15, name: 'webhook-claims', sql: fromSqlite(webhookClaims) },
  { version: 16, name: 'attempt-objects', sql: fromSqlite(attemptObjects) },
];
