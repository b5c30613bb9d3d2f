// Starts a worker from TypeScript source (development, tests, `node --import tsx`): registers
// tsx's loader in this thread, then imports the .ts entry named in workerData.entry.
// `new Worker(file.ts, { execArgv: ['--import', 'tsx'] })` does not work on Node 20.20: the
// loader hooks registered by --import are not applied to a worker's entry module
// (ERR_UNKNOWN_FILE_EXTENSION), hence this small plain-JS trampoline.
// A bundled build never uses this file: it starts the built worker-entry.js directly.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
