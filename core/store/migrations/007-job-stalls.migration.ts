// `attempts` counts every claim of a job (diagnostics, and what handlers see). `stalled_claims`
// counts the claims since the job last made progress: the runner's attempt limit uses it, so a job
// that moves forward between unrelated crashes is never failed for "too many attempts".
export const sql = /* sql */ `
ALTER TABLE jobs ADD COLUMN stalled_claims INTEGER NOT NULL DEFAULT 0;
`;
