// diffStage's early aligned-B encode (PipelineOptions.encodeAlignedEarly): finishStage hands back the
// PNG started there — the same bytes as encoding aligned B itself — and encodes anew when it asks for
// another zlib level.
import { describe, expect, it } from 'vitest';
import { diffStage, finishStage } from './compare-pipeline.adapter';
import { encodeGreyPng } from './encode.adapter';
import { blankImage, cloneImage, drawLine, fillRect } from './test-support';

function pair() {
  const a = blankImage(240, 130);
  drawLine(a, 10, 20, 220, 20, 2, 0);
  fillRect(a, 30, 40, 80, 60, 200);
  const b = cloneImage(a);
  drawLine(b, 10, 110, 220, 110, 2, 0);
  return { a, b };
}

describe('encodeAlignedEarly', () => {
  it('gives finishStage the PNG diffStage started, the bytes of encoding aligned B then', async () => {
    const { a, b } = pair();
    const plain = await diffStage(a, b, { skipRegistration: true, transform: [1, 0, 3, 0, 1, -2] });
    expect(plain.alignedPng).toBeUndefined();
    const st = await diffStage(a, b, {
      skipRegistration: true,
      transform: [1, 0, 3, 0, 1, -2],
      encodeAlignedEarly: 1,
    });
    expect(st.alignedPng?.level).toBe(1);
    const early = await st.alignedPng!.png;
    const own = await encodeGreyPng(plain.aligned, { compressionLevel: 1 });
    expect(Buffer.compare(early, own)).toBe(0);
    const fin = await finishStage(st, { images: ['aligned_b', 'combined'] });
    expect(fin.pngs.aligned_b).toBe(early);
    // Another level: encoded again, at that level.
    const fin6 = await finishStage(st, { images: ['aligned_b'], compressionLevel: 6 });
    expect(fin6.pngs.aligned_b).not.toBe(early);
    const six = await encodeGreyPng(plain.aligned, { compressionLevel: 6 });
    expect(Buffer.compare(fin6.pngs.aligned_b!, six)).toBe(0);
  });
});
