import {
  PDFDocument,
  PDFHexString,
  PDFName,
  appendBezierCurve,
  clip,
  closePath,
  concatTransformationMatrix,
  drawObject,
  endPath,
  moveTo,
  popGraphicsState,
  pushGraphicsState,
  rectangle,
  rgb,
  setLineWidth,
  setStrokingRgbColor,
  stroke,
  type PDFFont,
  type PDFPage,
  type RGB,
} from 'pdf-lib';
import { PALETTES } from '../../vision/compare/diff';
import { setLabel } from './csv';
import { plainFontkit, reportFontBytes } from './fonts';
import { cloudArcs } from './geometry';
import {
  REVIEW_STATUSES,
  scoreBand,
  sheetLabel,
  type ExportChange,
  type ExportModel,
  type ExportPair,
} from './model';
import { KIND_LABEL, KIND_RGB, type PaletteName } from './palette';
import type { PdfImage } from './report-image';

// The review report (contract §6, pdf_report): one PDF for a whole comparison, meant to be mailed
// to the design team or printed for a meeting:
//   cover — project, the two sets (name, revision, issue date), when and by which API key, counts;
//   summary — every sheet pair: status, similarity and its band, non-noise changes by review status,
//             and the page of its detail;
//   per changed sheet — the whole-sheet overlay with a numbered cloud per change, drawn as vectors
//             over the image (sharp at any zoom, numbers searchable), and the list of its changes.
//
// Text is real text in an embedded Unicode font (DejaVu Sans, subset to the glyphs used: fonts.ts),
// so the report is selectable and searchable and prints what the API holds — 10'-8 1/4" → 7'-3 1/2",
// ⌀, °, ½, curly quotes, Greek and Cyrillic in notes. A character the font lacks (CJK, emoji) is
// shown as '?' in the report; full Unicode stays in the CSV and the API.

export type PageSize = 'letter' | 'a4' | 'tabloid';

/** Landscape page sizes, points. */
export const PAGE_SIZES: Record<PageSize, [number, number]> = {
  letter: [792, 612],
  a4: [841.89, 595.28],
  tabloid: [1224, 792],
};

export interface ReportOptions {
  page_size: PageSize;
  palette: PaletteName;
  exported_at: Date;
  /** The API key's label (or its id when it has none) of the request that asked for the export. */
  exported_by: string;
}

const M = 36; // margin
const INK = rgb(0.13, 0.13, 0.13);
const MUTED = rgb(0.4, 0.4, 0.4);
const RULE = rgb(0.8, 0.8, 0.8);
const HEAD_BG = rgb(0.93, 0.94, 0.96);
/** Poor alignment: a warning that must not be missed, on the cover, the summary and the sheet. */
const ALERT = rgb(0.72, 0.11, 0.11);
const ALERT_BG = rgb(0.99, 0.93, 0.93);
/** Detail areas outlined on a dense sheet's overview. */
const DETAIL = rgb(0.16, 0.35, 0.62);

/** Spaces that must not stop a line from breaking, and a fallback for a glyph the font lacks. */
const SPACES = /[\r\n\t\u00a0\u2009\u202f]+/g;

/** Typesetting on one report: fonts, characters the font lacks, wrapping. */
class Typesetter {
  private readonly charset: Set<number>;
  constructor(
    readonly regular: PDFFont,
    readonly bold: PDFFont,
    readonly italic: PDFFont,
  ) {
    this.charset = new Set(regular.getCharacterSet());
  }

  /** Draws `s` (cleaned) on `page` at (x, y), PDF points from the bottom left. */
  draw(
    page: PDFPage,
    s: string,
    x: number,
    y: number,
    size: number,
    font = this.regular,
    color = INK,
  ) {
    page.drawText(this.clean(s), { x, y, size, font, color });
  }

  /** The text as the font can show it, on one line (newlines become spaces). */
  clean(s: string): string {
    let out = '';
    for (const ch of s.replace(SPACES, ' ')) out += this.charset.has(ch.codePointAt(0)!) ? ch : '?';
    return out;
  }

  width(s: string, size: number, font = this.regular): number {
    return font.widthOfTextAtSize(s, size);
  }

  /**
   * Words to lines no wider than `max`; a word longer than a line is cut where it must be. A line
   * never ends in a hyphen: text extractors (pdftotext, search in viewers) take a hyphen at a line's
   * end for a word broken in two and drop it, which turns the dimension 14' - 5 1/2" into 14' 5 1/2".
   */
  wrap(s: string, size: number, max: number, font = this.regular): string[] {
    const words: string[] = [];
    for (const w of this.clean(s).split(/ +/).filter(Boolean)) {
      const last = words.length - 1;
      if (last >= 0 && /-$/.test(words[last]!)) words[last] += ` ${w}`;
      else words.push(w);
    }
    const lines: string[] = [];
    let line = '';
    for (let w of words) {
      while (font.widthOfTextAtSize(w, size) > max) {
        let n = w.length - 1;
        while (n > 1 && font.widthOfTextAtSize(w.slice(0, n), size) > max) n--;
        if (line) lines.push(line);
        lines.push(w.slice(0, n));
        line = '';
        w = w.slice(n);
      }
      const next = line ? `${line} ${w}` : w;
      if (font.widthOfTextAtSize(next, size) <= max) line = next;
      else {
        lines.push(line);
        line = w;
      }
    }
    if (line) lines.push(line);
    return lines.length ? lines : [''];
  }

