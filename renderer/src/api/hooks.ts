// React Query hooks over ApiClient. Query keys live in one table so invalidation stays
// consistent; job progress arrives by SSE and is written straight into the query cache.

import {
  createContext,
  createElement,
  useContext,
  useEffect,
  useState,
  type ReactNode,
} from 'react';
import {
  useMutation,
  useQueries,
  useQuery,
  useQueryClient,
  type QueryClient,
} from '@tanstack/react-query';
import { type ApiClient, ApiError } from './client';
import type {
  CreateExportBody,
  Change,
  Id,
  Job,
  PatchChangeBody,
  PatchDrawingBody,
  PatchSheetBody,
  Sheet,
} from './types';
import { isTerminal } from './types';

const ApiContext = createContext<ApiClient | null>(null);

export function ApiProvider({ client, children }: { client: ApiClient; children: ReactNode }) {
  return createElement(ApiContext.Provider, { value: client }, children);
}

export function useApi(): ApiClient {
  const c = useContext(ApiContext);
  if (!c) throw new Error('useApi outside ApiProvider');
  return c;
}

export const qk = {
  projects: ['projects'] as const,
  project: (id: Id) => ['project', id] as const,
  drawings: (projectId: Id) => ['drawings', projectId] as const,
  sheets: (f: SheetFilter) => ['sheets', f] as const,
  sheet: (id: Id) => ['sheet', id] as const,
  blocks: (sheetId: Id) => ['blocks', sheetId] as const,
  jobs: (projectId: Id) => ['jobs', projectId] as const,
  job: (id: Id) => ['job', id] as const,
  overlays: (jobId: Id) => ['overlays', jobId] as const,
  overlay: (id: Id) => ['overlay', id] as const,
  changes: (overlayId: Id) => ['changes', overlayId] as const,
};

/** Do not retry what retrying cannot fix (4xx); retry network blips and 5xx twice. */
export function shouldRetry(failureCount: number, err: unknown): boolean {
  if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 429)
    return false;
  return failureCount < 2;
}

export function useProjects() {
  const api = useApi();
  return useQuery({ queryKey: qk.projects, queryFn: ({ signal }) => api.listProjects(signal) });
}

export function useProject(id: Id) {
  const api = useApi();
  return useQuery({ queryKey: qk.project(id), queryFn: () => api.getProject(id) });
}

export function useCreateProject() {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: api.createProject,
    onSuccess: () => qc.invalidateQueries({ queryKey: qk.projects }),
  });
}

export function useDeleteProject() {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: api.deleteProject,
    onSuccess: () => qc.invalidateQueries({ queryKey: qk.projects }),
  });
}

export function useDrawings(projectId: Id) {
  const api = useApi();
  return useQuery({
    queryKey: qk.drawings(projectId),
    queryFn: () => api.listDrawings(projectId),
    // While a set is processing, refresh its status now and then even if no SSE stream is open.
    refetchInterval: (q) => (q.state.data?.some((d) => d.status === 'Processing') ? 3000 : false),
  });
}

export function usePatchDrawing(projectId: Id) {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: Id; body: PatchDrawingBody }) => api.patchDrawing(id, body),
    onSuccess: () => qc.invalidateQueries({ queryKey: qk.drawings(projectId) }),
  });
}

export interface SheetFilter {
  project_id?: Id;
  drawing_id?: Id;
  discipline?: string;
  sheet_number?: string;
}

export function useSheets(filter: SheetFilter, enabled = true) {
  const api = useApi();
  const clean: SheetFilter = {};
  for (const [k, v] of Object.entries(filter) as [keyof SheetFilter, string | undefined][])
    if (v) clean[k] = v;
  return useQuery({ queryKey: qk.sheets(clean), queryFn: () => api.listSheets(clean), enabled });
}

export function useSheet(id: Id) {
  const api = useApi();
  return useQuery({ queryKey: qk.sheet(id), queryFn: () => api.getSheet(id) });
}

export function usePatchSheet() {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: Id; body: PatchSheetBody }) => api.patchSheet(id, body),
    onSuccess: (sheet: Sheet) => {
      qc.setQueryData(qk.sheet(sheet.id), (old: Sheet | undefined) => ({ ...old, ...sheet }));
      void qc.invalidateQueries({ queryKey: ['sheets'] });
    },
  });
}

