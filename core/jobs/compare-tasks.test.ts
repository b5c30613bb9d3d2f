import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import type { GreyImage } from '../vision/types';
import { compareImages } from '../vision/compare/compare';
import { diffStage } from '../vision/compare/compare-pipeline.adapter';
import {
  blankImage,
  cloneImage,
  drawGlyphs,
  drawLine,
  rng,
  strokeRect,
} from '../vision/compare/test-support';
import type { BlockInfo } from '../services/pairing';
import {
  assignRegion,
  changeRegions,
  compareBlockPairs,
  cropGrey,
  type RegionOut,
} from './compare-tasks';

// The worker side of a comparison on synthetic sheets written as PNG files: block overlays made from
// windows of the sheet images (no crops) must equal the engine on crops, and change regions must be
// reported whole and once even when a change straddles a block box or lies outside every block.

let dir: string;

async function save(img: GreyImage, name: string): Promise<string> {
  const file = path.join(dir, name);
  await sharp(img.data, { raw: { width: img.width, height: img.height, channels: 1 } })
    .toColourspace('b-w')
    .png({ compressionLevel: 1 })
    .toFile(file);
  return file;
}

const box = (x: number, y: number, width: number, height: number) => ({ x, y, width, height });

/**
 * A 1600x1000 sheet with two views (left 40..740, right 800..1400) and a title strip at the right
 * edge; B adds (1) glyphs straddling the right edge of the left view's box, (2) a rectangle in the
 * empty band between the views (outside every block), (3) grey (faint) text in the title strip.
 */
function sheets() {
  const r = rng(11);
  const a = blankImage(1600, 1000);
  strokeRect(a, 5, 5, 1590, 990, 3);
  for (let i = 0; i < 40; i++)
    drawLine(a, 60 + r() * 660, 60 + r() * 860, 60 + r() * 660, 60 + r() * 860, 2);
  for (let i = 0; i < 40; i++)
    drawLine(a, 820 + r() * 560, 60 + r() * 860, 820 + r() * 560, 60 + r() * 860, 2);
  strokeRect(a, 1450, 40, 130, 920, 2);
  const b = cloneImage(a);
  drawGlyphs(b, 700, 500, 90, 16, r); // straddles x = 740 (left view's right edge)
  strokeRect(b, 760, 200, 30, 60, 2); // between the views: outside every block
  const tmp = blankImage(100, 20);
  drawGlyphs(tmp, 2, 2, 90, 14, r);
  for (let y = 0; y < 20; y++)
    for (let x = 0; x < 100; x++)
      if (tmp.data[y * 100 + x] === 0) b.data[(880 + y) * 1600 + 1465 + x] = 185; // faint date stamp
  const blocks: BlockInfo[] = [
    { id: 'left', type: 'Plan', identifier: '1', title: 'LEFT', bbox: box(40, 40, 700, 920) },
    { id: 'right', type: 'Plan', identifier: '2', title: 'RIGHT', bbox: box(800, 40, 600, 920) },
    { id: 'tb', type: 'TitleBlock', identifier: null, title: null, bbox: box(1440, 30, 150, 940) },
  ];
  return { a, b, blocks };
}

let A: GreyImage, B: GreyImage, blocks: BlockInfo[], pathA: string, pathB: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'blueline-compare-tasks-'));
  ({ a: A, b: B, blocks } = sheets());
  pathA = await save(A, 'a.png');
  pathB = await save(B, 'b.png');
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('assignRegion', () => {
  const boxes = [
    { box: box(0, 0, 100, 100), sheetAligned: true },
    { box: box(150, 0, 100, 100), sheetAligned: true },
    { box: box(400, 0, 100, 100), sheetAligned: false },
  ];
  it('gives a straddling change to the box holding more of it, an outside one to the nearest sheet-aligned box', () => {
    expect(assignRegion(box(90, 10, 20, 10), boxes)).toBe(0); // 10 px in box 0, none in box 1
    expect(assignRegion(box(95, 10, 70, 10), boxes)).toBe(1); // 5 px in 0, 15 px in 1
    expect(assignRegion(box(110, 10, 20, 10), boxes)).toBe(0); // outside both: 10 px from 0, 20 from 1
  });
  it('skips boxes of blocks registered on their own for changes outside every box', () => {
    // 10 px right of box 1 would be nearer to box 2 (which moved on its own): box 1 gets it.
    expect(assignRegion(box(380, 10, 10, 10), boxes)).toBe(1);
    // Overlap still wins for such a box.
    expect(assignRegion(box(390, 10, 20, 10), boxes)).toBe(2);
    expect(assignRegion(box(0, 0, 1, 1), [])).toBe(-1);
  });
});

