import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InputError } from './input-errors';
import { DEFAULT_DPI, openDocument, pixelSize } from './pdf.adapter';
import { textItemBox } from './pdfjs-text';
import { buildPdf } from './synthetic-inputs';
import { darkFractionIn } from './raster.test-support';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/drawings/', import.meta.url));
const fixture = (name: string) => new Uint8Array(readFileSync(FIXTURES + name));

/** Expected page counts from the fixtures README. */
function expectedPages(name: string): number {
  if (name.includes('beam-proposal')) return 5;
  if (name.includes('barber-house')) return 9;
  if (name.includes('foundation-details')) return 3;
  return 1;
}

function darkFraction(r: { data: Uint8Array }, threshold = 128): number {
  let n = 0;
  for (const v of r.data) if (v < threshold) n++;
  return n / r.data.length;
}

/** Expect `p` to reject with an InputError of `code`, within `ms`. Returns the error. */
async function expectInputError(
  p: () => Promise<unknown>,
  code: string,
  ms = 15_000,
): Promise<InputError> {
  const t0 = performance.now();
  let err: unknown;
  try {
    await p();
  } catch (e) {
    err = e;
  }
  const elapsed = performance.now() - t0;
  expect(err, `expected InputError ${code}`).toBeInstanceOf(InputError);
  expect((err as InputError).code).toBe(code);
  expect((err as InputError).detail.length).toBeGreaterThan(20);
  expect(elapsed).toBeLessThan(ms);
  return err as InputError;
}

describe('pdf.adapter on the real fixtures', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.pdf'));

  it('finds all 20 fixture PDFs', () => {
    expect(files.length).toBe(20);
  });

  it.each(files)(
    '%s opens with the README page count, every page landscape as printed',
    async (name) => {
      const doc = await openDocument(fixture(name));
      try {
        expect(doc.pageCount).toBe(expectedPages(name));
        for (let i = 0; i < doc.pageCount; i++) {
          const info = await doc.pageInfo(i);
          // Every fixture sheet is printed landscape (11x17 or 22x34 in), whatever its /Rotate.
          expect(info.widthPt).toBeGreaterThan(info.heightPt);
          const rotated =
            name.startsWith('20150129_') ||
            name.startsWith('20130724_') ||
            name.includes('foundation') ||
            name.includes('ASK-003');
          expect(info.rotate).toBe(rotated ? 90 : 0);
          const sizeIn = [Math.round(info.widthPt / 72), Math.round(info.heightPt / 72)];
          expect([
            [17, 11],
            [34, 22],
          ]).toContainEqual(sizeIn);
        }
      } finally {
        await doc.close();
      }
    },
  );

  it('renders a /Rotate 90 sheet (A-101) landscape with ink, and the sheet number text lands on its ink in the bottom-right', async () => {
    const doc = await openDocument(fixture('20150129_A-101_first-floor.pdf'));
    try {
      const dpi = 100;
      const r = await doc.renderPage(0, { dpi });
      expect([r.width, r.height]).toEqual([1700, 1100]); // 17 x 11 in at 100 dpi
      expect(r.dpi).toBe(dpi);
      expect(r.data.length).toBe(r.width * r.height);
      const ink = darkFraction(r);
      expect(ink).toBeGreaterThan(0.01);
      expect(ink).toBeLessThan(0.3);

      const text = await doc.pageText(0, dpi);
      const hit = text.find((t) => t.text.trim() === 'A-101');
      expect(hit, 'A-101 in the text layer').toBeDefined();
      const t = hit!;
      expect(t.x).toBeGreaterThanOrEqual(0);
      expect(t.y).toBeGreaterThanOrEqual(0);
      expect(t.x + t.width).toBeLessThanOrEqual(r.width);
      expect(t.y + t.height).toBeLessThanOrEqual(r.height);
      expect(t.x).toBeGreaterThan(0.75 * r.width);
      expect(t.y).toBeGreaterThan(0.75 * r.height);
      expect(t.angle).toBe(0); // reads left to right on the printed (rotated) sheet
      expect(t.fontSize).toBeGreaterThan(15); // large title-block lettering (~0.3 in)
      // The box covers the glyphs of the raster: rotation is applied the same way to both.
      expect(darkFractionIn(r, t)).toBeGreaterThan(0.1);
      // ...and an equally large box just left of it in the title strip is much emptier than the glyphs.
      expect(darkFractionIn(r, { ...t, x: t.x - 1.5 * t.width })).toBeLessThan(
        darkFractionIn(r, t),
      );
    } finally {
      await doc.close();
    }
  });

  it('beam proposal page 0: raster has ink, S101 text is bottom-right, text scales with dpi', async () => {
    const doc = await openDocument(fixture('20190601_beam-proposal_5-sheets.pdf'));
    try {
      const r = await doc.renderPage(0, { dpi: 50 });
      expect([r.width, r.height]).toEqual([1700, 1100]); // 34 x 22 in at 50 dpi
      expect(r.widthPt).toBe(2448);
      expect(darkFraction(r)).toBeGreaterThan(0.005);

      const at50 = await doc.pageText(0, 50);
      const at100 = await doc.pageText(0, 100);
      const s50 = at50.find((t) => t.text.trim() === 'S101');
      const s100 = at100.find((t) => t.text.trim() === 'S101');
      expect(s50 && s100).toBeTruthy();
      expect(s50!.x).toBeGreaterThan(0.75 * r.width);
      expect(s50!.y).toBeGreaterThan(0.75 * r.height);
      expect(s50!.x + s50!.width).toBeLessThanOrEqual(r.width);
      expect(s50!.y + s50!.height).toBeLessThanOrEqual(r.height);
      expect(s100!.x).toBeCloseTo(2 * s50!.x, 6);
      expect(s100!.fontSize).toBeCloseTo(2 * s50!.fontSize, 6);
      expect(darkFractionIn(r, s50!)).toBeGreaterThan(0.1);
    } finally {
      await doc.close();
    }
  });
});

