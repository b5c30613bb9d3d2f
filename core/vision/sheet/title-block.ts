// Sheet metadata from the title block: sheet number, sheet title, revision, issue date, discipline.
//
// Inputs are the page's positioned text (sheet pixels, origin top-left), the page size in sheet
// pixels and the dpi it was rendered at; optionally the rendered page, which lets the title block
// box snap to the frame line of a right-hand title strip. No PDF library is involved here.
//
// Formats: architects' title blocks (a strip or corner box, the number printed large), and tables of
// labelled fields as steel fabricators' shop drawings (Tekla, SDS/2), civil and survey sheets print
// them (title-fields.ts).
//
// How it works:
// 1. Items are merged into lines (text-lines.ts).
// 2. Every token shaped like a sheet number ("A-101", "S101", "ASK-02") is a candidate, and so is the
//    value of a number field ("DWG NO." 1001, "DRAWING" 2001, a "SHEET" cell's "3 OF 12") and the
//    position in "SHEET 2 OF 3". The sheet's own number is printed large in the title block, usually
//    bottom-right and often next to a label such as "SHEET" or "DWG NO"; numbers of referenced
//    sheets sit small in callout bubbles ("1" over "A202", or "3/A-301"). Candidates are scored on
//    relative font size, position and labels, with penalties for callout shapes, the values of
//    project / job number fields and steel grades ("A992") on steel drawings.
// 3. The title block box is the cluster of title-block text around the number (for a number read
//    from a field, grown through the table of labelled fields around it), extended to the sheet edges
//    (a right strip, a bottom band, or a corner box), snapped to a vertical frame line when an image
//    is given.
// 4. Title: a TITLE field's value, else the paragraph of lines in the title block that reads like a
//    drawing title (plan, elevation, section words), preferring lines close to the number; addresses,
//    dates, labels, project names, other fields' values and revision rows are skipped. Revision: a
//    "REV" label's value, the last row of a revision table, or a REV field's value. Issue date: the
//    latest of the DATE field and the revision rows' dates, else a date appended to a title line.
// 5. Discipline: the number's NCS letter, except that a fabricator's shop or erection drawing is
//    structural, and civil / survey words decide a number without a letter.

import type { BBox, Discipline, GreyImage, TextItem } from '../types';
import { disciplineFromSheetNumber } from './discipline';
import { buildLines, centerOf, median, type TextLine } from './text-lines';
import {
  ANY_LABEL_RE,
  NOT_A_NUMBER_LABEL_RE,
  NUMBER_LABEL_RE,
  datesIn,
  fieldValue,
  isSteelGrade,
  sheetOfCount,
  titleBlockDiscipline,
} from './title-fields';

export interface SheetMetadataInput {
  items: TextItem[];
  /** Page size in sheet pixels. */
  width: number;
  height: number;
  /** Dots per inch of the sheet pixels. */
  dpi: number;
  /** Optional rendered page (same size) used to snap the title block to its frame line. */
  image?: GreyImage;
}

export interface SheetMetadata {
  sheet_number: string | null;
  title: string | null;
  revision: string | null;
  /** Date of the current issue, ISO yyyy-mm-dd: the latest of the DATE field and revision rows. */
  issued: string | null;
  discipline: Discipline;
  /** 0..1: how clearly the sheet number stood out from the other candidates. */
  confidence: number;
  /** Title block in sheet pixels, or null when no sheet number was found. */
  titleBlockBox: BBox | null;
}

/** A sheet number: 1–4 letter prefix, optional separator, digits, optional ".digits" and suffix letter. */
const SHEET_NUMBER_RE = /^([A-Z]{1,4})[-. ]?(\d{1,4})(?:\.(\d{1,3}))?([A-Z])?$/;

