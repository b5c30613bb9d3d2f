// Starts register.worker.ts from TypeScript source (development, tests, `node --import tsx`): registers
// tsx's loader in this thread, then imports the .ts entry named in workerData.entry (Node 20 does not
// apply --import loader hooks to a worker's entry module; same trampoline as core/jobs/worker-bootstrap.mjs,
// which vision/ may not import). A bundled build starts its built worker file directly.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
