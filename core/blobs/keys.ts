import { type IdKind, idKind } from '../domain/ids';
import { assertValidKey } from './object-store';

// The ONE module that names objects (architecture habit 6). Everything of a project lives under
// `projects/<prj>/`, so deleting a project is one `deletePrefix(projectPrefix(prj))`; a drawing's
// sheet images, tiles and block crops live under its `drawingPrefix`, an overlay's images under
// its `overlayPrefix`.
//
//   projects/<prj>/files/<inverted ms>.<inverted id>z.<fil>              file bytes
//   projects/<prj>/drawings/<drw>/sheets/<sht>/image.<ext>               full sheet raster
//   projects/<prj>/drawings/<drw>/sheets/<sht>/thumbnail.<ext>
//   projects/<prj>/drawings/<drw>/sheets/<sht>/linework.png                 line work (PDF sheets)
//   projects/<prj>/drawings/<drw>/sheets/<sht>/tiles/<z>/<x>_<y>.<ext>   tile pyramid
//   projects/<prj>/drawings/<drw>/sheets/<sht>/blocks/<blk>.<ext>        block crop
//   projects/<prj>/overlays/<ovl>/<variant>.<ext>                        overlay images
//
// File keys sort NEWEST FIRST: GET /files pages over the object store's continuation tokens in
// ascending key order, and the contract orders lists by created_at descending, then id descending.
// So the key starts with the creation time subtracted from 10^13 - 1 ms (zero-padded, good until
// the year 2286), then the id with every character mirrored in its alphabet and a terminator that
// sorts after every mirrored character (so a shorter id sorts as the smaller one, i.e. after, as
// in a descending comparison), then the plain id for readability and parsing.

export type ImageExt = 'png' | 'webp' | 'jpg';
const IMAGE_EXTS: readonly ImageExt[] = ['png', 'webp', 'jpg'];

export type OverlayVariant =
  'combined' | 'addition' | 'deletion' | 'aligned-b' | `combined-${string}`;

const MAX_MS = 9_999_999_999_999; // 13 digits
const ISO_MS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// Id characters in ascending order, and the characters that mirror them (also ascending; no '.',
// which could form '..'). MIRROR_END sorts after all of MIRROR.
const ID_CHARS = '0123456789abcdefghijklmnopqrstuvwxyz';
const MIRROR = '0123456789_abcdefghijklmnopqrstuvwxy';
const MIRROR_END = 'z';
const PALETTE_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;

// --- builders -----------------------------------------------------------------------------------

export function projectPrefix(projectId: string): string {
  return `projects/${id('project', projectId, 'projectId')}/`;
}

export function filesPrefix(projectId: string): string {
  return `${projectPrefix(projectId)}files/`;
}

/** Key of a file's bytes. `createdAtIso` is the File's created_at (RFC 3339 UTC with milliseconds). */
export function fileKey(projectId: string, createdAtIso: string, fileId: string): string {
  const ms = parseIsoMs(createdAtIso);
  // A ULID mirrors as its lowercase form: both alphabets order digits before letters.
  const remainder = id('file', fileId, 'fileId').slice(4);
  const inverted = String(MAX_MS - ms).padStart(13, '0');
  return checked(
    `${filesPrefix(projectId)}${inverted}.${mirror(remainder)}${MIRROR_END}.fil_${remainder}`,
  );
}

export function drawingPrefix(projectId: string, drawingId: string): string {
  return `${projectPrefix(projectId)}drawings/${id('drawing', drawingId, 'drawingId')}/`;
}

export function sheetPrefix(projectId: string, drawingId: string, sheetId: string): string {
  return `${drawingPrefix(projectId, drawingId)}sheets/${id('sheet', sheetId, 'sheetId')}/`;
}

export function sheetImageKey(
  projectId: string,
  drawingId: string,
  sheetId: string,
  ext: ImageExt = 'png',
): string {
  return checked(`${sheetPrefix(projectId, drawingId, sheetId)}image.${imageExt(ext)}`);
}

/**
 * A PDF sheet's line work drawn from its objects (1-bit PNG, the sheet's size; see ingest-page.ts
 * lineWorkPng). Only sheets whose page has line-work objects have one; it lives and goes with its sheet.
 */
export function sheetLineWorkKey(projectId: string, drawingId: string, sheetId: string): string {
  return checked(`${sheetPrefix(projectId, drawingId, sheetId)}linework.png`);
}

export function sheetThumbnailKey(
  projectId: string,
  drawingId: string,
  sheetId: string,
  ext: ImageExt = 'webp',
): string {
  return checked(`${sheetPrefix(projectId, drawingId, sheetId)}thumbnail.${imageExt(ext)}`);
}

/** Prefix of a sheet's whole tile pyramid (delete it before regenerating tiles). */
export function sheetTilesPrefix(projectId: string, drawingId: string, sheetId: string): string {
  return `${sheetPrefix(projectId, drawingId, sheetId)}tiles/`;
}

