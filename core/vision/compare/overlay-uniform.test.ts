// renderOverlayIndexed's fast path for mask words whose 32 pixels share one code (inside a fill, a
// solid area): the same palette colours as the RGB reference writer (renderOverlay) pixel by pixel, on
// a pair made of wide tones and solid areas (kept, removed, added) with line work over them and a width
// that is not a whole number of words.
import { describe, expect, it } from 'vitest';
import { diffStage } from './compare-pipeline.adapter';
import { overlayPalette, renderOverlay, renderOverlayIndexed } from './diff';
import { blankImage, cloneImage, drawLine, fillRect } from './test-support';

function pair() {
  const a = blankImage(301, 260);
  fillRect(a, 0, 0, 200, 60, 200); // a tone kept in B
  drawLine(a, 10, 30, 190, 30, 2, 0); // line work over it
  fillRect(a, 0, 70, 260, 50, 190); // a tone removed in B
  fillRect(a, 96, 130, 64, 16, 0); // a solid area kept (too small to be a fill: line work)
  fillRect(a, 0, 180, 64, 16, 0); // a solid area removed
  const b = cloneImage(a);
  fillRect(b, 0, 70, 260, 50, 255);
  fillRect(b, 0, 180, 64, 16, 255);
  fillRect(b, 160, 215, 141, 45, 180); // a tone added, to the last column
  fillRect(b, 0, 225, 64, 16, 0); // a solid area added
  return { a, b };
}

describe('renderOverlayIndexed on uniform words', () => {
  it('gives every pixel the palette index of the RGB writer', async () => {
    const { a, b } = pair();
    const st = await diffStage(a, b, { skipRegistration: true });
    const d = st.diff;
    expect(d.fills).toBeDefined();
    expect(d.fills!.removed.some((w) => w !== 0)).toBe(true);
    expect(d.fills!.added.some((w) => w !== 0)).toBe(true);
    // Words wholly inside a kept tone, a removed one, an added one, a solid area: the fast path's.
    const full = (m: Uint32Array) => m.reduce((n, w) => n + (w === 0xffffffff ? 1 : 0), 0);
    expect(full(d.fills!.a!)).toBeGreaterThan(20);
    expect(full(d.fills!.removed)).toBeGreaterThan(20);
    expect(full(d.fills!.added)).toBeGreaterThan(20);
    expect(full(d.removed)).toBeGreaterThan(10);
    expect(full(d.added)).toBeGreaterThan(10);
    const idx = renderOverlayIndexed(d, 'combined');
    for (const palette of ['standard', 'colorblind'] as const) {
      const rgb = renderOverlay(d, 'combined', palette);
      const pal = overlayPalette(palette, 'combined');
      let bad = 0;
      const seen = new Set<number>();
      for (let y = 0; y < d.height; y++)
        for (let x = 0; x < d.width; x++) {
          const byte = idx.data[y * idx.rowBytes + 1 + (x >> 1)]!;
          const i = x & 1 ? byte & 15 : byte >> 4;
          seen.add(i);
          const c = pal[i];
          const o = (y * d.width + x) * 3;
          if (!c || c[0] !== rgb.data[o] || c[1] !== rgb.data[o + 1] || c[2] !== rgb.data[o + 2])
            bad++;
        }
      expect(bad, palette).toBe(0);
      // Paper, ink, removed, added and the three fill tints all drawn.
      expect(seen.size).toBeGreaterThanOrEqual(7);
    }
    // The pad nibble after the last pixel (301 px: odd) stays 0.
    for (let y = 0; y < d.height; y++) expect(idx.data[y * idx.rowBytes + 151]! & 15).toBe(0);
  });
});
