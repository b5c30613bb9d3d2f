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
      { name: 'comparison', projectId: 'prj_01ABC', jobId: 'job_7' },
      { name: 'overlay', projectId: 'prj_01ABC', overlayId: 'ovl_3', jobId: 'job_7' },
      { name: 'overlay', projectId: 'prj_01ABC', overlayId: 'ovl_3', jobId: null },
    ];
    for (const r of routes) expect(parseRoute(formatRoute(r))).toEqual(r);
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