const LABEL_RE =
  /\b(SHEET|SHT|DWG|DRAWING|DRG)\.?\s*(NO\.?|NUMBER|NUM|#)?\s*:?$|^(NO\.?|NUMBER|SHEET|SHT\.?)\s*:?$/i;

/** Words that make a line read like a drawing title. */
const TITLE_WORDS = new Set(
  (
    'PLAN PLANS FLOOR FLOORS ROOF FOUNDATION FOUNDATIONS FRAMING ELEVATION ELEVATIONS SECTION SECTIONS ' +
    'DETAIL DETAILS SCHEDULE SCHEDULES NOTES LEGEND LEGENDS DIAGRAM DIAGRAMS SITE CEILING REFLECTED ' +
    'DEMOLITION ENLARGED INTERIOR EXTERIOR WALL WALLS STAIR STAIRS DOOR DOORS WINDOW WINDOWS COVER INDEX ' +
    'GENERAL STRUCTURAL MECHANICAL ELECTRICAL PLUMBING LIGHTING POWER BASEMENT LEVEL PERSPECTIVE ' +
    'PERSPECTIVES VIEWS AXONOMETRIC ISOMETRIC BUILDING LAYOUT FINISH FINISHES GRADING UTILITY DRAINAGE ' +
    'LANDSCAPE SPECIFICATIONS TYPICAL PARTITION PARTITIONS RISER FIRE LIFE SAFETY ANCHOR BEAM BEAMS ' +
    'COLUMN COLUMNS FOOTING FOOTINGS SLAB LOCATIONS ' +
    // Steel shop drawings, civil and survey sheets.
    'ERECTION ASSEMBLY ASSEMBLIES BRACING GIRDER GIRDERS JOIST JOISTS TRUSS TRUSSES EMBED EMBEDS ' +
    'CONNECTION CONNECTIONS PROFILE PROFILES STORM SANITARY SEWER PAVING EROSION UTILITIES SURVEY ' +
    'TOPOGRAPHIC BOUNDARY ALTA'
  ).split(' '),
);

/** Words that mark a project / client / firm line rather than the sheet title. */
const PROJECT_WORDS = new Set(
  'RESIDENCE PROJECT CLIENT OWNER ARCHITECT ARCHITECTS ENGINEER ENGINEERS ENGINEERING INC LLC LTD CORP COMPANY STUDIO ASSOCIATES CONSULTANTS'.split(
    ' ',
  ),
);

/** Field labels printed in title blocks; a line that is only a label is never the title. */
const FIELD_LABEL_RE =
  /^(SCALE|DATE|DRAWN( BY)?|CHECKED( BY)?|DESIGNED( BY)?|APPROVED( BY)?|PROJECT( NO\.?| NUMBER)?|JOB( NO\.?)?|SHEET( NO\.?| NUMBER| TITLE)?|TITLE|REV(ISION)?S?\.?|NO\.?|DESCRIPTION|ISSUE[DS]?|FOR|BY|CHK|DWG( NO\.?)?|DRAWING( NO\.?| NUMBER| TITLE)?|NORTH|SEAL|STAMP)\s*:?$/i;

/** A label printed with its value on one line ("JOB NO. 2024-0117", "DRAWN: KLM"): never a title. */
const FIELD_LINE_RE =
  /^((FIELD|PLOT|PRINT|ISSUE)\s+)?DATE\b|^(DRAWN|CHECKED|DESIGNED|APPROVED)(\s+BY)?\s*:|^(JOB|PROJECT|PROJ)\.?\s*(NO\.?|NUMBER|#)/i;

/** Labels of fields that hold something other than the title (their values are never the title). */
const OTHER_FIELD_RE =
  /^(PROJECT|PROJ\.?|JOB|CUSTOMER|CLIENT|OWNER|PREPARED FOR|DRAWN|CHECKED|DESIGNED|APPROVED|SCALE|DATE)(\s+(NAME|NO\.?|NUMBER|BY))?\s*:?$/i;

/** Civil stationing ("STA 12+50", "10+00 TO 15+00"): a range under a plan & profile title, not one. */
const STATION_RE = /\b\d{1,4}\+\d{2}(\.\d+)?\b/;

/** A date appended to a line after a dash: "AALSETH RESIDENCE - 05/27/2019". */
const APPENDED_DATE_RE = /[-–]\s*\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\s*$/;

const DATE_RE = /\b\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\b/;
const TIME_RE = /\b\d{1,2}:\d{2}(:\d{2})?\s*(AM|PM)?\b/i;
const ADDRESS_RE =
  /^\d{1,6}\s+[A-Z0-9 .'-]+\b(ST|STREET|AVE|AVENUE|RD|ROAD|LN|LANE|DR|DRIVE|BLVD|WAY|CT|COURT|PL|PLACE|HWY|PKWY|TRAIL|TRL|CIR)\b|\b[A-Z]{2}\s+\d{5}(-\d{4})?\b|\bSUITE\b|\bP\.?O\.? BOX\b/i;
const CONTACT_RE = /@|https?:|www\.|\.com\b|\.org\b|\.net\b|\(\d{3}\)|\b\d{3}[.-]\d{3}[.-]\d{4}\b/i;
const SCALE_RE = /\d\s*"\s*=\s*\d+\s*'|\bN\.?T\.?S\.?\b|\bNOT TO SCALE\b|\b1\s*:\s*\d+\b/i;

interface Candidate {
  text: string;
  line: TextLine;
  score: number;
  /**
   * The label line when read from a number field ("DWG NO.", "SHEET") or a "SHEET n OF m" count (the
   * line itself): the title block is then a table of fields.
   */
  label: TextLine | null;
}

function words(s: string): string[] {
  return s
    .toUpperCase()
    .split(/[^A-Z0-9]+/)
    .filter((w) => w !== '');
}

/** Normalises a token that may be a sheet number; returns the printed form or null. */
function asSheetNumber(token: string): string | null {
  const t = token.trim().toUpperCase();
  const m = SHEET_NUMBER_RE.exec(t);
  if (!m) return null;
  // "SK-1" sketches have no discipline letter but are still sheet numbers; everything else must start
  // with an NCS designator so that words like "NO3" or "W10" (beam sizes) are less likely.
  const d = disciplineFromSheetNumber(t);
  if (d === 'unknown' && !/^SK/.test(t)) return null;
  return t;
}

function distanceBetween(a: BBox, b: BBox): number {
  const dx = Math.max(0, Math.max(a.x, b.x) - Math.min(a.x + a.width, b.x + b.width));
  const dy = Math.max(0, Math.max(a.y, b.y) - Math.min(a.y + a.height, b.y + b.height));
  return Math.hypot(dx, dy);
}

/** Callout shape: a short number (or "1/") right above / before the token at a similar size. */
function looksLikeCallout(
  c: TextLine,
  lines: TextLine[],
  fullText: string,
  token: string,
): boolean {
  const idx = fullText.toUpperCase().indexOf(token);
  if (idx > 0 && /[/\\]\s*$/.test(fullText.slice(0, idx))) return true;
  const fs = c.fontSize;
  const cc = centerOf(c.bbox);
  for (const l of lines) {
    if (l === c) continue;
    if (!/^[0-9A-Z]{1,3}$/i.test(l.text)) continue;
    if (l.fontSize > fs * 1.6 || l.fontSize < fs * 0.6) continue;
    const lc = centerOf(l.bbox);
    const above =
      cc.y - lc.y > 0.3 * fs && cc.y - lc.y < 2.2 * fs && Math.abs(lc.x - cc.x) < 1.2 * fs;
    if (above) return true;
  }
  return false;
}

/** A field value that may be a sheet number without a discipline letter: "1001", "E1", "SD-12". */
const FIELD_NUMBER_RE = /^[A-Z]{0,4}[-. _]?\d{1,5}(?:\.\d{1,3})?[A-Z]?$/;

/** "DWG NO. 1001", "SHEET: A-101", "JOB NO. 2024-0117": a label and its value on one line. */
const INLINE_FIELD_RE =
  /^((?:SHEET|SHT|DWG|DRAWING|DRG|PROJECT|PROJ|JOB|CONTRACT|FILE)\.?\s*(?:NO\.?|NUMBER|NUM|#)?\s*[:.]?)\s+(\S.*)$/i;

interface Fields {
  /** Value lines of sheet-number labels ("DWG NO.", "SHEET"): the value text and the label line. */
  number: Map<TextLine, { text: string; label: TextLine }>;
  /** Value lines of labels whose values are not sheet numbers ("PROJECT NO.", "JOB NO."). */
  notNumber: Set<TextLine>;
}

function numberFields(lines: TextLine[]): Fields {
  const number = new Map<TextLine, { text: string; label: TextLine }>();
  const notNumber = new Set<TextLine>();
  for (const l of lines) {
    const t = l.text.trim();
    const isNumber = NUMBER_LABEL_RE.test(t);
    const isOther = !isNumber && NOT_A_NUMBER_LABEL_RE.test(t);
    // A label with its value on the same line; "DWG NO." alone is a label, not "DWG" valued "NO.".
    const inline = isNumber || isOther ? null : INLINE_FIELD_RE.exec(t);
    if (inline) {
      const label = (inline[1] as string).trim();
      if (NUMBER_LABEL_RE.test(label))
        number.set(l, { text: (inline[2] as string).trim(), label: l });
      else if (NOT_A_NUMBER_LABEL_RE.test(label)) notNumber.add(l);
      continue;
    }
    if (!isNumber && !isOther) continue;
    const v = fieldValue(l, lines);
    if (!v) continue;
    if (isNumber) number.set(v, { text: v.text.trim(), label: l });
    else notNumber.add(v);
  }
  return { number, notNumber };
}

function sheetNumberCandidates(lines: TextLine[], width: number, height: number): Candidate[] {
  const medFs = median(lines.map((l) => l.fontSize)) || 1;
  const fields = numberFields(lines);
  // Steel drawings print grades ("A36", "A992") shaped like architectural sheet numbers.
  const steel = lines.some((l) =>
    /\b(ASTM|FABRICATORS?|ERECTION)\b|\bGR\.?\s*\d{2}\b/i.test(l.text),
  );
  const out: Candidate[] = [];
  for (const line of lines) {
    const toks = new Set<string>(line.text.split(/\s+/));
    // Text split into glyph runs may put spaces inside the number ("A - 101").
    if (line.text.length <= 12) toks.add(line.text.replace(/\s+/g, ''));
    // "3/A-301": the part after a slash is a referenced sheet.
    for (const part of line.text.split('/')) if (part.trim().length <= 10) toks.add(part.trim());
    const field = fields.number.get(line);
    const fieldText = field?.text;
    // A number field's value is the number even without a discipline letter ("1001", "3 OF 12").
    const fieldNumber =
      fieldText === undefined
        ? null
        : FIELD_NUMBER_RE.test(fieldText.toUpperCase())
          ? fieldText.toUpperCase()
          : sheetOfCount(fieldText);
    if (fieldNumber) toks.add(fieldNumber);
    // "SHEET 2 OF 3" printed as one line: the position in the set is the only number some surveys
    // carry.
    const count = sheetOfCount(line.text);
    if (count) toks.add(count);
    for (const tok of toks) {
      const counted =
        tok === count || (tok === fieldNumber && sheetOfCount(fieldText ?? '') !== null);
      const num = tok === fieldNumber || counted ? tok : asSheetNumber(tok);
      if (!num) continue;
      const c = centerOf(line.bbox);
      let score = 0;
      // Relative size dominates: the sheet's own number is the largest text in most title blocks.
      score += 4 * Math.log2(Math.max(0.25, line.fontSize / medFs));
      // Bottom-right is where title blocks put the number; give a mild preference.
      score += 1.5 * (c.x / width) + 1.5 * (c.y / height);
      // A token alone on its line is more number-like than one inside a sentence.
      if (line.text.replace(/\s+/g, '').toUpperCase() === num.replace(/\s+/g, '')) score += 1;
      else if (tok !== fieldNumber && !counted) score -= 1;
      // Labels nearby ("SHEET NO", "DWG NO") within a few font sizes, left of or above the number.
      for (const l of lines) {
        if (l === line || !LABEL_RE.test(l.text.trim())) continue;
        if (distanceBetween(l.bbox, line.bbox) < 3 * line.fontSize) score += 2;
      }
      // The value of a number field is the number; part marks, grades and tags are not in one.
      if (tok === fieldNumber && !counted) score += 4;
      // A position in the set ("3 OF 12") is weaker than a drawing number printed beside it.
      if (counted) score -= 2;
      if (fields.notNumber.has(line)) score -= 6;
      if (steel && isSteelGrade(num) && tok !== fieldNumber) score -= 4;
      if (looksLikeCallout(line, lines, line.text, num)) score -= 3;
      if (line.angle !== 0) score -= 0.5;
      const label = tok === fieldNumber ? (field?.label ?? null) : counted ? line : null;
      out.push({ text: num, line, score, label });
    }
  }
  out.sort((a, b) => b.score - a.score);
  return out;
}

/** A field label, alone or printed with its value ("DWG NO.", "DATE: 03/01/2024", "SHEET 2 OF 3"). */
function isFieldLine(text: string): boolean {
  const t = text.trim();
  return (
    ANY_LABEL_RE.test(t) ||
    NUMBER_LABEL_RE.test(t) ||
    NOT_A_NUMBER_LABEL_RE.test(t) ||
    INLINE_FIELD_RE.test(t) ||
    FIELD_LINE_RE.test(t) ||
    sheetOfCount(t) !== null
  );
}

/**
 * The title block of a field table (shop drawings, civil and survey sheets): the number and its label,
 * the field labels linked to them and to each other, and their values. Cells there are wider and taller than the
 * few font sizes titleBlockCluster bridges (a 7 pt "DWG NO." in the corner of a cell 1.6" tall, a
 * band of fields along the bottom edge), but labels are title-block vocabulary, so they may link over
 * cell-sized gaps: 1.5" in any direction, 5" along a row of labels.
 */
function fieldTableCluster(seeds: TextLine[], lines: TextLine[], dpi: number): TextLine[] {
  // Labels and their values are the nodes: a value can bridge to the next cell's label.
  const nodes = new Set<TextLine>();
  for (const l of lines) {
    if (l.angle !== 0 || !isFieldLine(l.text)) continue;
    nodes.add(l);
    const v = fieldValue(l, lines);
    if (v) nodes.add(v);
  }
  const inCluster = new Set<TextLine>(seeds);
  const queue = [...seeds];
  while (queue.length > 0) {
    const cur = queue.pop() as TextLine;
    const cc = centerOf(cur.bbox);
    for (const l of nodes) {
      if (inCluster.has(l)) continue;
      const lc = centerOf(l.bbox);
      // Labels of neighbouring cells sit near one baseline, not exactly on it (a cell's label in its
      // corner, a table's header row a little lower).
      const sameRow = Math.abs(lc.y - cc.y) < 2 * Math.max(cur.fontSize, l.fontSize);
      const d = distanceBetween(cur.bbox, l.bbox);
      if (d <= 1.5 * dpi || (sameRow && d <= 5 * dpi)) {
        inCluster.add(l);
        queue.push(l);
      }
    }
  }
  return [...inCluster];
}

/**
 * Lines that belong with the number: linked to it (or to `linked`, lines already known to be in the
 * title block) by gaps of at most ~3 font sizes.
 */
function titleBlockCluster(seed: TextLine, lines: TextLine[], linked: TextLine[] = []): TextLine[] {
  const inCluster = new Set<TextLine>([seed, ...linked]);
  const queue = [...inCluster];
  while (queue.length > 0) {
    const cur = queue.pop() as TextLine;
    for (const l of lines) {
      if (inCluster.has(l)) continue;
      // One- and two-character lines are mostly zone labels of the sheet border and grid bubbles;
      // they must not stretch the cluster along the sheet edge.
      if (l.text.replace(/\s+/g, '').length <= 2) continue;
      // Title-block fields are spaced by up to about three lines of the larger neighbour's text;
      // small print (labels, callout text) must sit much closer to join.
      const reach =
        l.fontSize < 0.5 * cur.fontSize
          ? 1.5 * cur.fontSize
          : 3 * Math.max(Math.min(cur.fontSize, seed.fontSize), l.fontSize);
      if (distanceBetween(cur.bbox, l.bbox) <= reach) {
        inCluster.add(l);
        queue.push(l);
      }
    }
  }
  return [...inCluster];
}

function bboxOf(lines: TextLine[]): BBox {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const l of lines) {
    x0 = Math.min(x0, l.bbox.x);
    y0 = Math.min(y0, l.bbox.y);
    x1 = Math.max(x1, l.bbox.x + l.bbox.width);
    y1 = Math.max(y1, l.bbox.y + l.bbox.height);
  }
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/**
 * Finds a long vertical ink line (a title strip's frame) between `xFrom` and `xTo` reaching close to
 * the bottom of the sheet. Returns its x and vertical extent in sheet pixels, or null.
 */
export function findVerticalFrameLine(
  image: GreyImage,
  xFrom: number,
  xTo: number,
): { x: number; y0: number; y1: number } | null {
  const { width, height, data } = image;
  const a = Math.max(0, Math.floor(xFrom));
  const b = Math.min(width - 1, Math.ceil(xTo));
  for (let x = b; x >= a; x--) {
    let run = 0;
    let bestRun = 0;
    let bestEnd = 0;
    let gap = 0;
    for (let y = 0; y < height; y++) {
      // Anti-aliased 1-px lines can be light; tolerate single-pixel breaks.
      if ((data[y * width + x] as number) < 170) {
        run += gap + 1;
        gap = 0;
      } else if (run > 0 && gap < 2) {
        gap++;
      } else {
        run = 0;
        gap = 0;
      }
      if (run > bestRun) {
        bestRun = run;
        bestEnd = y;
      }
    }
    // The nearest qualifying line to the title text wins (the scan runs right to left).
    if (bestRun >= 0.6 * height && bestEnd >= 0.8 * height)
      return { x, y0: bestEnd - bestRun + 1, y1: bestEnd };
  }
  return null;
}

function locateTitleBlock(
  cluster: TextLine[],
  width: number,
  height: number,
  dpi: number,
  image: GreyImage | undefined,
  fieldTable: boolean,
): BBox {
  const cb = bboxOf(cluster);
  const pad = 0.1 * dpi;
  const right = width;
  const bottom = height;
  // Right strip: the cluster sits in the right part of the sheet. A table of fields there that is
  // wide and flat is the right end of a band along the bottom edge (survey and shop title blocks).
  const band = fieldTable && cb.width >= 0.25 * width && cb.width > 2 * cb.height;
  if (cb.x >= 0.6 * width && !band) {
    if (image && image.width === width && image.height === height) {
      const line = findVerticalFrameLine(image, Math.max(0.6 * width, cb.x - 1.5 * dpi), cb.x - 1);
      if (line) return { x: line.x, y: 0, width: right - line.x, height: bottom };
    }
    const x = Math.max(0, cb.x - pad);
    // A cluster taller than wide is a strip running up the sheet; otherwise a corner box.
    if (cb.height > cb.width) return { x, y: 0, width: right - x, height: bottom };
    const y = Math.max(0, cb.y - pad);
    return { x, y, width: right - x, height: bottom - y };
  }
  // Bottom band: a wide cluster along the bottom edge spans the sheet width.
  const y = Math.max(0, cb.y - pad);
  if (band || cb.width >= 0.3 * width) return { x: 0, y, width: right, height: bottom - y };
  const x = Math.max(0, cb.x - pad);
  return { x, y, width: right - x, height: bottom - y };
}

function isStandalone(text: string): boolean {
  const t = text.trim();
  return (
    ADDRESS_RE.test(t) ||
    CONTACT_RE.test(t) ||
    TIME_RE.test(t) ||
    /[-–]\s*\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\s*$/.test(t) ||
    FIELD_LABEL_RE.test(t) ||
    FIELD_LINE_RE.test(t) ||
    sheetOfCount(t) !== null ||
    STATION_RE.test(t)
  );
}

/** Drops a trailing date (" - 04/14/2019") that some offices append to the title line. */
function cleanTitle(text: string): string {
  return text
    .replace(/\s*[-–]\s*\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\s*$/, '')
    .replace(/\s*[-–&]\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

interface Paragraph {
  lines: TextLine[];
  text: string;
  bbox: BBox;
  fontSize: number;
}

/** Groups stacked lines of one size and alignment into paragraphs (multi-line titles). */
function paragraphs(lines: TextLine[]): Paragraph[] {
  const sorted = lines.filter((l) => l.angle === 0).sort((a, b) => a.bbox.y - b.bbox.y);
  const used = new Set<TextLine>();
  const out: Paragraph[] = [];
  for (const first of sorted) {
    if (used.has(first)) continue;
    used.add(first);
    const group = [first];
    let cur = first;
    if (!isStandalone(first.text)) {
      for (const next of sorted) {
        if (used.has(next) || next.bbox.y <= cur.bbox.y) continue;
        const fsRatio = next.fontSize / cur.fontSize;
        if (fsRatio < 0.9 || fsRatio > 1.1) continue;
        const pitch = next.bbox.y - cur.bbox.y;
        if (pitch > 1.5 * cur.fontSize) continue;
        const a = cur.bbox;
        const b = next.bbox;
        const fs = cur.fontSize;
        const aligned =
          Math.abs(a.x - b.x) < fs ||
          Math.abs(a.x + a.width - (b.x + b.width)) < fs ||
          Math.abs(a.x + a.width / 2 - (b.x + b.width / 2)) < fs;
        if (!aligned) continue;
        if (isStandalone(next.text)) break;
        group.push(next);
        used.add(next);
        cur = next;
      }
    }
    const text = group.map((l) => l.text).join(' ');
    out.push({
      lines: group,
      text,
      bbox: bboxOf(group),
      fontSize: median(group.map((l) => l.fontSize)),
    });
  }
  return out;
}

function pickTitle(
  numberLine: TextLine,
  tbLines: TextLine[],
  revisionRows: TextLine[],
): string | null {
  // Not the title: revision rows ("ISSUED FOR BID") and the values of other fields (project,
  // customer, drawn by).
  const excluded = new Set<TextLine>([numberLine, ...rowLines(revisionRows, tbLines)]);
  for (const l of tbLines) {
    if (!OTHER_FIELD_RE.test(l.text.trim())) continue;
    const v = fieldValue(l, tbLines);
    if (v) excluded.add(v);
  }
  const candidates = paragraphs(tbLines.filter((l) => !excluded.has(l)));
  let best: { p: Paragraph; score: number } | null = null;
  const fs = numberLine.fontSize;
  // Field-table title blocks (shop drawings, civil) label the title: "TITLE", "SHEET TITLE".
  const labelled = new Set<TextLine>();
  for (const l of tbLines) {
    if (!/^((SHEET|DRAWING|DWG)\.?\s+)?TITLE\s*:?$/i.test(l.text.trim())) continue;
    const v = fieldValue(l, tbLines);
    if (v) labelled.add(v);
  }
  for (const p of candidates) {
    const t = p.text.trim();
    if (t.length < 3) continue;
    if (isStandalone(t) && !/[-–]\s*\d{1,2}[./-]\d{1,2}[./-]\d{2,4}\s*$/.test(t)) continue;
    if (SCALE_RE.test(t) || DATE_RE.test(cleanTitle(t)) || /^[\d\s./:-]+$/.test(t)) continue;
    if (datesIn(cleanTitle(t)).length > 0) continue;
    if (asSheetNumber(t.replace(/\s+/g, ''))) continue;
    const ws = words(cleanTitle(t));
    if (ws.length === 0) continue;
    let score = 0;
    score += 3 * ws.filter((w) => TITLE_WORDS.has(w)).length;
    score -= 4 * ws.filter((w) => PROJECT_WORDS.has(w)).length;
    // Closer to the number is better (distance in number-font units).
    score -= distanceBetween(p.bbox, numberLine.bbox) / fs;
    // Tiny print (revision rows, notes) is rarely the title.
    if (p.fontSize < 0.25 * fs) score -= 3;
    // The value of a TITLE field is the title, however far from the number a band puts it.
    if (p.lines.some((l) => labelled.has(l))) score += 100;
    if (!best || score > best.score) best = { p, score };
  }
  return best ? cleanTitle(best.p.text) || null : null;
}

interface RevisionRead {
  revision: string | null;
  /** The value lines of the revision table's rows (their dates are issue dates), top to bottom. */
  rows: TextLine[];
}

/**
 * Revision from a "REV" / "REVISION" label printed with its value, the last filled row of a revision
 * table, or the value in a "REV" field's cell.
 */
function pickRevision(tbLines: TextLine[]): RevisionRead {
  for (const l of tbLines) {
    const m = /^(?:REV(?:ISION)?\.?(?:\s*NO\.?)?)\s*[:#]?\s*([A-Z0-9]{1,3})$/i.exec(l.text.trim());
    if (m && m[1] && !/^(NO|BY)$/i.test(m[1])) return { revision: m[1].toUpperCase(), rows: [] };
  }
  const headerRow = (header: TextLine) =>
    tbLines.filter(
      (l) =>
        Math.abs(l.bbox.y - header.bbox.y) < 0.6 * header.fontSize &&
        /DESCRIPTION|DATE|ISSUE/i.test(l.text),
    );
  // Revision table: a header row holding "No." / "Rev" and "Description" or "Date"; values are the
  // short tokens in the number column below it. The last (lowest) one is the current revision.
  for (const header of tbLines) {
    const ht = header.text.trim();
    if (!/^(NO\.?|REV\.?|REVISION|MARK|#)(\s|$)/i.test(ht)) continue;
    if (headerRow(header).length === 0 && !/DESCRIPTION|DATE/i.test(ht)) continue;
    // The number column: the header word's extent, widened by two font sizes either side because
    // values are often left-aligned in a column whose header is centred.
    const firstWord = header.items[0] ?? null;
    const hx0 = firstWord ? firstWord.x : header.bbox.x;
    const hx1 = firstWord ? firstWord.x + firstWord.width : header.bbox.x + header.bbox.width;
    const colX0 = hx0 - 2 * header.fontSize;
    const colX1 = hx1 + 2 * header.fontSize;
    const column = tbLines
      .filter((l) => {
        if (l.bbox.y <= header.bbox.y + 0.5 * header.fontSize) return false;
        if (l.bbox.y > header.bbox.y + 30 * header.fontSize) return false;
        const tok = (l.text.trim().split(/\s+/)[0] ?? '').trim();
        const first = l.items[0];
        if (!first || first.x < colX0 || first.x > colX1) return false;
        return /^[A-Z0-9]{1,3}$/i.test(tok);
      })
      .sort((a, b) => a.bbox.y - b.bbox.y);
    // Rows follow each other a line or two apart; a short token further down the same column belongs
    // to a field below the table (a scale "HOR 1" = 40'" under a title strip's revision table).
    const rows: TextLine[] = [];
    let prevY = header.bbox.y;
    for (const l of column) {
      if (l.bbox.y - prevY > 4 * Math.max(header.fontSize, l.fontSize)) break;
      rows.push(l);
      prevY = l.bbox.y;
    }
    const last = rows[rows.length - 1];
    if (last) {
      const tok = (last.text.trim().split(/\s+/)[0] ?? '').toUpperCase();
      return { revision: tok, rows };
    }
  }
  // A "REV" field: the value in its cell (Tekla and SDS/2 title blocks), not a table's header.
  for (const l of tbLines) {
    if (!/^REV(ISION)?\.?(\s*NO\.?)?\s*:?$/i.test(l.text.trim()) || headerRow(l).length > 0)
      continue;
    const v = fieldValue(l, tbLines)?.text.trim() ?? '';
    if (/^[A-Z0-9]{1,3}$/i.test(v) && !/^(NO|BY)$/i.test(v))
      return { revision: v.toUpperCase(), rows: [] };
  }
  return { revision: null, rows: [] };
}

/** The lines on the rows of a revision table (its number column's `rows`), right of that column. */
function rowLines(rows: TextLine[], tbLines: TextLine[]): TextLine[] {
  return tbLines.filter((l) =>
    rows.some((row) => {
      const rc = centerOf(row.bbox);
      const c = centerOf(l.bbox);
      return (
        Math.abs(c.y - rc.y) <= 0.5 * Math.max(row.fontSize, l.fontSize) &&
        l.bbox.x + l.bbox.width >= row.bbox.x
      );
    }),
  );
}

/** "DATE", "ISSUE DATE", "DATE ISSUED" (not a plot, print or field-work date), with its value if any. */
const ISSUE_DATE_RE = /^(?:ISSUE[D]?\s+)?DATE(?:\s+ISSUED)?\s*[:.]?\s*(.*)$/i;

/**
 * The date of the current issue: the latest of the title block's DATE field and the dates on the
 * revision table's rows (a sheet revised after its first issue carries the revision's date).
 */
function pickIssued(tbLines: TextLine[], revisionRows: TextLine[]): string | null {
  const dates: string[] = [];
  for (const l of tbLines) {
    const m = ISSUE_DATE_RE.exec(l.text.trim());
    if (!m) continue;
    const rest = (m[1] ?? '').trim();
    const value = rest !== '' ? rest : (fieldValue(l, tbLines)?.text ?? '');
    dates.push(...datesIn(value));
  }
  for (const l of rowLines(revisionRows, tbLines)) dates.push(...datesIn(l.text));
  // Offices without a date field append the issue date to the title or project line
  // ("ROOF DETAILS AT BOAT HOUSE - 04/14/2019").
  if (dates.length === 0)
    for (const l of tbLines) {
      const m = APPENDED_DATE_RE.exec(l.text.trim());
      if (m && !TIME_RE.test(l.text)) dates.push(...datesIn(m[0]));
    }
  return dates.length > 0 ? dates.reduce((a, b) => (b > a ? b : a)) : null;
}

export function extractSheetMetadata(input: SheetMetadataInput): SheetMetadata {
  const { items, width, height, dpi, image } = input;
  if (!(width > 0 && height > 0 && dpi > 0)) {
    throw new RangeError(
      `Expected positive width, height and dpi but received ${width}x${height} @ ${dpi}`,
    );
  }
  const lines = buildLines(items);
  const candidates = sheetNumberCandidates(lines, width, height);
  const top = candidates[0];
  if (!top) {
    return {
      sheet_number: null,
      title: null,
      revision: null,
      issued: null,
      discipline: 'unknown',
      confidence: 0,
      titleBlockBox: null,
    };
  }
  // Confidence: margin over the best candidate with a different number, squashed to 0..1.
  const rival = candidates.find(
    (c) => c.text.replace(/[-. ]/g, '') !== top.text.replace(/[-. ]/g, ''),
  );
  const margin = rival ? top.score - rival.score : 6;
  const confidence = Math.max(0.05, Math.min(0.99, 1 / (1 + Math.exp(-(margin - 1)))));

  // A number read from a field: the table of fields around it is the title block, and what is
  // printed close to that table (a title above it, a firm's name) belongs to it too.
  const cluster = titleBlockCluster(
    top.line,
    lines,
    top.label ? fieldTableCluster([top.line, top.label], lines, dpi) : [],
  );
  const titleBlockBox = locateTitleBlock(cluster, width, height, dpi, image, top.label !== null);
  const tbLines = lines.filter((l) => {
    const c = centerOf(l.bbox);
    return (
      c.x >= titleBlockBox.x &&
      c.x <= titleBlockBox.x + titleBlockBox.width &&
      c.y >= titleBlockBox.y &&
      c.y <= titleBlockBox.y + titleBlockBox.height
    );
  });
  const { revision, rows } = pickRevision(tbLines);
  const title = pickTitle(top.line, tbLines, rows);
  return {
    sheet_number: top.text,
    title,
    revision,
    issued: pickIssued(tbLines, rows),
    discipline: titleBlockDiscipline(
      disciplineFromSheetNumber(top.text),
      tbLines.map((l) => l.text),
      lines.map((l) => l.text),
    ),
    confidence: Math.round(confidence * 100) / 100,
    titleBlockBox: {
      x: Math.round(titleBlockBox.x),
      y: Math.round(titleBlockBox.y),
      width: Math.round(titleBlockBox.width),
      height: Math.round(titleBlockBox.height),
    },
  };
}
