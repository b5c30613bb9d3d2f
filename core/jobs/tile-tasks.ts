import type { DeepTileRenderer } from '../services/tiles.service';
import type { WorkerPool } from './worker-pool';

// Deep-zoom tiles on the worker pool (worker-tasks.ts 'tiles.*'), at low priority: they wait for
// every queued job task and the newest request goes first (the tile on screen now). A tile renders
// in tens of milliseconds; the time limit ends a worker stuck in one blocking PDFium call.

/** Longest a tile task may run, ms. */
const TILE_TASK_LIMIT_MS = 30_000;

export function poolTileRenderer(pool: WorkerPool): DeepTileRenderer {
  const opts = (what: string) => ({
    priority: 'low' as const,
    limit: {
      ms: TILE_TASK_LIMIT_MS,
      error: () => new Error(`Rendering ${what} ran past ${TILE_TASK_LIMIT_MS / 1000} s.`),
    },
  });
  return {
    kind: (source) => pool.run('tiles.kind', source, [], undefined, opts('a page kind')),
    page: (args) => pool.run('tiles.page', args, [], undefined, opts('a deep tile')),
    overlay: (args) => pool.run('tiles.overlay', args, [], undefined, opts('a deep overlay tile')),
  };
}
