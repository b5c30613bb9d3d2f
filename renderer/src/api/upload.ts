// Upload one PDF set: POST /files → PUT upload_url (with progress) → POST /drawings, which
// queues the `process` job. Progress lives in the UI store so the tray survives navigation.

import type { QueryClient } from '@tanstack/react-query';
import { ui } from '../state/ui-store';
import { type ApiClient, errorDetail, newKey, uploadBytes } from './client';
import type { AcceptedContentType, Drawing, Id } from './types';

const TYPES: Record<string, AcceptedContentType> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  tif: 'image/tiff',
  tiff: 'image/tiff',
};

/** The declared content type for a dropped file, or null when the service would refuse it. */
export function contentTypeFor(file: { name: string; type: string }): AcceptedContentType | null {
  const byMime = Object.values(TYPES).find((t) => t === file.type);
  if (byMime) return byMime;
  const ext = file.name.toLowerCase().split('.').pop() ?? '';
  return TYPES[ext] ?? null;
}

/** "20190602_beam-proposal_5-sheets.pdf" → "20190602_beam-proposal_5-sheets". */
export function drawingNameFor(filename: string): string {
  return filename.replace(/\.(pdf|png|jpe?g|tiff?)$/i, '') || filename;
}

let seq = 0;
/**
 * Files dropped together upload side by side but become drawings one after the other, in the
 * order they were given: same-day issues keep their upload order as their issue order (contract
 * §4, compareIssues), so that order must not depend on which upload happened to finish first.
 */
let registrations: Promise<void> = Promise.resolve();

export async function uploadDrawing(
  api: ApiClient,
  qc: QueryClient,
  projectId: Id,
  file: File,
): Promise<Drawing | null> {
  const localId = `up${++seq}`;
  const myTurn = registrations;
  let done = () => {};
  registrations = new Promise<void>((r) => (done = r));
  try {
    return await upload(api, qc, projectId, file, localId, myTurn);
  } finally {
    done();
  }
}

async function upload(
  api: ApiClient,
  qc: QueryClient,
  projectId: Id,
  file: File,
  localId: string,
  myTurn: Promise<void>,
): Promise<Drawing | null> {
  ui.addUpload({
    localId,
    projectId,
    filename: file.name,
    size: file.size,
    phase: 'uploading',
    uploaded: 0,
    drawingId: null,
    jobId: null,
    error: null,
  });
  const contentType = contentTypeFor(file);
  if (!contentType) {
    ui.updateUpload(localId, {
      phase: 'failed',
      error: `${file.name} is not a PDF, PNG, JPEG or TIFF file.`,
    });
    return null;
  }
  try {
    const created = await api.createFile({
      project_id: projectId,
      filename: file.name,
      content_type: contentType,
      size_bytes: file.size,
    });
    await uploadBytes(created.upload_url, file, contentType, (loaded) =>
      ui.updateUpload(localId, { uploaded: loaded }),
    );
    ui.updateUpload(localId, { phase: 'registering', uploaded: file.size });
    await myTurn;
    const drawing = await api.createDrawing(
      { project_id: projectId, name: drawingNameFor(file.name), file_id: created.id },
      newKey(),
    );
    ui.updateUpload(localId, {
      phase:
        drawing.status === 'Ready'
          ? 'ready'
          : drawing.status === 'Failed'
            ? 'failed'
            : 'processing',
      drawingId: drawing.id,
      jobId: drawing.job_id,
    });
    void qc.invalidateQueries({ queryKey: ['drawings', projectId] });
    void qc.invalidateQueries({ queryKey: ['jobs'] });
    return drawing;
  } catch (err) {
    ui.updateUpload(localId, { phase: 'failed', error: errorDetail(err) });
    return null;
  }
}
