// Exports (contract §6): an export job stores its document as a File of the project. The file
// remembers the job that made it, so a job run again after a crash finds the file an earlier run
// stored instead of storing a second one (one file per export job).
export const sql = /* sql */ `
ALTER TABLE files ADD COLUMN job_id TEXT;
CREATE UNIQUE INDEX files_job ON files(job_id) WHERE job_id IS NOT NULL;
`;
