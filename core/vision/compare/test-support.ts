// Test-only helpers: render a fixture PDF page to a GreyImage with pdfjs-dist (legacy build) + its
// @napi-rs/canvas factory, and tiny drawing primitives for synthetic edits. Not used at run time.
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { GreyImage } from '../types';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
export const fixturesDir = path.resolve(here, '../../../fixtures/drawings');

export function fixture(name: string): string {
  return path.join(fixturesDir, name);
}

function pdfjsDir(sub: string): string {
  return path.join(path.dirname(require.resolve('pdfjs-dist/package.json')), sub) + '/';
}

/**
 * Render page `pageIndex` (0-based) of a PDF at `dpi` to an 8-bit grey image (white paper = 255).
 * Renders are cached as raw bytes in the OS temp folder keyed by file size/mtime, page and dpi, because
 * several test files render the same fixture pages.
 */
export async function renderPdfPage(
  file: string,
  pageIndex: number,
  dpi: number,
): Promise<GreyImage> {
  const st = statSync(file);
  const cacheDir = path.join(os.tmpdir(), 'blueline-compare-test-renders');
  const key = `${path.basename(file)}-${st.size}-${Math.floor(st.mtimeMs)}-p${pageIndex}-${dpi}`;
  const cacheFile = path.join(cacheDir, key + '.grey');
  if (existsSync(cacheFile)) {
    const buf = readFileSync(cacheFile);
    const width = buf.readUInt32LE(0);
    const height = buf.readUInt32LE(4);
    return { width, height, data: new Uint8Array(buf.buffer, buf.byteOffset + 8, width * height) };
  }
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const doc = await pdfjs.getDocument({
    data: new Uint8Array(readFileSync(file)),
    standardFontDataUrl: pdfjsDir('standard_fonts'),
    cMapUrl: pdfjsDir('cmaps'),
    cMapPacked: true,
    wasmUrl: pdfjsDir('wasm'),
    verbosity: 0,
  }).promise;
  try {
    const page = await doc.getPage(pageIndex + 1);
    const viewport = page.getViewport({ scale: dpi / 72 });
    const width = Math.round(viewport.width);
    const height = Math.round(viewport.height);
    const factory = (doc as any).canvasFactory;
    const cc = factory.create(width, height);
    await page.render({
      canvasContext: cc.context,
      canvas: cc.canvas,
      viewport,
      background: 'white',
    }).promise;
    const rgba: Uint8Array = cc.canvas.data();
    const data = new Uint8Array(width * height);
    for (let i = 0, j = 0; i < data.length; i++, j += 4) {
      // Rec.601 luma in 8.8 fixed point; fixtures are black-on-white so colour weighting barely matters.
      data[i] = (rgba[j]! * 77 + rgba[j + 1]! * 150 + rgba[j + 2]! * 29) >> 8;
    }
    factory.destroy(cc);
    mkdirSync(cacheDir, { recursive: true });
    const head = Buffer.alloc(8);
    head.writeUInt32LE(width, 0);
    head.writeUInt32LE(height, 4);
    writeFileSync(cacheFile + '.tmp', Buffer.concat([head, data]));
    renameSync(cacheFile + '.tmp', cacheFile);
    return { width, height, data };
  } finally {
    await doc.destroy();
  }
}

function greyAt(s: Uint8Array, W: number, H: number, x: number, y: number): number {
  return x < 0 || y < 0 || x >= W || y >= H ? 255 : s[y * W + x]!;
}

/** Warp `src` by the affine `t` mapping SOURCE pixels to DEST pixels (x' = a x + b y + c, y' = d x + e y + f), bilinear, white outside. */
export function warpAffine(
  src: GreyImage,
  t: readonly number[],
  width = src.width,
  height = src.height,
): GreyImage {
  const [a, b, c, d, e, f] = t as [number, number, number, number, number, number];
  const det = a * e - b * d;
  // inverse: dest → source
  const ia = e / det,
    ib = -b / det,
    id = -d / det,
    ie = a / det;
  const ic = -(ia * c + ib * f),
    iff = -(id * c + ie * f);
  const out = new Uint8Array(width * height);
  const W = src.width,
    H = src.height,
    s = src.data;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const sx = ia * x + ib * y + ic;
      const sy = id * x + ie * y + iff;
      const x0 = Math.floor(sx),
        y0 = Math.floor(sy);
      const fx = sx - x0,
        fy = sy - y0;
      const v =
        (greyAt(s, W, H, x0, y0) * (1 - fx) + greyAt(s, W, H, x0 + 1, y0) * fx) * (1 - fy) +
        (greyAt(s, W, H, x0, y0 + 1) * (1 - fx) + greyAt(s, W, H, x0 + 1, y0 + 1) * fx) * fy;
      out[y * width + x] = Math.round(v);
    }
  }
  return { width, height, data: out };
}

