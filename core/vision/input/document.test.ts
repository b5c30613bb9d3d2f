import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { openInput, sniffContentType } from './document';
import { DEFAULT_IMAGE_DPI } from './image.adapter';
import { InputError } from './input-errors';
import { buildFlateBombPdf, buildLyingPng, buildPdf } from './synthetic-inputs';

const FIXTURES = fileURLToPath(new URL('../../../fixtures/drawings/', import.meta.url));

async function expectInputError(
  p: () => Promise<unknown>,
  code: string,
  ms = 10_000,
): Promise<InputError> {
  const t0 = performance.now();
  let err: unknown;
  try {
    await p();
  } catch (e) {
    err = e;
  }
  expect(err, `expected InputError ${code}`).toBeInstanceOf(InputError);
  expect((err as InputError).code).toBe(code);
  expect((err as InputError).detail.length).toBeGreaterThan(20);
  expect(performance.now() - t0).toBeLessThan(ms);
  return err as InputError;
}

/** A w x h grey "drawing": white paper, a black frame 2 px wide and a grey square in the middle. */
async function drawing(w: number, h: number, grey = 100) {
  const px = Buffer.alloc(w * h, 255);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (x < 2 || y < 2 || x >= w - 2 || y >= h - 2) px[y * w + x] = 0;
      else if (Math.abs(x - w / 2) < w / 8 && Math.abs(y - h / 2) < h / 8) px[y * w + x] = grey;
    }
  }
  return sharp(px, { raw: { width: w, height: h, channels: 1 } });
}

/** Incompressible grey noise (fixed LCG seed), so the PNG is about as large as its pixels. */
function noise(w: number, h: number) {
  const px = Buffer.alloc(w * h);
  let x = 12345;
  for (let i = 0; i < px.length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    px[i] = x >>> 24;
  }
  return sharp(px, { raw: { width: w, height: h, channels: 1 } });
}

const u8 = (b: Buffer) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

describe('sniffContentType', () => {
  it('recognises the four accepted types by magic number', async () => {
    const png = await (await drawing(8, 8)).png().toBuffer();
    const jpg = await (await drawing(8, 8)).jpeg().toBuffer();
    const tif = await (await drawing(8, 8)).tiff().toBuffer();
    expect(sniffContentType(png)).toBe('image/png');
    expect(sniffContentType(jpg)).toBe('image/jpeg');
    expect(sniffContentType(tif)).toBe('image/tiff');
    expect(sniffContentType(Uint8Array.from([0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8]))).toBe(
      'image/tiff',
    );
    expect(sniffContentType(buildPdf())).toBe('application/pdf');
    // A short preamble before the header is tolerated, as readers do.
    expect(sniffContentType(new TextEncoder().encode('\r\n  %PDF-1.5\n'))).toBe('application/pdf');
  });

  it('returns null for anything else', () => {
    const enc = new TextEncoder();
    expect(sniffContentType(enc.encode('GIF89a....'))).toBeNull();
    expect(sniffContentType(enc.encode('PK\x03\x04 docx'))).toBeNull();
    expect(sniffContentType(new Uint8Array(0))).toBeNull();
    expect(sniffContentType(Uint8Array.from([0x89, 0x50, 0x4e, 0x47]))).toBeNull(); // PNG signature cut short
  });
});

