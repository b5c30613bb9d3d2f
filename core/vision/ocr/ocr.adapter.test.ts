import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { closeOcr, ocrPage } from './ocr.adapter';

afterAll(async () => {
  await closeOcr();
});

// A page with no text layer: text drawn as pixels (SVG → raster), read back offline.
async function pageWithText(): Promise<{ width: number; height: number; data: Uint8Array }> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="2400" height="1600">
    <rect width="100%" height="100%" fill="white"/>
    <rect x="1800" y="1100" width="560" height="460" fill="none" stroke="black" stroke-width="4"/>
    <text x="1850" y="1260" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="64" font-weight="bold">FIRST FLOOR</text>
    <text x="1850" y="1480" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="120" font-weight="bold">A-101</text>
    <line x1="100" y1="100" x2="1600" y2="1400" stroke="black" stroke-width="3"/>
  </svg>`;
  const { data, info } = await sharp(Buffer.from(svg))
    .toColourspace('b-w')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data: new Uint8Array(data) };
}

describe('offline OCR', () => {
  it('reads the words of a page without a text layer, with boxes in sheet pixels', async () => {
    const page = await pageWithText();
    const items = await ocrPage(page);
    const number = items.find((i) => i.text.replace(/[^A-Z0-9-]/g, '') === 'A-101');
    expect(number, JSON.stringify(items.map((i) => i.text))).toBeDefined();
    // The word's box lies where it was drawn (x 1850.., baseline 1480, 120 px font).
    expect(number!.x).toBeGreaterThan(1800);
    expect(number!.x).toBeLessThan(1900);
    expect(number!.y).toBeGreaterThan(1330);
    expect(number!.y + number!.height).toBeLessThan(1520);
    expect(
      items.some((i) => i.text.toUpperCase().includes('FLOOR')),
      JSON.stringify(items),
    ).toBe(true);
  }, 120_000);
});
