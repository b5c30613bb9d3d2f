import {
  blockCropKey,
  sheetImageKey,
  sheetLineWorkKey,
  sheetPrefix,
  sheetThumbnailKey,
} from '../../blobs/keys';
import type { ObjectStore } from '../../blobs/object-store';
import { ApiError } from '../../domain/errors';
import { newId } from '../../domain/ids';
import type { Db } from '../../store/db';
import { getRow } from '../../store/list-query';
import { deriveIssue } from '../../domain/issue-date';
import {
  applyDerivedIssue,
  countSheets,
  getDrawingById,
  insertProcessedSheet,
  insertSearchRuns,
  sheetAtPage,
  sheetIssueEvidence,
} from '../../store/repositories/drawings.repository';
import type { Row } from '../../store/repositories/row';
import { setDrawingStatusWithEvent } from '../../services/webhooks.service';
import { wholeSheetBlock } from '../../vision/sheet/blocks';
import { adoptAttemptUnit, cleanEarlierAttempts, trackAttemptUnit } from '../attempt-objects';
import { ingestPageInPool } from '../ingest-in-pool';
import { JobAbortedError, type JobHandler } from '../job-runner';
import { LeaseLostError } from '../jobs.repository';

// The `process` job (contract §4 Drawing): every page of the drawing's file becomes a sheet with
// its image, thumbnail, text, title-block metadata and blocks. Pages run in the worker pool, as
// many at once as it has workers, the last pages of a drawing rendered in bands across the workers
// (ingest-in-pool.ts), so memory stays bounded by a few pages and the HTTP thread never rasterizes.
// Re-runnable: pages already stored are skipped, so a resumed job does only the rest and a person's
// corrections on stored sheets are kept. At the end the drawing gets its issue date and revision
// (core/domain/issue-date.ts), except the ones a person set.

const SEARCH_CHUNK = 200;

