import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { SNIFF_BYTES, assertDeclaredType, sniff } from './magic';

const FIXTURES = fileURLToPath(new URL('../../fixtures/drawings/', import.meta.url));

async function tiny(format: 'png' | 'jpeg' | 'tiff'): Promise<Buffer> {
  return sharp({
    create: { width: 4, height: 3, channels: 3, background: { r: 200, g: 10, b: 10 } },
  })
    .toFormat(format)
    .toBuffer();
}

describe('sniff', () => {
  it('recognises every fixture drawing as a PDF from its first bytes', async () => {
    const pdfs = (await readdir(FIXTURES)).filter((f) => f.endsWith('.pdf'));
    expect(pdfs.length).toBeGreaterThanOrEqual(20);
    for (const f of pdfs) {
      const head = (await readFile(FIXTURES + f)).subarray(0, SNIFF_BYTES);
      expect([f, sniff(head)]).toEqual([f, 'application/pdf']);
    }
  });

  it('recognises PNG, JPEG and TIFF written by sharp', async () => {
    expect(sniff(await tiny('png'))).toBe('image/png');
    expect(sniff(await tiny('jpeg'))).toBe('image/jpeg');
    expect(sniff(await tiny('tiff'))).toBe('image/tiff');
  });

  it('recognises both TIFF byte orders and BigTIFF', () => {
    expect(sniff(Buffer.from([0x49, 0x49, 0x2a, 0x00, 8, 0, 0, 0]))).toBe('image/tiff');
    expect(sniff(Buffer.from([0x4d, 0x4d, 0x00, 0x2a, 0, 0, 0, 8]))).toBe('image/tiff');
    expect(sniff(Buffer.from([0x49, 0x49, 0x2b, 0x00, 0x08, 0x00, 0x00, 0x00]))).toBe('image/tiff');
    expect(sniff(Buffer.from([0x4d, 0x4d, 0x00, 0x2b, 0x00, 0x08, 0x00, 0x00]))).toBe('image/tiff');
    expect(sniff(Buffer.from([0x49, 0x49, 0x2b, 0x00, 0x04, 0x00, 0x00, 0x00]))).toBeNull();
    expect(sniff(Buffer.from([0x49, 0x49, 0x2c, 0x00]))).toBeNull();
  });

  it('finds %PDF- after a few leading bytes but not beyond 1024 or without a version digit', () => {
    expect(sniff(Buffer.from('\ufeff\r\n%PDF-1.7\n'))).toBe('application/pdf');
    expect(sniff(Buffer.concat([Buffer.alloc(1000, 0x20), Buffer.from('%PDF-1.4')]))).toBe(
      'application/pdf',
    );
    expect(sniff(Buffer.concat([Buffer.alloc(1030, 0x20), Buffer.from('%PDF-1.4')]))).toBeNull();
    expect(sniff(Buffer.from('this text mentions %PDF-x'))).toBeNull();
  });

  it('returns null for other or too few bytes', async () => {
    expect(sniff(Buffer.alloc(0))).toBeNull();
    expect(sniff(Buffer.from([0x89, 0x50, 0x4e]))).toBeNull();
    expect(sniff(Buffer.from([0xff, 0xd8]))).toBeNull();
    expect(sniff(Buffer.from('GIF89a....'))).toBeNull();
    expect(
      sniff(
        await sharp({ create: { width: 2, height: 2, channels: 3, background: 'white' } })
          .webp()
          .toBuffer(),
      ),
    ).toBeNull();
  });
});

describe('assertDeclaredType', () => {
  it('passes matching bytes (parameters and case in the declared type ignored)', async () => {
    expect(() =>
      assertDeclaredType(
        'Image/PNG; charset=binary',
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      ),
    ).not.toThrow();
  });

  it('says what the bytes are when they differ', async () => {
    const png = await tiny('png');
    expect(() => assertDeclaredType('application/pdf', png)).toThrow(
      expect.objectContaining({
        code: 'unsupported_media_type',
        detail: expect.stringMatching(/are a PNG image.*application\/pdf/),
      }),
    );
    expect(() => assertDeclaredType('image/tiff', Buffer.from('hello'))).toThrow(
      /not a TIFF image/,
    );
    expect(() => assertDeclaredType('image/gif', Buffer.from('GIF89a'))).toThrow(/not accepted/);
  });
});
