// A drawing set's issue date and revision label (contract §4 Drawing: `issued_at`, `revision`),
// and the order of two issues. Pure: the process job gathers the evidence (the sheets' title-block
// dates and revisions, the file name, the PDF's CreationDate) and stores what `deriveIssue` picks.
//
// Where the issue date comes from, best first:
//   title_block   the latest date the title blocks print (DATE field or revision rows): the date the
//                 office put on the sheets. For a set, its latest: a re-issue keeps the dates of the
//                 sheets it did not revise, and the set is as new as its newest sheet.
//   file_name     a date in the uploaded file's name ("20130718_barber-house.pdf"): offices name
//                 prints by issue date, but a name can also be anything, so it comes second.
//   pdf_metadata  the PDF's CreationDate: when the PDF was written, which is usually the day it was
//                 plotted for the issue, but may be a later re-export; the last resort.
//   person        a value set with PATCH; it is never replaced by any of the above.

export type IssuedAtSource = 'person' | 'title_block' | 'file_name' | 'pdf_metadata';
export type RevisionSource = 'person' | 'title_block';

/** Earliest issue date believed: a date before it in a name or a title block is something else. */
const EARLIEST = '1970-01-01';

const MONTHS = 'jan feb mar apr may jun jul aug sep oct nov dec'.split(' ');

/** `y-m-d` as ISO yyyy-mm-dd when it is a calendar date (no 2013-02-30), else null. */
export function isoDate(y: number, m: number, d: number): string | null {
  if (!Number.isInteger(y) || !Number.isInteger(m) || !Number.isInteger(d)) return null;
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1) return null;
  if (d > new Date(Date.UTC(y, m, 0)).getUTCDate()) return null;
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** True for a string `YYYY-MM-DD` that names a real calendar day (2024-02-29 yes, 2023-02-29 no). */
export function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  return !!m && isoDate(+m[1]!, +m[2]!, +m[3]!) === s;
}

/** The latest issue date believed when reading at `now`: one year ahead (sets dated ahead of issue). */
export function latestPlausible(now: Date): string {
  return `${now.getUTCFullYear() + 1}${now.toISOString().slice(4, 10)}`;
}

/** Whether an ISO date read from a name, title block or metadata can be an issue date at `now`. */
export function isPlausibleIssueDate(iso: string, now: Date): boolean {
  return isCalendarDate(iso) && iso >= EARLIEST && iso <= latestPlausible(now);
}

const MONTH_RE = '(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\\.?';
const monthOf = (word: string) => MONTHS.indexOf(word.slice(0, 3).toLowerCase()) + 1;

// A file name is read with more suspicion than a title block's DATE field: names carry sheet and
// drawing numbers ("A-101", "S-1201"), job numbers ("2013-0718"), counts and hashes. So only dates
// with a four-digit year are taken, the separators of a numeric date must agree, and the compact
// YYYYMMDD form must stand alone (not inside a longer run of letters and digits, like a hash).
const NAME_PATTERNS: { re: RegExp; read: (m: RegExpExecArray) => string | null }[] = [
  // 20130718 (an office's usual print name), alone between separators.
  {
    re: /(?<![0-9a-z])(\d{4})(\d{2})(\d{2})(?![0-9a-z])/gi,
    read: (m) => isoDate(+m[1]!, +m[2]!, +m[3]!),
  },
  // 2013-07-18, 2013_07_18, 2013.07.18, 2013 07 18 (one separator, used twice).
  {
    re: /(?<!\d)(\d{4})([-_. ])(\d{1,2})\2(\d{1,2})(?!\d)/g,
    read: (m) => isoDate(+m[1]!, +m[3]!, +m[4]!),
  },
  // 07-18-2013, 18.07.2013: month first (US drawings, as the title-block reader reads them) unless
  // the first number cannot be a month.
  {
    re: /(?<!\d)(\d{1,2})([-_. ])(\d{1,2})\2(\d{4})(?!\d)/g,
    read: (m) => {
      const [a, b, y] = [+m[1]!, +m[3]!, +m[4]!];
      return a > 12 ? isoDate(y, b, a) : isoDate(y, a, b);
    },
  },
  // 18 Jul 2013, 18-July-2013, 18Jul2013
  {
    re: new RegExp(`(?<!\\d)(\\d{1,2})[-_. ]?${MONTH_RE}[-_., ]*(\\d{4})(?!\\d)`, 'gi'),
    read: (m) => isoDate(+m[3]!, monthOf(m[2]!), +m[1]!),
  },
  // July 18, 2013 / Jul 18 2013 / Jul_18_2013
  {
    re: new RegExp(
      `(?<![a-z])${MONTH_RE}[-_. ]?(\\d{1,2})(?:st|nd|rd|th)?[-_., ]+(\\d{4})(?!\\d)`,
      'gi',
    ),
    read: (m) => isoDate(+m[3]!, monthOf(m[1]!), +m[2]!),
  },
];

/**
 * The issue date a file name carries, ISO yyyy-mm-dd, or null. Several dates ("2013-07-18 set, RFI
 * of 2013-07-01") give the latest, as the title blocks' dates do; dates outside 1970 .. a year after
 * `now` are not issue dates (a drawing number that happens to parse, a typo).
 */
