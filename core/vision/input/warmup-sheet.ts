// A generated drawing sheet for warming up a new pool worker (core/vision/ingest/warmup.ts).
//
// Why: a worker's first sheets of a kind run slowly, while V8 compiles the JavaScript and
// WebAssembly that kind of sheet needs. Measured on the 9-sheet barber house set (scanned tiles
// enlarged 2x, under vector strokes) at 200 dpi in workers that had rendered only vector sheets
// before: the first sheet of each worker took 100-170 ms instead of 35-50 ms, and the set 0.42-0.49
// s instead of 0.32-0.35 s. Rendering a scanned sheet of another set first removes that, and so does
// this sheet, which copies what matters of one: scanned tiles of the barber house's shape (RGB,
// Flate with PNG predictors, mostly Sub rows, white paper with strokes, specks and a flat grey fill)
// placed 2x enlarged at the dpi asked for, so the painter of pdfium.adapter.ts draws them; vector
// strokes and curves over them; text in a standard font, with a title block.
//
// Deterministic: the same bytes for the same dpi.
import { deflateSync } from 'node:zlib';
import { assemblePdf, streamObject } from './pdf-writer';
import { predictPng } from './png-predictor';

/** The sheet: 17 x 11 in (ANSI B landscape, the barber house's size), in points. */
const PAGE = { width: 1224, height: 792 };
/** Tiles across and down. */
const COLS = 6;
const ROWS = 4;

/** A tiny LCG: the same sheet every time, no Math.random. */
function lcg(seed: number) {
  let s = seed >>> 0;
  return (n: number) => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return (s >>> 8) % n;
  };
}

/** One scanned tile's samples: white paper, strokes, a few specks and a flat grey fill. */
function tileSamples(w: number, h: number, comps: 1 | 3, rnd: (n: number) => number): Uint8Array {
  const px = new Uint8Array(w * h * comps).fill(255);
  const set = (x: number, y: number, v: number) => {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    for (let k = 0; k < comps; k++) px[(y * w + x) * comps + k] = Math.min(255, v + k * 3);
  };
  const fx = rnd(Math.max(1, w - w / 4));
  const fy = rnd(Math.max(1, h - h / 4));
  for (let y = fy; y < fy + h / 5; y++) for (let x = fx; x < fx + w / 5; x++) set(x, y, 69);
  for (let k = 0; k < 24; k++) {
    const x = rnd(w);
    const y = rnd(h);
    const len = 1 + rnd(w);
    const v = rnd(140);
    if (k % 2) for (let i = 0; i < len; i++) set(x + i, y, v);
    else for (let i = 0; i < len; i++) set(x, y + i, v);
    set(rnd(w), rnd(h), rnd(256)); // a speck
  }
  return px;
}

/**
 * The warm-up sheet for rendering at `dpi`: its tiles are enlarged 2x on the raster (the middle of
 * the painter's range), whatever the dpi.
 */
export function buildWarmupSheet(dpi: number): Uint8Array {
  const rnd = lcg(20261126);
  const cellW = PAGE.width / COLS;
  const cellH = PAGE.height / ROWS;
  const tw = Math.max(8, Math.round((cellW / 72) * dpi * 0.5));
  const th = Math.max(8, Math.round((cellH / 72) * dpi * 0.5));
  const objs: (string | Uint8Array)[] = [];
  objs[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objs[2] = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>';
  objs[5] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>';
  const xobjects: string[] = [];
  let content = `q 1 1 1 rg 0 0 ${PAGE.width} ${PAGE.height} re f Q\n`;
  let next = 6;
  for (let c = 0; c < COLS; c++)
    for (let r = 0; r < ROWS; r++) {
      // One grey tile and one with every filter type; the rest RGB with Sub rows, as scanners write.
      const k = c * ROWS + r;
      const comps = k === 5 ? 1 : 3;
      const samples = tileSamples(tw, th, comps, rnd);
      const data = deflateSync(predictPng(samples, tw, th, comps, k === 9 ? 'mixed' : 1));
      const cs = comps === 3 ? '/DeviceRGB' : '/DeviceGray';
      objs[next] = streamObject(
        `/Type /XObject /Subtype /Image /Width ${tw} /Height ${th} /ColorSpace ${cs} /BitsPerComponent 8 /Filter /FlateDecode /DecodeParms << /Predictor 15 /Colors ${comps} /BitsPerComponent 8 /Columns ${tw} >>`,
        data,
      );
      xobjects.push(`/T${k} ${next} 0 R`);
      content += `q ${cellW} 0 0 ${cellH} ${c * cellW} ${r * cellH} cm /T${k} Do Q\n`;
      next++;
    }
  // Vector work over the scan: a frame, strokes, curves, a title block with text.
  content += '0 0 0 RG 1 w 18 18 1188 756 re S\n0.5 w\n';
  for (let k = 0; k < 300; k++) {
    content += `${rnd(1224)} ${rnd(792)} m ${rnd(1224)} ${rnd(792)} l S\n`;
  }
  for (let k = 0; k < 60; k++) {
    const x = 40 + rnd(1100);
    const y = 40 + rnd(700);
    content += `${x} ${y} m ${x + 20} ${y + 30} ${x + 40} ${y - 30} ${x + 60} ${y} c S\n`;
  }
  content += '1 w 1008 18 198 90 re S 1008 54 m 1206 54 l S\n';
  content += 'BT /F1 9 Tf 1014 90 Td (BLUELINE WARM-UP SHEET) Tj 0 -14 Td (FIRST FLOOR PLAN) Tj ';
  content += '/F1 18 Tf 0 -26 Td (A-101) Tj ET\n';
  content += 'BT /F1 7 Tf 40 760 Td 12 TL';
  for (let k = 0; k < 20; k++)
    content += ` (NOTE ${k + 1}: VERIFY ALL DIMENSIONS ON SITE BEFORE WORK) '`;
  content += ' ET\n';
  objs[3] =
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${PAGE.width} ${PAGE.height}] ` +
    `/Resources << /Font << /F1 5 0 R >> /XObject << ${xobjects.join(' ')} >> >> /Contents 4 0 R >>`;
  objs[4] = streamObject('/Filter /FlateDecode', deflateSync(Buffer.from(content, 'latin1')));
  return assemblePdf(objs);
}
