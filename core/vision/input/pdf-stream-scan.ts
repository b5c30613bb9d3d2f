// Pre-scan of a PDF's raw bytes for compression bombs, run before the renderer parses the file
// (PDFium since issue #3; pdf.js when this scan was written, whose findings are quoted below).
//
// Why: pdf.js inflates a FlateDecode stream in full when it reads it; a 0.5 MiB stream of a
// 512 MiB content stream took a worker to 1.8 GiB RSS (reliability/README.md, finding 3). This scan
// inflates every Flate stream with its output thrown away as it is produced (never held), counts
// the bytes, and refuses the file with `decompression_bomb` before the renderer sees it when
//  - an image XObject inflates beyond what /Width x /Height x components x /BitsPerComponent
//    (+ one predictor byte per row, + slack) can hold,
//  - any single stream inflates beyond `maxStreamBytes`, or
//  - all streams together inflate beyond `maxTotalBytes`.
//
// How streams are found: a stream can never live inside an object stream (ISO 32000-1 §7.5.7), so
// every stream of the file is an `n g obj << dict >> stream … endstream` in the raw bytes, whatever
// the xref (missing, lying, or a compressed xref stream) says. The scan looks for the `stream`
// keyword, reads the dictionary of the object it belongs to, takes the data by /Length when
// /Length (direct, or an indirect reference to a plain integer object) lands on `endstream`, and
// otherwise up to the next `endstream` (or the end of a truncated file). Old versions of an object
// left by incremental updates are counted too (pdf.js would not read them; counting is the safe side).
//
// What is inflated: FlateDecode (also /Fl), when it is the first filter or follows only
// ASCIIHexDecode / ASCII85Decode (cheap to undo here, never expanding). A stream whose filters
// cannot be read (broken dictionary, /Filter as an unresolvable reference) is inflated when its data
// starts with a zlib header. Not inflated, and why that is acceptable or not covered:
//  - DCTDecode / JPXDecode / JBIG2Decode / CCITTFaxDecode alone: the renderer decodes them to the
//    image's pixel grid, so their output is bounded by the image dimensions at render time (the
//    per-page render timeout and the worker's memory limit are the backstop for a lying codestream
//    header).
//  - Flate after LZWDecode or RunLengthDecode: not undone here (LZW can expand ~2,700x); only the
//    per-stream and total caps of the other streams protect. Rare in drawings; a follow-up if seen.
//  - Inline images (BI … ID … EI inside a content stream) with their own /F /Fl: not scanned.
//  - Streams inside an encrypted PDF: their bytes are ciphertext, inflating finds no zlib header, so
//    they pass (the renderer refuses encrypted files without a password before rendering anyway).
// Truncated or corrupt zlib data is not refused here: inflation stops at the damage and the bytes
// produced so far are counted; the renderer reports the damage itself (corrupt_file / truncated_file).
//
// Cost: one pass over the file plus the inflation of every Flate stream with bounded memory (streams
// that inflate to at most 16 MiB synchronously, larger ones through a streaming inflater on libuv's
// pool that stops as soon as a limit is crossed). Figures: see the report in
// pdf-stream-scan.test.ts and reliability/README.md.

import { createInflate, inflateSync, constants as zlibConstants } from 'node:zlib';
import { DEFAULT_MAX_PIXELS, InputError, type InputLimits } from './input-errors';

export interface PdfStreamScanLimits extends InputLimits {
  /**
   * Most bytes one stream may inflate to. Default: `maxPixels` bytes (300 MB with the contract's
   * 300-megapixel page limit), i.e. one byte per pixel of the largest page raster the service will
   * render: no drawing's content stream, font or image legitimately needs more, and pdf.js holds a
   * stream's full output in memory (plus an RGBA copy for images).
   */
  maxStreamBytes?: number;
  /**
   * Most bytes all streams together may inflate to. Default: 16 x `maxStreamBytes` (4.8 GB with
   * the defaults). This bounds the scan's own time (inflate runs at ~0.5-1 GB/s here, so ≤ ~10 s),
   * while a set of scanned sheets (~80 MB of samples per 36x24 in grey sheet at 300 dpi) stays
   * well inside it.
   */
  maxTotalBytes?: number;
}

