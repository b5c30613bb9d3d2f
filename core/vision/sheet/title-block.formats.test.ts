// Title blocks of shop drawings, civil and survey sheets (fixtures/generated/, drawn by
// format-sheets.test-support.ts) read through the production path: PDFium's text layer and raster
// (ingestPage, as a pool worker runs it) into the title-block reader.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openInput, type InputDocument } from '../input/document';
import { ingestPage } from '../ingest/ingest-page';
import { FORMAT_SHEETS } from './format-sheets.test-support';
import { extractSheetMetadata } from './title-block';
import { sheetOfCount } from './title-fields';

const DIR = fileURLToPath(new URL('../../../fixtures/generated/', import.meta.url));
const DRAWINGS = fileURLToPath(new URL('../../../fixtures/drawings/', import.meta.url));
/** Set to 1 to rewrite the committed files after changing a sheet (see fixtures/generated/README). */
const WRITE = process.env.BLUELINE_WRITE_GENERATED === '1';

const docs: InputDocument[] = [];
afterAll(async () => {
  for (const d of docs) await d.close();
});

async function open(path: string): Promise<InputDocument> {
  const doc = await openInput(new Uint8Array(readFileSync(path)), 'application/pdf');
  docs.push(doc);
  return doc;
}

async function ingested(file: string) {
  return ingestPage(await open(DIR + file), 0, { dpi: 50, maxPixels: 50_000_000, ocr: false });
}

/** Metadata from the PDFium text layer alone (no raster: no frame line to snap to). */
async function fromText(path: string, index = 0) {
  const d = await open(path);
  const info = await d.pageInfo(index, 50);
  const items = await d.pageText(index, 50);
  return extractSheetMetadata({ items, width: info.widthPx, height: info.heightPx, dpi: 50 });
}

const read = (m: {
  sheet_number: string | null;
  title: string | null;
  revision: string | null;
  issued: string | null;
  discipline: string;
}) => ({
  sheet_number: m.sheet_number,
  title: m.title,
  revision: m.revision,
  issued: m.issued,
  discipline: m.discipline,
});

describe('generated sheets of other title-block formats', () => {
  it.each(FORMAT_SHEETS.map((s) => [s.file, s] as const))(
    '%s is committed as drawn',
    (file, sheet) => {
      const drawn = sheet.draw().toPdf();
      if (WRITE) writeFileSync(DIR + file, drawn);
      expect(existsSync(DIR + file)).toBe(true);
      expect(Buffer.compare(readFileSync(DIR + file), drawn)).toBe(0);
    },
  );

  it.each(FORMAT_SHEETS.map((s) => [s.file, s] as const))(
    '%s has a PDFium text layer with its number',
    async (file, sheet) => {
      const page = await ingested(file);
      expect(page.textSource).toBe('vector');
      const words = page.text.map((t) => t.text).join(' ');
      expect(words).toContain(sheet.expected.sheet_number);
    },
  );

  it.each(FORMAT_SHEETS.map((s) => [s.file, s] as const))(
    '%s: number, title, revision, issue date and discipline through ingestPage',
    async (file, sheet) => {
      const page = await ingested(file);
      expect(read(page.metadata)).toEqual(sheet.expected);
      expect(page.metadata.confidence).toBeGreaterThan(0.5);
      // The title block holds the number (its box is in sheet pixels at 50 dpi).
      const tb = page.metadata.titleBlockBox!;
      const n = sheet.expected.sheet_number;
      const number = page.text.find((t) => t.text.trim() === n || sheetOfCount(t.text) === n)!;
      expect(number.x).toBeGreaterThanOrEqual(tb.x);
      expect(number.y).toBeGreaterThanOrEqual(tb.y);
      expect(page.blocks.filter((b) => b.type === 'TitleBlock')).toHaveLength(1);
    },
  );

  it.each(FORMAT_SHEETS.map((s) => [s.file, s] as const))(
    '%s: the same from the text layer alone',
    async (file, sheet) => {
      expect(read(await fromText(DIR + file))).toEqual(sheet.expected);
    },
  );

  it('part marks, grades, stations and project numbers are not taken for the number', async () => {
    // What each sheet prints that is shaped like a sheet number (see format-sheets.test-support).
    const decoys: Record<string, string[]> = {
      'shop_tekla-assembly_1001.pdf': ['B12', '1001A', 'A992', 'A36'],
      'shop_sds2-detail_2001.pdf': ['C3', 'P1001', 'A12', 'A572'],
      'civil_plan-profile_C-301.pdf': ['C-2417', 'MH-3', 'CB-2', 'C-302'],
    };
    for (const [file, tokens] of Object.entries(decoys)) {
      const m = await fromText(DIR + file);
      for (const t of tokens)
        expect({ file, number: m.sheet_number }).not.toEqual({ file, number: t });
    }
  });
});

describe('issue dates of the fixture drawings (text layer)', () => {
  // Lake Kegonsa: the last revision row's date, or the Date field when the table is empty; the
  // Aalseth sheets append the date to the title or project line; ASK-003 prints only a plot time.
  it.each([
    ['20150129_A-101_first-floor.pdf', 0, '2015-01-29'],
    ['20150129_A-301_building-sections.pdf', 0, '2014-12-11'],
    ['20190414_foundation-details_3-sheets.pdf', 1, '2019-04-14'],
    ['20190321_A600_schedules.pdf', 0, '2019-03-18'],
    ['20190601_beam-proposal_5-sheets.pdf', 0, '2019-05-27'],
    ['20150115_ASK-003_exterior-west-wall-window-locations.pdf', 0, null],
    ['20130718_barber-house_set_9-sheets.pdf', 0, null],
  ] as const)('%s page %i: %s', async (file, index, issued) => {
    expect((await fromText(DRAWINGS + file, index)).issued).toBe(issued);
  });
});
