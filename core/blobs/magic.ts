import { ApiError } from '../domain/errors';

// Upload type check (contract §4, File): the bytes must be of the declared content_type, judged
// by their magic number, never by the client's word or a file name.

export type SniffedType = 'application/pdf' | 'image/png' | 'image/jpeg' | 'image/tiff';

/**
 * How many leading bytes `sniff` looks at. PDF readers accept the `%PDF-` header anywhere in the
 * first 1024 bytes (some producers put a BOM, whitespace or a mail header before it).
 */
export const SNIFF_BYTES = 1024;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const PDF = Buffer.from('%PDF-', 'latin1');

/** The type the first bytes of a file announce, or null when none of the accepted ones. */
export function sniff(firstBytes: Buffer): SniffedType | null {
  const b = firstBytes;
  if (b.length >= 8 && b.subarray(0, 8).equals(PNG)) return 'image/png';
  // JPEG: SOI marker then the first marker's 0xFF (JFIF, Exif, raw, Adobe all start this way).
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg';
  if (b.length >= 4) {
    const le = b[0] === 0x49 && b[1] === 0x49; // "II": little-endian
    const be = b[0] === 0x4d && b[1] === 0x4d; // "MM": big-endian
    if (le || be) {
      const version = le ? b.readUInt16LE(2) : b.readUInt16BE(2);
      if (version === 42) return 'image/tiff';
      // BigTIFF: version 43, then offset byte size 8 and a zero word.
      if (version === 43 && b.length >= 8) {
        const size = le ? b.readUInt16LE(4) : b.readUInt16BE(4);
        const zero = le ? b.readUInt16LE(6) : b.readUInt16BE(6);
        if (size === 8 && zero === 0) return 'image/tiff';
      }
    }
  }
  const pdfAt = b.subarray(0, SNIFF_BYTES).indexOf(PDF);
  // "%PDF-1.7": a digit must follow, so a text file merely mentioning "%PDF-" late is no PDF.
  if (pdfAt >= 0 && pdfAt + 5 < b.length && isDigit(b[pdfAt + 5]!)) return 'application/pdf';
  return null;
}

const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

const NAMES: Record<SniffedType, string> = {
  'application/pdf': 'a PDF document',
  'image/png': 'a PNG image',
  'image/jpeg': 'a JPEG image',
  'image/tiff': 'a TIFF image',
};

/** The media type without parameters, lowercased: `Image/PNG; x=1` → `image/png`. */
export function essence(contentType: string): string {
  return contentType.split(';', 1)[0]!.trim().toLowerCase();
}

/**
 * Throws 415 unsupported_media_type unless `firstBytes` are of `declared`. The detail says what
 * the bytes look like, so the user can fix either the file or the declared type.
 */
export function assertDeclaredType(declared: string, firstBytes: Buffer): void {
  const want = essence(declared);
  const got = sniff(firstBytes);
  if (got === want) return;
  const wantName = (NAMES as Record<string, string>)[want];
  if (wantName === undefined)
    throw new ApiError(
      'unsupported_media_type',
      `Files of type '${want}' are not accepted; send application/pdf, image/png, image/jpeg or image/tiff.`,
    );
  throw new ApiError(
    'unsupported_media_type',
    got === null
      ? `The uploaded bytes are not ${wantName} (declared content_type ${want}): their first bytes match no accepted file type.`
      : `The uploaded bytes are ${NAMES[got]}, but the declared content_type is ${want}. Declare ${got} or upload ${wantName}.`,
  );
}
