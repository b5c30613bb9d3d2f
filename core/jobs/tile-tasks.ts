import type { DeepTileRenderer, RenderOrder } from '../services/tiles.service';
import type { OverlayTilesArgs, TileCut } from '../vision/tiles/deep-tiles';
import type { WorkerPool } from './worker-pool';

// Deep-zoom tiles on the worker pool (worker-tasks.ts 'tiles.*'), at low priority: they wait for
// every queued job task. Among themselves they run in the order the tile service gives
// (RenderOrder.rank: the viewer's urgency, then the newest step, then the order the step asked for
// its tiles). A task renders a region of up to 2 x 2 tiles, or a few such cells of a view asked for
// together (up to GROUP_TILES, tiles.service.ts groupsOf), in tens to a few hundred milliseconds;
// the time limit ends a worker stuck in one blocking PDFium call. A region nobody waits for any
// more (every request for its tiles was cancelled: `signal`) leaves the queue; one already
// rendering finishes and is stored (abortQueuedOnly). When a worker takes a render, it is cut down
// to the tiles still wanted then (RenderOrder.wanted): the others are not made.

/** Longest a tile task may run, ms. */
const TILE_TASK_LIMIT_MS = 30_000;

/**
 * The indices of the tiles (of `count`) a render makes when it starts: those `order.wanted` still
 * wants, or all when it says none (the render was dropped meanwhile, or nobody asks).
 */
function keptTiles(count: number, order: RenderOrder | undefined): number[] {
  const all = [...Array(count).keys()];
  const wanted = order?.wanted?.();
  if (!wanted) return all;
  const kept = all.filter((i) => wanted[i] !== false);
  return kept.length > 0 ? kept : all;
}

/** The `count` tiles of a render in their places, `made(j)` for the j-th kept one; undefined: not made. */
function inPlace(
  count: number,
  kept: readonly number[],
  made: (j: number) => Uint8Array | undefined,
): (Uint8Array | undefined)[] {
  const out: (Uint8Array | undefined)[] = Array(count).fill(undefined);
  kept.forEach((i, j) => (out[i] = made(j)));
  return out;
}

/** `args` with only the tiles `kept` (indices in order); each cell keeps its tiles still wanted. */
export function cutOverlayArgs(args: OverlayTilesArgs, kept: readonly number[]): OverlayTilesArgs {
  if (kept.length === args.tiles.length) return args;
  const keep = new Set(kept);
  const sizes = args.cells ?? [args.tiles.length];
  const cells: number[] = [];
  for (let c = 0, at = 0; c < sizes.length; at += sizes[c]!, c++) {
    let n = 0;
    for (let i = at; i < at + sizes[c]!; i++) if (keep.has(i)) n++;
    if (n > 0) cells.push(n);
  }
  const { cells: _cells, ...rest } = args;
  return {
    ...rest,
    tiles: kept.map((i) => args.tiles[i]!),
    ...(cells.length > 1 ? { cells } : {}),
  };
}

export function poolTileRenderer(pool: WorkerPool): DeepTileRenderer {
  const opts = (what: string, order?: RenderOrder) => ({
    priority: 'low' as const,
    abortQueuedOnly: true,
    limit: {
      ms: TILE_TASK_LIMIT_MS,
      error: () => new Error(`Rendering ${what} ran past ${TILE_TASK_LIMIT_MS / 1000} s.`),
    },
    ...(order?.rank ? { rank: order.rank } : {}),
  });
  return {
    workers: pool.size,
    kind: (source) => pool.run('tiles.kind', source, [], undefined, opts('a page kind')),
    page: async (args, signal, onTimings, order) => {
      let kept: number[] = [];
      const r = await pool.run('tiles.page', args, [], signal, {
        ...opts('deep tiles', order),
        startArgs: (a) => {
          const full = a as { cuts: TileCut[] };
          kept = keptTiles(full.cuts.length, order);
          return { ...full, cuts: kept.map((i) => full.cuts[i]!) };
        },
      });
      onTimings?.(r.timings);
      return inPlace(args.cuts.length, kept, (j) => r.tiles[j]);
    },
    overlay: async (args, signal, onTimings, onTiles, order) => {
      // A render of several cells sends each cell's tiles when they are made (taskProgress), by
      // their place in the render as it started (`kept`: the tiles still wanted then).
      let kept: number[] = [];
      const early: Uint8Array[] = [];
      const r = await pool.run('tiles.overlay', args, [], signal, {
        ...opts('deep overlay tiles', order),
        startArgs: (a) => {
          kept = keptTiles(args.tiles.length, order);
          return cutOverlayArgs(a as OverlayTilesArgs, kept);
        },
        onProgress: (v) => {
          const { first, tiles } = v as { first: number; tiles: Uint8Array[] };
          tiles.forEach((w, i) => (early[first + i] = w));
          // In runs of tiles that follow each other in the render as asked (a cell's, uncut).
          for (let i = 0; i < tiles.length;) {
            let n = 1;
            while (i + n < tiles.length && kept[first + i + n] === kept[first + i]! + n) n++;
            onTiles?.(kept[first + i]!, tiles.slice(i, i + n));
            i += n;
          }
        },
      });
      onTimings?.(r.timings);
      return inPlace(args.tiles.length, kept, (j) => r.tiles[j] ?? early[j]);
    },
  };
}
