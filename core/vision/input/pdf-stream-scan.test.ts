import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { createDeflate, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { InputError } from './input-errors';
import { scanPdfStreams, type PdfStreamScanLimits } from './pdf-stream-scan';

// PDFs are built here byte by byte, each aimed at one way a Flate stream can be made to inflate
// without bound; the real drawings must pass untouched.

const FIXTURES = resolve(import.meta.dirname, '../../../fixtures/drawings');
const MiB = 1 << 20;

/** A PDF from object bodies (object n is bodies[n-1]) with a correct xref; root is object 1. */
function pdf(bodies: (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let len = parts[0]!.length;
  const offsets: number[] = [];
  bodies.forEach((b, i) => {
    offsets.push(len);
    const chunk = Buffer.concat([
      Buffer.from(`${i + 1} 0 obj\n`, 'latin1'),
      typeof b === 'string' ? Buffer.from(b, 'latin1') : b,
      Buffer.from('\nendobj\n', 'latin1'),
    ]);
    parts.push(chunk);
    len += chunk.length;
  });
  const xref = `xref\n0 ${bodies.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(
    Buffer.from(
      `${xref}trailer\n<< /Size ${bodies.length + 1} /Root 1 0 R >>\nstartxref\n${len}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(parts);
}

/** A stream object body; `length` overrides /Length (a string such as "5 0 R", or null for none). */
const stream = (dict: string, data: Buffer, length: string | null = String(data.length)) =>
  Buffer.concat([
    Buffer.from(`<< ${dict}${length === null ? '' : ` /Length ${length}`} >>\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream', 'latin1'),
  ]);

const HEAD = ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>'];
const page = (extra: string) => `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] ${extra} >>`;

/** Deflates `total` bytes of `fill` without holding them in memory. */
async function deflateOf(total: number, fill = 0x20): Promise<Buffer> {
  const z = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => z.on('end', r));
  const chunk = Buffer.alloc(MiB, fill);
  for (let sent = 0; sent < total; sent += chunk.length)
    if (!z.write(chunk.subarray(0, Math.min(chunk.length, total - sent))))
      await new Promise((r) => z.once('drain', r));
  z.end();
  await done;
  return Buffer.concat(out);
}

async function refusal(bytes: Uint8Array, limits?: PdfStreamScanLimits): Promise<InputError> {
  const err = await scanPdfStreams(bytes, limits).then(
    (r) => new Error(`not refused: ${JSON.stringify(r)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InputError);
  expect((err as InputError).code).toBe('decompression_bomb');
  return err as InputError;
}

const SMALL: PdfStreamScanLimits = { maxStreamBytes: 8 * MiB, maxTotalBytes: 32 * MiB };

describe('scanPdfStreams: content streams', () => {
  it('refuses a 512 MiB content-stream bomb with the default limits, quickly and without holding the output', async () => {
    const bomb = pdf([
      ...HEAD,
      page('/Contents 4 0 R'),
      stream('/Filter /FlateDecode', await deflateOf(512 * MiB)),
    ]);
    expect(bomb.length).toBeLessThan(MiB); // ~0.5 MiB on disk
    const rssBefore = process.resourceUsage().maxRSS; // KiB, peak so far
    const t0 = performance.now();
    const err = await refusal(bomb);
    const ms = performance.now() - t0;
    const peakGrowthMiB = (process.resourceUsage().maxRSS - rssBefore) / 1024;
    console.log(
      `512 MiB bomb refused in ${ms.toFixed(0)} ms, peak RSS growth ${peakGrowthMiB.toFixed(0)} MiB`,
    );
    // Stops at the 300 MB per-stream cap (one byte per pixel of the 300 MP page limit).
    expect(err.detail).toContain(
      'object 4 inflates to more than 286.1 MiB, the limit for one stream (one byte per pixel of the 300.0 MP page limit)',
    );
    // Generous bounds for a loaded 2-core machine; inflating 300 MB takes ~0.5 s here.
    expect(ms).toBeLessThan(15_000);
    expect(peakGrowthMiB).toBeLessThan(128);
  }, 60_000);

  it('derives the per-stream cap from the configured pixel limit', async () => {
    const bytes = pdf([
      ...HEAD,
      page('/Contents 4 0 R'),
      stream('/Filter /FlateDecode', await deflateOf(24 * MiB)),
    ]);
    // 20 MP page limit: streams may inflate to 20 MB; 24 MiB is over.
    const err = await refusal(bytes, { maxPixels: 20_000_000 });
    expect(err.detail).toContain('object 4');
    expect(err.detail).toContain('19.1 MiB, the limit for one stream');
    expect(err.detail).toContain('20.0 MP page limit');
    // 30 MP: the same file passes, and the report counts what it inflated.
    const ok = await scanPdfStreams(bytes, { maxPixels: 30_000_000 });
    expect(ok).toMatchObject({ streams: 1, inflated: 1, inflatedBytes: 24 * MiB });
    expect(ok.largest).toEqual({ object: 4, bytes: 24 * MiB });
  });

  it('follows an indirect /Length, and finds the data without any /Length', async () => {
    const data = await deflateOf(16 * MiB);
    const indirect = pdf([
      ...HEAD,
      page('/Contents 4 0 R'),
      stream('/Filter /FlateDecode', data, '5 0 R'),
      String(data.length),
    ]);
    expect((await refusal(indirect, SMALL)).detail).toContain('object 4');
    const missing = pdf([
      ...HEAD,
      page('/Contents 4 0 R'),
      stream('/Filter /FlateDecode', data, null),
    ]);
    expect((await refusal(missing, SMALL)).detail).toContain('object 4');
    // A /Length that lies (too short, not landing on endstream) falls back to the search too.
    const lying = pdf([
      ...HEAD,
      page('/Contents 4 0 R'),
      stream('/Filter /FlateDecode', data, '10'),
    ]);
    expect((await refusal(lying, SMALL)).detail).toContain('object 4');
  });

  it('undoes ASCIIHex / ASCII85 before Flate, and does not inflate behind LZW or DCT', async () => {
    const data = await deflateOf(16 * MiB);
    const hex = Buffer.from(data.toString('hex') + '>', 'latin1');
    const hexBomb = pdf([
      ...HEAD,
      page('/Contents 4 0 R'),
      stream('/Filter [/ASCIIHexDecode /FlateDecode]', hex),
    ]);
    expect((await refusal(hexBomb, SMALL)).detail).toContain('object 4');
    const a85Bomb = pdf([
      ...HEAD,
      page('/Contents 4 0 R'),
      stream('/Filter [/A85 /Fl]', Buffer.from(ascii85(data) + '~>', 'latin1')),
    ]);
    expect((await refusal(a85Bomb, SMALL)).detail).toContain('object 4');
    // A JPEG (DCT) stream is bounded by its image size when decoded; the scan leaves it alone.
    const dct = pdf([
      ...HEAD,
      page(''),
      stream(
        '/Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode',
        data,
      ),
    ]);
    await expect(scanPdfStreams(dct, SMALL)).resolves.toMatchObject({ streams: 1, inflated: 0 });
  });

  it('refuses when the file total crosses its cap though every stream is under the per-stream cap', async () => {
    const data = await deflateOf(6 * MiB);
    const many = Array.from({ length: 6 }, () => stream('/Filter /FlateDecode', data));
    const bytes = pdf([...HEAD, page('/Contents [4 0 R 5 0 R 6 0 R 7 0 R 8 0 R 9 0 R]'), ...many]);
    const err = await refusal(bytes, SMALL);
    expect(err.detail).toContain('inflate to more than 32.0 MiB in total');
    expect(err.detail).toContain('crossed at object 9');
    await expect(
      scanPdfStreams(bytes, { ...SMALL, maxTotalBytes: 40 * MiB }),
    ).resolves.toMatchObject({
      inflated: 6,
      inflatedBytes: 36 * MiB,
    });
  });

  it('does not let a `stream` keyword inside a string hide the stream after it', async () => {
    const data = await deflateOf(16 * MiB);
    const bytes = pdf([
      ...HEAD,
      page('/Contents 5 0 R'),
      '<< /Title (a decoy: stream\n) >>',
      stream('/Filter /FlateDecode', data),
    ]);
    expect((await refusal(bytes, SMALL)).detail).toContain('object 5');
  });
});

describe('scanPdfStreams: image XObjects', () => {
  const img = (w: number, h: number, extra = '/ColorSpace /DeviceGray /BitsPerComponent 8') =>
    `/Type /XObject /Subtype /Image /Width ${w} /Height ${h} ${extra} /Filter /FlateDecode`;

  it('refuses an image whose data inflates beyond its pixels, naming the object and the bound', async () => {
    // 100 x 100 grey needs 10,000 bytes; this one inflates to 4 MiB (still far under the stream cap).
    const bytes = pdf([
      ...HEAD,
      page('/Resources << /XObject << /Im0 4 0 R >> >>'),
      stream(img(100, 100), await deflateOf(4 * MiB, 0)),
    ]);
    const err = await refusal(bytes);
    expect(err.detail).toMatch(
      /object 4 \(an image of 100 x 100 px, 1 x 8 bit\) inflates to more than 76\d{3} bytes, though its pixels need at most 10000 bytes/,
    );
  });

  it('passes images whose data fits their size: grey, RGB with a PNG predictor, a 1-bit mask, ICC by reference', async () => {
    const grey = Buffer.alloc(300 * 200, 7);
    const rgbRows = Buffer.alloc(50 * (1 + 40 * 3), 1); // PNG predictors add one tag byte per row
    const mask = Buffer.alloc(Math.ceil(33 / 8) * 20, 0xff);
    const cmyk = Buffer.alloc(10 * 10 * 4, 9);
    const bytes = pdf([
      ...HEAD,
      page('/Resources << /XObject << /A 4 0 R /B 5 0 R /C 6 0 R /D 7 0 R >> >>'),
      stream(img(300, 200), deflateSync(grey)),
      stream(
        `${img(40, 50, '/ColorSpace /DeviceRGB /BitsPerComponent 8')} /DecodeParms << /Predictor 15 /Colors 3 /Columns 40 >>`,
        deflateSync(rgbRows),
      ),
      stream(img(33, 20, '/ImageMask true'), deflateSync(mask)),
      stream(img(10, 10, '/ColorSpace [/ICCBased 8 0 R] /BitsPerComponent 8'), deflateSync(cmyk)),
      stream('/N 4 /Filter /FlateDecode', deflateSync(Buffer.alloc(3000, 1))),
    ]);
    const r = await scanPdfStreams(bytes);
    expect(r).toMatchObject({ streams: 5, inflated: 5 });
    expect(r.inflatedBytes).toBe(grey.length + rgbRows.length + mask.length + cmyk.length + 3000);
  });

  it('uses the ICC profile /N: an RGB-sized payload under a 1-component profile is refused', async () => {
    const bytes = pdf([
      ...HEAD,
      page(''),
      stream(
        img(512, 512, '/ColorSpace [/ICCBased 5 0 R] /BitsPerComponent 8'),
        deflateSync(Buffer.alloc(512 * 512 * 3)),
      ),
      stream('/N 1 /Filter /FlateDecode', deflateSync(Buffer.alloc(3000, 1))),
    ]);
    expect((await refusal(bytes)).detail).toContain(
      'object 4 (an image of 512 x 512 px, 1 x 8 bit)',
    );
  });

  it('applies only the per-stream cap when Flate is not the last filter (its output is not samples)', async () => {
    const data = deflateSync(Buffer.alloc(2 * MiB, 3));
    const bytes = pdf([
      ...HEAD,
      page(''),
      stream(img(10, 10).replace('/FlateDecode', '[/FlateDecode /DCTDecode]'), data),
    ]);
    await expect(scanPdfStreams(bytes)).resolves.toMatchObject({
      inflated: 1,
      inflatedBytes: 2 * MiB,
    });
  });
});

describe('scanPdfStreams: damaged files are left to the renderer', () => {
  it('never throws on corrupt or truncated zlib data, and still counts what inflates before the damage', async () => {
    const good = await deflateOf(16 * MiB);
    const corrupt = Buffer.concat([Buffer.from([0x78, 0x9c]), Buffer.alloc(4000, 0xff)]);
    const cut = good.subarray(0, Math.floor(good.length / 4));
    const ok = pdf([
      ...HEAD,
      page('/Contents [4 0 R 5 0 R]'),
      stream('/Filter /FlateDecode', corrupt),
      stream('/Filter /FlateDecode', Buffer.from('not zlib at all')),
      stream('/Filter /FlateDecode', deflateSync(Buffer.alloc(5000)).subarray(0, 20)),
    ]);
    await expect(scanPdfStreams(ok)).resolves.toMatchObject({ streams: 3 });
    // A bomb does not become harmless by being cut short: a quarter of it is still 4 MiB > 2 MiB.
    const cutBomb = pdf([...HEAD, page('/Contents 4 0 R'), stream('/Filter /FlateDecode', cut)]);
    expect((await refusal(cutBomb, { maxStreamBytes: 2 * MiB })).detail).toContain('object 4');
    // The whole file cut in the middle of the stream (no endstream, no xref).
    const whole = pdf([...HEAD, page('/Contents 4 0 R'), stream('/Filter /FlateDecode', good)]);
    const truncated = whole.subarray(0, whole.indexOf('stream\n') + 7 + cut.length);
    expect((await refusal(truncated, { maxStreamBytes: 2 * MiB })).detail).toContain('object 4');
    // Garbage and a dictionary nested far too deep are not errors of the scan.
    await expect(
      scanPdfStreams(Buffer.from('%PDF-1.4\n1 0 obj\n' + '<<'.repeat(100_000))),
    ).resolves.toMatchObject({ streams: 0 });
    await expect(scanPdfStreams(new Uint8Array(0))).resolves.toMatchObject({ streams: 0 });
  });
});

describe('scanPdfStreams: the scan itself stays linear', () => {
  it('copes in little time with megabytes of `stream` keywords, objects without endstream and unparsable dictionaries', async () => {
    const junk = Buffer.from('stream\n'.repeat(600_000), 'latin1'); // 4 MiB of keywords
    const noEnd = Array.from(
      { length: 30_000 },
      (_, i) => `${i + 10} 0 obj\n<< /Length 99999999 >>\nstream\nxx\n`,
    ).join('');
    const bytes = Buffer.concat([
      Buffer.from(
        '%PDF-1.7\n1 0 obj\n<< /Filter /FlateDecode /Broken (unclosed >>\nstream\n',
        'latin1',
      ),
      junk,
      Buffer.from(
        'endstream\nendobj\n2 0 obj\n<< /Filter /FlateDecode /Length 10 >>\nstream\n',
        'latin1',
      ),
      junk,
      Buffer.from(`endstream\nendobj\n${noEnd}`, 'latin1'),
    ]);
    const t0 = performance.now();
    const r = await scanPdfStreams(bytes);
    const ms = performance.now() - t0;
    console.log(
      `${(bytes.length / MiB).toFixed(1)} MiB of hostile structure scanned in ${ms.toFixed(0)} ms`,
    );
    // Object 1 (its dictionary does not parse here), object 2 and the 30,000 without endstream.
    expect(r.streams).toBe(1 + 1 + 30_000);
    expect(r.inflated).toBe(1); // object 2's data (not zlib: inflates to nothing)
    expect(ms).toBeLessThan(5_000);
  }, 30_000);
});

describe('scanPdfStreams: real drawings', () => {
  it('passes every fixture with the default limits, in little time next to rendering', async () => {
    const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.pdf'));
    expect(files.length).toBeGreaterThanOrEqual(20);
    const lines: string[] = [];
    let ms = 0;
    for (const f of files) {
      const bytes = new Uint8Array(readFileSync(resolve(FIXTURES, f)));
      const r = await scanPdfStreams(bytes);
      expect(r.streams, f).toBeGreaterThan(0);
      expect(r.inflated, f).toBeGreaterThan(0);
      ms += r.ms;
      lines.push(
        `${f}: ${r.streams} streams, ${r.inflated} inflated to ${(r.inflatedBytes / MiB).toFixed(1)} MiB in ${r.ms} ms`,
      );
    }
    console.log(`${lines.join('\n')}\nall fixtures: ${ms.toFixed(0)} ms`);
    // Rendering these 20 files takes minutes; the scan of all of them a few seconds at most.
    expect(ms).toBeLessThan(20_000);
  }, 60_000);
});

function ascii85(b: Buffer): string {
  let out = '';
  for (let i = 0; i < b.length; i += 4) {
    const n = Math.min(4, b.length - i);
    let v = 0;
    for (let k = 0; k < 4; k++) v = v * 256 + (k < n ? b[i + k]! : 0);
    if (n === 4 && v === 0) {
      out += 'z';
      continue;
    }
    const digits: string[] = [];
    for (let k = 0; k < 5; k++) {
      digits.unshift(String.fromCharCode((v % 85) + 33));
      v = Math.floor(v / 85);
    }
    out += digits.slice(0, n + 1).join('');
  }
  return out;
}
