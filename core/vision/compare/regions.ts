// Change regions: group the changed ink of a diff (added/removed masks, A's sheet pixels, origin
// top-left) into the boxes a reviewer would circle.
//
//   1. 32x32-px blocks (one mask word wide, 32 rows) with at least `minBlockPx` changed pixels are flagged;
//   2. flagged blocks closer than `bridgePx` are joined into components (so a callout and its leader stay
//      together), each component gets the tight box of its changed pixels;
//   3. overlapping/touching boxes are merged, specks below `minAreaPx` dropped — a region therefore
//      always holds changed ink: never a region where nothing changed;
//   4. kind: added / removed when one side dominates; moved when the removed ink reappears displaced as
//      added ink of the same shape (inside one region, or a removed region paired with an added one);
//      otherwise modified.
import type { BBox } from '../types';
import { maskKernels, popcount32, type DiffResult } from './diff';
import { shiftedHits } from './region-kernels';
import { blockCountsSimd } from './masks-simd';

export type ChangeKind = 'added' | 'removed' | 'modified' | 'moved';

export interface ChangeRegion {
  /** Tight box of the changed pixels, A's sheet pixels. */
  bbox: BBox;
  /** Changed pixels inside (added + removed). */
  area_px: number;
  added_px: number;
  removed_px: number;
  kind: ChangeKind;
  /** 0..1: grows with the amount of changed ink, scaled by the alignment confidence. */
  confidence: number;
  /** For `moved` regions found as a removed/added pair: index of the partner region in the result. */
  moved_with?: number;
  /** 'fill': a change of the fill layer (tone, solid area); absent: line work. */
  layer?: 'fill';
  /**
   * Line work only: the share of the changed pixels that are style changes (DiffResult.style: within 2 px
   * of the other side's ink — another lineweight or pen shade of the same geometry). At STYLE_SHARE or
   * more the region is a style change.
   */
  style_share?: number;
  /**
   * Line work only, when the pages' annotations are known (DiffResult.annotations): the share of the
   * changed pixels drawn by annotations (A's for removed pixels, B's for added ones) — the
   * architect's clouds, callouts and markups. At ANNOTATION_SHARE or more the region is a markup change.
   */
  annotation_share?: number;
}

/** A line-work region with this share of its changed pixels on annotations is a markup change. */
export const ANNOTATION_SHARE = 0.5;

export interface RegionOptions {
  /** Gap (px) across which changed ink is still one region. Default 40. */
  bridgePx?: number;
  /** Regions with fewer changed pixels are dropped as specks. Default 24. */
  minAreaPx?: number;
  /** A block needs this many changed pixels to seed a region (1–3 px specks are noise). Default 4. */
  minBlockPx?: number;
  /** Alignment confidence (0..1) folded into each region's confidence. Default 1. */
  alignmentConfidence?: number;
  /** Largest displacement (px) for pairing a removed region with an added one as a move. Default 400. */
  maxMovePx?: number;
  /**
   * A region whose box covers more than this share of the frame is split: its blocks are grouped
   * again without the bridge (touching blocks only), and what is still too large is cut into tiles of
   * at most a quarter of this share. Default 0.1 (issue 17: one region must never swallow the sheet).
   */
  maxRegionFraction?: number;
}

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number; // inclusive
}

function emptyBox(): Box {
  return { x0: Infinity, y0: Infinity, x1: -Infinity, y1: -Infinity };
}

function boxUnion(a: Box, b: Box): Box {
  return {
    x0: Math.min(a.x0, b.x0),
    y0: Math.min(a.y0, b.y0),
    x1: Math.max(a.x1, b.x1),
    y1: Math.max(a.y1, b.y1),
  };
}

function boxGap(a: Box, b: Box): number {
  const gx = Math.max(0, Math.max(a.x0, b.x0) - Math.min(a.x1, b.x1) - 1);
  const gy = Math.max(0, Math.max(a.y0, b.y0) - Math.min(a.y1, b.y1) - 1);
  return Math.max(gx, gy);
}

