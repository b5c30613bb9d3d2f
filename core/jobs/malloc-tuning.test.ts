import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MALLOC_ENV, needsMallocTuning, withMallocTuning } from './malloc-tuning';

describe('malloc tuning of the service process', () => {
  it('adds the fixed mmap threshold on Linux, keeps a value the user set, and honours the opt-out', () => {
    expect(MALLOC_ENV).toEqual({ MALLOC_MMAP_THRESHOLD_: '1048576' });
    expect(needsMallocTuning({}, 'linux')).toBe(true);
    expect(withMallocTuning({ PATH: '/bin' }, 'linux')).toEqual({
      PATH: '/bin',
      MALLOC_MMAP_THRESHOLD_: '1048576',
    });
    const own = { MALLOC_MMAP_THRESHOLD_: '65536' };
    expect(needsMallocTuning(own, 'linux')).toBe(false);
    expect(withMallocTuning(own, 'linux')).toBe(own);
    const out = { BLUELINE_MALLOC_TUNING: '0' };
    expect(needsMallocTuning(out, 'linux')).toBe(false);
    expect(withMallocTuning(out, 'linux')).toBe(out);
    // Not glibc: nothing to set, no restart.
    for (const p of ['darwin', 'win32'] as const) {
      expect(needsMallocTuning({}, p)).toBe(false);
      expect(withMallocTuning({}, p)).toEqual({});
    }
  });

  it.runIf(process.platform === 'linux')(
    '`blueline serve` restarts itself with them, passing arguments, output and exit code through',
    () => {
      // An unknown option: the restarted command refuses it (exit 2, usage on stderr), whether it
      // ran restarted (no settings in the environment) or at once (settings given).
      for (const env of [{}, MALLOC_ENV]) {
        const r = spawnSync(
          process.execPath,
          ['--import', 'tsx', 'core/cli/main.ts', 'serve', '--no-such-option'],
          {
            env: { PATH: process.env.PATH, ...env },
            encoding: 'utf8',
            timeout: 60_000,
          },
        );
        expect(r.status).toBe(2);
        expect(r.stderr).toContain("Unknown option '--no-such-option'");
      }
    },
  );

  it.runIf(process.platform === 'linux')(
    '`blueline serve` runs in a child with the settings, which a SIGTERM to it reaches',
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'bl-malloc-'));
      const cli = spawn(
        process.execPath,
        ['--import', 'tsx', 'core/cli/main.ts', 'serve', '--data-dir', dataDir, '--port', '0'],
        {
          env: { PATH: process.env.PATH, HOME: dataDir },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      try {
        await new Promise<void>((ok, fail) => {
          let out = '';
          cli.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            if (out.includes('Blueline API:')) ok();
          });
          cli.on('exit', (code) => fail(new Error(`serve exited (${code}) before it listened`)));
        });
        // The process started restarted itself: its one child node process holds the settings.
        const children = readFileSync(`/proc/${cli.pid}/task/${cli.pid}/children`, 'utf8')
          .trim()
          .split(/\s+/)
          .filter(Boolean);
        expect(children).toHaveLength(1);
        const env = readFileSync(`/proc/${children[0]}/environ`, 'utf8').split('\0');
        expect(env).toContain('MALLOC_MMAP_THRESHOLD_=1048576');
        expect(readFileSync(`/proc/${cli.pid}/environ`, 'utf8')).not.toContain('MALLOC_MMAP');
        const exited = new Promise<number | null>((ok) => cli.on('exit', (code) => ok(code)));
        cli.kill('SIGTERM');
        expect(await exited).not.toBeNull(); // it exits with the child's code, not by the signal
        expect(existsSync(`/proc/${children[0]}`)).toBe(false);
      } finally {
        cli.kill('SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    90_000,
  );

  it.runIf(process.platform === 'linux')(
    'the restarted `blueline serve` ends at once when the process that started it is killed',
    async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'bl-malloc-'));
      const cli = spawn(
        process.execPath,
        ['--import', 'tsx', 'core/cli/main.ts', 'serve', '--data-dir', dataDir, '--port', '0'],
        { env: { PATH: process.env.PATH, HOME: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      try {
        await new Promise<void>((ok, fail) => {
          let out = '';
          cli.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            if (out.includes('Blueline API:')) ok();
          });
          cli.on('exit', (code) => fail(new Error(`serve exited (${code}) before it listened`)));
        });
        const [child] = readFileSync(`/proc/${cli.pid}/task/${cli.pid}/children`, 'utf8')
          .trim()
          .split(/\s+/);
        expect(existsSync(`/proc/${child}`)).toBe(true);
        cli.kill('SIGKILL');
        // Not a timing assertion: it waits (up to the test's limit) for the child to be gone.
        while (existsSync(`/proc/${child}/status`) && !/State:\s+Z/.test(readStatus(child!)))
          await new Promise((r) => setTimeout(r, 50));
      } finally {
        cli.kill('SIGKILL');
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
    90_000,
  );
});

/** /proc/<pid>/status, or '' once the process is gone. */
function readStatus(pid: string): string {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return '';
  }
}
