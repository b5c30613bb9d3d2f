import { describe, expect, it } from 'vitest';
import { warmUpCompare, warmupRevision, warmUpWorker } from './worker-warmup';

describe('worker warm-up', () => {
  it('ingests the generated sheet, then compares it with its edited copy and finds the edits', async () => {
    const r = await warmUpWorker(200);
    expect(r.ingest.paintedImages).toBeGreaterThan(0);
    expect(r.ingest.sheetNumber).toBe('A-101');
    // Moved (+13, -7) px and scaled 1.002: registered with confidence, and the three edits (a box
    // drawn, an area erased, a line added) found as regions.
    expect(r.compare.confidence).toBeGreaterThan(0.9);
    expect(r.compare.regions).toBe(3);
    expect(r.compare.score).toBeGreaterThan(0.95);
    expect(r.compare.score).toBeLessThan(1);
  }, 60_000);

  it('the compare step alone renders its own sheet (a worker that skipped the ingest step)', async () => {
    const c = await warmUpCompare(150);
    expect(c.regions).toBe(3);
  }, 60_000);

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
