// Native modules inside Electron: better-sqlite3 (V8 ABI, must be rebuilt for Electron),
// sharp (N-API) and PDFium (WASM) are loaded and exercised by electron/tools/native-probe.cjs
// running in the Electron binary. Needs the binary (node_modules/electron/path.txt), which
// `npm install` downloads wherever github.com is reachable; on machines without it (this CI)
// the test is skipped with the reason printed. The first run builds better-sqlite3 for
// Electron with @electron/rebuild (downloads Electron's headers once; cached afterwards).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  electronExecutable,
  electronTarget,
  prepareElectronBuild,
} from './tools/native-modules.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const probeScript = path.join(here, 'tools', 'native-probe.cjs');
const electronPath = electronExecutable();
const hasDisplay =
  process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);

if (!electronPath) {
  console.log(
    '[electron/native-modules.test] SKIPPED: the Electron binary is not installed here ' +
      '(node_modules/electron/path.txt is missing because its download from github.com failed or was skipped). ' +
      'Run `npm install` on a machine that can reach github.com, then `npx vitest run electron/native-modules.test.ts`.',
  );
}

interface ProbeResult {
  ok: boolean;
  error?: string;
  electron: string | null;
  modules: string;
  runAsNode: boolean;
  journalMode: string;
  ftsHit: string | null;
  sqliteVersion: string;
  png: { width: number; height: number; channels: number };
  pdfiumPages: number;
}

function runProbe(exe: string, env: NodeJS.ProcessEnv, args: string[]): ProbeResult {
  const r = spawnSync(exe, [...args, probeScript], { env, encoding: 'utf8', timeout: 120_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('BLUELINE_PROBE '));
  if (!line) {
    throw new Error(`probe printed no result (exit ${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return JSON.parse(line.slice('BLUELINE_PROBE '.length)) as ProbeResult;
}

function expectWorkingModules(result: ProbeResult, abi: string): void {
  expect(result.error).toBeUndefined();
  expect(result.ok).toBe(true);
  expect(result.electron).toBe(electronTarget().version);
  expect(result.modules).toBe(abi);
  expect(result.journalMode).toBe('wal');
  expect(result.ftsHit).toBe('steel beam');
  expect(result.sqliteVersion).toMatch(/^3\.\d+\.\d+$/);
  expect(result.png).toEqual({ width: 8, height: 4, channels: 1 });
  expect(result.pdfiumPages).toBe(1);
}

describe('native modules inside Electron', () => {
  it.skipIf(!electronPath)(
    'loads better-sqlite3, sharp and PDFium (WASM) in Electron',
    () => {
      const exe = electronPath as string;
      const { abi } = electronTarget();
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        BLUELINE_SQLITE_BINDING: prepareElectronBuild(),
      };

      // Electron's Node: the runtime (V8, ABI) the main process and the service run on.
      const asNode = runProbe(exe, { ...env, ELECTRON_RUN_AS_NODE: '1' }, []);
      expectWorkingModules(asNode, abi);
      expect(asNode.runAsNode).toBe(true);

      // The real main process as well, where a display exists (Electron needs one on Linux).
      if (hasDisplay) {
        const { ELECTRON_RUN_AS_NODE: _drop, ...mainEnv } = env;
        const asMain = runProbe(exe, mainEnv, ['--no-sandbox', '--disable-gpu']);
        expectWorkingModules(asMain, abi);
        expect(asMain.runAsNode).toBe(false);
      } else {
        console.log(
          '[electron/native-modules.test] no display: checked Electron-as-Node only, not a main process',
        );
      }
    },
    15 * 60_000,
  );
});
