// Test-only: sheets in title-block formats the fixture drawings (architects' sets) do not cover,
// drawn by us as vector PDFs (drawn-sheet.test-support.ts), with the metadata a reader must find.
//
// - Steel fabricators' shop drawings: a Tekla-style assembly drawing and erection plan (a table of
//   fields bottom right: DWG NO., REV, DATE, DRAWN BY, CHECKED) and an SDS/2-style detail sheet (a
//   band along the bottom with SHEET "3 OF 12" and DRAWING fields). Their drawings are full of part
//   marks ("B12", "C3", "1001A", "p1001", "a12"), material grades ("A992", "A36", "A572 GR 50") and
//   piece counts ("QTY 4", "4 REQ'D") that are not sheet numbers.
// - Civil: a plan & profile sheet with a right-hand title strip (station labels "STA 12+50", manhole
//   and catch basin tags "MH-3" / "CB-2", a designator-shaped PROJECT NO.) and a grading plan with a
//   corner title block numbered "C1.01".
// - Survey: a topographic survey "V-101" (bottom band; a FIELD DATE that is not the issue date) and
//   an ALTA survey numbered only "SHEET 2 OF 3".
//
// Dates are printed as 03/14/2024, 2024-03-14, 14 MAR 2024 and MARCH 14, 2024. The files are
// committed under fixtures/generated/ (a test checks they are what these functions draw).

import { DrawnSheet } from './drawn-sheet.test-support';

export interface FormatSheet {
  /** File name under fixtures/generated/. */
  file: string;
  draw(): DrawnSheet;
  expected: {
    sheet_number: string;
    title: string;
    revision: string | null;
    /** ISO date (yyyy-mm-dd) of the current issue. */
    issued: string;
    discipline: string;
  };
}

function border(s: DrawnSheet, margin = 0.5): DrawnSheet {
  return s.rect(margin, margin, s.widthIn - 2 * margin, s.heightIn - 2 * margin, 1.5);
}

/** Tekla-style assembly drawing, 17x11: one beam, its parts, a bill of material. */
function teklaAssembly(): DrawnSheet {
  const s = border(new DrawnSheet(17, 11));
  // The assembly: mark and quantity as Tekla prints them over the view.
  s.text(1.2, 1.6, 18, 'B12', { bold: true }).text(2.2, 1.6, 10, 'QTY 4');
  s.rect(2, 3, 8.5, 0.6).line(2, 3.08, 10.5, 3.08).line(2, 3.52, 10.5, 3.52);
  s.rect(1.8, 2.7, 0.2, 1.2).rect(10.5, 2.7, 0.2, 1.2);
  s.text(1.6, 2.55, 8, '1001A').text(10.4, 2.55, 8, '1001A').text(5.5, 2.85, 8, '1002A');
  s.line(2, 4.4, 10.5, 4.4).text(5.9, 4.35, 8, `24'-6"`);
  s.text(2.1, 4.8, 7, '2 HOLES 13/16" DIA EACH END');
  s.text(1.2, 6.2, 12, 'SECTION A', { bold: true }).rect(1.5, 6.5, 1.2, 1.6);
  s.lines(1.2, 8.6, 7, 0.16, [
    'NOTES:',
    '1. ALL ROLLED SHAPES ASTM A992 UNLESS NOTED.',
    '2. PLATES AND ANGLES ASTM A36.',
    '3. BOLTS A325-N 3/4" DIA, STD HOLES.',
    '4. NO SHOP PRIMER.',
  ]);
  s.grid(
    10.3,
    0.8,
    [0.8, 0.5, 2.0, 1.0, 0.9, 1.0],
    0.22,
    ['MARK', 'QTY', 'PROFILE', 'LENGTH', 'GRADE', 'WT (LB)'],
    [
      ['B12', '4', 'W12X26', `24'-6"`, 'A992', '637'],
      ['1001A', '8', 'PL3/8X6', `0'-9"`, 'A36', '6'],
      ['1002A', '4', 'L4X4X3/8', `0'-6"`, 'A36', '4'],
    ],
  );
  // Revision table over the title block, oldest first.
  s.grid(
    10.3,
    6.9,
    [0.5, 1.0, 3.9, 0.8],
    0.2,
    ['REV', 'DATE', 'DESCRIPTION', 'BY'],
    [
      ['0', '02/02/2024', 'ISSUED FOR APPROVAL', 'JDK'],
      ['1', '02/28/2024', 'REVISED PER ARCHITECT COMMENTS', 'JDK'],
      ['2', '03/14/2024', 'ISSUED FOR FABRICATION', 'MRT'],
    ],
  );
  // Title block: a table of fields, label top-left of each cell.
  const x = 10.3;
  s.field(x, 7.8, 6.2, 0.7, '', ['ACME STEEL FABRICATORS INC'], 12, { bold: true });
  s.text(x + 0.1, 8.35, 7, '1400 INDUSTRIAL PKWY, DAYTON OH 45414');
  s.field(x, 8.5, 4.2, 0.6, 'PROJECT', 'RIVERSIDE MEDICAL OFFICE BUILDING');
  s.field(x + 4.2, 8.5, 2.0, 0.6, 'JOB NO.', '24-117');
  s.field(x, 9.1, 4.2, 0.65, 'TITLE', 'BEAM DETAILS - LEVEL 2', 12, { bold: true });
  s.field(x + 4.2, 9.1, 1.0, 0.65, 'SCALE', '1:20');
  s.field(x + 5.2, 9.1, 1.0, 0.65, 'DATE', '03/14/2024', 8);
  s.field(x, 9.75, 1.0, 0.75, 'DRAWN BY', 'JDK');
  s.field(x + 1.0, 9.75, 1.0, 0.75, 'CHECKED', 'MRT');
  s.field(x + 2.0, 9.75, 0.7, 0.75, 'REV', '2', 12);
  s.field(x + 2.7, 9.75, 3.5, 0.75, 'DWG NO.', '1001', 24, { bold: true });
  return s;
}

