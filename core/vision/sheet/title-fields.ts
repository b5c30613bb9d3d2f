// Pieces of title-block reading that do not depend on where the title block is: dates in the forms
// drawings print them, the value printed for a field label, "SHEET 3 OF 12" counts, steel material
// grades, and the kind of sheet (steel shop drawing, civil, survey) its words give away.
//
// Title blocks other than architects' (steel fabricators' shop drawings from Tekla or SDS/2, civil
// and survey sheets) are tables of fields: a small label ("DWG NO.", "DATE", "REV", "TITLE") in a
// corner of a cell and the value in the same cell, below it or to its right. Their numbers need not
// start with a discipline letter ("1001", "SHEET 2 OF 3"), and their drawings are full of tokens shaped
// like sheet numbers that are not: part marks ("B12", "C3"), grades ("A992", "A572 GR 50"), station
// labels ("STA 12+50"), structure tags ("MH-3"), project numbers.

import type { Discipline } from '../types';
import { centerOf, type TextLine } from './text-lines';

const MONTHS = 'JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC'.split(' ');
const MONTH = '(JAN|FEB|MAR|APR|MAY|JUN|JUL|AUG|SEP|OCT|NOV|DEC)[A-Z]*\\.?';

function iso(y: number, m: number, d: number): string | null {
  if (m < 1 || m > 12 || d < 1) return null;
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  if (d > days) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** Two-digit years are this century up to 69 ("3/14/24"); drawings from before 1970 are scans. */
const fullYear = (y: string) =>
  y.length === 4 ? Number(y) : Number(y) + (Number(y) < 70 ? 2000 : 1900);

const DATE_PATTERNS: { re: RegExp; read: (m: RegExpExecArray) => string | null }[] = [
  // 2024-03-14
  { re: /\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b/g, read: (m) => iso(+m[1]!, +m[2]!, +m[3]!) },
  // 03/14/2024, 3-14-24, 14.03.2024: US month first, unless the first number cannot be a month.
  {
    re: /\b(\d{1,2})[-/.](\d{1,2})[-/.](\d{4}|\d{2})\b/g,
    read: (m) => {
      const a = +m[1]!;
      const b = +m[2]!;
      const y = fullYear(m[3]!);
      return a > 12 ? iso(y, b, a) : iso(y, a, b);
    },
  },
  // 14 MAR 2024, 14-MAR-24, 14 March 2024
  {
    re: new RegExp(`\\b(\\d{1,2})[ -]?${MONTH}[ ,-]*(\\d{4}|\\d{2})\\b`, 'gi'),
    read: (m) => iso(fullYear(m[3]!), MONTHS.indexOf(m[2]!.toUpperCase()) + 1, +m[1]!),
  },
  // MARCH 14, 2024, Mar 14 2024
  {
    re: new RegExp(`\\b${MONTH}\\s+(\\d{1,2}),?\\s+(\\d{4})\\b`, 'gi'),
    read: (m) => iso(+m[3]!, MONTHS.indexOf(m[1]!.toUpperCase()) + 1, +m[2]!),
  },
];

/**
 * Every calendar date in `text`, as ISO yyyy-mm-dd, in reading order. Numeric dates are read month
 * first (US drawings) unless the first number is over 12; impossible dates (02/30/2024) are dropped.
 */
export function datesIn(text: string): string[] {
  const found: { at: number; end: number; date: string }[] = [];
  for (const { re, read } of DATE_PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const date = read(m);
      const end = m.index + m[0].length;
      // Patterns overlap ("2024-03-14" also holds "24-03-14"): the first pattern to claim the span wins.
      if (date && !found.some((f) => m!.index < f.end && end > f.at))
        found.push({ at: m.index, end, date });
    }
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.date);
}

/** "SHEET 3 OF 12", "SHT. 3 OF 12", "3 OF 12" (a SHEET cell's value): the sheet's position, "3". */
export function sheetOfCount(text: string): string | null {
  const m = /^(?:(?:SHEET|SHT)\.?\s*(?:NO\.?)?\s*:?\s*)?(\d{1,3})\s+OF\s+(\d{1,3})$/i.exec(
    text.trim(),
  );
  if (!m) return null;
  return Number(m[1]) <= Number(m[2]) ? String(Number(m[1])) : null;
}

/**
 * ASTM steel grades that read like sheet numbers ("A36", "A992", "A572"): shapes, plates, bolts,
 * anchor rods, pipe and tube. Steel drawings print them in bills of material and notes.
 */
const STEEL_GRADES = new Set(
  'A36 A53 A307 A325 A354 A449 A490 A500 A501 A529 A572 A588 A618 A709 A913 A992 A1085 F1554 F3125'.split(
    ' ',
  ),
);

export function isSteelGrade(token: string): boolean {
  return STEEL_GRADES.has(token.trim().toUpperCase());
}

/**
 * Lines that are field labels of a sheet number ("DWG NO.", "DRAWING", "SHEET NO.", "SHT"). A bare
 * "NO." is not one: it heads revision tables far more often than it labels the sheet.
 */
