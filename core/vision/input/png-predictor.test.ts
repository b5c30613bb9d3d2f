import { inflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { predictPng as filterRows, unpredictPng } from './png-predictor';
import { testImageSamples as image } from './synthetic-inputs';

/** The IDAT data of a PNG, inflated: rows of a filter-type byte and the filtered samples. */
function pngRows(png: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const len = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    if (type === 'IDAT') parts.push(png.subarray(at + 8, at + 8 + len));
    at += 12 + len;
  }
  return inflateSync(Buffer.concat(parts));
}

describe('unpredictPng', () => {
  it('undoes each filter type alone, grey and RGB', () => {
    for (const comps of [1, 3] as const) {
      const [w, h] = [37, 29];
      const px = image(w, h, comps);
      for (let type = 0; type <= 4; type++) {
        const out = Buffer.alloc(w * h * comps);
        expect(
          unpredictPng(filterRows(px, w, h, comps, type), w, h, comps, out, 0, w * comps, false),
        ).toBe(true);
        expect(out.equals(px), `comps ${comps}, filter ${type}`).toBe(true);
      }
    }
  });

  it('reads the rows of PNGs that libvips filtered adaptively (every type mixed), into a strided BGR target', async () => {
    for (const comps of [1, 3] as const) {
      const [w, h] = [131, 97];
      const px = image(w, h, comps);
      let img = sharp(px, { raw: { width: w, height: h, channels: comps } });
      if (comps === 1) img = img.toColourspace('b-w'); // else libvips writes RGB
      const png = await img.png({ adaptiveFiltering: true, compressionLevel: 1 }).toBuffer();
      const rows = pngRows(png);
      expect(png[25]).toBe(comps === 1 ? 0 : 2); // PNG colour type: grey or RGB, 8 bits
      const types = new Set(Array.from({ length: h }, (_, y) => rows[y * (w * comps + 1)]));
      expect(types.size).toBeGreaterThan(2);
      const stride = w * comps + 5; // a padded bitmap row, as PDFium allocates them
      const out = Buffer.alloc(9 + h * stride);
      expect(unpredictPng(rows, w, h, comps, out, 9, stride, true)).toBe(true);
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++)
          for (let k = 0; k < comps; k++) {
            const want = px[(y * w + x) * comps + k];
            const got = out[9 + y * stride + x * comps + (comps === 3 ? 2 - k : k)];
            if (got !== want)
              throw new Error(`comps ${comps} (${x}, ${y}) component ${k}: ${got} != ${want}`);
          }
    }
  });

  it('refuses a wrong length or an unknown filter type', () => {
    const px = image(8, 4, 3);
    const rows = filterRows(px, 8, 4, 3, 1);
    const out = Buffer.alloc(8 * 4 * 3);
    expect(unpredictPng(rows.subarray(1), 8, 4, 3, out, 0, 24, false)).toBe(false);
    rows[2 * 25] = 5;
    expect(unpredictPng(rows, 8, 4, 3, out, 0, 24, false)).toBe(false);
    expect(() => unpredictPng(filterRows(px, 8, 4, 3, 1), 8, 4, 3, out, 1, 24, false)).toThrow(
      RangeError,
    );
  });
});