  /** One line, shortened with an ellipsis to fit `max`. */
  fit(s: string, size: number, max: number, font = this.regular): string {
    let t = this.clean(s);
    if (font.widthOfTextAtSize(t, size) <= max) return t;
    while (t.length > 1 && font.widthOfTextAtSize(`${t}…`, size) > max) t = t.slice(0, -1);
    return `${t.trimEnd()}…`;
  }
}

const rgbOf = (c: [number, number, number]): RGB => rgb(c[0], c[1], c[2]);
const pct = (v: number | null) => (v === null ? '—' : `${Math.round(v * 100)}%`);
const date = (iso: string | null) => (iso ? iso.slice(0, 16).replace('T', ' ') + ' UTC' : '—');
const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** Cloud outline in page space around [x0, y0, x1, y1] (points). */
function drawCloud(
  page: PDFPage,
  rect: [number, number, number, number],
  colour: [number, number, number],
  width: number,
) {
  const arc = Math.min(8, Math.max(2.5, Math.min(rect[2] - rect[0], rect[3] - rect[1]) / 3));
  const arcs = cloudArcs(rect, arc);
  page.pushOperators(
    pushGraphicsState(),
    setStrokingRgbColor(...colour),
    setLineWidth(width),
    moveTo(arcs[0]!.from[0], arcs[0]!.from[1]),
    ...arcs.map((a) => appendBezierCurve(a.c1[0], a.c1[1], a.c2[0], a.c2[1], a.to[0], a.to[1])),
    closePath(),
    stroke(),
    popGraphicsState(),
  );
}