/** Tight box of the set bits of mask `m` inside block (bx, by); grows `box` in place. */
function blockBox(
  m: Uint32Array,
  stride: number,
  height: number,
  bx: number,
  by: number,
  box: Box,
): void {
  let or = 0;
  const y0 = by * 32,
    y1 = Math.min(height, y0 + 32);
  for (let y = y0; y < y1; y++) {
    const w = m[y * stride + bx]!;
    if (w !== 0) {
      or |= w;
      if (y < box.y0) box.y0 = y;
      if (y > box.y1) box.y1 = y;
    }
  }
  if (or !== 0) {
    const lo = 31 - Math.clz32(or & -or),
      hi = 31 - Math.clz32(or);
    if (bx * 32 + lo < box.x0) box.x0 = bx * 32 + lo;
    if (bx * 32 + hi > box.x1) box.x1 = bx * 32 + hi;
  }
}

function bitAt(m: Uint32Array, stride: number, x: number, y: number): number {
  return (m[y * stride + (x >> 5)]! >>> (x & 31)) & 1;
}

/** Count set bits of `m` inside `box`. */
function countIn(m: Uint32Array, stride: number, box: Box): number {
  let n = 0;
  for (let y = box.y0; y <= box.y1; y++)
    for (let x = box.x0; x <= box.x1; x++) n += bitAt(m, stride, x, y);
  return n;
}

/**
 * Changed pixels per 32 x 32 block (one mask word wide, 32 rows high): the only pass of findRegions
 * over the whole image, and only words holding changes cost a popcount. Its own function, with typed
 * arrays and numbers only: it stays optimized whatever findRegions' objects do (a deopt of findRegions
 * had it run this loop in the interpreter, ~15 ms at 200 DPI, in every other compare).
 */
function blockCounts(
  added: Uint32Array,
  removed: Uint32Array,
  stride: number,
  height: number,
  addCnt: Uint32Array,
  remCnt: Uint32Array,
): void {
  // WebAssembly SIMD where it runs (the same counts: masks-simd.test.ts); this loop otherwise.
  if (maskKernels.simd && blockCountsSimd(added, removed, stride, height, addCnt, remCnt)) return;
  for (let y = 0; y < height; y++) {
    const rb = y * stride,
      brow = (y >> 5) * stride;
    for (let k = 0; k < stride; k++) {
      const a = added[rb + k]!,
        r = removed[rb + k]!;
      if ((a | r) === 0) continue;
      if (a !== 0) addCnt[brow + k] = addCnt[brow + k]! + popcount32(a);
      if (r !== 0) remCnt[brow + k] = remCnt[brow + k]! + popcount32(r);
    }
  }
}

/**
 * Does the removed ink in `rb`, shifted by (dx, dy), land on added ink (±1 px) in `ab`?
 * Returns the matched share of the removed pixels (0..1). Regions are small, so per-pixel is fine.
 */
function shapeMatch(d: DiffResult, rb: Box, ab: Box, dx: number, dy: number): number {
  const { stride, width, height, removed, added } = d;
  // A box inside the image (as regions' boxes are): a mask word at a time.
  if (rb.x0 >= 0 && rb.y0 >= 0 && rb.x1 < width && rb.y1 < height) {
    const { hit, tot } = shiftedHits(
      removed,
      added,
      stride,
      width,
      height,
      rb.x0,
      rb.y0,
      rb.x1,
      rb.y1,
      ab.y0,
      ab.y1,
      dx,
      dy,
    );
    return tot > 0 ? hit / tot : 0;
  }
  let hit = 0,
    tot = 0;
  for (let y = rb.y0; y <= rb.y1; y++) {
    for (let x = rb.x0; x <= rb.x1; x++) {
      if (!bitAt(removed, stride, x, y)) continue;
      tot++;
      const tx = x + dx,
        ty = y + dy;
      let found = 0;
      for (let yy = ty - 1; yy <= ty + 1 && !found; yy++) {
        if (yy < ab.y0 - 1 || yy > ab.y1 + 1 || yy < 0 || yy >= height) continue;
        for (let xx = tx - 1; xx <= tx + 1; xx++) {
          if (xx < 0 || xx >= width) continue;
          if (bitAt(added, stride, xx, yy)) {
            found = 1;
            break;
          }
        }
      }
      hit += found;
    }
  }
  return tot > 0 ? hit / tot : 0;
}

interface Comp {
  /** Block indices (y·bw + x) of the component. */
  blocks: number[];
  box: Box;
  addBox: Box;
  remBox: Box;
  added: number;
  removed: number;
}