export interface PdfStreamScanReport {
  /** Streams found (every `stream` keyword with a dictionary). */
  streams: number;
  /** Streams inflated (Flate reached). */
  inflated: number;
  /** Total bytes those streams inflate to. */
  inflatedBytes: number;
  /** The stream that inflated to the most bytes: its object number (null when unknown). */
  largest: { object: number | null; bytes: number };
  /** Wall time of the scan, ms. */
  ms: number;
}

/**
 * Scans `bytes` (a whole PDF) and resolves with what it found, or rejects with an InputError
 * `decompression_bomb` whose detail names the object and the limit it crossed. Never rejects for
 * damaged files: what cannot be read is left to the renderer.
 */
export async function scanPdfStreams(
  bytes: Uint8Array,
  limits: PdfStreamScanLimits = {},
): Promise<PdfStreamScanReport> {
  const t0 = performance.now();
  const maxPixels = limits.maxPixels ?? DEFAULT_MAX_PIXELS;
  const maxStreamBytes = positive(limits.maxStreamBytes, maxPixels, 'maxStreamBytes');
  const maxTotalBytes = positive(limits.maxTotalBytes, 16 * maxStreamBytes, 'maxTotalBytes');

  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // latin1 maps each byte to one UTF-16 unit, so string offsets are byte offsets.
  const text = buf.toString('latin1');
  const objects = new ObjectIndex(text);
  const report: PdfStreamScanReport = {
    streams: 0,
    inflated: 0,
    inflatedBytes: 0,
    largest: { object: null, bytes: 0 },
    ms: 0,
  };

  for (const { owner, kw, dict, dataStart, dataEnd, firstTry } of pdfStreams(text, objects)) {
    if (firstTry) report.streams++; // one object, one stream, however many tries

    const plan = inflationPlan(text, owner.bodyStart, kw, dict, objects);
    if (!plan) continue;
    let data: Buffer = buf.subarray(dataStart, dataEnd);
    for (const pre of plan.before)
      data = pre === 'hex' ? asciiHexDecode(data) : ascii85Decode(data);
    if (plan.needsZlibHeader && !looksLikeZlib(data)) continue;

    const image = plan.rawSamples && dict ? imageBound(dict, objects) : undefined;
    const streamLimit = Math.min(maxStreamBytes, image?.limit ?? Infinity);
    const totalLeft = maxTotalBytes - report.inflatedBytes;
    // Inflate one byte past the tighter of the two limits: reaching it is the refusal.
    const stopAt = Math.min(streamLimit, totalLeft) + 1;
    const n = await inflatedSize(data, stopAt, image?.expected);
    report.inflated++;
    report.inflatedBytes += n;
    if (n > report.largest.bytes) report.largest = { object: owner.num, bytes: n };

    const what = `object ${owner.num}${image ? ` (an image of ${image.describe})` : plan.kind ? ` (${plan.kind})` : ''}`;
    if (image && n > image.limit) {
      throw bomb(
        `${what} inflates to more than ${size(image.limit)}, though its pixels need at most ${size(image.expected)}`,
      );
    }
    if (n > maxStreamBytes) {
      throw bomb(
        `${what} inflates to more than ${size(maxStreamBytes)}, the limit for one stream${limits.maxStreamBytes === undefined ? ` (one byte per pixel of the ${mpOf(maxPixels)} page limit)` : ''}`,
      );
    }
    if (report.inflatedBytes > maxTotalBytes) {
      throw bomb(
        `its compressed streams inflate to more than ${size(maxTotalBytes)} in total (the limit for one file), crossed at ${what}`,
      );
    }
  }
  report.ms = Math.round((performance.now() - t0) * 10) / 10;
  return report;
}

