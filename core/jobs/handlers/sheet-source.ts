import { sheetLineWorkKey } from '../../blobs/keys';
import type { ObjectStore } from '../../blobs/object-store';
import type { SheetSource } from '../compare-tasks';

/**
 * What the compare workers read of a stored sheet: its image, and its line-work image when processing
 * kept one (PDF pages whose objects draw line work; sheets processed before it was kept have none and
 * are compared by image analysis alone).
 */
export async function sheetSource(
  objects: ObjectStore,
  sheet: Record<string, unknown> & { id: string },
): Promise<SheetSource> {
  const path = await objects.localPath(String(sheet.image_key));
  const key = sheetLineWorkKey(
    String(sheet.project_id),
    String(sheet.drawing_id),
    String(sheet.id),
  );
  const lineWork = (await objects.stat(key)) ? await objects.localPath(key) : undefined;
  return { path, ...(lineWork ? { lineWork } : {}) };
}
