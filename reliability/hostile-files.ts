// Hostile files (issue 7 item 3): every file here must end as a clean drawing `Failed` (or be
// refused at upload with 415), within bounded time and memory, and the service must stay up.
// The files are generated here, each aimed at one way a parser or decoder can be made to loop,
// recurse, allocate without bound or trust a lying header.
// Run: node --import tsx reliability/hostile-files.ts   (HOSTILE_TIMEOUT_S, HOSTILE_MAX_RSS_MIB;
// HOSTILE_ONLY=<text> runs only the cases whose name contains it, e.g. HOSTILE_ONLY=bomb)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeflate, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import {
  FIXTURES,
  memoryMiB,
  request,
  requestsSent,
  sleep,
  startServe,
  uploadDrawing,
} from './lib';

const TIMEOUT_S = Number(process.env.HOSTILE_TIMEOUT_S ?? 180);
const MAX_RSS_MIB = Number(process.env.HOSTILE_MAX_RSS_MIB ?? 2048);

// --- PDF builder --------------------------------------------------------------------------------

/** A PDF from object bodies (object n is bodies[n-1]) with a correct xref; root is object 1. */
function pdf(
  bodies: (string | Buffer)[],
  opts: { trailerExtra?: string; xrefOverride?: string } = {},
): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let len = parts[0]!.length;
  const offsets: number[] = [];
  bodies.forEach((b, i) => {
    offsets.push(len);
    const head = Buffer.from(`${i + 1} 0 obj\n`, 'latin1');
    const body = typeof b === 'string' ? Buffer.from(b, 'latin1') : b;
    const tail = Buffer.from('\nendobj\n', 'latin1');
    parts.push(head, body, tail);
    len += head.length + body.length + tail.length;
  });
  const xref =
    opts.xrefOverride ??
    `xref\n0 ${bodies.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(
    Buffer.from(
      `${xref}trailer\n<< /Size ${bodies.length + 1} /Root 1 0 R ${opts.trailerExtra ?? ''}>>\nstartxref\n${len}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(parts);
}

const stream = (dict: string, data: Buffer) =>
  Buffer.concat([
    Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'),
    data,
    Buffer.from('\nendstream', 'latin1'),
  ]);
const page = (extra = '', box = '[0 0 612 792]') =>
  `<< /Type /Page /Parent 2 0 R /MediaBox ${box} ${extra}>>`;

/** Deflates `total` bytes of `fill` without holding them in memory. */
async function deflateOf(total: number, fill: number): Promise<Buffer> {
  const z = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => z.on('end', r));
  const chunk = Buffer.alloc(1 << 20, fill);
  for (let sent = 0; sent < total; sent += chunk.length)
    if (!z.write(chunk)) await new Promise((r) => z.once('drain', r));
  z.end();
  await done;
  return Buffer.concat(out);
}