/** Tekla-style erection plan, 34x22: marks on every member, fields label-left / value-right. */
function teklaErection(): DrawnSheet {
  const s = border(new DrawnSheet(34, 22));
  const gx = [3, 9, 15, 21];
  const gy = [3, 7.5, 12, 16.5];
  gx.forEach((x, i) => {
    s.line(x, 2, x, 17.5)
      .circle(x, 1.5, 0.35)
      .text(x - 0.1, 1.6, 14, 'ABCD'[i] as string);
  });
  gy.forEach((y, i) => {
    s.line(2, y, 22, y)
      .circle(1.5, y, 0.35)
      .text(1.4, y + 0.1, 14, String(i + 1));
  });
  let mark = 1;
  for (const x of gx)
    for (const y of gy) s.rect(x - 0.1, y - 0.1, 0.2, 0.2).text(x + 0.2, y - 0.2, 9, `C${mark++}`);
  let beam = 10;
  for (const y of gy)
    for (let i = 0; i + 1 < gx.length; i++) {
      const x = ((gx[i] as number) + (gx[i + 1] as number)) / 2;
      s.text(x - 0.5, y - 0.15, 9, `B${beam++}`).text(x - 0.5, y + 0.3, 8, 'W16X31');
    }
  s.text(9.5, 19, 16, 'LEVEL 2 FRAMING PLAN', { bold: true });
  s.text(9.5, 19.35, 9, `T.O.S. EL. 112'-0" U.N.O.`);
  s.lines(23.5, 2, 9, 0.22, [
    'ERECTION NOTES:',
    '1. ALL BEAMS ASTM A992 GR 50 UNLESS NOTED.',
    '2. ALL COLUMNS ASTM A992.',
    '3. ANCHOR RODS F1554 GR 36, SEE E2.',
    '4. BOLTS A325-N 3/4" DIA UNLESS NOTED.',
    '5. BEAM MARKS B10-B21, COLUMN MARKS C1-C16.',
  ]);
  // Revision table, then the title block.
  s.grid(
    26,
    14.3,
    [0.6, 1.4, 4.6, 0.9],
    0.28,
    ['REV', 'DATE', 'DESCRIPTION', 'BY'],
    [
      ['A', '2024-02-20', 'ISSUED FOR APPROVAL', 'JDK'],
      ['B', '2024-03-14', 'ISSUED FOR ERECTION', 'JDK'],
    ],
    8,
  );
  const rows: [string, string][] = [
    ['CUSTOMER', 'SUMMIT GENERAL CONTRACTORS'],
    ['PROJECT', 'RIVERSIDE MEDICAL OFFICE BUILDING'],
    ['JOB NO.', '24-117'],
    ['TITLE', 'ERECTION PLAN - LEVEL 2'],
    ['DRAWN BY', 'JDK'],
    ['CHECKED', 'MRT'],
    ['DATE', '2024-03-14'],
    ['SCALE', `1/8" = 1'-0"`],
    ['REV', 'B'],
  ];
  let y = 15.4;
  for (const [label, value] of rows) {
    s.rect(26, y, 1.8, 0.5)
      .rect(27.8, y, 5.7, 0.5)
      .text(26.1, y + 0.3, 7, label);
    s.text(27.9, y + 0.35, label === 'TITLE' ? 14 : 10, value, { bold: label === 'TITLE' });
    y += 0.5;
  }
  s.rect(26, y, 1.8, 1.6)
    .rect(27.8, y, 5.7, 1.6)
    .text(26.1, y + 0.3, 7, 'DWG NO.');
  s.text(28.2, y + 1.15, 40, 'E1', { bold: true });
  return s;
}

