import { describe, expect, it } from 'vitest';
import { scanPdfStreams } from '../input/pdf-stream-scan';
import { buildWarmupSheet } from '../input/warmup-sheet';
import { WARMUP_RASTER_ROUNDS, warmUp } from './warmup';

describe('worker warm-up', () => {
  it('takes the generated scanned sheet through the painter and the finish step', async () => {
    for (const dpi of [200, 150]) {
      const r = await warmUp(dpi);
      // All 24 tiles are painted (enlarged 2x at any dpi), in every raster round: the painter's
      // loops are what a worker must have compiled before its first scanned sheet.
      expect(r.paintedImages).toBe(24 * WARMUP_RASTER_ROUNDS);
      expect(r.sheetNumber).toBe('A-101');
      expect(r.dpi).toBe(dpi);
    }
  }, 60_000);

  it('builds the same bytes every time, which pass the stream scan', async () => {
    const a = buildWarmupSheet(200);
    expect(Buffer.from(a).equals(Buffer.from(buildWarmupSheet(200)))).toBe(true);
    const report = await scanPdfStreams(a, { maxPages: 1, maxPixels: 50_000_000 });
    expect(report.inflated).toBe(25); // 24 tiles and the content stream
  });
});