export function findRegions(d: DiffResult, opts: RegionOptions = {}): ChangeRegion[] {
  const bridgePx = opts.bridgePx ?? 40;
  const minArea = opts.minAreaPx ?? 24;
  const minBlock = opts.minBlockPx ?? 4;
  const alignConf = opts.alignmentConfidence ?? 1;
  const maxMove = opts.maxMovePx ?? 400;
  const { stride, height, added, removed } = d;
  const bw = stride,
    bh = Math.ceil(height / 32);

  // 1. block counts
  const addCnt = new Uint32Array(bw * bh),
    remCnt = new Uint32Array(bw * bh);
  blockCounts(added, removed, stride, height, addCnt, remCnt);
  const flagged: number[] = [];
  for (let i = 0; i < bw * bh; i++) if (addCnt[i]! + remCnt[i]! >= minBlock) flagged.push(i);

  // 2. components over flagged blocks, joined within the bridge distance (Chebyshev, in blocks)
  const R = 1 + Math.max(0, Math.round(bridgePx / 32));
  const isFlag = new Uint8Array(bw * bh);
  for (const i of flagged) isFlag[i] = 1;
  const label = new Int32Array(bw * bh).fill(-1);
  const components = (seeds: number[], r: number, tile: number): Comp[] => {
    const comps: Comp[] = [];
    const stack: number[] = [];
    for (const seed of seeds) label[seed] = -1;
    for (const seed of seeds) {
      if (label[seed] !== -1) continue;
      const c: Comp = {
        blocks: [],
        box: emptyBox(),
        addBox: emptyBox(),
        remBox: emptyBox(),
        added: 0,
        removed: 0,
      };
      const id = comps.length;
      comps.push(c);
      label[seed] = id;
      stack.push(seed);
      const tx = tile > 0 ? Math.floor((seed % bw) / tile) : 0,
        ty = tile > 0 ? Math.floor(seed / bw / tile) : 0;
      while (stack.length > 0) {
        const i = stack.pop()!;
        c.blocks.push(i);
        const bx = i % bw,
          by = (i / bw) | 0;
        if (addCnt[i]! > 0) blockBox(added, stride, height, bx, by, c.addBox);
        if (remCnt[i]! > 0) blockBox(removed, stride, height, bx, by, c.remBox);
        c.added += addCnt[i]!;
        c.removed += remCnt[i]!;
        for (let y = Math.max(0, by - r); y <= Math.min(bh - 1, by + r); y++) {
          if (tile > 0 && Math.floor(y / tile) !== ty) continue;
          for (let x = Math.max(0, bx - r); x <= Math.min(bw - 1, bx + r); x++) {
            if (tile > 0 && Math.floor(x / tile) !== tx) continue;
            const j = y * bw + x;
            if (isFlag[j] && label[j] === -1) {
              label[j] = id;
              stack.push(j);
            }
          }
        }
      }
      c.box = boxUnion(c.addBox, c.remBox);
    }
    return comps;
  };
  const comps = components(flagged, R, 0);
  // 3. merge overlapping / touching boxes until stable, then drop specks
  let merged = true;
  let list = comps.filter((c) => c.added + c.removed > 0);
  while (merged) {
    merged = false;
    outer: for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        if (boxGap(list[i]!.box, list[j]!.box) <= 0) {
          const a = list[i]!,
            b = list[j]!;
          const addBox =
            a.added > 0 && b.added > 0
              ? boxUnion(a.addBox, b.addBox)
              : a.added > 0
                ? a.addBox
                : b.addBox;
          const remBox =
            a.removed > 0 && b.removed > 0
              ? boxUnion(a.remBox, b.remBox)
              : a.removed > 0
                ? a.remBox
                : b.removed > 0
                  ? b.remBox
                  : emptyBox();
          list[i] = {
            blocks: a.blocks.concat(b.blocks),
            box: boxUnion(a.box, b.box),
            addBox,
            remBox,
            added: a.added + b.added,
            removed: a.removed + b.removed,
          };
          list.splice(j, 1);
          merged = true;
          break outer;
        }
      }
    }
  }
  list = list.filter((c) => c.added + c.removed >= minArea);
  // Oversized regions: touching blocks only, then tiles (never merged again).
  const maxArea = (opts.maxRegionFraction ?? 0.1) * d.width * height;
  const tooBig = (c: Comp) =>
    (c.box.x1 - c.box.x0 + 1) * (c.box.y1 - c.box.y0 + 1) > maxArea && c.blocks.length > 1;
  if (list.some(tooBig)) {
    const tile = Math.max(1, Math.floor(Math.sqrt(maxArea / 12) / 32));
    list = list.flatMap((c) => {
      if (!tooBig(c)) return [c];
      const seeds = c.blocks.filter((i) => addCnt[i]! + remCnt[i]! >= minBlock);
      return components(seeds, 1, 0).flatMap((p) =>
        tooBig(p) ? components(p.blocks, 1, tile) : [p],
      );
    });
    list = list.filter((c) => c.added + c.removed >= minArea);
  }

  // 4. kinds
  const out: ChangeRegion[] = list.map((c) => {
    const area = c.added + c.removed;
    const fa = c.added / area;
    let kind: ChangeKind = fa >= 0.9 ? 'added' : fa <= 0.1 ? 'removed' : 'modified';
    if (kind === 'modified' && c.added > 0 && c.removed > 0) {
      const dx = Math.round((c.addBox.x0 + c.addBox.x1 - c.remBox.x0 - c.remBox.x1) / 2);
      const dy = Math.round((c.addBox.y0 + c.addBox.y1 - c.remBox.y0 - c.remBox.y1) / 2);
      const ratio = c.added / c.removed;
      if (
        (Math.abs(dx) > 2 || Math.abs(dy) > 2) &&
        ratio > 0.7 &&
        ratio < 1.4 &&
        shapeMatch(d, c.remBox, c.addBox, dx, dy) > 0.8
      ) {
        kind = 'moved';
      }
    }
    const confidence = alignConf * (0.5 + 0.5 * Math.min(1, area / (10 * minArea)));
    return {
      bbox: {
        x: c.box.x0,
        y: c.box.y0,
        width: c.box.x1 - c.box.x0 + 1,
        height: c.box.y1 - c.box.y0 + 1,
      },
      area_px: area,
      added_px: c.added,
      removed_px: c.removed,
      kind,
      confidence,
    };
  });

  // Removed region + added region of the same shape nearby → both moved (nearest pairs first).
  const rems = out.map((r, i) => ({ r, i })).filter((o) => o.r.kind === 'removed');
  const adds = out.map((r, i) => ({ r, i })).filter((o) => o.r.kind === 'added');
  const pairs: { ri: number; ai: number; dist: number; dx: number; dy: number }[] = [];
  for (const { r, i } of rems) {
    for (const { r: a, i: j } of adds) {
      const ratio = a.area_px / r.area_px;
      if (ratio < 0.75 || ratio > 1.33) continue;
      if (Math.abs(a.bbox.width - r.bbox.width) > Math.max(3, 0.2 * r.bbox.width)) continue;
      if (Math.abs(a.bbox.height - r.bbox.height) > Math.max(3, 0.2 * r.bbox.height)) continue;
      const dx = a.bbox.x + a.bbox.width / 2 - (r.bbox.x + r.bbox.width / 2);
      const dy = a.bbox.y + a.bbox.height / 2 - (r.bbox.y + r.bbox.height / 2);
      const dist = Math.hypot(dx, dy);
      if (dist > maxMove) continue;
      pairs.push({ ri: i, ai: j, dist, dx: Math.round(dx), dy: Math.round(dy) });
    }
  }
  pairs.sort((p, q) => p.dist - q.dist);
  const used = new Set<number>();
  for (const p of pairs) {
    if (used.has(p.ri) || used.has(p.ai)) continue;
    const r = out[p.ri]!,
      a = out[p.ai]!;
    const rb: Box = {
      x0: r.bbox.x,
      y0: r.bbox.y,
      x1: r.bbox.x + r.bbox.width - 1,
      y1: r.bbox.y + r.bbox.height - 1,
    };
    const ab: Box = {
      x0: a.bbox.x,
      y0: a.bbox.y,
      x1: a.bbox.x + a.bbox.width - 1,
      y1: a.bbox.y + a.bbox.height - 1,
    };
    if (shapeMatch(d, rb, ab, p.dx, p.dy) < 0.8) continue;
    used.add(p.ri);
    used.add(p.ai);
    r.kind = 'moved';
    a.kind = 'moved';
    r.moved_with = p.ai;
    a.moved_with = p.ri;
  }
  return out;
}