/** SDS/2-style column detail sheet, 17x11: fields in a band along the bottom edge. */
function sds2Detail(): DrawnSheet {
  const s = border(new DrawnSheet(17, 11));
  s.text(1.0, 1.3, 16, 'C3', { bold: true }).text(1.8, 1.3, 10, `4 REQ'D`);
  s.rect(3, 1.8, 0.5, 6.4).line(3.08, 1.8, 3.08, 8.2).line(3.42, 1.8, 3.42, 8.2);
  s.rect(2.6, 8.2, 1.3, 0.15).text(4.1, 8.35, 8, 'p1001');
  s.rect(3.5, 3.0, 0.5, 0.3).text(4.1, 3.2, 8, 'a12').rect(3.5, 6.0, 0.5, 0.3);
  s.text(4.1, 6.2, 8, 'a12');
  s.text(4.4, 5.0, 8, `13'-4"`).text(4.4, 5.2, 7, 'TOP OF COL EL 113\'-4"');
  s.grid(
    8.5,
    1.0,
    [0.8, 0.5, 2.6, 1.3],
    0.22,
    ['MARK', 'QTY', 'DESCRIPTION', 'MATERIAL'],
    [
      ['C3', '1', `W10X33 X 13'-4"`, 'A992'],
      ['p1001', '1', `PL3/4X10X1'-2"`, 'A572 GR 50'],
      ['a12', '2', `L3X3X1/4 X 0'-6"`, 'A36'],
    ],
  );
  s.lines(8.5, 2.6, 7, 0.16, [
    'SHOP NOTES:',
    '1. HOLES 13/16" DIA UNLESS NOTED.',
    '2. CJP WELD AT BASE PLATE, SEE 1/E2.',
  ]);
  s.grid(
    10.5,
    8.4,
    [0.5, 1.2, 3.6],
    0.2,
    ['REV', 'DATE', 'DESCRIPTION'],
    [
      ['0', '29 FEB 2024', 'FOR APPROVAL'],
      ['1', '14 MAR 2024', 'FOR FABRICATION'],
    ],
  );
  const y = 9.6;
  const h = 0.9;
  let x = 0.5;
  const cell = (w: number, label: string, value: string | string[], size = 10, bold = false) => {
    s.field(x, y, w, h, label, value, size, { bold });
    x += w;
  };
  cell(3.0, '', ['ACME STEEL FABRICATORS INC', 'DAYTON, OHIO'], 9, true);
  cell(3.0, 'JOB', ['2417', 'RIVERSIDE MOB'], 9);
  cell(3.2, 'TITLE', 'COLUMN DETAILS', 13, true);
  cell(1.0, 'DRAWN', 'JDK');
  cell(1.0, 'CHECKED', 'MRT');
  cell(1.3, 'DATE', '14 MAR 2024', 9);
  cell(0.7, 'REV', '1', 12);
  cell(1.2, 'SHEET', '3 OF 12', 10);
  cell(1.6, 'DRAWING', '2001', 20, true);
  return s;
}

