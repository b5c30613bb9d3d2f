// Team mode's job dispatch (core/jobs/bullmq-dispatcher.ts). A parent job that waits for its
// children gives its queue slot back instead of holding it: its run ends with `yielded = 1` and the
// row stays Started; when its last child ends, the parent is delivered again and runs once more
// (handlers are re-runnable; its children already exist). The column is the marker the process
// ending the last child, and the queue's sweeper, look for. The desktop's runner keeps waiting in
// memory and never sets it.
export const sql = /* sql */ `
ALTER TABLE jobs ADD COLUMN yielded INTEGER NOT NULL DEFAULT 0;
`;

/**
 * PostgreSQL only: every insert or update of a job row sends `NOTIFY blueline_jobs, '<job id>'`
 * from inside the transaction that makes it, delivered when (and only if) it commits. The API
 * process re-reads the row for SSE and the processes running jobs hear cancels, wherever the
 * change was made (core/jobs/pg-job-events.ts).
 */
export const pgNotify = /* sql */ `
CREATE OR REPLACE FUNCTION bl_notify_job() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('blueline_jobs', NEW.id);
  RETURN NULL;
END $$;
CREATE TRIGGER jobs_notify AFTER INSERT OR UPDATE ON jobs
  FOR EACH ROW EXECUTE FUNCTION bl_notify_job();
`;
