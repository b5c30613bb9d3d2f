import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { openInput } from '../vision/input/document';
import { rgbToGrey } from '../vision/input/grey-resample';
import { decodeGrey } from '../vision/compare/encode.adapter';
import { ingestPage } from '../vision/ingest/ingest-page';
import { decodeForTiles, renderTile, TILE_SIZE, tileGeometry } from '../vision/tiles/tiles.adapter';

// Uploaded raster images keep their colour as PDF renders do (issue 17 item 6): the sheet image, its
// crops and thumbnail in colour when the image has colour, the comparison's grey derived from the
// same pixels; grey images (one channel, or RGB without colour) stay one channel, read exactly as
// before.

const W = 1200;
const H = 800;
const RED = { x: 300, y: 200, w: 240, h: 160 };
const opts = { dpi: 150, maxPixels: 50_000_000, ocr: false };

/** A drawing on paper: black frame and lines, and a red rectangle (a revision cloud's colour). */
function drawing(red: boolean): Buffer {
  const rgb = Buffer.alloc(W * H * 3, 255);
  const set = (x: number, y: number, r: number, g: number, b: number) => {
    const i = (y * W + x) * 3;
    rgb[i] = r;
    rgb[i + 1] = g;
    rgb[i + 2] = b;
  };
  for (let x = 20; x < W - 20; x++)
    for (const y of [20, 21, 22, H - 23, H - 22, H - 21]) set(x, y, 0, 0, 0);
  for (let y = 20; y < H - 20; y++)
    for (const x of [20, 21, 22, W - 23, W - 22, W - 21]) set(x, y, 0, 0, 0);
  for (let x = 100; x < 1000; x++) for (let y = 600; y < 604; y++) set(x, y, 40, 40, 40);
  for (let y = RED.y; y < RED.y + RED.h; y++)
    for (let x = RED.x; x < RED.x + RED.w; x++)
      if (red) set(x, y, 220, 20, 30);
      else set(x, y, 120, 120, 120);
  return rgb;
}

const raw = { raw: { width: W, height: H, channels: 3 as const } };
const png = async (red: boolean) =>
  new Uint8Array(await sharp(drawing(red), raw).png({ compressionLevel: 1 }).toBuffer());

async function decoded(image: Uint8Array) {
  const { data, info } = await sharp(image).raw().toBuffer({ resolveWithObject: true });
  return { data, ...info };
}

/** Pixels inside `box` (of an image scaled by `s`) that are clearly red, and red pixels outside it. */
function reds(px: { data: Buffer; width: number; height: number; channels: number }, s = 1) {
  let inside = 0;
  let outside = 0;
  for (let y = 0; y < px.height; y++)
    for (let x = 0; x < px.width; x++) {
      const i = (y * px.width + x) * px.channels;
      const [r, g, b] = [px.data[i]!, px.data[i + 1]!, px.data[i + 2]!];
      if (!(r > 150 && g < 90 && b < 90)) continue;
      const inBox =
        x >= RED.x * s - 2 &&
        x < (RED.x + RED.w) * s + 2 &&
        y >= RED.y * s - 2 &&
        y < (RED.y + RED.h) * s + 2;
      if (inBox) inside++;
      else outside++;
    }
  return { inside, outside };
}