export async function buildReportPdf(
  model: ExportModel,
  images: Map<string, PdfImage>,
  opts: ReportOptions,
): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const title = `Comparison report — ${model.project.name}`;
  doc.setTitle(title, { showInWindowTitleBar: true });
  doc.setSubject(`${setLabel(model.older)} → ${setLabel(model.newer)}`);
  doc.setCreator('Blueline');
  doc.setProducer('Blueline (pdf-lib)');
  doc.setCreationDate(opts.exported_at);
  doc.setModificationDate(opts.exported_at);
  doc.registerFontkit(plainFontkit);
  const faces = reportFontBytes();
  // Subset: only the glyphs the report uses are embedded (~20 KB a face instead of ~700 KB).
  const ts = new Typesetter(
    await doc.embedFont(faces.regular, { subset: true }),
    await doc.embedFont(faces.bold, { subset: true }),
    await doc.embedFont(faces.italic, { subset: true }),
  );
  const [W, H] = PAGE_SIZES[opts.page_size];
  const kinds = KIND_RGB[opts.palette];
  const overlayColours = PALETTES[opts.palette];
  const text = ts.draw.bind(ts);

  // ---- cover -------------------------------------------------------------------------------
  const cover = doc.addPage([W, H]);
  let y = H - M - 24;
  text(cover, 'Revision comparison report', M, y, 24, ts.bold);
  y -= 26;
  text(cover, model.project.name, M, y, 16, ts.regular, MUTED);
  y -= 34;
  const colW = (W - 2 * M - 24) / 2;
  const setBox = (x: number, label: string, d: ExportModel['older']) => {
    let yy = y;
    cover.drawRectangle({ x, y: yy - 78, width: colW, height: 92, color: HEAD_BG });
    text(cover, label, x + 10, yy, 9, ts.bold, MUTED);
    yy -= 18;
    text(cover, ts.fit(d.name, 14, colW - 20, ts.bold), x + 10, yy, 14, ts.bold);
    yy -= 17;
    text(cover, `Revision: ${d.revision ?? '—'}`, x + 10, yy, 10);
    yy -= 14;
    text(cover, `Issued: ${d.issued_at ?? '—'}`, x + 10, yy, 10);
    yy -= 14;
    text(cover, ts.fit(`File: ${d.filename}`, 9, colW - 20), x + 10, yy, 9, ts.regular, MUTED);
  };
  setBox(M, 'OLDER SET', model.older);
  setBox(M + colW + 24, 'NEWER SET', model.newer);
  y -= 110;

  // A sheet gets pages when it changed, and when its alignment is poor (whatever was found on it:
  // the reader must check it by eye, and its overlay is what they check it on).
  const shownPairs = model.pairs.filter(
    (p) => p.status === 'changed' || p.status === 'not_aligned' || p.overlay?.low_confidence,
  );
  const poorlyAligned = model.pairs.filter((p) => p.overlay?.low_confidence);
  const count = (s: ExportPair['status']) => model.pairs.filter((p) => p.status === s).length;
  const byStatus = Object.fromEntries(
    REVIEW_STATUSES.map((s) => [s, model.pairs.reduce((t, p) => t + p.counts[s], 0)]),
  ) as Record<(typeof REVIEW_STATUSES)[number], number>;
  const nonNoise = REVIEW_STATUSES.reduce((t, s) => t + byStatus[s], 0);
  const exported = model.pairs.flatMap((p) => p.changes.filter((c) => c.number !== null));
  const numbered = model.pairs.reduce((t, p) => t + p.groups.length, 0);
  const inGroups =
    numbered < exported.length
      ? ` under ${numbered} numbers (pieces of one change, touching, share a number)`
      : '';
  const noise = model.pairs.reduce((t, p) => t + p.noise, 0);
  const facts: [string, string][] = [
    ['Comparison', `${model.comparison.id} (${model.comparison.mode} comparison)`],
    ['Compared', date(model.comparison.finished_at ?? model.comparison.created_at)],
    ['Exported', `${date(opts.exported_at.toISOString())} by API key "${opts.exported_by}"`],
    [
      'Sheets',
      `${model.pairs.length - count('added') - count('removed')} pairs: ${count('changed')} changed, ${count('unchanged')} unchanged` +
        (count('not_aligned') ? `, ${count('not_aligned')} not aligned (not known)` : '') +
        `; ${count('added')} added, ${count('removed')} removed`,
    ],
    [
      'Changes',
      `${nonNoise} to review: ${REVIEW_STATUSES.map((s) => `${byStatus[s]} ${s}`).join(', ')}` +
        (noise ? ` (${noise} noise regions not listed)` : ''),
    ],
    [
      'This report',
      model.review_status
        ? `${exported.length} changes with review status ${model.review_status.join(' or ')}${inGroups}`
        : `all ${exported.length} changes${inGroups}`,
    ],
  ];
  for (const [k, v] of facts) {
    text(cover, k, M, y, 10, ts.bold, MUTED);
    const lines = ts.wrap(v, 11, W - 2 * M - 110);
    lines.forEach((l, i) => text(cover, l, M + 110, y - i * 14, 11));
    y -= 14 * lines.length + 8;
  }
  if (poorlyAligned.length) {
    // Said plainly: a sheet that could not be aligned is not a sheet without changes.
    const names = poorlyAligned.map((p) => sheetLabel(p.sheet_b ?? p.sheet_a)).join(', ');
    const lines = ts.wrap(
      `Poor alignment on ${poorlyAligned.length} sheet${poorlyAligned.length === 1 ? '' : 's'}: ${names}. ` +
        `The two issues of ${poorlyAligned.length === 1 ? 'this sheet' : 'these sheets'} could not be aligned with confidence: ` +
        `changes there may be missing or wrong, and "no changes" cannot be concluded. Compare ${poorlyAligned.length === 1 ? 'it' : 'them'} by eye (pages marked POOR ALIGNMENT).`,
      10,
      W - 2 * M - 24,
      ts.bold,
    );
    const h = lines.length * 13 + 12;
    cover.drawRectangle({
      x: M,
      y: y - h + 8,
      width: W - 2 * M,
      height: h,
      color: ALERT_BG,
      borderColor: ALERT,
      borderWidth: 1.2,
    });
    lines.forEach((l, i) => text(cover, l, M + 12, y - 6 - i * 13, 10, ts.bold, ALERT));
    y -= h + 6;
  }
  y -= 10;
  text(cover, 'Legend', M, y, 10, ts.bold, MUTED);
  let lx = M + 110;
  for (const k of ['added', 'removed', 'modified', 'moved'] as const) {
    drawCloud(cover, [lx, y - 3, lx + 22, y + 9], kinds[k], 1.2);
    text(cover, `${KIND_LABEL[k]} change`, lx + 28, y, 10);
    lx += 130;
  }
  y -= 20;
  const ink = overlayColours;
  const legendInk: [string, [number, number, number]][] = [
    ['unchanged ink', ink.ink],
    ['only in the older set (removed)', ink.removed],
    ['only in the newer set (added)', ink.added],
  ];
  lx = M + 110;
  text(cover, 'Overlay image:', lx, y, 9, ts.regular, MUTED);
  lx += 70;
  for (const [label, c] of legendInk) {
    cover.drawRectangle({
      x: lx,
      y: y - 1,
      width: 14,
      height: 8,
      color: rgbOf([c[0] / 255, c[1] / 255, c[2] / 255]),
    });
    text(cover, label, lx + 18, y, 9, ts.regular, MUTED);
    lx += ts.width(label, 9) + 34;
  }

  // ---- summary table (pages reserved now, filled once the sheet pages are numbered) ----------
  const rowH = 15;
  const tableTop = H - M - 40;
  const rowsPerPage = Math.floor((tableTop - M - 30) / rowH) - 1;
  const summaryPages: PDFPage[] = [];
  for (let i = 0; i < Math.max(1, Math.ceil(model.pairs.length / rowsPerPage)); i++)
    summaryPages.push(doc.addPage([W, H]));

  // ---- one section per changed sheet ---------------------------------------------------------
  const firstPageOf = new Map<ExportPair, number>();
  for (const pair of shownPairs) {
    // With a review_status filter, sheets left without any of those changes are not shown (a
    // poorly aligned one still is).
    if (model.review_status && pair.groups.length === 0 && !pair.overlay?.low_confidence) continue;
    firstPageOf.set(pair, doc.getPageCount() + 1);
    sheetSection(doc, ts, pair, images.get(pair.overlay!.id), model, opts, [W, H]);
  }

  // ---- fill the summary table ----------------------------------------------------------------
  const cols: { label: string; w: number; num?: boolean }[] = [
    { label: 'Sheet', w: 62 },
    { label: 'Title', w: 0 },
    { label: 'Status', w: 84 },
    { label: 'Similarity', w: 56, num: true },
    { label: 'Band', w: 128 },
    { label: 'Open', w: 38, num: true },
    { label: 'Accepted', w: 50, num: true },
    { label: 'Rejected', w: 48, num: true },
    { label: 'Flagged', w: 44, num: true },
    { label: 'Page', w: 34, num: true },
  ];
  cols[1]!.w = W - 2 * M - cols.reduce((t, c) => t + c.w, 0);
  summaryPages.forEach((page, pi) => {
    text(page, pi === 0 ? 'Sheet pairs' : 'Sheet pairs (continued)', M, H - M - 16, 16, ts.bold);
    let yy = tableTop;
    page.drawRectangle({ x: M, y: yy - 4, width: W - 2 * M, height: rowH, color: HEAD_BG });
    let x = M;
    for (const c of cols) {
      const lw = ts.width(c.label, 8, ts.bold);
      text(page, c.label, c.num ? x + c.w - 4 - lw : x + 4, yy, 8, ts.bold, MUTED);
      x += c.w;
    }
    yy -= rowH;
    for (const p of model.pairs.slice(pi * rowsPerPage, (pi + 1) * rowsPerPage)) {
      const s = p.sheet_b ?? p.sheet_a;
      const was =
        p.sheet_a && p.sheet_b && p.sheet_a.sheet_number !== p.sheet_b.sheet_number
          ? ` (was ${sheetLabel(p.sheet_a)})`
          : '';
      const cells = [
        sheetLabel(s),
        `${s?.title ?? ''}${was}`,
        p.overlay?.low_confidence ? 'Poor alignment' : cap(p.status.replace('_', ' ')),
        p.overlay ? pct(p.overlay.score) : '—',
        p.overlay ? scoreBand(p.overlay.score) : '—',
        ...REVIEW_STATUSES.map((st) => (p.overlay?.analyzed ? String(p.counts[st]) : '—')),
        firstPageOf.has(p) ? String(firstPageOf.get(p)) : '',
      ];
      x = M;
      cells.forEach((v, i) => {
        const c = cols[i]!;
        const poor = i === 2 && p.overlay?.low_confidence;
        const font = i === 0 || poor ? ts.bold : ts.regular;
        const t = ts.fit(v, 8.5, c.w - 8, font);
        const color = poor ? ALERT : i === 2 && p.status === 'changed' ? rgb(0.75, 0.3, 0) : INK;
        text(page, t, c.num ? x + c.w - 4 - ts.width(t, 8.5, font) : x + 4, yy, 8.5, font, color);
        x += c.w;
      });
      page.drawLine({
        start: { x: M, y: yy - 4 },
        end: { x: W - M, y: yy - 4 },
        thickness: 0.4,
        color: RULE,
      });
      yy -= rowH;
    }
  });

  // ---- footers -------------------------------------------------------------------------------
  const pages = doc.getPages();
  pages.forEach((page, i) => {
    const left = ts.fit(
      `Blueline · ${model.project.name} · ${setLabel(model.older)} → ${setLabel(model.newer)}`,
      7.5,
      W / 2,
      ts.regular,
    );
    text(page, left, M, M / 2, 7.5, ts.regular, MUTED);
    const right = `Page ${i + 1} of ${pages.length}`;
    text(page, right, W - M - ts.width(right, 7.5), M / 2, 7.5, ts.regular, MUTED);
  });
  return doc.save();
}

