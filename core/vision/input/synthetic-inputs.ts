// Small hand-built inputs for tests and benches: minimal PDFs (plain, zero-page, huge MediaBox,
// password-protected) and a PNG whose header lies about its size. Built byte by byte so the tests need
// no external tool and exercise exactly the case named. Not used on the production path.

import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { assemblePdf, streamObject } from './pdf-writer';
import { predictPng } from './png-predictor';

const enc = new TextEncoder();

/** PDF standard security handler padding string (ISO 32000-1, 7.6.3.3, Algorithm 2 step a). */
const PASSWORD_PAD = Uint8Array.from([
  0x28, 0xbf, 0x4e, 0x5e, 0x4e, 0x75, 0x8a, 0x41, 0x64, 0x00, 0x4e, 0x56, 0xff, 0xfa, 0x01, 0x08,
  0x2e, 0x2e, 0x00, 0xb6, 0xd0, 0x68, 0x3e, 0x80, 0x2f, 0x0c, 0xa9, 0xfe, 0x64, 0x53, 0x69, 0x7a,
]);

function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  let j = 0;
  for (let i = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 255;
    const t = s[i]!;
    s[i] = s[j]!;
    s[j] = t;
  }
  const out = new Uint8Array(data.length);
  let a = 0;
  let b = 0;
  for (let k = 0; k < data.length; k++) {
    a = (a + 1) & 255;
    b = (b + s[a]!) & 255;
    const t = s[a]!;
    s[a] = s[b]!;
    s[b] = t;
    out[k] = data[k]! ^ s[(s[a]! + s[b]!) & 255]!;
  }
  return out;
}

