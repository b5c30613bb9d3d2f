// sharp adapter of the symbol matcher: decodes a stored sheet or block image (or a crop of it) to
// an 8-bit grey image. Boxes are in pixels of that image, origin top-left.
import sharp from 'sharp';
import type { BBox, GreyImage } from '../types';

export async function loadGrey(path: string, crop?: BBox): Promise<GreyImage> {
  let p = sharp(path, { limitInputPixels: false });
  if (crop)
    p = p.extract({
      left: Math.round(crop.x),
      top: Math.round(crop.y),
      width: Math.round(crop.width),
      height: Math.round(crop.height),
    });
  // toColourspace('b-w'): one channel (without it sharp hands back 3-channel sRGB).
  const { data, info } = await p.toColourspace('b-w').raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 1)
    throw new Error(`Expected a 1-channel decode but sharp returned ${info.channels} channels`);
  return {
    width: info.width,
    height: info.height,
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
  };
}
