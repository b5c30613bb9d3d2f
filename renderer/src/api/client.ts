// The one place the renderer talks HTTP. Every call sends `Authorization: Bearer <key>`;
// failures become ApiError carrying the service's Problem Details so screens can switch on
// `code` and show `detail` (never parse message text).

import type { Connection } from './connection';
import { SseParser } from './sse-parser';
import type {
  Block,
  Change,
  CompareDrawingsBody,
  CreateDrawingBody,
  CreateExportBody,
  CreatedFile,
  CreateFileBody,
  CreateProjectBody,
  Drawing,
  FileRecord,
  Id,
  Job,
  JobAccepted,
  ListEnvelope,
  Overlay,
  PatchChangeBody,
  PatchDrawingBody,
  PatchSheetBody,
  Problem,
  ProblemCode,
  Project,
  Sheet,
} from './types';

export class ApiError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail || problem.title);
    this.name = 'ApiError';
    this.problem = problem;
  }
  get code(): ProblemCode {
    return this.problem.code;
  }
  get status(): number {
    return this.problem.status;
  }
}

export function clientProblem(
  code: 'network_error' | 'bad_response',
  detail: string,
  status = 0,
): Problem {
  return {
    type: 'about:blank',
    title: code === 'network_error' ? 'Network error' : 'Unexpected response',
    status,
    detail,
    code,
  };
}

