// The job status machine of contract §4 ("Transitions"). Pure: the jobs repository turns
// `sourcesOf(to)` into the WHERE clause of every status write, so the database itself refuses a
// write that would move a status backwards or out of a terminal status, even when two writers race
// (a handler finishing while a cancel lands).
//
//   Queued ──► Started ──► Completed | Failed
//     │           │
//     └───────────┴──► Canceled
//
// Completed, Failed and Canceled are terminal: nothing leaves them.

export const JOB_STATUSES = ['Queued', 'Started', 'Completed', 'Failed', 'Canceled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const TERMINAL_JOB_STATUSES = [
  'Completed',
  'Failed',
  'Canceled',
] as const satisfies readonly JobStatus[];
export type TerminalJobStatus = (typeof TERMINAL_JOB_STATUSES)[number];

const NEXT: Record<JobStatus, readonly JobStatus[]> = {
  Queued: ['Started', 'Canceled'],
  Started: ['Completed', 'Failed', 'Canceled'],
  Completed: [],
  Failed: [],
  Canceled: [],
};

export function isJobStatus(value: unknown): value is JobStatus {
  return typeof value === 'string' && (JOB_STATUSES as readonly string[]).includes(value);
}

export function isTerminal(status: JobStatus): status is TerminalJobStatus {
  return NEXT[status].length === 0;
}

/** Whether a job may move from `from` to `to` in one step. A status never "moves" to itself. */
export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return NEXT[from].includes(to);
}

/** The statuses a job may be in for a write to `to` to be legal (the guard of a status UPDATE). */
export function sourcesOf(to: JobStatus): JobStatus[] {
  return JOB_STATUSES.filter((from) => canTransition(from, to));
}
