// A drawing's issue date and where its date and revision label came from (contract §4 Drawing,
// `issued_at` added 2026-11-27; core/domain/issue-date.ts decides them).
//
// - drawings.issued_at: the issue date, `YYYY-MM-DD`, or NULL when none is known.
// - drawings.issued_at_source: who said so. 'person' (PATCH) is never overwritten by processing;
//   NULL with a NULL date means processing found none (or has not run yet).
// - drawings.revision_source: 'person' when the label came from POST or PATCH, 'title_block' when
//   processing read it, NULL when there is none. Every label stored before this migration came from
//   a person (processing did not set drawings.revision then).
// - sheets.issued: the date the sheet's own title block prints (DATE field or revision rows). Kept
//   per sheet so a resumed or repeated process job, which skips stored pages, still sees every
//   sheet's date when it decides the set's.
export const sql = /* sql */ `
ALTER TABLE drawings ADD COLUMN issued_at TEXT;
ALTER TABLE drawings ADD COLUMN issued_at_source TEXT
  CHECK (issued_at_source IN ('person', 'title_block', 'file_name', 'pdf_metadata'));
ALTER TABLE drawings ADD COLUMN revision_source TEXT
  CHECK (revision_source IN ('person', 'title_block'));
ALTER TABLE sheets ADD COLUMN issued TEXT;
UPDATE drawings SET revision_source = 'person' WHERE revision IS NOT NULL;
`;
