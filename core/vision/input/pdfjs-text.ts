// Reference text layer from pdf.js (pdfjs-dist 5.6, legacy build), exactly as the production adapter read
// it before issue #3 moved the text layer to PDFium (pdfium-text.ts). Not used on the production path:
// kept for the equivalence test (pdfium-text.fixtures.test.ts) and the "before" column of
// bench/ingest, so the PDFium runs can be checked against it on any PDF.
//
// Units: sheet pixels at `dpi` on a raster of the given pixel size (PDFium's rounding of the page box),
// origin top-left, y down, /Rotate and crop box applied through pdf.js's viewport.

import { createRequire } from 'node:module';
import path from 'node:path';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { TextItem } from '../types';

/**
 * Folders inside the installed package, as filesystem paths with a trailing slash (pdf.js's Node
 * factories read them with fs), so standard fonts, CMaps and the JBIG2/OpenJPEG/QCMS wasm never need
 * the network.
 */
function pdfjsAssetDirs() {
  const require = createRequire(import.meta.url);
  const root = path.dirname(require.resolve('pdfjs-dist/package.json'));
  return {
    standardFontDataUrl: path.join(root, 'standard_fonts') + path.sep,
    cMapUrl: path.join(root, 'cmaps') + path.sep,
    wasmUrl: path.join(root, 'wasm') + path.sep,
    iccUrl: path.join(root, 'iccs') + path.sep,
  };
}

/** A pdf.js document for reading text (from a private copy of the bytes: pdf.js may detach them). */
export async function openPdfjsText(bytes: Uint8Array): Promise<PDFDocumentProxy> {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  return pdfjs.getDocument({
    data: new Uint8Array(bytes),
    ...pdfjsAssetDirs(),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  }).promise;
}

/**
 * pdf.js text runs of page `index` (0-based) in sheet pixels at `dpi`, mapped onto a raster of
 * `width` x `height` pixels (the page box scaled per axis to that rounded size), whitespace-only runs
 * dropped.
 */
export async function pdfjsPageText(
  doc: PDFDocumentProxy,
  index: number,
  dpi: number,
  size: { width: number; height: number },
): Promise<TextItem[]> {
  const page = await doc.getPage(index + 1);
  const viewport = page.getViewport({ scale: dpi / 72 });
  const sx = size.width / viewport.width;
  const sy = size.height / viewport.height;
  const v = viewport.transform as number[];
  const vt = [v[0]! * sx, v[1]! * sy, v[2]! * sx, v[3]! * sy, v[4]! * sx, v[5]! * sy];
  const content = await page.getTextContent();
  const out: TextItem[] = [];
  for (const item of content.items) {
    if (!('str' in item) || item.str.trim() === '') continue;
    const t = textItemBox(item.transform as number[], item.width, item.height, vt);
    out.push({ text: item.str, ...t });
  }
  page.cleanup();
  return out;
}

/** Apply the affine matrix m = [a b c d e f] to (x, y). */
function apply(m: number[], x: number, y: number): [number, number] {
  return [m[0]! * x + m[2]! * y + m[4]!, m[1]! * x + m[3]! * y + m[5]!];
}

/**
 * Box of a pdf.js text run in sheet pixels.
 * `tm` is the run's matrix in PDF user space (font size included): (tm[4], tm[5]) is the baseline start,
 * (tm[0], tm[1]) the writing direction, (tm[2], tm[3]) the glyph "up" direction. `width` is the run's
 * advance and `height` its font size, both in user-space units. The box spans from 0.2 em below the
 * baseline (descenders) to 0.8 em above it (caps and ascenders), mapped through the viewport transform
 * `vt` (which carries dpi, /Rotate, crop box and the y flip), so it lines up with the raster.
 */
export function textItemBox(
  tm: number[],
  width: number,
  height: number,
  vt: number[],
): Omit<TextItem, 'text'> {
  const ul = Math.hypot(tm[0]!, tm[1]!) || 1;
  const vl = Math.hypot(tm[2]!, tm[3]!) || 1;
  const ux = tm[0]! / ul;
  const uy = tm[1]! / ul;
  const vx = tm[2]! / vl;
  const vy = tm[3]! / vl;
  const h = height || vl;
  const ox = tm[4]!;
  const oy = tm[5]!;
  const lo = -0.2 * h;
  const hi = 0.8 * h;
  const corners = [
    apply(vt, ox + vx * lo, oy + vy * lo),
    apply(vt, ox + ux * width + vx * lo, oy + uy * width + vy * lo),
    apply(vt, ox + vx * hi, oy + vy * hi),
    apply(vt, ox + ux * width + vx * hi, oy + uy * width + vy * hi),
  ];
  const xs = corners.map((c) => c[0]);
  const ys = corners.map((c) => c[1]);
  const x0 = Math.min(...xs);
  const y0 = Math.min(...ys);
  // Writing direction on the sheet (y down, so negate dy to get counter-clockwise degrees).
  const d0 = apply(vt, ox, oy);
  const d1 = apply(vt, ox + ux, oy + uy);
  let angle = (Math.atan2(-(d1[1] - d0[1]), d1[0] - d0[0]) * 180) / Math.PI;
  angle = Math.round((((angle % 360) + 360) % 360) * 100) / 100;
  if (angle === 360) angle = 0;
  const up0 = apply(vt, ox, oy);
  const up1 = apply(vt, ox + vx * h, oy + vy * h);
  return {
    x: x0,
    y: y0,
    width: Math.max(...xs) - x0,
    height: Math.max(...ys) - y0,
    fontSize: Math.hypot(up1[0] - up0[0], up1[1] - up0[1]),
    angle,
  };
}
