import type { DeepTileRenderer } from '../services/tiles.service';
import type { WorkerPool } from './worker-pool';

// Deep-zoom tiles on the worker pool (worker-tasks.ts 'tiles.*'), at low priority: they wait for
// every queued job task and the newest request goes first (the tile on screen now). A task renders
// a region of up to 2 x 2 tiles, or a few such cells of a view asked for together (up to
// GROUP_TILES, tiles.service.ts groupsOf), in tens to a few hundred milliseconds; the time limit ends a worker stuck in one blocking PDFium call. A region
// nobody waits for any more (every request for its tiles was cancelled: `signal`) leaves the queue;
// one already rendering finishes and is stored (abortQueuedOnly).

/** Longest a tile task may run, ms. */
const TILE_TASK_LIMIT_MS = 30_000;

export function poolTileRenderer(pool: WorkerPool): DeepTileRenderer {
  const opts = (what: string) => ({
    priority: 'low' as const,
    abortQueuedOnly: true,
    limit: {
      ms: TILE_TASK_LIMIT_MS,
      error: () => new Error(`Rendering ${what} ran past ${TILE_TASK_LIMIT_MS / 1000} s.`),
    },
  });
  return {
    workers: pool.size,
    kind: (source) => pool.run('tiles.kind', source, [], undefined, opts('a page kind')),
    page: async (args, signal, onTimings) => {
      const r = await pool.run('tiles.page', args, [], signal, opts('deep tiles'));
      onTimings?.(r.timings);
      return r.tiles;
    },
    overlay: async (args, signal, onTimings, onTiles) => {
      // A render of several cells sends each cell's tiles when they are made (taskProgress).
      const early: Uint8Array[] = [];
      const r = await pool.run('tiles.overlay', args, [], signal, {
        ...opts('deep overlay tiles'),
        onProgress: (v) => {
          const { first, tiles } = v as { first: number; tiles: Uint8Array[] };
          tiles.forEach((w, i) => (early[first + i] = w));
          onTiles?.(first, tiles);
        },
      });
      onTimings?.(r.timings);
      return r.tiles.map((w, i) => w ?? early[i]!);
    },
  };
}
