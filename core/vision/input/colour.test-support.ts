// Generated drawings with and without colour for the colour tests (pdfium-colour.test.ts, the
// ingest and service tests): a grey plan (black line work, a grey fill, text) and, on the revised
// issue, a red revision cloud and a blue markup note around one room.
import { buildPdf } from './synthetic-inputs';

/** The cloud's box in PDF points (y up) on a US Letter page. */
export const CLOUD_PT = { x0: 300, y0: 400, x1: 500, y1: 550 };

/** Black and grey line work, a 50 % grey fill and text: no colour anywhere. */
export const GREY_PLAN =
  'q 0 G 2 w 72 72 m 540 72 l S 72 72 m 72 720 l S 100 300 400 300 re S ' +
  '0.5 g 120 320 80 60 re f 0.3 G 1 w 320 420 m 480 530 l S Q ' +
  'BT /F1 24 Tf 100 700 Td (PLAN A101) Tj ET BT /F1 10 Tf 330 470 Td (ROOM 12) Tj ET';

/** A revision cloud (red scallops, 3 pt pen) around CLOUD_PT, drawn edge by edge. */
export function cloudOps(rgb = '1 0 0'): string {
  const { x0, y0, x1, y1 } = CLOUD_PT;
  const step = 25;
  const bump = 10;
  const ops: string[] = [`q ${rgb} RG 3 w ${x0} ${y0} m`];
  // Bottom edge left to right (bumps down), right edge up (bumps right), top right to left (bumps
  // up), left edge down (bumps left).
  for (let x = x0; x < x1; x += step)
    ops.push(`${x + 5} ${y0 - bump} ${x + step - 5} ${y0 - bump} ${x + step} ${y0} c`);
  for (let y = y0; y < y1; y += step)
    ops.push(
      `${x1 + bump} ${y + 5} ${x1 + bump} ${y + step - 5} ${x1} ${Math.min(y1, y + step)} c`,
    );
  for (let x = x1; x > x0; x -= step)
    ops.push(`${x - 5} ${y1 + bump} ${x - step + 5} ${y1 + bump} ${x - step} ${y1} c`);
  for (let y = y1; y > y0; y -= step)
    ops.push(
      `${x0 - bump} ${y - 5} ${x0 - bump} ${y - step + 5} ${x0} ${Math.max(y0, y - step)} c`,
    );
  ops.push('S Q');
  return ops.join(' ');
}

/** The revised plan: GREY_PLAN plus a red cloud and a blue note "VERIFY" below the plan. */
export const CLOUDED_PLAN =
  GREY_PLAN + ' ' + cloudOps() + ' BT 0 0 1 rg /F1 14 Tf 420 150 Td (VERIFY) Tj ET';

/** The plan with one coloured speck of 1.5 x 1.5 pt (about 4 x 4 px at 200 dpi). */
export const SPECKED_PLAN = GREY_PLAN + ' q 1 0 0 rg 560 740 1.5 1.5 re f Q';

export const greyPlanPdf = () => buildPdf({ content: GREY_PLAN });
export const cloudedPlanPdf = () => buildPdf({ content: CLOUDED_PLAN });
export const speckedPlanPdf = () => buildPdf({ content: SPECKED_PLAN });

/** CLOUD_PT in pixels of a raster at `dpi` of a US Letter page (y down), with `pad` px around it. */
export function cloudBoxPx(dpi: number, pad = 0) {
  const s = dpi / 72;
  const { x0, y0, x1, y1 } = CLOUD_PT;
  return {
    x: Math.floor((x0 - 12) * s) - pad,
    y: Math.floor((792 - y1 - 12) * s) - pad,
    width: Math.ceil((x1 - x0 + 24) * s) + 2 * pad,
    height: Math.ceil((y1 - y0 + 24) * s) + 2 * pad,
  };
}

/** Red pixels (R > 180, G < 90, B < 90) of an RGB image (`channels` per pixel) inside / outside a box. */
export function redPixels(
  data: Uint8Array,
  width: number,
  height: number,
  channels: number,
  box: { x: number; y: number; width: number; height: number },
): { inside: number; outside: number } {
  let inside = 0;
  let outside = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels;
      if (!(data[i]! > 180 && data[i + 1]! < 90 && data[i + 2]! < 90)) continue;
      const inBox = x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height;
      if (inBox) inside++;
      else outside++;
    }
  }
  return { inside, outside };
}
