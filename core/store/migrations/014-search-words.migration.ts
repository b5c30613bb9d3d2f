// Migration 14 (search-words). SQLite: nothing to change — FTS5's unicode61 tokenizer already
// splits text at every character that is not a letter or digit, which is what PostgreSQL's index
// now does too (postgres.ts, migration 14 there). The migration exists on both engines so one
// schema version names the same schema on each.
export const sql = /* sql */ `
-- search-words: a no-op on SQLite (see the PostgreSQL migration of the same number).
SELECT 1;
`;
