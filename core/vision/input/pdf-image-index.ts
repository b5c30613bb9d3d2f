// Which image streams of a PDF may be decoded outside PDFium (pdfium.adapter.ts, decodeImages):
// 8-bit DeviceRGB or DeviceGray images, Flate with PNG predictors, and nothing else in their
// dictionary that changes how they are drawn. Scanned drawing sets are made of such images (the fixtures' barber
// house and beam proposal sets: tiles of /Predictor 15 RGB), and undoing their predictors is the
// slowest thing PDFium does on them.
//
// PDFium's API tells a page's image object only by its data, not by its object number, so each
// eligible stream is known by its raw (still compressed) bytes: their SHA-256. When the same bytes
// back two images with different dictionaries, neither is eligible.

import { createHash } from 'node:crypto';
import { isDict, isName, ObjectIndex, pdfStreams, type Dict, type Value } from './pdf-stream-scan';

/** An image PDFium may be given decoded: its size and components (1 grey, 3 RGB). */
export interface PredictedImage {
  width: number;
  height: number;
  comps: 1 | 3;
}

/** The dictionary keys such an image may have: none of them changes its pixels. */
const ALLOWED_KEYS = new Set([
  'Type',
  'Subtype',
  'Width',
  'Height',
  'BitsPerComponent',
  'ColorSpace',
  'Filter',
  'DecodeParms',
  'Length',
  'Name',
  'Metadata',
  'StructParent',
  'ID',
]);

/** The key an image is looked up by (pdfium.adapter.ts): the SHA-256 of its raw data. */
export function rawImageKey(raw: Uint8Array): string {
  return createHash('sha256').update(raw).digest('base64');
}

/** The eligible images of a PDF, by rawImageKey. */
export function indexPredictedImages(bytes: Uint8Array): Map<string, PredictedImage> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buf.toString('latin1');
  const objects = new ObjectIndex(text);
  const found = new Map<string, PredictedImage | null>();
  for (const { dict, dataStart, dataEnd } of pdfStreams(text, objects)) {
    if (!dict || !isImage(dict, objects)) continue;
    const key = rawImageKey(buf.subarray(dataStart, dataEnd));
    const image = eligible(dict, objects);
    const seen = found.get(key);
    if (seen === undefined) found.set(key, image);
    else if (!same(seen, image)) found.set(key, null);
  }
  const out = new Map<string, PredictedImage>();
  for (const [key, image] of found) if (image) out.set(key, image);
  return out;
}

function isImage(dict: Dict, objs: ObjectIndex): boolean {
  const subtype = objs.resolve(dict.get('Subtype'));
  return isName(subtype) && subtype.name === 'Image';
}

function same(a: PredictedImage | null, b: PredictedImage | null): boolean {
  return (
    a === b || (!!a && !!b && a.width === b.width && a.height === b.height && a.comps === b.comps)
  );
}

function eligible(dict: Dict, objs: ObjectIndex): PredictedImage | null {
  for (const key of dict.keys()) if (!ALLOWED_KEYS.has(key)) return null;
  const width = objs.int(dict.get('Width'));
  const height = objs.int(dict.get('Height'));
  if (width === undefined || height === undefined || width < 1 || height < 1) return null;
  if (objs.int(dict.get('BitsPerComponent')) !== 8) return null;
  const cs = objs.resolve(dict.get('ColorSpace'));
  const comps = isName(cs) ? ({ DeviceRGB: 3, DeviceGray: 1 } as const)[cs.name] : undefined;
  if (comps === undefined) return null;
  const filter = single(objs.resolve(dict.get('Filter')), objs);
  if (!isName(filter) || filter.name !== 'FlateDecode') return null;
  const parms = single(objs.resolve(dict.get('DecodeParms')), objs);
  if (!isDict(parms)) return null;
  for (const key of parms.keys())
    if (!['Predictor', 'Colors', 'BitsPerComponent', 'Columns'].includes(key)) return null;
  const predictor = objs.int(parms.get('Predictor'));
  if (predictor === undefined || predictor < 10 || predictor > 15) return null;
  if ((objs.int(parms.get('Colors')) ?? 1) !== comps) return null;
  if ((objs.int(parms.get('BitsPerComponent')) ?? 8) !== 8) return null;
  if ((objs.int(parms.get('Columns')) ?? 1) !== width) return null;
  return { width, height, comps };
}

/** A direct value, or the one element of a one-element array. */
function single(v: Value | undefined, objs: ObjectIndex): Value | undefined {
  if (!Array.isArray(v)) return v;
  return v.length === 1 ? objs.resolve(v[0]) : undefined;
}