/** One tile: level `z` (0 = the coarsest), column `x`, row `y`, counted from the top-left tile. */
export function sheetTileKey(
  projectId: string,
  drawingId: string,
  sheetId: string,
  tile: { z: number; x: number; y: number },
  ext: ImageExt = 'webp',
): string {
  const z = nonNegInt(tile.z, 'z', 30);
  const x = nonNegInt(tile.x, 'x');
  const y = nonNegInt(tile.y, 'y');
  return checked(
    `${sheetTilesPrefix(projectId, drawingId, sheetId)}${z}/${x}_${y}.${imageExt(ext)}`,
  );
}

export function blockCropKey(
  projectId: string,
  drawingId: string,
  sheetId: string,
  blockId: string,
  ext: ImageExt = 'png',
): string {
  return checked(
    `${sheetPrefix(projectId, drawingId, sheetId)}blocks/${id('block', blockId, 'blockId')}.${imageExt(ext)}`,
  );
}

export function overlayPrefix(projectId: string, overlayId: string): string {
  return `${projectPrefix(projectId)}overlays/${id('overlay', overlayId, 'overlayId')}/`;
}

/** `variant`: 'combined' (default palette), `combined-<palette>`, 'addition', 'deletion', 'aligned-b'. */
export function overlayImageKey(
  projectId: string,
  overlayId: string,
  variant: OverlayVariant,
  ext: ImageExt = 'png',
): string {
  return checked(
    `${overlayPrefix(projectId, overlayId)}${overlayVariant(variant)}.${imageExt(ext)}`,
  );
}

// --- parsers ------------------------------------------------------------------------------------

export type ParsedKey =
  | { kind: 'file'; projectId: string; fileId: string; createdAt: string }
  | {
      kind: 'sheet-image' | 'sheet-thumbnail';
      projectId: string;
      drawingId: string;
      sheetId: string;
      ext: ImageExt;
    }
  | {
      kind: 'sheet-tile';
      projectId: string;
      drawingId: string;
      sheetId: string;
      z: number;
      x: number;
      y: number;
      ext: ImageExt;
    }
  | {
      kind: 'block-crop';
      projectId: string;
      drawingId: string;
      sheetId: string;
      blockId: string;
      ext: ImageExt;
    }
  | {
      kind: 'overlay-image';
      projectId: string;
      overlayId: string;
      variant: OverlayVariant;
      ext: ImageExt;
    };

/**
 * What a key names, or null for a key this module did not build. Only keys that the matching
 * builder reproduces exactly are accepted, so a parse never yields ids a builder would reject.
 */
export function parseObjectKey(key: string): ParsedKey | null {
  const parsed = parseLoose(key);
  if (parsed === null) return null;
  try {
    return rebuild(parsed) === key ? parsed : null;
  } catch {
    return null;
  }
}

/** Ids and creation time of a file key (e.g. one returned by listing `filesPrefix`), or null. */
export function parseFileKey(
  key: string,
): { projectId: string; fileId: string; createdAt: string } | null {
  const p = parseObjectKey(key);
  return p?.kind === 'file'
    ? { projectId: p.projectId, fileId: p.fileId, createdAt: p.createdAt }
    : null;
}

function parseLoose(key: string): ParsedKey | null {
  const s = key.split('/');
  if (s[0] !== 'projects' || s.length < 4) return null;
  const projectId = idFromKeySegment(s[1]!);
  if (s[2] === 'files' && s.length === 4) {
    const m = /^(\d{13})\.([0-9a-y_]+)z\.(fil_[0-9a-z]+)$/.exec(s[3]!);
    if (!m) return null;
    const ms = MAX_MS - Number(m[1]);
    return {
      kind: 'file',
      projectId,
      fileId: idFromKeySegment(m[3]!),
      createdAt: new Date(ms).toISOString(),
    };
  }
  if (s[2] === 'overlays' && s.length === 5) {
    const m = /^(.+)\.(png|webp|jpg)$/.exec(s[4]!);
    if (!m) return null;
    return {
      kind: 'overlay-image',
      projectId,
      overlayId: idFromKeySegment(s[3]!),
      variant: m[1] as OverlayVariant,
      ext: m[2] as ImageExt,
    };
  }
  if (s[2] !== 'drawings' || s[4] !== 'sheets' || s.length < 7) return null;
  const base = {
    projectId,
    drawingId: idFromKeySegment(s[3]!),
    sheetId: idFromKeySegment(s[5]!),
  };
  const rest = s.slice(6);
  let m: RegExpExecArray | null;
  if (rest.length === 1 && (m = /^(image|thumbnail)\.(png|webp|jpg)$/.exec(rest[0]!)))
    return {
      kind: m[1] === 'image' ? 'sheet-image' : 'sheet-thumbnail',
      ...base,
      ext: m[2] as ImageExt,
    };
  if (rest.length === 2 && rest[0] === 'blocks' && (m = /^(.+)\.(png|webp|jpg)$/.exec(rest[1]!)))
    return { kind: 'block-crop', ...base, blockId: idFromKeySegment(m[1]!), ext: m[2] as ImageExt };
  if (
    rest.length === 3 &&
    rest[0] === 'tiles' &&
    /^\d{1,2}$/.test(rest[1]!) &&
    (m = /^(\d{1,15})_(\d{1,15})\.(png|webp|jpg)$/.exec(rest[2]!))
  )
    return {
      kind: 'sheet-tile',
      ...base,
      z: Number(rest[1]),
      x: Number(m[1]),
      y: Number(m[2]),
      ext: m[3] as ImageExt,
    };
  return null;
}

