import { afterAll, describe, expect, it } from 'vitest';
import type { GreyImage, TextItem } from '../types';
import { normalizeSheetNumber } from './discipline';
import { openFixture, type TestDocument } from './test-support';
import { extractSheetMetadata } from './title-block';
import {
  BARBER_SHEETS,
  BEAM_SHEETS,
  FOUNDATION_SHEETS,
  SINGLE_SHEETS,
  type SheetExpect,
} from './fixture-sheets.test-support';

/** A text item at (x, y) in sheet pixels with glyph boxes about 0.6 em wide per character. */
function item(text: string, x: number, y: number, fontSize: number, angle = 0): TextItem {
  return { text, x, y, width: text.length * fontSize * 0.6, height: fontSize, fontSize, angle };
}

describe('extractSheetMetadata on synthetic sheets (1700 x 1100 px @ 50 dpi)', () => {
  const W = 1700;
  const H = 1100;
  const dpi = 50;

  it('prefers the large title-block number over referenced sheets in callouts', () => {
    const items = [
      // A section bubble in the drawing: "3" over "A-301", and a detail reference "5/A-501".
      item('3', 400, 300, 10),
      item('A-301', 385, 312, 10),
      item('SEE 5/A-501', 600, 500, 10),
      item('FIRST FLOOR PLAN', 1450, 960, 16),
      item('SHEET NO.', 1450, 995, 8),
      item('A-101', 1450, 1010, 40),
    ];
    const m = extractSheetMetadata({ items, width: W, height: H, dpi });
    expect(m.sheet_number).toBe('A-101');
    expect(m.discipline).toBe('architectural');
    expect(m.title).toBe('FIRST FLOOR PLAN');
    expect(m.titleBlockBox).not.toBeNull();
    expect(m.confidence).toBeGreaterThan(0.5);
  });

  it('merges a number split into glyph runs', () => {
    const items = [
      item('M', 1500, 1000, 40),
      item('-', 1524, 1000, 40),
      item('201', 1548, 1000, 40),
    ];
    const m = extractSheetMetadata({ items, width: W, height: H, dpi });
    expect(m.sheet_number).toBe('M-201');
    expect(m.discipline).toBe('mechanical');
  });

  it('reads a revision label and skips address and date lines for the title', () => {
    const items = [
      item('ACME TOWER', 1450, 900, 16),
      item('123 MAIN STREET', 1450, 925, 16),
      item('ROOF FRAMING PLAN', 1450, 955, 16),
      item('DATE: 04/14/2019', 1450, 980, 8),
      item('REV: C', 1600, 980, 8),
      item('S-201', 1450, 1010, 40),
    ];
    const m = extractSheetMetadata({ items, width: W, height: H, dpi });
    expect(m.sheet_number).toBe('S-201');
    expect(m.title).toBe('ROOF FRAMING PLAN');
    expect(m.revision).toBe('C');
  });

  it('returns nulls and unknown discipline when no sheet number is printed', () => {
    const m = extractSheetMetadata({
      items: [item('GENERAL NOTES', 100, 100, 12)],
      width: W,
      height: H,
      dpi,
    });
    expect(m).toMatchObject({ sheet_number: null, discipline: 'unknown', titleBlockBox: null });
  });

  it('snaps a right-hand title strip to its frame line when the image is given', () => {
    const data = new Uint8Array(W * H).fill(255);
    for (let y = 20; y < H - 20; y++) data[y * W + 1400] = 0;
    const image: GreyImage = { width: W, height: H, data };
    const items = [item('SECOND FLOOR PLAN', 1450, 960, 16), item('A-102', 1450, 1010, 40)];
    const withImage = extractSheetMetadata({ items, width: W, height: H, dpi, image });
    expect(withImage.titleBlockBox).toEqual({ x: 1400, y: 0, width: 300, height: H });
    const textOnly = extractSheetMetadata({ items, width: W, height: H, dpi });
    expect(textOnly.titleBlockBox?.x).toBeGreaterThan(1400);
  });

  it('rejects a non-positive dpi with an actionable message', () => {
    expect(() => extractSheetMetadata({ items: [], width: W, height: H, dpi: 0 })).toThrow(
      /positive/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Real fixture sheets. Expected values were read off the rendered sheets (title block, bottom right).

const DPI = 50;

type Expect = SheetExpect;
const beam = BEAM_SHEETS;
const barber = BARBER_SHEETS;

const docs = new Map<string, TestDocument>();
async function doc(name: string): Promise<TestDocument> {
  let d = docs.get(name);
  if (!d) {
    d = await openFixture(name);
    docs.set(name, d);
  }
  return d;
}
afterAll(async () => {
  for (const d of docs.values()) await d.close();
});

async function metaOf(name: string, page: number) {
  const p = await (await doc(name)).page(page, DPI);
  return { page: p, meta: extractSheetMetadata(p) };
}

describe('multi-sheet fixtures: every page gets its number and discipline', () => {
  const sets: [string, Expect[]][] = [
    ['20190601_beam-proposal_5-sheets.pdf', beam],
    ['20190602_beam-proposal_5-sheets.pdf', beam],
    ['20130718_barber-house_set_9-sheets.pdf', barber],
    ['20130724_barber-house_set_9-sheets.pdf', barber],
    [
      '20190414_foundation-details_3-sheets.pdf',
      // Numbers only here: the titles have their own test below.
      FOUNDATION_SHEETS.map(({ number, discipline }) => ({ number, discipline })),
    ],
  ];
  for (const [file, expected] of sets) {
    it(file, async () => {
      const d = await doc(file);
      expect(d.pageCount).toBe(expected.length);
      for (let i = 0; i < expected.length; i++) {
        const e = expected[i] as Expect;
        const { meta } = await metaOf(file, i);
        expect({ page: i, number: meta.sheet_number, discipline: meta.discipline }).toEqual({
          page: i,
          number: e.number,
          discipline: e.discipline,
        });
        if (e.title) expect({ page: i, title: meta.title }).toEqual({ page: i, title: e.title });
        expect(meta.confidence).toBeGreaterThan(0.5);
      }
    });
  }

  it('the 22x34 barber issue (rotated pages) pairs with the 11x17 issue by normalized number', async () => {
    for (let i = 0; i < 9; i++) {
      const a = (await metaOf('20130718_barber-house_set_9-sheets.pdf', i)).meta;
      const b = (await metaOf('20130724_barber-house_set_9-sheets.pdf', i)).meta;
      expect(normalizeSheetNumber(a.sheet_number ?? 'x')).toBe(
        normalizeSheetNumber(b.sheet_number ?? 'y'),
      );
    }
  });

  it('beam proposal titles and title block band along the bottom', async () => {
    const { page, meta } = await metaOf('20190601_beam-proposal_5-sheets.pdf', 0);
    expect(meta.title).toBe('FRAMING - 1ST FLOOR');
    expect(meta.revision).toBeNull();
    const tb = meta.titleBlockBox;
    expect(tb).not.toBeNull();
    // A band along the bottom edge, well below the view title "FRAMING - 1ST FLOOR" at ~78 % height.
    expect((tb?.y ?? 0) / page.height).toBeGreaterThan(0.8);
    expect((tb?.y ?? 0) + (tb?.height ?? 0)).toBe(page.height);
  });

  it('foundation details titles drop the appended issue date', async () => {
    const titles = [];
    for (let i = 0; i < 3; i++)
      titles.push((await metaOf('20190414_foundation-details_3-sheets.pdf', i)).meta.title);
    expect(titles).toEqual([
      'FOUNDATION PLAN @ BOAT HOUSE',
      'ANCHOR BOLT PLACEMENT',
      'ROOF DETAILS AT BOAT HOUSE',
    ]);
  });
});

describe('single-sheet fixtures', () => {
  // Lake Kegonsa issue set: the number comes from the file name; the title is the one printed above
  // the number in the right-hand title strip (read off the rendered sheets).
  const kegonsa: [string, string][] = SINGLE_SHEETS.filter(([f]) => f.startsWith('20150129_')).map(
    ([f, e]) => [f, e.title!],
  );
  it.each(kegonsa)('%s', async (file, printedTitle) => {
    const m = /^\d+_([A-Z]+-\d+)_(.+)\.pdf$/.exec(file);
    const fileNumber = m?.[1] as string;
    const fileWords = (m?.[2] as string).split('-');
    const { page, meta } = await metaOf(file, 0);
    expect(meta.sheet_number).toBe(fileNumber);
    expect(meta.discipline).toBe(fileNumber.startsWith('S') ? 'structural' : 'architectural');
    expect(meta.title).toBe(printedTitle);
    // Loose check against the file name: every word of it appears in the title read.
    const titleWords = (meta.title ?? '').toLowerCase();
    for (const w of fileWords) expect(titleWords).toContain(w);
    // Right-hand title strip.
    expect((meta.titleBlockBox?.x ?? 0) / page.width).toBeGreaterThan(0.7);
    expect(meta.titleBlockBox?.height).toBe(page.height);
  });

  it('Lake Kegonsa revision table: last row number', async () => {
    expect((await metaOf('20150129_A-101_first-floor.pdf', 0)).meta.revision).toBe('2');
    // A-301 has an empty revision table.
    expect((await metaOf('20150129_A-301_building-sections.pdf', 0)).meta.revision).toBeNull();
  });

  it.each(
    SINGLE_SHEETS.filter(([f]) => !f.startsWith('20150129_')).map(
      ([f, e]) => [f, e.number, e.title!] as const,
    ),
  )('%s', async (file, number, title) => {
    const { meta } = await metaOf(file, 0);
    expect(meta.sheet_number).toBe(number);
    expect(meta.discipline).toBe('architectural');
    expect(meta.title).toBe(title);
  });
});
