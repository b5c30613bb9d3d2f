// A synthetic 36x24 in architectural sheet at 300 DPI (10800x7200 px, origin top-left, units are
// sheet pixels): border, title block, structural grid with bubbles, a floor plan of rooms with
// double-line walls, door swings and windows, hatching, dimension strings and "text" drawn as
// short pen strokes (no fonts needed, so the output is the same on every machine). Written as a
// PNG of grey ink (sharp stores it as 8-bit RGB) whose pHYs says 300 dpi, so the service keeps it at 300 DPI instead of assuming 150.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';

export const SHEET_DPI = 300;
export const SHEET_W = 36 * SHEET_DPI; // 10800 px
export const SHEET_H = 24 * SHEET_DPI; // 7200 px

/** mulberry32: a small seeded PRNG so every run draws the same sheet. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const f = (n: number) => n.toFixed(1);

export function sheetSvg(seed = 36_24_300): string {
  const rnd = prng(seed);
  const heavy: string[] = []; // walls, border: 6 px (0.5 mm) pen
  const medium: string[] = []; // doors, windows, bubbles: 3 px
  const fine: string[] = []; // grid, hatch, dimensions, text: 2 px
  const text: string[] = []; // text strokes: 2.5 px

  /** One "word" of pseudo-letters: each glyph is 2–4 strokes inside a cell of size h x 0.6h. */
  const word = (x: number, y: number, h: number, letters: number): number => {
    const w = h * 0.62;
    for (let i = 0; i < letters; i++) {
      const gx = x + i * (w + h * 0.18);
      const strokes = 2 + Math.floor(rnd() * 3);
      let d = '';
      for (let s = 0; s < strokes; s++) {
        const x0 = gx + rnd() * w;
        const y0 = y + rnd() * h;
        const x1 = gx + rnd() * w;
        const y1 = y + rnd() * h;
        d += `M${f(x0)} ${f(y0)}L${f(x1)} ${f(y1)}`;
      }
      text.push(d);
    }
    return letters * (w + h * 0.18);
  };
  const line = (h: number, x: number, y: number, maxW: number) => {
    let cx = x;
    while (cx < x + maxW) {
      const n = 2 + Math.floor(rnd() * 8);
      const wWidth = n * h * 0.8;
      if (cx + wWidth > x + maxW) break;
      cx += word(cx, y, h, n) + h * 0.7;
    }
  };

  // Border and title block (right 2.5 in strip).
  const m = 150;
  heavy.push(`M${m} ${m}H${SHEET_W - m}V${SHEET_H - m}H${m}Z`);
  const tbX = SHEET_W - m - 750;
  heavy.push(`M${tbX} ${m}V${SHEET_H - m}`);
  for (let y = m + 600; y < SHEET_H - m; y += 450) medium.push(`M${tbX} ${y}H${SHEET_W - m}`);
  for (let y = m + 80; y < SHEET_H - m - 100; y += 90) line(36, tbX + 40, y, 660);
  word(tbX + 80, SHEET_H - m - 380, 160, 4); // sheet number

  // Plan area and structural grid: bays of 30 ft at 1/8" = 1'-0" -> 3.75 in = 1125 px.
  const px0 = m + 500;
  const py0 = m + 500;
  const px1 = tbX - 500;
  const py1 = SHEET_H - m - 900;
  const bay = 1125;
  for (let x = px0; x <= px1; x += bay) {
    fine.push(`M${x} ${py0 - 300}V${py1 + 300}`);
    medium.push(
      `M${x + 90} ${py0 - 390}A90 90 0 1 0 ${x - 90} ${py0 - 390}A90 90 0 1 0 ${x + 90} ${py0 - 390}`,
    );
    word(x - 25, py0 - 420, 60, 1);
  }
  for (let y = py0; y <= py1; y += bay) {
    fine.push(`M${px0 - 300} ${y}H${px1 + 300}`);
    medium.push(`M${px0 - 300} ${y}A90 90 0 1 0 ${px0 - 480} ${y}A90 90 0 1 0 ${px0 - 300} ${y}`);
    word(px0 - 415, y - 30, 60, 1);
  }

  // Rooms: recursive split of the plan area; walls are two lines 36 px apart (6 in at 1/8").
  const rooms: { x: number; y: number; w: number; h: number }[] = [];
  const split = (x: number, y: number, w: number, h: number, depth: number) => {
    if (depth > 6 || (w < 900 && h < 900) || (depth > 3 && rnd() < 0.25)) {
      rooms.push({ x, y, w, h });
      return;
    }
    if (w > h) {
      const s = Math.round(w * (0.3 + rnd() * 0.4));
      split(x, y, s, h, depth + 1);
      split(x + s, y, w - s, h, depth + 1);
    } else {
      const s = Math.round(h * (0.3 + rnd() * 0.4));
      split(x, y, w, s, depth + 1);
      split(x, y + s, w, h - s, depth + 1);
    }
  };
  split(px0, py0, px1 - px0, py1 - py0, 0);
  const t = 36;
  for (const r of rooms) {
    heavy.push(`M${r.x} ${r.y}H${r.x + r.w}V${r.y + r.h}H${r.x}Z`);
    heavy.push(`M${r.x + t} ${r.y + t}H${r.x + r.w - t}V${r.y + r.h - t}H${r.x + t}Z`);
    // A door on the bottom wall: leaf and 90° swing.
    if (r.w > 500) {
      const dx = r.x + t + 60 + rnd() * (r.w - 2 * t - 400);
      const dy = r.y + r.h - t;
      medium.push(
        `M${f(dx)} ${dy}V${dy - 270}M${f(dx)} ${dy - 270}A270 270 0 0 1 ${f(dx + 270)} ${dy}`,
      );
    }
    // Windows on the top wall of rooms along the outer edge.
    if (r.y === py0) {
      for (let wx = r.x + 150; wx < r.x + r.w - 350; wx += 450)
        medium.push(`M${wx} ${r.y + 12}h240M${wx} ${r.y + 24}h240`);
    }
    // Hatch about a fifth of the rooms (45°, 24 px pitch).
    if (rnd() < 0.2) {
      let d = '';
      for (let k = -r.h; k < r.w; k += 24) {
        const x0 = r.x + t + Math.max(0, k);
        const y0 = r.y + t + Math.max(0, -k);
        const len = Math.min(r.w - 2 * t - Math.max(0, k), r.h - 2 * t - Math.max(0, -k));
        if (len > 0) d += `M${x0} ${y0}l${len} ${len}`;
      }
      fine.push(d);
    }
    // Room name and number, and a note block in larger rooms.
    if (r.w > 400 && r.h > 300) {
      const cx = r.x + r.w / 2 - 150;
      const cy = r.y + r.h / 2 - 40;
      word(cx, cy, 42, 6);
      word(cx + 60, cy + 70, 30, 3);
      if (r.w > 900 && r.h > 700) {
        for (let i = 0; i < 5; i++) line(18, r.x + 80, r.y + 80 + i * 34, Math.min(700, r.w - 160));
      }
    }
  }

  // Dimension strings along the bottom and left of the plan.
  let dims = '';
  for (let x = px0; x < px1; x += bay) {
    dims += `M${x} ${py1 + 520}h${bay}M${x - 20} ${py1 + 540}l40 -40M${x} ${py1 + 480}v80`;
    word(x + bay / 2 - 90, py1 + 440, 32, 5);
  }
  for (let y = py0; y < py1; y += bay) {
    dims += `M${px0 - 600} ${y}v${bay}M${px0 - 620} ${y + 20}l40 -40M${px0 - 640} ${y}h80`;
  }
  fine.push(dims);

  // General notes block under the plan.
  for (let i = 0; i < 8; i++) line(24, px0, py1 + 650 + i * 40, 4200);

  const g = (stroke: number, paths: string[]) =>
    `<path fill="none" stroke="#000" stroke-width="${stroke}" stroke-linecap="round" d="${paths.join('')}"/>`;
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${SHEET_W}" height="${SHEET_H}" viewBox="0 0 ${SHEET_W} ${SHEET_H}">` +
    `<rect width="100%" height="100%" fill="#fff"/>` +
    g(6, heavy) +
    g(3, medium) +
    g(2, fine) +
    g(2.5, text) +
    `</svg>`
  );
}

