// Migration 16 (attempt-objects): the object units a job's run is about to write (a sheet's prefix:
// image, thumbnail, line work, block crops; an overlay's prefix: its five images), recorded before
// the bytes go up (core/jobs/attempt-objects.ts). The transaction that commits the row naming a
// unit (the sheet, the overlay) deletes its entry; so an entry left from an earlier attempt of a
// job names objects that a run which died wrote and no row names. When the job is claimed again,
// its new run deletes those objects and their entries, instead of leaving them for the hour-old
// orphan sweep. `unit_id` is the sheet or overlay id the prefix is for (checked against its table
// again before deleting).
export const sql = /* sql */ `
CREATE TABLE job_attempt_objects (
  job_id TEXT NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,
  attempt INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('sheet', 'overlay')),
  unit_id TEXT NOT NULL,
  prefix TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (job_id, prefix)
) STRICT;
`;