describe('openInput chooses the adapter by magic number', () => {
  it('opens a fixture PDF declared with a wrong type as a PDF, and says so', async () => {
    const bytes = new Uint8Array(
      readFileSync(FIXTURES + '20190414_foundation-details_3-sheets.pdf'),
    );
    const doc = await openInput(bytes, 'image/png');
    try {
      expect(doc.contentType).toBe('application/pdf');
      expect(doc.declaredContentType).toBe('image/png');
      expect(doc.pageCount).toBe(3);
      expect(doc.textSource).toBe('vector');
      const info = await doc.pageInfo(2, 100);
      expect([info.widthPx, info.heightPx]).toEqual([1700, 1100]);
      const r = await doc.renderPage(2, { dpi: 50 });
      expect([r.width, r.height]).toEqual([850, 550]);
      const text = await doc.pageText(2, 50);
      expect(text.some((t) => t.text.includes('ASK-04'))).toBe(true);
    } finally {
      await doc.close();
    }
  });

  it('PNG without density: default dpi, exact grey pixels', async () => {
    const png = await (await drawing(400, 300, 100)).png().toBuffer();
    const doc = await openInput(u8(png), 'image/png');
    expect(doc.contentType).toBe('image/png');
    expect(doc.textSource).toBe('none');
    expect(doc.pageCount).toBe(1);
    const info = await doc.pageInfo(0);
    expect(info.dpi).toBe(DEFAULT_IMAGE_DPI);
    expect(info.widthPt).toBeCloseTo((400 / DEFAULT_IMAGE_DPI) * 72);
    const r = await doc.renderPage(0);
    expect([r.width, r.height, r.dpi]).toEqual([400, 300, DEFAULT_IMAGE_DPI]);
    expect(r.data.length).toBe(400 * 300);
    expect(r.data[0]).toBe(0); // frame
    expect(r.data[150 * 400 + 200]).toBe(100); // centre square
    expect(r.data[20 * 400 + 20]).toBe(255); // paper
    expect(await doc.pageText(0)).toEqual([]);
    await doc.close();
  });

  it('RGBA PNG: transparent paper becomes white, colour becomes grey', async () => {
    const w = 50;
    const h = 40;
    const px = Buffer.alloc(w * h * 4, 0); // fully transparent
    for (let i = 0; i < 10; i++) px.set([255, 0, 0, 255], i * 4); // red, opaque
    const png = await sharp(px, { raw: { width: w, height: h, channels: 4 } })
      .png()
      .toBuffer();
    const doc = await openInput(u8(png), 'image/png');
    const r = await doc.renderPage(0);
    expect(r.data[0]).toBeGreaterThan(40);
    expect(r.data[0]).toBeLessThan(140);
    expect(r.data[w * h - 1]).toBe(255);
  });

  it('JPEG with declared density 300 dpi', async () => {
    const jpg = await (
      await drawing(600, 300)
    )
      .withMetadata({ density: 300 })
      .jpeg({ quality: 95 })
      .toBuffer();
    const doc = await openInput(u8(jpg), 'image/jpeg');
    expect(doc.contentType).toBe('image/jpeg');
    const info = await doc.pageInfo(0);
    expect(info.dpi).toBe(300);
    expect(info.widthPt).toBeCloseTo(144); // 2 in
    const r = await doc.renderPage(0);
    expect([r.width, r.height, r.dpi]).toEqual([600, 300, 300]);
    expect(Math.abs(r.data[150 * 600 + 300]! - 100)).toBeLessThan(8); // lossy, but the grey square is there
  });

  it('multi-page TIFF: page count and each page decoded separately', async () => {
    const pages = await Promise.all(
      [60, 120, 180].map(async (g) => (await drawing(200, 100, g)).png().toBuffer()),
    );
    const tif = await sharp(pages, { join: { animated: true } })
      .tiff({ compression: 'deflate' })
      .toBuffer();
    const doc = await openInput(u8(tif), 'image/tiff');
    expect(doc.contentType).toBe('image/tiff');
    expect(doc.pageCount).toBe(3);
    for (const [i, g] of [60, 120, 180].entries()) {
      const r = await doc.renderPage(i);
      expect([r.width, r.height, r.index]).toEqual([200, 100, i]);
      expect(r.data[50 * 200 + 100]).toBe(g);
    }
    await expect(doc.renderPage(3)).rejects.toBeInstanceOf(RangeError);
  });
});

