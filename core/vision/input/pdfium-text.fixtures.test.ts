// The text layer from PDFium (pdfium-text.ts, production since issue #3) against the pdf.js text layer
// it replaced (pdfjs-text.ts), on every page of every fixture drawing; then the sheet readers fed by the
// production path (ingestPage / pageText) must find every fixture's number, discipline and title, as the
// pdf.js-fed tests in core/vision/sheet/ expect.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ingestPage } from '../ingest/ingest-page';
import { normalizeSheetNumber } from '../sheet/discipline';
import { segmentBlocks } from '../sheet/blocks';
import { extractSheetMetadata } from '../sheet/title-block';
import type { TextItem } from '../types';
import { openInput, type InputDocument } from './document';
import { DEFAULT_DPI, openDocument, pixelSize } from './pdf.adapter';
import { openPdfjsText, pdfjsPageText } from './pdfjs-text';
import {
  BARBER_SHEETS,
  BEAM_SHEETS,
  FOUNDATION_SHEETS,
  SINGLE_SHEETS,
  type SheetExpect,
} from '../sheet/fixture-sheets.test-support';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/drawings/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(FIXTURES + name));

interface Pairing {
  unmatchedPdfium: TextItem[];
  unmatchedPdfjs: TextItem[];
  /** Largest difference of x, y, width or height over matched runs, sheet pixels. */
  maxBoxDelta: number;
  /** Matched runs whose text, angle or font size (over 2 %) differ. */
  attributeMismatches: [TextItem, TextItem][];
}

/** Pair runs with the same text, each to the nearest unpaired run of the other list within `tol` px. */
function pairRuns(pdfium: TextItem[], pdfjs: TextItem[], tol: number): Pairing {
  const used = new Set<number>();
  const out: Pairing = {
    unmatchedPdfium: [],
    unmatchedPdfjs: [],
    maxBoxDelta: 0,
    attributeMismatches: [],
  };
  for (const b of pdfjs) {
    let best = -1;
    let bestD = Infinity;
    pdfium.forEach((a, k) => {
      if (used.has(k) || a.text.trim() !== b.text.trim()) return;
      const d = Math.max(
        Math.abs(a.x - b.x),
        Math.abs(a.y - b.y),
        Math.abs(a.width - b.width),
        Math.abs(a.height - b.height),
      );
      if (d < bestD) {
        bestD = d;
        best = k;
      }
    });
    if (best < 0 || bestD > tol) {
      out.unmatchedPdfjs.push(b);
      continue;
    }
    used.add(best);
    out.maxBoxDelta = Math.max(out.maxBoxDelta, bestD);
    const a = pdfium[best]!;
    if (
      a.text !== b.text ||
      a.angle !== b.angle ||
      Math.abs(a.fontSize - b.fontSize) > 0.02 * b.fontSize
    ) {
      out.attributeMismatches.push([a, b]);
    }
  }
  pdfium.forEach((a, k) => {
    if (!used.has(k)) out.unmatchedPdfium.push(a);
  });
  return out;
}

const words = (items: TextItem[]) =>
  items
    .flatMap((t) => t.text.split(/\s+/))
    .filter(Boolean)
    .sort();

describe('PDFium text layer = pdf.js text layer on the fixtures', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.pdf'));

  it.each(files)(
    '%s: same runs and words, boxes within 2 px at the default dpi',
    async (name) => {
      const bytes = fixture(name);
      const doc = await openDocument(bytes);
      const js = await openPdfjsText(bytes);
      try {
        let total = 0;
        for (let i = 0; i < doc.pageCount; i++) {
          const info = await doc.pageInfo(i);
          const size = pixelSize(info.widthPt, info.heightPt, DEFAULT_DPI);
          // pdf.js's text content is the page's content only: PDFium's markup runs (FreeText
          // annotations, pdfium.adapter's readMarkupText) have no counterpart there.
          const a = (await doc.pageText(i, DEFAULT_DPI)).filter((t) => !t.markup);
          const b = await pdfjsPageText(js, i, DEFAULT_DPI, size);
          const p = pairRuns(a, b, 2);
          const show = (t: TextItem) =>
            `${JSON.stringify(t.text)} @${t.x.toFixed(1)},${t.y.toFixed(1)}`;
          expect({
            page: i,
            onlyPdfium: p.unmatchedPdfium.map(show),
            onlyPdfjs: p.unmatchedPdfjs.map(show),
          }).toEqual({ page: i, onlyPdfium: [], onlyPdfjs: [] });
          expect(p.attributeMismatches).toEqual([]);
          expect(p.maxBoxDelta).toBeLessThanOrEqual(2);
          expect(words(a)).toEqual(words(b));
          // Every run is on the sheet (a run may overhang the edge, as some do in pdf.js too).
          for (const t of a) {
            expect(t.x).toBeLessThan(size.width);
            expect(t.y).toBeLessThan(size.height);
            expect(t.x + t.width).toBeGreaterThan(0);
            expect(t.y + t.height).toBeGreaterThan(0);
          }
          total += a.length;
        }
        expect(total).toBeGreaterThan(20 * doc.pageCount);
      } finally {
        await doc.close();
        await js.destroy();
      }
    },
    60_000,
  );
});

// ---------------------------------------------------------------------------------------------
// Sheet metadata from the production path. Expected values are those of core/vision/sheet/
// title-block.test.ts and blocks.test.ts (read off the rendered sheets).

type Expect = SheetExpect;
const beam = BEAM_SHEETS;
const barber = BARBER_SHEETS;
const foundation = FOUNDATION_SHEETS;
const singles = SINGLE_SHEETS;

