// Full-text index (SQLite FTS5) over what reviewers search: sheet text runs with their boxes,
// sheet titles and numbers, block titles. One row per searchable run; `bbox` (sheet pixels) lets a
// hit be highlighted on the sheet. Change descriptions and symbol labels join it later.
export const sql = /* sql */ `
CREATE VIRTUAL TABLE search_index USING fts5(
  text,
  kind UNINDEXED,
  ref_id UNINDEXED,
  sheet_id UNINDEXED,
  drawing_id UNINDEXED,
  project_id UNINDEXED,
  organization_id UNINDEXED,
  bbox UNINDEXED,
  tokenize = 'unicode61 remove_diacritics 2'
);
`;
