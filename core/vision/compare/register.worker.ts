// Registration in a worker thread (see register-worker.adapter.ts), so no sheet is copied:
// 'level-a' (no answer) hands over A's ink level as soon as it is made, and the A-only part of the level
// stages (coarse level, ink extents, patch sites) runs while B is still decoding; 'levels' runs the
// level stages (coarse + level-1 patch rounds) on the two ink levels
// (≈ 1.9 MB each at 200 DPI, copied with the message) while the main thread packs B's masks; 'full'
// runs the full-resolution round on the small windows of both sheets it reads (extractPatchWindows,
// ≈ 0.5 MB), in this thread whose FFT code the level stages have already made hot.
// Imports only register.ts (no sharp): the worker starts fast.
import { parentPort } from 'node:worker_threads';
import {
  prepareLevelA,
  refineFull,
  registerLevels,
  type InkLevel,
  type LevelAPrep,
  type LevelStage,
  type PairSize,
  type PatchWindows,
  type RegisterOptions,
  type Registration,
} from './register';

export type RegisterWorkerRequest =
  | { kind: 'level-a'; la: InkLevel; options: Omit<RegisterOptions, 'levels'> }
  | {
      kind: 'levels';
      /** Absent when it is the level sent with 'level-a'. */
      la?: InkLevel;
      lb: InkLevel;
      size: PairSize;
      options: Omit<RegisterOptions, 'levels'>;
    }
  | {
      kind: 'full';
      stage: LevelStage;
      a: PatchWindows;
      b: PatchWindows;
      options: Omit<RegisterOptions, 'levels'>;
    };

export type RegisterWorkerResponse =
  | { kind: 'stage'; stage: LevelStage }
  | { kind: 'result'; registration: Registration }
  | { kind: 'error'; message: string };

const port = parentPort;
if (!port)
  throw new Error('register.worker.ts must run in a worker thread (register-worker.adapter.ts).');

// A's level and its prepared part, with the options they were made with.
let levelA: { la: InkLevel; options: string; prep: LevelAPrep | null } | null = null;

port.on('message', (m: RegisterWorkerRequest) => {
  if (m.kind === 'level-a') {
    let prep: LevelAPrep | null = null;
    try {
      prep = prepareLevelA(m.la, m.options);
    } catch {
      prep = null; // redone (and reported) by 'levels'
    }
    levelA = { la: m.la, options: JSON.stringify(m.options), prep };
    return;
  }
  let res: RegisterWorkerResponse;
  try {
    if (m.kind === 'levels') {
      const la = m.la ?? levelA?.la;
      if (!la) throw new Error("Registration worker got 'levels' without A's level");
      const prep =
        !m.la && levelA?.prep && levelA.options === JSON.stringify(m.options)
          ? levelA.prep
          : undefined;
      res = { kind: 'stage', stage: registerLevels(la, m.lb, m.size, m.options, prep) };
    } else {
      res = { kind: 'result', registration: refineFull(m.a, m.b, m.stage, m.options) };
    }
  } catch (err) {
    res = { kind: 'error', message: err instanceof Error ? err.message : String(err) };
  }
  port.postMessage(res);
});
