// Title blocks of shop drawings, civil and survey sheets (fixtures/generated/, drawn by
// format-sheets.test-support.ts) read through the production path: PDFium's text layer and raster
// (ingestPage, as a pool worker runs it) into the title-block reader.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { openInput, type InputDocument } from '../input/document';
import { ingestPage } from '../ingest/ingest-page';
import { FORMAT_SHEETS } from './format-sheets.test-support';

const DIR = fileURLToPath(new URL('../../../fixtures/generated/', import.meta.url));
/** Set to 1 to rewrite the committed files after changing a sheet (see fixtures/generated/README). */
const WRITE = process.env.BLUELINE_WRITE_GENERATED === '1';

const docs: InputDocument[] = [];
afterAll(async () => {
  for (const d of docs) await d.close();
});

async function ingested(file: string) {
  const doc = await openInput(new Uint8Array(readFileSync(DIR + file)), 'application/pdf');
  docs.push(doc);
  return ingestPage(doc, 0, { dpi: 50, maxPixels: 50_000_000, ocr: false });
}

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
});
