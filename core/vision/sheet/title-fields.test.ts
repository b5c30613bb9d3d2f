import { describe, expect, it } from 'vitest';
import type { TextItem } from '../types';
import { buildLines, type TextLine } from './text-lines';
import {
  datesIn,
  fieldValue,
  isSteelGrade,
  sheetOfCount,
  titleBlockDiscipline,
} from './title-fields';

describe('datesIn', () => {
  it.each([
    ['DATE: 03/14/2024', ['2024-03-14']],
    ['2024-03-14', ['2024-03-14']],
    ['14 MAR 2024', ['2024-03-14']],
    ['14-Mar-24', ['2024-03-14']],
    ['MARCH 14, 2024', ['2024-03-14']],
    ['Mar 14 2024', ['2024-03-14']],
    ['01.29.2015', ['2015-01-29']],
    // The first number cannot be a month: day first.
    ['14/03/2024', ['2024-03-14']],
    ['3/14/24', ['2024-03-14']],
    ['0 02/02/2024 ISSUED FOR APPROVAL, REVISED 2024-02-28', ['2024-02-02', '2024-02-28']],
  ])('%s', (text, dates) => {
    expect(datesIn(text)).toEqual(dates);
  });

  it('ignores impossible dates, stations, scales and sizes', () => {
    for (const t of ['02/30/2024', 'STA 12+50', `1" = 30'`, 'W12X26', '13/16" DIA', 'A572 GR 50'])
      expect(datesIn(t)).toEqual([]);
  });
});

describe('sheetOfCount', () => {
  it('reads the position of "SHEET n OF m" and of a SHEET cell\'s "n OF m"', () => {
    expect(sheetOfCount('SHEET 3 OF 12')).toBe('3');
    expect(sheetOfCount('SHT. 07 OF 12')).toBe('7');
    expect(sheetOfCount('3 OF 12')).toBe('3');
    expect(sheetOfCount('SHEET 13 OF 12')).toBeNull();
    expect(sheetOfCount('ONE OF 12')).toBeNull();
    expect(sheetOfCount('SEE SHEET 3 OF 12')).toBeNull();
  });
});

describe('isSteelGrade', () => {
  it('knows ASTM grades that look like architectural sheet numbers', () => {
    for (const g of ['A36', 'A992', 'a572', 'A325', 'F1554']) expect(isSteelGrade(g)).toBe(true);
    for (const n of ['A101', 'A-101', 'A600', 'S101']) expect(isSteelGrade(n)).toBe(false);
  });
});

/** A text item at (x, y) with glyph boxes 0.6 em wide per character. */
function item(text: string, x: number, y: number, fontSize: number): TextItem {
  return { text, x, y, width: text.length * fontSize * 0.6, height: fontSize, fontSize, angle: 0 };
}

function lineOf(lines: TextLine[], text: string): TextLine {
  const l = lines.find((x) => x.text === text);
  if (!l) throw new Error(`no line ${text}`);
  return l;
}

describe('fieldValue', () => {
  it('reads a large value under a small label in its cell', () => {
    const lines = buildLines([item('DWG NO.', 100, 100, 5), item('1001', 104, 110, 24)]);
    expect(fieldValue(lineOf(lines, 'DWG NO.'), lines)?.text).toBe('1001');
  });

  it("prefers the value on the label's own row, across a wide gap, over a nearer line below", () => {
    const lines = buildLines([
      item('DATE', 100, 100, 5),
      item('2024-03-14', 200, 100, 7),
      item('E1', 110, 112, 30),
    ]);
    expect(fieldValue(lineOf(lines, 'DATE'), lines)?.text).toBe('2024-03-14');
  });

  it('never takes a neighbouring label, or a line above or far left, as the value', () => {
    const lines = buildLines([
      item('REV', 100, 100, 5),
      item('DATE', 130, 100, 5),
      item('B', 60, 108, 10),
      item('ABOVE', 100, 80, 10),
    ]);
    expect(fieldValue(lineOf(lines, 'REV'), lines)).toBeNull();
  });
});

describe('titleBlockDiscipline', () => {
  const steel = ['B12 QTY 4', 'W12X26 A992'];
  it("a fabricator's drawing of steel is structural whatever its number's letter", () => {
    expect(titleBlockDiscipline('electrical', ['ACME STEEL FABRICATORS INC'], steel)).toBe(
      'structural',
    );
    expect(titleBlockDiscipline('unknown', ['ERECTION PLAN - LEVEL 2'], steel)).toBe('structural');
    // An electrical sheet that mentions erection but shows no steel stays electrical.
    expect(titleBlockDiscipline('electrical', ['ERECTION PLAN'], ['PANEL LP-1'])).toBe(
      'electrical',
    );
  });

  it('civil and survey words decide only numbers without a discipline letter', () => {
    expect(titleBlockDiscipline('unknown', ['ALTA/NSPS LAND TITLE SURVEY'], [])).toBe('survey');
    expect(titleBlockDiscipline('unknown', ['GRADING AND DRAINAGE PLAN'], [])).toBe('civil');
    expect(titleBlockDiscipline('architectural', ['SITE SURVEY'], [])).toBe('architectural');
    expect(titleBlockDiscipline('unknown', ['FIRST FLOOR PLAN'], [])).toBe('unknown');
  });
});