/** Regions of fill changes: larger seeds and specks than line work (fill edges shift by a pixel). */
const FILL_REGION_OPTIONS: RegionOptions = { minBlockPx: 48, minAreaPx: 400 };

/** A line-work region whose changed pixels are at least this share style changes is a style change. */
export const STYLE_SHARE = 0.8;

/** A style region at most this thick (px) may join the geometry pieces of one line (findLayerRegions). */
const SLIVER_PX = 12;

/** Regions of style changes: thin slivers along lines, so larger seeds than geometry. */
const STYLE_REGION_OPTIONS: RegionOptions = { minBlockPx: 16, minAreaPx: 60 };

/**
 * Change regions of both layers (layers.ts): line-work regions (findRegions on the diff's masks) with
 * their style share, then fill regions found apart, so a fill change never merges with the line work
 * over it (`layer: 'fill'`).
 */
export function findLayerRegions(d: DiffResult, opts: RegionOptions = {}): ChangeRegion[] {
  const st = d.style;
  let out: ChangeRegion[];
  if (st && st.added_px + st.removed_px > 0) {
    // Geometry from the changes away from the other side's ink; style changes apart, and those that
    // touch a geometry region are part of that change (a glyph edited next to the old one).
    out = findRegions({ ...d, added: st.geomAdded, removed: st.geomRemoved }, opts);
    for (const r of out) r.style_share = 0;
    const styles = findRegions(
      { ...d, added: st.added, removed: st.removed },
      { ...opts, ...STYLE_REGION_OPTIONS },
    );
    const own: ChangeRegion[] = [];
    const maxArea = (opts.maxRegionFraction ?? 0.1) * d.width * d.height;
    const area = (b: BBox) => b.width * b.height;
    // Geometry regions joined by the style pieces between them (union-find over `out`): a line drawn
    // over old lines is geometry between the crossings and style at them (its pixels there lie within
    // 2 px of the old ink), so it comes as pieces bridged by slivers — one edit, one change.
    const parent = out.map((_, i) => i);
    const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
    const boxOf = out.map((r) => r.bbox);
    const styleOf = new Map<number, ChangeRegion[]>();
    /** Changed pixels of the geometry regions in each group, at its root (summed as groups join). */
    const groupPx = out.map((r) => r.area_px);
    for (const s of styles) {
      // Absorbed only when it lies mostly within the geometry it touches (the joined box at most 1.5
      // times the box of those regions, and within the largest region allowed); a sliver touching
      // several regions joins them only when it is smaller than they are together (a whole level line
      // printed lighter is not a bridge between two edits at its ends).
      const touched = [...new Set(out.map((_, i) => find(i)))].filter((i) =>
        boxesTouch(boxOf[i]!, s.bbox),
      );
      if (touched.length > 0) {
        const u = touched.map((i) => boxOf[i]!).reduce(unionBox);
        const j = unionBox(u, s.bbox);
        const geomPx = touched.reduce((n, i) => n + groupPx[i]!, 0);
        // Several are joined along a line only: a sliver (at most SLIVER_PX thick) and the pieces of
        // a line drawn across old ones make a joined box as thin as the line (at most 3 times the
        // sliver's thickness, or SLIVER_PX), and the sliver has fewer pixels than they do — a whole level line
        // printed lighter does not bridge two edits at its ends, nor a sliver the edits around it.
        const t = Math.min(s.bbox.width, s.bbox.height);
        const thin = t <= SLIVER_PX ? Math.max(SLIVER_PX, 3 * t) : 0;
        if (
          area(j) <= maxArea &&
          area(j) <= 1.5 * area(u) &&
          (touched.length === 1 || (s.area_px <= geomPx && Math.min(j.width, j.height) <= thin))
        ) {
          const root = touched[0]!;
          for (const i of touched.slice(1)) {
            parent[i] = root;
            groupPx[root] = groupPx[root]! + groupPx[i]!;
          }
          boxOf[root] = j;
          styleOf.set(root, [...touched.flatMap((i) => styleOf.get(i) ?? []), s]);
          continue;
        }
        // Not a bridge: part of the first region it touches whose box it stays within, if any.
        const one = touched.find((i) => {
          const jj = unionBox(boxOf[i]!, s.bbox);
          return area(jj) <= maxArea && area(jj) <= 1.5 * area(boxOf[i]!);
        });
        if (one !== undefined) {
          boxOf[one] = unionBox(boxOf[one]!, s.bbox);
          styleOf.set(one, [...(styleOf.get(one) ?? []), s]);
          continue;
        }
      }
      s.style_share = 1;
      delete s.moved_with;
      own.push(s);
    }
    // Each group becomes one region: its geometry regions and the style pieces absorbed into it.
    const groups = new Map<number, number[]>();
    out.forEach((_, i) => {
      const g = groups.get(find(i));
      if (g) g.push(i);
      else groups.set(find(i), [i]);
    });
    const at = new Map<number, number>(); // group root → index in `merged`
    const merged: ChangeRegion[] = [];
    for (const [root, members] of groups) {
      const styled = styleOf.get(root) ?? [];
      const geo = members.map((i) => out[i]!);
      const parts = [...geo, ...styled];
      const sum = (k: 'area_px' | 'added_px' | 'removed_px') => parts.reduce((n, x) => n + x[k], 0);
      const g: ChangeRegion = {
        ...geo[0]!,
        bbox: parts.map((x) => x.bbox).reduce(unionBox),
        area_px: sum('area_px'),
        added_px: sum('added_px'),
        removed_px: sum('removed_px'),
        confidence: Math.max(...geo.map((x) => x.confidence)),
      };
      g.style_share = styled.reduce((n, x) => n + x.area_px, 0) / g.area_px;
      if (geo.length > 1) {
        // Pieces of one edit: its kind from all its pixels, as findRegions decides an unmoved one.
        const fa = g.added_px / g.area_px;
        g.kind = fa >= 0.9 ? 'added' : fa <= 0.1 ? 'removed' : 'modified';
      }
      at.set(root, merged.length);
      merged.push(g);
    }
    // A moved pair's partner index, in the merged list (gone when both ends are one region now).
    for (const [root, members] of groups) {
      const g = merged[at.get(root)!]!;
      const partner = members.map((i) => out[i]!.moved_with).find((m) => m !== undefined);
      const to = partner === undefined ? undefined : at.get(find(partner));
      if (to === undefined || to === at.get(root)) {
        delete g.moved_with;
        if (g.kind === 'moved' && members.length > 1) g.kind = 'modified';
      } else g.moved_with = to;
    }
    out = merged;
    for (const r of out) r.style_share = Math.round((r.style_share ?? 0) * 1000) / 1000;
    out.push(...joinStylePieces(own, maxArea));
    // A small compact edit can fall below both thresholds once split: a dimension retyped in small
    // type (7'-6" → 8'-0" in 8 pt at 200 dpi, ~55 changed px) is mostly within 2 px of the other
    // side's glyphs, so neither its geometry part nor its style part seeds a region. The regions of
    // all changed pixels (as found before the split) bring such an edit back where no region of the
    // split covers it, with its style share; analyze then names it by its words (a changed dimension
    // is kept) or calls it noise or style by its size and share, never a silent nothing.
    for (const w of findRegions(d, opts)) {
      if (out.some((r) => boxesTouch(r.bbox, w.bbox))) continue;
      const styled =
        bitsInBox(st.added, d.stride, w.bbox) + bitsInBox(st.removed, d.stride, w.bbox);
      w.style_share = Math.round(Math.min(1, styled / Math.max(1, w.area_px)) * 1000) / 1000;
      delete w.moved_with;
      out.push(w);
    }
  } else {
    out = findRegions(d, opts);
    for (const r of out) r.style_share = 0;
  }
  const an = d.annotations;
  if (an)
    for (const r of out) {
      const on =
        (an.a ? andBitsInBox(d.removed, an.a, d.stride, r.bbox) : 0) +
        (an.b ? andBitsInBox(d.added, an.b, d.stride, r.bbox) : 0);
      r.annotation_share = Math.round(Math.min(1, on / Math.max(1, r.area_px)) * 1000) / 1000;
    }
  if (d.fills && d.fills.added_px + d.fills.removed_px > 0) {
    const base = out.length;
    const fills = findRegions(
      { ...d, added: d.fills.added, removed: d.fills.removed },
      { ...opts, ...FILL_REGION_OPTIONS },
    );
    for (const r of fills) {
      r.layer = 'fill';
      if (r.moved_with !== undefined) r.moved_with += base;
      out.push(r);
    }
  }
  return out;
}

