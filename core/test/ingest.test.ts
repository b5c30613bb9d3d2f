import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { download, startTestService, type TestService } from './harness';
import { uploadDrawing as upload, waitForJob } from './flows';

// End to end over HTTPS: upload a real drawing set, create the drawing, let the `process` job run
// in the worker pool, and read back sheets and blocks.

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => {
  await t.stop();
});

async function uploadDrawing(
  t: TestService,
  projectId: string,
  file: string | Buffer,
  name: string,
  contentType?: string,
) {
  const drawing = await upload(t, projectId, file, name, contentType ? { contentType } : {});
  expect(drawing.status).toBe('Processing');
  expect(drawing.job_id).toMatch(/^job_/);
  return drawing;
}

describe('drawing processing', () => {
  it('turns the beam proposal set into sheets S101…S300 with blocks, images and progress', async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Beam proposal' } });
    const drawing = await uploadDrawing(
      t,
      project.body.id,
      '20190601_beam-proposal_5-sheets.pdf',
      'Beam proposal 06-01',
    );
    const job = await waitForJob(t, drawing.job_id);
    expect(job.status).toBe('Completed');
    expect(job.type).toBe('process');
    expect(job.progress).toEqual({ completed: 5, total: 5 });
    const d = await t.request('GET', `/v1/drawings/${drawing.id}`);
    expect(d.body).toMatchObject({ status: 'Ready', sheet_count: 5 });

    const sheets = await t.request('GET', `/v1/sheets?drawing_id=${drawing.id}&limit=100`);
    const byIndex = [...sheets.body.data].sort((a, b) => a.index - b.index);
    expect(byIndex.map((s: { sheet_number: string }) => s.sheet_number)).toEqual([
      'S101',
      'S102',
      'S103',
      'S150',
      'S300',
    ]);
    for (const s of byIndex) {
      expect(s.discipline).toBe('structural');
      expect(s.text_source).toBe('vector');
      expect(s.dpi).toBeGreaterThanOrEqual(150);
      expect(s.width).toBeGreaterThan(s.height); // 34x22 landscape
      const img = await t.request('GET', s.uri, { key: null });
      expect(img.status).toBe(200);
      expect(img.headers['content-type']).toBe('image/png');
      const thumb = await t.request('GET', s.thumbnail_uri, { key: null });
      expect(thumb.status).toBe(200);
    }
    // Deep-zoom tiles of a sheet image, under the image's own signature.
    const s0 = byIndex[0];
    const maxZoom = Math.ceil(Math.log2(Math.max(s0.width, s0.height) / 512));
    const tileUrl = (z: number, x: number, y: number) =>
      String(s0.uri).replace('?', `/tiles/${z}/${x}/${y}.webp?`);
    for (const [z, x, y] of [
      [0, 0, 0],
      [maxZoom, 0, 0],
      [maxZoom, 1, 1],
    ]) {
      const tile = await t.request('GET', tileUrl(z!, x!, y!), { key: null });
      expect(tile.status).toBe(200);
      expect(tile.headers['content-type']).toBe('image/webp');
    }
    // tiles.json (contract §5): a vector page goes 4 levels (16x) past the stored image, its deep
    // tiles rendered from the PDF page (in colour); past max_zoom is outside the pyramid.
    const described = await t.request('GET', String(s0.uri).replace('?', '/tiles.json?'), {
      key: null,
    });
    expect(described.status).toBe(200);
    expect(described.body).toEqual({
      tile_size: 512,
      width: s0.width,
      height: s0.height,
      native_zoom: maxZoom,
      max_zoom: maxZoom + 4,
    });
    const deep = await t.request('GET', tileUrl(maxZoom + 4, 60, 40), { key: null });
    expect(deep.status).toBe(200);
    expect(deep.headers['content-type']).toBe('image/webp');
    const meta = await sharp(await download(t, tileUrl(maxZoom + 4, 60, 40))).metadata();
    expect([meta.width, meta.height, meta.channels]).toEqual([512, 512, 3]);
    const past = await t.request('GET', tileUrl(maxZoom + 5, 0, 0), { key: null });
    expect(past.status).toBe(404);
    expect(past.body.detail).toContain(`levels 0–${maxZoom + 4}`);
    expect(
      (
        await t.request(
          'GET',
          tileUrl(0, 0, 0).replace(/signature=[^&]+/, 'signature=' + 'A'.repeat(43)),
          { key: null },
        )
      ).status,
    ).toBe(403);
    const blocks = await t.request(
      'GET',
      `/v1/blocks?sheet_id=${byIndex[0].id}&limit=100&expand=sheet.drawing`,
    );
    expect(blocks.body.data.length).toBeGreaterThanOrEqual(2);
    expect(blocks.body.data.some((b: { type: string }) => b.type === 'TitleBlock')).toBe(true);
    expect(blocks.body.data[0].sheet.drawing.id).toBe(drawing.id);
    const crop = await t.request('GET', blocks.body.data[0].uri, { key: null });
    expect(crop.status).toBe(200);

    // A person's correction wins over extraction.
    const patched = await t.request('PATCH', `/v1/sheets/${byIndex[1].id}`, {
      body: { title: 'FRAMING (checked)' },
    });
    expect(patched.body.title).toBe('FRAMING (checked)');
    expect(patched.body.sheet_number).toBe('S102');
  }, 300_000);

  it('reads a scanned sheet (a PNG without a text layer) with offline OCR', async () => {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="3300" height="2100">
      <rect width="100%" height="100%" fill="white"/>
      <rect x="40" y="40" width="3220" height="2020" fill="none" stroke="black" stroke-width="6"/>
      <rect x="2700" y="40" width="560" height="2020" fill="none" stroke="black" stroke-width="6"/>
      <text x="2740" y="1700" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="60" font-weight="bold">ROOF FRAMING</text>
      <text x="2740" y="1950" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="150" font-weight="bold">S-201</text>
      <path d="M300 300 H2400 V1800 H300 Z M600 300 V1800 M900 300 V1800" fill="none" stroke="black" stroke-width="4"/>
    </svg>`;
    const png = await sharp(Buffer.from(svg))
      .toColourspace('b-w')
      .withMetadata({ density: 150 })
      .png()
      .toBuffer();
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Scans' } });
    const drawing = await uploadDrawing(t, project.body.id, png, 'scan', 'image/png');
    const job = await waitForJob(t, drawing.job_id, 180_000);
    expect(job.status, JSON.stringify(job.error)).toBe('Completed');
    const sheets = await t.request('GET', `/v1/sheets?drawing_id=${drawing.id}`);
    expect(sheets.body.data).toHaveLength(1);
    expect(sheets.body.data[0]).toMatchObject({
      text_source: 'ocr',
      sheet_number: 'S-201',
      discipline: 'structural',
      dpi: 150,
    });
  }, 240_000);

  it('ends a corrupt file as Failed with a precise error, and the service carries on', async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Bad inputs' } });
    const garbage = Buffer.concat([
      Buffer.from('%PDF-1.7\n'),
      Buffer.alloc(5000, 0x41),
      Buffer.from('\n%%EOF\n'),
    ]);
    const drawing = await uploadDrawing(t, project.body.id, garbage, 'garbage');
    const job = await waitForJob(t, drawing.job_id, 60_000);
    expect(job.status).toBe('Failed');
    expect(job.error.code).toBe('corrupt_file');
    expect(job.error.detail.length).toBeGreaterThan(10);
    const d = await t.request('GET', `/v1/drawings/${drawing.id}`);
    expect(d.body.status).toBe('Failed');
    expect((await t.request('GET', '/v1/projects')).status).toBe(200);
  }, 120_000);

  it('refuses a drawing whose file has no bytes yet, and ids of other organizations', async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Pending' } });
    const file = await t.request('POST', '/v1/files', {
      body: { project_id: project.body.id, filename: 'x.pdf', content_type: 'application/pdf' },
    });
    const res = await t.request('POST', '/v1/drawings', {
      body: { project_id: project.body.id, name: 'x', file_id: file.body.id },
    });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('conflict');
    const other = await t.newOrgKey('Other org');
    const foreign = await t.request('POST', '/v1/drawings', {
      body: { project_id: project.body.id, name: 'x', file_id: file.body.id },
      key: other,
    });
    expect(foreign.status).toBe(404);
  });
});
