// Shared by the reliability scripts: run `blueline serve` as a child process on a data dir, talk
// to it over HTTPS with its own certificate, and read what it prints.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { resolve } from 'node:path';
import { withMallocTuning } from '../core/jobs/malloc-tuning';

export const repoRoot = resolve(import.meta.dirname, '..');
export const FIXTURES = resolve(repoRoot, 'fixtures/drawings');

export interface Served {
  child: ChildProcess;
  pid: number;
  origin: string;
  /** The first key, printed only when the data dir was new. */
  firstKey: string | null;
  agent: https.Agent;
  /** Every stdout/stderr line so far. */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  bootMs: number;
}

export async function startServe(
  dataDir: string,
  opts: { env?: Record<string, string>; timeoutMs?: number; args?: string[] } = {},
): Promise<Served> {
  const t0 = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'core/cli/main.ts',
      'serve',
      '--data-dir',
      dataDir,
      '--port',
      '0',
      ...(opts.args ?? []),
    ],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      // With the service's malloc settings already: it runs in this process, not restarted in a
      // child (core/jobs/malloc-tuning.ts), so `pid` is the service's (memory is read by pid).
      env: withMallocTuning({ ...process.env, ...opts.env }),
    },
  );
  const lines: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  let onLine: ((l: string) => void) | undefined;
  const feed = (buf: Buffer) => {
    for (const l of buf.toString().split('\n')) {
      if (!l) continue;
      lines.push(l);
      onLine?.(l);
    }
  };
  child.stdout!.on('data', feed);
  child.stderr!.on('data', feed);
  let firstKey: string | null = null;
  const origin = await new Promise<string>((res, rej) => {
    const timer = setTimeout(
      () =>
        rej(
          new Error(
            `serve did not start within ${opts.timeoutMs ?? 60_000} ms:\n${lines.join('\n')}`,
          ),
        ),
      opts.timeoutMs ?? 60_000,
    );
    const check = (l: string) => {
      const m = /^Blueline API: (https:\/\/[^/]+)\/v1/.exec(l);
      if (m) {
        clearTimeout(timer);
        // The key line follows the banner at once (same tick); give it a moment.
        setTimeout(() => res(m[1]!), 50);
      }
    };
    onLine = (l) => {
      const k = /API key \(organization "Default", shown once\): (sk_\S+)/.exec(l);
      if (k) firstKey = k[1]!;
      check(l);
    };
    for (const l of lines) onLine(l);
    void exited.then((e) => {
      clearTimeout(timer);
      rej(new Error(`serve exited (${e.code ?? e.signal}) before listening:\n${lines.join('\n')}`));
    });
  });
  await new Promise((r) => setTimeout(r, 60));
  const agent = new https.Agent({
    ca: readFileSync(resolve(dataDir, 'tls/cert.pem'), 'utf8'),
    keepAlive: true,
    maxSockets: 32,
  });
  return {
    child,
    pid: child.pid!,
    origin,
    firstKey,
    agent,
    lines,
    exited,
    bootMs: Date.now() - t0,
  };
}

export interface Res<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  bytes: Buffer;
}

export let requestsSent = 0;

export function request<T = any>(
  s: { origin: string; agent: https.Agent },
  method: string,
  path: string,
  opts: {
    key?: string | null;
    body?: unknown;
    raw?: Buffer;
    contentType?: string;
    timeoutMs?: number;
  } = {},
): Promise<Res<T>> {
  requestsSent++;
  return new Promise((res, rej) => {
    const headers: Record<string, string> = {};
    let payload: Buffer | undefined;
    if (opts.raw) {
      payload = opts.raw;
      headers['content-type'] = opts.contentType ?? 'application/octet-stream';
    } else if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['content-type'] = 'application/json';
    }
    if (payload) headers['content-length'] = String(payload.length);
    if (opts.key) headers.authorization = `Bearer ${opts.key}`;
    const req = https.request(
      new URL(path, s.origin),
      { method, agent: s.agent, headers, timeout: opts.timeoutMs ?? 60_000 },
      (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => {
          const bytes = Buffer.concat(chunks);
          let body: unknown;
          try {
            body = /json/.test(String(r.headers['content-type']))
              ? JSON.parse(bytes.toString('utf8'))
              : undefined;
          } catch {
            body = undefined;
          }
          res({ status: r.statusCode ?? 0, headers: r.headers, body: body as T, bytes });
        });
        r.on('error', rej);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout: ${method} ${path}`)));
    req.on('error', rej);
    if (payload) req.write(payload);
    req.end();
  });
}

/** Uploads bytes as a file and creates a drawing from it; returns the API answers. */
export async function uploadDrawing(
  s: { origin: string; agent: https.Agent },
  key: string,
  projectId: string,
  bytes: Buffer,
  name: string,
  contentType = 'application/pdf',
): Promise<{ file: Res; put?: Res; drawing?: Res }> {
  const file = await request(s, 'POST', '/v1/files', {
    key,
    body: {
      project_id: projectId,
      filename: name,
      content_type: contentType,
      size_bytes: bytes.length,
    },
  });
  if (file.status !== 201) return { file };
  const put = await request(s, 'PUT', file.body.upload_url, {
    raw: bytes,
    contentType,
    timeoutMs: 300_000,
  });
  if (put.status !== 200) return { file, put };
  const drawing = await request(s, 'POST', '/v1/drawings', {
    key,
    body: { project_id: projectId, name, file_id: file.body.id },
  });
  return { file, put, drawing };
}

export async function listAll<T = any>(
  s: { origin: string; agent: https.Agent },
  key: string,
  path: string,
): Promise<T[]> {
  const out: T[] = [];
  let url: string | null = path;
  while (url) {
    const r: Res = await request(s, 'GET', url, { key });
    if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    out.push(...(r.body.data as T[]));
    url =
      r.body._meta.next === null
        ? null
        : `${path.split('?')[0]}?cursor=${encodeURIComponent(r.body._meta.next)}`;
  }
  return out;
}

/** Peak resident set (VmHWM) and current RSS of a process, in MiB (Linux /proc). */
export function memoryMiB(pid: number): { rss: number; peak: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(s)?.[1] ?? NaN);
    return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return null;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const rand = (lo: number, hi: number) => lo + Math.random() * (hi - lo);

export const TERMINAL = new Set(['Completed', 'Failed', 'Canceled']);

/** Lines the service printed as `<msg> {json}` (consoleLogger format), parsed. */
export function loggedObjects(lines: string[], msg: string): Record<string, number>[] {
  const out: Record<string, number>[] = [];
  for (const l of lines) {
    if (!l.startsWith(msg + ' ')) continue;
    try {
      out.push(JSON.parse(l.slice(msg.length + 1)));
    } catch {
      // not ours
    }
  }
  return out;
}