/** Civil plan & profile, 34x22, with a right-hand title strip framed by a full-height line. */
function civilPlanProfile(): DrawnSheet {
  const s = border(new DrawnSheet(34, 22));
  s.line(30.5, 0.5, 30.5, 21.5, 1.5);
  // Plan: centerline with stations, manholes, catch basins.
  s.line(1.5, 5, 29, 5, 1);
  for (let i = 0; i <= 5; i++) {
    const x = 2 + i * 5.3;
    s.line(x, 4.85, x, 5.15).text(x - 0.25, 4.75, 8, `${10 + i}+00`);
  }
  s.text(6.5, 5.4, 9, 'STA 12+50', { bold: true }).text(4.0, 5.6, 7, 'PC STA 11+25.40');
  s.text(17.5, 5.6, 7, 'PT STA 13+80.15');
  for (const [x, tag] of [
    [7.3, 'MH-3'],
    [17.9, 'MH-4'],
  ] as const)
    s.circle(x, 5, 0.15)
      .text(x + 0.2, 4.6, 8, tag)
      .text(x + 0.2, 4.4, 7, 'RIM 846.12');
  s.rect(10, 3.2, 0.2, 0.2).text(10.3, 3.35, 8, 'CB-2').rect(22, 6.6, 0.2, 0.2);
  s.text(22.3, 6.75, 8, 'CB-3');
  s.line(1.5, 3, 29, 3).text(2, 2.9, 7, 'R/W').line(1.5, 7, 29, 7).text(2, 7.25, 7, 'R/W');
  s.text(3, 6.3, 8, 'PROPOSED 8" PVC SANITARY SEWER');
  s.text(29.6, 9.0, 10, 'MATCH LINE - SEE SHEET C-302', { rotate: 90 });
  s.text(13.5, 9.2, 14, 'PLAN', { bold: true }).text(13.5, 9.45, 8, `SCALE: 1" = 40'`);
  // Profile grid with elevations and stations.
  s.rect(2, 11, 26.5, 7.5);
  for (let i = 0; i <= 4; i++) {
    const y = 11 + i * 1.875;
    s.line(2, y, 28.5, y, 0.25).text(1.3, y + 0.05, 8, String(850 - 5 * i));
  }
  for (let i = 0; i <= 5; i++) s.text(2 + i * 5.3 - 0.25, 18.8, 8, `${10 + i}+00`);
  s.text(9.0, 12.2, 7, 'PVI STA 12+50.00').text(9.0, 12.4, 7, 'PVI ELEV 845.32');
  s.text(9.0, 12.6, 7, `L = 200.00' VC`).text(4, 14.3, 7, 'EXISTING GRADE');
  s.text(4, 15.2, 7, 'PROPOSED GRADE').text(12, 16.8, 7, '8" PVC SAN @ 0.40%');
  s.text(13.5, 19.4, 14, 'PROFILE', { bold: true });
  s.text(13.5, 19.65, 8, `SCALE: HOR 1" = 40', VERT 1" = 4'`);
  // Title strip, bottom up: number, title, fields, revisions; firm at the top.
  const x = 30.7;
  s.lines(x, 1.1, 9, 0.2, ['MERIDIAN CIVIL ENGINEERING LLC'], { bold: true });
  s.lines(x, 1.35, 6.5, 0.16, ['2200 LAKE SHORE DR', 'MADISON WI 53703', '(608) 555-0142']);
  s.line(30.5, 2.0, 33.5, 2.0).circle(32, 3.4, 1.0);
  s.text(31.45, 3.45, 7, 'ENGINEER SEAL');
  s.line(30.5, 5.0, 33.5, 5.0);
  s.lines(x, 5.5, 11, 0.25, ['CITY OF SPRINGFIELD'], { bold: true });
  s.lines(x, 5.8, 8, 0.2, ['MAIN STREET RECONSTRUCTION', 'SANGAMON COUNTY, ILLINOIS']);
  s.grid(
    30.5,
    13.6,
    [0.35, 0.85, 1.45, 0.35],
    0.25,
    ['NO.', 'DATE', 'DESCRIPTION', 'BY'],
    [
      ['1', '2024-02-01', 'ADDENDUM NO. 1', 'RK'],
      ['2', '2024-03-14', 'ISSUED FOR BID', 'RK'],
    ],
  );
  s.field(30.5, 15.0, 1.5, 0.55, 'PROJECT NO.', 'C-2417');
  s.field(32.0, 15.0, 1.5, 0.55, 'DATE', '03/14/2024', 9);
  s.field(30.5, 15.55, 1.0, 0.55, 'DESIGNED', 'RK', 9);
  s.field(31.5, 15.55, 1.0, 0.55, 'DRAWN', 'TS', 9);
  s.field(32.5, 15.55, 1.0, 0.55, 'CHECKED', 'MJP', 9);
  s.field(30.5, 16.1, 3.0, 0.55, 'SCALE', `HOR 1" = 40'  VERT 1" = 4'`, 8);
  s.field(30.5, 16.65, 3.0, 1.6, 'SHEET TITLE', ['MAIN STREET', 'PLAN AND PROFILE'], 13, {
    bold: true,
  });
  s.text(30.6, 18.1, 8, 'STA 10+00 TO 15+00');
  s.field(30.5, 18.25, 3.0, 3.25, 'SHEET NO.', [], 10);
  s.text(30.9, 19.9, 34, 'C-301', { bold: true }).text(31.3, 20.9, 9, 'SHEET 7 OF 12');
  return s;
}

