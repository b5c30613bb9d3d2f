import { afterAll, describe, expect, it } from 'vitest';
import type { BBox, GreyImage, TextItem } from '../types';
import { blockTypeFromTitle, segmentBlocks, type Block } from './blocks';
import { openFixture, type TestDocument } from './test-support';
import { extractSheetMetadata } from './title-block';

function item(text: string, x: number, y: number, fontSize: number): TextItem {
  return { text, x, y, width: text.length * fontSize * 0.6, height: fontSize, fontSize, angle: 0 };
}

function overlapArea(a: BBox, b: BBox): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

function inside(inner: BBox, outer: BBox, tol = 0): boolean {
  return (
    inner.x >= outer.x - tol &&
    inner.y >= outer.y - tol &&
    inner.x + inner.width <= outer.x + outer.width + tol &&
    inner.y + inner.height <= outer.y + outer.height + tol
  );
}

describe('blockTypeFromTitle', () => {
  it.each([
    ['1 FOUNDATION DETAIL', 'Detail'],
    ['SECTION A', 'Section'],
    ['DOOR SCHEDULE', 'Schedule'],
    ['North Elevation', 'Elevation'],
    ['FIRST FLOOR PLAN', 'Plan'],
    ['FRAMING - 1ST FLOOR', 'Plan'],
    ['KEY PLAN', 'KeyPlan'],
    ['GENERAL NOTES', 'Notes'],
    ['SYMBOL LEGEND', 'Legend'],
    ['PLUMBING RISER DIAGRAM', 'Diagram'],
    ['DETAIL - WALL SECTION - EAST WALL', 'Detail'],
    ['2nd Floor - Perspective_1', 'Other'],
  ] as const)('%s → %s', (title, type) => {
    expect(blockTypeFromTitle(title)).toBe(type);
  });
  it('null when no word names a type', () => {
    expect(blockTypeFromTitle('ANCHOR BOLT PLACEMENT')).toBeNull();
    expect(blockTypeFromTitle(null)).toBeNull();
  });
});

