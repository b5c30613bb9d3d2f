// Test-only helper: reads positioned text and renders pages of the fixture PDFs with pdfjs-dist and
// @napi-rs/canvas, producing the vision core's own TextItem / GreyImage types (sheet pixels, origin
// top-left, page /Rotate applied). Production code in this folder never imports pdfjs; it only
// consumes these types. The real adapter lives in core/vision/input/.

import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createCanvas } from '@napi-rs/canvas';
import * as pdfjs from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { GreyImage, TextItem } from '../types';

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../..');
/** The shared fixture drawings (a sibling of the checkout, see helper rules). */
export const fixturesDir = path.resolve(repoRoot, 'fixtures/drawings');
const pdfjsRoot = path.resolve(repoRoot, 'node_modules/pdfjs-dist');

export function fixturePath(name: string): string {
  return path.join(fixturesDir, name);
}

export interface TestPage {
  /** Page size in sheet pixels at `dpi`, after /Rotate. */
  width: number;
  height: number;
  dpi: number;
  items: TextItem[];
  /** Present only when asked for (`render: true`). */
  image?: GreyImage;
}

export interface TestDocument {
  pageCount: number;
  page(index: number, dpi: number, opts?: { render?: boolean }): Promise<TestPage>;
  close(): Promise<void>;
}

interface CanvasFactory {
  create(
    width: number,
    height: number,
  ): { canvas: HTMLCanvasElement; context: CanvasRenderingContext2D };
}

type Matrix = [number, number, number, number, number, number];

function mul(m1: Matrix, m2: Matrix): Matrix {
  return [
    m1[0] * m2[0] + m1[2] * m2[1],
    m1[1] * m2[0] + m1[3] * m2[1],
    m1[0] * m2[2] + m1[2] * m2[3],
    m1[1] * m2[2] + m1[3] * m2[3],
    m1[0] * m2[4] + m1[2] * m2[5] + m1[4],
    m1[1] * m2[4] + m1[3] * m2[5] + m1[5],
  ];
}

export async function openFixture(name: string): Promise<TestDocument> {
  const data = new Uint8Array(await readFile(fixturePath(name)));
  const doc = await pdfjs.getDocument({
    data,
    standardFontDataUrl: pdfjsRoot + '/standard_fonts/',
    cMapUrl: pdfjsRoot + '/cmaps/',
    cMapPacked: true,
    verbosity: 0,
  }).promise;

  return {
    pageCount: doc.numPages,
    async page(index, dpi, opts = {}) {
      const page = await doc.getPage(index + 1);
      // getViewport applies the page's own /Rotate; y grows downward in viewport space.
      const viewport = page.getViewport({ scale: dpi / 72 });
      const width = Math.round(viewport.width);
      const height = Math.round(viewport.height);
      const content = await page.getTextContent();
      const items: TextItem[] = [];
      for (const raw of content.items) {
        if (!('str' in raw)) continue;
        const text = raw.str;
        if (text.trim() === '') continue;
        const tx = mul(viewport.transform as Matrix, raw.transform as Matrix);
        const fontSize = Math.hypot(tx[2], tx[3]);
        if (!(fontSize > 0)) continue;
        // Direction of the baseline in viewport space (y down); TextItem.angle is counter-clockwise
        // on the sheet, so 90 means reading bottom to top.
        const dx = tx[0];
        const dy = tx[1];
        const len = Math.hypot(dx, dy) || 1;
        const ux = dx / len;
        const uy = dy / len;
        // "Up" (from baseline towards the glyph tops) is the baseline direction turned a quarter
        // counter-clockwise on the sheet.
        const vx = uy;
        const vy = -ux;
        const w = raw.width * (dpi / 72);
        const ox = tx[4];
        const oy = tx[5];
        const xs = [ox, ox + w * ux, ox + fontSize * vx, ox + w * ux + fontSize * vx];
        const ys = [oy, oy + w * uy, oy + fontSize * vy, oy + w * uy + fontSize * vy];
        const x0 = Math.min(...xs);
        const y0 = Math.min(...ys);
        let angle = Math.round((-Math.atan2(uy, ux) * 180) / Math.PI);
        angle = ((angle % 360) + 360) % 360;
        items.push({
          text,
          x: x0,
          y: y0,
          width: Math.max(...xs) - x0,
          height: Math.max(...ys) - y0,
          fontSize,
          angle,
        });
      }
      let image: GreyImage | undefined;
      if (opts.render) {
        // Use pdfjs's own canvas factory: pdfjs-dist bundles its own @napi-rs/canvas version, and its
        // Path2D objects are rejected by a canvas created from a different copy of the library.
        const factory = (doc as unknown as { canvasFactory: CanvasFactory }).canvasFactory;
        const { canvas, context: ctx } = factory.create(width, height);
        ctx.fillStyle = '#ffffff';
        ctx.fillRect(0, 0, width, height);
        await page.render({ canvas, viewport }).promise;
        const rgba = ctx.getImageData(0, 0, width, height).data;
        const grey = new Uint8Array(width * height);
        for (let i = 0, j = 0; j < grey.length; i += 4, j++) {
          // Rec. 601 luma; alpha is opaque after the white fill.
          grey[j] =
            ((rgba[i] as number) * 299 +
              (rgba[i + 1] as number) * 587 +
              (rgba[i + 2] as number) * 114) /
            1000;
        }
        image = { width, height, data: grey };
      }
      page.cleanup();
      return { width, height, dpi, items, ...(image ? { image } : {}) };
    },
    async close() {
      await doc.destroy();
    },
  };
}

/** Writes a GreyImage as a PNG (for looking at fixtures while debugging). */
export async function writeGreyPng(image: GreyImage, file: string): Promise<void> {
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext('2d');
  const out = ctx.createImageData(image.width, image.height);
  for (let j = 0, i = 0; j < image.data.length; j++, i += 4) {
    const v = image.data[j] as number;
    out.data[i] = v;
    out.data[i + 1] = v;
    out.data[i + 2] = v;
    out.data[i + 3] = 255;
  }
  ctx.putImageData(out, 0, 0);
  const { writeFile } = await import('node:fs/promises');
  await writeFile(file, await canvas.encode('png'));
}