/** Civil grading plan, 36x24, with a corner title block; the revision table is still empty. */
function civilGrading(): DrawnSheet {
  const s = border(new DrawnSheet(36, 24));
  for (let i = 0; i < 6; i++) {
    const y = 3 + i * 2.6;
    s.line(2, y, 25, y + 1.2, 0.25).text(12, y + 0.5, 7, String(850 - 2 * i));
  }
  const spots = ['TC 845.70', 'FL 845.20', 'INV 839.10', 'RIM 845.55', 'FFE 846.10', 'HP 846.40'];
  spots.forEach((t, i) => s.text(4 + (i % 3) * 6, 6 + Math.floor(i / 3) * 5, 7, t));
  s.rect(16, 9, 0.2, 0.2).text(16.3, 9.15, 8, 'CB-5').text(16.3, 9.35, 7, 'STA 2+50');
  s.text(20, 14, 8, 'SEE DETAIL 3/C5.01').text(5, 18, 8, 'BM #1 ELEV 842.17');
  s.text(27, 3, 9, 'GRADING NOTES:', { bold: true });
  s.lines(27, 3.3, 7, 0.18, [
    '1. SPOT ELEVATIONS ARE FINISHED GRADE UNLESS NOTED.',
    '2. MAXIMUM SLOPE 3:1 IN LAWN AREAS.',
    '3. SEE SHEET C2.01 FOR UTILITIES.',
  ]);
  s.text(10, 21.5, 14, 'GRADING PLAN', { bold: true }).text(10, 21.75, 8, `SCALE: 1" = 30'`);
  const x = 27.5;
  s.rect(x, 17.2, 8, 6.3, 1);
  s.text(x + 0.15, 17.55, 11, 'MERIDIAN CIVIL ENGINEERING LLC', { bold: true });
  s.text(x + 0.15, 17.8, 7, '2200 LAKE SHORE DR, MADISON WI 53703');
  s.field(x, 18.0, 5.0, 0.85, 'PROJECT', ['LAKEVIEW COMMONS', 'PHASE 2 SITE IMPROVEMENTS'], 9);
  s.field(x + 5.0, 18.0, 3.0, 0.85, 'JOB NO.', '23-045', 10);
  s.grid(x, 18.85, [0.5, 1.2, 3.3], 0.22, ['REV', 'DATE', 'DESCRIPTION'], [['', '', '']]);
  s.field(x + 5.0, 18.85, 1.5, 0.66, 'DATE', '14 MAR 2024', 8);
  s.field(x + 6.5, 18.85, 1.5, 0.66, 'SCALE', `1" = 30'`, 8);
  s.field(x, 19.51, 5.0, 1.2, 'SHEET TITLE', ['GRADING AND', 'DRAINAGE PLAN'], 14, { bold: true });
  s.field(x, 20.71, 2.5, 0.6, 'DRAWN', 'TS', 9).field(
    x + 2.5,
    20.71,
    2.5,
    0.6,
    'CHECKED',
    'MJP',
    9,
  );
  s.field(x + 5.0, 19.51, 3.0, 3.99, 'SHEET', [], 10);
  s.text(x + 5.3, 21.6, 32, 'C1.01', { bold: true }).text(x + 5.6, 22.6, 8, 'SHEET 3 OF 12');
  return s;
}

