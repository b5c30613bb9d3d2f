// Block segmentation: the views printed on a sheet (plans, sections, details, schedules…), each
// with its type, box, identifier, title and scale, plus the title block.
//
// Inputs: positioned text (sheet pixels, origin top-left), the page size in sheet pixels, dpi, the
// title block box from extractSheetMetadata, and optionally the rendered page (GreyImage, 0 = ink).
//
// How it works:
// 1. View titles. A line printing a drawing scale (1/4" = 1'-0", NTS, 1:50) marks a view title: the
//    title is the line just above it (or before it on the same line). Lines that name a view type
//    (SCHEDULE, LEGEND, NOTES, KEY PLAN, DIAGRAM; or PLAN / SECTION / ELEVATION / DETAIL when printed
//    larger than the body text or with a view number) are titles too. A leading number or letter
//    (the view bubble, "1 FOUNDATION DETAIL") is the identifier.
// 2. View extents. Ink (or, without an image, text boxes) is drawn into a grid of 0.05 in cells,
//    sheet-long lines (border, frame) are dropped, cells are dilated to bridge small gaps, and the
//    connected regions are handed to the title that sits at their bottom edge (views carry their
//    title below or inside them, rarely above).
// 3. The title block becomes a TitleBlock block. A sheet with no recognisable view gets one block
//    covering the drawing area (Plan when the sheet title says so, else Other) so that every sheet
//    can still be compared.
// The whole page is one more block, of type Sheet (contract §4: exactly one per sheet), which is not
// found but given: wholeSheetBlock, added by processing beside the views segmentBlocks returns.

import type { BBox, BlockType, GreyImage, TextItem } from '../types';
import { buildLines, centerOf, median, union, type TextLine } from './text-lines';

export interface Block {
  type: BlockType;
  /** Sheet pixels, origin top-left. */
  bbox: BBox;
  /** The view's number or letter as printed in its bubble ("3", "A"), or null. */
  identifier: string | null;
  title: string | null;
  /** The scale as printed, e.g. `1/4" = 1'-0"`, or null. */
  scale: string | null;
}

export interface SegmentBlocksInput {
  items: TextItem[];
  /** Page size in sheet pixels. */
  width: number;
  height: number;
  dpi: number;
  /** Rendered page, same size as width × height; improves view extents. */
  image?: GreyImage;
  /** From extractSheetMetadata; null when no title block was found. */
  titleBlockBox: BBox | null;
  /** Sheet title, used for the title block block and to type the fallback block. */
  sheetTitle?: string | null;
}

const SCALE_IN_TEXT_RE =
  /(\d+(?:\s*\/\s*\d+)?\s*(?:"|''|”)\s*=\s*\d+\s*(?:'|’)\s*(?:-?\s*\d+(?:\s+\d+\/\d+)?\s*(?:"|”))?)|\bN\.?T\.?S\.?\b|\bNOT TO SCALE\b|\b1\s*:\s*\d{1,5}\b/i;

/** Type of a view from the words of its title; null when no word names a type. */
export function blockTypeFromTitle(title: string | null | undefined): BlockType | null {
  if (!title) return null;
  const t = ` ${title.toUpperCase().replace(/[^A-Z0-9]+/g, ' ')} `;
  const has = (re: RegExp) => re.test(t);
  if (has(/ SCHEDULES? /)) return 'Schedule';
  if (has(/ LEGENDS? | ABBREVIATIONS | SYMBOLS /)) return 'Legend';
  if (has(/ KEY ?PLAN /)) return 'KeyPlan';
  if (has(/ NOTES? | SPECIFICATIONS? /)) return 'Notes';
  if (has(/ DIAGRAMS? | RISERS? | SCHEMATICS? | ONE LINE /)) return 'Diagram';
  if (has(/ PERSPECTIVES? | 3D | AXONOMETRIC | ISOMETRIC | RENDERINGS? /)) return 'Other';
  if (has(/ DETAILS? | DET /)) return 'Detail';
  if (has(/ SECTIONS? | SECT /)) return 'Section';
  if (has(/ ELEVATIONS? | ELEV /)) return 'Elevation';
  if (
    has(
      / PLANS? | FLOOR | FLOORS | FRAMING | ROOF | FOUNDATION | CEILING | RCP | LEVEL | BASEMENT | SITE | LAYOUT /,
    )
  )
    return 'Plan';
  return null;
}

interface ViewTitle {
  title: string;
  identifier: string | null;
  scale: string | null;
  /** Union of the title line, its scale line and its bubble text (sheet pixels). */
  box: BBox;
  type: BlockType;
}

