import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../domain/errors';
import { buildFlateBombPdf, buildPdf } from '../vision/input/synthetic-inputs';
import { bandCount, bandRows, ingestPageInPool, MIN_BAND_ROWS } from './ingest-in-pool';
import { createWorkerPool, type WorkerPool } from './worker-pool';
import type { IngestSource } from './worker-tasks';

const FIXTURES = fileURLToPath(new URL('../../fixtures/drawings/', import.meta.url));
const source = (name: string): IngestSource => ({
  path: FIXTURES + name,
  bytesKey: name,
  contentType: 'application/pdf',
  maxPages: 100,
  maxPixels: 300_000_000,
});

const pools: WorkerPool[] = [];
function pool(size: number): WorkerPool {
  const p = createWorkerPool({ size });
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

async function pixels(png: Uint8Array): Promise<Buffer> {
  return sharp(png).raw().toBuffer();
}

describe('band layout', () => {
  it('one band per worker, at most 4, none shorter than MIN_BAND_ROWS', () => {
    expect(bandCount(1, 2200)).toBe(1);
    expect(bandCount(2, 2200)).toBe(2);
    expect(bandCount(8, 6800)).toBe(4);
    expect(bandCount(4, MIN_BAND_ROWS * 2 + 1)).toBe(2);
    expect(bandCount(4, 100)).toBe(1);
  });

  it('a page shares the pool with the pages of its drawing still to start', () => {
    // While there is a page for every worker, each page renders whole on one worker.
    expect(bandCount(2, 2200, 9)).toBe(1);
    expect(bandCount(2, 2200, 2)).toBe(1);
    // The last page takes the whole pool.
    expect(bandCount(2, 2200, 1)).toBe(2);
    expect(bandCount(4, 6800, 3)).toBe(1);
    expect(bandCount(4, 6800, 2)).toBe(2);
    expect(bandCount(4, 6800, 1)).toBe(4);
    // Nonsense counts fall back to one page left.
    expect(bandCount(2, 2200, 0)).toBe(2);
  });

  it('bands cover every row once, in order', () => {
    for (const [height, n] of [
      [2200, 2],
      [2201, 2],
      [4401, 3],
      [1000, 4],
      [7, 1],
    ] as const) {
      const bands = bandRows(height, n);
      expect(bands).toHaveLength(n);
      let next = 0;
      for (const b of bands) {
        expect(b.top).toBe(next);
        expect(b.rows).toBeGreaterThan(0);
        next = b.top + b.rows;
      }
      expect(next).toBe(height);
    }
  });
});

describe('ingestPageInPool', () => {
  it('a page rendered in bands by 2 workers is the page 1 worker makes: same image, text, metadata and blocks', async () => {
    const name = '20130718_barber-house_set_9-sheets.pdf';
    const results = [];
    for (const size of [1, 2]) {
      const p = pool(size);
      const info = await p.run('ingest.open', { ...source(name), dpi: 200 });
      expect(info.pages).toHaveLength(9);
      expect(info.pages[1]).toEqual({ width: 3400, height: 2200 });
      results.push(
        await ingestPageInPool(
          p,
          source(name),
          { index: 1, dpi: 200, size: info.pages[1] },
          'vector',
        ),
      );
    }
    const [one, two] = results as [(typeof results)[0], (typeof results)[0]];
    expect(two.metadata.sheet_number).toBe('A103');
    expect(two.textSource).toBe('vector');
    expect({ ...two, sheetPng: 0, thumbnailWebp: 0, blocks: 0 }).toEqual({
      ...one,
      sheetPng: 0,
      thumbnailWebp: 0,
      blocks: 0,
    });
    expect((await pixels(two.sheetPng)).equals(await pixels(one.sheetPng))).toBe(true);
    expect(two.blocks.map((b) => ({ ...b, png: 0 }))).toEqual(
      one.blocks.map((b) => ({ ...b, png: 0 })),
    );
    expect(two.blocks.length).toBeGreaterThan(0);

    // The whole-page path (progressive render, one worker) reads the same sheet.
    const whole = await pool(1).run('ingest.page', { ...source(name), index: 1, dpi: 200 });
    expect(whole.metadata).toEqual(two.metadata);
    expect(whole.text).toEqual(two.text);
  });

  it('while the drawing has a page left for every worker, a page renders whole on one worker', async () => {
    const name = '20130718_barber-house_set_9-sheets.pdf';
    const p = pool(2);
    const tasks: string[] = [];
    const counting: Pick<WorkerPool, 'run' | 'size'> = {
      size: p.size,
      run: ((task: string, ...rest: unknown[]) => {
        tasks.push(task);
        return (p.run as (...a: unknown[]) => unknown)(task, ...rest);
      }) as WorkerPool['run'],
    };
    const info = await p.run('ingest.open', { ...source(name), dpi: 100 });
    const sheets = [];
    for (const pagesLeft of [2, 1]) {
      tasks.length = 0;
      sheets.push(
        await ingestPageInPool(
          counting,
          source(name),
          { index: 2, dpi: 100, size: info.pages[2], pagesLeft },
          'vector',
        ),
      );
      expect(tasks.filter((t) => t === 'ingest.band')).toHaveLength(pagesLeft === 2 ? 1 : 2);
    }
    const [whole, banded] = sheets as [(typeof sheets)[0], (typeof sheets)[0]];
    expect(banded.metadata.sheet_number).toBe(whole.metadata.sheet_number);
    expect((await pixels(banded.sheetPng)).equals(await pixels(whole.sheetPng))).toBe(true);
  });

  it('a band past its time limit fails the page with processing_timeout; the pool carries on', async () => {
    const name = '20190601_beam-proposal_5-sheets.pdf'; // ~1 s a page at 200 dpi
    const p = pool(2);
    const info = await p.run('ingest.open', { ...source(name), dpi: 200 });
    const err = await ingestPageInPool(
      p,
      source(name),
      { index: 0, dpi: 200, size: info.pages[0] },
      'vector',
      undefined,
      150,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      code: 'processing_timeout',
      detail: expect.stringMatching(/^Rendering page 1 did not finish within 0\.15 s; /),
    });
    expect(p.stats().timedOut).toBeGreaterThanOrEqual(1);
    const next = await ingestPageInPool(
      p,
      source('20150129_A-101_first-floor.pdf'),
      { index: 0, dpi: 100, size: { width: 1700, height: 1100 } },
      'vector',
    );
    expect(next.metadata.sheet_number).toBe('A-101');
  });

  it('a raster image or a page over the pixel limit goes the whole-page way', async () => {
    const p = pool(2);
    const name = '20150129_A-101_first-floor.pdf';
    const err = await ingestPageInPool(
      p,
      { ...source(name), maxPixels: 1_000_000 },
      { index: 0, dpi: 200, size: { width: 3400, height: 2200 } },
      'vector',
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'page_too_large' });
  });

  it('ingest.open always scans the streams; only the workers rendering pages after it skip the scan', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blueline-bomb-'));
    try {
      const file = path.join(dir, 'bomb.pdf');
      writeFileSync(file, buildFlateBombPdf(64 * 1024 * 1024));
      const bomb: IngestSource = {
        ...source('bomb'),
        path: file,
        bytesKey: 'bomb',
        maxPixels: 8_000_000,
      };
      const p = pool(1);
      // A caller claiming the bytes were checked does not get past the open that checks them.
      await expect(
        p.run('ingest.open', { ...bomb, streamsChecked: true, dpi: 200 }),
      ).rejects.toMatchObject({ code: 'decompression_bomb' });
      // After a successful open, page tasks carry streamsChecked and do not scan (64 MiB inflate)
      // again: a fresh worker renders the page without refusing it.
      // The first 10 rows of the page at 50 dpi (425 x 550 px).
      const band = {
        ...bomb,
        index: 0,
        dpi: 50,
        top: 0,
        rows: 10,
        pixels: new SharedArrayBuffer(425 * 550),
        withText: false,
      };
      const info = await pool(1).run('ingest.band', { ...band, streamsChecked: true });
      expect(info.raster).toMatchObject({ width: 425, height: 550 });
      await expect(pool(1).run('ingest.band', band)).rejects.toMatchObject({
        code: 'decompression_bomb',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a page whose size cannot be read does not fail the open: that page fails alone, with its own error', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'blueline-broken-'));
    try {
      // Two pages, the second pointing at an object that does not exist.
      const text = Buffer.from(buildPdf({ pages: 2 })).toString('latin1');
      const broken = text.replace(/\/Kids \[(\d+) 0 R (\d+) 0 R\]/, '/Kids [$1 0 R 77 0 R]');
      expect(broken).not.toBe(text);
      const file = path.join(dir, 'broken.pdf');
      writeFileSync(file, Buffer.from(broken, 'latin1'));
      const src: IngestSource = { ...source('broken'), path: file, bytesKey: 'broken' };
      const p = pool(2);
      const info = await p.run('ingest.open', { ...src, dpi: 100 });
      expect(info.pages).toEqual([{ width: 850, height: 1100 }, null]);
      const first = await ingestPageInPool(
        p,
        src,
        { index: 0, dpi: 100, size: info.pages[0] },
        'vector',
      );
      expect(first).toMatchObject({ width: 850, height: 1100 });
      await expect(
        ingestPageInPool(p, src, { index: 1, dpi: 100, size: info.pages[1] }, 'vector'),
      ).rejects.toMatchObject({
        code: 'corrupt_file',
        detail: expect.stringMatching(/^Page 2 of the PDF/),
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
