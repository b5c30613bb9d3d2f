import { describe, expect, it } from 'vitest';
import { formatRoute, parseRoute, type Route } from './route';

describe('routes', () => {
  it('round-trips every route', () => {
    const routes: Route[] = [
      { name: 'projects' },
      { name: 'project', projectId: 'prj_01ABC', tab: 'drawings' },
      { name: 'project', projectId: 'prj_01ABC', tab: 'compare' },
      { name: 'project', projectId: 'prj_01ABC', tab: 'search' },
      { name: 'sheet', projectId: 'prj_01ABC', sheetId: 'sht_9' },
      {
        name: 'sheet',
        projectId: 'prj_01ABC',
        sheetId: 'sht_9',
        at: { x: 10, y: 20, width: 300, height: 40 },
        label: 'GLULAM COLUMN',
      },
      { name: 'comparison', projectId: 'prj_01ABC', jobId: 'job_7' },
      { name: 'overlay', projectId: 'prj_01ABC', overlayId: 'ovl_3', jobId: 'job_7' },
      { name: 'overlay', projectId: 'prj_01ABC', overlayId: 'ovl_3', jobId: null },
      {
        name: 'overlay',
        projectId: 'prj_01ABC',
        overlayId: 'ovl_3',
        jobId: 'job_7',
        changeId: 'chg_9',
      },
    ];
    for (const r of routes) expect(parseRoute(formatRoute(r))).toEqual(r);
  });

  it('opens the links of the CSV export on the overlay with the change selected', () => {
    // The form core/services/exports/csv.ts writes (core/test/exports.test.ts checks it there).
    const link =
      'https://127.0.0.1:7420/#/projects/prj_01ABC/overlays/ovl_01DEF?job=job_01GHI&change=chg_01JKL';
    expect(parseRoute(new URL(link).hash)).toEqual({
      name: 'overlay',
      projectId: 'prj_01ABC',
      overlayId: 'ovl_01DEF',
      jobId: 'job_01GHI',
      changeId: 'chg_01JKL',
    });
  });

  it('falls back to the project list for unknown or malformed fragments', () => {
    expect(parseRoute('')).toEqual({ name: 'projects' });
    expect(parseRoute('#/nope')).toEqual({ name: 'projects' });
    expect(parseRoute('#/projects/<script>')).toEqual({ name: 'projects' });
    expect(parseRoute('#/projects/prj_1/overlays/bad id')).toEqual({
      name: 'project',
      projectId: 'prj_1',
      tab: 'drawings',
    });
  });
});