/** Views of a sheet and their clouds: the part of the overlay a page shows, and where. */
interface View {
  /** Overlay pixels shown. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/** A sheet with more groups than this gets zoomed detail pages after its overview. */
export const DETAIL_AFTER = 24;
/** At most about this many groups in one detail view. */
const PER_DETAIL = 20;

/**
 * The detail views of a dense sheet: a grid over the groups' extent, as many cells as it takes to
 * hold about PER_DETAIL groups each (by their centres), cells shaped like the page's drawing area;
 * cells without a group are dropped. Each view is its cell grown to hold its groups whole.
 */
export function detailViews(
  groups: { bbox: { x: number; y: number; width: number; height: number } }[],
  overlay: { width: number; height: number },
  areaAspect: number,
): { view: View; members: number[] }[] {
  if (groups.length <= DETAIL_AFTER) return [];
  const ext = {
    x0: Math.min(...groups.map((g) => g.bbox.x)),
    y0: Math.min(...groups.map((g) => g.bbox.y)),
    x1: Math.max(...groups.map((g) => g.bbox.x + g.bbox.width)),
    y1: Math.max(...groups.map((g) => g.bbox.y + g.bbox.height)),
  };
  const ew = Math.max(1, ext.x1 - ext.x0);
  const eh = Math.max(1, ext.y1 - ext.y0);
  let best: { view: View; members: number[] }[] = [];
  for (let cells = 2; cells <= 16; cells++) {
    // cols/rows so a cell's aspect is near the drawing area's.
    const cols = Math.max(1, Math.round(Math.sqrt((cells * ew) / (eh * areaAspect))));
    const rows = Math.max(1, Math.ceil(cells / cols));
    const cw = ew / cols;
    const ch = eh / rows;
    const buckets: number[][] = Array.from({ length: cols * rows }, () => []);
    groups.forEach((g, i) => {
      const cx = g.bbox.x + g.bbox.width / 2;
      const cy = g.bbox.y + g.bbox.height / 2;
      const c = Math.min(cols - 1, Math.floor((cx - ext.x0) / cw));
      const r = Math.min(rows - 1, Math.floor((cy - ext.y0) / ch));
      buckets[r * cols + c]!.push(i);
    });
    best = [];
    buckets.forEach((members, k) => {
      if (!members.length) return;
      const c = k % cols;
      const r = Math.floor(k / cols);
      let x0 = ext.x0 + c * cw;
      let y0 = ext.y0 + r * ch;
      let x1 = x0 + cw;
      let y1 = y0 + ch;
      for (const i of members) {
        const b = groups[i]!.bbox;
        // A group larger than the cell (a fill over a whole plan) is seen on the overview; the
        // detail shows the part of it in the cell.
        if (b.width > 1.5 * cw || b.height > 1.5 * ch) continue;
        x0 = Math.min(x0, b.x);
        y0 = Math.min(y0, b.y);
        x1 = Math.max(x1, b.x + b.width);
        y1 = Math.max(y1, b.y + b.height);
      }
      // A margin of 4 % so clouds and tags at the edge are not cut, within the overlay.
      const m = 0.04 * Math.max(x1 - x0, y1 - y0);
      x0 = Math.max(0, x0 - m);
      y0 = Math.max(0, y0 - m);
      x1 = Math.min(overlay.width, x1 + m);
      y1 = Math.min(overlay.height, y1 + m);
      best.push({ view: { x: x0, y: y0, w: x1 - x0, h: y1 - y0 }, members });
    });
    if (best.every((b) => b.members.length <= PER_DETAIL)) break;
  }
  return best;
}

/** Places round tags (radius r) near their clouds, avoiding tags already placed. */
class TagPlacer {
  private placed: [number, number, number][] = [];
  constructor(private readonly bounds: [number, number, number, number]) {}