describe('segmentBlocks on a synthetic sheet (1000 x 600 px @ 50 dpi)', () => {
  const W = 1000;
  const H = 600;
  const dpi = 50;
  const titleBlockBox: BBox = { x: 850, y: 0, width: 150, height: H };

  // Two drawings (filled rectangles of ink) with their titles underneath, and a sheet border.
  function sheet(): GreyImage {
    const data = new Uint8Array(W * H).fill(255);
    const rect = (x0: number, y0: number, x1: number, y1: number) => {
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) data[y * W + x] = 0;
    };
    rect(60, 60, 360, 360); // view 1
    rect(480, 80, 780, 300); // view 2
    rect(10, 10, 990, 12); // border
    rect(10, 588, 990, 590);
    rect(10, 10, 12, 590);
    rect(850, 10, 852, 590); // title strip frame
    return { width: W, height: H, data };
  }
  const items = [
    item('1', 60, 402, 14),
    item('FOUNDATION PLAN', 80, 400, 14),
    item('1/4" = 1\'-0"', 80, 418, 10),
    item('2', 480, 342, 14),
    item('WALL DETAIL', 500, 340, 14),
    item('SCALE: 3" = 1\'-0"', 500, 358, 10),
    item('A-101', 870, 540, 30),
  ];

  it('finds both views with type, identifier, title, scale and a box around their drawing', () => {
    const blocks = segmentBlocks({
      items,
      width: W,
      height: H,
      dpi,
      image: sheet(),
      titleBlockBox,
    });
    const views = blocks.filter((b) => b.type !== 'TitleBlock');
    expect(views.map((b) => [b.type, b.identifier, b.title, b.scale])).toEqual([
      ['Plan', '1', 'FOUNDATION PLAN', '1/4" = 1\'-0"'],
      ['Detail', '2', 'WALL DETAIL', '3" = 1\'-0"'],
    ]);
    const [plan, detail] = views as [Block, Block];
    expect(inside({ x: 60, y: 60, width: 300, height: 300 }, plan.bbox, 4)).toBe(true);
    expect(inside({ x: 480, y: 80, width: 300, height: 220 }, detail.bbox, 4)).toBe(true);
    expect(overlapArea(plan.bbox, detail.bbox)).toBe(0);
    expect(blocks.filter((b) => b.type === 'TitleBlock')).toHaveLength(1);
  });

  it('without an image still returns both views around their titles', () => {
    const blocks = segmentBlocks({ items, width: W, height: H, dpi, titleBlockBox });
    expect(blocks.map((b) => b.type)).toEqual(['Plan', 'Detail', 'TitleBlock']);
  });

  it('falls back to one block over the drawing area when no view is found', () => {
    const blocks = segmentBlocks({
      items: [item('ROOM 101', 300, 300, 10)],
      width: W,
      height: H,
      dpi,
      titleBlockBox,
      sheetTitle: 'SECOND FLOOR PLAN',
    });
    expect(blocks).toEqual([
      {
        type: 'Plan',
        bbox: { x: 0, y: 0, width: 850, height: H },
        identifier: null,
        title: 'SECOND FLOOR PLAN',
        scale: null,
      },
      {
        type: 'TitleBlock',
        bbox: titleBlockBox,
        identifier: null,
        title: 'SECOND FLOOR PLAN',
        scale: null,
      },
    ]);
    const other = segmentBlocks({ items: [], width: W, height: H, dpi, titleBlockBox: null });
    expect(other).toEqual([
      {
        type: 'Other',
        bbox: { x: 0, y: 0, width: W, height: H },
        identifier: null,
        title: null,
        scale: null,
      },
    ]);
  });

  it('rejects an image of the wrong size', () => {
    const image: GreyImage = { width: 10, height: 10, data: new Uint8Array(100) };
    expect(() => segmentBlocks({ items, width: W, height: H, dpi, image, titleBlockBox })).toThrow(
      /1000x600/,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Real fixtures.

const docs = new Map<string, TestDocument>();
async function page(name: string, index: number, dpi: number, render = false) {
  let d = docs.get(name);
  if (!d) {
    d = await openFixture(name);
    docs.set(name, d);
  }
  const p = await d.page(index, dpi, { render });
  const meta = extractSheetMetadata(p);
  const blocks = segmentBlocks({ ...p, titleBlockBox: meta.titleBlockBox, sheetTitle: meta.title });
  return { p, meta, blocks };
}
afterAll(async () => {
  for (const d of docs.values()) await d.close();
});

describe('fixture sheets', () => {
  it('A600: schedule blocks, with and without the rendered page', async () => {
    for (const render of [false, true]) {
      const { p, blocks } = await page('20190321_A600_schedules.pdf', 0, 30, render);
      const schedules = blocks.filter((b) => b.type === 'Schedule');
      expect(schedules.length).toBeGreaterThanOrEqual(1);
      expect(schedules.map((b) => b.title)).toContain('ROOM SCHEDULE - SIMPLIFIED');
      expect(schedules.map((b) => b.title)).toContain('WINDOW SCHEDULE - SIMPLIFIED');
      // The schedules sit in the top-left quarter of the sheet.
      for (const s of schedules) {
        expect(s.bbox.x + s.bbox.width).toBeLessThan(0.55 * p.width);
        expect(s.bbox.y + s.bbox.height).toBeLessThan(0.4 * p.height);
      }
    }
  });

  it('foundation details: Detail blocks on ASK-04, each around its own drawing', async () => {
    const { p, blocks } = await page('20190414_foundation-details_3-sheets.pdf', 2, 30, true);
    const details = blocks.filter((b) => b.type === 'Detail');
    expect(details).toHaveLength(2);
    for (const d of details) {
      expect(d.scale).toBe('3" = 1\'-0"');
      expect(d.title).toMatch(/^DETAIL - WALL SECTION - TOP OF BOAT HOUSE - (WEST|EAST) WALL$/);
      // Each detail is a tall drawing above its title: at least a third of the sheet high.
      expect(d.bbox.height).toBeGreaterThan(p.height / 3);
    }
    const west = details.find((d) => d.title?.endsWith('WEST WALL')) as Block;
    const east = details.find((d) => d.title?.endsWith('EAST WALL')) as Block;
    expect(west.bbox.x + west.bbox.width / 2).toBeLessThan(p.width / 2);
    expect(east.bbox.x + east.bbox.width / 2).toBeGreaterThan(p.width / 2);
    expect(overlapArea(west.bbox, east.bbox)).toBeLessThan(
      0.1 * Math.min(west.bbox.width * west.bbox.height, east.bbox.width * east.bbox.height),
    );
  });

  it('foundation details: ASK-02 is a Plan view; ASK-03 (no view title) gets a fallback block', async () => {
    const ask02 = (await page('20190414_foundation-details_3-sheets.pdf', 0, 30)).blocks;
    expect(ask02.find((b) => b.type === 'Plan')?.scale).toBe('3/16" = 1\'-0"');
    const ask03 = (await page('20190414_foundation-details_3-sheets.pdf', 1, 30)).blocks;
    expect(ask03.map((b) => b.type)).toEqual(['Other', 'TitleBlock']);
  });

  it('beam proposal S300: two Section views side by side', async () => {
    const { p, blocks } = await page('20190601_beam-proposal_5-sheets.pdf', 4, 30, true);
    const sections = blocks.filter((b) => b.type === 'Section');
    expect(sections.map((s) => s.identifier)).toEqual(['1', '2']);
    const [left, right] = sections as [Block, Block];
    expect(left.bbox.x + left.bbox.width).toBeLessThan(0.45 * p.width);
    expect(right.bbox.x).toBeGreaterThan(0.4 * p.width);
    // Each covers its drawing, which spans most of the sheet height above the titles.
    expect(left.bbox.height).toBeGreaterThan(0.5 * p.height);
    expect(right.bbox.height).toBeGreaterThan(0.5 * p.height);
  });

  const all: [string, number][] = [
    ['20190601_beam-proposal_5-sheets.pdf', 5],
    ['20130718_barber-house_set_9-sheets.pdf', 9],
    ['20130724_barber-house_set_9-sheets.pdf', 9],
    ['20190414_foundation-details_3-sheets.pdf', 3],
    ['20150129_A-101_first-floor.pdf', 1],
    ['20150129_A-301_building-sections.pdf', 1],
    ['20150115_ASK-003_exterior-west-wall-window-locations.pdf', 1],
  ];
  it.each(all)(
    '%s: every page has a title block block and at least one view block inside the sheet',
    async (file, n) => {
      for (let i = 0; i < n; i++) {
        const { p, blocks } = await page(file, i, 30);
        expect(blocks.filter((b) => b.type === 'TitleBlock')).toHaveLength(1);
        expect(blocks.filter((b) => b.type !== 'TitleBlock').length).toBeGreaterThanOrEqual(1);
        for (const b of blocks) {
          expect(inside(b.bbox, { x: 0, y: 0, width: p.width, height: p.height })).toBe(true);
          expect(b.bbox.width * b.bbox.height).toBeGreaterThan(0);
        }
      }
    },
  );

  it('Lake Kegonsa A-301: three Section views with their numbers', async () => {
    const { blocks } = await page('20150129_A-301_building-sections.pdf', 0, 30);
    const sections = blocks.filter((b) => b.type === 'Section');
    expect(sections.map((s) => s.identifier).sort()).toEqual(['1', '2', '3']);
    for (const s of sections) expect(s.scale).toBe('1/4" = 1\'-0"');
  });
});