/**
 * The next issue of the same sheet, for the overlay viewer's whole-sheet view: the sheet above
 * with edits an office makes between issues, spread over the page so the overlay has change
 * regions everywhere (added in green, removed in red): twelve columns with a callout added across
 * the plan, two blocks of notes struck out (painted over), a revision cloud's worth of line work
 * by the title block. Seeded like the sheet, the same every run.
 */
export function revisedSheetSvg(seed = 36_24_300): string {
  const rnd = prng(seed + 1);
  const base = sheetSvg(seed);
  let add = '';
  for (let i = 0; i < 12; i++) {
    const x = 1400 + Math.floor(rnd() * 7000);
    const y = 900 + Math.floor(rnd() * 4600);
    add += `<rect x="${x}" y="${y}" width="60" height="60" fill="#000"/>`;
    add += `<path fill="none" stroke="#000" stroke-width="3" d="M${x + 60} ${y}l180 -180h420"/>`;
    for (let k = 0; k < 6; k++) {
      const gx = x + 260 + k * 60;
      add += `<path fill="none" stroke="#000" stroke-width="2.5" d="M${gx} ${y - 230}l30 40M${gx + 30} ${y - 230}l-30 40"/>`;
    }
  }
  // Notes removed: paper painted over parts of the general notes under the plan (y 6800–7120).
  add += `<rect x="1150" y="6790" width="1900" height="210" fill="#fff"/>`;
  add += `<rect x="3600" y="6990" width="1400" height="110" fill="#fff"/>`;
  // New line work beside the title block.
  let d = '';
  for (let i = 0; i < 40; i++) d += `M${9100 + i * 20} 5200l${200 - i * 4} ${300 + i * 6}`;
  add += `<path fill="none" stroke="#000" stroke-width="2" d="${d}"/>`;
  return base.replace('</svg>', `${add}</svg>`);
}

/** Writes the sheet PNG once into `dir` and returns its path (reused on later runs). */
export async function makeSheetPng(dir: string, revised = false): Promise<string> {
  const file = path.join(dir, `sheet-36x24-${SHEET_DPI}dpi${revised ? '-rev-b' : ''}.png`);
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const svg = revised ? revisedSheetSvg() : sheetSvg();
  // Rasterize, keep one grey channel, then encode with a 300 dpi pHYs chunk.
  const grey = await sharp(Buffer.from(svg), { limitInputPixels: false, density: 72 })
    .flatten({ background: '#ffffff' })
    .extractChannel(0)
    .raw()
    .toBuffer();
  const png = await sharp(grey, {
    raw: { width: SHEET_W, height: SHEET_H, channels: 1 },
    limitInputPixels: false,
  })
    .png({ compressionLevel: 6 })
    .withDensity(SHEET_DPI)
    .toBuffer();
  writeFileSync(file, png);
  return file;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = await makeSheetPng(process.argv[2] ?? '/tmp/blueline-bench-viewer');
  const meta = await sharp(out, { limitInputPixels: false }).metadata();
  console.log(out, meta.width, meta.height, meta.density, meta.channels);
}
