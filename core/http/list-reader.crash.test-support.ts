// A list reader thread that reports ready and dies on its first page request (list-reader.test.ts:
// a page the thread was building when it died is rebuilt on the HTTP thread).
import { parentPort } from 'node:worker_threads';

parentPort!.on('message', () => process.exit(3));
parentPort!.postMessage({ type: 'ready' });
