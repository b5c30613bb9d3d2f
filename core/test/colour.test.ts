import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cloudBoxPx,
  cloudedPlanPdf,
  greyPlanPdf,
  redPixels,
} from '../vision/input/colour.test-support';
import { ensureOrganization, grantCredits } from '../store/repositories/organizations.repository';
import { download, startTestService, type TestService } from './harness';
import { uploadDrawing, waitForJob } from './flows';

// Colour where the drawing has it (issue 17 item 6), end to end over HTTPS: a revised plan with a red
// revision cloud is processed by the service; the sheet image, the Sheet block's image (what the
// viewer's Old and New modes show) and their tiles come back with the cloud in red. A plan without
// colour comes back with one channel.

let t: TestService;
beforeAll(async () => {
  t = await startTestService();
  await grantCredits(
    t.svc.db,
    (await ensureOrganization(t.svc.db, 'Test Org')).id,
    10_000,
    'grant',
  );
});
afterAll(async () => {
  await t.stop();
});

async function processed(projectId: string, pdf: Uint8Array, name: string) {
  const drawing = await uploadDrawing(t, projectId, Buffer.from(pdf), name);
  expect((await waitForJob(t, drawing.job_id)).status).toBe('Completed');
  const sheets = await t.request('GET', `/v1/sheets?drawing_id=${drawing.id}`);
  expect(sheets.body.data).toHaveLength(1);
  return sheets.body.data[0];
}

const tileOf = (uri: string, z: number, x: number, y: number) =>
  uri.replace('?', `/tiles/${z}/${x}/${y}.webp?`);

describe('colour in the served images', () => {
  it('serves a clouded sheet, its Sheet block and their tiles with the cloud in red', async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Colour' } });
    const sheet = await processed(project.body.id, cloudedPlanPdf(), 'Plan rev B');
    const box = cloudBoxPx(sheet.dpi, 2);

    const img = await sharp(await download(t, sheet.uri))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(img.info.channels).toBe(3);
    const red = redPixels(img.data, img.info.width, img.info.height, 3, box);
    expect(red.inside).toBeGreaterThan(5000);
    expect(red.outside).toBe(0);

    // The Sheet block (the whole-sheet overlay's block A or B) shows the same colour image.
    const blocks = await t.request('GET', `/v1/blocks?sheet_id=${sheet.id}&limit=100`);
    const whole = blocks.body.data.find((b: { type: string }) => b.type === 'Sheet');
    const wholeImg = await sharp(await download(t, whole.uri))
      .raw()
      .toBuffer();
    expect(wholeImg.equals(img.data)).toBe(true);

    // The full-resolution tile over the cloud's centre is red there too (WebP near-lossless).
    const maxZoom = Math.ceil(Math.log2(Math.max(sheet.width, sheet.height) / 512));
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    const [tx, ty] = [Math.floor(cx / 512), Math.floor(cy / 512)];
    const tileImg = await sharp(await download(t, tileOf(sheet.uri, maxZoom, tx, ty)))
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    const inTile = {
      x: box.x - tx * 512,
      y: box.y - ty * 512,
      width: box.width,
      height: box.height,
    };
    const tileRed = redPixels(tileImg.data, tileImg.info.width, tileImg.info.height, 3, inTile);
    expect(tileRed.inside).toBeGreaterThan(500);
    expect(tileRed.outside).toBe(0);
  }, 240_000);

  it("compares a grey old issue with the clouded new one: the New mode's aligned image is in colour, the overlay finds the cloud", async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Colour compare' } });
    const oldSheet = await processed(project.body.id, greyPlanPdf(), 'Plan rev A');
    const newSheet = await processed(project.body.id, cloudedPlanPdf(), 'Plan rev B');
    const res = await t.request('POST', `/v1/drawings/${newSheet.drawing_id}/compare`, {
      body: { compare_to: oldSheet.drawing_id, analyze: true },
    });
    expect(res.status).toBe(202);
    expect((await waitForJob(t, res.body.job_id)).status).toBe('Completed');
    const overlays = await t.request(
      'GET',
      `/v1/overlays?job_id=${res.body.job_id}&limit=100&expand=block_a`,
    );
    const whole = overlays.body.data.find(
      (o: { block_a: { type: string } }) => o.block_a.type === 'Sheet',
    );
    expect([whole.width, whole.height]).toEqual([oldSheet.width, oldSheet.height]);
    // New mode: B aligned into A's frame, in colour, the cloud red where it is on the sheet.
    const aligned = await sharp(await download(t, whole.aligned_b_uri))
      .raw()
      .toBuffer({ resolveWithObject: true });
    expect(aligned.info.channels).toBe(3);
    const red = redPixels(
      aligned.data,
      aligned.info.width,
      aligned.info.height,
      3,
      cloudBoxPx(oldSheet.dpi, 4),
    );
    expect(red.inside).toBeGreaterThan(5000);
    expect(red.outside).toBe(0);
    // Old mode: block A of the grey issue stays one channel.
    expect((await sharp(await download(t, whole.block_a.uri)).metadata()).channels).toBe(1);
    // The comparison (on grey) reports the cloud as an addition there.
    const changes = await t.request('GET', `/v1/changes?overlay_id=${whole.id}&limit=100`);
    const box = cloudBoxPx(oldSheet.dpi, 4);
    const added = changes.body.data.filter(
      (c: { kind: string; bbox: { x: number; y: number; width: number; height: number } }) =>
        c.kind === 'added' &&
        c.bbox.x >= box.x &&
        c.bbox.y >= box.y &&
        c.bbox.x + c.bbox.width <= box.x + box.width &&
        c.bbox.y + c.bbox.height <= box.y + box.height,
    );
    expect(added.length, JSON.stringify(changes.body.data)).toBeGreaterThan(0);
  }, 240_000);

  it('serves a sheet without colour with one channel', async () => {
    const project = await t.request('POST', '/v1/projects', { body: { name: 'Grey' } });
    const sheet = await processed(project.body.id, greyPlanPdf(), 'Plan rev A');
    const meta = await sharp(await download(t, sheet.uri)).metadata();
    expect(meta.channels).toBe(1);
  }, 240_000);
});