function splitIdentifier(text: string): { identifier: string | null; title: string } {
  const m = /^(\d{1,3}[A-Za-z]?|[A-Z])\s+(.+)$/.exec(text.trim());
  if (m && m[1] && m[2] && !/^[23]D$/i.test(m[1]) && /[A-Za-z]/.test(m[2])) {
    return { identifier: m[1], title: m[2].trim() };
  }
  return { identifier: null, title: text.trim() };
}

function cleanScale(s: string): string {
  return s
    .replace(/^\s*SCALE\s*:?\s*/i, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function hDistance(a: BBox, b: BBox): number {
  return Math.max(0, Math.max(a.x, b.x) - Math.min(a.x + a.width, b.x + b.width));
}

function findViewTitles(lines: TextLine[]): ViewTitle[] {
  const horizontal = lines.filter((l) => l.angle === 0);
  const medFs = median(horizontal.map((l) => l.fontSize)) || 1;
  const used = new Set<TextLine>();
  const out: ViewTitle[] = [];

  const bubbleLeftOf = (t: TextLine, below: TextLine | null): TextLine | null => {
    for (const l of horizontal) {
      if (used.has(l) || l === t || !/^(\d{1,3}[A-Za-z]?|[A-Z])$/.test(l.text.trim())) continue;
      const gap = t.bbox.x - (l.bbox.x + l.bbox.width);
      // Close to the title only: zone letters of the sheet border sit further out in the margin.
      if (gap < 0 || gap > 2 * t.fontSize) continue;
      const y0 = t.bbox.y - t.fontSize;
      const y1 = (below ? below.bbox.y + below.bbox.height : t.bbox.y + t.bbox.height) + t.fontSize;
      const c = centerOf(l.bbox);
      if (c.y >= y0 && c.y <= y1) return l;
    }
    return null;
  };

  const add = (
    titleLine: TextLine,
    scaleLine: TextLine | null,
    scaleText: string | null,
    titleText: string,
  ) => {
    const split = splitIdentifier(titleText);
    let identifier = split.identifier;
    let box = titleLine.bbox;
    if (scaleLine) box = union(box, scaleLine.bbox);
    if (!identifier) {
      const b = bubbleLeftOf(titleLine, scaleLine);
      if (b) {
        identifier = b.text.trim();
        used.add(b);
        box = union(box, b.bbox);
      }
    }
    out.push({
      title: split.title,
      identifier,
      scale: scaleText,
      box,
      type: blockTypeFromTitle(split.title) ?? 'Other',
    });
  };

  // 1. Titles anchored by a scale line.
  for (const s of horizontal) {
    const m = SCALE_IN_TEXT_RE.exec(s.text);
    if (!m || used.has(s)) continue;
    const scaleText = cleanScale(s.text.slice(m.index));
    const before = s.text
      .slice(0, m.index)
      .replace(/\bSCALE\s*:?\s*$/i, '')
      .trim();
    used.add(s);
    if (/[A-Za-z]{2,}/.test(before)) {
      add(s, null, scaleText, before.replace(/[-–,:]\s*$/, '').trim());
      continue;
    }
    // The title line right above the scale line, left-aligned with it or overlapping it.
    let best: TextLine | null = null;
    let bestD = Infinity;
    for (const l of horizontal) {
      if (used.has(l) || !/[A-Za-z]{2,}/.test(l.text) || SCALE_IN_TEXT_RE.test(l.text)) continue;
      const dy = s.bbox.y - (l.bbox.y + l.bbox.height);
      if (dy < -0.6 * s.fontSize || dy > 2.5 * Math.max(s.fontSize, l.fontSize)) continue;
      if (l.bbox.y >= s.bbox.y) continue;
      const dx = Math.min(Math.abs(l.bbox.x - s.bbox.x), hDistance(l.bbox, s.bbox));
      if (dx > 4 * s.fontSize) continue;
      const d = Math.max(0, dy) + dx;
      if (d < bestD) {
        bestD = d;
        best = l;
      }
    }
    if (best) {
      used.add(best);
      add(best, s, scaleText, best.text);
    } else if (/SCALE/i.test(s.text)) {
      // A bare "SCALE: …" with no title nearby still marks a view.
      add(s, null, scaleText, 'View');
    }
  }

  // 2. Titles that name their type.
  for (const l of horizontal) {
    if (used.has(l)) continue;
    const text = l.text.trim();
    const nWords = text.split(/\s+/).length;
    if (nWords > 8 || text.length < 4) continue;
    // References and notes mention view types without being titles.
    if (/\b(SEE|SIM|TYP|REFER|PER|ON|AT SHEET)\b|\d\s*\/\s*[A-Z]{1,3}-?\d/i.test(text)) continue;
    const type = blockTypeFromTitle(text);
    if (!type || type === 'Other') continue;
    const strong =
      type === 'Schedule' ||
      type === 'Legend' ||
      type === 'KeyPlan' ||
      type === 'Notes' ||
      type === 'Diagram';
    const { identifier } = splitIdentifier(text);
    const large = l.fontSize >= 1.15 * medFs;
    if (!strong && !large && !identifier && !bubbleLeftOf(l, null)) continue;
    used.add(l);
    add(l, null, null, text);
  }
  return out;
}

// ---- ink grid ------------------------------------------------------------------------------------

interface Grid {
  cols: number;
  rows: number;
  cell: number;
  on: Uint8Array;
}

function makeGrid(width: number, height: number, dpi: number): Grid {
  const cell = Math.max(1, Math.round(dpi / 20));
  const cols = Math.ceil(width / cell);
  const rows = Math.ceil(height / cell);
  return { cols, rows, cell, on: new Uint8Array(cols * rows) };
}

function markImage(g: Grid, image: GreyImage): void {
  const { width, height, data } = image;
  for (let y = 0; y < height; y++) {
    const r = Math.floor(y / g.cell) * g.cols;
    for (let x = 0; x < width; x++) {
      if ((data[y * width + x] as number) < 160) g.on[r + Math.floor(x / g.cell)] = 1;
    }
  }
}

function markBox(g: Grid, b: BBox, value: number): void {
  const c0 = Math.max(0, Math.floor(b.x / g.cell));
  const c1 = Math.min(g.cols - 1, Math.floor((b.x + b.width) / g.cell));
  const r0 = Math.max(0, Math.floor(b.y / g.cell));
  const r1 = Math.min(g.rows - 1, Math.floor((b.y + b.height) / g.cell));
  for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) g.on[r * g.cols + c] = value;
}

/**
 * Clears rows / columns holding one unbroken run of ink across most of the sheet: sheet borders
 * and frame lines, which would otherwise join every view into one region. (Runs, not counts: a row
 * crossing two wide hatched drawings is not a line.)
 */
function dropLongLines(g: Grid): void {
  const longRow = (r: number) => {
    let run = 0;
    for (let c = 0; c < g.cols; c++) {
      run = g.on[r * g.cols + c] ? run + 1 : 0;
      if (run > 0.6 * g.cols) return true;
    }
    return false;
  };
  const longCol = (c: number) => {
    let run = 0;
    for (let r = 0; r < g.rows; r++) {
      run = g.on[r * g.cols + c] ? run + 1 : 0;
      if (run > 0.6 * g.rows) return true;
    }
    return false;
  };
  const rows: number[] = [];
  const cols: number[] = [];
  for (let r = 0; r < g.rows; r++) if (longRow(r)) rows.push(r);
  for (let c = 0; c < g.cols; c++) if (longCol(c)) cols.push(c);
  for (const r of rows) g.on.fill(0, r * g.cols, (r + 1) * g.cols);
  for (const c of cols) for (let r = 0; r < g.rows; r++) g.on[r * g.cols + c] = 0;
}

/**
 * Removes view titles and their underlines from the grid. A title sits in the gap between its view
 * and the next one; left in, it (and the rule under it, which runs past the text) would join them.
 */
function clearTitles(g: Grid, titles: ViewTitle[], dpi: number): BBox[] {
  const pad = Math.max(1, Math.round((0.06 * dpi) / g.cell));
  return titles.map((t) => {
    const c0 = Math.max(0, Math.floor(t.box.x / g.cell) - pad);
    const c1 = Math.min(g.cols - 1, Math.floor((t.box.x + t.box.width) / g.cell) + pad);
    const r0 = Math.max(0, Math.floor(t.box.y / g.cell) - pad);
    const r1 = Math.min(g.rows - 1, Math.floor((t.box.y + t.box.height) / g.cell) + pad);
    let right = c1;
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) g.on[r * g.cols + c] = 0;
      // The underline continues to the right of the text as one unbroken run of ink.
      let c = c1 + 1;
      for (; c < g.cols && g.on[r * g.cols + c]; c++) g.on[r * g.cols + c] = 0;
      right = Math.max(right, c - 1);
    }
    // The underline tells how wide the view is: use it as the title's horizontal reach.
    return { ...t.box, width: Math.max(t.box.width, (right + 1) * g.cell - t.box.x) };
  });
}