/** A stream of the file: its object, dictionary (when it parses here) and data. */
export interface PdfStreamAt {
  owner: { num: number; bodyStart: number };
  /** Offset of the `stream` keyword. */
  kw: number;
  dict: Dict | undefined;
  dataStart: number;
  dataEnd: number;
  /** The first `stream` keyword tried for its object (later tries lie inside a stream's data). */
  firstTry: boolean;
}

/**
 * Every stream of a PDF's raw bytes (`text`: the file as latin1), found as the header of this file
 * explains, in file order. Used by the scan and by pdf-image-index.ts.
 */
export function* pdfStreams(text: string, objects: ObjectIndex): Generator<PdfStreamAt> {
  const headers = new HeaderTracker(text);
  const endstreams = new EndstreamFinder(text);
  // Per object (by where its body starts): how many `stream` keywords were tried, and whether one
  // of them was its real stream. An object has one stream; later keywords with the same owner lie
  // inside its data. The tries cap keeps a hostile file (a dictionary that does not parse here,
  // followed by megabytes of `stream` keywords) from making the scan quadratic.
  const tried = new Map<number, { tries: number; done: boolean }>();

  let from = 0;
  for (;;) {
    const kw = findStreamKeyword(text, from);
    if (kw < 0) return;
    // Keep searching right after this keyword, not after the data: a stream's data may hide whole
    // objects that pdf.js's recovery (a broken xref) would still find, and a `stream` inside a
    // string must not make the scan jump over the real stream that follows. A `stream` found
    // inside binary data is dropped: it needs its own object header and a dictionary right before.
    from = kw + 6;
    const owner = headers.ownerOf(kw);
    if (!owner) continue; // a `stream` keyword outside any object: nothing can reference it
    const state = tried.get(owner.bodyStart) ?? { tries: 0, done: false };
    tried.set(owner.bodyStart, state);
    if (state.done || state.tries >= MAX_TRIES_PER_OBJECT) continue;
    state.tries++;
    const dict = parseDictAt(text, owner.bodyStart, kw);
    if (dict) state.done = true;
    else if (!/^\s*<</.test(text.slice(owner.bodyStart, owner.bodyStart + 64))) continue;
    let dataStart = kw + 6;
    while (text.charCodeAt(dataStart) === 0x20) dataStart++;
    if (text.charCodeAt(dataStart) === 0x0d) dataStart++;
    if (text.charCodeAt(dataStart) === 0x0a) dataStart++;
    const dataEnd = streamEnd(text, dataStart, dict, objects, endstreams);
    yield { owner, kw, dict, dataStart, dataEnd, firstTry: state.tries === 1 };
  }
}

function bomb(what: string): InputError {
  return new InputError(
    'decompression_bomb',
    `The PDF is a decompression bomb: ${what}. Re-export the drawing from its authoring tool (e.g. "Print to PDF") and upload it again.`,
  );
}

function positive(v: number | undefined, dflt: number, name: string): number {
  if (v === undefined) return dflt;
  if (!Number.isInteger(v) || v < 1)
    throw new RangeError(`Expected a positive integer for ${name} but received ${v}`);
  return v;
}

function size(n: number): string {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : `${n} bytes`;
}
function mpOf(pixels: number): string {
  return `${(pixels / 1e6).toFixed(1)} MP`;
}

// --- finding streams ------------------------------------------------------------------------------

const isWhite = (c: number) =>
  c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDelim = (c: number) =>
  c === 0x28 || // (
  c === 0x29 ||
  c === 0x3c || // <
  c === 0x3e ||
  c === 0x5b || // [
  c === 0x5d ||
  c === 0x7b || // {
  c === 0x7d ||
  c === 0x2f || // /
  c === 0x25; // %
const isRegular = (c: number) => !Number.isNaN(c) && !isWhite(c) && !isDelim(c);

