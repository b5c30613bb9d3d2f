import { describe, expect, it } from 'vitest';
import type { DrawingRow, OverlayPairRow } from '../store/repositories/search.repository';
import { latestComparison } from './ask.service';

// Which comparison /ask speaks from when a sheet or a pair of drawings was compared more than once:
// the one reaching the latest issue by date (contract §4 Drawing, issued_at), then the last run.

const drawing = (id: string, issued_at: string | null, created_at: string): DrawingRow => ({
  id,
  name: id,
  revision: null,
  status: 'Ready',
  issued_at,
  created_at,
});

let n = 0;
const overlay = (job_id: string, drawing_a_id: string, drawing_b_id: string): OverlayPairRow => ({
  id: `ovl_${++n}`,
  job_id,
  score: 1,
  stats: null,
  has_changes: 0,
  change_count: 0,
  created_at: `2026-01-01T00:00:00.${String(n).padStart(3, '0')}Z`,
  block_a_id: `blk_a${n}`,
  block_b_id: `blk_b${n}`,
  block_a_type: 'Plan',
  alignment: null,
  sheet_a_id: `sht_a${n}`,
  sheet_b_id: `sht_b${n}`,
  drawing_a_id,
  drawing_b_id,
  real_changes: 0,
});

describe('latestComparison', () => {
  // Uploaded newest first: July 24 before July 18 before an undated sketch.
  const jul24 = drawing('drw_jul24', '2013-07-24', '2026-01-01T00:00:00.000Z');
  const jul18 = drawing('drw_jul18', '2013-07-18', '2026-01-02T00:00:00.000Z');
  const jul10 = drawing('drw_jul10', '2013-07-10', '2026-01-03T00:00:00.000Z');
  const byId = new Map([jul24, jul18, jul10].map((d) => [d.id, d]));

  it('prefers the comparison whose newer side is the latest issue, whenever it was run', () => {
    const toJul24 = [
      overlay('job_1', 'drw_jul18', 'drw_jul24'),
      overlay('job_1', 'drw_jul18', 'drw_jul24'),
    ];
    // Run afterwards, between two older issues: by upload order it would be the latest.
    const older = [overlay('job_2', 'drw_jul10', 'drw_jul18')];
    expect(latestComparison([...toJul24, ...older], byId)).toEqual(toJul24);
  });

  it('prefers the comparison run the right way round over one run later the wrong way', () => {
    const right = [overlay('job_3', 'drw_jul18', 'drw_jul24')];
    const wrong = [overlay('job_4', 'drw_jul24', 'drw_jul18')];
    expect(latestComparison([...right, ...wrong], byId)).toEqual(right);
  });

  it('takes the last run of the same pair', () => {
    const first = [overlay('job_5', 'drw_jul18', 'drw_jul24')];
    const again = [overlay('job_6', 'drw_jul18', 'drw_jul24')];
    expect(latestComparison([...first, ...again], byId)).toEqual(again);
    expect(latestComparison([], byId)).toEqual([]);
  });
});
