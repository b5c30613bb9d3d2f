import { describe, expect, it } from 'vitest';
import { workerBuffersKept } from './compare-tasks';
import { COMPARE_WARMUP_PASSES, workerWarmupSteps } from './warmup-steps';
import { warmUpCompare, warmupRevision, warmUpWorker } from './worker-warmup';

/**
 * Regions of the warm-up pair: the fill added, the line work under it, the area erased, and the line
 * added — one region, though it crosses old lines (its parts along them are style slivers that join
 * the geometry pieces between them: regions.ts, findLayerRegions).
 */
const WARMUP_REGIONS = 4;

describe('worker warm-up', () => {
  it('ingests the generated sheet, then compares it with its edited copy and finds the edits', async () => {
    const r = await warmUpWorker(200);
    expect(r.ingest.paintedImages).toBeGreaterThan(0);
    expect(r.ingest.sheetNumber).toBe('A-101');
    // Moved (+13, -7) px and scaled 1.002: registered with confidence, and the three edits found: the
    // solid box drawn is a fill added (layers.ts) and, apart from it, the line work it covers
    // removed; the area erased is removed; the line added is added, one region where it crosses old
    // lines (see WARMUP_REGIONS).
    expect(r.compare.confidence).toBeGreaterThan(0.9);
    expect(r.compare.regions).toBe(WARMUP_REGIONS);
    expect(r.compare.score).toBeGreaterThan(0.95);
    expect(r.compare.score).toBeLessThan(1);
  }, 60_000);

  it('the compare step alone renders its own sheet (a worker that skipped the ingest step)', async () => {
    const c = await warmUpCompare(150);
    expect(c.regions).toBe(WARMUP_REGIONS);
  }, 60_000);

  it('the compare passes share one pair of sheets, made by the first pass run and let go after the last', async () => {
    for (let pass = 1; pass <= 3; pass++) {
      const c = await warmUpCompare(150, pass, 3);
      expect(c.regions).toBe(WARMUP_REGIONS);
      // The compare buffers are kept between the passes, and let go after the last (ingest tasks
      // would hold them beside their PDFium heap).
      expect(workerBuffersKept()).toBe(pass < 3);
    }
    // After the last pass the pair is gone: the next pass makes it again (its time includes the render).
    const again = await warmUpCompare(150, 1, 2);
    const kept = await warmUpCompare(150, 2, 2);
    expect(again.regions).toBe(WARMUP_REGIONS);
    expect(kept.regions).toBe(WARMUP_REGIONS);
    expect(again.ms).toBeGreaterThan(kept.ms);
  }, 60_000);

  it('the pool steps: the ingest step, then one step per compare pass', () => {
    const steps = workerWarmupSteps(200);
    expect(COMPARE_WARMUP_PASSES).toBeGreaterThan(1);
    expect(steps).toEqual([
      { task: 'worker.warmup.ingest', args: { dpi: 200 } },
      ...Array.from({ length: COMPARE_WARMUP_PASSES }, (_, i) => ({
        task: 'worker.warmup.compare',
        args: { dpi: 200, pass: i + 1, passes: COMPARE_WARMUP_PASSES },
      })),
    ]);
  });

  it('the revision is the sheet moved and edited, the same every time', () => {
    const w = 400;
    const h = 300;
    const a = { width: w, height: h, data: new Uint8Array(w * h).fill(255) };
    a.data[150 * w + 200] = 0; // one dot near the centre
    const b = warmupRevision(a);
    expect(b.data[(150 - 7) * w + 200 + 13]).toBe(0); // moved (+13, -7)
    expect(b.data[Math.floor(0.1 * h + 1) * w + Math.floor(0.1 * w + 1)]).toBe(0); // the box drawn
    expect(Buffer.from(warmupRevision(a).data).equals(Buffer.from(b.data))).toBe(true);
  });
});