describe('openInput refuses bad input with a precise InputError', () => {
  it('wrong magic: a GIF declared as PDF', async () => {
    const gif = await (await drawing(8, 8)).gif().toBuffer();
    const e = await expectInputError(
      () => openInput(u8(gif), 'application/pdf'),
      'unsupported_type',
    );
    expect(e.detail).toContain('declared as application/pdf');
    expect(e.detail).toContain('GIF');
  });

  it('wrong magic: plain text', async () => {
    await expectInputError(
      () => openInput(new TextEncoder().encode('hello, not a drawing'), 'application/pdf'),
      'unsupported_type',
    );
  });

  it('empty file', async () => {
    await expectInputError(() => openInput(new Uint8Array(0), 'application/pdf'), 'truncated_file');
  });

  it('a PNG header claiming 100000 x 100000 px is a decompression bomb, refused without decoding', async () => {
    const bomb = buildLyingPng(100_000, 100_000);
    expect(bomb.length).toBeLessThan(200);
    const rss0 = process.memoryUsage().rss;
    const e = await expectInputError(
      () => openInput(bomb, 'image/png'),
      'decompression_bomb',
      2_000,
    );
    expect(e.detail).toContain('100000 x 100000');
    expect(process.memoryUsage().rss - rss0).toBeLessThan(200 * 1024 * 1024);
  });

  it('a PDF whose content stream inflates past the per-stream cap is refused before any renderer opens it', async () => {
    // 64 MiB of PDF content compressing to ~64 KiB; the cap follows maxPixels (8 MB here).
    const bytes = buildFlateBombPdf(64 * 1024 * 1024);
    expect(bytes.byteLength).toBeLessThan(1024 * 1024);
    const e = await expectInputError(
      () => openInput(bytes, 'application/pdf', { maxPixels: 8_000_000 }),
      'decompression_bomb',
      10_000,
    );
    expect(e.detail).toContain('object 4');
  });

  it('a lying header just under the limit is still stopped at decode time', async () => {
    // 15000 x 15000 = 225 MP < 300 MP passes the header check; the data does not hold those pixels.
    const liar = buildLyingPng(15_000, 15_000);
    const doc = await openInput(liar, 'image/png');
    await expectInputError(() => doc.renderPage(0), 'truncated_file', 20_000);
  });

  it('an honest image over the pixel limit is page_too_large with size, dpi and limit', async () => {
    const big = await noise(1500, 1000).withMetadata({ density: 100 }).png().toBuffer();
    const e = await expectInputError(
      () => openInput(u8(big), 'image/png', { maxPixels: 1_000_000 }),
      'page_too_large',
    );
    expect(e.detail).toContain('15 x 10 in');
    expect(e.detail).toContain('100 dpi');
    expect(e.detail).toContain('1.0 MP');
  });

  it('truncated PNG and JPEG', async () => {
    const png = await noise(300, 300).png().toBuffer();
    const jpg = await (await drawing(800, 800)).jpeg().toBuffer();
    for (const [bytes, type] of [
      [png, 'image/png'],
      [jpg, 'image/jpeg'],
    ] as const) {
      const cut = u8(bytes).subarray(0, bytes.length >> 1);
      await expectInputError(async () => {
        const doc = await openInput(cut, type);
        await doc.renderPage(0);
      }, 'truncated_file');
    }
  });

  it('corrupt image data behind a valid signature', async () => {
    const bytes = new Uint8Array(2000).fill(0x41);
    bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await expectInputError(() => openInput(bytes, 'image/png'), 'corrupt_file');
    bytes.set([0x49, 0x49, 0x2a, 0x00]);
    await expectInputError(() => openInput(bytes, 'image/tiff'), 'corrupt_file');
  });

  it('a TIFF with more pages than the limit', async () => {
    const page = await (await drawing(20, 20)).png().toBuffer();
    const tif = await sharp([page, page, page], { join: { animated: true } })
      .tiff()
      .toBuffer();
    await expectInputError(
      () => openInput(u8(tif), 'image/tiff', { maxPages: 2 }),
      'too_many_pages',
    );
  });

  it('PDF bad-input classes arrive through openInput too', async () => {
    await expectInputError(
      () => openInput(buildPdf({ userPassword: 'pw' }), 'application/pdf'),
      'encrypted_pdf',
    );
    await expectInputError(() => openInput(buildPdf({ pages: 0 }), 'application/pdf'), 'no_pages');
    const big = await openInput(buildPdf({ widthPt: 14400, heightPt: 14400 }), 'application/pdf');
    await expectInputError(() => big.renderPage(0), 'page_too_large');
    await big.close();
  });
});
