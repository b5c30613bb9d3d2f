// Parse jobs replace and count their symbols per (job, sheet); without this index those queries
// scan every symbol of every organization.
export const sql = /* sql */ `
CREATE INDEX symbols_job_sheet ON symbols(job_id, sheet_id);
CREATE INDEX symbols_sheet ON symbols(sheet_id, created_at DESC, id DESC);
`;