/** Style pieces at most this far apart (px) may be one change (joinStylePieces): 1/3 in at 200 dpi. */
export const STYLE_JOIN_PX = 64;

/**
 * Style pieces of one element as one change (issue 17: a list with one entry per real change). A
 * line or outline redrawn with another pen comes out of findRegions in pieces — where too few of its
 * pixels changed between them to seed a block, or cut where a large area of changes was split into
 * tiles — and each piece stood alone in the list (barber A201's elevation outline: five style
 * changes along it; A103's grid line at x 2372: three, one a tile). Two standalone style regions at
 * most STYLE_JOIN_PX apart are one when their joined box stays thin beside them (at most 1.5 times
 * their boxes together: pieces of one line) or small (at most a twelfth of the largest region
 * allowed, the size of findRegions' tiles: pieces of one drawing's outline). Joined until none
 * joins; counts add up, the kind follows from them, the style share stays 1.
 */
export function joinStylePieces(pieces: ChangeRegion[], maxArea: number): ChangeRegion[] {
  const list = pieces.map((r) => ({ ...r, bbox: { ...r.bbox } }));
  const area = (b: BBox) => b.width * b.height;
  const gap = (a: BBox, b: BBox) =>
    Math.max(
      0,
      Math.max(a.x, b.x) - Math.min(a.x + a.width, b.x + b.width),
      Math.max(a.y, b.y) - Math.min(a.y + a.height, b.y + b.height),
    );
  let joined = true;
  while (joined) {
    joined = false;
    for (let i = 0; i < list.length && !joined; i++)
      for (let j = i + 1; j < list.length && !joined; j++) {
        const a = list[i]!,
          b = list[j]!;
        if (gap(a.bbox, b.bbox) > STYLE_JOIN_PX) continue;
        const u = unionBox(a.bbox, b.bbox);
        if (area(u) > maxArea) continue;
        if (area(u) > 1.5 * (area(a.bbox) + area(b.bbox)) && area(u) > maxArea / 12) continue;
        const added = a.added_px + b.added_px,
          removed = a.removed_px + b.removed_px,
          total = added + removed;
        const fa = total > 0 ? added / total : 0;
        list[i] = {
          ...a,
          bbox: u,
          area_px: a.area_px + b.area_px,
          added_px: added,
          removed_px: removed,
          kind: fa >= 0.9 ? 'added' : fa <= 0.1 ? 'removed' : 'modified',
          confidence: Math.max(a.confidence, b.confidence),
        };
        list.splice(j, 1);
        joined = true;
      }
  }
  return list;
}

