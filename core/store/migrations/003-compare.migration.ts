// Comparison and credits (contract §6, §7).
// - One overlay per block pair per comparison request: a re-run of a compare job (after a crash or
//   restart) finds the overlays it already stored instead of writing them twice.
// - Ledger rows are looked up by job when a job's credits are settled.
export const sql = /* sql */ `
CREATE UNIQUE INDEX overlays_job_pair ON overlays(job_id, block_a_id, block_b_id);
CREATE INDEX credit_ledger_job ON credit_ledger(job_id);
`;