  /** The centre for a tag of radius r beside rect [x0, y0, x1, y1] (page points, y up). */
  place([x0, y0, x1, y1]: [number, number, number, number], r: number): [number, number] {
    const [bx0, by0, bx1, by1] = this.bounds;
    const d = r + 2;
    const cands: [number, number][] = [
      [x1 + d * 0.6, y1 + d * 0.4],
      [x0 - d * 0.6, y1 + d * 0.4],
      [x1 + d * 0.6, y0 - d * 0.4],
      [x0 - d * 0.6, y0 - d * 0.4],
      [x1 + d, (y0 + y1) / 2],
      [x0 - d, (y0 + y1) / 2],
      [(x0 + x1) / 2, y1 + d],
      [(x0 + x1) / 2, y0 - d],
      [x1 + 2.4 * d, y1 + d * 0.4],
      [x0 - 2.4 * d, y1 + d * 0.4],
      [x1 - d, y1 - d],
    ].map(([x, y]) => [
      Math.min(bx1 - r, Math.max(bx0 + r, x!)),
      Math.min(by1 - r, Math.max(by0 + r, y!)),
    ]);
    const overlap = ([x, y]: [number, number]) =>
      this.placed.reduce((t, [px, py, pr]) => {
        const gap = Math.hypot(x - px, y - py) - (r + pr + 1);
        return t + (gap < 0 ? -gap : 0);
      }, 0);
    let best = cands[0]!;
    let bestO = Infinity;
    for (const c of cands) {
      const o = overlap(c);
      if (o < bestO - 1e-6) {
        best = c;
        bestO = o;
      }
      if (o === 0) break;
    }
    this.placed.push([best[0], best[1], r]);
    return best;
  }
}

/** How a group of changes reads in the list. */
interface Entry {
  number: number;
  members: ExportChange[];
  head: string;
  desc: string[];
  textLine: string[];
  note: string[];
  need: number;
}

function entryOf(
  ts: Typesetter,
  number: number,
  members: ExportChange[],
  size: number,
  lead: number,
  textW: number,
): Entry {
  const c = members[0]!;
  const n = members.length;
  const statuses = new Map<string, number>();
  for (const m of members) statuses.set(m.review_status, (statuses.get(m.review_status) ?? 0) + 1);
  const review =
    statuses.size === 1
      ? cap(c.review_status)
      : [...statuses].map(([s, k]) => `${k} ${s}`).join(', ');
  const head =
    `${KIND_LABEL[c.kind]} · ${c.category.replace('_', ' ')} · Review: ${review}` +
    (n > 1 ? ` · ${n} regions` : '');
  const description = c.description ?? `${KIND_LABEL[c.kind]} ${c.category}`;
  const desc = ts.wrap(description, size, textW);
  const sameText = members.every(
    (m) => m.text_before === c.text_before && m.text_after === c.text_after,
  );
  const textLine = sameText ? textLineOf(c, desc.join(' '), ts, size, textW) : [];
  const notes = [...new Set(members.map((m) => m.note).filter((x): x is string => !!x))];
  const note = notes.flatMap((t) => ts.wrap(`Note: ${t}`, size, textW, ts.italic));
  return {
    number,
    members,
    head,
    desc,
    textLine,
    note,
    need: lead * (1 + desc.length + textLine.length + note.length) + 6,
  };
}

/**
 * The pages of one changed (or not aligned) sheet: header, the whole-sheet overlay with a numbered
 * cloud per group of changes, zoomed detail views when it has more than DETAIL_AFTER groups (the
 * same numbers, legible), then the list of its changes by number, on continuation pages as long as
 * it takes.
 */
function sheetSection(
  doc: PDFDocument,
  ts: Typesetter,
  pair: ExportPair,
  image: PdfImage | undefined,
  model: ExportModel,
  opts: ReportOptions,
  [W, H]: [number, number],
) {
  const kinds = KIND_RGB[opts.palette];
  const text = ts.draw.bind(ts);
  const a = pair.sheet_a!;
  const b = pair.sheet_b!;
  const ov = pair.overlay!;
  const heading = `${sheetLabel(b)}${b.title ? ` — ${b.title}` : ''}`;
  const byId = new Map(pair.changes.map((c) => [c.id, c]));
  const groups = pair.groups.map((g) => ({
    ...g,
    members: g.change_ids.map((id) => byId.get(id)!),
  }));
  const listedCount = pair.changes.filter((c) => c.number !== null).length;

  let page = doc.addPage([W, H]);
  let y = H - M - 14;
  const statusWords = ov.low_confidence
    ? `POOR ALIGNMENT (confidence ${ov.alignment_confidence?.toFixed(2) ?? '—'})`
    : cap(pair.status);
  const right = `${statusWords} · similarity ${pct(ov.score)} (${scoreBand(ov.score)})`;
  const rightW = ts.width(right, 9, ov.low_confidence ? ts.bold : ts.regular);
  text(page, ts.fit(heading, 15, W - 2 * M - rightW - 16, ts.bold), M, y, 15, ts.bold);
  text(
    page,
    right,
    W - M - rightW,
    y + 2,
    9,
    ov.low_confidence ? ts.bold : ts.regular,
    ov.low_confidence ? ALERT : MUTED,
  );
  y -= 14;
  const sub =
    `Older: ${sheetLabel(a)} in ${setLabel(model.older)}  ·  Newer: ${sheetLabel(b)} in ${setLabel(model.newer)}  ·  ` +
    `${listedCount} change${listedCount === 1 ? '' : 's'}` +
    (groups.length !== listedCount ? ` in ${groups.length} numbered groups` : '') +
    (pair.noise ? ` (${pair.noise} noise regions not shown)` : '');
  text(page, ts.fit(sub, 8.5, W - 2 * M), M, y, 8.5, ts.regular, MUTED);
  y -= 8;
  if (ov.low_confidence) {
    const lines = ts.wrap(
      `Poor alignment: the two issues of this sheet could not be aligned with confidence, so the overlay may show differences that are not changes, and changes may be missing from the list${listedCount ? '' : ' (none were detected on it)'}. Compare this sheet by eye.` +
        (ov.alignment_warning ? ` ${ov.alignment_warning}` : ''),
      9,
      W - 2 * M - 20,
      ts.bold,
    );
    const h = lines.length * 12 + 10;
    page.drawRectangle({
      x: M,
      y: y - h - 2,
      width: W - 2 * M,
      height: h,
      color: ALERT_BG,
      borderColor: ALERT,
      borderWidth: 1,
    });
    lines.forEach((l, i) => text(page, l, M + 10, y - 14 - i * 12, 9, ts.bold, ALERT));
    y -= h + 6;
  }

  // The list: one entry per group, in one column under a drawing when short, else in two columns
  // (lines a reader's width, half the pages). Its height decides the layout.
  const indent = 30;
  const size = 8.5;
  const lead = 11;
  const gutter = 24;
  const areaW = W - 2 * M;
  const colW2 = (areaW - gutter) / 2;
  const entriesOf = (gs: typeof groups, width: number) =>
    gs.map((g) => entryOf(ts, g.number, g.members, size, lead, width - indent));
  const oneColH = (es: Entry[]) => es.reduce((t, e) => t + e.need, 0) + 14;
  /** Height of two columns filled in order, split where the taller is least tall. */
  const twoColH = (es: Entry[]) => {
    const total = es.reduce((t, e) => t + e.need, 0);
    let acc = 0;
    let best = total;
    for (const e of es) {
      acc += e.need;
      best = Math.min(best, Math.max(acc, total - acc));
    }
    return best + 14;
  };
  const listed = ov.analyzed ? groups : [];
  const room = y - M - 14;
  const details = image ? detailViews(listed, ov, areaW / (H - 2 * M - 60)) : [];
  let below: { entries: Entry[]; columns: 1 | 2; height: number } | null = null;
  if (details.length === 0 && listed.length) {
    const one = entriesOf(listed, areaW);
    const two = entriesOf(listed, colW2);
    // A short list goes under the overview; a long one on the pages after, so the drawing keeps
    // the whole page (legibility first: this is what gets printed).
    if (oneColH(one) <= room * 0.3) below = { entries: one, columns: 1, height: oneColH(one) };
    else if (twoColH(two) <= room * 0.38)
      below = { entries: two, columns: 2, height: twoColH(two) };
  }
  const areaH = below ? room - below.height : room;

  /**
   * Draws `es` from (y = top) down to `bottom` in `columns`, then on continuation pages headed
   * `title`; returns where it ended.
   */
  const flowList = (es: Entry[], columns: 1 | 2, top: number, bottom: number, title: string) => {
    const cw = columns === 1 ? areaW : colW2;
    let col = 0;
    let colTop = top;
    let yy = top;
    for (const { number, members, head, desc, textLine, note, need } of es) {
      if (yy - need < bottom) {
        if (col + 1 < columns) {
          col++;
          yy = colTop;
        } else {
          page = doc.addPage([W, H]);
          const t = H - M - 14;
          text(page, ts.fit(title, 13, areaW, ts.bold), M, t, 13, ts.bold);
          colTop = yy = t - 22;
          bottom = M + 10;
          col = 0;
        }
      }
      const x0 = M + col * (cw + gutter);
      const colour = rgbOf(kinds[members[0]!.kind]);
      const label = String(number);
      const r = Math.max(7.5, ts.width(label, 7.5, ts.bold) / 2 + 2);
      page.drawCircle({
        x: x0 + 9,
        y: yy + 3,
        size: r,
        borderColor: colour,
        borderWidth: 1,
        color: rgb(1, 1, 1),
      });
      text(page, label, x0 + 9 - ts.width(label, 7.5, ts.bold) / 2, yy + 0.5, 7.5, ts.bold, colour);
      text(page, head, x0 + indent, yy, size, ts.bold);
      yy -= lead;
      for (const l of desc) {
        text(page, l, x0 + indent, yy, size);
        yy -= lead;
      }
      for (const l of textLine) {
        text(page, l, x0 + indent, yy, size, ts.regular, MUTED);
        yy -= lead;
      }
      for (const l of note) {
        text(page, l, x0 + indent, yy, size, ts.italic);
        yy -= lead;
      }
      yy -= 6;
    }
    return yy;
  };

  /** Draws the overlay's `view` into the page box (x, top y, w, h) with the groups' clouds. */
  const drawView = (
    pg: PDFPage,
    view: View,
    box: { x: number; top: number; w: number; h: number },
  ): { ix: number; iy: number; k: number; ih: number } => {
    const k = Math.min(box.w / view.w, box.h / view.h);
    const iw = view.w * k;
    const ih = view.h * k;
    const ix = box.x + (box.w - iw) / 2;
    const iy = box.top - ih;
    const name = pg.node.newXObject('Overlay', imageRef!);
    // The whole image, placed so the view fills the box, clipped to it.
    pg.pushOperators(
      pushGraphicsState(),
      rectangle(ix, iy, iw, ih),
      clip(),
      endPath(),
      concatTransformationMatrix(
        ov.width * k,
        0,
        0,
        ov.height * k,
        ix - view.x * k,
        iy + ih + view.y * k - ov.height * k,
      ),
      drawObject(name),
      popGraphicsState(),
    );
    pg.drawRectangle({ x: ix, y: iy, width: iw, height: ih, borderColor: RULE, borderWidth: 0.5 });
    const toPage = (px: number, py: number): [number, number] => [
      ix + (px - view.x) * k,
      iy + ih - (py - view.y) * k,
    ];
    const tags: [number, number, (typeof groups)[number]][] = [];
    const placer = new TagPlacer([ix, iy, ix + iw, iy + ih]);
    const tagSize = 6.5;
    const radius = (g: (typeof groups)[number]) =>
      Math.max(5, ts.width(String(g.number), tagSize, ts.bold) / 2 + 2);
    const rects: [(typeof groups)[number], [number, number, number, number]][] = [];
    pg.pushOperators(pushGraphicsState(), rectangle(ix, iy, iw, ih), clip(), endPath());
    for (const g of groups) {
      const bb = g.bbox;
      if (bb.x > view.x + view.w || bb.y > view.y + view.h) continue;
      if (bb.x + bb.width < view.x || bb.y + bb.height < view.y) continue;
      const pad = 2.5;
      const [px0, py1] = toPage(bb.x, bb.y);
      const [px1, py0] = toPage(bb.x + bb.width, bb.y + bb.height);
      // Outside the view a cloud is cut by the clip, not squeezed to its edge.
      const rect: [number, number, number, number] = [px0 - pad, py0 - pad, px1 + pad, py1 + pad];
      drawCloud(pg, rect, kinds[g.members[0]!.kind], 1);
      rects.push([
        g,
        [
          Math.max(ix, rect[0]),
          Math.max(iy, rect[1]),
          Math.min(ix + iw, rect[2]),
          Math.min(iy + ih, rect[3]),
        ],
      ]);
    }
    pg.pushOperators(popGraphicsState());
    // Tags after every cloud so no cloud line crosses a number; small clouds place first (their
    // tag must be close to be found), large ones take what is left.
    const area = (r: [number, number, number, number]) => (r[2] - r[0]) * (r[3] - r[1]);
    for (const [g, rect] of [...rects].sort((p, q) => area(p[1]) - area(q[1]))) {
      const [tx, ty] = placer.place(rect, radius(g));
      tags.push([tx, ty, g]);
    }
    for (const [tx, ty, g] of tags) {
      const label = String(g.number);
      const colour = rgbOf(kinds[g.members[0]!.kind]);
      pg.drawCircle({
        x: tx,
        y: ty,
        size: radius(g),
        color: rgb(1, 1, 1),
        borderColor: colour,
        borderWidth: 0.9,
      });
      const lw = ts.width(label, tagSize, ts.bold);
      text(pg, label, tx - lw / 2, ty - tagSize * 0.36, tagSize, ts.bold, colour);
    }
    return { ix, iy, k, ih };
  };

  const imageRef = image ? embedImage(doc, image) : null;
  if (image) {
    const whole: View = { x: 0, y: 0, w: ov.width, h: ov.height };
    const { ix, iy, k, ih } = drawView(page, whole, { x: M, top: y - 4, w: areaW, h: areaH });
    // Detail areas outlined and lettered on the overview, with the page that shows each. Pages
    // are known once each detail's list is laid out: labels are drawn after.
    const detailPages: number[] = [];
    y = iy - 14;
    if (details.length)
      text(
        page,
        `${listed.length} numbered changes: the detail views ${detailLetter(0)}–${detailLetter(details.length - 1)} on the next pages show them larger, each with the list of its changes.`,
        M,
        y,
        8.5,
        ts.italic,
        MUTED,
      );
    const overview = page;
    details.forEach((d, i) => {
      page = doc.addPage([W, H]);
      detailPages.push(doc.getPageCount());
      const top = H - M - 14;
      const members = d.members.map((m) => listed[m]!).sort((p, q) => p.number - q.number);
      const title = `${heading} — detail ${detailLetter(i)} of ${details.length}`;
      text(page, ts.fit(title, 13, areaW - 230, ts.bold), M, top, 13, ts.bold);
      const range = ts.fit(`Changes ${compactRanges(members.map((g) => g.number))}`, 8.5, 220);
      text(page, range, W - M - ts.width(range, 8.5), top + 2, 8.5, ts.regular, MUTED);
      const es = entriesOf(members, colW2);
      const roomD = top - 10 - M - 14;
      const viewH = roomD - Math.min(twoColH(es), roomD * 0.42);
      const v = drawView(page, d.view, { x: M, top: top - 10, w: areaW, h: viewH });
      flowList(es, 2, v.iy - 16, M + 10, `${title} — changes (continued)`);
    });
    details.forEach((d, i) => {
      const x0 = ix + d.view.x * k;
      const y1 = iy + ih - d.view.y * k;
      overview.drawRectangle({
        x: x0,
        y: y1 - d.view.h * k,
        width: d.view.w * k,
        height: d.view.h * k,
        borderColor: DETAIL,
        borderWidth: 0.8,
        borderDashArray: [4, 3],
      });
      const label = `${detailLetter(i)} · p. ${detailPages[i]}`;
      const lw = ts.width(label, 8, ts.bold);
      overview.drawRectangle({ x: x0 + 1, y: y1 - 12, width: lw + 6, height: 11, color: DETAIL });
      text(overview, label, x0 + 4, y1 - 9.5, 8, ts.bold, rgb(1, 1, 1));
    });
  } else {
    text(
      page,
      'The overlay image of this sheet pair is not available.',
      M,
      y - 20,
      10,
      ts.italic,
      MUTED,
    );
    y -= 40;
  }

  if (!ov.analyzed) {
    text(
      page,
      'Change detection has not run on this sheet pair: the overlay shows where ink differs, but no changes are listed.',
      M,
      y,
      9,
      ts.italic,
      MUTED,
    );
    return;
  }
  if (listed.length === 0) {
    if (!ov.low_confidence)
      text(page, 'No changes to review on this sheet (only noise).', M, y, 9, ts.italic, MUTED);
    return;
  }
  if (details.length) return;
  const title = `${heading} — changes`;
  if (below) flowList(below.entries, below.columns, y, y - below.height, `${title} (continued)`);
  else {
    page = doc.addPage([W, H]);
    const t = H - M - 14;
    text(page, ts.fit(title, 13, areaW, ts.bold), M, t, 13, ts.bold);
    flowList(entriesOf(listed, colW2), 2, t - 22, M + 10, `${title} (continued)`);
  }
}

/** A, B, … Z, AA, AB … */
function detailLetter(i: number): string {
  return i < 26
    ? String.fromCharCode(65 + i)
    : detailLetter(Math.floor(i / 26) - 1) + detailLetter(i % 26);
}

/** 1, 2, 3, 5, 7, 8 → "1–3, 5, 7–8". */
export function compactRanges(nums: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < nums.length;) {
    let j = i;
    while (j + 1 < nums.length && nums[j + 1] === nums[j]! + 1) j++;
    out.push(j > i ? `${nums[i]}–${nums[j]}` : String(nums[i]));
    i = j + 1;
  }
  return out.join(', ');
}