/** Next `stream` keyword (not the tail of `endstream`) followed by an end of line, at or after `from`. */
function findStreamKeyword(text: string, from: number): number {
  for (let i = text.indexOf('stream', from); i >= 0; i = text.indexOf('stream', i + 6)) {
    if (isRegular(text.charCodeAt(i - 1))) continue; // endstream, or part of a longer name
    const next = text.charCodeAt(i + 6);
    if (next === 0x0a || next === 0x0d) return i;
    // pdf.js also accepts spaces before the EOL; so do we.
    if (next === 0x20 && /^ +\r?\n/.test(text.slice(i + 6, i + 40))) return i;
  }
  return -1;
}

/** Dictionaries longer than this are not real: read no further looking for their end. */
const MAX_DICT_CHARS = 1 << 20;
/** `stream` keywords tried per object before its later ones are taken as lying inside its data. */
const MAX_TRIES_PER_OBJECT = 8;

/**
 * The `n g obj` header a `stream` keyword belongs to: the last header before it, unless an `endobj`
 * came after that header. Keywords are asked for in increasing order, so every `obj` of the file
 * is looked at once (linear, whatever the file holds).
 */
class HeaderTracker {
  private pending: number;
  private last: { num: number; bodyStart: number; at: number } | undefined;
  private lastEnd = -1;
  constructor(private readonly text: string) {
    this.pending = text.indexOf('obj');
  }

  ownerOf(kw: number): { num: number; bodyStart: number } | undefined {
    const t = this.text;
    while (this.pending >= 0 && this.pending < kw) {
      const i = this.pending;
      if (t.startsWith('endobj', i - 3)) this.lastEnd = i;
      else if (!isRegular(t.charCodeAt(i + 3)) && !isRegular(t.charCodeAt(i - 1))) {
        const m = /(?<![0-9])(\d+)\s+\d+\s+$/.exec(t.slice(Math.max(0, i - 40), i));
        if (m) this.last = { num: Number(m[1]), bodyStart: i + 3, at: i };
      }
      this.pending = t.indexOf('obj', i + 3);
    }
    return this.last && this.last.at > this.lastEnd ? this.last : undefined;
  }
}

/** `endstream` searches from increasing offsets, answered from the previous search when it can. */
class EndstreamFinder {
  private from = -1;
  private at = -1;
  constructor(private readonly text: string) {}

  /** Offset of the first `endstream` at or after `from`, or -1. */
  next(from: number): number {
    // No `endstream` lies in [this.from, this.at): the previous answer still holds.
    if (this.from >= 0 && this.from <= from && (this.at >= from || this.at < 0)) return this.at;
    this.from = from;
    this.at = this.text.indexOf('endstream', from);
    return this.at;
  }
}

/** Where the stream's data ends (exclusive): by /Length when it lands on `endstream`, else by search. */
function streamEnd(
  text: string,
  dataStart: number,
  dict: Dict | undefined,
  objs: ObjectIndex,
  endstreams: EndstreamFinder,
): number {
  const declared = dict ? objs.int(dict.get('Length')) : undefined;
  if (declared !== undefined && declared >= 0 && dataStart + declared <= text.length) {
    let j = dataStart + declared;
    while (j < text.length && isWhite(text.charCodeAt(j)) && j < dataStart + declared + 4) j++;
    if (text.startsWith('endstream', j)) return dataStart + declared;
  }
  const e = endstreams.next(dataStart);
  if (e < 0) return text.length;
  let end = e;
  if (text.charCodeAt(end - 1) === 0x0a) end--;
  if (text.charCodeAt(end - 1) === 0x0d) end--;
  return Math.max(dataStart, end);
}

// --- a small reader for direct objects (dictionaries of stream objects) ---------------------------

export interface Ref {
  ref: number;
}
export interface Name {
  name: string;
}
export type Value = number | boolean | null | string | Name | Ref | Value[] | Dict;
export type Dict = Map<string, Value>;

export const isName = (v: Value | undefined): v is Name =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'name' in v;
const isRef = (v: Value | undefined): v is Ref =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Map) && 'ref' in v;
export const isDict = (v: Value | undefined): v is Dict => v instanceof Map;

/** Nesting deeper than this is hostile (or broken); a stream dictionary never needs it. */
const MAX_DEPTH = 32;