// --- PNG / JPEG / TIFF crafting -----------------------------------------------------------------

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = crcTable[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}
function pngHeader(width: number, height: number): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
  ]);
}
/** A real, fully decodable greyscale PNG of zeros: tiny on disk, width*height bytes decoded. */
async function pngBomb(width: number, height: number): Promise<Buffer> {
  const z = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  z.on('data', (c: Buffer) => out.push(c));
  const done = new Promise((r) => z.on('end', r));
  const row = Buffer.alloc(width + 1, 0);
  for (let y = 0; y < height; y++) if (!z.write(row)) await new Promise((r) => z.once('drain', r));
  z.end();
  await done;
  return Buffer.concat([
    pngHeader(width, height),
    chunk('IDAT', Buffer.concat(out)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A little-endian TIFF of `pages` 1×1 greyscale pages; `loop` points the last IFD back at the first. */
function tiffPages(
  pages: number,
  opts: { loop?: boolean; width?: number; height?: number } = {},
): Buffer {
  const entries = 8;
  const ifdSize = 2 + entries * 12 + 4;
  const pixelAt = 8;
  const firstIfd = 16;
  const buf = Buffer.alloc(firstIfd + pages * ifdSize);
  buf.write('II', 0, 'latin1');
  buf.writeUInt16LE(42, 2);
  buf.writeUInt32LE(firstIfd, 4);
  buf[pixelAt] = 0x80;
  for (let p = 0; p < pages; p++) {
    const at = firstIfd + p * ifdSize;
    buf.writeUInt16LE(entries, at);
    const tags: [number, number, number][] = [
      [256, 4, opts.width ?? 1], // ImageWidth (LONG)
      [257, 4, opts.height ?? 1], // ImageLength
      [258, 3, 8], // BitsPerSample
      [259, 3, 1], // Compression none
      [262, 3, 1], // BlackIsZero
      [273, 4, pixelAt], // StripOffsets
      [278, 4, opts.height ?? 1], // RowsPerStrip
      [279, 4, 1], // StripByteCounts
    ];
    tags.forEach(([tag, type, value], i) => {
      const e = at + 2 + i * 12;
      buf.writeUInt16LE(tag, e);
      buf.writeUInt16LE(type, e + 2);
      buf.writeUInt32LE(1, e + 4);
      if (type === 3) buf.writeUInt16LE(value, e + 8);
      else buf.writeUInt32LE(value, e + 8);
    });
    const next = p + 1 < pages ? at + ifdSize : opts.loop ? firstIfd : 0;
    buf.writeUInt32LE(next, at + 2 + entries * 12);
  }
  return buf;
}

// --- the cases ----------------------------------------------------------------------------------

interface Case {
  name: string;
  contentType: string;
  make: () => Buffer | Promise<Buffer>;
  /** What is acceptable: refused at upload (415), a Failed drawing, or also Ready (a harmless file a robust parser copes with). */
  accept: ('415' | 'Failed' | 'Ready')[];
  /** When it ends Failed, the job's problem code must be this one. */
  code?: string;
}

const minimalPages = (n: number) => {
  const kids = Array.from({ length: n }, (_, i) => `${i + 3} 0 R`).join(' ');
  return pdf([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${kids}] /Count ${n} >>`,
    ...Array.from({ length: n }, () => page()),
  ]);
};

const CASES: Case[] = [
  {
    name: 'pages tree whose Kids contains itself',
    contentType: 'application/pdf',
    accept: ['Failed'],
    make: () =>
      pdf(['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [2 0 R] /Count 1 >>']),
  },
  {
    name: "two Pages nodes that are each other's kid",
    contentType: 'application/pdf',
    accept: ['Failed'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        '<< /Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1 >>',
      ]),
  },
  {
    name: 'form XObject that draws itself (infinite recursion while rendering)',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('/Resources << /XObject << /X1 5 0 R >> >> /Contents 4 0 R'),
        stream('', Buffer.from('q /X1 Do Q')),
        stream(
          '/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /X1 5 0 R >> >>',
          Buffer.from('q 0.5 0 0 0.5 0 0 cm /X1 Do Q'),
        ),
      ]),
  },
  {
    name: 'object that is a reference to itself as the root',
    contentType: 'application/pdf',
    accept: ['Failed'],
    make: () => pdf(['1 0 R']),
  },
  {
    name: 'page box 200,000 pt square (giant raster)',
    contentType: 'application/pdf',
    accept: ['Failed'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('', '[0 0 200000 200000]'),
      ]),
  },
  // pdfjs rejects a box it cannot represent and falls back to a default page size: Ready, small.
  {
    name: 'page box 1e30 pt',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('', '[0 0 1e30 1e30]'),
      ]),
  },
  {
    name: 'page box of zero area',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('', '[0 0 0 0]'),
      ]),
  },
  {
    name: 'page box with NaN-like and negative values',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('', '[-1e9 -1e9 -5 -5]'),
      ]),
  },
  {
    name: 'arrays nested 200,000 deep',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page(`/Junk ${'['.repeat(200_000)}${']'.repeat(200_000)}`),
      ]),
  },
  // Deflate bombs: refused by the stream pre-scan (core/vision/input/pdf-stream-scan.ts) before
  // pdf.js inflates anything (before it, pdf.js inflated the 512 MiB in full: Ready, 1.8 GiB RSS).
  {
    name: 'content stream deflate bomb (512 MiB of spaces in ~0.5 MiB)',
    contentType: 'application/pdf',
    accept: ['Failed'],
    code: 'decompression_bomb',
    make: async () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('/Contents 4 0 R'),
        stream('/Filter /FlateDecode', await deflateOf(512 << 20, 0x20)),
      ]),
  },
  {
    name: 'image deflate bomb (a 100 x 100 px grey image whose data inflates to 256 MiB)',
    contentType: 'application/pdf',
    accept: ['Failed'],
    code: 'decompression_bomb',
    make: async () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('/Resources << /XObject << /Im0 5 0 R >> >> /Contents 4 0 R'),
        stream('', Buffer.from('q 612 0 0 792 0 0 cm /Im0 Do Q')),
        stream(
          '/Type /XObject /Subtype /Image /Width 100 /Height 100 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode',
          await deflateOf(256 << 20, 0),
        ),
      ]),
  },
  {
    name: 'deflate bomb behind ASCIIHexDecode with an indirect /Length (1 GiB of spaces)',
    contentType: 'application/pdf',
    accept: ['Failed'],
    code: 'decompression_bomb',
    make: async () => {
      const hex = Buffer.from(`${(await deflateOf(1 << 30, 0x20)).toString('hex')}>`, 'latin1');
      return pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
        page('/Contents 4 0 R'),
        Buffer.concat([
          Buffer.from('<< /Filter [/ASCIIHexDecode /FlateDecode] /Length 5 0 R >>\nstream\n'),
          hex,
          Buffer.from('\nendstream'),
        ]),
        String(hex.length),
      ]);
    },
  },
  {
    name: '/Count claims a billion pages (one kid)',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () =>
      pdf([
        '<< /Type /Catalog /Pages 2 0 R >>',
        '<< /Type /Pages /Kids [3 0 R] /Count 1000000000 >>',
        page(),
      ]),
  },
  {
    name: '3,000 pages (over the 2,000-page limit)',
    contentType: 'application/pdf',
    accept: ['Failed'],
    make: () => minimalPages(3000),
  },
  {
    name: 'xref and startxref pointing past the end',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () => {
      const b = pdf(
        ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', page()],
        {
          xrefOverride:
            'xref\n0 4\n0000000000 65535 f \n9999999999 00000 n \n9999999998 00000 n \n9999999997 00000 n \n',
        },
      );
      return Buffer.from(
        b.toString('latin1').replace(/startxref\n\d+/, 'startxref\n99999999999'),
        'latin1',
      );
    },
  },
  {
    name: 'no objects at all, only a header',
    contentType: 'application/pdf',
    accept: ['Failed'],
    make: () => Buffer.from('%PDF-1.7\n%%EOF\n'),
  },
  {
    name: 'a real drawing truncated to its first third',
    contentType: 'application/pdf',
    accept: ['Failed', 'Ready'],
    make: () => {
      const b = readFileSync(join(FIXTURES, '20190601_beam-proposal_5-sheets.pdf'));
      return b.subarray(0, Math.floor(b.length / 3));
    },
  },
  {
    name: 'PDF header then PNG bytes (polyglot)',
    contentType: 'application/pdf',
    accept: ['Failed'],
    make: async () =>
      Buffer.concat([
        Buffer.from('%PDF-1.4\n'),
        await sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
          .png()
          .toBuffer(),
      ]),
  },
  {
    name: 'PNG header claims 100,000 × 100,000 px, no pixel data',
    contentType: 'image/png',
    accept: ['Failed'],
    make: () =>
      Buffer.concat([
        pngHeader(100_000, 100_000),
        chunk('IDAT', deflateSync(Buffer.alloc(1000))),
        chunk('IEND', Buffer.alloc(0)),
      ]),
  },
  {
    name: 'PNG bomb: 20,000 × 20,000 px of zeros (400 MP, decodable) in a few hundred KiB',
    contentType: 'image/png',
    accept: ['Failed'],
    make: () => pngBomb(20_000, 20_000),
  },
  {
    name: 'JPEG whose frame header claims 65,500 × 65,500 px',
    contentType: 'image/jpeg',
    accept: ['Failed'],
    make: async () => {
      const j = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#888' } })
        .jpeg()
        .toBuffer();
      for (let i = 2; i < j.length - 9; i++) {
        if (j[i] === 0xff && (j[i + 1] === 0xc0 || j[i + 1] === 0xc2)) {
          j.writeUInt16BE(65500, i + 5);
          j.writeUInt16BE(65500, i + 7);
          return j;
        }
      }
      throw new Error('no SOF marker');
    },
  },
  {
    name: 'TIFF with 5,000 pages (over the page limit)',
    contentType: 'image/tiff',
    accept: ['Failed'],
    make: () => tiffPages(5000),
  },
  {
    name: 'TIFF whose page chain loops back to the first page',
    contentType: 'image/tiff',
    accept: ['Failed', 'Ready'],
    make: () => tiffPages(3, { loop: true }),
  },
  {
    name: 'TIFF page claiming 4,000,000,000 × 4,000,000,000 px',
    contentType: 'image/tiff',
    accept: ['Failed'],
    make: () => tiffPages(1, { width: 4_000_000_000, height: 4_000_000_000 }),
  },
  // Wrong magic numbers: refused at upload (contract §4: bytes checked against the declared type).
  {
    name: 'PNG bytes declared as a PDF',
    contentType: 'application/pdf',
    accept: ['415'],
    make: () =>
      sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
        .png()
        .toBuffer(),
  },
  {
    name: 'PDF bytes declared as a PNG',
    contentType: 'image/png',
    accept: ['415'],
    make: () =>
      readFileSync(join(FIXTURES, '20150115_ASK-003_exterior-west-wall-window-locations.pdf')),
  },
  {
    name: 'ZIP bytes declared as a PDF',
    contentType: 'application/pdf',
    accept: ['415'],
    make: () => Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(200, 1)]),
  },
  {
    name: 'HTML declared as a JPEG',
    contentType: 'image/jpeg',
    accept: ['415'],
    make: () => Buffer.from('<html><script>alert(1)</script></html>'),
  },
  {
    name: 'JPEG bytes declared as a TIFF',
    contentType: 'image/tiff',
    accept: ['415'],
    make: () =>
      sharp({ create: { width: 8, height: 8, channels: 3, background: '#fff' } })
        .jpeg()
        .toBuffer(),
  },
  {
    name: 'TIFF magic with a big-endian/little-endian mix-up (MM then 2A00)',
    contentType: 'image/tiff',
    accept: ['415', 'Failed'],
    make: () => Buffer.from('4d4d2a000000000800000000', 'hex'),
  },
  {
    name: 'three bytes',
    contentType: 'application/pdf',
    accept: ['415'],
    make: () => Buffer.from('%PD'),
  },
];

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'blueline-hostile-'));
  let svc = await startServe(dataDir);
  const key = svc.firstKey!;
  const project = (
    await request(svc, 'POST', '/v1/projects', { key, body: { name: 'Hostile files' } })
  ).body.id as string;
  const results: {
    name: string;
    outcome: string;
    code?: string;
    seconds: number;
    peakRssMiB: number;
    ok: boolean;
  }[] = [];
  let restarts = 0;
  const only = process.env.HOSTILE_ONLY;
  for (const c of only ? CASES.filter((k) => k.name.includes(only)) : CASES) {
    const bytes = await c.make();
    const t0 = Date.now();
    let peak = memoryMiB(svc.pid)?.rss ?? 0;
    const sampler = setInterval(() => (peak = Math.max(peak, memoryMiB(svc.pid)?.rss ?? 0)), 100);
    let outcome = 'unknown';
    let code: string | undefined;
    try {
      const up = await uploadDrawing(svc, key, project, bytes, c.name.slice(0, 60), c.contentType);
      if (up.file.status !== 201) outcome = `POST /files ${up.file.status}`;
      else if (up.put && up.put.status !== 200) {
        outcome = String(up.put.status);
        code = up.put.body?.code;
      } else if (up.drawing && up.drawing.status !== 201)
        outcome = `POST /drawings ${up.drawing.status}`;
      else {
        const jobId = up.drawing!.body.job_id as string;
        for (;;) {
          const j = await request(svc, 'GET', `/v1/jobs/${jobId}`, { key });
          if (['Completed', 'Failed', 'Canceled'].includes(j.body.status)) {
            const d = await request(svc, 'GET', `/v1/drawings/${up.drawing!.body.id}`, { key });
            outcome = d.body.status;
            code = j.body.error?.code;
            break;
          }
          if (Date.now() - t0 > TIMEOUT_S * 1000) {
            outcome = `still ${j.body.status} after ${TIMEOUT_S} s`;
            await request(svc, 'POST', `/v1/jobs/${jobId}/cancel`, { key });
            break;
          }
          await sleep(250);
        }
      }
    } catch (err) {
      outcome = `error: ${(err as Error).message}`;
    }
    clearInterval(sampler);
    // The service must still be up and answering.
    const alive = await request(svc, 'GET', '/v1/projects?limit=1', { key }).then(
      (r) => r.status === 200,
      () => false,
    );
    const seconds = Math.round((Date.now() - t0) / 100) / 10;
    const ok =
      alive &&
      (c.accept as string[]).includes(outcome) &&
      (outcome !== 'Failed' || !c.code || code === c.code) &&
      peak <= MAX_RSS_MIB;
    results.push({
      name: c.name,
      outcome: alive ? outcome : `${outcome}; SERVICE DOWN`,
      ...(code ? { code } : {}),
      seconds,
      peakRssMiB: peak,
      ok,
    });
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${c.name}: ${outcome}${code ? ` (${code})` : ''} in ${seconds} s, peak RSS ${peak} MiB (${bytes.length} bytes)`,
    );
    if (!alive) {
      // Record the crash, then carry on with a fresh process so the other cases still run.
      console.log(svc.lines.slice(-15).join('\n'));
      svc.child.kill('SIGKILL');
      await svc.exited;
      svc = await startServe(dataDir);
      restarts++;
    }
  }
  svc.child.kill('SIGTERM');
  await svc.exited;
  rmSync(dataDir, { recursive: true, force: true });
  const failed = results.filter((r) => !r.ok);
  console.log(
    `hostile-files summary ${JSON.stringify({ tried: results.length, clean: results.length - failed.length, failed: failed.map((f) => `${f.name}: ${f.outcome}`), service_restarts_needed: restarts, max_seconds: Math.max(...results.map((r) => r.seconds)), max_peak_rss_mib: Math.max(...results.map((r) => r.peakRssMiB)), requests_sent: requestsSent })}`,
  );
  if (failed.length) process.exit(1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
