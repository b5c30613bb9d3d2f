// Hash routes: the renderer is a static bundle (file:// in Electron, `/` in browser mode), so
// the location fragment carries the screen. A reload keeps the screen.

export type ProjectTab = 'drawings' | 'compare' | 'search';

export type Route =
  | { name: 'projects' }
  | { name: 'project'; projectId: string; tab: ProjectTab }
  | {
      name: 'sheet';
      projectId: string;
      sheetId: string;
      /** A place to open zoomed to and highlight (a search hit, a citation): sheet pixels. */
      at?: { x: number; y: number; width: number; height: number };
      /** What the highlighted place is (shown next to it). */
      label?: string;
    }
  | { name: 'comparison'; projectId: string; jobId: string }
  | {
      name: 'overlay';
      projectId: string;
      overlayId: string;
      jobId: string | null;
      /** The change to select on opening (the links of the CSV export carry it). */
      changeId?: string;
    };

const ID = /^[a-z]{3}_[A-Za-z0-9]+$/;

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '').split('?')[0] ?? '';
  const query = new URLSearchParams(hash.includes('?') ? hash.slice(hash.indexOf('?') + 1) : '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== 'projects' || !parts[1] || !ID.test(parts[1])) return { name: 'projects' };
  const projectId = parts[1];
  const [, , section, id] = parts;
  if (section === 'sheets' && id && ID.test(id)) {
    const at = (query.get('at') ?? '').split(',').map(Number);
    const label = query.get('label');
    return {
      name: 'sheet',
      projectId,
      sheetId: id,
      ...(at.length === 4 && at.every(Number.isFinite) && at[2]! > 0 && at[3]! > 0
        ? { at: { x: at[0]!, y: at[1]!, width: at[2]!, height: at[3]! } }
        : {}),
      ...(label ? { label } : {}),
    };
  }
  if (section === 'comparisons' && id && ID.test(id))
    return { name: 'comparison', projectId, jobId: id };
  if (section === 'overlays' && id && ID.test(id)) {
    const job = query.get('job');
    const change = query.get('change');
    return {
      name: 'overlay',
      projectId,
      overlayId: id,
      jobId: job && ID.test(job) ? job : null,
      ...(change && ID.test(change) ? { changeId: change } : {}),
    };
  }
  if (section === 'compare' || section === 'search' || section === 'drawings')
    return { name: 'project', projectId, tab: section };
  return { name: 'project', projectId, tab: 'drawings' };
}

export function formatRoute(route: Route): string {
  const e = encodeURIComponent;
  switch (route.name) {
    case 'projects':
      return '#/';
    case 'project':
      return route.tab === 'drawings'
        ? `#/projects/${e(route.projectId)}`
        : `#/projects/${e(route.projectId)}/${route.tab}`;
    case 'sheet': {
      const q = new URLSearchParams();
      if (route.at) {
        const { x, y, width, height } = route.at;
        q.set('at', [x, y, width, height].map((v) => Math.round(v)).join(','));
      }
      if (route.label) q.set('label', route.label);
      const qs = q.toString();
      return `#/projects/${e(route.projectId)}/sheets/${e(route.sheetId)}${qs ? `?${qs}` : ''}`;
    }
    case 'comparison':
      return `#/projects/${e(route.projectId)}/comparisons/${e(route.jobId)}`;
    case 'overlay': {
      const q = new URLSearchParams();
      if (route.jobId) q.set('job', route.jobId);
      if (route.changeId) q.set('change', route.changeId);
      const qs = q.toString();
      return `#/projects/${e(route.projectId)}/overlays/${e(route.overlayId)}${qs ? `?${qs}` : ''}`;
    }
  }
}
