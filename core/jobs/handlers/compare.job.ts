import { sheetSource } from './sheet-source';
import { overlayImageKey, overlayPrefix } from '../../blobs/keys';
import type { ObjectStore } from '../../blobs/object-store';
import { ApiError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import type { ComparePayload } from '../../services/compare.service';
import { pairSheets, type BlockInfo, type SheetInfo, type SheetPair } from '../../services/pairing';
import type { Db } from '../../store/db';
import {
  blocksOfSheet,
  countOverlaysOfJob,
  getById,
  insertOverlay,
  overlayFor,
  sheetsOfDrawing,
} from '../../store/repositories/overlays.repository';
import type { Row } from '../../store/repositories/row';
import { decodeGrey } from '../../vision/compare/encode.adapter';
import type { GreyImage } from '../../vision/types';
import { recordOverlayCreated } from '../../services/webhooks.service';
import {
  adoptAttemptUnit,
  cleanEarlierAttempts,
  discardAttemptUnit,
  trackAttemptUnit,
} from '../attempt-objects';
import { type JobContext, type JobHandler } from '../job-runner';
import type { JobRow, JobsRepository } from '../jobs.repository';

// The `compare` job (contract §6). One handler, three shapes of payload:
// - mode 'drawing' (the root of POST /drawings/{id}/compare or POST /compare type Drawing): pairs the
//   sheets, creates one child `compare` job per sheet pair (target: the newer sheet), waits for them
//   and stores {pairs, added_sheets, removed_sheets, overlay_count};
// - mode 'sheet' (a child, or the root of a Sheet comparison): registers the sheets, pairs their
//   blocks and stores one overlay per block pair — in the worker pool; bytes first, then the row;
// - mode 'block' (a Block comparison): the two blocks, registered block to block.
// Every overlay carries the ROOT job's id, so GET /overlays?job_id=<root> returns all of them.
// With analyze: true, each sheet job creates one `analyze` child per overlay it stored.
// Re-runnable: overlays are unique per (root job, block pair); a re-run skips the pairs stored and
// gets its existing children back from createChild (stable keys).

export interface CompareEnv {
  db: Db;
  objects: ObjectStore;
  /** The runner's repository and events: a sheet job reports the root's progress as it finishes. */
  jobs: { repository: JobsRepository; publish(row: JobRow): void };
}

type Payload = ComparePayload & { root_job_id?: string };

const sheetInfo = (r: Row): SheetInfo => ({
  id: r.id,
  sheet_number: (r.sheet_number as string | null) ?? null,
  title: (r.title as string | null) ?? null,
  page_index: r.page_index as number,
});

const blockInfo = (r: Row): BlockInfo => ({
  id: r.id,
  type: String(r.type),
  identifier: (r.identifier as string | null) ?? null,
  title: (r.title as string | null) ?? null,
  bbox: JSON.parse(String(r.bbox)) as BlockInfo['bbox'],
});

/** 32x32 ink signature of a thumbnail (mean removed, unit length), for visual pairing. */
async function signature(path: string): Promise<Float64Array> {
  const img: GreyImage = await decodeGrey(path);
  const N = 32;
  const out = new Float64Array(N * N);
  const cnt = new Float64Array(N * N);
  for (let y = 0; y < img.height; y++) {
    const gy = Math.min(N - 1, Math.floor((y * N) / img.height));
    for (let x = 0; x < img.width; x++) {
      const g = gy * N + Math.min(N - 1, Math.floor((x * N) / img.width));
      out[g]! += 255 - img.data[y * img.width + x]!;
      cnt[g]!++;
    }
  }
  let mean = 0;
  for (let i = 0; i < out.length; i++) mean += out[i]! /= Math.max(1, cnt[i]!);
  mean /= out.length;
  let norm = 0;
  for (let i = 0; i < out.length; i++) norm += (out[i]! -= mean) ** 2;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

export function createCompareHandler(env: CompareEnv): JobHandler<Payload> {
  const { db, objects } = env;

  const emitProgress = async (jobId: string, completed: number, total: number) => {
    const row = await env.jobs.repository.updateProgress(jobId, completed, total);
    if (row) env.jobs.publish(row);
  };

  async function drawingCompare(ctx: JobContext<Payload>, p: Payload) {
    const a = await getById(db, 'drawings', p.a_id);
    const b = await getById(db, 'drawings', p.b_id);
    if (!a || !b)
      throw new ApiError(
        'conflict',
        `Drawing ${!a ? p.a_id : p.b_id} was deleted while the comparison was queued.`,
      );
    const sheetsA = await sheetsOfDrawing(db, a.id);
    const sheetsB = await sheetsOfDrawing(db, b.id);
    const rows = new Map([...sheetsA, ...sheetsB].map((r) => [r.id, r]));
    // Sheets left over after number and title pair by the look of their thumbnails.
    const first = pairSheets(sheetsA.map(sheetInfo), sheetsB.map(sheetInfo));
    const sigs = new Map<string, Float64Array>();
    for (const id of first.removed.length && first.added.length
      ? [...first.removed, ...first.added]
      : []) {
      const key = rows.get(id)?.thumbnail_key;
      if (key) sigs.set(id, await signature(await objects.localPath(String(key))));
    }
    const similarity = (x: SheetInfo, y: SheetInfo) => {
      const sa = sigs.get(x.id);
      const sb = sigs.get(y.id);
      if (!sa || !sb) return 0;
      let dot = 0;
      for (let i = 0; i < sa.length; i++) dot += sa[i]! * sb[i]!;
      return Math.max(0, dot);
    };
    const pairing = pairSheets(sheetsA.map(sheetInfo), sheetsB.map(sheetInfo), similarity);
    const total = pairing.pairs.length;
    await ctx.progress(0, total);
    for (const pair of pairing.pairs) {
      await ctx.createChild(`sheet:${pair.sheet_a_id}:${pair.sheet_b_id}`, {
        type: 'compare',
        target_type: 'sheet',
        target_id: pair.sheet_b_id,
        payload: {
          mode: 'sheet',
          a_id: pair.sheet_a_id,
          b_id: pair.sheet_b_id,
          analyze: p.analyze,
          root_job_id: ctx.job.id,
        } satisfies Payload,
      });
    }
    await ctx.waitForChildren();
    await ctx.progress(total, total);
    return {
      pairs: pairing.pairs,
      added_sheets: pairing.added,
      removed_sheets: pairing.removed,
      overlay_count: await countOverlaysOfJob(db, ctx.job.id),
    };
  }

  /** Compares one sheet pair (or the given block pair) and stores its overlays under the root job. */
  async function pairCompare(
    ctx: JobContext<Payload>,
    rootId: string,
    sheetA: Row,
    sheetB: Row,
    blocksA: BlockInfo[],
    blocksB: BlockInfo[],
    given?: { block_a_id: string; block_b_id: string }[],
  ) {
    const skip: string[] = [];
    for (const x of blocksA)
      for (const y of blocksB)
        if (await overlayFor(db, rootId, x.id, y.id)) skip.push(`${x.id}:${y.id}`);
    const out = await ctx.pool.run(
      'compare.sheetPair',
      {
        a: await sheetSource(objects, sheetA),
        b: await sheetSource(objects, sheetB),
        blocksA,
        blocksB,
        ...(given ? { given } : {}),
        skip,
      },
      [],
      ctx.signal,
    );
    const projectId = String(sheetA.project_id);
    for (const o of out.overlays) {
      ctx.signal.throwIfAborted();
      const id = newId('overlay');
      const images: Record<string, string> = {
        combined: overlayImageKey(projectId, id, 'combined'),
        combined_colorblind: overlayImageKey(projectId, id, 'combined-colorblind'),
        addition: overlayImageKey(projectId, id, 'addition'),
        deletion: overlayImageKey(projectId, id, 'deletion'),
        aligned_b: overlayImageKey(projectId, id, 'aligned-b'),
      };
      // Bytes first, then the row: a row never points at missing bytes. The overlay's objects are
      // recorded (fenced) first, adopted by its row's transaction, cleaned up if this run dies.
      const unitPrefix = overlayPrefix(projectId, id);
      await trackAttemptUnit(db, ctx.job, { kind: 'overlay', id, prefix: unitPrefix });
      await objects.put(images.combined!, Buffer.from(o.png.combined), {
        contentType: 'image/png',
      });
      await objects.put(images.combined_colorblind!, Buffer.from(o.png.combined_colorblind), {
        contentType: 'image/png',
      });
      await objects.put(images.addition!, Buffer.from(o.png.addition), {
        contentType: 'image/png',
      });
      await objects.put(images.deletion!, Buffer.from(o.png.deletion), {
        contentType: 'image/png',
      });
      await objects.put(images.aligned_b!, Buffer.from(o.png.aligned_b), {
        contentType: 'image/png',
      });
      ctx.signal.throwIfAborted();
      // overlay.created goes into the webhook outbox with the row (contract §10); a pair stored by an
      // earlier run (ON CONFLICT DO NOTHING returns that row) is not announced again.
      const stored = await db.transaction(async (tx) => {
        // Only the run that holds the job records its overlays (fencing).
        await ctx.fence(tx);
        const row = await insertOverlay(
          tx,
          {
            organizationId: String(sheetA.organization_id),
            projectId,
            jobId: rootId,
            blockAId: o.block_a_id,
            blockBId: o.block_b_id,
            score: o.score,
            width: o.width,
            height: o.height,
            transform: o.transform,
            alignment: o.alignment,
            stats: o.stats,
            images,
          },
          id,
        );
        if (row.id === id) await recordOverlayCreated(tx, row);
        await adoptAttemptUnit(tx, ctx.job.id, unitPrefix);
        return row.id;
      });
      // The pair was stored meanwhile under another id: these objects are nobody's.
      if (stored !== id) await discardAttemptUnit(db, objects, ctx.job.id, unitPrefix);
    }
    const overlays: Row[] = [];
    for (const p of out.pairs) {
      const r = await overlayFor(db, rootId, p.block_a_id, p.block_b_id);
      if (r) overlays.push(r);
    }
    if ((ctx.payload as Payload).analyze) {
      for (const ov of overlays) {
        await ctx.createChild(`analyze:${ov.id}`, {
          type: 'analyze',
          target_type: 'overlay',
          target_id: ov.id,
          payload: { overlay_id: ov.id },
        });
      }
    }
    const blockA = new Set(out.pairs.map((p) => p.block_a_id));
    const blockB = new Set(out.pairs.map((p) => p.block_b_id));
    return {
      registration: out.sheet,
      block_pairs: out.pairs.map((p) => ({
        ...p,
        overlay_id:
          overlays.find((o) => o.block_a_id === p.block_a_id && o.block_b_id === p.block_b_id)
            ?.id ?? null,
      })),
      unpaired_blocks_a: blocksA.filter((x) => !blockA.has(x.id)).map((x) => x.id),
      unpaired_blocks_b: blocksB.filter((x) => !blockB.has(x.id)).map((x) => x.id),
      overlay_count: overlays.length,
    };
  }

  async function sheetCompare(ctx: JobContext<Payload>, p: Payload) {
    const rootId = p.root_job_id ?? ctx.job.id;
    const sheetA = await getById(db, 'sheets', p.a_id);
    const sheetB = await getById(db, 'sheets', p.b_id);
    if (!sheetA || !sheetB)
      throw new ApiError(
        'conflict',
        `Sheet ${!sheetA ? p.a_id : p.b_id} was deleted while the comparison was queued.`,
      );
    const res = await pairCompare(
      ctx,
      rootId,
      sheetA,
      sheetB,
      (await blocksOfSheet(db, sheetA.id)).map(blockInfo),
      (await blocksOfSheet(db, sheetB.id)).map(blockInfo),
    );
    if (p.root_job_id && p.root_job_id !== ctx.job.id) {
      // Progress of the root: its children that are done, this one included.
      const siblings = await env.jobs.repository.children(p.root_job_id);
      const done = siblings.filter(
        (s) => s.id === ctx.job.id || ['Completed', 'Failed', 'Canceled'].includes(s.status),
      ).length;
      await emitProgress(p.root_job_id, Math.min(done, siblings.length), siblings.length);
      return { sheet_a_id: sheetA.id, sheet_b_id: sheetB.id, ...res };
    }
    const pair: SheetPair = {
      sheet_a_id: sheetA.id,
      sheet_b_id: sheetB.id,
      method: 'sheet_number',
      confidence: 1,
    };
    return {
      pairs: [{ ...pair, method: 'given', confidence: 1 }],
      added_sheets: [],
      removed_sheets: [],
      ...res,
      overlay_count: await countOverlaysOfJob(db, rootId),
    };
  }

  async function blockCompare(ctx: JobContext<Payload>, p: Payload) {
    const blockA = await getById(db, 'blocks', p.a_id);
    const blockB = await getById(db, 'blocks', p.b_id);
    if (!blockA || !blockB)
      throw new ApiError(
        'conflict',
        `Block ${!blockA ? p.a_id : p.b_id} was deleted while the comparison was queued.`,
      );
    const sheetA = (await getById(db, 'sheets', String(blockA.sheet_id)))!;
    const sheetB = (await getById(db, 'sheets', String(blockB.sheet_id)))!;
    const res = await pairCompare(
      ctx,
      ctx.job.id,
      sheetA,
      sheetB,
      [blockInfo(blockA)],
      [blockInfo(blockB)],
      [{ block_a_id: blockA.id, block_b_id: blockB.id }],
    );
    return { ...res, overlay_count: await countOverlaysOfJob(db, ctx.job.id) };
  }

  return async (ctx) => {
    const p = ctx.payload;
    // What an earlier run of this job that died wrote and no row names (attempt-objects.ts).
    await cleanEarlierAttempts(db, objects, ctx.job);
    await ctx.progress(0, 1);
    let result: unknown;
    if (p.mode === 'drawing') return drawingCompare(ctx, p);
    if (p.mode === 'sheet') result = await sheetCompare(ctx, p);
    else if (p.mode === 'block') result = await blockCompare(ctx, p);
    else throw new Error(`unknown compare mode ${String((p as { mode?: unknown }).mode)}`);
    await ctx.progress(1, 1);
    return result;
  };
}