export const NUMBER_LABEL_RE = /^(SHEET|SHT|DWG|DRAWING|DRG)\.?\s*(NO\.?|NUMBER|NUM|#)?\s*:?$/i;

/** Labels whose values look like sheet numbers but are not ("PROJECT NO. C-2417", "JOB 2417"). */
export const NOT_A_NUMBER_LABEL_RE =
  /^(PROJECT|PROJ\.?|JOB|CONTRACT|FILE|ORDER|PERMIT|PARCEL|COMM(ISSION)?)\.?\s*(NO\.?|NUMBER|NUM|#)?\s*:?$/i;

/** Any printed field label: value lookups must not take a neighbouring label as the value. */
export const ANY_LABEL_RE =
  /^(SCALE|(ISSUE |PLOT |PRINT |FIELD )?DATE( ISSUED| PLOTTED)?|DRAWN( BY)?|CHECKED( BY)?|CHK'?D|DESIGNED( BY)?|APPROVED( BY)?|ENGINEER|DETAILER|PROJECT( NAME| NO\.?| NUMBER)?|JOB( NAME| NO\.?| NUMBER)?|CUSTOMER|CLIENT|OWNER|PREPARED FOR|SHEET( NO\.?| NUMBER| TITLE)?|SHT\.?|TITLE|DRAWING( NO\.?| NUMBER| TITLE)?|DWG\.?( NO\.?| TITLE)?|REV(ISION)?\.?( NO\.?)?|NO\.?|DESCRIPTION|BY|MARK|QTY)\s*:?$/i;

/**
 * The value printed for a field label: the nearest line to its right on the same row, or else the
 * nearest in the cell below it / down and to the right (a large number under a small "DWG NO."). Only lines reading the
 * same way that are not labels themselves count. Returns null when nothing is close enough: an empty
 * cell must not borrow the next cell's value, so the nearest line is returned even when it is not a
 * valid value for the label, and callers validate it.
 */
export function fieldValue(label: TextLine, lines: TextLine[]): TextLine | null {
  const lfs = label.fontSize;
  const lb = label.bbox;
  const lc = centerOf(lb);
  let best: { line: TextLine; d: number; sameRow: boolean } | null = null;
  for (const l of lines) {
    if (l === label || l.angle !== label.angle || label.angle !== 0) continue;
    if (ANY_LABEL_RE.test(l.text.trim())) continue;
    const b = l.bbox;
    const c = centerOf(b);
    // Right of or below the label, never above it or well to its left.
    if (b.x < lb.x - 2 * lfs || c.y < lc.y - 0.5 * lfs) continue;
    const dx = Math.max(0, b.x - (lb.x + lb.width));
    const dy = Math.max(0, b.y - (lb.y + lb.height));
    const sameRow =
      Math.abs(c.y - lc.y) < 0.5 * Math.max(lfs, l.fontSize) && b.x >= lb.x + lb.width;
    // A row of "LABEL   value" may leave a wide gap; a value in the cell below stays within a few
    // of its own (often large) font sizes of the label.
    const reach = sameRow ? 25 * lfs : Math.max(5 * l.fontSize, 8 * lfs);
    const d = sameRow ? dx : Math.hypot(dx, dy);
    if (d > reach) continue;
    // A value printed on the label's own row is that label's, even when a line below is nearer.
    const better = !best || (sameRow && !best.sameRow) || (sameRow === best.sameRow && d < best.d);
    if (better) best = { line: l, d, sameRow };
  }
  return best?.line ?? null;
}

/** Words that give a sheet's kind away, with where they must be printed to count. */
const SHOP_TITLE_BLOCK_RE =
  /\bFABRICAT(OR|ORS|ION|ING)\b|\bSHOP DRAWINGS?\b|\bERECTION\b|\bDETAILER\b|\bTEKLA\b|\bSDS\/2\b/i;
const STEEL_DRAWING_RE =
  /\b(A36|A572|A992|A500|A325|A490|F1554)\b|\bQTY\.?\s*\d|\b\d+\s*REQ'?D\b|\bGR\.?\s*50\b|\b[WCS]\d{1,2}X\d/i;
const SURVEY_RE =
  /\b(SURVEY|SURVEYOR|SURVEYORS|SURVEYING|TOPOGRAPHIC|BOUNDARY|ALTA|PLAT|BENCHMARK)\b/i;
const CIVIL_RE =
  /\b(CIVIL|PLAN AND PROFILE|PLAN & PROFILE|GRADING|STORM|SANITARY|WATER MAIN|PAVING|EROSION|RIGHT[- ]OF[- ]WAY)\b|\bSTA\.?\s*\d+\+\d{2}/i;

/**
 * The discipline a title block's own words give: a steel fabricator's shop or erection drawing is
 * structural whatever its number says ("E1" is an erection drawing, not electrical), so that wins
 * when the title block names a fabricator or erection and the drawing shows steel. Civil and survey
 * words only decide a sheet whose number carries no discipline letter ("SHEET 2 OF 3", "1001");
 * `numberDiscipline` is what the number's letter says.
 */
export function titleBlockDiscipline(
  numberDiscipline: Discipline,
  titleBlockText: string[],
  pageText: string[],
): Discipline {
  const tb = titleBlockText.join('\n');
  if (SHOP_TITLE_BLOCK_RE.test(tb) && pageText.some((t) => STEEL_DRAWING_RE.test(t)))
    return 'structural';
  if (numberDiscipline !== 'unknown') return numberDiscipline;
  if (SURVEY_RE.test(tb)) return 'survey';
  if (CIVIL_RE.test(tb)) return 'civil';
  return 'unknown';
}
