// The code each pool worker runs. It answers TaskRequest messages with TaskResponse messages,
// one at a time (the pool never sends a second task before the first is answered).
//
// The registry is this build's WORKER_TASKS, unless workerData.registry names another module
// exporting WORKER_TASKS (tests use that to add tasks that spin or crash on purpose).
import { parentPort, workerData, type TransferListItem } from 'node:worker_threads';
import { lowerThreadPriority } from './thread-priority';
import { WORKER_TASKS } from './worker-tasks';
import { detachOneArrayBuffer } from './worker-warmup';
import {
  isTransferred,
  setProgressSink,
  type SerializedError,
  type TaskProgress,
  type TaskRequest,
  type TaskResponse,
  type WorkerTaskRegistry,
} from './worker-protocol';

const port = parentPort;
if (!port) throw new Error('worker-entry.ts must run in a worker thread (see worker-pool.ts).');

// Before any task: so that V8 never optimizes on a promise the first transferred result breaks.
detachOneArrayBuffer();

const data = (workerData ?? {}) as { registry?: string; nice?: number };
// Heavy work yields the cores to the HTTP thread (Linux; a no-op elsewhere).
if (data.nice) lowerThreadPriority(data.nice);
const registry: WorkerTaskRegistry = data.registry
  ? ((await import(data.registry)) as { WORKER_TASKS: WorkerTaskRegistry }).WORKER_TASKS
  : WORKER_TASKS;

function serializeError(err: unknown): SerializedError {
  if (err instanceof Error) {
    const e = err as Error & { code?: unknown; detail?: unknown };
    return {
      name: e.name,
      message: e.message,
      ...(typeof e.code === 'string' ? { code: e.code } : {}),
      ...(typeof e.detail === 'string' ? { detail: e.detail } : {}),
    };
  }
  return { name: 'Error', message: String(err) };
}

port.on('message', async (req: TaskRequest) => {
  let res: TaskResponse;
  let transferList: readonly TransferListItem[] = [];
  try {
    const fn = registry[req.task];
    if (!fn) throw new Error(`Unknown worker task '${req.task}'.`);
    // One task at a time: its parts (taskProgress) go out under its id, ahead of its answer.
    setProgressSink((progress, list) =>
      port.postMessage({ id: req.id, progress } satisfies TaskProgress, list),
    );
    const out = await fn(req.args);
    if (isTransferred(out)) {
      res = { id: req.id, ok: true, value: out.value };
      transferList = out.transferList;
    } else {
      res = { id: req.id, ok: true, value: out };
    }
  } catch (err) {
    res = { id: req.id, ok: false, error: serializeError(err) };
  } finally {
    setProgressSink(null);
  }
  port.postMessage(res, transferList);
});
