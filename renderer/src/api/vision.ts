// Search, symbol counts and ask (contract §7) for the renderer's panels: request shapes and hooks
// over the service's HTTPS API. Jobs (parse) are followed with useLiveJob (SSE, polling fallback).
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useApi } from './hooks';
import type { BBox, Id, JobAccepted, ListEnvelope } from './types';

export interface Hit {
  type: 'sheet' | 'block' | 'text' | 'change' | 'symbol';
  id: Id;
  sheet_id: Id;
  sheet_number: string | null;
  drawing_id: Id;
  snippet: string;
  highlights: { start: number; end: number }[];
  bbox: BBox | null;
  score: number;
  overlay_id?: Id;
  source?: 'markup';
  drawing_name: string;
  revision: string | null;
  issued_at: string | null;
}

export interface SymbolRow {
  id: Id;
  sheet_id: Id;
  label: string;
  bbox: BBox;
  confidence: number;
  rotation: number;
  job_id: Id | null;
}

export interface AskSource {
  type: 'drawing' | 'sheet' | 'block' | 'text' | 'change' | 'symbol' | 'overlay';
  id: Id;
  label: string;
  snippet: string;
}

export interface AskAnswer {
  answer: string;
  sources: AskSource[];
  method: string;
  answered: boolean;
}

export interface Credits {
  balance: number;
  reserved: number;
}

/** A parse job's result (core/jobs/handlers/parse.job.ts). */
export interface ParseResult {
  labels: string[];
  sheets_scanned: number;
  sheets: { sheet_id: Id; sheet_number: string | null; counts: Record<string, number> }[];
  totals: Record<string, number>;
  deltas: {
    baseline_job_id: Id;
    baseline_drawing_id: Id;
    sheets: {
      sheet_number: string | null;
      sheet_id: Id;
      baseline_sheet_id: Id;
      counts: Record<string, { before: number; after: number; delta: number }>;
    }[];
    totals: Record<string, { before: number; after: number; delta: number }>;
  } | null;
}

export function useProjectSearch(projectId: Id) {
  const api = useApi();
  return useMutation<ListEnvelope<Hit>, unknown, { query: string; limit?: number }>({
    mutationFn: (body) =>
      api.request(`/projects/${encodeURIComponent(projectId)}/search`, { method: 'POST', body }),
  });
}

export function useAsk(projectId: Id) {
  const api = useApi();
  const qc = useQueryClient();
  return useMutation<AskAnswer, unknown, string>({
    mutationFn: (question) =>
      api.request(`/projects/${encodeURIComponent(projectId)}/ask`, {
        method: 'POST',
        body: { question },
      }),
    onSettled: () => void qc.invalidateQueries({ queryKey: ['credits'] }),
  });
}

export function useCredits() {
  const api = useApi();
  return useQuery({ queryKey: ['credits'], queryFn: () => api.request<Credits>('/credits') });
}

export function useStartParse() {
  const api = useApi();
  return useMutation<
    JobAccepted,
    unknown,
    {
      target_id: Id;
      templates: { label: string; source_id: Id; bbox: BBox }[];
      threshold?: number;
    }
  >({
    mutationFn: (body) => api.request('/parse', { method: 'POST', body }),
  });
}

/** The symbols found on a sheet, of one parse job when given (GET /symbols?sheet_id=). */
export function useSheetSymbols(sheetId: Id, jobId: Id | null) {
  const api = useApi();
  return useQuery({
    queryKey: ['symbols', sheetId, jobId],
    enabled: !!jobId,
    queryFn: () =>
      api.listAll<SymbolRow>('/symbols', {
        sheet_id: sheetId,
        ...(jobId ? { job_id: jobId } : {}),
      }),
  });
}

/** Where a record sits on its sheet, for opening a citation at its place. */
export async function placeOf(
  api: ReturnType<typeof useApi>,
  projectId: Id,
  src: AskSource,
): Promise<
  | { kind: 'sheet'; sheetId: Id; at?: BBox }
  | { kind: 'overlay'; overlayId: Id }
  | { kind: 'drawing'; drawingId: Id }
> {
  switch (src.type) {
    case 'sheet':
      return { kind: 'sheet', sheetId: src.id };
    case 'text': {
      // A text run is cited by its sheet; its place is found by searching its words (free).
      const found = await api
        .request<ListEnvelope<Hit>>(`/projects/${encodeURIComponent(projectId)}/search`, {
          method: 'POST',
          body: { query: `"${src.snippet.replace(/"/g, ' ')}"`, types: ['text'], limit: 100 },
        })
        .catch(() => null);
      const hit = found?.data.find((h) => h.sheet_id === src.id && h.bbox);
      return { kind: 'sheet', sheetId: src.id, ...(hit?.bbox ? { at: hit.bbox } : {}) };
    }
    case 'block': {
      const b = await api.request<{ sheet_id: Id; bbox: BBox }>(`/blocks/${src.id}`);
      return { kind: 'sheet', sheetId: b.sheet_id, at: b.bbox };
    }
    case 'symbol': {
      const y = await api.request<{ sheet_id: Id; bbox: BBox }>(`/symbols/${src.id}`);
      return { kind: 'sheet', sheetId: y.sheet_id, at: y.bbox };
    }
    case 'change': {
      const c = await api.request<{ overlay_id: Id }>(`/changes/${src.id}`);
      return { kind: 'overlay', overlayId: c.overlay_id };
    }
    case 'overlay':
      return { kind: 'overlay', overlayId: src.id };
    case 'drawing':
      return { kind: 'drawing', drawingId: src.id };
  }
}
