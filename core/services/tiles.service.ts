import { ApiError } from '../domain/errors';
import type { ObjectStore } from '../blobs/object-store';
import { imageTileKey } from '../blobs/keys';
import {
  decodeForTiles,
  levelOf,
  renderTile,
  tileGeometry,
  type DecodedImage,
} from '../vision/tiles/tiles.adapter';

// Serves deep-zoom tiles of stored images: a stored tile is returned as is; a missing one is
// rendered from the decoded image (a few decoded images are kept, since a viewer asks for many
// tiles of the same sheet in a burst) and stored for the next request.

export class TileService {
  private decoded = new Map<string, Promise<DecodedImage>>();
  private rendering = new Map<string, Promise<void>>();

  constructor(
    private readonly objects: ObjectStore,
    private readonly maxDecoded = 3,
  ) {}

  /** Ensures tile (z, x, y) of `imageKey` is stored and returns its key; 404 outside the pyramid. */
  async tileKey(imageKey: string, z: number, x: number, y: number): Promise<string> {
    const key = imageTileKey(imageKey, z, x, y);
    if (await this.objects.stat(key)) return key;
    let job = this.rendering.get(key);
    if (!job) {
      job = this.render(imageKey, key, z, x, y).finally(() => this.rendering.delete(key));
      this.rendering.set(key, job);
    }
    await job;
    return key;
  }

  private async render(
    imageKey: string,
    key: string,
    z: number,
    x: number,
    y: number,
  ): Promise<void> {
    const img = await this.decode(imageKey);
    if (!levelOf(tileGeometry(img.width, img.height), z, x, y)) {
      throw new ApiError(
        'not_found',
        `Tile ${z}/${x}/${y} is outside this image's pyramid (levels 0–${tileGeometry(img.width, img.height).maxZoom}).`,
      );
    }
    const webp = await renderTile(img, z, x, y);
    await this.objects.put(key, webp, { contentType: 'image/webp' });
  }

  private decode(imageKey: string): Promise<DecodedImage> {
    let p = this.decoded.get(imageKey);
    if (p) {
      // Refresh its place in the LRU order.
      this.decoded.delete(imageKey);
      this.decoded.set(imageKey, p);
      return p;
    }
    p = (async () => {
      const obj = await this.objects.get(imageKey);
      if (!obj) throw new ApiError('not_found', 'The image behind this URL no longer exists.');
      const chunks: Buffer[] = [];
      for await (const c of obj.stream()) chunks.push(c as Buffer);
      return decodeForTiles(Buffer.concat(chunks));
    })();
    p.catch(() => this.decoded.delete(imageKey));
    this.decoded.set(imageKey, p);
    while (this.decoded.size > this.maxDecoded)
      this.decoded.delete(this.decoded.keys().next().value!);
    return p;
  }
}
