// Worker processes, PostgreSQL databases and waiting, for the team-mode tests (team-queue.test.ts)
// and the reliability script (reliability/team-chaos.ts).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

const ROOT = path.resolve(import.meta.dirname, '../..');
const WORKER = path.join(ROOT, 'core/jobs/team-worker.test-support.ts');

/** Lease timings of the tests: a dead worker's job is handed out again after about 3 + 1 s. */
export const TEST_QUEUE_ENV = {
  BLUELINE_QUEUE_LOCK_MS: '3000',
  BLUELINE_QUEUE_STALLED_MS: '1000',
  BLUELINE_QUEUE_SWEEP_MS: '2000',
};

export interface SpawnedWorker {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly lines: Record<string, unknown>[];
  /** Resolves with the first line (seen so far or later) that matches, or rejects after `ms`. */
  waitFor(
    match: (line: Record<string, unknown>) => boolean,
    ms: number,
  ): Promise<Record<string, unknown>>;
  readonly exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): void;
}

export function spawnTeamWorker(
  url: string,
  env: Record<string, string> = {},
  script: string = WORKER,
): SpawnedWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', script, url], {
    cwd: ROOT,
    env: { ...process.env, ...TEST_QUEUE_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  let buf = '';
  let errText = '';
  child.stdout!.on('data', (b: Buffer) => {
    buf += b.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        lines.push({ text: line });
      }
    }
    for (const w of [...waiters]) w();
  });
  child.stderr!.on('data', (b: Buffer) => {
    errText = (errText + b.toString()).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return {
    child,
    pid: child.pid!,
    lines,
    exited,
    kill: (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    waitFor(match, ms) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const hit = lines.find(match);
          if (!hit) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(
              `Worker ${child.pid}: no matching line within ${ms} ms. Last lines: ${JSON.stringify(lines.slice(-5))}; stderr: ${errText.slice(-1500)}`,
            ),
          );
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
}

/** A new database on the server of `baseUrl`, migrated by `prepare`; `drop` removes it. */
export async function createTeamDatabase(
  baseUrl: string,
): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bl_team_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const a = new pg.Client({ connectionString: baseUrl });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
}

/**
 * The PostgreSQL server of the team tests: $BLUELINE_TEST_DATABASE, else (under CI=true, where the
 * tests must not skip) a throwaway cluster started here with scripts/pg-test-cluster.sh; else
 * none (the tests skip, saying why).
 */
export function teamTestServer(): { url: string; stop(): void } | undefined {
  const given = process.env.BLUELINE_TEST_DATABASE;
  if (given) return { url: given, stop() {} };
  if (process.env.CI !== 'true') return undefined;
  const dir = `/tmp/bl-pg-team-${process.pid}`;
  const script = path.join(ROOT, 'scripts/pg-test-cluster.sh');
  // A port of 55000–58999 by the process id; these lie in Linux's ephemeral range, so one may be
  // held by another process's connection at that moment (seen in CI: "could not bind … Address
  // already in use"): then the next ones.
  let url = '';
  for (let attempt = 0; !url; attempt++) {
    const port = String(55000 + ((process.pid + attempt * 997) % 4000));
    try {
      url = execFileSync('bash', [script, 'start', dir, port], { encoding: 'utf8' }).trim();
    } catch (e) {
      if (attempt >= 4) throw e;
    }
  }
  return {
    url,
    stop() {
      execFileSync('bash', [script, 'stop', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  ms: number,
  everyMs = 200,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`Timed out after ${ms} ms waiting for ${what}.`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