/** A Buffer over the same memory (no copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export interface ProcessConfig {
  dpi: number;
  maxPagesPerDrawing: number;
  maxPixelsPerPage: number;
}

export function createProcessHandler(env: {
  db: Db;
  objects: ObjectStore;
  config: ProcessConfig;
}): JobHandler<{ drawing_id: string }> {
  const { db, objects, config } = env;
  return async (ctx) => {
    const drawing = await getDrawingById(db, ctx.payload.drawing_id);
    if (!drawing) return { skipped: 'the drawing was deleted' };
    const org = String(drawing.organization_id);
    const projectId = String(drawing.project_id);
    try {
      // What an earlier run of this job that died wrote and no row names (attempt-objects.ts).
      await cleanEarlierAttempts(db, objects, ctx.job);
      const file = await getRow<Row>(db, 'files', org, String(drawing.file_id));
      if (!file || file.status !== 'uploaded')
        throw new ApiError('conflict', 'The drawing’s file has no stored bytes.');
      const source = {
        path: await objects.localPath(String(file.object_key)),
        bytesKey: String(file.sha256),
        contentType: String(file.content_type),
        maxPages: config.maxPagesPerDrawing,
        maxPixels: config.maxPixelsPerPage,
      };
      const info = await ctx.pool.run(
        'ingest.open',
        { ...source, dpi: config.dpi },
        [],
        ctx.signal,
      );
      // The bytes passed ingest.open's checks: the workers rendering pages need not scan them again.
      const pageSource = { ...source, streamsChecked: true };
      const total = info.pageCount;
      let done = await countSheets(db, drawing.id);
      await ctx.progress(done, total);

      let next = 0;
      const lane = async () => {
        while (next < total) {
          const index = next++;
          if (await sheetAtPage(db, drawing.id, index)) continue;
          ctx.signal.throwIfAborted();
          const page = await ingestPageInPool(
            ctx.pool,
            pageSource,
            { index, dpi: config.dpi, size: info.pages[index], pagesLeft: total - index },
            info.textSource,
            ctx.signal,
          );
          const sheetId = newId('sheet');
          const imageKey = sheetImageKey(projectId, drawing.id, sheetId);
          const thumbnailKey = sheetThumbnailKey(projectId, drawing.id, sheetId);
          // Every object of the sheet is under its prefix: recorded (fenced) before the bytes go up,
          // adopted by the sheet's transaction, cleaned up if this run dies in between.
          const unitPrefix = sheetPrefix(projectId, drawing.id, sheetId);
          await trackAttemptUnit(db, ctx.job, { kind: 'sheet', id: sheetId, prefix: unitPrefix });
          // Bytes first, then the rows in one transaction: a row never points at missing bytes.
          // The worker transferred these buffers: wrap them, do not copy them (Buffer.from of a
          // Uint8Array copies; a multi-MB sheet PNG costs milliseconds of the HTTP thread).
          await objects.put(imageKey, asBuffer(page.sheetPng), { contentType: 'image/png' });
          await objects.put(thumbnailKey, asBuffer(page.thumbnailWebp), {
            contentType: 'image/webp',
          });
          // The page's line work (PDF pages whose objects draw it): the compare reads it beside the
          // sheet image, by the sheet's key (no row names it; it goes with the sheet's prefix).
          if (page.lineWorkPng)
            await objects.put(
              sheetLineWorkKey(projectId, drawing.id, sheetId),
              asBuffer(page.lineWorkPng),
              { contentType: 'image/png' },
            );
          // The Sheet block first (contract §4: the whole page, one per sheet). Its image is the sheet
          // image itself: the same key, so no copy is stored and its tiles are the sheet's.
          const blocks = [
            { id: newId('block'), ...wholeSheetBlock(page.width, page.height), imageKey },
          ];
          for (const b of page.blocks) {
            const id = newId('block');
            const key = blockCropKey(projectId, drawing.id, sheetId, id);
            await objects.put(key, asBuffer(b.png), { contentType: 'image/png' });
            blocks.push({
              id,
              type: b.type,
              bbox: b.bbox,
              identifier: b.identifier,
              title: b.title,
              scale: b.scale,
              imageKey: key,
            });
          }
          ctx.signal.throwIfAborted();
          // Text runs go to the search index in chunks, yielding between them, so a text-dense
          // sheet (thousands of runs) never stalls the HTTP thread.
          const runs = [
            ...page.text.map((t) => ({
              text: t.text,
              bbox: { x: t.x, y: t.y, width: t.width, height: t.height },
            })),
            // PDF markup annotations (FreeText callouts, comments on clouds): searchable too.
            ...(page.markups ?? []).map((t) => ({
              text: t.text,
              kind: 'markup' as const,
              bbox: { x: t.x, y: t.y, width: t.width, height: t.height },
            })),
          ];
          // Records only while this run holds the job (a run cut off past its lease writes nothing).
          await ctx.fence();
          for (let k = 0; k < runs.length; k += SEARCH_CHUNK) {
            await insertSearchRuns(
              db,
              { sheetId, drawingId: drawing.id, projectId, organizationId: org },
              runs.slice(k, k + SEARCH_CHUNK),
            );
            await new Promise((r) => setImmediate(r));
          }
          ctx.signal.throwIfAborted();
          await ctx.fence();
          await db.transaction(async (tx) => {
            await ctx.fence(tx);
            await insertProcessedSheet(
              tx,
              {
                id: sheetId,
                organizationId: org,
                projectId,
                drawingId: drawing.id,
                pageIndex: index,
                sheetNumber: page.metadata.sheet_number,
                title: page.metadata.title,
                discipline: page.metadata.discipline,
                revision: page.metadata.revision,
                issued: page.metadata.issued,
                width: page.width,
                height: page.height,
                dpi: page.dpi,
                textSource: page.textSource,
                imageKey,
                thumbnailKey,
              },
              blocks,
            );
            await adoptAttemptUnit(tx, ctx.job.id, unitPrefix);
          });
          done++;
          await ctx.progress(done, total);
        }
      };
      await Promise.all(Array.from({ length: Math.max(1, Math.min(ctx.pool.size, total)) }, lane));
      // The set's issue date and revision come from all its sheets, those stored by an earlier run
      // of this job included, so they are decided once every page is in. In one transaction with
      // the status: drawing.ready (in the webhook outbox with it) already carries them.
      const issue = deriveIssue({
        sheets: await sheetIssueEvidence(db, drawing.id),
        fileName: String(file.filename),
        pdfCreationDate: info.creationDate,
        now: new Date(),
      });
      await db.transaction(async (tx) => {
        await applyDerivedIssue(tx, drawing.id, issue);
        await setDrawingStatusWithEvent(tx, drawing.id, 'Ready', total);
      });
      return { sheet_count: total };
    } catch (e) {
      // A shutdown leaves the job resumable (it runs again at the next start); anything else —
      // bad input, cancel, a bug — ends the drawing as Failed with the job's error explaining why.
      const reason =
        e instanceof JobAbortedError
          ? e.reason
          : ctx.signal.aborted
            ? (ctx.signal.reason as JobAbortedError)?.reason
            : undefined;
      // Nor does a run that lost the job to another process (team mode): that run decides.
      if (
        reason !== 'shutdown' &&
        reason !== 'yield' &&
        reason !== 'lease_lost' &&
        !(e instanceof LeaseLostError) &&
        (await ctx.holdsLease())
      )
        await setDrawingStatusWithEvent(
          db,
          drawing.id,
          'Failed',
          await countSheets(db, drawing.id),
        );
      throw e;
    }
  };
}
