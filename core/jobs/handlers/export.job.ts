import { createHash } from 'node:crypto';
import { fileKey } from '../../blobs/keys';
import { ObjectStoreUnavailableError, type ObjectStore } from '../../blobs/object-store';
import { ApiError } from '../../domain/errors';
import { monotonicNow } from '../../domain/clock';
import { newId } from '../../domain/ids';
import type { ExportPayload } from '../../services/exports.service';
import { buildCsv } from '../../services/exports/csv';
import { unionBox } from '../../services/exports/geometry';
import {
  deleted,
  loadExportModel,
  wholeSheetOverlays,
  type ExportModel,
} from '../../services/exports/model';
import type { CloudedSheet } from '../../services/exports/clouded-pdf';
import type { PdfImage } from '../../services/exports/report-image';
import type { Db } from '../../store/db';
import {
  fileOfExportJob,
  insertExportFile,
  rowById,
} from '../../store/repositories/exports.repository';
import type { JobContext, JobHandler } from '../job-runner';

// The `export` job (contract §6, Exports): reads the finished comparison into the export model,
// builds the document — the pixel and PDF work in the worker pool, so a 200-sheet set never stalls
// the HTTP thread — and stores it as a File of the project (bytes first, then the row, which names
// this job). Result: {file_id, format}.
//
// Progress counts sheet pairs: the report and the clouded PDF advance as each sheet's part is done.
// Re-runnable: a run that finds the file an earlier run of this job stored returns it. A
// comparison deleted under the export fails it with `conflict` and leaves nothing stored.

export interface ExportEnv {
  db: Db;
  objects: ObjectStore;
}

const CONTENT_TYPE = {
  pdf_report: 'application/pdf',
  clouded_pdf: 'application/pdf',
  csv: 'text/csv',
};
const SUFFIX = { pdf_report: 'report.pdf', clouded_pdf: 'clouded.pdf', csv: 'changes.csv' };

/** A file name a person recognises: the newer set against the older, and what the file is. */
export function exportFilename(model: ExportModel, format: ExportPayload['format']): string {
  const slug = (s: string) =>
    s
      .normalize('NFKD')
      .replace(/[^\w.-]+/g, '-')
      .replace(/-+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 60) || 'set';
  const name = (d: ExportModel['newer']) => slug(d.revision ? `${d.name}-${d.revision}` : d.name);
  return `${name(model.newer)}_vs_${name(model.older)}_${SUFFIX[format]}`;
}