describe('compareBlockPairs (windows of the sheets, five images per pair)', () => {
  it('pairs the blocks and matches the engine on crops, with PNGs of the block size', async () => {
    const out = await compareBlockPairs({
      a: { path: pathA },
      b: { path: pathB },
      blocksA: blocks,
      blocksB: blocks,
      skip: [],
    });
    expect(out.sheet!.confidence).toBeGreaterThan(0.5);
    expect(out.overlays.map((o) => o.block_a_id).sort()).toEqual(['left', 'right', 'tb']);
    for (const o of out.overlays) {
      const bx = blocks.find((b) => b.id === o.block_a_id)!.bbox;
      expect([o.width, o.height]).toEqual([bx.width, bx.height]);
      // The same block compared the old way: crops of both sheets through the same transform.
      const t = o.transform; // block B crop px → block A crop px; here block B = block A's box
      const ref = compareImages(cropGrey(A, bx), cropGrey(B, bx), {
        skipRegistration: true,
        transform: t as [number, number, number, number, number, number],
        overlays: [],
      });
      expect(o.stats).toEqual(ref.stats);
      for (const [k, png] of Object.entries(o.png)) {
        const meta = await sharp(Buffer.from(png)).metadata();
        expect([meta.width, meta.height, meta.channels], k).toEqual([
          bx.width,
          bx.height,
          k === 'aligned_b' ? 1 : 3,
        ]);
      }
    }
    const left = out.overlays.find((o) => o.block_a_id === 'left')!;
    expect(left.score).toBeLessThan(1);
    expect(left.region_count).toBeGreaterThanOrEqual(1);
  }, 60_000);
});

describe("compareBlockPairs with the worker's kept buffers", () => {
  it('gives byte-identical results to fresh buffers, also after a compare of other sheets', async () => {
    const args = {
      a: { path: pathA },
      b: { path: pathB },
      blocksA: blocks,
      blocksB: blocks,
      skip: [],
    };
    const fresh = await compareBlockPairs(args, { keepBuffers: false });
    const first = await compareBlockPairs(args);
    // Other content through the same buffers: B against A leaves removed ink where A→B had added.
    const other = await compareBlockPairs({ ...args, a: { path: pathB }, b: { path: pathA } });
    const again = await compareBlockPairs(args);
    const view = (out: typeof fresh) =>
      out.overlays.map((o) => ({
        id: o.block_a_id,
        stats: o.stats,
        score: o.score,
        regions: o.region_count,
        png: Object.fromEntries(
          Object.entries(o.png).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
        ),
      }));
    expect(view(first)).toEqual(view(fresh));
    expect(view(again)).toEqual(view(fresh));
    // The swapped compare really differs (otherwise the check above proves nothing about reuse).
    const left = (out: typeof fresh) => out.overlays.find((o) => o.block_a_id === 'left')!;
    expect(left(other).stats).not.toEqual(left(fresh).stats);
  }, 60_000);
});

describe('sheets given as PNG bytes (the worker warm-up)', () => {
  it('compare and find regions exactly as from the files', async () => {
    const { readFileSync } = await import('node:fs');
    const bytes = (p: string) => new Uint8Array(readFileSync(p));
    const files = { a: { path: pathA }, b: { path: pathB } };
    const given = {
      a: { path: 'not a file A', png: bytes(pathA) },
      b: { path: 'not a file B', png: bytes(pathB) },
    };
    const args = { blocksA: blocks, blocksB: blocks, skip: [] };
    const view = (out: Awaited<ReturnType<typeof compareBlockPairs>>) =>
      out.overlays.map((o) => ({
        id: o.block_a_id,
        transform: o.transform,
        stats: o.stats,
        png: Buffer.from(o.png.combined).toString('base64'),
      }));
    const fromFiles = await compareBlockPairs({ ...files, ...args });
    const fromBytes = await compareBlockPairs({ ...given, ...args });
    expect(view(fromBytes)).toEqual(view(fromFiles));
    const o = fromFiles.overlays.find((x) => x.block_a_id === 'left')!;
    const regionArgs = {
      aBox: blocks[0]!.bbox,
      sheetTransform: fromFiles.sheet!.transform,
      alignmentConfidence: o.alignment.confidence,
    };
    const r1 = await changeRegions({ ...files, ...regionArgs });
    const r2 = await changeRegions({ ...given, ...regionArgs });
    expect(r2).toEqual(r1);
    expect(r1.regions.length).toBeGreaterThan(0);
  }, 60_000);
});