class Reader {
  i: number;
  constructor(
    readonly text: string,
    start: number,
    readonly end: number,
  ) {
    this.i = start;
  }

  private skip(): void {
    const t = this.text;
    while (this.i < this.end) {
      const c = t.charCodeAt(this.i);
      if (isWhite(c)) this.i++;
      else if (c === 0x25) {
        while (this.i < this.end && t.charCodeAt(this.i) !== 0x0a && t.charCodeAt(this.i) !== 0x0d)
          this.i++;
      } else break;
    }
  }

  /** One value, or throws on anything it does not understand. */
  value(depth = 0): Value {
    if (depth > MAX_DEPTH) throw new Error('too deep');
    this.skip();
    const t = this.text;
    if (this.i >= this.end) throw new Error('end');
    const c = t.charCodeAt(this.i);
    if (c === 0x3c && t.charCodeAt(this.i + 1) === 0x3c) {
      this.i += 2;
      const d: Dict = new Map();
      for (;;) {
        this.skip();
        if (t.startsWith('>>', this.i)) {
          this.i += 2;
          return d;
        }
        const k = this.value(depth + 1);
        if (!isName(k)) throw new Error('key');
        d.set(k.name, this.value(depth + 1));
      }
    }
    if (c === 0x5b) {
      this.i++;
      const a: Value[] = [];
      for (;;) {
        this.skip();
        if (t.charCodeAt(this.i) === 0x5d) {
          this.i++;
          return a;
        }
        a.push(this.value(depth + 1));
      }
    }
    if (c === 0x2f) {
      let j = this.i + 1;
      while (j < this.end && isRegular(t.charCodeAt(j))) j++;
      const raw = t.slice(this.i + 1, j);
      this.i = j;
      return {
        name: raw.includes('#')
          ? raw.replace(/#([0-9a-fA-F]{2})/g, (_, h: string) =>
              String.fromCharCode(parseInt(h, 16)),
            )
          : raw,
      };
    }
    if (c === 0x28) {
      // Literal string: balanced parentheses, backslash escapes. Content is irrelevant here.
      let nest = 0;
      let j = this.i;
      for (; j < this.end; j++) {
        const d = t.charCodeAt(j);
        if (d === 0x5c) j++;
        else if (d === 0x28) nest++;
        else if (d === 0x29 && --nest === 0) break;
      }
      if (j >= this.end) throw new Error('string');
      this.i = j + 1;
      return '(string)';
    }
    if (c === 0x3c) {
      let j = this.i;
      while (j < this.end && t.charCodeAt(j) !== 0x3e) j++;
      if (j >= this.end) throw new Error('hex');
      this.i = j + 1;
      return '(string)';
    }
    let j = this.i;
    while (j < this.end && isRegular(t.charCodeAt(j))) j++;
    if (j === this.i) throw new Error(`unexpected ${t[this.i]}`);
    const tok = t.slice(this.i, j);
    this.i = j;
    if (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(tok)) {
      const n = Number(tok);
      // A reference: `num gen R`.
      if (Number.isInteger(n)) {
        const save = this.i;
        const m = /^\s+(\d+)\s+R(?![^\s/<>[\]()%{}])/.exec(
          t.slice(this.i, Math.min(this.end, this.i + 24)),
        );
        if (m) {
          this.i += m[0].length;
          return { ref: n };
        }
        this.i = save;
      }
      return n;
    }
    if (tok === 'true') return true;
    if (tok === 'false') return false;
    if (tok === 'null') return null;
    return tok; // keywords such as R (handled above) or junk
  }
}

/** The dictionary between an object header and its `stream` keyword (nothing else may sit between). */
function parseDictAt(text: string, start: number, kw: number): Dict | undefined {
  try {
    const r = new Reader(text, start, Math.min(kw, start + MAX_DICT_CHARS));
    const v = r.value();
    if (!isDict(v)) return undefined;
    for (let j = r.i; j < kw; j++) if (!isWhite(text.charCodeAt(j))) return undefined;
    return v;
  } catch {
    return undefined;
  }
}

