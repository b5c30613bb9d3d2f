// Discipline from a sheet number, and the canonical form of a sheet number used to pair sheets.
//
// US National CAD Standard (NCS) sheet identification: a discipline designator of one letter
// (level 1), optionally followed by a modifier letter (level 2, e.g. AD = architectural demolition,
// FP = fire protection, EP = electrical power), then an optional separator, a sheet-type digit and a
// sequence number: "A-101", "AD101", "S1.01". Office-specific prefixes such as "ASK" (architectural
// sketch) still start with their discipline letter, so the first letter decides.

import type { Discipline } from '../types';

const LEVEL1: Record<string, Discipline> = {
  G: 'general',
  H: 'hazardous_materials',
  V: 'survey',
  B: 'geotechnical',
  C: 'civil',
  L: 'landscape',
  S: 'structural',
  A: 'architectural',
  I: 'interiors',
  Q: 'equipment',
  F: 'fire_protection',
  P: 'plumbing',
  D: 'process',
  M: 'mechanical',
  E: 'electrical',
  W: 'distributed_energy',
  T: 'telecommunications',
  R: 'resource',
  X: 'other',
  Z: 'contractor',
  O: 'operations',
};

/**
 * Leading letters that are not a discipline designator even though their first letter is one:
 * "SK" / "SKE" are sketches and "DWG" / "NO" are labels, not S / D / N sheets.
 */
const NOT_A_DESIGNATOR = new Set([
  'SK',
  'SKT',
  'SKE',
  'SKETCH',
  'DWG',
  'NO',
  'NUM',
  'REF',
  'DET',
  'SHT',
  'SHEET',
]);

/** The longest leading run of letters of a (trimmed, upper-cased) sheet number. */
function letterPrefix(sheetNumber: string): string {
  const m = /^\s*([A-Za-z]+)/.exec(sheetNumber);
  return m?.[1]?.toUpperCase() ?? '';
}

/**
 * The NCS discipline of a sheet number ("A-101" → architectural, "FP-201" → fire_protection,
 * "S101" → structural). Returns 'unknown' when the number has no letter prefix, or a prefix that is
 * not a designator (e.g. "SK-1", "12").
 */
export function disciplineFromSheetNumber(sheetNumber: string | null | undefined): Discipline {
  if (!sheetNumber) return 'unknown';
  const prefix = letterPrefix(sheetNumber);
  if (prefix.length === 0 || prefix.length > 4) return 'unknown';
  if (NOT_A_DESIGNATOR.has(prefix)) return 'unknown';
  // A designator must be followed by the numeric part (possibly after a separator), otherwise the
  // token is a word ("SECTION", "DATE") rather than a sheet number.
  const rest = sheetNumber.trim().slice(prefix.length);
  if (!/^[\s.\-_]*[0-9OIl]/.test(rest)) return 'unknown';
  return LEVEL1[prefix[0] as string] ?? 'unknown';
}

/**
 * Canonical form of a sheet number for pairing sheets across revisions and for comparing an
 * extracted number with an expected one: "A-101", "A101", "a.101" and "A 1O1" all give "A101".
 *
 * - upper case; separators (space, '-', '.', '_', '/') removed;
 * - after the leading letter prefix, the letters O and I/L (common OCR and typing confusions)
 *   become the digits 0 and 1 ("A-1O1" → "A101");
 * - a prefix made of one designator letter followed only by O/I/L letters right before a digit is
 *   read as that letter plus digits ("AIO1" → "A101").
 *
 * Leading zeros are kept ("ASK-02" → "ASK02"): offices that number "S-01" and "S-1" differently are
 * rare, and dropping them would merge distinct sheets like "A-01" and "A-1" in one set.
 */
export function normalizeSheetNumber(sheetNumber: string): string {
  const compact = sheetNumber.toUpperCase().replace(/[\s\-._/]+/g, '');
  const m = /^([A-Z]*)(.*)$/.exec(compact);
  if (!m) return compact;
  let prefix = m[1] ?? '';
  let rest = m[2] ?? '';
  // An O or I ending a multi-letter prefix right before a digit is more often a misread digit
  // ("AI01" is rare; "A1O1" typed as "AIO1" happens): only fold it when the prefix without it is a
  // known single designator and the remaining letters are O/I/L only.
  const tail = /^([A-Z])([OIL]+)$/.exec(prefix);
  if (tail && (rest === '' || /^[0-9]/.test(rest)) && LEVEL1[tail[1] as string] !== undefined) {
    prefix = tail[1] as string;
    rest = (tail[2] as string) + rest;
  }
  rest = rest.replace(/O/g, '0').replace(/[IL]/g, '1');
  return prefix + rest;
}

/** True when two sheet numbers denote the same sheet ("A-101" vs "A101" vs "A.1O1"). */
export function sameSheetNumber(a: string, b: string): boolean {
  return normalizeSheetNumber(a) === normalizeSheetNumber(b);
}
