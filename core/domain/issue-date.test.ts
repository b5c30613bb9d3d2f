import { describe, expect, it } from 'vitest';
import {
  compareIssues,
  dateFromFileName,
  dateFromPdfDate,
  deriveIssue,
  isCalendarDate,
  isPlausibleIssueDate,
  type SheetIssueEvidence,
} from './issue-date';

const NOW = new Date('2026-11-27T12:00:00Z');

describe('dateFromFileName', () => {
  it.each([
    ['20130718_barber-house_set_9-sheets.pdf', '2013-07-18'],
    ['20130724_Barber_House.pdf', '2013-07-24'],
    ['2013-07-18 set.pdf', '2013-07-18'],
    ['2013_07_18_set.pdf', '2013-07-18'],
    ['set 2013.07.18.pdf', '2013-07-18'],
    ['Set 18 Jul 2013.pdf', '2013-07-18'],
    ['Set 18-July-2013.pdf', '2013-07-18'],
    ['Barber 18Jul2013.pdf', '2013-07-18'],
    ['Issued July 18, 2013.pdf', '2013-07-18'],
    ['issued_Sept_3_2013.pdf', '2013-09-03'],
    ['07-18-2013 permit set.pdf', '2013-07-18'],
    ['18.07.2013 permit set.pdf', '2013-07-18'],
    // The latest of several dates: the issue answers the earlier one.
    ['2013-07-24 response to RFI of 2013-07-01.pdf', '2013-07-24'],
    // Leap day in a leap year.
    ['2024-02-29 addendum.pdf', '2024-02-29'],
  ])('%s → %s', (name, date) => {
    expect(dateFromFileName(name, NOW)).toBe(date);
  });

  it.each([
    // Sheet and drawing numbers, job numbers, counts.
    'A-101_first-floor.pdf',
    'S-1201 framing.pdf',
    'ASK-003_exterior-west-wall.pdf',
    'barber-house_set_9-sheets.pdf',
    'Job 2013-0718 set.pdf', // a job number: the separators disagree with a date's
    '2013-07_18.pdf', // mixed separators
    'A101 2015.pdf', // a year alone is not a day
    'C-2417 MH-3 sta 12+50.pdf',
    // Eight digits that are no calendar date, or not alone.
    '12345678_drawing.pdf',
    '20131301_set.pdf',
    '20130230_set.pdf',
    'e3b0c44298fc1c149afbf4c8996fb92420130718ae41e4649b934ca495991b7852b855.pdf',
    'rev20130718x.pdf',
    // Outside 1970 .. a year after now: a number that parses, not an issue date.
    '19650101_survey.pdf',
    '2031-01-01 set.pdf',
    // Two-digit years are not read from names (too many numbers look like them).
    '7-18-13 set.pdf',
    '18 Jul 13 set.pdf',
    // The extension is not part of the name.
    'set 2013.07.pdf',
  ])('%s → null', (name) => {
    expect(dateFromFileName(name, NOW)).toBeNull();
  });

  it('takes dates up to a year ahead of now (sets dated ahead of their issue)', () => {
    expect(dateFromFileName('2027-11-27 set.pdf', NOW)).toBe('2027-11-27');
    expect(dateFromFileName('2027-11-28 set.pdf', NOW)).toBeNull();
  });
});

describe('dateFromPdfDate', () => {
  it.each([
    ["D:20130718170132-05'00'", '2013-07-18'],
    ['D:20130718', '2013-07-18'],
    ['20130718093000Z', '2013-07-18'],
    // The writer's own day, not UTC's: 23:30 at -05'00' is still the 18th for the office.
    ["D:20130718233000-05'00'", '2013-07-18'],
  ])('%s → %s', (raw, date) => {
    expect(dateFromPdfDate(raw, NOW)).toBe(date);
  });

  it.each([null, '', 'D:2013', 'D:201307', 'D:20131301', 'D:20130231', 'yesterday', 'D:19690101'])(
    '%s → null',
    (raw) => {
      expect(dateFromPdfDate(raw, NOW)).toBeNull();
    },
  );
});