/**
 * Offsets of `n g obj` headers, built on first use (only needed for indirect /Length, /Width,
 * /ColorSpace …). The last definition of a number wins, as in an incrementally updated file.
 * Objects inside object streams are not found: their values count as unknown.
 */
export class ObjectIndex {
  private offsets: Map<number, number> | undefined;
  private readonly cache = new Map<number, Value | undefined>();
  constructor(private readonly text: string) {}

  resolve(v: Value | undefined, hops = 0): Value | undefined {
    if (!isRef(v)) return v;
    if (hops > 8) return undefined;
    if (!this.cache.has(v.ref)) {
      this.cache.set(v.ref, undefined); // guards against a reference cycle while reading
      this.cache.set(v.ref, this.read(v.ref));
    }
    return this.resolve(this.cache.get(v.ref), hops + 1);
  }

  int(v: Value | undefined): number | undefined {
    const r = this.resolve(v);
    return typeof r === 'number' && Number.isInteger(r) ? r : undefined;
  }

  private read(num: number): Value | undefined {
    if (!this.offsets) {
      this.offsets = new Map();
      const re = /(?<![0-9])(\d+)\s+\d+\s+obj(?![^\s/<>[\]()%{}])/g;
      for (let m = re.exec(this.text); m; m = re.exec(this.text))
        this.offsets.set(Number(m[1]), m.index + m[0].length);
    }
    const at = this.offsets.get(num);
    if (at === undefined) return undefined;
    try {
      return new Reader(this.text, at, Math.min(this.text.length, at + MAX_DICT_CHARS)).value();
    } catch {
      return undefined;
    }
  }
}

// --- what to inflate ------------------------------------------------------------------------------

interface Plan {
  /** Filters undone before inflating (cheap, never expanding). */
  before: ('hex' | 'a85')[];
  /** Whether Flate is the last filter, so its output is the raw samples of an image. */
  rawSamples: boolean;
  /** The filters could not be read: inflate only when the data starts like a zlib stream. */
  needsZlibHeader: boolean;
  /** For details: the stream's /Type or /Subtype when it says what it is. */
  kind: string | undefined;
}

function inflationPlan(
  text: string,
  bodyStart: number,
  kw: number,
  dict: Dict | undefined,
  objs: ObjectIndex,
): Plan | undefined {
  if (!dict) {
    // The dictionary does not parse here (pdf.js may still read it): fall back on the bytes.
    const raw = text.slice(bodyStart, Math.min(kw, bodyStart + 64 * 1024));
    return /\/(FlateDecode|Fl)\b/.test(raw)
      ? { before: [], rawSamples: false, needsZlibHeader: true, kind: undefined }
      : undefined;
  }
  const f = objs.resolve(dict.get('Filter') ?? dict.get('F'));
  const list = Array.isArray(f) ? f.map((x) => objs.resolve(x)) : f === undefined ? [] : [f];
  if (list.length === 0) return undefined;
  const names = list.map((x) => (isName(x) ? x.name : undefined));
  const flateAt = names.findIndex((n) => n === 'FlateDecode' || n === 'Fl');
  const type = objs.resolve(dict.get('Subtype')) ?? objs.resolve(dict.get('Type'));
  const kind = isName(type) ? type.name : undefined;
  if (flateAt < 0) {
    // Unreadable filter names (references we cannot resolve): try if the bytes look like zlib.
    return names.some((n) => n === undefined)
      ? { before: [], rawSamples: false, needsZlibHeader: true, kind }
      : undefined;
  }
  const before: ('hex' | 'a85')[] = [];
  for (const n of names.slice(0, flateAt)) {
    if (n === 'ASCIIHexDecode' || n === 'AHx') before.push('hex');
    else if (n === 'ASCII85Decode' || n === 'A85') before.push('a85');
    else return undefined; // LZW / RunLength / unknown first: not undone here (see header)
  }
  return { before, rawSamples: flateAt === names.length - 1, needsZlibHeader: false, kind };
}