describe('compareBlockPairs with a block that is the whole sheet', () => {
  it('does not register the block again: that would repeat the sheet registration', async () => {
    // Many additions: the pair scores below the re-registration threshold (0.97).
    const b2 = cloneImage(B);
    for (let i = 0; i < 12; i++) strokeRect(b2, 80 + i * 100, 100 + (i % 4) * 200, 80, 80, 3);
    const pathB2 = await save(b2, 'b-many.png');
    const whole = (id: string): BlockInfo => ({
      id,
      type: 'Plan',
      identifier: null,
      title: null,
      bbox: box(0, 0, A.width, A.height),
    });
    const out = await compareBlockPairs({
      a: { path: pathA },
      b: { path: pathB2 },
      blocksA: [whole('a')],
      blocksB: [whole('b')],
      skip: [],
    });
    const o = out.overlays[0]!;
    expect(o.score).toBeLessThan(0.97);
    expect(o.alignment.method).toMatch(/^sheet:/);
    expect(out.timings_ms.refine).toBeUndefined();
    // What the skipped step would have found: the sheet's own transform.
    const st = await diffStage(
      cropGrey(A, box(0, 0, A.width, A.height)),
      cropGrey(b2, box(0, 0, A.width, A.height)),
    );
    st.transform.forEach((v, i) => expect(v).toBeCloseTo(out.sheet!.transform[i]!, 5));
    // A block smaller than the sheet with the same content is still registered on its own.
    const part = await compareBlockPairs({
      a: { path: pathA },
      b: { path: pathB2 },
      blocksA: [{ ...whole('a'), bbox: box(0, 0, A.width - 1, A.height) }],
      blocksB: [whole('b')],
      skip: [],
    });
    expect(part.timings_ms.refine).toBeGreaterThanOrEqual(0);
  }, 60_000);
});

describe('changeRegions (whole sheet, each change reported once and whole)', () => {
  const T = [1, 0, 0, 0, 1, 0];
  const siblings = () => blocks.map((b) => ({ box: b.bbox, sheetAligned: true }));
  const toSheet = (g: RegionOut, i: number) => ({
    ...g.bbox,
    x: g.bbox.x + blocks[i]!.bbox.x,
    y: g.bbox.y + blocks[i]!.bbox.y,
  });

  it('a change straddling a block edge, one between blocks and faint text in the title block', async () => {
    const all: { i: number; r: ReturnType<typeof toSheet> }[] = [];
    for (let i = 0; i < blocks.length; i++) {
      const out = await changeRegions({
        a: { path: pathA },
        b: { path: pathB },
        aBox: blocks[i]!.bbox,
        sheetTransform: T,
        alignmentConfidence: 0.9,
        siblings: siblings(),
        self: i,
      });
      for (const g of out.regions) all.push({ i, r: toSheet(g, i) });
    }
    // Exactly three changes over the three overlays.
    expect(all, JSON.stringify(all)).toHaveLength(3);
    // (1) the straddling glyphs: whole (reaching past x = 740), once, by the left view.
    const straddle = all.filter((c) => c.r.x < 740 && c.r.x + c.r.width > 745 && c.r.y > 480);
    expect(straddle.map((c) => c.i)).toEqual([0]);
    expect(straddle[0]!.r.x).toBeLessThanOrEqual(702);
    expect(straddle[0]!.r.x + straddle[0]!.r.width).toBeGreaterThanOrEqual(785);
    // (2) the rectangle between the views (x 760..790): outside both, nearest to the right view (10 px
    // against 20), reported by it in overlay pixels left of its frame (x < 0).
    const between = all.filter((c) => c.r.y < 300);
    expect(between.map((c) => c.i)).toEqual([1]);
    expect(between[0]!.r.x).toBeGreaterThanOrEqual(758);
    expect(between[0]!.r.x + between[0]!.r.width).toBeLessThanOrEqual(792);
    // (3) the faint grey text in the title strip (grey 185: below the ink threshold).
    const faint = all.filter((c) => c.i === 2);
    expect(faint).toHaveLength(1);
    expect(faint[0]!.r.x).toBeGreaterThanOrEqual(1460);
    expect(faint[0]!.r.y).toBeGreaterThanOrEqual(875);
  }, 60_000);

  it('without siblings, the changes touching the box are reported, whole', async () => {
    const out = await changeRegions({
      a: { path: pathA },
      b: { path: pathB },
      aBox: blocks[0]!.bbox,
      sheetTransform: T,
      alignmentConfidence: 0.9,
    });
    expect(out.regions).toHaveLength(1);
    const r = toSheet(out.regions[0]!, 0);
    expect(r.x + r.width).toBeGreaterThanOrEqual(785); // not cut at 740
  }, 60_000);

  it('reports nothing when the alignment is not trusted', async () => {
    const out = await changeRegions({
      a: { path: pathA },
      b: { path: pathB },
      aBox: blocks[0]!.bbox,
      sheetTransform: T,
      alignmentConfidence: 0.1,
    });
    expect(out.regions).toEqual([]);
  });
});
