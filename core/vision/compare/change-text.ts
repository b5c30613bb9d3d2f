// What a change region says in words (issue 17 part 5): the words inside the region that differ
// between the two text layers, and a description in a reviewer's words.
//
// Both text layers are the sheets' text runs (search index rows: a run's text and its box in its own
// sheet's pixels). A region is A's frame, so B's runs are brought into A's frame through the
// registration (B sheet px → A sheet px) before they are compared; nothing is compared in B's frame.
//
//   1. Runs are cut into word tokens, each with its share of the run's box. Dimension strings are one
//      token however they are spaced (10' - 8 1/4", 10'-8 1/4", 6", 1200 mm) and are compared in one
//      spelling (10'-8 1/4"), so a value that did not change is never reported because its spacing did.
//   2. The tokens of A near the region are matched with B's: first the same word at the same place
//      (± a fraction of the text height: registration leaves a pixel or two, and a token's box is only
//      its share of the run's box), then the same word elsewhere in the region (it moved with its
//      leader or its view: moved, not changed). What is left of A was removed, what is left of B added.
//   3. A removal and an addition that are the same dimensions or tags one for one are value changes
//      (10'-8 1/4" → 7'-3 1/2", W3 → W5): one `modified` change — also when the pixel diff found them
//      as two regions side by side (mergeValueChanges). Among other changes, a removed and an added
//      value at the same place are one too (samePlacePairs).
//
// Pure: no database, no images. analyze.job.ts feeds it the stored runs and regions.
import { mapBox } from './register';

/** Sheet pixels, origin top-left. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A text run as stored: its text and box, in its own sheet's pixels. */
export interface RunLike {
  text: string;
  bbox: Box;
}

export type TokenKind = 'dimension' | 'tag' | 'word';

export interface Token {
  /** The word; dimensions in one spelling (10'-8 1/4"). */
  text: string;
  kind: TokenKind;
  /** Its share of the run's box, in the frame the tokens were given or mapped to. */
  box: Box;
  /** Height of the run's text (the box's short side), the unit of the matching tolerances. */
  em: number;
  /** The run it came from (its words in one spelling), for a description that quotes a phrase. */
  run: string;
  /** The run's box (same frame as `box`) and the token's place in the run: reading order. */
  runBox: Box;
  index: number;
}

export type ChangeKind = 'added' | 'removed' | 'modified' | 'moved';

export interface TextDiff {
  /** Tokens of A in the region with no counterpart in B: the words before. Reading order. */
  removed: Token[];
  /** Tokens of B (in A's frame) in the region with no counterpart in A: the words after. */
  added: Token[];
  /** Words found on both sides, but displaced within the region. */
  moved: Token[];
  /** Words found at the same place on both sides (unchanged text under the change). */
  kept: Token[];
}

/** Longest text_before / text_after kept (chars); longer lists are cut at a word and end in "…". */
export const MAX_CHANGE_TEXT = 200;

// Feet-inches (10'-8 1/4", 10' - 8", 3' 4 1/2", 0'-1/2"), feet only (12'), inches (6", 1 1/2", 3/4"),
// metric (1200 mm, 2.4 m). Tried at each word start before a plain word, so its spaces do not split it.
// Feet and inch marks as fonts give them: PDFium reads Helvetica's ' as a right single quotation mark
// (’), and drawings set primes (′ ″) and curly quotes (”) too; all are read as ' and ".
const FT = `['’′]`;
const IN = `["”″]`;
const INCHES = String.raw`(?:\d+(?:\.\d+)?(?:\s+\d+/\d+)?|\d+/\d+)\s*${IN}`;
const DIMENSION_TOKEN = new RegExp(
  String.raw`(?:\d+\s*${FT}\s*(?:-\s*)?${INCHES}|\d+\s*${FT}(?![A-Za-z0-9])|${INCHES}|\d+(?:\.\d+)?\s*(?:mm|cm|m)(?![A-Za-z0-9]))`,
  'y',
);
/** Tags: W3, D-12, AR281, 101A: letters then digits (one optional hyphen or dot), or digits then a letter. */
const TAG_RE = /^(?:[A-Z]{1,4}[-.]?\d{1,5}[A-Z]?|\d{1,4}[A-Z])$/;