describe('pdf.adapter geometry on synthetic pages', () => {
  // A 17x11 in sheet stored portrait with /Rotate 90 (as the 20150129 set is), with a filled square near
  // the stored page's origin and a text run drawn bottom-to-top in user space.
  const content =
    '0 g 36 36 72 72 re f ' + // a 1-in black square, 0.5 in from the stored bottom-left corner
    'BT /F1 48 Tf 0 1 -1 0 400 300 Tm (HELLO) Tj ET';
  const pdf = () => buildPdf({ widthPt: 792, heightPt: 1224, rotate: 90, content });

  it('applies /Rotate 90 to raster and text consistently', async () => {
    const doc = await openDocument(pdf());
    try {
      const info = await doc.pageInfo(0);
      expect(info).toEqual({ widthPt: 1224, heightPt: 792, rotate: 90 });
      const r = await doc.renderPage(0, { dpi: 72 });
      expect([r.width, r.height]).toEqual([1224, 792]);
      // /Rotate 90 turns the page clockwise: the stored bottom-left corner goes to the top-left.
      expect(darkFractionIn(r, { x: 40, y: 40, width: 64, height: 64 })).toBeGreaterThan(0.95);
      expect(darkFractionIn(r, { x: 40, y: 792 - 104, width: 64, height: 64 })).toBe(0);

      const [t] = await doc.pageText(0, 72);
      expect(t?.text).toBe('HELLO');
      // Drawn bottom-to-top in user space, so left-to-right once the page is turned clockwise.
      expect(t!.angle).toBe(0);
      expect(t!.fontSize).toBeCloseTo(48, 6);
      expect(darkFractionIn(r, t!)).toBeGreaterThan(0.15);
    } finally {
      await doc.close();
    }
  });

  it('reports the angle of vertical text on an unrotated page', async () => {
    const doc = await openDocument(
      buildPdf({ content: 'BT /F1 24 Tf 0 1 -1 0 300 200 Tm (UP) Tj ET' }),
    );
    try {
      const [t] = await doc.pageText(0, 144);
      expect(t?.text).toBe('UP');
      expect(t!.angle).toBe(90);
      expect(t!.height).toBeGreaterThan(t!.width); // a vertical run
      expect(t!.fontSize).toBeCloseTo(48, 6); // 24 pt at 2x
    } finally {
      await doc.close();
    }
  });

  it('textItemBox maps a horizontal run through the viewport flip', () => {
    // 12 pt text at (100, 700) on a 792 pt tall page, 2 px per pt: baseline at y = (792-700)*2 = 184.
    const b = textItemBox([12, 0, 0, 12, 100, 700], 60, 12, [2, 0, 0, -2, 0, 1584]);
    expect(b.x).toBeCloseTo(200);
    expect(b.width).toBeCloseTo(120);
    expect(b.y).toBeCloseTo(184 - 0.8 * 24);
    expect(b.height).toBeCloseTo(24);
    expect(b.angle).toBe(0);
    expect(b.fontSize).toBeCloseTo(24);
  });

  it('pixelSize rounds instead of truncating', () => {
    expect(pixelSize(2448, 1584, 200)).toEqual({ width: 6800, height: 4400 });
    expect(pixelSize(2592, 1728, DEFAULT_DPI)).toEqual({ width: 7200, height: 4800 });
  });
});

