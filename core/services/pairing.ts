// Pairing for revision comparison (contract §6): which sheet of the older set (A) is which sheet of
// the newer set (B), and which block of a sheet pair is which. Pure functions over plain records,
// so the request path (credit estimate), the compare job and the worker pool share them.
//
// Sheets: sheet number normalized (A-101 = A101 = A.101, O/0 and I/1 confusions) first, then the
// title, then visual similarity of thumbnails (a callback, so this module does no I/O). Works when
// sheets are reordered, added or dropped: whatever does not pair is reported as added or removed.
//
// Blocks: the two Sheet blocks (the whole pages) always pair, so every sheet pair has its whole-sheet
// overlay (contract §6); the views pair by type, identifier and title, then position. Positions are
// compared in A's sheet pixels:
// B's block centre goes through the sheet transform (B pixels → A pixels) when one is known,
// else through the ratio of the sheet sizes (another paper size of the same layout).
import { normalizeSheetNumber } from '../vision/sheet/discipline';

export interface SheetInfo {
  id: string;
  sheet_number: string | null;
  title: string | null;
  page_index: number;
}

export type SheetPairMethod = 'sheet_number' | 'title' | 'visual';

export interface SheetPair {
  sheet_a_id: string;
  sheet_b_id: string;
  method: SheetPairMethod;
  /** 0..1: 1 for an exact sheet number, lower for a number read with O/0 or I/1 folded, a title, a look-alike. */
  confidence: number;
}

export interface SheetPairing {
  pairs: SheetPair[];
  /** Sheets of B (the newer set) with no partner. */
  added: string[];
  /** Sheets of A (the older set) with no partner. */
  removed: string[];
}

/** Visual similarity 0..1 of two sheets (e.g. thumbnail correlation); below `minVisual` never pairs. */
export type SimilarityFn = (a: SheetInfo, b: SheetInfo) => number;

export const MIN_VISUAL_SIMILARITY = 0.5;

