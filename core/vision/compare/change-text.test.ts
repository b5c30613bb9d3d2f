import { describe, expect, it } from 'vitest';
import {
  changeText,
  clipWords,
  describeChange,
  diffRegionText,
  hasLinework,
  kindWithText,
  MAX_CHANGE_TEXT,
  mergeValueChanges,
  samePlacePairs,
  sheetTokens,
  tokenize,
  valuePairs,
  type Box,
  type ChangeKind,
  type MergeableChange,
  type RunLike,
  type TextDiff,
} from './change-text';

// Synthetic text layers: runs as the search index stores them (text and box in their sheet's pixels),
// 12 px text, ~7 px a character — the size of the barber house's dimension strings at 200 dpi.

const CH = 7;
const run = (text: string, x: number, y: number, h = 12): RunLike => ({
  text,
  bbox: { x, y, width: text.length * CH, height: h },
});
/** A run turned 90° (reading bottom to top): tall and narrow. */
const upRun = (text: string, x: number, y: number, w = 12): RunLike => ({
  text,
  bbox: { x, y, width: w, height: text.length * CH },
});
const box = (x: number, y: number, width: number, height: number): Box => ({ x, y, width, height });
const words = (d: TextDiff, k: 'removed' | 'added' | 'moved' | 'kept') => d[k].map((t) => t.text);

describe('tokenize', () => {
  it('keeps a feet-inch string one token however it is spaced, in one spelling', () => {
    expect(tokenize(`10' - 8 1/4"`).map((t) => [t.text, t.kind])).toEqual([
      [`10'-8 1/4"`, 'dimension'],
    ]);
    expect(tokenize(`WALL 10'-8 1/4" CLR`).map((t) => t.text)).toEqual([
      'WALL',
      `10'-8 1/4"`,
      'CLR',
    ]);
    expect(tokenize(`3' 4 1/2" 6" 1 1/2" 3/4" 12' 1200 mm`).map((t) => t.text)).toEqual([
      `3'-4 1/2"`,
      `6"`,
      `1 1/2"`,
      `3/4"`,
      `12'`,
      '1200 mm',
    ]);
    // PDFium reads Helvetica's ' as ’; primes and curly quotes are feet and inches too.
    expect(tokenize(`8’-0" 1′-10″ 6”`).map((t) => [t.text, t.kind])).toEqual([
      [`8'-0"`, 'dimension'],
      [`1'-10"`, 'dimension'],
      [`6"`, 'dimension'],
    ]);
    expect(tokenize(`0' - 3" LEDGE`).map((t) => [t.text, t.kind])).toEqual([
      [`0'-3"`, 'dimension'],
      ['LEDGE', 'word'],
    ]);
    // Offsets point into the run as printed (they place the token's box).
    const [d] = tokenize(`  7' - 3 1/2"`);
    expect([d!.start, d!.end]).toEqual([2, 13]);
  });

  it('reads tags as one token and plain words as words', () => {
    expect(tokenize('W3 D-12 AR281 101A GLULAM COLUMN 42').map((t) => [t.text, t.kind])).toEqual([
      ['W3', 'tag'],
      ['D-12', 'tag'],
      ['AR281', 'tag'],
      ['101A', 'tag'],
      ['GLULAM', 'word'],
      ['COLUMN', 'word'],
      ['42', 'word'],
    ]);
  });
});