export function cloneImage(img: GreyImage): GreyImage {
  return { width: img.width, height: img.height, data: new Uint8Array(img.data) };
}

export function blankImage(width: number, height: number): GreyImage {
  return { width, height, data: new Uint8Array(width * height).fill(255) };
}

/** Fill an axis-aligned rectangle (sheet pixels, inclusive-exclusive) with `value`. */
export function fillRect(
  img: GreyImage,
  x: number,
  y: number,
  w: number,
  h: number,
  value = 0,
): void {
  const x0 = Math.max(0, Math.floor(x)),
    y0 = Math.max(0, Math.floor(y));
  const x1 = Math.min(img.width, Math.floor(x + w)),
    y1 = Math.min(img.height, Math.floor(y + h));
  for (let yy = y0; yy < y1; yy++) img.data.fill(value, yy * img.width + x0, yy * img.width + x1);
}

/** Stroke a rectangle outline `t` px thick. */
export function strokeRect(
  img: GreyImage,
  x: number,
  y: number,
  w: number,
  h: number,
  t = 2,
  value = 0,
): void {
  fillRect(img, x, y, w, t, value);
  fillRect(img, x, y + h - t, w, t, value);
  fillRect(img, x, y, t, h, value);
  fillRect(img, x + w - t, y, t, h, value);
}

/** Draw a thick line segment by stamping squares (good enough for synthetic strokes). */
export function drawLine(
  img: GreyImage,
  x0: number,
  y0: number,
  x1: number,
  y1: number,
  t = 2,
  value = 0,
): void {
  const n = Math.ceil(Math.hypot(x1 - x0, y1 - y0)) + 1;
  for (let i = 0; i <= n; i++) {
    const x = x0 + ((x1 - x0) * i) / n,
      y = y0 + ((y1 - y0) * i) / n;
    fillRect(img, x - t / 2, y - t / 2, t, t, value);
  }
}

/** Deterministic PRNG (mulberry32) so synthetic tests are reproducible. */
export function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random stroke "glyphs" in a w x h box: text-like scribbles for synthetic edits. */
export function drawGlyphs(
  img: GreyImage,
  x: number,
  y: number,
  w: number,
  h: number,
  rand: () => number,
  t = 2,
): void {
  const n = Math.max(1, Math.floor(w / (h * 0.7)));
  const gw = w / n;
  for (let g = 0; g < n; g++) {
    const gx = x + g * gw;
    for (let s = 0; s < 3; s++) {
      drawLine(
        img,
        gx + rand() * gw * 0.8,
        y + rand() * h,
        gx + rand() * gw * 0.8,
        y + rand() * h,
        t,
      );
    }
  }
}

/** Save a grey image as PNG for eyeballing (debug only). */
export async function savePng(img: GreyImage, file: string): Promise<void> {
  const sharp = (await import('sharp')).default;
  await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 1 } })
    .toColourspace('b-w')
    .png({ compressionLevel: 1 })
    .toFile(file);
}

/** A random similarity near the identity: scale 1 ± 1 %, rotation ± rotSpread/2 rad, shifts ± shiftX/2 / ± 10 px. */
export function nearUnitSimilarity(r: () => number, rotSpread: number, shiftX = 80): number[] {
  const s = 1 + (r() - 0.5) * 0.02,
    rot = (r() - 0.5) * rotSpread;
  return [
    s * Math.cos(rot),
    -s * Math.sin(rot),
    (r() - 0.5) * shiftX,
    s * Math.sin(rot),
    s * Math.cos(rot),
    (r() - 0.5) * 20,
  ];
}

/** A W x Ht paper image in which each pixel is, with probability p, ink of a grey in [0, maxGrey). */
export function speckledImage(
  r: () => number,
  W: number,
  Ht: number,
  p: number,
  maxGrey: number,
): GreyImage {
  const img: GreyImage = { width: W, height: Ht, data: new Uint8Array(W * Ht).fill(255) };
  for (let i = 0; i < img.data.length; i++) if (r() < p) img.data[i] = Math.floor(r() * maxGrey);
  return img;
}