export function createExportHandler(env: ExportEnv): JobHandler<ExportPayload> {
  const { db, objects } = env;

  /** A stored object's local path; a missing one means its record was deleted under the export. */
  const localPath = async (key: string, what: string) => {
    try {
      return await objects.localPath(key);
    } catch (err) {
      if (err instanceof ObjectStoreUnavailableError) throw err; // storage down: 503, not gone
      throw deleted(what);
    }
  };

  /**
   * Throws `conflict` when part of the comparison was deleted since the model was read: its
   * overlays go with either drawing (and with DELETE /overlays/{id}).
   */
  const assertStillThere = async (model: ExportModel) => {
    const still = new Set(
      [...(await wholeSheetOverlays(db, model.comparison.id)).values()].map((o) => o.id),
    );
    for (const pair of model.pairs)
      if (pair.overlay && !still.has(pair.overlay.id)) throw deleted(`overlay ${pair.overlay.id}`);
  };

  async function report(ctx: JobContext<ExportPayload>, model: ExportModel): Promise<Uint8Array> {
    const p = ctx.payload;
    const total = model.pairs.length;
    const images: [string, PdfImage][] = [];
    let done = 0;
    for (const pair of model.pairs) {
      ctx.signal.throwIfAborted();
      // The sheets the report shows (report-pdf.ts): changed ones with a change passing the filter,
      // and every poorly aligned one.
      const wanted =
        pair.overlay &&
        (pair.overlay.low_confidence ||
          (pair.status === 'changed' &&
            (!model.review_status || pair.changes.some((c) => c.number !== null))));
      if (wanted) {
        const key =
          p.palette === 'colorblind' ? pair.overlay!.image_key_colorblind : pair.overlay!.image_key;
        const path = await localPath(key, `overlay ${pair.overlay!.id}`);
        const img = await ctx.pool.run('export.reportImage', { path }, [], ctx.signal);
        images.push([pair.overlay!.id, img]);
      }
      await ctx.progress(++done, total + 1);
    }
    const bytes = await ctx.pool.run(
      'export.reportPdf',
      {
        model,
        images,
        options: {
          page_size: p.page_size,
          palette: p.palette,
          exported_by: p.requested_by,
          exported_at: new Date().toISOString(),
        },
      },
      images.map(([, i]) => i.data.buffer as ArrayBuffer),
      ctx.signal,
    );
    await ctx.progress(total + 1, total + 1);
    return bytes;
  }

  async function clouded(ctx: JobContext<ExportPayload>, model: ExportModel): Promise<Uint8Array> {
    if (model.newer.file_content_type !== 'application/pdf')
      throw new ApiError(
        'conflict',
        `The newer revision (drawing ${model.newer.id}) was uploaded as ${model.newer.file_content_type}, not as a PDF, so there is no PDF of it to cloud; export pdf_report or csv instead.`,
      );
    const sheets: CloudedSheet[] = [];
    for (const pair of model.pairs) {
      if (!pair.sheet_b || !pair.overlay) continue;
      const numbered = pair.changes.filter((c) => c.number !== null);
      // A group's tag goes beside the whole group, not its first piece.
      const groupBox = (n: number) =>
        unionBox(numbered.filter((c) => c.number === n).map((c) => c.box_on_newer));
      const clouds = numbered.map((c) => ({
        change_id: c.id,
        number: c.number!,
        tagged: c.tagged,
        tag_box: c.tagged && c.group_size > 1 ? groupBox(c.number!) : c.box_on_newer,
        box: c.box_on_newer,
        kind: c.kind,
        category: c.category,
        description: c.description,
        review_status: c.review_status,
        note: c.note,
      }));
      if (clouds.length)
        sheets.push({
          page_index: pair.sheet_b.page_index,
          width: pair.sheet_b.width,
          height: pair.sheet_b.height,
          sheet_number: pair.sheet_b.sheet_number,
          clouds,
        });
    }
    const total = model.pairs.length;
    await ctx.progress(0, total);
    const path = await localPath(model.newer.file_object_key, `drawing ${model.newer.id}`);
    // One document, one task: the clouds of every sheet go into the same parse and save.
    const bytes = await ctx.pool.run(
      'export.cloudedPdf',
      {
        path,
        sheets,
        options: {
          palette: ctx.payload.palette,
          tags: ctx.payload.tags,
          now: new Date().toISOString(),
        },
      },
      [],
      ctx.signal,
    );
    await ctx.progress(total, total);
    return bytes;
  }

  return async (ctx) => {
    const p = ctx.payload;
    const earlier = await fileOfExportJob(db, ctx.job.id);
    if (earlier) return { file_id: earlier.id, format: p.format };

    const model = await loadExportModel(db, p.comparison_job_id, p.review_status);
    let bytes: Uint8Array;
    try {
      if (p.format === 'csv') {
        let done = 0;
        await ctx.progress(0, model.pairs.length);
        // Progress writes in order, after the (synchronous) build has handed them over.
        let written = Promise.resolve();
        bytes = buildCsv(model, p.origin, () => {
          const n = ++done;
          written = written.then(() => ctx.progress(n, model.pairs.length));
        });
        await written;
      } else if (p.format === 'pdf_report') bytes = await report(ctx, model);
      else if (p.format === 'clouded_pdf') bytes = await clouded(ctx, model);
      else throw new Error(`unknown export format ${String(p.format)}`);
    } catch (err) {
      // A file that vanished under a worker (a drawing deleted mid-export) is that deletion, not
      // a bug: say so. A cancel or shutdown passes through as it is.
      ctx.signal.throwIfAborted();
      await assertStillThere(model);
      throw err;
    }
    ctx.signal.throwIfAborted();
    // Deleted while the document was built: exporting what no longer exists would hand out a
    // document of records the API no longer has.
    await assertStillThere(model);

    const id = newId('file');
    const createdAt = monotonicNow();
    const key = fileKey(model.project.id, createdAt, id);
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const stored = await objects.put(key, buf, { contentType: CONTENT_TYPE[p.format] });
    try {
      const row = await db.transaction(async (tx) => {
        if (!(await rowById(tx, 'projects', model.project.id)))
          throw deleted(`project ${model.project.id}`);
        return await insertExportFile(tx, {
          id,
          organizationId: ctx.job.organization_id,
          projectId: model.project.id,
          jobId: ctx.job.id,
          filename: exportFilename(model, p.format),
          contentType: CONTENT_TYPE[p.format],
          size: stored.size,
          sha256: stored.sha256 || createHash('sha256').update(buf).digest('hex'),
          objectKey: key,
          createdAt,
        });
      });
      return { file_id: row.id, format: p.format };
    } catch (err) {
      // No row, so no file: take the bytes back (boot-time reconcile would, later).
      await objects.delete(key).catch(() => {});
      throw err;
    }
  };
}