/** Slack over an image's exact sample size: encoders pad rows or append an EOL, never much. */
const IMAGE_SLACK_FRACTION = 1 / 8;
const IMAGE_SLACK_BYTES = 64 * 1024;

/**
 * The most bytes an image XObject's Flate output may hold: rows x (ceil(W x comps x bpc / 8) + one
 * PNG-predictor tag byte when /Predictor >= 10), plus slack. undefined when the stream is not an image
 * or its size cannot be known (then only the per-stream cap applies).
 */
function imageBound(
  dict: Dict,
  objs: ObjectIndex,
): { limit: number; expected: number; describe: string } | undefined {
  const subtype = objs.resolve(dict.get('Subtype'));
  if (!isName(subtype) || subtype.name !== 'Image') return undefined;
  const w = objs.int(dict.get('Width') ?? dict.get('W'));
  const h = objs.int(dict.get('Height') ?? dict.get('H'));
  if (w === undefined || h === undefined || w < 1 || h < 1) return undefined;
  const mask = objs.resolve(dict.get('ImageMask') ?? dict.get('IM')) === true;
  let comps: number | undefined;
  let bpc: number | undefined;
  if (mask) {
    comps = 1;
    bpc = 1;
  } else {
    comps = components(objs.resolve(dict.get('ColorSpace') ?? dict.get('CS')), objs);
    // /BitsPerComponent is required for Flate images; a missing one is bounded by the largest (16).
    bpc = objs.int(dict.get('BitsPerComponent') ?? dict.get('BPC')) ?? 16;
  }
  if (comps === undefined || ![1, 2, 4, 8, 16].includes(bpc)) return undefined;
  const parms = objs.resolve(dict.get('DecodeParms') ?? dict.get('DP'));
  const lastParms = Array.isArray(parms) ? objs.resolve(parms[parms.length - 1]) : parms;
  const predictor = isDict(lastParms) ? (objs.int(lastParms.get('Predictor')) ?? 1) : 1;
  const rowBytes = Math.ceil((w * comps * bpc) / 8) + (predictor >= 10 ? 1 : 0);
  const expected = rowBytes * h;
  const limit = Math.ceil(expected * (1 + IMAGE_SLACK_FRACTION)) + IMAGE_SLACK_BYTES;
  return { limit, expected, describe: `${w} x ${h} px, ${comps} x ${bpc} bit` };
}

/** Colour components of a colour space, or undefined when it cannot be known here. */
function components(cs: Value | undefined, objs: ObjectIndex): number | undefined {
  const one = (n: string): number | undefined =>
    ({
      DeviceGray: 1,
      G: 1,
      CalGray: 1,
      Indexed: 1,
      I: 1,
      Separation: 1,
      DeviceRGB: 3,
      RGB: 3,
      CalRGB: 3,
      Lab: 3,
      DeviceCMYK: 4,
      CMYK: 4,
    })[n];
  if (isName(cs)) return one(cs.name);
  if (!Array.isArray(cs) || cs.length === 0) return undefined;
  const family = objs.resolve(cs[0]);
  if (!isName(family)) return undefined;
  if (family.name === 'ICCBased') {
    const icc = objs.resolve(cs[1]);
    const n = isDict(icc) ? objs.int(icc.get('N')) : undefined;
    return n !== undefined && n >= 1 && n <= 32 ? n : undefined;
  }
  if (family.name === 'DeviceN') {
    const names = objs.resolve(cs[1]);
    return Array.isArray(names) && names.length >= 1 && names.length <= 32
      ? names.length
      : undefined;
  }
  return one(family.name);
}

// --- decoding -------------------------------------------------------------------------------------

/** The first two bytes of a zlib stream: CM = 8 (deflate) and a header checksum divisible by 31. */
function looksLikeZlib(b: Buffer): boolean {
  return (
    b.length >= 2 && (b[0]! & 0x0f) === 8 && b[0]! >> 4 <= 7 && ((b[0]! << 8) | b[1]!) % 31 === 0
  );
}