function md5(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function padPassword(pw: string): Uint8Array {
  const out = new Uint8Array(32);
  const b = enc.encode(pw).subarray(0, 32);
  out.set(b);
  out.set(PASSWORD_PAD.subarray(0, 32 - b.length), b.length);
  return out;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

export interface SyntheticPdfOptions {
  /** Page size in PDF points; default US Letter. */
  widthPt?: number;
  heightPt?: number;
  /** /Rotate of every page. */
  rotate?: number;
  /** /CropBox [x0 y0 x1 y1] of every page (none by default: the MediaBox is the page). */
  cropBox?: [number, number, number, number];
  /** Number of pages (0 gives a /Pages node with no kids). */
  pages?: number;
  /** Content stream of every page (PDF operators). Default: a thick diagonal and a rectangle frame. */
  content?: string;
  /** When set, encrypt with the standard security handler (RC4 40-bit, R2) and this user password. */
  userPassword?: string;
  /**
   * Document Info entries as PDF literal strings without the parentheses, e.g.
   * `{ CreationDate: "D:20110302093000-05'00'" }` (not with userPassword: Info strings would need
   * encrypting too).
   */
  info?: Record<string, string>;
}

/** A minimal, valid PDF with correct xref offsets. */
export function buildPdf(opts: SyntheticPdfOptions = {}): Uint8Array {
  const w = opts.widthPt ?? 612;
  const h = opts.heightPt ?? 792;
  const n = opts.pages ?? 1;
  const content =
    opts.content ?? `q 4 w 36 36 m ${w - 36} ${h - 36} l S 36 36 ${w - 72} ${h - 72} re S Q`;
  const fileId = md5(enc.encode(`blueline-synthetic-${w}x${h}x${n}`));

  // Encryption parameters (Algorithms 2, 3, 4 of ISO 32000-1 for R2).
  let fileKey: Uint8Array | undefined;
  let encryptDict = '';
  if (opts.userPassword !== undefined) {
    const ownerKey = md5(padPassword(`${opts.userPassword}-owner`)).subarray(0, 5);
    const O = rc4(ownerKey, padPassword(opts.userPassword));
    const P = -44; // print allowed, modify/copy not
    const pBytes = new Uint8Array(4);
    new DataView(pBytes.buffer).setInt32(0, P, true);
    fileKey = md5(padPassword(opts.userPassword), O, pBytes, fileId).subarray(0, 5);
    const U = rc4(fileKey, PASSWORD_PAD);
    encryptDict = `<< /Filter /Standard /V 1 /R 2 /Length 40 /O <${hex(O)}> /U <${hex(U)}> /P ${P} >>`;
  }
  const objectKey = (num: number) => {
    const k = new Uint8Array(fileKey!.length + 5);
    k.set(fileKey!);
    k.set([num & 255, (num >> 8) & 255, (num >> 16) & 255, 0, 0], fileKey!.length);
    return md5(k).subarray(0, Math.min(fileKey!.length + 5, 16));
  };

  // Objects: 1 catalog, 2 pages, then per page: page, content; last: encrypt dict (if any).
  const objs: (string | Uint8Array)[] = [];
  const pageNums: number[] = [];
  for (let i = 0; i < n; i++) pageNums.push(3 + 2 * i);
  objs[1] = `<< /Type /Catalog /Pages 2 0 R >>`;
  objs[2] = `<< /Type /Pages /Kids [${pageNums.map((p) => `${p} 0 R`).join(' ')}] /Count ${n} >>`;
  for (let i = 0; i < n; i++) {
    const pn = pageNums[i]!;
    objs[pn] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${w} ${h}]` +
      (opts.rotate ? ` /Rotate ${opts.rotate}` : '') +
      (opts.cropBox ? ` /CropBox [${opts.cropBox.join(' ')}]` : '') +
      ` /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> /Contents ${pn + 1} 0 R >>`;
    let data: Uint8Array = enc.encode(content);
    if (fileKey) data = rc4(objectKey(pn + 1), data);
    const head = enc.encode(`<< /Length ${data.length} >>\nstream\n`);
    const tail = enc.encode(`\nendstream`);
    const body = new Uint8Array(head.length + data.length + tail.length);
    body.set(head);
    body.set(data, head.length);
    body.set(tail, head.length + data.length);
    objs[pn + 1] = body;
  }
  const encNum = objs.length;
  if (fileKey) objs[encNum] = encryptDict;
  let infoRef = '';
  if (opts.info) {
    if (fileKey) throw new Error('buildPdf: info with userPassword is not supported');
    const entries = Object.entries(opts.info).map(
      ([k, v]) => `/${k} (${v.replace(/[\\()]/g, (c) => `\\${c}`)})`,
    );
    infoRef = ` /Info ${objs.length} 0 R`;
    objs[objs.length] = `<< ${entries.join(' ')} >>`;
  }

  return assemblePdf(
    objs,
    `/ID [<${hex(fileId)}> <${hex(fileId)}>]` +
      (fileKey ? ` /Encrypt ${encNum} 0 R` : '') +
      infoRef,
  );
}

/**
 * 8-bit samples (`comps` per pixel) of a test image with edges, gradients and noise, so that every
 * PNG filter type is worth choosing somewhere and a wrong decode shows.
 */
export function testImageSamples(width: number, height: number, comps: number, seed = 7): Buffer {
  const px = Buffer.alloc(width * height * comps);
  let r = seed;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++)
      for (let k = 0; k < comps; k++) {
        r = (r * 1103515245 + 12345) >>> 0;
        const v =
          y % 17 < 3
            ? (x * 3 + k * 40) & 255 // gradient rows
            : x % 23 < 2
              ? 0 // vertical lines
              : (r >>> 24) & (y % 5 === 0 ? 255 : 15); // noise, strong on some rows
        px[(y * width + x) * comps + k] = 255 - v;
      }
  return px;
}

/** TIFF predictor 2: each sample minus the same component of the pixel to its left. */
function tiffPredict(px: Uint8Array, width: number, comps: number): Buffer {
  const out = Buffer.alloc(px.length);
  const rb = width * comps;
  for (let i = 0; i < px.length; i++)
    out[i] = (px[i]! - (i % rb >= comps ? px[i - comps]! : 0)) & 255;
  return out;
}

export interface SyntheticImage {
  width: number;
  height: number;
  /** 1: DeviceGray, 3: DeviceRGB (unless `dict` says otherwise). */
  comps: 1 | 3;
  /**
   * PNG filter of the rows ('mixed': row y gets y mod 5); 'tiff': TIFF predictor 2; 'none': no
   * predictor. Default 'mixed'.
   */
  filter?: number | 'mixed' | 'tiff' | 'none';
  /** Extra dictionary entries (e.g. `/Decode [1 0]`); may override /ColorSpace. */
  dict?: string;
  /** Give the image a soft mask (a grey gradient). */
  smask?: boolean;
  /** Reuse the stream data of image `sameDataAs` (an index into the list). */
  sameDataAs?: number;
  seed?: number;
  /** Operators before the image's `cm` (inside its q … Q): a clip (`… re W n`), a mark (`… BDC`). */
  before?: string;
  /** Operators after its `Do` (inside its q … Q), e.g. `EMC`. */
  after?: string;
  /** Draw it turned a quarter turn (its rows along the page's y axis). */
  turned?: boolean;
}

/**
 * A one-page PDF (US Letter) drawing each image in its own cell of a grid, over a grey frame, with
 * Flate (and PNG predictors unless 'none') image XObjects as scanners and PDF printers write them.
 */
export function buildImagesPdf(
  images: SyntheticImage[],
  opts: { under?: string; over?: string } = {},
): Uint8Array {
  const objs: (string | Uint8Array)[] = [];
  objs[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objs[2] = '<< /Type /Pages /Kids [3 0 R] /Count 1 >>';
  const cols = Math.ceil(Math.sqrt(images.length));
  const cell = 540 / cols;
  const xobjects: string[] = [];
  let content = `q 0.5 g 20 20 572 752 re f Q\n${opts.under ?? ''}\n`;
  const data: Buffer[] = [];
  let next = 5;
  images.forEach((img, k) => {
    const filter = img.filter ?? 'mixed';
    const samples = testImageSamples(img.width, img.height, img.comps, img.seed ?? 7 + k);
    const raw =
      img.sameDataAs !== undefined
        ? data[img.sameDataAs]!
        : deflateSync(
            filter === 'none'
              ? samples
              : filter === 'tiff'
                ? tiffPredict(samples, img.width, img.comps)
                : predictPng(samples, img.width, img.height, img.comps, filter),
          );
    data[k] = raw;
    const parms =
      filter === 'none'
        ? ''
        : ` /DecodeParms << /Predictor ${filter === 'tiff' ? 2 : 15} /Colors ${img.comps} /BitsPerComponent 8 /Columns ${img.width} >>`;
    let smask = '';
    if (img.smask) {
      const mask = Buffer.alloc(img.width * img.height);
      for (let i = 0; i < mask.length; i++) mask[i] = (i % img.width) * 4;
      objs[next] = streamObject(
        `/Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode`,
        deflateSync(mask),
      );
      smask = ` /SMask ${next} 0 R`;
      next++;
    }
    const cs = img.comps === 3 ? '/DeviceRGB' : '/DeviceGray';
    objs[next] = streamObject(
      `/Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} /ColorSpace ${cs} /BitsPerComponent 8 /Filter /FlateDecode${parms}${smask} ${img.dict ?? ''}`,
      raw,
    );
    xobjects.push(`/Im${k} ${next} 0 R`);
    next++;
    const x = 36 + (k % cols) * cell;
    const y = 36 + Math.floor(k / cols) * cell;
    const size = (cell - 8).toFixed(2);
    const cm = img.turned
      ? `0 ${size} -${size} 0 ${(x + cell - 8).toFixed(2)} ${y.toFixed(2)}`
      : `${size} 0 0 ${size} ${x.toFixed(2)} ${y.toFixed(2)}`;
    content += `q ${img.before ?? ''} ${cm} cm /Im${k} Do ${img.after ?? ''} Q\n`;
  });
  objs[3] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << ${xobjects.join(' ')} >> >> /Contents 4 0 R >>`;
  objs[4] = streamObject('', enc.encode(content + (opts.over ?? '')));
  return assemblePdf(objs);
}

function crc32(buf: Uint8Array): number {
  let c = ~0;
  for (let i = 0; i < buf.length; i++) {
    c ^= buf[i]!;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const dv = new DataView(out.buffer);
  dv.setUint32(0, data.length);
  out.set(enc.encode(type), 4);
  out.set(data, 8);
  dv.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * A structurally valid PNG header (correct CRCs) claiming width x height 8-bit grey pixels, followed by
 * one small IDAT: the shape of a decompression bomb / lying header. Nothing in it decodes to that size.
 */
export function buildLyingPng(width: number, height: number): Uint8Array {
  const ihdr = new Uint8Array(13);
  const dv = new DataView(ihdr.buffer);
  dv.setUint32(0, width);
  dv.setUint32(4, height);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // grey
  const idat = deflateSync(Buffer.alloc(4096, 0)); // a few filter bytes and zeros
  return new Uint8Array(
    Buffer.concat([
      Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr),
      pngChunk('IDAT', idat),
      pngChunk('IEND', new Uint8Array(0)),
    ]),
  );
}

/**
 * A one-page PDF whose content stream is `inflatedBytes` of spaces deflated at level 9 (64 MiB ->
 * ~64 KiB): a flate bomb for the stream scan (object 4 is the stream).
 */
export function buildFlateBombPdf(inflatedBytes: number): Uint8Array {
  const data = deflateSync(Buffer.alloc(inflatedBytes, 0x20), { level: 9 });
  const objs = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
  ];
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n', 'latin1')];
  const offsets: number[] = [];
  let len = parts[0]!.length;
  const push = (b: Buffer) => {
    parts.push(b);
    len += b.length;
  };
  objs.forEach((o, i) => {
    offsets.push(len);
    push(Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`, 'latin1'));
  });
  offsets.push(len);
  push(
    Buffer.from(`4 0 obj\n<< /Filter /FlateDecode /Length ${data.length} >>\nstream\n`, 'latin1'),
  );
  push(data);
  push(Buffer.from('\nendstream\nendobj\n', 'latin1'));
  const xref = `xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  push(
    Buffer.from(`${xref}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${len}\n%%EOF\n`, 'latin1'),
  );
  const out = Buffer.concat(parts);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
