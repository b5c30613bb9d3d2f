// Telling a job that takes the process down apart from restarts that only interrupted it
// (core/jobs/crash-attribution.ts). Every start of a job runner is a row of `runner_boots`; a row
// that never got `ended_at` is a process that died (SIGKILL, OOM killer, native crash). Each claim
// records which boot holds it (`claim_boot`) and where the job's progress stood when it was claimed
// (`claim_progress`), so the next boot can tell whether the dead process took a job down while the
// job was moving forward. `crashes` counts the consecutive process deaths blamed on the job,
// `suspect` makes it run alone (so the next death can be blamed on it or not), and `not_before`
// delays its next claim (back off rather than fail).
export const sql = /* sql */ `
CREATE TABLE runner_boots (
  id TEXT PRIMARY KEY,
  started_at TEXT NOT NULL,
  ended_at TEXT,
  end_reason TEXT CHECK (end_reason IN ('stopped', 'died'))
) STRICT;
ALTER TABLE jobs ADD COLUMN claim_boot TEXT;
ALTER TABLE jobs ADD COLUMN claim_progress INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN suspect INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN not_before TEXT;
`;