const normTitle = (t: string | null): string =>
  (t ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();

/** Groups by key, keeping page order; null keys are left out. */
function groupBy(
  list: SheetInfo[],
  key: (s: SheetInfo) => string | null,
): Map<string, SheetInfo[]> {
  const m = new Map<string, SheetInfo[]>();
  for (const s of [...list].sort((x, y) => x.page_index - y.page_index)) {
    const k = key(s);
    if (!k) continue;
    const g = m.get(k);
    if (g) g.push(s);
    else m.set(k, [s]);
  }
  return m;
}

/**
 * Pairs by number, then title; `similarity` (optional) pairs what is left by look. Without it the
 * leftovers stay unpaired (the request path uses this to bound its credit estimate).
 */
export function pairSheets(
  a: SheetInfo[],
  b: SheetInfo[],
  similarity?: SimilarityFn,
): SheetPairing {
  const pairs: SheetPair[] = [];
  const usedA = new Set<string>();
  const usedB = new Set<string>();
  const take = (x: SheetInfo, y: SheetInfo, method: SheetPairMethod, confidence: number) => {
    usedA.add(x.id);
    usedB.add(y.id);
    pairs.push({
      sheet_a_id: x.id,
      sheet_b_id: y.id,
      method,
      confidence: Math.round(confidence * 1000) / 1000,
    });
  };

  // 1. Sheet number. Duplicated numbers in a set (rare: a re-issued page left in) pair in page order.
  const numA = groupBy(a, (s) => (s.sheet_number ? normalizeSheetNumber(s.sheet_number) : null));
  const numB = groupBy(b, (s) => (s.sheet_number ? normalizeSheetNumber(s.sheet_number) : null));
  for (const [k, ga] of numA) {
    const gb = numB.get(k);
    if (!k || !gb) continue;
    for (let i = 0; i < Math.min(ga.length, gb.length); i++) {
      const x = ga[i]!;
      const y = gb[i]!;
      const exact = x.sheet_number!.trim().toUpperCase() === y.sheet_number!.trim().toUpperCase();
      const unique = ga.length === 1 && gb.length === 1;
      take(x, y, 'sheet_number', (exact ? 1 : 0.95) * (unique ? 1 : 0.8));
    }
  }

  // 2. Title, among sheets still unpaired (numbers missing or renumbered).
  const restA = () => a.filter((s) => !usedA.has(s.id));
  const restB = () => b.filter((s) => !usedB.has(s.id));
  const titleA = groupBy(restA(), (s) => normTitle(s.title) || null);
  const titleB = groupBy(restB(), (s) => normTitle(s.title) || null);
  for (const [k, ga] of titleA) {
    const gb = titleB.get(k);
    if (!gb || ga.length !== 1 || gb.length !== 1) continue; // an ambiguous title proves nothing
    take(ga[0]!, gb[0]!, 'title', 0.8);
  }

  // 3. Visual similarity, best pairs first.
  if (similarity) {
    const cand: { x: SheetInfo; y: SheetInfo; s: number }[] = [];
    for (const x of restA()) for (const y of restB()) cand.push({ x, y, s: similarity(x, y) });
    cand.sort(
      (p, q) => q.s - p.s || p.x.page_index - q.x.page_index || p.y.page_index - q.y.page_index,
    );
    for (const c of cand) {
      if (c.s < MIN_VISUAL_SIMILARITY) break;
      if (usedA.has(c.x.id) || usedB.has(c.y.id)) continue;
      take(c.x, c.y, 'visual', 0.7 * c.s);
    }
  }

  const order = new Map([...a, ...b].map((s) => [s.id, s.page_index]));
  pairs.sort((p, q) => order.get(p.sheet_b_id)! - order.get(q.sheet_b_id)!);
  return {
    pairs,
    added: restB()
      .sort((x, y) => x.page_index - y.page_index)
      .map((s) => s.id),
    removed: restA()
      .sort((x, y) => x.page_index - y.page_index)
      .map((s) => s.id),
  };
}

// ---------------------------------------------------------------------------------------------
// Blocks

export interface BlockBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface BlockInfo {
  id: string;
  type: string;
  identifier: string | null;
  title: string | null;
  /** Sheet pixels, origin top-left. */
  bbox: BlockBox;
}

export type BlockPairMethod =
  'sheet' | 'identifier' | 'title' | 'position' | 'drawing_area' | 'given';

export interface BlockPair {
  block_a_id: string;
  block_b_id: string;
  method: BlockPairMethod;
  confidence: number;
}

/** B sheet pixels → A sheet pixels (2x3 affine, x_A = a·x + b·y + c; y_A = d·x + e·y + f). */
export type Affine6 = readonly [number, number, number, number, number, number];

const centre = (b: BlockBox): [number, number] => [b.x + b.width / 2, b.y + b.height / 2];

/**
 * Pairs blocks of one sheet pair, one-to-one: the Sheet blocks first (always, whatever the views
 * do), then the views, best first. `toA` maps B sheet pixels into A's. `diagonalA` (A's sheet
 * diagonal, px) scales position distances. When no view pairs, the largest view of each side other
 * than the title block (the drawing area) pairs, so the drawings themselves are compared as a view.
 */
export function pairBlocks(
  allA: BlockInfo[],
  allB: BlockInfo[],
  toA: Affine6,
  diagonalA: number,
): BlockPair[] {
  const sheetA = allA.find((x) => x.type === 'Sheet');
  const sheetB = allB.find((x) => x.type === 'Sheet');
  const a = allA.filter((x) => x.type !== 'Sheet');
  const b = allB.filter((x) => x.type !== 'Sheet');
  const scale = Math.sqrt(Math.abs(toA[0] * toA[4] - toA[1] * toA[3])) || 1;
  const cand: { x: BlockInfo; y: BlockInfo; s: number; method: BlockPairMethod }[] = [];
  for (const x of a) {
    for (const y of b) {
      const tA = x.type === 'TitleBlock';
      const tB = y.type === 'TitleBlock';
      if (tA !== tB) continue; // a title block only ever pairs with a title block
      const [cx, cy] = centre(x.bbox);
      const [bx, by] = centre(y.bbox);
      const mx = toA[0] * bx + toA[1] * by + toA[2];
      const my = toA[3] * bx + toA[4] * by + toA[5];
      const dist = Math.hypot(mx - cx, my - cy) / Math.max(1, diagonalA);
      const areaA = x.bbox.width * x.bbox.height;
      const areaB = y.bbox.width * y.bbox.height * scale * scale;
      const sizeRatio = Math.min(areaA, areaB) / Math.max(1, Math.max(areaA, areaB));
      const sameId =
        !!x.identifier &&
        !!y.identifier &&
        x.identifier.trim().toUpperCase() === y.identifier.trim().toUpperCase();
      const sameTitle = !!normTitle(x.title) && normTitle(x.title) === normTitle(y.title);
      const sameType = x.type === y.type;
      // Position alone pairs only blocks that overlap in place; identity (number/title) tolerates a move.
      let s = 0;
      let method: BlockPairMethod = 'position';
      if (sameId && sameTitle) {
        s = 3;
        method = 'identifier';
      } else if (sameTitle && !tA) {
        s = 2.2;
        method = 'title';
      } else if (sameId) {
        s = 2;
        method = 'identifier';
      }
      if (tA) {
        s = Math.max(s, 2.5);
        method = 'position';
      }
      const place = Math.max(0, 1 - dist * 4) * (0.5 + 0.5 * sizeRatio);
      if (s === 0 && place < 0.5) continue;
      s += place + (sameType ? 0.3 : 0);
      cand.push({ x, y, s, method });
    }
  }
  cand.sort((p, q) => q.s - p.s || p.x.id.localeCompare(q.x.id) || p.y.id.localeCompare(q.y.id));
  const usedA = new Set<string>();
  const usedB = new Set<string>();
  const out: BlockPair[] = [];
  if (sheetA && sheetB)
    out.push({ block_a_id: sheetA.id, block_b_id: sheetB.id, method: 'sheet', confidence: 1 });
  const views = out.length;
  for (const c of cand) {
    if (usedA.has(c.x.id) || usedB.has(c.y.id)) continue;
    usedA.add(c.x.id);
    usedB.add(c.y.id);
    out.push({
      block_a_id: c.x.id,
      block_b_id: c.y.id,
      method: c.method,
      confidence: Math.round(Math.min(1, c.s / 3.3) * 1000) / 1000,
    });
  }
  if (!out.slice(views).some((p) => a.find((x) => x.id === p.block_a_id)?.type !== 'TitleBlock')) {
    const largest = (list: BlockInfo[]) =>
      list
        .filter((x) => x.type !== 'TitleBlock')
        .sort((p, q) => q.bbox.width * q.bbox.height - p.bbox.width * p.bbox.height)[0];
    const la = largest(a.filter((x) => !usedA.has(x.id)));
    const lb = largest(b.filter((x) => !usedB.has(x.id)));
    if (la && lb)
      out.push({ block_a_id: la.id, block_b_id: lb.id, method: 'drawing_area', confidence: 0.3 });
  }
  return out;
}

/**
 * Upper bound of the block pairs of a sheet pair from the two sides' block counts, Sheet blocks
 * included (one-to-one: the Sheet pair and at most one pair per view of the smaller side; at least
 * one pair).
 */
export function maxBlockPairs(blocksA: number, blocksB: number): number {
  return Math.max(1, Math.min(blocksA, blocksB));
}

/** The transform that scales B's sheet onto A's by their sizes (no registration yet). */
export function sizeRatioTransform(
  a: { width: number; height: number },
  b: { width: number; height: number },
): Affine6 {
  return [a.width / b.width, 0, 0, 0, a.height / b.height, 0];
}