/** Topographic survey V-101, 34x22: a band of fields along the bottom; a field date too. */
function surveyTopo(): DrawnSheet {
  const s = border(new DrawnSheet(34, 22));
  s.rect(4, 4, 12, 8, 1).text(9, 8, 9, 'EX BLDG').text(9, 8.25, 8, 'FFE 846.10');
  s.text(6, 3.6, 8, `N 89°12'34" E  245.67'`).text(16.2, 8, 8, `S 00°47'26" E  180.00'`);
  s.text(3.5, 3.5, 7, 'FOUND 1" IRON PIPE').text(18, 3, 8, 'BM #1').text(18, 3.2, 7, 'ELEV 842.17');
  for (let i = 0; i < 12; i++)
    s.text(3 + (i % 6) * 4, 14 + Math.floor(i / 6) * 2, 6, `x ${843 + i * 0.3}`);
  s.text(20, 13, 9, 'LOT 12').text(20, 13.3, 9, 'BLOCK 3').text(24, 6, 7, 'OHE');
  s.lines(24, 2, 7, 0.17, [
    'SURVEY NOTES:',
    '1. ELEVATIONS ARE NAVD 88, BENCHMARK BM #1.',
    '2. UTILITIES SHOWN FROM LOCATE TICKET 20240226-0117.',
  ]);
  const y = 19.8;
  const h = 1.7;
  s.field(0.5, y, 7.0, h, '', ['NORTHSTAR LAND SURVEYING INC'], 12, { bold: true });
  s.lines(0.6, y + 0.6, 8, 0.2, [
    'PROFESSIONAL LAND SURVEYORS',
    '410 W MAIN ST, SPRINGFIELD IL 62701',
  ]);
  s.field(7.5, y, 6.0, h, 'PREPARED FOR', ['LAKEVIEW COMMONS LLC'], 10);
  s.field(13.5, y, 8.0, h, '', ['TOPOGRAPHIC SURVEY'], 18, { bold: true });
  s.text(13.6, y + 0.75, 7, 'PART OF THE NE 1/4 OF SECTION 12, T7N, R10E');
  s.rect(21.5, y, 5.0, h);
  s.lines(21.6, y + 0.3, 8, 0.28, [
    'FIELD DATE: 02/27/2024',
    'DATE: 03/01/2024',
    'JOB NO. 2024-0117',
    'DRAWN: KLM',
  ]);
  s.grid(
    26.5,
    y,
    [0.4, 0.9, 2.7],
    0.3,
    ['REV', 'DATE', 'DESCRIPTION'],
    [['1', '03/14/2024', 'ADDED UTILITY LOCATES']],
    7,
  );
  s.rect(26.5, y + 0.6, 4.0, h - 0.6);
  s.field(30.5, y, 3.0, h, 'SHEET', [], 10);
  s.text(30.7, y + 1.05, 28, 'V-101', { bold: true }).text(30.9, y + 1.5, 8, 'SHEET 1 OF 2');
  return s;
}

