import { createRequire } from 'node:module';
import sharp from 'sharp';
import type { GreyImage, TextItem } from '../types';

// Offline OCR for pages without a text layer (scans, PDFs whose fonts are drawn as outlines):
// tesseract.js with the English model shipped in @tesseract.js-data/eng, loaded from the package
// folder — never from a CDN (its default would fetch at run time and fail offline). Runs in the
// worker thread that processes the page.
//
// The page is OCR'd at a reduced size (long side ≤ OCR_MAX_SIDE px): title-block text and view
// titles stay legible there, while a full 30 MP sheet would take minutes. Boxes are scaled back to
// sheet pixels.

export const OCR_MAX_SIDE = 4000;
/** Words below this confidence (0–100) are dropped as noise (hatching and linework read as text). */
export const OCR_MIN_CONFIDENCE = 60;

type TesseractWorker = {
  recognize(
    image: Buffer,
    options?: object,
    output?: object,
  ): Promise<{ data: { blocks: OcrBlock[] | null } }>;
  setParameters(params: Record<string, string>): Promise<unknown>;
  terminate(): Promise<unknown>;
};
interface OcrBox {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}
interface OcrBlock {
  paragraphs: { lines: { words: { text: string; confidence: number; bbox: OcrBox }[] }[] }[];
}

let workerPromise: Promise<TesseractWorker> | undefined;

async function getWorker(): Promise<TesseractWorker> {
  workerPromise ??= (async () => {
    const require = createRequire(import.meta.url);
    const { langPath } = require('@tesseract.js-data/eng') as { langPath: string };
    const { createWorker } = (await import('tesseract.js')) as unknown as {
      createWorker(lang: string, oem: number, opts: object): Promise<TesseractWorker>;
    };
    const worker = await createWorker('eng', 1, {
      langPath,
      gzip: true,
      cacheMethod: 'none',
      logger: () => {},
      errorHandler: () => {},
    });
    // Sparse text (PSM 11): drawings scatter labels among linework; the default page layout
    // analysis looks for paragraphs and drops isolated words such as view and sheet titles.
    await worker.setParameters({ tessedit_pageseg_mode: '11' });
    return worker;
  })();
  workerPromise.catch(() => (workerPromise = undefined));
  return workerPromise;
}

export async function closeOcr(): Promise<void> {
  const w = workerPromise;
  workerPromise = undefined;
  if (w) await (await w).terminate().catch(() => {});
}

/** Words found on the page, as TextItems in sheet pixels (origin top-left). */
export async function ocrPage(image: GreyImage): Promise<TextItem[]> {
  const scale = Math.min(1, OCR_MAX_SIDE / Math.max(image.width, image.height));
  const w = Math.max(1, Math.round(image.width * scale));
  const h = Math.max(1, Math.round(image.height * scale));
  const png = await sharp(image.data, {
    raw: { width: image.width, height: image.height, channels: 1 },
  })
    .resize(w, h, { kernel: 'lanczos3' })
    .toColourspace('b-w')
    .png({ compressionLevel: 1 })
    .toBuffer();
  const worker = await getWorker();
  const { data } = await worker.recognize(png, {}, { blocks: true, text: false });
  const items: TextItem[] = [];
  for (const block of data.blocks ?? []) {
    for (const para of block.paragraphs) {
      for (const line of para.lines) {
        for (const word of line.words) {
          const text = word.text.trim();
          if (!text || word.confidence < OCR_MIN_CONFIDENCE || !/[A-Za-z0-9]/.test(text)) continue;
          const x = word.bbox.x0 / scale;
          const y = word.bbox.y0 / scale;
          const width = (word.bbox.x1 - word.bbox.x0) / scale;
          const height = (word.bbox.y1 - word.bbox.y0) / scale;
          items.push({ text, x, y, width, height, fontSize: height, angle: 0 });
        }
      }
    }
  }
  return items;
}
