import {
  PDFDocument,
  PDFHexString,
  PDFName,
  StandardFonts,
  appendBezierCurve,
  closePath,
  concatTransformationMatrix,
  drawObject,
  moveTo,
  popGraphicsState,
  pushGraphicsState,
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
// Text is real text (Helvetica, the PDF standard font every viewer has), so the report is
// selectable and searchable; the standard fonts speak WinAnsi only, so characters outside it are
// spelt in ASCII (→ as ->) or shown as '?': full Unicode stays in the CSV and the API.

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

const ASCII_FOR: Record<string, string> = {
  '→': '->',
  '←': '<-',
  '≥': '>=',
  '≤': '<=',
  '−': '-',
  '⌀': 'Ø',
  '≈': '~',
  '\u00a0': ' ',
  '\u2009': ' ',
  '\u202f': ' ',
};

/** Typesetting on one report: fonts, WinAnsi cleanup, wrapping. */
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

  /** The text as the standard fonts can show it (one line: newlines become spaces). */
  clean(s: string): string {
    let out = '';
    for (const ch of s.replace(/[\r\n\t]+/g, ' ')) {
      const mapped = ASCII_FOR[ch];
      if (mapped !== undefined) out += mapped;
      else out += this.charset.has(ch.codePointAt(0)!) ? ch : '?';
    }
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
    while (t.length > 1 && font.widthOfTextAtSize(`${t}...`, size) > max) t = t.slice(0, -1);
    return `${t}...`;
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
  doc.setTitle(title.replace('—', '-'), { showInWindowTitleBar: true });
  doc.setSubject(`${setLabel(model.older)} -> ${setLabel(model.newer)}`);
  doc.setCreator('Blueline');
  doc.setProducer('Blueline (pdf-lib)');
  doc.setCreationDate(opts.exported_at);
  doc.setModificationDate(opts.exported_at);
  const ts = new Typesetter(
    await doc.embedFont(StandardFonts.Helvetica),
    await doc.embedFont(StandardFonts.HelveticaBold),
    await doc.embedFont(StandardFonts.HelveticaOblique),
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

  const changedPairs = model.pairs.filter((p) => p.status === 'changed');
  const count = (s: ExportPair['status']) => model.pairs.filter((p) => p.status === s).length;
  const byStatus = Object.fromEntries(
    REVIEW_STATUSES.map((s) => [s, model.pairs.reduce((t, p) => t + p.counts[s], 0)]),
  ) as Record<(typeof REVIEW_STATUSES)[number], number>;
  const nonNoise = REVIEW_STATUSES.reduce((t, s) => t + byStatus[s], 0);
  const exported = model.pairs.flatMap((p) => p.changes.filter((c) => c.number !== null));
  const noise = model.pairs.reduce((t, p) => t + p.noise, 0);
  const facts: [string, string][] = [
    ['Comparison', `${model.comparison.id} (${model.comparison.mode} comparison)`],
    ['Compared', date(model.comparison.finished_at ?? model.comparison.created_at)],
    ['Exported', `${date(opts.exported_at.toISOString())} by API key "${opts.exported_by}"`],
    [
      'Sheets',
      `${model.pairs.length - count('added') - count('removed')} pairs: ${count('changed')} changed, ${count('unchanged')} unchanged; ${count('added')} added, ${count('removed')} removed`,
    ],
    [
      'Changes',
      `${nonNoise} to review: ${REVIEW_STATUSES.map((s) => `${byStatus[s]} ${s}`).join(', ')}` +
        (noise ? ` (${noise} noise regions not listed)` : ''),
    ],
    [
      'This report',
      model.review_status
        ? `${exported.length} changes with review status ${model.review_status.join(' or ')}`
        : `all ${exported.length} changes`,
    ],
  ];
  for (const [k, v] of facts) {
    text(cover, k, M, y, 10, ts.bold, MUTED);
    const lines = ts.wrap(v, 11, W - 2 * M - 110);
    lines.forEach((l, i) => text(cover, l, M + 110, y - i * 14, 11));
    y -= 14 * lines.length + 8;
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
  for (const pair of changedPairs) {
    const listed = pair.changes.filter((c) => c.number !== null);
    // With a review_status filter, sheets left without any of those changes are not shown.
    if (model.review_status && listed.length === 0) continue;
    firstPageOf.set(pair, doc.getPageCount() + 1);
    sheetSection(doc, ts, pair, listed, images.get(pair.overlay!.id), model, opts, [W, H]);
  }

  // ---- fill the summary table ----------------------------------------------------------------
  const cols: { label: string; w: number; num?: boolean }[] = [
    { label: 'Sheet', w: 62 },
    { label: 'Title', w: 0 },
    { label: 'Status', w: 64 },
    { label: 'Similarity', w: 56, num: true },
    { label: 'Band', w: 112 },
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
        cap(p.status),
        p.overlay ? pct(p.overlay.score) : '—',
        p.overlay ? scoreBand(p.overlay.score) : '—',
        ...REVIEW_STATUSES.map((st) => (p.overlay?.analyzed ? String(p.counts[st]) : '—')),
        firstPageOf.has(p) ? String(firstPageOf.get(p)) : '',
      ];
      x = M;
      cells.forEach((v, i) => {
        const c = cols[i]!;
        const font = i === 0 ? ts.bold : ts.regular;
        const t = ts.fit(v, 8.5, c.w - 8, font);
        const color = i === 2 && p.status === 'changed' ? rgb(0.75, 0.3, 0) : INK;
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
      `Blueline · ${model.project.name} · ${setLabel(model.older)} -> ${setLabel(model.newer)}`,
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

/** The pages of one changed sheet: header, overlay with numbered clouds, then its changes. */
function sheetSection(
  doc: PDFDocument,
  ts: Typesetter,
  pair: ExportPair,
  listed: ExportChange[],
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

  let page = doc.addPage([W, H]);
  let y = H - M - 14;
  text(page, ts.fit(heading, 15, W - 2 * M - 230, ts.bold), M, y, 15, ts.bold);
  const right = `${cap(pair.status)} · similarity ${pct(ov.score)} (${scoreBand(ov.score)})`;
  text(page, right, W - M - ts.width(right, 9), y + 2, 9, ts.regular, MUTED);
  y -= 14;
  const sub =
    `Older: ${sheetLabel(a)} in ${setLabel(model.older)}  ·  Newer: ${sheetLabel(b)} in ${setLabel(model.newer)}  ·  ` +
    `${listed.length} change${listed.length === 1 ? '' : 's'}` +
    (pair.noise ? ` (${pair.noise} noise regions not shown)` : '');
  text(page, ts.fit(sub, 8.5, W - 2 * M), M, y, 8.5, ts.regular, MUTED);
  y -= 8;

  // The list, typeset first: its height decides the layout. One entry per change, full width so
  // long descriptions and notes read as sentences.
  const indent = 30;
  const textW = W - 2 * M - indent;
  const size = 8.5;
  const lead = 11;
  const entries = (ov.analyzed ? listed : []).map((c) => {
    const desc = ts.wrap(c.description ?? `${KIND_LABEL[c.kind]} ${c.category}`, size, textW);
    const textLine = textLineOf(c, desc.join(' '), ts, size, textW);
    const note = c.note ? ts.wrap(`Note: ${c.note}`, size, textW, ts.italic) : [];
    return {
      c,
      desc,
      textLine,
      note,
      need: lead * (1 + desc.length + textLine.length + note.length) + 6,
    };
  });
  const listH = entries.reduce((t, e) => t + e.need, 0) + 14;

  // The overlay as large as the page allows: a short list goes under it; a long one on the pages
  // after, so the drawing keeps the whole page (legibility first: this is what gets printed).
  const areaW = W - 2 * M;
  const room = y - M - 14;
  const listBelow = listH <= room * 0.3;
  const areaH = listBelow ? room - listH : room;
  if (image) {
    const s = Math.min(areaW / image.width, areaH / image.height);
    const iw = image.width * s;
    const ih = image.height * s;
    const ix = M + (areaW - iw) / 2;
    const iy = y - ih - 4;
    const ref = embedImage(doc, image);
    const name = page.node.newXObject('Overlay', ref);
    page.pushOperators(
      pushGraphicsState(),
      concatTransformationMatrix(iw, 0, 0, ih, ix, iy),
      drawObject(name),
      popGraphicsState(),
    );
    page.drawRectangle({
      x: ix,
      y: iy,
      width: iw,
      height: ih,
      borderColor: RULE,
      borderWidth: 0.5,
    });
    // Clouds and numbers in page space over the image: overlay pixels → points.
    const k = iw / ov.width;
    const tags: [number, number, ExportChange][] = [];
    for (const c of listed) {
      const pad = 2.5;
      const x0 = Math.max(ix, ix + c.bbox.x * k - pad);
      const x1 = Math.min(ix + iw, ix + (c.bbox.x + c.bbox.width) * k + pad);
      const y1 = Math.min(iy + ih, iy + ih - c.bbox.y * k + pad);
      const y0 = Math.max(iy, iy + ih - (c.bbox.y + c.bbox.height) * k - pad);
      drawCloud(page, [x0, y0, x1, y1], kinds[c.kind], 1);
      tags.push([Math.min(ix + iw - 6, x1 + 4), Math.min(iy + ih - 6, y1 + 3), c]);
    }
    // Tags after every cloud so no cloud line crosses a number.
    for (const [tx, ty, c] of tags) {
      const label = String(c.number);
      const size = 6.5;
      const r = Math.max(5, ts.width(label, size, ts.bold) / 2 + 2);
      page.drawCircle({
        x: tx,
        y: ty,
        size: r,
        color: rgb(1, 1, 1),
        borderColor: rgbOf(kinds[c.kind]),
        borderWidth: 0.9,
      });
      text(
        page,
        label,
        tx - ts.width(label, size, ts.bold) / 2,
        ty - size * 0.36,
        size,
        ts.bold,
        rgbOf(kinds[c.kind]),
      );
    }
    y = iy - 14;
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
    text(page, 'No changes to review on this sheet (only noise).', M, y, 9, ts.italic, MUTED);
    return;
  }

  const newPage = () => {
    page = doc.addPage([W, H]);
    y = H - M - 14;
    text(
      page,
      `${ts.fit(heading, 13, W - 2 * M - 120, ts.bold)} — changes${listBelow ? ' (continued)' : ''}`,
      M,
      y,
      13,
      ts.bold,
    );
    y -= 22;
  };
  if (!listBelow) newPage();
  for (const { c, desc, textLine, note, need } of entries) {
    const head = `${KIND_LABEL[c.kind]} · ${c.category.replace('_', ' ')} · Review: ${cap(c.review_status)}`;
    if (y - need < M + 10) newPage();
    const colour = rgbOf(kinds[c.kind]);
    page.drawCircle({
      x: M + 9,
      y: y + 3,
      size: 7.5,
      borderColor: colour,
      borderWidth: 1,
      color: rgb(1, 1, 1),
    });
    const label = String(c.number);
    text(page, label, M + 9 - ts.width(label, 7.5, ts.bold) / 2, y + 0.5, 7.5, ts.bold, colour);
    text(page, head, M + indent, y, size, ts.bold);
    y -= lead;
    for (const l of desc) {
      text(page, l, M + indent, y, size);
      y -= lead;
    }
    for (const l of textLine) {
      text(page, l, M + indent, y, size, ts.regular, MUTED);
      y -= lead;
    }
    for (const l of note) {
      text(page, l, M + indent, y, size, ts.italic);
      y -= lead;
    }
    y -= 6;
  }
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
  const said = (s: string) => !s || description.includes(ts.clean(s));
  if (said(before) && said(after)) return [];
  if (before === after) return ts.wrap(`Text nearby (unchanged): "${after}"`, size, width);
  return ts.wrap(`Text: "${before}" -> "${after}"`, size, width);
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