/** ALTA/NSPS survey, 24x36 portrait, numbered only "SHEET 2 OF 3"; dates spelled out. */
function surveyAlta(): DrawnSheet {
  const s = border(new DrawnSheet(24, 36));
  s.rect(4, 6, 14, 16, 1).text(9, 14, 10, 'LOT 12').text(9, 14.4, 10, 'BLOCK 3');
  s.text(6, 5.7, 8, `N 89°12'34" E  245.67'`).text(18.2, 14, 8, `S 00°47'26" E  180.00'`);
  s.text(3.6, 5.8, 7, 'FND 1" IP').text(10, 23, 8, "15' UTILITY EASEMENT PER DOC. 2011-04417");
  s.lines(1.5, 26, 8, 0.2, [
    'SCHEDULE B-II ITEMS:',
    '9. EASEMENT RECORDED AS DOC. 2011-04417 - SHOWN.',
    '10. BUILDING SETBACK LINES PER PLAT - SHOWN.',
  ]);
  s.lines(1.5, 29, 8, 0.2, [
    "SURVEYOR'S CERTIFICATE:",
    'TO LAKEVIEW COMMONS LLC AND FIRST AMERICAN TITLE INSURANCE COMPANY:',
    'THE FIELD WORK WAS COMPLETED ON FEBRUARY 27, 2024.',
  ]);
  const x = 15.5;
  s.rect(x, 28.5, 8, 5.0, 1);
  s.text(x + 0.2, 29.1, 16, 'ALTA/NSPS LAND TITLE SURVEY', { bold: true });
  s.lines(x + 0.2, 29.4, 8, 0.2, [
    'LOT 12, BLOCK 3, LAKEVIEW ADDITION',
    'CITY OF SPRINGFIELD, SANGAMON COUNTY, ILLINOIS',
  ]);
  s.line(x, 29.8, x + 8, 29.8);
  s.text(x + 0.2, 30.05, 10, 'NORTHSTAR LAND SURVEYING INC', { bold: true });
  s.text(x + 0.2, 30.25, 7, '410 W MAIN ST, SPRINGFIELD IL 62701');
  s.field(x, 30.4, 4.0, 0.6, 'DATE', 'MARCH 14, 2024', 9);
  s.field(x + 4.0, 30.4, 4.0, 0.6, 'PROJECT NO.', '2024-0117', 9);
  s.grid(x, 31.0, [0.5, 1.3, 6.2], 0.25, ['REV', 'DATE', 'DESCRIPTION'], [['', '', '']]);
  s.field(x, 31.5, 4.0, 0.6, 'DRAWN BY', 'KLM', 9).field(
    x + 4.0,
    31.5,
    4.0,
    0.6,
    'CHECKED',
    'DPW',
    9,
  );
  s.text(x + 2.2, 32.9, 20, 'SHEET 2 OF 3', { bold: true });
  return s;
}

export const FORMAT_SHEETS: FormatSheet[] = [
  {
    file: 'shop_tekla-assembly_1001.pdf',
    draw: teklaAssembly,
    expected: {
      sheet_number: '1001',
      title: 'BEAM DETAILS - LEVEL 2',
      revision: '2',
      issued: '2024-03-14',
      discipline: 'structural',
    },
  },
  {
    file: 'shop_tekla-erection_E1.pdf',
    draw: teklaErection,
    expected: {
      sheet_number: 'E1',
      title: 'ERECTION PLAN - LEVEL 2',
      revision: 'B',
      issued: '2024-03-14',
      discipline: 'structural',
    },
  },
  {
    file: 'shop_sds2-detail_2001.pdf',
    draw: sds2Detail,
    expected: {
      sheet_number: '2001',
      title: 'COLUMN DETAILS',
      revision: '1',
      issued: '2024-03-14',
      discipline: 'structural',
    },
  },
  {
    file: 'civil_plan-profile_C-301.pdf',
    draw: civilPlanProfile,
    expected: {
      sheet_number: 'C-301',
      title: 'MAIN STREET PLAN AND PROFILE',
      revision: '2',
      issued: '2024-03-14',
      discipline: 'civil',
    },
  },
  {
    file: 'civil_grading_C1.01.pdf',
    draw: civilGrading,
    expected: {
      sheet_number: 'C1.01',
      title: 'GRADING AND DRAINAGE PLAN',
      revision: null,
      issued: '2024-03-14',
      discipline: 'civil',
    },
  },
  {
    file: 'survey_topographic_V-101.pdf',
    draw: surveyTopo,
    expected: {
      sheet_number: 'V-101',
      title: 'TOPOGRAPHIC SURVEY',
      revision: '1',
      issued: '2024-03-14',
      discipline: 'survey',
    },
  },
  {
    file: 'survey_alta_sheet-2-of-3.pdf',
    draw: surveyAlta,
    expected: {
      sheet_number: '2',
      title: 'ALTA/NSPS LAND TITLE SURVEY',
      revision: null,
      issued: '2024-03-14',
      discipline: 'survey',
    },
  },
];