function dilate(g: Grid, radius: number): Uint8Array {
  // Separable box dilation: rows, then columns.
  const tmp = new Uint8Array(g.on.length);
  for (let r = 0; r < g.rows; r++) {
    let last = -Infinity;
    for (let c = 0; c < g.cols; c++) if (g.on[r * g.cols + c]) last = c;
    let next = Infinity;
    const rowNext = new Float64Array(g.cols);
    for (let c = g.cols - 1; c >= 0; c--) {
      if (g.on[r * g.cols + c]) next = c;
      rowNext[c] = next;
    }
    last = -Infinity;
    for (let c = 0; c < g.cols; c++) {
      if (g.on[r * g.cols + c]) last = c;
      if (c - last <= radius || (rowNext[c] as number) - c <= radius) tmp[r * g.cols + c] = 1;
    }
  }
  const out = new Uint8Array(g.on.length);
  for (let c = 0; c < g.cols; c++) {
    let last = -Infinity;
    const colNext = new Float64Array(g.rows);
    let next = Infinity;
    for (let r = g.rows - 1; r >= 0; r--) {
      if (tmp[r * g.cols + c]) next = r;
      colNext[r] = next;
    }
    for (let r = 0; r < g.rows; r++) {
      if (tmp[r * g.cols + c]) last = r;
      if (r - last <= radius || (colNext[r] as number) - r <= radius) out[r * g.cols + c] = 1;
    }
  }
  return out;
}