describe('pdf.adapter refuses bad input with a precise InputError', () => {
  it('corrupt: PDF header and EOF marker around garbage', async () => {
    const bytes = new TextEncoder().encode('%PDF-1.7\n' + 'garbage '.repeat(500) + '\n%%EOF\n');
    await expectInputError(() => openDocument(bytes), 'corrupt_file');
  });

  it('truncated: the beam proposal cut in half', async () => {
    const full = fixture('20190601_beam-proposal_5-sheets.pdf');
    const e = await expectInputError(
      () => openDocument(full.subarray(0, full.length >> 1)),
      'truncated_file',
      2_000,
    );
    expect(e.detail).toMatch(/cut off/);
  });

  it('encrypted: a password-protected PDF (standard security handler, RC4)', async () => {
    const e = await expectInputError(
      () => openDocument(buildPdf({ userPassword: 'secret' })),
      'encrypted_pdf',
    );
    expect(e.detail).toMatch(/password/);
  });

  it('the same document without a password opens (so the refusal above is about the password)', async () => {
    const doc = await openDocument(buildPdf());
    expect(doc.pageCount).toBe(1);
    await doc.close();
  });

  it('zero pages', async () => {
    await expectInputError(() => openDocument(buildPdf({ pages: 0 })), 'no_pages');
  });

  it('too many pages against a configured limit', async () => {
    const e = await expectInputError(
      () => openDocument(buildPdf({ pages: 5 }), { maxPages: 3 }),
      'too_many_pages',
    );
    expect(e.detail).toMatch(/5 pages.*limit is 3/);
  });

  it('absurd MediaBox (200 x 200 in) at the default dpi is refused before rendering, with page, size, dpi and limit', async () => {
    const doc = await openDocument(buildPdf({ widthPt: 14400, heightPt: 14400 }));
    try {
      const e = await expectInputError(() => doc.renderPage(0), 'page_too_large', 1_000);
      expect(e.pageIndex).toBe(0);
      expect(e.detail).toContain('Page 1');
      expect(e.detail).toContain('200 x 200 in');
      expect(e.detail).toContain(`${DEFAULT_DPI} dpi`);
      expect(e.detail).toContain('300.0 MP');
      // The same page fits at a dpi the detail proposes.
      const fit = Number(/at (\d+) dpi or less/.exec(e.detail)?.[1]);
      expect(fit).toBeGreaterThan(0);
      expect(fit * 200 * fit * 200).toBeLessThanOrEqual(300e6);
    } finally {
      await doc.close();
    }
  });

  it('a render that exceeds the time budget ends in processing_timeout and the handle stays usable', async () => {
    const doc = await openDocument(fixture('20190601_beam-proposal_5-sheets.pdf'), {
      pageTimeoutMs: 1,
    });
    try {
      await expectInputError(() => doc.renderPage(1, { dpi: 50 }), 'processing_timeout', 5_000);
      expect((await doc.pageInfo(1)).widthPt).toBe(2448);
    } finally {
      await doc.close();
    }
  });

  it('page index out of range is a programming error (RangeError), not an InputError', async () => {
    const doc = await openDocument(buildPdf());
    try {
      await expect(doc.renderPage(1)).rejects.toBeInstanceOf(RangeError);
      await expect(doc.renderPage(0, { dpi: -3 })).rejects.toThrow(/dpi/);
    } finally {
      await doc.close();
    }
  });
});
