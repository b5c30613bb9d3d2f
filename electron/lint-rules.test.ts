// Proves that the import-direction rules in eslint.config.js fire: each case lints a one-line
// snippet as if it lived at `filePath` (the file does not need to exist) through the ESLint
// Node API, and expects exactly the restricted-import error or none. If a pattern in the config
// is loosened or mistyped, the matching "rejects" case fails.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RULE = '@typescript-eslint/no-restricted-imports';

const eslint = new ESLint({
  cwd: repoRoot,
  overrideConfigFile: path.join(repoRoot, 'eslint.config.js'),
});

async function restrictedImportMessages(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: path.join(repoRoot, filePath) });
  if (!result) throw new Error(`ESLint returned no result for ${filePath}`);
  // A parse error would otherwise look like "no restricted import".
  const fatal = result.messages.filter((m) => m.fatal);
  if (fatal.length > 0) throw new Error(`parse error in snippet: ${fatal[0]?.message}`);
  return result.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

// [file the snippet pretends to be, import line, expected message fragment]
const rejected: Array<[string, string, string]> = [
  // core never imports UI / shell code
  ['core/services/a.service.ts', "import { app } from 'electron';", 'plain Node'],
  ['core/http/server.ts', "import { useState } from 'react';", 'plain Node'],
  ['core/vision/overlay.ts', "import Konva from 'konva';", 'plain Node'],
  ['core/http/server.ts', "import { createRoot } from 'react-dom/client';", 'plain Node'],
  ['core/jobs/runner.ts', "import { useQuery } from '@tanstack/react-query';", 'plain Node'],
  ['core/index.ts', "import { App } from '../renderer/src/app';", 'never imports renderer'],
  ['core/domain/ids.ts', "import { x } from '../../electron/main/index';", 'Electron shell'],
  // domain and contract import nothing else of core
  ['core/domain/ids.ts', "import { db } from '../store/db';", 'core/domain must not import'],
  [
    'core/domain/ids.ts',
    "import type { Sheet } from '../contract/sheets';",
    'core/domain must not import',
  ],
  [
    'core/contract/sheets.ts',
    "import { newId } from '../domain/ids';",
    'core/contract must not import',
  ],
  ['core/contract/sub/x.ts', "import { createService } from '../../index';", "core's public entry"],
  // store, blobs, vision never import the layers above them
  [
    'core/store/repositories/sheets.repository.ts',
    "import { s } from '../../services/sheets.service';",
    'core/store must not import',
  ],
  [
    'core/blobs/local.store.ts',
    "import { r } from '../http/routes/files.routes';",
    'core/blobs must not import',
  ],
  ['core/vision/register.ts', "import { q } from '../jobs/queue';", 'core/vision must not import'],
  [
    'core/vision/register.ts',
    "import { main } from '../../core/cli/main';",
    'core/vision must not import',
  ],
  // services never import what drives them
  [
    'core/services/compare.service.ts',
    "import { q } from '../jobs/queue';",
    'core/services must not import',
  ],
  [
    'core/services/compare.service.ts',
    "import { s } from '../http/server';",
    'core/services must not import',
  ],
  [
    'core/services/compare.service.ts',
    "import { m } from '../cli/main';",
    'core/services must not import',
  ],
  // renderer: only types from core/contract
  [
    'renderer/src/api/client.ts',
    "import { newId } from '../../../core/domain/ids';",
    'over HTTP only',
  ],
  [
    'renderer/src/api/client.ts',
    "import { createService } from '../../../core';",
    'over HTTP only',
  ],
  [
    'renderer/src/api/client.ts',
    "import { SheetSchema } from '../../../core/contract/sheets';",
    'types only',
  ],
  ['renderer/src/main.tsx', "import { ipcRenderer } from 'electron';", 'never imports electron'],
  // electron: only core's public entry
  [
    'electron/main/index.ts',
    "import { openStore } from '../../core/store/db';",
    "only core's public entry",
  ],
  [
    'electron/main/index.ts',
    "import { App } from '../../renderer/src/app';",
    'never imports renderer',
  ],
];

const allowed: Array<[string, string]> = [
  ['core/domain/ids.ts', "import { ulid } from './ulid';"],
  ['core/store/repositories/sheets.repository.ts', "import { newId } from '../../domain/ids';"],
  ['core/store/db.ts', "import type { Sheet } from '../contract/sheets';"],
  ['core/vision/register.ts', "import type { GreyImage } from './types';"],
  ['core/blobs/local.store.ts', "import { x } from '../store/db';"],
  ['core/services/compare.service.ts', "import { register } from '../vision/register';"],
  ['core/services/compare.service.ts', "import { helper } from './http/helper';"],
  [
    'core/jobs/handlers/compare.job.ts',
    "import { compare } from '../../services/compare.service';",
  ],
  ['core/http/routes/jobs.routes.ts', "import { queue } from '../../jobs/queue';"],
  ['core/cli/main.ts', "import { createServer } from '../http/server';"],
  ['core/index.ts', "import { createServer } from './http/server';"],
  ['core/http/server.ts', "import Fastify from 'fastify';"],
  ['core/store/db.ts', "import Database from 'better-sqlite3';"],
  ['renderer/src/api/client.ts', "import type { Sheet } from '../../../core/contract/sheets';"],
  ['renderer/src/api/client.ts', "import { type Sheet } from '../../../core/contract/sheets';"],
  ['electron/main/index.ts', "import { createService } from '../../core/index';"],
  ['electron/main/index.ts', "import { createService } from '../../core';"],
];

describe('import-direction lint rules', () => {
  it.each(rejected)('rejects in %s: %s', async (filePath, code, fragment) => {
    const messages = await restrictedImportMessages(filePath, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain(fragment);
  });

  it.each(allowed)('allows in %s: %s', async (filePath, code) => {
    expect(await restrictedImportMessages(filePath, code)).toEqual([]);
  });
});