describe('calendar and plausible dates', () => {
  it('knows real calendar days', () => {
    expect(isCalendarDate('2024-02-29')).toBe(true);
    expect(isCalendarDate('2023-02-29')).toBe(false);
    expect(isCalendarDate('2013-7-18')).toBe(false);
    expect(isCalendarDate('2013-07-18T00:00:00Z')).toBe(false);
  });
  it('bounds issue dates to 1970 .. a year after now', () => {
    expect(isPlausibleIssueDate('1970-01-01', NOW)).toBe(true);
    expect(isPlausibleIssueDate('1969-12-31', NOW)).toBe(false);
    expect(isPlausibleIssueDate('2027-11-27', NOW)).toBe(true);
    expect(isPlausibleIssueDate('2027-11-28', NOW)).toBe(false);
  });
});

const sheet = (pageIndex: number, issued: string | null, revision: string | null) =>
  ({ pageIndex, issued, revision }) satisfies SheetIssueEvidence;

describe('deriveIssue', () => {
  const base = {
    fileName: '20130718_set.pdf',
    pdfCreationDate: "D:20110101120000-05'00'",
    now: NOW,
  };

  it('prefers the latest title-block date of the set, then the file name, then the PDF', () => {
    expect(
      deriveIssue({
        ...base,
        sheets: [sheet(0, '2019-05-20', null), sheet(1, '2019-05-27', null), sheet(2, null, null)],
      }),
    ).toEqual({ issuedAt: '2019-05-27', issuedAtSource: 'title_block', revision: null });
    expect(deriveIssue({ ...base, sheets: [sheet(0, null, null)] })).toEqual({
      issuedAt: '2013-07-18',
      issuedAtSource: 'file_name',
      revision: null,
    });
    expect(deriveIssue({ ...base, fileName: 'set.pdf', sheets: [] })).toEqual({
      issuedAt: '2011-01-01',
      issuedAtSource: 'pdf_metadata',
      revision: null,
    });
    expect(
      deriveIssue({ ...base, fileName: 'set.pdf', pdfCreationDate: null, sheets: [] }),
    ).toEqual({ issuedAt: null, issuedAtSource: null, revision: null });
  });

  it('ignores a title-block date outside the plausible range', () => {
    expect(deriveIssue({ ...base, sheets: [sheet(0, '2099-01-01', null)] }).issuedAtSource).toBe(
      'file_name',
    );
  });

  it("takes the revision of the sheets carrying the set's issue date, the most frequent among them", () => {
    // Sheets 0 and 1 were revised for this issue (C, dated the 27th); the others kept B.
    const sheets = [
      sheet(0, '2019-05-27', 'C'),
      sheet(1, '2019-05-27', 'C'),
      sheet(2, '2019-05-01', 'B'),
      sheet(3, '2019-05-01', 'B'),
      sheet(4, '2019-05-01', 'B'),
    ];
    expect(deriveIssue({ ...base, sheets }).revision).toBe('C');
    // No dates at all: the most frequent label; a tie goes to the earlier page.
    expect(
      deriveIssue({
        ...base,
        sheets: [sheet(0, null, '2'), sheet(1, null, '3'), sheet(2, null, '3')],
      }).revision,
    ).toBe('3');
    expect(
      deriveIssue({ ...base, sheets: [sheet(0, null, 'B'), sheet(1, null, 'A')] }).revision,
    ).toBe('B');
    // The dated sheets print no label: the set's labels are still read.
    expect(
      deriveIssue({ ...base, sheets: [sheet(0, '2019-05-27', null), sheet(1, null, 'A')] })
        .revision,
    ).toBe('A');
  });
});

describe('compareIssues', () => {
  const d = (issued_at: string | null, created_at: string, id = created_at) => ({
    issued_at,
    created_at,
    id,
  });
  it('orders by issue date, not upload order', () => {
    // Uploaded first, issued later: it is the newer.
    expect(compareIssues(d('2013-07-24', '2026-01-01'), d('2013-07-18', '2026-01-02'))).toBe(1);
    expect(compareIssues(d('2013-07-18', '2026-01-02'), d('2013-07-24', '2026-01-01'))).toBe(-1);
  });
  it('keeps upload order for same-day issues and when a date is unknown', () => {
    expect(compareIssues(d('2019-05-27', '2026-01-01'), d('2019-05-27', '2026-01-02'))).toBe(-1);
    expect(compareIssues(d(null, '2026-01-02'), d('2013-07-18', '2026-01-01'))).toBe(1);
    expect(
      compareIssues(d('2013-07-18', '2026-01-01', 'b'), d('2013-07-18', '2026-01-01', 'a')),
    ).toBe(1);
  });
});