/** Turns any non-2xx response into a Problem, even when the body is not Problem Details. */
export async function problemFromResponse(res: Response): Promise<Problem> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as Partial<Problem>;
    if (body && typeof body === 'object' && typeof body.code === 'string') {
      return {
        type: body.type ?? 'about:blank',
        title: body.title ?? res.statusText,
        status: body.status ?? res.status,
        detail: body.detail ?? body.title ?? `The service answered ${res.status}.`,
        ...body,
      } as Problem;
    }
  } catch {
    // fall through: not JSON
  }
  return clientProblem(
    'bad_response',
    `The service answered ${res.status} ${res.statusText}.`.trim(),
    res.status,
  );
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export function buildQuery(query?: Query): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    params.set(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** Adds a query parameter to an already-signed URL (the signature covers path and expiry only). */
export function withParam(url: string, key: string, value: string | null): string {
  if (value === null) return url;
  const u = new URL(url, window.location.href);
  u.searchParams.set(key, value);
  return u.toString();
}

interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  query?: Query;
  body?: unknown;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export class ApiClient {
  constructor(readonly connection: Connection) {}

  private headers(extra?: Record<string, string>): Record<string, string> {
    return {
      Authorization: `Bearer ${this.connection.apiKey}`,
      Accept: 'application/json',
      ...extra,
    };
  }

  async request<T>(path: string, opts: RequestOptions = {}): Promise<T> {
    const headers = this.headers();
    if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
    if (opts.idempotencyKey) headers['Idempotency-Key'] = opts.idempotencyKey;
    let res: Response;
    try {
      res = await fetch(`${this.connection.baseUrl}${path}${buildQuery(opts.query)}`, {
        method: opts.method ?? 'GET',
        headers,
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: opts.signal,
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new ApiError(
        clientProblem('network_error', 'Cannot reach the Blueline service. Is it running?'),
      );
    }
    if (!res.ok) throw new ApiError(await problemFromResponse(res));
    if (res.status === 204) return undefined as T;
    try {
      return (await res.json()) as T;
    } catch {
      throw new ApiError(
        clientProblem('bad_response', 'The service sent a response that is not JSON.', res.status),
      );
    }
  }

  /** Follows `_meta.next` until the end (or `max` items), 100 per page. */
  async listAll<T>(
    path: string,
    query: Query = {},
    max = 2000,
    signal?: AbortSignal,
  ): Promise<T[]> {
    const out: T[] = [];
    let page = await this.request<ListEnvelope<T>>(path, {
      query: { ...query, limit: 100 },
      signal,
    });
    out.push(...page.data);
    while (page._meta.next && out.length < max) {
      page = await this.request<ListEnvelope<T>>(path, {
        query: { cursor: page._meta.next, limit: 100 },
        signal,
      });
      out.push(...page.data);
    }
    return out;
  }

  // Projects
  listProjects = (signal?: AbortSignal) => this.listAll<Project>('/projects', {}, 2000, signal);
  getProject = (id: Id) => this.request<Project>(`/projects/${enc(id)}`);
  createProject = (body: CreateProjectBody) =>
    this.request<Project>('/projects', { method: 'POST', body, idempotencyKey: newKey() });
  deleteProject = (id: Id) => this.request<void>(`/projects/${enc(id)}`, { method: 'DELETE' });

  // Files
  createFile = (body: CreateFileBody) =>
    this.request<CreatedFile>('/files', { method: 'POST', body, idempotencyKey: newKey() });
  getFile = (id: Id) => this.request<FileRecord>(`/files/${enc(id)}`);

  // Drawings
  listDrawings = (projectId: Id) => this.listAll<Drawing>('/drawings', { project_id: projectId });
  getDrawing = (id: Id) => this.request<Drawing>(`/drawings/${enc(id)}`);
  createDrawing = (body: CreateDrawingBody, idempotencyKey = newKey()) =>
    this.request<Drawing>('/drawings', { method: 'POST', body, idempotencyKey });
  patchDrawing = (id: Id, body: PatchDrawingBody) =>
    this.request<Drawing>(`/drawings/${enc(id)}`, { method: 'PATCH', body });
  createExport = (body: CreateExportBody, idempotencyKey = newKey()) =>
    this.request<JobAccepted>('/exports', { method: 'POST', body, idempotencyKey });
  deleteDrawing = (id: Id) => this.request<void>(`/drawings/${enc(id)}`, { method: 'DELETE' });
  /** POST /compare: two sheets (or drawings, or blocks) of one project, old and new. */
  compare = (
    body: { old_id: Id; new_id: Id; type: 'Drawing' | 'Sheet' | 'Block'; analyze?: boolean },
    idempotencyKey = newKey(),
  ) => this.request<JobAccepted>('/compare', { method: 'POST', body, idempotencyKey });
  compareDrawings = (newerId: Id, body: CompareDrawingsBody, idempotencyKey = newKey()) =>
    this.request<JobAccepted>(`/drawings/${enc(newerId)}/compare`, {
      method: 'POST',
      body,
      idempotencyKey,
    });

  // Sheets and blocks
  listSheets = (query: {
    drawing_id?: Id;
    project_id?: Id;
    discipline?: string;
    sheet_number?: string;
  }) => this.listAll<Sheet>('/sheets', query);
  getSheet = (id: Id) =>
    this.request<Sheet>(`/sheets/${enc(id)}`, { query: { expand: 'drawing' } });
  patchSheet = (id: Id, body: PatchSheetBody) =>
    this.request<Sheet>(`/sheets/${enc(id)}`, { method: 'PATCH', body });
  listBlocks = (sheetId: Id) => this.listAll<Block>('/blocks', { sheet_id: sheetId });

  // Jobs
  listJobs = (projectId: Id) =>
    this.request<ListEnvelope<Job>>('/jobs', { query: { project_id: projectId, limit: 50 } });
  listChildJobs = (parentId: Id) => this.listAll<Job>('/jobs', { parent_id: parentId }, 500);
  getJob = (id: Id) => this.request<Job>(`/jobs/${enc(id)}`);
  cancelJob = (id: Id) => this.request<Job>(`/jobs/${enc(id)}/cancel`, { method: 'POST' });

  // Overlays and changes
  listOverlays = (
    query: { job_id?: Id; project_id?: Id; drawing_id?: Id },
    expand = 'block_a.sheet,block_b.sheet',
  ) => this.listAll<Overlay>('/overlays', { ...query, expand });
  getOverlay = (id: Id) =>
    this.request<Overlay>(`/overlays/${enc(id)}`, {
      query: { expand: 'block_a.sheet,block_b.sheet' },
    });
  deleteOverlay = (id: Id) => this.request<void>(`/overlays/${enc(id)}`, { method: 'DELETE' });
  analyzeOverlay = (id: Id) =>
    this.request<JobAccepted>(`/overlays/${enc(id)}/analyze`, {
      method: 'POST',
      idempotencyKey: newKey(),
    });
  listChanges = (overlayId: Id) => this.listAll<Change>('/changes', { overlay_id: overlayId });
  getChange = (id: Id) => this.request<Change>(`/changes/${enc(id)}`);
  patchChange = (id: Id, body: PatchChangeBody) =>
    this.request<Change>(`/changes/${enc(id)}`, { method: 'PATCH', body });

  /**
   * Streams `GET /jobs/{id}/events` (the job object on every change, ending at a terminal
   * status). Resolves when the stream ends; rejects with ApiError on an HTTP error.
   */
  async streamJob(id: Id, onJob: (job: Job) => void, signal: AbortSignal): Promise<void> {
    let res: Response;
    try {
      res = await fetch(`${this.connection.baseUrl}/jobs/${enc(id)}/events`, {
        headers: this.headers({ Accept: 'text/event-stream' }),
        signal,
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      throw new ApiError(
        clientProblem('network_error', 'Lost the connection to the Blueline service.'),
      );
    }
    if (!res.ok || !res.body) throw new ApiError(await problemFromResponse(res));
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const ev of parser.push(value)) {
        try {
          const job = JSON.parse(ev.data) as Job;
          if (job && typeof job === 'object' && typeof job.status === 'string') onJob(job);
        } catch {
          // not a job payload (e.g. a heartbeat with text data): ignore
        }
      }
    }
  }
}

/**
 * PUT the raw bytes to a signed upload URL with progress. XMLHttpRequest because fetch has no
 * upload progress. No Authorization header: the URL's signature is the credential.
 */
export function uploadBytes(
  url: string,
  file: Blob,
  contentType: string,
  onProgress: (loaded: number, total: number) => void,
  signal?: AbortSignal,
): Promise<FileRecord> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    xhr.setRequestHeader('Content-Type', contentType);
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onerror = () =>
      reject(new ApiError(clientProblem('network_error', 'The upload was interrupted.')));
    xhr.onabort = () => reject(new DOMException('Upload canceled', 'AbortError'));
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(file.size, file.size);
        try {
          resolve(JSON.parse(xhr.responseText) as FileRecord);
        } catch {
          resolve({} as FileRecord);
        }
      } else {
        const res = new Response(xhr.responseText, {
          status: xhr.status,
          statusText: xhr.statusText,
        });
        void problemFromResponse(res).then((p) => reject(new ApiError(p)));
      }
    };
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(file);
  });
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

export function newKey(): string {
  return crypto.randomUUID();
}

/** The user-facing sentence for any error thrown by the client. */
export function errorDetail(err: unknown): string {
  if (err instanceof ApiError) return err.problem.detail;
  if (err instanceof Error) return err.message;
  return String(err);
}

export function errorCode(err: unknown): string | null {
  return err instanceof ApiError ? err.problem.code : null;
}