function asciiHexDecode(b: Buffer): Buffer {
  const out = Buffer.alloc(Math.ceil(b.length / 2));
  let n = 0;
  let hi = -1;
  for (const c of b) {
    if (c === 0x3e) break; // '>' ends the data
    const v =
      c >= 0x30 && c <= 0x39
        ? c - 0x30
        : c >= 0x61 && c <= 0x66
          ? c - 87
          : c >= 0x41 && c <= 0x46
            ? c - 55
            : -1;
    if (v < 0) continue; // whitespace (and junk, as pdf.js does)
    if (hi < 0) hi = v;
    else {
      out[n++] = (hi << 4) | v;
      hi = -1;
    }
  }
  if (hi >= 0) out[n++] = hi << 4;
  return out.subarray(0, n);
}

function ascii85Decode(b: Buffer): Buffer {
  const out = Buffer.alloc(Math.ceil((b.length * 4) / 5) + 4 * b.length); // 'z' expands 1 -> 4
  let n = 0;
  const group: number[] = [];
  const flush = (count: number) => {
    let v = 0;
    for (let k = 0; k < 5; k++) v = v * 85 + (group[k] ?? 84);
    for (let k = 0; k < count - 1; k++) out[n++] = (v >>> (24 - 8 * k)) & 0xff;
  };
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === 0x7e) break; // '~>' ends the data
    if (c === 0x7a && group.length === 0) {
      out.fill(0, n, n + 4);
      n += 4;
      continue;
    }
    if (c < 0x21 || c > 0x75) continue;
    group.push(c - 0x21);
    if (group.length === 5) {
      flush(5);
      group.length = 0;
    }
  }
  if (group.length > 1) flush(group.length);
  return out.subarray(0, n);
}

/**
 * Streams with compressed data up to this size are first inflated synchronously into at most
 * SYNC_OUTPUT_BYTES; one that inflates to more goes again through the streaming inflater, which
 * holds nothing. Synchronous inflation saves the stream machinery and the round trips to libuv's
 * pool (on the scanned barber house set: 35 → 25 ms a scan, all on the critical path of ingest.open).
 */
const SYNC_INPUT_BYTES = 1024 * 1024;
const SYNC_OUTPUT_BYTES = 16 * 1024 * 1024;
const STREAM_CHUNK = 256 * 1024;

/**
 * How many bytes `data` inflates to, counting at most `stopAt` (reaching it means "too many"). Output
 * is discarded as it is produced. Damaged data counts what inflated before the damage. `expected`:
 * the size it should inflate to, when known (an image).
 */
async function inflatedSize(data: Buffer, stopAt: number, expected?: number): Promise<number> {
  const cap = Math.min(stopAt, SYNC_OUTPUT_BYTES);
  if (data.length <= SYNC_INPUT_BYTES && (expected === undefined || expected < cap)) {
    try {
      return inflateSync(data, {
        maxOutputLength: cap,
        // An image's expected size as the output chunk: one allocation instead of a chunk every
        // 16 KiB joined at the end (less garbage: a scanned set has hundreds of tiles).
        ...(expected !== undefined ? { chunkSize: Math.max(64, expected + 1) } : {}),
        // A stream cut short still yields what it holds instead of throwing.
        finishFlush: zlibConstants.Z_SYNC_FLUSH,
      }).length;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        if (cap === stopAt) return stopAt;
        // More than the synchronous cap but maybe within the limits: count it by streaming.
      }
      // Corrupt data: count what inflates before the damage with the streaming path.
    }
  }
  return new Promise((resolve) => {
    const z = createInflate({ chunkSize: STREAM_CHUNK, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    let n = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve(Math.min(n, stopAt));
    };
    z.on('data', (c: Buffer) => {
      n += c.length;
      if (n >= stopAt) {
        z.destroy();
        finish();
      }
    });
    z.on('end', finish);
    z.on('error', finish);
    z.on('close', finish);
    z.end(data);
  });
}