/** A dimension string in one spelling: 10'-8 1/4" (feet, hyphen, inches; one space before a fraction). */
export function normalizeDimension(s: string): string {
  return (
    s
      .replace(/\s*['’′]\s*/g, "'")
      .replace(/\s*["”″]/g, '"')
      // Feet then inches: 3' 4 1/2", 3'-4 1/2" and 3' - 4 1/2" are all 3'-4 1/2".
      .replace(/'-?\s*(?=\d)/g, "'-")
      .replace(/\s+/g, ' ')
      .trim()
  );
}

/** The word tokens of a run's text: [text, kind, first char, end char] (offsets into `text`). */
export function tokenize(
  text: string,
): { text: string; kind: TokenKind; start: number; end: number }[] {
  const out: { text: string; kind: TokenKind; start: number; end: number }[] = [];
  let i = 0;
  while (i < text.length) {
    if (/\s/.test(text[i]!)) {
      i++;
      continue;
    }
    DIMENSION_TOKEN.lastIndex = i;
    const dim = DIMENSION_TOKEN.exec(text);
    // A dimension ends at a word boundary: 12'x is a word, 6"-ish is not a dimension either.
    if (dim && (i + dim[0].length >= text.length || /[\s,;)]/.test(text[i + dim[0].length]!))) {
      out.push({
        text: normalizeDimension(dim[0]),
        kind: 'dimension',
        start: i,
        end: i + dim[0].length,
      });
      i += dim[0].length;
      continue;
    }
    let j = i;
    while (j < text.length && !/\s/.test(text[j]!)) j++;
    const word = text.slice(i, j);
    out.push({ text: word, kind: TAG_RE.test(word) ? 'tag' : 'word', start: i, end: j });
    i = j;
  }
  return out;
}

/**
 * A run's tokens with their boxes. A token gets the share of the run's box its characters take (the
 * stored runs keep no glyph positions). A run taller than wide is rotated text; CAD sets it reading
 * bottom to top (angle 90), so its first characters are at the bottom.
 */
export function runTokens(run: RunLike): Token[] {
  const toks = tokenize(run.text);
  if (toks.length === 0) return [];
  const n = run.text.length;
  const b = run.bbox;
  const vertical = b.height > 1.5 * b.width && n > 1;
  const em = Math.max(1, vertical ? b.width : b.height);
  const phrase = toks.map((t) => t.text).join(' ');
  return toks.map((t, index) => ({
    text: t.text,
    kind: t.kind,
    em,
    run: phrase,
    runBox: b,
    index,
    box: vertical
      ? {
          x: b.x,
          y: b.y + (b.height * (n - t.end)) / n,
          width: b.width,
          height: (b.height * (t.end - t.start)) / n,
        }
      : {
          x: b.x + (b.width * t.start) / n,
          y: b.y,
          width: (b.width * (t.end - t.start)) / n,
          height: b.height,
        },
  }));
}

/** Every run's tokens, boxes mapped through `t` when given (B's runs into A's frame). */
export function sheetTokens(runs: readonly RunLike[], t?: readonly number[]): Token[] {
  const out: Token[] = [];
  // Scale of the transform: B's text height in A's pixels (another paper size prints it smaller).
  const scale = t ? Math.sqrt(Math.abs(t[0]! * t[4]! - t[1]! * t[3]!)) : 1;
  for (const r of runs)
    for (const tok of runTokens(r))
      out.push(
        t
          ? { ...tok, box: mapBox(t, tok.box), runBox: mapBox(t, tok.runBox), em: tok.em * scale }
          : tok,
      );
  return out;
}

const cx = (b: Box) => b.x + b.width / 2;
const cy = (b: Box) => b.y + b.height / 2;

function grow(b: Box, by: number): Box {
  return { x: b.x - by, y: b.y - by, width: b.width + 2 * by, height: b.height + 2 * by };
}

function intersects(a: Box, b: Box): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** Distance between two boxes' edges (0 when they touch or overlap). */
export function boxGap(a: Box, b: Box): number {
  const gx = Math.max(0, Math.max(a.x, b.x) - Math.min(a.x + a.width, b.x + b.width));
  const gy = Math.max(0, Math.max(a.y, b.y) - Math.min(a.y + a.height, b.y + b.height));
  return Math.hypot(gx, gy);
}

export function unionBox(a: Box, b: Box): Box {
  const x = Math.min(a.x, b.x);
  const y = Math.min(a.y, b.y);
  return {
    x,
    y,
    width: Math.max(a.x + a.width, b.x + b.width) - x,
    height: Math.max(a.y + a.height, b.y + b.height) - y,
  };
}

/**
 * Reading order: runs top to bottom by their centres (within half a text height: one line, left to
 * right), each run's words in its own order — a turned dimension string reads 10'-7" (HOLD), not from
 * the top of the page down.
 */
export function readingOrder(tokens: readonly Token[]): Token[] {
  return [...tokens].sort((p, q) => {
    if (p.runBox === q.runBox) return p.index - q.index;
    const dy = cy(p.runBox) - cy(q.runBox);
    if (Math.abs(dy) > 0.5 * Math.min(p.em, q.em)) return dy;
    return cx(p.runBox) - cx(q.runBox) || p.index - q.index;
  });
}

/**
 * Pairs tokens of `as` and `bs` with the same text, nearest first, where `ok` allows; returns the pairs
 * and marks both sides used.
 */
function pairSame(
  as: Token[],
  bs: Token[],
  usedA: Set<Token>,
  usedB: Set<Token>,
  ok: (a: Token, b: Token, dist: number) => boolean,
): [Token, Token][] {
  const cand: { a: Token; b: Token; d: number }[] = [];
  for (const a of as) {
    if (usedA.has(a)) continue;
    for (const b of bs) {
      if (usedB.has(b) || a.text !== b.text) continue;
      const d = Math.hypot(cx(a.box) - cx(b.box), cy(a.box) - cy(b.box));
      if (ok(a, b, d)) cand.push({ a, b, d });
    }
  }
  cand.sort((p, q) => p.d - q.d);
  const out: [Token, Token][] = [];
  for (const { a, b } of cand) {
    if (usedA.has(a) || usedB.has(b)) continue;
    usedA.add(a);
    usedB.add(b);
    out.push([a, b]);
  }
  return out;
}

/**
 * The word diff of a region: `tokensA` in A's frame, `tokensB` already mapped into it. A token is in
 * the region when its box touches it; tokens around the region are matched too (a word on the region's
 * edge finds its counterpart just outside), but only those in the region are reported.
 */
export function diffRegionText(
  region: Box,
  tokensA: readonly Token[],
  tokensB: readonly Token[],
): TextDiff {
  const inside = grow(region, 2);
  const near = (toks: readonly Token[]) => {
    const em = Math.max(8, ...toks.filter((t) => intersects(t.box, inside)).map((t) => t.em));
    const around = grow(region, 3 * em);
    return toks.filter((t) => intersects(t.box, around));
  };
  const nearA = near(tokensA);
  const nearB = near(tokensB);
  const usedA = new Set<Token>();
  const usedB = new Set<Token>();
  // The same word at the same place: within 0.6 text heights (at least 6 px), centre to centre.
  const kept = pairSame(
    nearA,
    nearB,
    usedA,
    usedB,
    (a, b, d) => d <= Math.max(6, 0.6 * Math.min(a.em, b.em)),
  ).map(([a]) => a);
  const inA = nearA.filter((t) => intersects(t.box, inside));
  const inB = nearB.filter((t) => intersects(t.box, inside));
  // The same word elsewhere in the region: it moved (with a leader, a tag, its view).
  const moved = pairSame(inA, inB, usedA, usedB, () => true).map(([, b]) => b);
  return {
    removed: readingOrder(inA.filter((t) => !usedA.has(t))),
    added: readingOrder(inB.filter((t) => !usedB.has(t))),
    moved: readingOrder(moved),
    kept: readingOrder(kept.filter((t) => intersects(t.box, inside))),
  };
}

/** Words joined, cut at a word boundary to at most `max` chars with "…" when cut. */
export function clipWords(words: readonly string[], max = MAX_CHANGE_TEXT): string | null {
  let s = '';
  for (const w of words) {
    const next = s ? `${s} ${w}` : w;
    // Room for " …" after the words kept.
    if (next.length > max - 2) return s ? `${s} …` : `${w.slice(0, max - 1)}…`;
    s = next;
  }
  return s || null;
}

/** text_before / text_after of a diff. */
export function changeText(diff: TextDiff): { before: string | null; after: string | null } {
  return {
    before: clipWords(diff.removed.map((t) => t.text)),
    after: clipWords(diff.added.map((t) => t.text)),
  };
}

/** Pairs of a removed and an added token of the same kind that `ok` allows, nearest first. */
function pairValues(
  removed: readonly Token[],
  added: readonly Token[],
  ok: (a: Token, b: Token) => boolean,
): [Token, Token][] {
  const cand: { a: Token; b: Token; d: number }[] = [];
  for (const a of removed)
    for (const b of added)
      if (a.kind !== 'word' && a.kind === b.kind && ok(a, b))
        cand.push({ a, b, d: Math.hypot(cx(a.box) - cx(b.box), cy(a.box) - cy(b.box)) });
  cand.sort((p, q) => p.d - q.d);
  const used = new Set<Token>();
  const pairs: [Token, Token][] = [];
  for (const { a, b } of cand) {
    if (used.has(a) || used.has(b)) continue;
    used.add(a);
    used.add(b);
    pairs.push([a, b]);
  }
  // In reading order of the old values.
  return readingOrder(pairs.map(([a]) => a)).map((a) => pairs.find(([p]) => p === a)!);
}

/**
 * Value changes: the removed and added tokens are the same dimensions or tags one for one (same count
 * of each kind, nothing else changed), paired nearest first — the region is what the pixel diff saw
 * change together. Null when the diff is anything else: a removed 0'-6" beside a new window tag and
 * its two sizes is not "0'-6" became 2'-8"" (see samePlacePairs for those).
 */
export function valuePairs(diff: Pick<TextDiff, 'removed' | 'added'>): [Token, Token][] | null {
  const { removed, added } = diff;
  if (removed.length === 0 || removed.length !== added.length) return null;
  if ([...removed, ...added].some((t) => t.kind === 'word')) return null;
  const count = (ts: Token[], k: TokenKind) => ts.filter((t) => t.kind === k).length;
  if (
    count(removed, 'dimension') !== count(added, 'dimension') ||
    count(removed, 'tag') !== count(added, 'tag')
  )
    return null;
  return pairValues(removed, added, () => true);
}

/**
 * Value changes among other changes: a removed and an added dimension (or tag) at the same place —
 * boxes overlapping or less than a text height apart, in A's frame. On barber A103 the bathroom's
 * 6'-10 1/2" became 7'-3 1/2" where it was, while the 10'-8 1/4" and 5'-1 1/8" strings beside it went
 * with their dimension lines.
 */
export function samePlacePairs(diff: Pick<TextDiff, 'removed' | 'added'>): [Token, Token][] {
  return pairValues(
    diff.removed,
    diff.added,
    (a, b) => boxGap(a.box, b.box) <= Math.min(a.em, b.em),
  );
}

/**
 * The change kind in a reviewer's terms, from the pixel diff's kind and the words. A value change is
 * `modified` whatever its pixels looked like. New words with little ink gone beside them (at most a
 * third of the added ink) are an addition: that ink is what the new note's box now covers, or its
 * leader redrawn — a column and its callout added, not "modified"; the same the other way round.
 */
export function kindWithText(
  kind: ChangeKind,
  diff: TextDiff,
  ink?: { added_px: number; removed_px: number },
): ChangeKind {
  if (kind === 'moved') return kind;
  if (valuePairs(diff) || samePlacePairs(diff).length > 0) return 'modified';
  if (kind === 'modified' && ink) {
    const { removed, added } = diff;
    if (added.length > 0 && removed.length === 0 && ink.removed_px * 3 <= ink.added_px)
      return 'added';
    if (removed.length > 0 && added.length === 0 && ink.added_px * 3 <= ink.removed_px)
      return 'removed';
  }
  return kind;
}

/**
 * Whether linework changed with the words: the changed words' box covers less than 60 % of the
 * region (a column and its callout, a window tag with its symbol; a retyped label fills its region).
 */
export function hasLinework(region: Box, diff: TextDiff): boolean {
  const changed = [...diff.removed, ...diff.added];
  if (changed.length === 0) return false;
  const words = changed.map((t) => t.box).reduce(unionBox);
  const w = Math.min(region.x + region.width, words.x + words.width) - Math.max(region.x, words.x);
  const h =
    Math.min(region.y + region.height, words.y + words.height) - Math.max(region.y, words.y);
  const covered = w > 0 && h > 0 ? w * h : 0;
  return covered < 0.6 * region.width * region.height;
}

const quote = (s: string) => `‘${s}’`;

/** Up to `max` items, then "and N more". */
function listOf(items: string[], max = 3): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** Tokens grouped for a reviewer: "tag TW265; dimensions 2'-8 1/8", 6'-1 3/8"; ‘SEE NOTE 4’". */
function summarize(tokens: Token[]): string {
  // A run with words in it is quoted whole (‘10'-7" (HOLD)’), its values with it; the values of runs
  // without words are listed by kind.
  const wordRuns = new Set(tokens.filter((t) => t.kind === 'word').map((t) => t.run));
  const quoted = tokens.filter((t) => wordRuns.has(t.run));
  const rest = tokens.filter((t) => !wordRuns.has(t.run));
  const tags = rest.filter((t) => t.kind === 'tag').map((t) => t.text);
  const dims = rest.filter((t) => t.kind === 'dimension').map((t) => t.text);
  const parts: string[] = [];
  if (quoted.length > 0) parts.push(phrase(quoted));
  if (tags.length > 0) parts.push(`${tags.length > 1 ? 'tags' : 'tag'} ${listOf(tags)}`);
  if (dims.length > 0)
    parts.push(`${dims.length > 1 ? 'dimensions' : 'dimension'} ${listOf(dims)}`);
  return parts.join('; ');
}

/**
 * The words as a reviewer reads them: the whole runs they come from when those are short (the
 * changed word in its label: ‘GLULAM COLUMN’, not ‘COLUMN’), else the words themselves, quoted.
 */
function phrase(tokens: Token[]): string {
  const runs = [...new Set(tokens.map((t) => t.run))];
  const text =
    runs.every((r) => r.split(' ').length <= 6) && runs.join(' / ').length <= 60
      ? runs.join(' / ')
      : (clipWords(
          tokens.map((t) => t.text),
          60,
        ) ?? '');
  return quote(text);
}

export interface DescribeInput {
  kind: ChangeKind;
  /**
   * The change's category (contract §4): geometry, text, dimension, annotation, title_block, noise,
   * and the layer categories fill and style; an unknown one is described as a change of linework.
   */
  category: string;
  diff: TextDiff;
  area_px: number;
  /** The region is much larger than its changed words: linework changed with them (a callout, a column). */
  linework?: boolean;
  /** Drawn by the pages' annotations (a cloud, a callout, a markup): said so, with its words. */
  markup?: boolean;
}

/**
 * A change in a reviewer's words: "Dimension 10'-8 1/4" → 7'-3 1/2"", "Tag W3 → W5", "Text changed:
 * ‘GLULAM BEAM’ → ‘GLULAM COLUMN’", "Added: ‘GLULAM COLUMN’ (with linework)", "Fill removed",
 * "Lineweight/pen changed". A moved view is described where the move is known (analyze.job.ts).
 */
export function describeChange(c: DescribeInput): string {
  const { diff, kind, category } = c;
  if (category === 'noise') return `Small pixel difference (${c.area_px} px), likely noise`;
  if (category === 'fill')
    return kind === 'added' ? 'Fill added' : kind === 'removed' ? 'Fill removed' : 'Fill changed';
  if (category === 'style') return 'Lineweight/pen changed';
  if (c.markup) {
    // The architect's own markup: its words (a callout's note) or, without words, the markup itself.
    const { removed, added } = diff;
    if (removed.length > 0 && added.length > 0)
      return `Markup changed: ${phrase(removed)} → ${phrase(added)}`;
    if (added.length > 0) return `Added markup: ${phrase(added)}`;
    if (removed.length > 0) return `Removed markup: ${phrase(removed)}`;
    return (
      { added: 'Markup added', removed: 'Markup removed', moved: 'Markup moved' }[kind as string] ??
      'Markup changed'
    );
  }
  const prefix = category === 'title_block' ? 'Title block: ' : '';
  const pairs = valuePairs(diff);
  if (pairs) {
    const lines = pairs.map(
      ([a, b]) => `${a.kind === 'dimension' ? 'Dimension' : 'Tag'} ${a.text} → ${b.text}`,
    );
    return prefix + listOf(lines);
  }
  const withLines = c.linework ? ' (with linework)' : '';
  const same = samePlacePairs(diff);
  if (same.length > 0) {
    // Values changed in place, and other words went or came beside them: each said.
    const paired = new Set(same.flat());
    const rest = (ts: Token[]) => ts.filter((t) => !paired.has(t));
    const parts = [
      listOf(
        same.map(
          ([a, b]) => `${a.kind === 'dimension' ? 'Dimension' : 'Tag'} ${a.text} → ${b.text}`,
        ),
      ),
    ];
    if (rest(diff.removed).length > 0) parts.push(`removed: ${summarize(rest(diff.removed))}`);
    if (rest(diff.added).length > 0) parts.push(`added: ${summarize(rest(diff.added))}`);
    return `${prefix}${parts.join('; ')}${withLines}`;
  }
  const { removed, added } = diff;
  if (removed.length > 0 && added.length > 0) {
    // Words changed: the old and the new label. Only values (a tag and sizes replacing another
    // dimension): what went and what came, each named.
    if ([...removed, ...added].some((t) => t.kind === 'word'))
      return `${category === 'title_block' ? 'Title block text' : 'Text'} changed: ${phrase(removed)} → ${phrase(added)}`;
    return `${prefix}Removed: ${summarize(removed)}; added: ${summarize(added)}${withLines}`;
  }
  if (added.length > 0) return `${prefix}Added: ${summarize(added)}${withLines}`;
  if (removed.length > 0) return `${prefix}Removed: ${summarize(removed)}${withLines}`;
  if (diff.moved.length > 0) return `${prefix}Moved: ${summarize(diff.moved)}`;
  if (category === 'title_block') return 'Title block changed (linework)';
  const what =
    { added: 'Added linework', removed: 'Removed linework', moved: 'Moved linework' }[
      kind as string
    ] ?? 'Linework changed';
  // Unchanged words under the change place it for a reviewer: "Linework changed near ‘GAS DRYER’".
  return diff.kept.length > 0 ? `${what} near ${phrase(diff.kept.slice(0, 6))}` : what;
}

/** What mergeValueChanges needs of a change: its box in A's sheet pixels, kind and diff. */
export interface MergeableChange {
  box: Box;
  kind: ChangeKind;
  diff: TextDiff;
  /** Changes found through different registrations (a moved view's own) are never merged. */
  frame?: string;
}

/**
 * A dimension or tag whose value changed is often two regions of the pixel diff: the old string
 * removed, the new one added beside it (a longer value, a string turned with its dimension line). Two
 * such changes at the same place — their boxes at most `maxGap` text heights apart — whose words
 * are, together, one-for-one value changes become one `modified` change: `combine` makes it from
 * the two and the union box, `rediff` gives the union's word diff.
 */
export function mergeValueChanges<T extends MergeableChange>(
  changes: readonly T[],
  rediff: (box: Box, frame: string | undefined) => TextDiff,
  combine: (a: T, b: T, box: Box, diff: TextDiff) => T,
  maxGap = 3,
): T[] {
  const list = [...changes];
  // Only a removal of values and an addition of values qualify; each merge is checked on the union.
  const onlyValues = (ts: Token[]) => ts.length > 0 && ts.every((t) => t.kind !== 'word');
  for (let i = 0; i < list.length; i++) {
    const a = list[i]!;
    if (!(onlyValues(a.diff.removed) && a.diff.added.length === 0)) continue;
    let best: { j: number; gap: number; diff: TextDiff; box: Box } | null = null;
    for (let j = 0; j < list.length; j++) {
      const b = list[j]!;
      if (j === i || b.frame !== a.frame) continue;
      if (!(onlyValues(b.diff.added) && b.diff.removed.length === 0)) continue;
      const em = Math.max(...a.diff.removed.map((t) => t.em), ...b.diff.added.map((t) => t.em));
      const gap = boxGap(a.box, b.box);
      if (gap > maxGap * em || (best && gap >= best.gap)) continue;
      const box = unionBox(a.box, b.box);
      const diff = rediff(box, a.frame);
      if (valuePairs(diff)) best = { j, gap, diff, box };
    }
    if (!best) continue;
    const merged = combine(a, list[best.j]!, best.box, best.diff);
    list[i] = merged;
    list.splice(best.j, 1);
    // The merged change sits at min(i, j): look at index i again only if it moved down.
    if (best.j < i) i--;
  }
  return list;
}
