import { describe, expect, it } from 'vitest';
import {
  canTransition,
  isJobStatus,
  isTerminal,
  JOB_STATUSES,
  sourcesOf,
  type JobStatus,
} from './job-status';

describe('job status machine', () => {
  it('allows exactly the transitions of contract §4', () => {
    const allowed = new Set([
      'Queued>Started',
      'Started>Completed',
      'Started>Failed',
      'Queued>Canceled',
      'Started>Canceled',
    ]);
    for (const from of JOB_STATUSES) {
      for (const to of JOB_STATUSES) {
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(allowed.has(`${from}>${to}`));
      }
    }
  });

  it('treats Completed, Failed and Canceled as terminal and nothing leaves them', () => {
    const terminal: JobStatus[] = ['Completed', 'Failed', 'Canceled'];
    for (const s of JOB_STATUSES) expect(isTerminal(s), s).toBe(terminal.includes(s));
    for (const from of terminal)
      for (const to of JOB_STATUSES) expect(canTransition(from, to)).toBe(false);
  });

  it('never lets a status go back to Queued or skip Started on the way to a result', () => {
    for (const from of JOB_STATUSES) expect(canTransition(from, 'Queued')).toBe(false);
    expect(canTransition('Queued', 'Completed')).toBe(false);
    expect(canTransition('Queued', 'Failed')).toBe(false);
  });

  it('lists the legal sources of each target status (used as SQL guards)', () => {
    expect(sourcesOf('Started')).toEqual(['Queued']);
    expect(sourcesOf('Completed')).toEqual(['Started']);
    expect(sourcesOf('Failed')).toEqual(['Started']);
    expect(sourcesOf('Canceled')).toEqual(['Queued', 'Started']);
    expect(sourcesOf('Queued')).toEqual([]);
  });

  it('recognises status strings', () => {
    expect(isJobStatus('Started')).toBe(true);
    expect(isJobStatus('started')).toBe(false);
    expect(isJobStatus(3)).toBe(false);
  });
});