interface Region {
  /** Box of the region's undilated ink cells (sheet pixels). */
  box: BBox;
  /** Indices of its undilated ink cells. */
  cells: number[];
}

/** Connected regions of the dilated mask. */
function regions(g: Grid, dilated: Uint8Array): Region[] {
  const label = new Int32Array(g.on.length).fill(-1);
  const out: Region[] = [];
  const stack: number[] = [];
  for (let start = 0; start < dilated.length; start++) {
    if (!dilated[start] || label[start] !== -1) continue;
    const id = out.length;
    const cells: number[] = [];
    let c0 = Infinity;
    let c1 = -Infinity;
    let r0 = Infinity;
    let r1 = -Infinity;
    label[start] = id;
    stack.push(start);
    while (stack.length > 0) {
      const i = stack.pop() as number;
      const r = Math.floor(i / g.cols);
      const c = i - r * g.cols;
      if (g.on[i]) {
        cells.push(i);
        c0 = Math.min(c0, c);
        c1 = Math.max(c1, c);
        r0 = Math.min(r0, r);
        r1 = Math.max(r1, r);
      }
      const nb = [
        c > 0 ? i - 1 : -1,
        c < g.cols - 1 ? i + 1 : -1,
        r > 0 ? i - g.cols : -1,
        r < g.rows - 1 ? i + g.cols : -1,
      ];
      for (const j of nb) {
        if (j >= 0 && dilated[j] && label[j] === -1) {
          label[j] = id;
          stack.push(j);
        }
      }
    }
    if (cells.length > 0) {
      out.push({
        box: {
          x: c0 * g.cell,
          y: r0 * g.cell,
          width: (c1 - c0 + 1) * g.cell,
          height: (r1 - r0 + 1) * g.cell,
        },
        cells,
      });
    }
  }
  return out;
}

/** Cost of handing a region to a view title (sheet pixels); views carry their title at the bottom. */
function assignmentCost(region: BBox, title: BBox): number {
  const tc = centerOf(title);
  const inside =
    tc.x >= region.x &&
    tc.x <= region.x + region.width &&
    tc.y >= region.y &&
    tc.y <= region.y + region.height;
  if (inside) return 0;
  const dx = hDistance(region, title);
  const regionBottom = region.y + region.height;
  if (title.y + title.height < region.y) {
    // Title above the region: unusual (it is mostly the next view's notes or the office logo), so it
    // costs six times the distance.
    return 6 * (region.y - (title.y + title.height)) + dx;
  }
  return Math.max(0, title.y - regionBottom) + dx;
}

function drawingArea(width: number, height: number, tb: BBox | null): BBox {
  if (!tb) return { x: 0, y: 0, width, height };
  const left: BBox = { x: 0, y: 0, width: Math.max(0, tb.x), height };
  const above: BBox = { x: 0, y: 0, width, height: Math.max(0, tb.y) };
  return left.width * left.height >= above.width * above.height ? left : above;
}