describe('diffRegionText', () => {
  // A: a label, a tag and a dimension; the registration maps B to A by (x/2 − 1, y/2 + 0.5): B was
  // printed at twice the size (the barber house's 22x34 against 11x17).
  const T = [0.5, 0, -1, 0, 0.5, 0.5];
  const toB = (r: RunLike): RunLike => ({
    text: r.text,
    bbox: {
      x: (r.bbox.x + 1) * 2,
      y: (r.bbox.y - 0.5) * 2,
      width: r.bbox.width * 2,
      height: r.bbox.height * 2,
    },
  });

  it('reports only the words that differ, B read in A frame through the registration', () => {
    const a = [run('GAS DRYER', 100, 100), run('W3', 300, 100), run(`10' - 8 1/4"`, 100, 200)];
    const b = [run('GAS DRYER', 100, 100), run('W5', 300, 100), run(`10'-8 1/4"`, 100, 200)].map(
      toB,
    );
    const d = diffRegionText(box(90, 90, 260, 140), sheetTokens(a), sheetTokens(b, T));
    expect(words(d, 'removed')).toEqual(['W3']);
    expect(words(d, 'added')).toEqual(['W5']);
    // The dimension's spacing changed, not its value: kept, like the label.
    expect(words(d, 'kept')).toEqual(['GAS', 'DRYER', `10'-8 1/4"`]);
    expect(changeText(d)).toEqual({ before: 'W3', after: 'W5' });
  });

  it('finds a changed word inside an unchanged label, and not the rest of the label', () => {
    const a = [run('GLULAM BEAM BELOW', 100, 100)];
    const b = [run('GLULAM COLUMN BELOW', 100, 100)];
    const d = diffRegionText(box(90, 95, 200, 20), sheetTokens(a), sheetTokens(b));
    expect(changeText(d)).toEqual({ before: 'BEAM', after: 'COLUMN' });
    // BELOW shifted by two characters: the same word in the region, moved, not changed.
    expect(words(d, 'moved')).toEqual(['BELOW']);
    expect(describeChange({ kind: 'modified', category: 'text', diff: d, area_px: 900 })).toBe(
      'Text changed: ‘GLULAM BEAM BELOW’ → ‘GLULAM COLUMN BELOW’',
    );
  });

  it('leaves out words outside the region, matches words on its edge with theirs just outside', () => {
    const a = [run('KITCHEN', 100, 100), run('NEW WALL', 400, 100)];
    // B's KITCHEN 4 px off (registration play); B has a new note far from the region.
    const b = [run('KITCHEN', 104, 101), run('NEW WALL', 400, 100), run('SEE NOTE 4', 100, 400)];
    const d = diffRegionText(box(95, 90, 40, 30), sheetTokens(a), sheetTokens(b));
    expect([...d.removed, ...d.added]).toEqual([]);
    expect(words(d, 'kept')).toEqual(['KITCHEN']);
  });

  it('reads a turned dimension string in its own order', () => {
    const b = [upRun(`10' - 7" (HOLD)`, 200, 100)];
    const d = diffRegionText(box(195, 95, 30, 130), [], sheetTokens(b));
    expect(changeText(d)).toEqual({ before: null, after: `10'-7" (HOLD)` });
  });

  it('keeps text_before/after short: a sheet-sized region lists its first words and "…"', () => {
    const b: RunLike[] = [];
    for (let i = 0; i < 300; i++)
      b.push(run(`${i}' - ${i % 12}"`, 50 + (i % 20) * 120, 50 + i * 4));
    const d = diffRegionText(box(0, 0, 3000, 2000), [], sheetTokens(b));
    const { after } = changeText(d);
    expect(after!.length).toBeLessThanOrEqual(MAX_CHANGE_TEXT);
    expect(after!.endsWith(' …')).toBe(true);
    // Cut between words, never inside a dimension.
    expect(after!.replace(/ …$/, '').split(' ').at(-1)).toMatch(/"$/);
    expect(clipWords(['a', 'b'])).toBe('a b');
    // Exactly at the limit: the ellipsis still fits.
    const w = 'x'.repeat(9);
    for (let n = 1; n < 40; n++)
      expect(clipWords(Array(n).fill(w), 50)!.length).toBeLessThanOrEqual(50);
    expect(clipWords([])).toBeNull();
  });
});

describe('describeChange', () => {
  const diffOf = (a: RunLike[], b: RunLike[], region: Box) =>
    diffRegionText(region, sheetTokens(a), sheetTokens(b));

  it('a dimension whose value changed: 10\'-8 1/4" → 7\'-3 1/2" is one modified dimension change', () => {
    // One region holding one old and one new value (the new one set turned, beside the old one).
    const d = diffOf([run(`10' - 8 1/4"`, 1504, 996)], [upRun(`7' - 3 1/2"`, 1478, 982)], {
      x: 1470,
      y: 975,
      width: 100,
      height: 70,
    });
    expect(changeText(d)).toEqual({ before: `10'-8 1/4"`, after: `7'-3 1/2"` });
    expect(kindWithText('added', d)).toBe('modified');
    expect(describeChange({ kind: 'modified', category: 'dimension', diff: d, area_px: 420 })).toBe(
      `Dimension 10'-8 1/4" → 7'-3 1/2"`,
    );
  });

  it('the barber bathroom as drawn: the value changed in place, the strings beside it went', () => {
    // Barber A103 (A's sheet pixels; B's already in A's frame): the turned 6' - 10 1/2" became
    // 7' - 3 1/2" in place, while 10' - 8 1/4" and 5' - 1 1/8" were deleted with their dimension lines.
    const a = [
      upRun(`6' - 10 1/2"`, 1479, 978, 11),
      run(`10' - 8 1/4"`, 1504, 996, 11),
      run(`5' - 1 1/8"`, 1500, 1010, 11),
    ];
    const b = [upRun(`7' - 3 1/2"`, 1479, 981, 11)];
    const bathroom = diffOf(a, b, box(1470, 970, 100, 70));
    expect(valuePairs(bathroom)).toBeNull();
    expect(samePlacePairs(bathroom).map(([p, q]) => [p.text, q.text])).toEqual([
      [`6'-10 1/2"`, `7'-3 1/2"`],
    ]);
    expect(kindWithText('removed', bathroom)).toBe('modified');
    expect(
      describeChange({ kind: 'modified', category: 'dimension', diff: bathroom, area_px: 900 }),
    ).toBe(`Dimension 6'-10 1/2" → 7'-3 1/2"; removed: dimensions 10'-8 1/4", 5'-1 1/8"`);
    // A region around the turned string alone: the value change and nothing else.
    const string = diffOf(a, b, box(1478, 980, 13, 50));
    expect(changeText(string)).toEqual({ before: `6'-10 1/2"`, after: `7'-3 1/2"` });
    expect(
      describeChange({ kind: 'modified', category: 'dimension', diff: string, area_px: 300 }),
    ).toBe(`Dimension 6'-10 1/2" → 7'-3 1/2"`);
  });

  it('names tags, several value changes, additions, removals and the title block', () => {
    const region = box(90, 90, 400, 60);
    const tag = diffOf([run('W3', 100, 100)], [run('W5', 100, 100)], region);
    expect(describeChange({ kind: 'modified', category: 'text', diff: tag, area_px: 200 })).toBe(
      'Tag W3 → W5',
    );
    const two = diffOf(
      [run(`3'-0"`, 100, 100), run(`4'-0"`, 300, 100)],
      [run(`2'-6"`, 100, 100), run(`3'-6"`, 300, 100)],
      region,
    );
    expect(
      describeChange({ kind: 'modified', category: 'dimension', diff: two, area_px: 500 }),
    ).toBe(`Dimension 3'-0" → 2'-6", Dimension 4'-0" → 3'-6"`);
    const added = diffOf([], [run('GLULAM COLUMN', 100, 100)], region);
    expect(
      describeChange({
        kind: 'added',
        category: 'text',
        diff: added,
        area_px: 9000,
        linework: true,
      }),
    ).toBe('Added: ‘GLULAM COLUMN’ (with linework)');
    const removed = diffOf([run('TW265', 100, 100), run(`2'-8 1/8"`, 100, 130)], [], region);
    expect(
      describeChange({ kind: 'removed', category: 'dimension', diff: removed, area_px: 900 }),
    ).toBe(`Removed: tag TW265; dimension 2'-8 1/8"`);
    // A removed dimension beside a new tag and two sizes is not a value change: both are named.
    // As on ASK-003's right edge (26 px text): the turned 0'-6" at the top of the wall went; the new
    // window tag AR281 and its sizes came below and right of it, not in its place.
    const mixed = diffOf(
      [upRun(`0' - 6"`, 3202, 552, 26)],
      [
        run('AR281', 3257, 605, 26),
        run(`2' - 8"`, 3263, 658, 26),
        run(`1' - 5 1/2"`, 3242, 697, 26),
      ],
      box(3164, 540, 185, 178),
    );
    expect(valuePairs(mixed)).toBeNull();
    expect(samePlacePairs(mixed)).toEqual([]);
    expect(kindWithText('modified', mixed)).toBe('modified');
    expect(
      describeChange({ kind: 'modified', category: 'dimension', diff: mixed, area_px: 900 }),
    ).toBe(`Removed: dimension 0'-6"; added: tag AR281; dimensions 2'-8", 1'-5 1/2"`);
    const stamp = diffOf(
      [run('1/15/2015 6:21:16 PM', 100, 100)],
      [run('1/16/2015 12:22:41 PM', 100 - CH, 100)],
      box(90, 90, 200, 30),
    );
    expect(changeText(stamp)).toEqual({ before: '1/15/2015 6:21:16', after: '1/16/2015 12:22:41' });
    expect(
      describeChange({ kind: 'modified', category: 'title_block', diff: stamp, area_px: 7000 }),
    ).toBe('Title block text changed: ‘1/15/2015 6:21:16 PM’ → ‘1/16/2015 12:22:41 PM’');
  });

  it('describes changes without changed words by what changed: moved words, fill, style, linework', () => {
    const empty: TextDiff = { removed: [], added: [], moved: [], kept: [] };
    const moved = diffRegionText(
      box(90, 90, 200, 80),
      sheetTokens([run(`0' - 4 1/2"`, 100, 100)]),
      sheetTokens([run(`0' - 4 1/2"`, 100, 136)]),
    );
    expect(changeText(moved)).toEqual({ before: null, after: null });
    expect(
      describeChange({ kind: 'modified', category: 'annotation', diff: moved, area_px: 2000 }),
    ).toBe(`Moved: dimension 0'-4 1/2"`);
    const d = (kind: ChangeKind, category: string) =>
      describeChange({ kind, category, diff: empty, area_px: 5000 });
    expect(d('removed', 'fill')).toBe('Fill removed');
    expect(d('added', 'fill')).toBe('Fill added');
    expect(d('modified', 'fill')).toBe('Fill changed');
    expect(d('modified', 'style')).toBe('Lineweight/pen changed');
    expect(d('added', 'geometry')).toBe('Added linework');
    expect(d('modified', 'geometry')).toBe('Linework changed');
    expect(d('modified', 'noise')).toBe('Small pixel difference (5000 px), likely noise');
    const near = diffRegionText(
      box(90, 90, 200, 80),
      sheetTokens([run('GAS DRYER', 100, 100)]),
      sheetTokens([run('GAS DRYER', 100, 100)]),
    );
    expect(
      describeChange({ kind: 'modified', category: 'annotation', diff: near, area_px: 900 }),
    ).toBe('Linework changed near ‘GAS DRYER’');
  });
});

describe('kindWithText and hasLinework', () => {
  const note = diffRegionText(
    box(0, 0, 400, 300),
    [],
    sheetTokens([run('GLULAM COLUMN', 10, 250)]),
  );

  it('calls new words with little ink gone beside them an addition, and the reverse a removal', () => {
    // S101: the column and its callout (8955 px added), 2526 px of ink under the note's box gone.
    expect(kindWithText('modified', note, { added_px: 8955, removed_px: 2526 })).toBe('added');
    expect(kindWithText('modified', note, { added_px: 8955, removed_px: 4000 })).toBe('modified');
    const gone: TextDiff = { ...note, removed: note.added, added: [] };
    expect(kindWithText('modified', gone, { added_px: 300, removed_px: 5000 })).toBe('removed');
    // A moved region stays moved; without ink counts the pixel kind stands.
    expect(kindWithText('moved', note, { added_px: 8955, removed_px: 0 })).toBe('moved');
    expect(kindWithText('modified', note)).toBe('modified');
  });

  it('sees linework beside the words when they cover less than 60 % of the region', () => {
    // 91 x 12 px of words in a 400 x 300 region: a column and its callout.
    expect(hasLinework(box(0, 0, 400, 300), note)).toBe(true);
    // A retyped label fills its region.
    expect(hasLinework(box(8, 248, 95, 16), note)).toBe(false);
    expect(hasLinework(box(0, 0, 400, 300), { removed: [], added: [], moved: [], kept: [] })).toBe(
      false,
    );
  });
});

describe('mergeValueChanges', () => {
  interface C extends MergeableChange {
    id: string;
  }
  const a = sheetTokens([run(`10' - 8 1/4"`, 1504, 996), run('BATH', 1300, 996)]);
  const b = sheetTokens([upRun(`7' - 3 1/2"`, 1478, 982), run('BATH', 1300, 996)]);
  const at = (id: string, bx: Box, kind: ChangeKind): C => ({
    id,
    box: bx,
    kind,
    diff: diffRegionText(bx, a, b),
  });
  const combine = (p: C, q: C, bx: Box, diff: TextDiff): C => ({
    id: `${p.id}+${q.id}`,
    box: bx,
    kind: 'modified',
    diff,
  });
  const rediff = (bx: Box) => diffRegionText(bx, a, b);

  it('makes one modified change of a removed value and the added value beside it', () => {
    const removed = at('r', box(1502, 994, 60, 16), 'removed');
    const added = at('a', box(1476, 980, 16, 54), 'added');
    const other = at('o', box(1290, 990, 40, 20), 'modified');
    expect(changeText(removed.diff)).toEqual({ before: `10'-8 1/4"`, after: null });
    expect(changeText(added.diff)).toEqual({ before: null, after: `7'-3 1/2"` });
    const out = mergeValueChanges([other, added, removed], rediff, combine);
    expect(out.map((c) => c.id)).toEqual(['o', 'r+a']);
    const m = out[1]!;
    expect(changeText(m.diff)).toEqual({ before: `10'-8 1/4"`, after: `7'-3 1/2"` });
    expect(describeChange({ kind: m.kind, category: 'dimension', diff: m.diff, area_px: 1 })).toBe(
      `Dimension 10'-8 1/4" → 7'-3 1/2"`,
    );
  });

  it('leaves them apart when far from each other, in other frames, or not values one for one', () => {
    const removed = at('r', box(1502, 994, 60, 16), 'removed');
    const far = {
      ...at('a', box(1476, 980, 16, 54), 'added'),
      box: box(1476 - 400, 980, 16, 54),
    };
    expect(mergeValueChanges([removed, far], rediff, combine)).toHaveLength(2);
    const elsewhere = { ...at('a', box(1476, 980, 16, 54), 'added'), frame: 'moved view' };
    expect(mergeValueChanges([removed, elsewhere], rediff, combine)).toHaveLength(2);
    // A new note added beside a removed dimension is not its new value.
    const note = sheetTokens([run('SEE NOTE', 1478, 1012)]);
    const noteAdded: C = {
      id: 'n',
      box: box(1476, 1010, 60, 16),
      kind: 'added',
      diff: diffRegionText(box(1476, 1010, 60, 16), [], note),
    };
    expect(mergeValueChanges([removed, noteAdded], rediff, combine)).toHaveLength(2);
  });
});