/** Set bits of a packed mask (bit x & 31 of word y·stride + x>>5) inside `box`. */
function bitsInBox(
  m: Uint32Array,
  stride: number,
  box: { x: number; y: number; width: number; height: number },
): number {
  let n = 0;
  const x1 = box.x + box.width;
  for (let y = box.y; y < box.y + box.height; y++) {
    const row = y * stride;
    for (let x = box.x; x < x1;) {
      const w = m[row + (x >> 5)]!;
      const lo = x & 31;
      const hi = Math.min(32, lo + (x1 - x));
      // Bits lo..hi-1 of this word.
      const span = hi - lo === 32 ? w : (w >>> lo) & ((1 << (hi - lo)) - 1);
      if (span !== 0) n += popcount32(span);
      x += hi - lo;
    }
  }
  return n;
}

/** Set bits of `m1 & m2` inside `box` (bitsInBox of the intersection, without making it). */
function andBitsInBox(
  m1: Uint32Array,
  m2: Uint32Array,
  stride: number,
  box: { x: number; y: number; width: number; height: number },
): number {
  let n = 0;
  const x1 = box.x + box.width;
  for (let y = box.y; y < box.y + box.height; y++) {
    const row = y * stride;
    for (let x = box.x; x < x1;) {
      const w = m1[row + (x >> 5)]! & m2[row + (x >> 5)]!;
      const lo = x & 31;
      const hi = Math.min(32, lo + (x1 - x));
      const span = hi - lo === 32 ? w : (w >>> lo) & ((1 << (hi - lo)) - 1);
      if (span !== 0) n += popcount32(span);
      x += hi - lo;
    }
  }
  return n;
}

/** The smallest box holding both. */
function unionBox(a: BBox, b: BBox): BBox {
  const x0 = Math.min(a.x, b.x),
    y0 = Math.min(a.y, b.y);
  const x1 = Math.max(a.x + a.width, b.x + b.width),
    y1 = Math.max(a.y + a.height, b.y + b.height);
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

function boxesTouch(
  a: { x: number; y: number; width: number; height: number },
  b: { x: number; y: number; width: number; height: number },
): boolean {
  return (
    a.x <= b.x + b.width && b.x <= a.x + a.width && a.y <= b.y + b.height && b.y <= a.y + a.height
  );
}

export const _internal = { countIn, boxGap };