export function useBlocks(sheetId: Id) {
  const api = useApi();
  return useQuery({ queryKey: qk.blocks(sheetId), queryFn: () => api.listBlocks(sheetId) });
}

export function useJobs(projectId: Id, live: boolean) {
  const api = useApi();
  return useQuery({
    queryKey: qk.jobs(projectId),
    queryFn: () => api.listJobs(projectId),
    refetchInterval: (q) =>
      live || q.state.data?.data.some((j) => !isTerminal(j.status)) ? 2000 : false,
  });
}

/** Child jobs of a running parent, polled (one stream per child would be wasteful). */
export function useChildJobs(parentId: Id) {
  const api = useApi();
  return useQuery({
    queryKey: ['jobs', 'children', parentId],
    queryFn: () => api.listChildJobs(parentId),
    refetchInterval: 1500,
  });
}

export function useCancelJob() {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: api.cancelJob,
    onSuccess: (job: Job) => {
      qc.setQueryData(qk.job(job.id), job);
      void qc.invalidateQueries({ queryKey: ['jobs'] });
    },
  });
}

/** What a finished job may have changed, so lists refresh without a manual reload. */
export function invalidateAfterJob(qc: QueryClient, job: Job): void {
  void qc.invalidateQueries({ queryKey: ['jobs'] });
  if (job.type === 'process') {
    void qc.invalidateQueries({ queryKey: ['drawings'] });
    void qc.invalidateQueries({ queryKey: ['sheets'] });
  }
  if (job.type === 'compare' || job.type === 'analyze') {
    void qc.invalidateQueries({ queryKey: ['overlays'] });
    void qc.invalidateQueries({ queryKey: ['overlay'] });
    void qc.invalidateQueries({ queryKey: ['changes'] });
  }
}

/**
 * One job, kept live: reads it once, then follows `GET /jobs/{id}/events` and writes every
 * event into the cache. If the stream cannot be opened or drops, falls back to polling.
 */
export function useLiveJob(id: Id | null) {
  const api = useApi();
  const qc = useQueryClient();
  const [streamFailed, setStreamFailed] = useState(false);
  const query = useQuery({
    queryKey: qk.job(id ?? ''),
    queryFn: () => api.getJob(id as Id),
    enabled: !!id,
    refetchInterval: (q) =>
      streamFailed && q.state.data && !isTerminal(q.state.data.status) ? 1500 : false,
  });
  const terminal = query.data ? isTerminal(query.data.status) : false;

  useEffect(() => {
    if (!id || terminal) return;
    const ctrl = new AbortController();
    let ended = false;
    api
      .streamJob(
        id,
        (job) => {
          qc.setQueryData(qk.job(id), job);
          if (isTerminal(job.status)) {
            ended = true;
            invalidateAfterJob(qc, job);
          }
        },
        ctrl.signal,
      )
      .then(() => {
        // The stream ended: the job should be terminal now; if not (server restart), poll.
        if (!ended && !ctrl.signal.aborted) setStreamFailed(true);
        if (!ctrl.signal.aborted) void qc.invalidateQueries({ queryKey: qk.job(id) });
      })
      .catch((err: unknown) => {
        if ((err as Error).name !== 'AbortError') setStreamFailed(true);
      });
    return () => ctrl.abort();
  }, [api, qc, id, terminal]);

  // Polling also has to invalidate dependants when it observes the end.
  const status = query.data?.status;
  useEffect(() => {
    if (!id || !streamFailed || !status || !isTerminal(status)) return;
    const job = qc.getQueryData<Job>(qk.job(id));
    if (job) invalidateAfterJob(qc, job);
  }, [qc, id, status, streamFailed]);

  return query;
}

export function useCreateExport() {
  const api = useApi();
  return useMutation({ mutationFn: (body: CreateExportBody) => api.createExport(body) });
}

/** A file record (its signed `uri` downloads it), once `id` is known. */
export function useFile(id: Id | null) {
  const api = useApi();
  return useQuery({
    queryKey: ['file', id ?? ''],
    queryFn: () => api.getFile(id as Id),
    enabled: !!id,
  });
}

export function useCompareDrawings() {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ newerId, olderId }: { newerId: Id; olderId: Id }) =>
      api.compareDrawings(newerId, { compare_to: olderId, analyze: true }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
}