describe('uploaded images in colour', () => {
  it('a colour PNG keeps its colour in the sheet image, crops and thumbnail; the grey is the one the comparison decodes', async () => {
    const doc = await openInput(await png(true), 'image/png', {});
    try {
      const page = await ingestPage(doc, 0, { ...opts, colour: true });
      expect(page.colour).toBe(true);
      const sheet = await decoded(page.sheetPng);
      expect(sheet.channels).toBe(3);
      const red = reds(sheet);
      expect(red.inside).toBe(RED.w * RED.h);
      expect(red.outside).toBe(0);
      for (const b of page.blocks) expect((await sharp(b.png).metadata()).channels).toBe(3);
      const thumb = await decoded(page.thumbnailWebp);
      expect(thumb.channels).toBe(3);
      expect(reds(thumb, thumb.width / W).inside).toBeGreaterThan(0);
      // Its deep-zoom tiles (cut from the stored sheet image) are in colour: the tile over the red.
      const img = await decodeForTiles(Buffer.from(page.sheetPng));
      const z = tileGeometry(img.width, img.height).nativeZoom;
      const tile = await decoded(await renderTile(img, z, 0, 0));
      expect(tile.channels).toBe(3);
      // Tile (0, 0) holds the red rectangle's columns up to TILE_SIZE.
      expect(reds(tile).inside).toBeGreaterThan(0.9 * (TILE_SIZE - RED.x) * RED.h);
      // The comparison reads the stored colour sheet back as the grey the ingest worked on.
      const read = await doc.readPage(0, { ...opts, colour: true });
      expect(read.raster.rgb).toBeDefined();
      expect(Buffer.from(read.raster.data).equals(Buffer.from(rgbToGrey(read.raster.rgb!)))).toBe(
        true,
      );
      const back = await decodeGrey(Buffer.from(page.sheetPng));
      expect(Buffer.from(back.data).equals(Buffer.from(read.raster.data))).toBe(true);
    } finally {
      await doc.close();
    }
  });

  it('a colour JPEG keeps its colour; an RGBA PNG is flattened onto white paper', async () => {
    const jpeg = new Uint8Array(await sharp(drawing(true), raw).jpeg({ quality: 90 }).toBuffer());
    const rgba = new Uint8Array(
      await sharp(drawing(true), raw)
        .ensureAlpha(0) // all transparent but the drawing's own pixels below
        .png()
        .toBuffer(),
    );
    const jdoc = await openInput(jpeg, 'image/jpeg', {});
    try {
      const page = await ingestPage(jdoc, 0, { ...opts, colour: true });
      expect(page.colour).toBe(true);
      const red = reds(await decoded(page.sheetPng));
      expect(red.inside).toBeGreaterThan(0.95 * RED.w * RED.h);
      expect(red.outside).toBe(0);
    } finally {
      await jdoc.close();
    }
    const adoc = await openInput(rgba, 'image/png', {});
    try {
      // Fully transparent: paper, no colour, one channel.
      const page = await ingestPage(adoc, 0, { ...opts, colour: true });
      expect(page.colour).toBe(false);
      expect((await sharp(page.sheetPng).metadata()).channels).toBe(1);
      expect((await decoded(page.sheetPng)).data.every((v) => v === 255)).toBe(true);
    } finally {
      await adoc.close();
    }
  });

  it('grey images stay one channel with exactly the grey of a grey read: a 1-channel PNG and an RGB one without colour', async () => {
    const greyPng = new Uint8Array(
      await sharp(drawing(false), raw).toColourspace('b-w').png().toBuffer(),
    );
    for (const [image, channels] of [
      [greyPng, 1],
      [await png(false), 3],
    ] as const) {
      expect((await sharp(image).metadata()).channels).toBe(channels);
      const doc = await openInput(image, 'image/png', {});
      try {
        const page = await ingestPage(doc, 0, { ...opts, colour: true });
        expect(page.colour).toBe(false);
        expect((await sharp(page.sheetPng).metadata()).channels).toBe(1);
        const withColour = await doc.readPage(0, { ...opts, colour: true });
        const greyOnly = await doc.readPage(0, { ...opts, colour: false });
        expect(withColour.raster.rgb).toBeUndefined();
        expect(Buffer.from(withColour.raster.data).equals(Buffer.from(greyOnly.raster.data))).toBe(
          true,
        );
      } finally {
        await doc.close();
      }
    }
  });

  it('asked for grey, a colour image is read grey only, as before', async () => {
    const doc = await openInput(await png(true), 'image/png', {});
    try {
      const page = await ingestPage(doc, 0, { ...opts, colour: false });
      expect(page.colour).toBe(false);
      expect((await sharp(page.sheetPng).metadata()).channels).toBe(1);
    } finally {
      await doc.close();
    }
  });
});