function rebuild(p: ParsedKey): string {
  switch (p.kind) {
    case 'file':
      return fileKey(p.projectId, p.createdAt, p.fileId);
    case 'sheet-image':
      return sheetImageKey(p.projectId, p.drawingId, p.sheetId, p.ext);
    case 'sheet-thumbnail':
      return sheetThumbnailKey(p.projectId, p.drawingId, p.sheetId, p.ext);
    case 'sheet-tile':
      return sheetTileKey(p.projectId, p.drawingId, p.sheetId, p, p.ext);
    case 'block-crop':
      return blockCropKey(p.projectId, p.drawingId, p.sheetId, p.blockId, p.ext);
    case 'overlay-image':
      return overlayImageKey(p.projectId, p.overlayId, p.variant, p.ext);
  }
}

// --- validation ---------------------------------------------------------------------------------

/** The id as it appears in a key (lowercase: see `idFromKeySegment`), after checking its kind. */
function id(kind: IdKind, value: string, name: string): string {
  if (typeof value !== 'string' || idKind(value) !== kind)
    throw new TypeError(
      `Expected a ${kind} id for ${name} but received '${String(value).slice(0, 80)}'.`,
    );
  return value.toLowerCase();
}

/**
 * The id a key segment names. Keys are lowercase (object-store.ts: so that no two keys differ only
 * in case, which a macOS or Windows disk could not hold apart), so a ULID (26 characters, uppercase
 * in the API) is written in lowercase and read back here in uppercase; ids stored before ULIDs
 * (20 lowercase characters) are kept as they are.
 */
export function idFromKeySegment(segment: string): string {
  return segment.length === 30 && segment[3] === '_'
    ? segment.slice(0, 4) + segment.slice(4).toUpperCase()
    : segment;
}

function parseIsoMs(iso: string): number {
  const ms = typeof iso === 'string' && ISO_MS_RE.test(iso) ? Date.parse(iso) : NaN;
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_MS || new Date(ms).toISOString() !== iso)
    throw new TypeError(
      `Expected an RFC 3339 UTC timestamp with milliseconds (e.g. 2026-11-21T09:30:00.123Z) for createdAtIso but received '${String(iso).slice(0, 80)}'.`,
    );
  return ms;
}

function mirror(s: string): string {
  let out = '';
  for (const c of s) {
    const i = ID_CHARS.indexOf(c);
    if (i < 0) throw new TypeError(`Unexpected character '${c}' in an id.`);
    out += MIRROR[ID_CHARS.length - 1 - i];
  }
  return out;
}

function imageExt(ext: ImageExt): ImageExt {
  if (!IMAGE_EXTS.includes(ext))
    throw new TypeError(
      `Expected one of ${IMAGE_EXTS.join(', ')} for ext but received '${String(ext)}'.`,
    );
  return ext;
}

function overlayVariant(v: OverlayVariant): OverlayVariant {
  const ok =
    v === 'combined' ||
    v === 'addition' ||
    v === 'deletion' ||
    v === 'aligned-b' ||
    (typeof v === 'string' &&
      v.startsWith('combined-') &&
      v.length <= 48 &&
      PALETTE_RE.test(v.slice(9)));
  if (!ok)
    throw new TypeError(
      `Expected 'combined', 'combined-<palette>', 'addition', 'deletion' or 'aligned-b' for variant but received '${String(v).slice(0, 80)}'.`,
    );
  return v;
}

function nonNegInt(v: number, name: string, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isSafeInteger(v) || v < 0 || v > max)
    throw new RangeError(`Expected an integer between 0 and ${max} for ${name} but received ${v}.`);
  return v;
}

/** Builders assemble validated parts; this is the last guard that the result is a valid key. */
function checked(key: string): string {
  assertValidKey(key);
  return key;
}

/**
 * Key of deep-zoom tile (z, x, y) of any stored image (sheet, crop, overlay): stored beside the
 * image so deleting its drawing or overlay prefix removes its tiles too.
 */
export function imageTileKey(imageKey: string, z: number, x: number, y: number): string {
  for (const [name, v] of [
    ['z', z],
    ['x', x],
    ['y', y],
  ] as const) {
    if (!Number.isInteger(v) || v < 0 || v > 100_000)
      throw new RangeError(`Expected a non-negative integer for tile ${name} but received ${v}.`);
  }
  return checked(`${imageKey}.tiles/${z}/${x}/${y}.webp`);
}