/** Every overlay of a project (or of one drawing): the counts a delete confirmation gives. */
export function useProjectOverlays(
  query: { project_id?: Id; drawing_id?: Id; job_id?: Id },
  enabled = true,
) {
  const api = useApi();
  return useQuery({
    queryKey: ['overlays-of', query] as const,
    queryFn: () => api.listOverlays(query),
    enabled,
  });
}

/** Deletes a drawing set (its sheets, blocks and every overlay involving them go with it). */
export function useDeleteDrawing(projectId: Id) {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: api.deleteDrawing,
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: qk.drawings(projectId) });
      void qc.invalidateQueries({ queryKey: ['sheets'] });
      void qc.invalidateQueries({ queryKey: ['overlays-of'] });
      void qc.invalidateQueries({ queryKey: ['overlays'] });
    },
  });
}

/**
 * Deletes a comparison: the service has no DELETE for jobs, so this deletes the job's overlays
 * (their changes go with them); the caller hides the job (hidden-comparisons.ts).
 */
export function useDeleteComparison() {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: async (jobId: Id) => {
      const list = await api.listOverlays({ job_id: jobId });
      for (const o of list) await api.deleteOverlay(o.id);
      return list.length;
    },
    onSuccess: () => {
      void qc.invalidateQueries({ queryKey: ['overlays'] });
      void qc.invalidateQueries({ queryKey: ['overlays-of'] });
      void qc.invalidateQueries({ queryKey: ['jobs'] });
    },
  });
}

/** Compares one sheet with another (POST /compare, type Sheet), changes detected. */
export function useCompareSheets() {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ oldId, newId }: { oldId: Id; newId: Id }) =>
      api.compare({ old_id: oldId, new_id: newId, type: 'Sheet', analyze: true }),
    onSuccess: () => qc.invalidateQueries({ queryKey: ['jobs'] }),
  });
}

export function useOverlays(jobId: Id, enabled = true) {
  const api = useApi();
  return useQuery({
    queryKey: qk.overlays(jobId),
    queryFn: () => api.listOverlays({ job_id: jobId }),
    enabled,
  });
}

export function useOverlay(id: Id) {
  const api = useApi();
  return useQuery({ queryKey: qk.overlay(id), queryFn: () => api.getOverlay(id) });
}

export function useAnalyzeOverlay() {
  const api = useApi();
  return useMutation({ mutationFn: api.analyzeOverlay });
}

export function useChanges(overlayId: Id, enabled = true) {
  const api = useApi();
  return useQuery({
    queryKey: qk.changes(overlayId),
    queryFn: () => api.listChanges(overlayId),
    enabled,
  });
}

/** The changes of several overlays at once (the comparison page's review progress), by overlay id. */
export function useChangesFor(overlayIds: Id[]): Map<Id, Change[]> {
  const api = useApi();
  return useQueries({
    queries: overlayIds.map((id) => ({
      queryKey: qk.changes(id),
      queryFn: () => api.listChanges(id),
    })),
    combine: (results) => {
      const m = new Map<Id, Change[]>();
      results.forEach((r, i) => {
        if (r.data) m.set(overlayIds[i] as Id, r.data);
      });
      return m;
    },
  });
}

/** Review status is applied optimistically: the reviewer keeps moving while the PATCH lands. */
export function usePatchChange(overlayId: Id) {
  const api = useApi();
  const qc = useQueryClient();
  const key = qk.changes(overlayId);
  return useMutation({
    mutationFn: ({ id, body }: { id: Id; body: PatchChangeBody }) => api.patchChange(id, body),
    onMutate: async ({ id, body }) => {
      await qc.cancelQueries({ queryKey: key });
      const before = qc.getQueryData<Change[]>(key);
      qc.setQueryData<Change[]>(key, (list) =>
        list?.map((c) => (c.id === id ? { ...c, ...body } : c)),
      );
      return { before };
    },
    onError: (_err, _vars, ctx) => {
      if (ctx?.before) qc.setQueryData(key, ctx.before);
    },
    onSuccess: (change) => {
      qc.setQueryData<Change[]>(key, (list) => list?.map((c) => (c.id === change.id ? change : c)));
    },
  });
}