export function dateFromFileName(fileName: string, now: Date): string | null {
  // The extension is not part of the name ("set.2013.pdf" has no date in "pdf").
  const name = fileName.replace(/\.[a-z0-9]{1,5}$/i, '');
  const found: { at: number; end: number; date: string }[] = [];
  for (const { re, read } of NAME_PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(name); m; m = re.exec(name)) {
      const end = m.index + m[0].length;
      // Patterns overlap ("2013-07-18" also holds "13-07-18"): the first pattern claiming a span wins.
      if (found.some((f) => m!.index < f.end && end > f.at)) continue;
      const date = read(m);
      if (date && isPlausibleIssueDate(date, now)) found.push({ at: m.index, end, date });
    }
  }
  return found.reduce<string | null>((best, f) => (best && best >= f.date ? best : f.date), null);
}

/**
 * The calendar day of a PDF date string (ISO 32000-1 §7.9.4: `D:YYYYMMDDHHmmSSOHH'mm'`, the `D:`
 * optional, everything after the year optional), or null when it has no full day or an impossible
 * one. The day is the one the writer's own clock showed: the time-zone offset is not applied, since
 * the issue date is the office's date, not UTC's.
 */
export function dateFromPdfDate(raw: string | null | undefined, now: Date): string | null {
  if (!raw) return null;
  const m = /^\s*(?:D:)?(\d{4})(\d{2})(\d{2})/.exec(raw);
  if (!m) return null;
  const date = isoDate(+m[1]!, +m[2]!, +m[3]!);
  return date && isPlausibleIssueDate(date, now) ? date : null;
}

/** What processing found for one sheet of a set. */
export interface SheetIssueEvidence {
  pageIndex: number;
  /** The title block's date (ISO), or null. */
  issued: string | null;
  /** The title block's revision label, or null. */
  revision: string | null;
}

export interface IssueEvidence {
  sheets: SheetIssueEvidence[];
  fileName: string | null;
  /** The PDF's Info CreationDate as stored (`D:2013…`), or null. */
  pdfCreationDate: string | null;
  now: Date;
}

export interface DerivedIssue {
  issuedAt: string | null;
  issuedAtSource: Exclude<IssuedAtSource, 'person'> | null;
  revision: string | null;
}

/**
 * The set's issue date and revision label from what processing read (the person's values are
 * applied by the caller, which never replaces them).
 *
 * Revision: labels are free text ("B", "3", "Rev C", "IFC"), so "the latest label" cannot be found
 * by comparing labels. A re-issued set bumps only the sheets it revises; the others keep their older
 * revision and date. So the set's revision is the label of the sheets carrying the set's issue date
 * (the latest title-block date): those are the sheets this issue revised. Among them (or among all
 * sheets when none has a date) the most frequent label wins; a tie goes to the earlier page.
 */
export function deriveIssue(e: IssueEvidence): DerivedIssue {
  const dated = e.sheets.filter((s) => s.issued && isPlausibleIssueDate(s.issued, e.now));
  const latest = dated.reduce<string | null>(
    (best, s) => (best && best >= s.issued! ? best : s.issued!),
    null,
  );
  const current = latest ? dated.filter((s) => s.issued === latest) : e.sheets;
  const revision = mostFrequentLabel(current) ?? mostFrequentLabel(e.sheets);

  if (latest) return { issuedAt: latest, issuedAtSource: 'title_block', revision };
  const fromName = e.fileName ? dateFromFileName(e.fileName, e.now) : null;
  if (fromName) return { issuedAt: fromName, issuedAtSource: 'file_name', revision };
  const fromPdf = dateFromPdfDate(e.pdfCreationDate, e.now);
  if (fromPdf) return { issuedAt: fromPdf, issuedAtSource: 'pdf_metadata', revision };
  return { issuedAt: null, issuedAtSource: null, revision };
}

function mostFrequentLabel(sheets: SheetIssueEvidence[]): string | null {
  const counts = new Map<string, { n: number; first: number }>();
  for (const s of sheets) {
    const label = s.revision?.trim();
    if (!label) continue;
    const c = counts.get(label);
    if (c) c.n++;
    else counts.set(label, { n: 1, first: s.pageIndex });
  }
  let best: [string, { n: number; first: number }] | null = null;
  for (const entry of counts) {
    if (
      !best ||
      entry[1].n > best[1].n ||
      (entry[1].n === best[1].n && entry[1].first < best[1].first)
    )
      best = entry;
  }
  return best?.[0] ?? null;
}

/** What ordering two issues needs: the issue date (null when unknown) and the upload order. */
export interface IssueOrderKey {
  issued_at: string | null;
  created_at: string;
  id: string;
}

/**
 * Orders two issues of a set, older first (negative when `a` is older). The issue date decides when
 * both have one; same-day issues, and any pair where a date is unknown, keep their upload order
 * (created_at, then id), since a missing date says nothing about which came first.
 */
export function compareIssues(a: IssueOrderKey, b: IssueOrderKey): number {
  if (a.issued_at && b.issued_at && a.issued_at !== b.issued_at)
    return a.issued_at < b.issued_at ? -1 : 1;
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}