/**
 * The "before → after" line of a change, unless the description already quotes both sides (the
 * text and dimension descriptions do), and said as context when the words did not change.
 */
function textLineOf(
  c: ExportChange,
  description: string,
  ts: Typesetter,
  size: number,
  width: number,
): string[] {
  const before = c.text_before ?? '';
  const after = c.text_after ?? '';
  if (!before && !after) return [];
  // Said already when each of its words is in the description (the description lists dimensions
  // with commas, the text holds them with spaces).
  const said = (s: string) =>
    ts
      .clean(s)
      .split(/\s+/)
      .every((w) => !w || description.includes(w));
  if (said(before) && said(after)) return [];
  if (before === after) return ts.wrap(`Text nearby (unchanged): “${after}”`, size, width);
  if (!before) return ts.wrap(`Text added: “${after}”`, size, width);
  if (!after) return ts.wrap(`Text removed: “${before}”`, size, width);
  return ts.wrap(`Text: “${before}” → “${after}”`, size, width);
}

/**
 * A prepared overlay image as an image XObject: its PNG scanlines as they are (FlateDecode with
 * the PNG predictors), its palette as an /Indexed colour space.
 */
function embedImage(doc: PDFDocument, img: PdfImage) {
  const ctx = doc.context;
  const colorSpace = img.palette
    ? ctx.obj([
        PDFName.of('Indexed'),
        PDFName.of('DeviceRGB'),
        img.palette.length / 3 - 1,
        PDFHexString.of(Buffer.from(img.palette).toString('hex')),
      ])
    : PDFName.of(img.colors === 3 ? 'DeviceRGB' : 'DeviceGray');
  const stream = ctx.stream(img.data, {
    Type: 'XObject',
    Subtype: 'Image',
    Width: img.width,
    Height: img.height,
    BitsPerComponent: img.bitDepth,
    ColorSpace: colorSpace,
    Filter: 'FlateDecode',
    DecodeParms: {
      Predictor: 15,
      Colors: img.colors,
      BitsPerComponent: img.bitDepth,
      Columns: img.width,
    },
  });
  return ctx.register(stream);
}
