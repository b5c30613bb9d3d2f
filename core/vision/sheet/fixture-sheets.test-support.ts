// Expected sheet metadata of the fixture drawings (fixtures/drawings), read off
// the rendered sheets (title block, bottom right). Shared by the sheet-reading tests on pdf.js text
// (title-block.test.ts) and on the production PDFium path (input/pdfium-text.fixtures.test.ts).

export interface SheetExpect {
  number: string;
  discipline: string;
  title?: string;
}

/** The beam proposal, both issues: S101…S300. */
export const BEAM_SHEETS: SheetExpect[] = ['S101', 'S102', 'S103', 'S150', 'S300'].map((n) => ({
  number: n,
  discipline: 'structural',
}));

/** The barber house, both issues (11x17 and 22x34 rotated): A102…A305 with their titles. */
export const BARBER_SHEETS: SheetExpect[] = [
  ['A102', '1ST & 2nd Floor'],
  ['A103', 'Third Floor'],
  ['A201', 'Elevations - North & West'],
  ['A202', 'Elevations - South & East'],
  ['A301', 'E/W Section Looking South'],
  ['A302', 'E/W Section Looking North'],
  ['A303', 'N/S Section Looking West_1'],
  ['A304', 'N/S Section Looking East_1'],
  ['A305', 'N/S Section Looking East_2'],
].map(([n, t]) => ({ number: n!, discipline: 'architectural', title: t! }));

/** The foundation details, 3 sheets: ASK-02…ASK-04 with their titles (the issue date dropped). */
export const FOUNDATION_SHEETS: SheetExpect[] = [
  ['ASK-02', 'FOUNDATION PLAN @ BOAT HOUSE'],
  ['ASK-03', 'ANCHOR BOLT PLACEMENT'],
  ['ASK-04', 'ROOF DETAILS AT BOAT HOUSE'],
].map(([n, t]) => ({ number: n!, discipline: 'architectural', title: t! }));

/**
 * The single-sheet fixtures by file: the 12 Lake Kegonsa sheets (files 20150129_…; number and title
 * printed in the right-hand title strip), both ASK-003 issues and A600.
 */
export const SINGLE_SHEETS: [string, SheetExpect][] = (
  [
    ['20150129_A-101_first-floor.pdf', 'A-101', 'First Floor'],
    ['20150129_A-102_second-third-floor-plan.pdf', 'A-102', 'Second & Third Floor Plan'],
    ['20150129_A-103_roof-plan.pdf', 'A-103', 'Roof Plan'],
    ['20150129_A-201_elevations-south-east.pdf', 'A-201', 'Elevations - South & East'],
    ['20150129_A-202_elevations-north-west.pdf', 'A-202', 'Elevations - North & West'],
    ['20150129_A-301_building-sections.pdf', 'A-301', 'Building Sections'],
    ['20150129_A-302_building-sections.pdf', 'A-302', 'Building Sections'],
    ['20150129_A-303_building-sections.pdf', 'A-303', 'Building Sections'],
    ['20150129_A-304_building-sections.pdf', 'A-304', 'Building Sections'],
    ['20150129_A-305_building-sections.pdf', 'A-305', 'Building Sections'],
    [
      '20150129_S-101_structural-basement-second-floor-framing.pdf',
      'S-101',
      'Structural - Basement & Second Floor Framing',
    ],
    ['20150129_S-102_structural-roof.pdf', 'S-102', 'Structural - Roof'],
    [
      '20150115_ASK-003_exterior-west-wall-window-locations.pdf',
      'ASK-003',
      'Exterior West Wall - Window Locations',
    ],
    [
      '20150116_ASK-003_exterior-west-wall-window-locations.pdf',
      'ASK-003',
      'Exterior West Wall - Window Locations',
    ],
    ['20190321_A600_schedules.pdf', 'A600', 'SCHEDULES'],
  ] as const
).map(([file, n, t]) => [
  file,
  { number: n, discipline: n.startsWith('S') ? 'structural' : 'architectural', title: t },
]);