const docs = new Map<string, InputDocument>();
async function doc(name: string): Promise<InputDocument> {
  let d = docs.get(name);
  if (!d) {
    d = await openInput(fixture(name), 'application/pdf');
    docs.set(name, d);
  }
  return d;
}
afterAll(async () => {
  for (const d of docs.values()) await d.close();
});

/** What a pool worker does with a page (raster + text from one load, metadata, blocks), at 50 dpi. */
async function ingested(name: string, index: number) {
  return ingestPage(await doc(name), index, { dpi: 50, maxPixels: 50_000_000, ocr: false });
}

/** Metadata from the production text layer alone (no raster), as title-block.test.ts reads it. */
async function fromText(name: string, index: number) {
  const d = await doc(name);
  const info = await d.pageInfo(index, 50);
  const items = await d.pageText(index, 50);
  return extractSheetMetadata({ items, width: info.widthPx, height: info.heightPx, dpi: 50 });
}

function check(
  meta: { sheet_number: string | null; discipline: string; title: string | null },
  e: Expect,
  page: number,
) {
  expect({ page, number: meta.sheet_number, discipline: meta.discipline }).toEqual({
    page,
    number: e.number,
    discipline: e.discipline,
  });
  if (e.title) expect({ page, title: meta.title }).toEqual({ page, title: e.title });
}

describe('sheet metadata from the PDFium text layer (production path)', () => {
  const sets: [string, Expect[]][] = [
    ['20130718_barber-house_set_9-sheets.pdf', barber],
    ['20130724_barber-house_set_9-sheets.pdf', barber],
    ['20190414_foundation-details_3-sheets.pdf', foundation],
  ];
  it.each(sets)(
    '%s through ingestPage: every page gets its number, discipline and title',
    async (file, expected) => {
      expect((await doc(file)).pageCount).toBe(expected.length);
      for (let i = 0; i < expected.length; i++) {
        const p = await ingested(file, i);
        expect(p.textSource).toBe('vector');
        check(p.metadata, expected[i]!, i);
        expect(p.metadata.confidence).toBeGreaterThan(0.5);
        expect(p.blocks.filter((b) => b.type === 'TitleBlock')).toHaveLength(1);
      }
    },
    120_000,
  );

  it.each(singles)(
    '%s through ingestPage',
    async (file, e) => {
      const p = await ingested(file, 0);
      check(p.metadata, e, 0);
      if (file.startsWith('20150129_')) {
        // Right-hand title strip of the Lake Kegonsa set.
        expect((p.metadata.titleBlockBox?.x ?? 0) / p.width).toBeGreaterThan(0.7);
      }
    },
    60_000,
  );

  it.each(['20190601_beam-proposal_5-sheets.pdf', '20190602_beam-proposal_5-sheets.pdf'])(
    '%s (text layer only: its raster takes seconds a page)',
    async (file) => {
      for (let i = 0; i < beam.length; i++) check(await fromText(file, i), beam[i]!, i);
      const s101 = await fromText(file, 0);
      expect(s101.title).toBe('FRAMING - 1ST FLOOR');
      expect(s101.revision).toBeNull();
    },
  );

  it('barber 22x34 (rotated) and 11x17 issues pair by normalized number', async () => {
    for (let i = 0; i < 9; i++) {
      const a = await fromText('20130718_barber-house_set_9-sheets.pdf', i);
      const b = await fromText('20130724_barber-house_set_9-sheets.pdf', i);
      expect(normalizeSheetNumber(a.sheet_number ?? 'x')).toBe(
        normalizeSheetNumber(b.sheet_number ?? 'y'),
      );
    }
  });

  it('revisions: Lake Kegonsa A-101 reads 2, A-301 has an empty table', async () => {
    expect((await ingested('20150129_A-101_first-floor.pdf', 0)).metadata.revision).toBe('2');
    expect(
      (await ingested('20150129_A-301_building-sections.pdf', 0)).metadata.revision,
    ).toBeNull();
  });

  it('blocks: A600 schedules, ASK-04 details, A-301 sections, S300 sections', async () => {
    const a600 = (await ingested('20190321_A600_schedules.pdf', 0)).blocks;
    const schedules = a600.filter((b) => b.type === 'Schedule').map((b) => b.title);
    expect(schedules).toContain('ROOM SCHEDULE - SIMPLIFIED');
    expect(schedules).toContain('WINDOW SCHEDULE - SIMPLIFIED');

    const ask04 = (await ingested('20190414_foundation-details_3-sheets.pdf', 2)).blocks;
    const details = ask04.filter((b) => b.type === 'Detail');
    expect(details).toHaveLength(2);
    for (const d of details) {
      expect(d.scale).toBe('3" = 1\'-0"');
      expect(d.title).toMatch(/^DETAIL - WALL SECTION - TOP OF BOAT HOUSE - (WEST|EAST) WALL$/);
    }

    const a301 = (await ingested('20150129_A-301_building-sections.pdf', 0)).blocks;
    const sections = a301.filter((b) => b.type === 'Section');
    expect(sections.map((s) => s.identifier).sort()).toEqual(['1', '2', '3']);
    for (const s of sections) expect(s.scale).toBe('1/4" = 1\'-0"');

    const d = await doc('20190601_beam-proposal_5-sheets.pdf');
    const info = await d.pageInfo(4, 30);
    const items = await d.pageText(4, 30);
    const meta = extractSheetMetadata({
      items,
      width: info.widthPx,
      height: info.heightPx,
      dpi: 30,
    });
    const s300 = segmentBlocks({
      items,
      width: info.widthPx,
      height: info.heightPx,
      dpi: 30,
      titleBlockBox: meta.titleBlockBox,
      sheetTitle: meta.title,
    });
    expect(s300.filter((b) => b.type === 'Section').map((s) => s.identifier)).toEqual(['1', '2']);
  }, 60_000);
});
