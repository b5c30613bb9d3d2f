// Hashes of the compare's whole output, to show a speed change leaves the results identical: run it
// from an export of main and from the branch, then diff the two outputs.
//   node --import tsx bench/compare/output-hashes.ts [--out <data dir of prepare.ts>] [--fixtures]
// - The bench pair (bench/compare/prepare.ts, 200 and 300 dpi): compareBlockPairs (the service's
//   block compare, whole sheet as one block, all five images) twice in one process (kept buffers),
//   then changeRegions on the whole sheet. Every PNG is replaced by its SHA-1; the rest is printed whole.
// - With --fixtures: barber A102 / A103 / A202 and beam S101 (PDFium at 200 dpi, with the object
//   layers as processing stores them) through compareToPng, all five images: PNG SHA-1s, regions
//   JSON, stats, score, transform.
// One JSON line per case on stdout; compare two runs' outputs with `cmp`.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { changeRegions, compareBlockPairs } from '../../core/jobs/compare-tasks';
import { openInput, type InputDocument } from '../../core/vision/input/document';
import { compareToPng } from '../../core/vision/compare/compare-pipeline.adapter';
import { objectClassGrey } from '../../core/vision/compare/layers';
import type { PageRaster } from '../../core/vision/types';

const argv = process.argv.slice(2);
const outDir = argv.includes('--out')
  ? argv[argv.indexOf('--out') + 1]!
  : '/tmp/blueline-bench-compare';
const fixtures = argv.includes('--fixtures');
const sha = (b: Uint8Array) => createHash('sha1').update(b).digest('hex');
/** JSON with every Buffer / Uint8Array replaced by its SHA-1. */
const hashed = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) => {
    if (x && typeof x === 'object' && (x as { type?: string }).type === 'Buffer')
      return `sha1:${sha(Buffer.from((x as { data: number[] }).data))}`;
    if (x instanceof Uint8Array) return `sha1:${sha(x)}`;
    return x;
  });
const noTimings = <T extends object>(o: T) => {
  const c = { ...o } as Record<string, unknown>;
  delete c.timings_ms;
  delete c.timings;
  return c;
};

for (const dpi of [200, 300]) {
  const a = join(outDir, 'data', `base_${dpi}.png`),
    b = join(outDir, 'data', `rev_${dpi}.png`);
  const [ma, mb] = await Promise.all([sharp(a).metadata(), sharp(b).metadata()]);
  const block = (id: string, width: number, height: number) => ({
    id,
    type: 'Plan',
    identifier: null,
    title: null,
    bbox: { x: 0, y: 0, width, height },
  });
  const args = {
    a: { path: a },
    b: { path: b },
    blocksA: [block('a', ma.width!, ma.height!)],
    blocksB: [block('b', mb.width!, mb.height!)],
    skip: [],
  };
  for (let i = 0; i < 2; i++) {
    const out = await compareBlockPairs(args);
    // Buffers → hashes here: JSON.stringify calls Buffer's toJSON before the replacer sees it.
    console.log(hashed({ case: `bench ${dpi} compareBlockPairs #${i + 1}`, ...noTimings(out) }));
    if (i === 1) {
      const o = out.overlays[0]!;
      const found = await changeRegions({
        a: { path: a },
        b: { path: b },
        aBox: { x: 0, y: 0, width: ma.width!, height: ma.height! },
        sheetTransform: out.sheet!.transform,
        alignmentConfidence: o.alignment.confidence,
      });
      console.log(hashed({ case: `bench ${dpi} changeRegions`, ...found }));
    }
  }
}

if (fixtures) {
  const fx = (f: string) => join(import.meta.dirname, '../../fixtures/drawings', f);
  const docs = new Map<string, InputDocument>();
  const page = async (file: string, index: number): Promise<PageRaster> => {
    let doc = docs.get(file);
    if (!doc) {
      doc = await openInput(new Uint8Array(readFileSync(fx(file))), 'application/pdf', {} as never);
      docs.set(file, doc);
    }
    return (await doc.readPage(index, { dpi: 200 })).raster;
  };
  const classesOf = (r: PageRaster) =>
    r.lineWork
      ? objectClassGrey(r.width, r.height, r.lineWork, r.fillWork, r.annotWork)
      : undefined;
  const barber = [
    '20130718_barber-house_set_9-sheets.pdf',
    '20130724_barber-house_set_9-sheets.pdf',
  ];
  const beam = ['20190601_beam-proposal_5-sheets.pdf', '20190602_beam-proposal_5-sheets.pdf'];
  const cases: [string, string[], number][] = [
    ['A102', barber, 0],
    ['A103', barber, 1],
    ['A202', barber, 3],
    ['S101', beam, 0],
  ];
  for (const [name, [fa, fb], index] of cases) {
    const [A, B] = [await page(fa!, index), await page(fb!, index)];
    const r = await compareToPng(A, B, {
      images: ['combined', 'combined_colorblind', 'additions', 'deletions', 'aligned_b'],
      lineWork: { a: classesOf(A), b: classesOf(B) },
    });
    console.log(
      hashed({
        case: name,
        width: r.width,
        height: r.height,
        transform: r.transform,
        alignment: r.alignment,
        score: r.score,
        stats: r.stats,
        regions: r.regions,
        // Sorted: the encodes finish in any order.
        pngs: Object.fromEntries(
          Object.entries(r.pngs)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, sha(v!)]),
        ),
      }),
    );
  }
  for (const d of docs.values()) await d.close();
}
