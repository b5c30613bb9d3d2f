// Expected sheet metadata of the multi-sheet fixture sets (../shared/fixtures/drawings), read off
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