function clip(b: BBox, width: number, height: number): BBox {
  const x0 = Math.max(0, Math.floor(b.x));
  const y0 = Math.max(0, Math.floor(b.y));
  const x1 = Math.min(width, Math.ceil(b.x + b.width));
  const y1 = Math.min(height, Math.ceil(b.y + b.height));
  return { x: x0, y: y0, width: Math.max(0, x1 - x0), height: Math.max(0, y1 - y0) };
}

function insideBox(b: BBox, tb: BBox | null): boolean {
  if (!tb) return false;
  const c = centerOf(b);
  return c.x >= tb.x && c.x <= tb.x + tb.width && c.y >= tb.y && c.y <= tb.y + tb.height;
}

/**
 * The sheet's `Sheet` block: the whole page. Its comparison is the whole-sheet overlay, which
 * reports every change on the page, in a view or not (contract §6).
 */
export function wholeSheetBlock(width: number, height: number): Block {
  return {
    type: 'Sheet',
    bbox: { x: 0, y: 0, width, height },
    identifier: null,
    // No title of its own: the sheet's title is the sheet's, and searching it belongs to the sheet.
    title: null,
    scale: null,
  };
}

export function segmentBlocks(input: SegmentBlocksInput): Block[] {
  const { items, width, height, dpi, image, titleBlockBox } = input;
  if (!(width > 0 && height > 0 && dpi > 0)) {
    throw new RangeError(
      `Expected positive width, height and dpi but received ${width}x${height} @ ${dpi}`,
    );
  }
  if (image && (image.width !== width || image.height !== height)) {
    throw new RangeError(
      `Expected the image to be ${width}x${height} sheet pixels but received ${image.width}x${image.height}`,
    );
  }
  const lines = buildLines(items).filter((l) => !insideBox(l.bbox, titleBlockBox));
  const titles = findViewTitles(lines);
  const blocks: Block[] = [];

  if (titles.length > 0) {
    const g = makeGrid(width, height, dpi);
    if (image) markImage(g, image);
    for (const l of lines) markBox(g, l.bbox, 1);
    dropLongLines(g);
    if (titleBlockBox) markBox(g, titleBlockBox, 0);
    const reach = clearTitles(g, titles, dpi);
    // Bridge gaps up to ~0.3 in (two cells of 0.05 in either side… three here): leaders, dimension
    // strings and hatch patterns stay with their view, separate views stay apart.
    const regs = regions(g, dilate(g, 3));
    const boxes = titles.map((t) => t.box);
    // Views on large sheets sit a few inches above their titles; allow up to 3 in or 15 % of the
    // sheet height, whichever is larger.
    const maxCost = Math.max(3 * dpi, 0.15 * height);
    const grow = (i: number, b: BBox) => {
      boxes[i] = union(boxes[i] as BBox, b);
    };
    for (const r of regs) {
      const costs = reach.map((t) => assignmentCost(r.box, t));
      const order = costs.map((c, i) => i).filter((i) => (costs[i] as number) <= maxCost);
      order.sort((a, b) => (costs[a] as number) - (costs[b] as number));
      if (order.length === 0) continue;
      const first = order[0] as number;
      const second = order[1];
      if (second === undefined || (costs[second] as number) > (costs[first] as number) + dpi) {
        grow(first, r.box);
        continue;
      }
      // Several titles under one connected region (views joined by grid or datum lines): split it
      // cell by cell between them.
      for (const idx of r.cells) {
        const row = Math.floor(idx / g.cols);
        const cell: BBox = {
          x: (idx - row * g.cols) * g.cell,
          y: row * g.cell,
          width: g.cell,
          height: g.cell,
        };
        let best = first;
        let bestCost = Infinity;
        for (const i of order) {
          const c = assignmentCost(cell, reach[i] as BBox);
          if (c < bestCost) {
            bestCost = c;
            best = i;
          }
        }
        grow(best, cell);
      }
    }
    titles.forEach((t, i) => {
      blocks.push({
        type: t.type,
        bbox: clip(boxes[i] as BBox, width, height),
        identifier: t.identifier,
        title: t.title,
        scale: t.scale,
      });
    });
  } else {
    const area = drawingArea(width, height, titleBlockBox);
    const sheetType = blockTypeFromTitle(input.sheetTitle);
    blocks.push({
      type: sheetType === 'Plan' ? 'Plan' : 'Other',
      bbox: clip(area, width, height),
      identifier: null,
      title: input.sheetTitle ?? null,
      scale: null,
    });
  }

  if (titleBlockBox) {
    blocks.push({
      type: 'TitleBlock',
      bbox: clip(titleBlockBox, width, height),
      identifier: null,
      title: input.sheetTitle ?? null,
      scale: null,
    });
  }
  return blocks;
}
