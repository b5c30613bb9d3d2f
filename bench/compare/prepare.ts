// Builds the bench pair once (cached in the output folder): beam proposal S101 (34x22 in) rendered with
// pdfjs at DPI as base; the 20190602 revision of the same sheet (one real edit: a column + callout) plus
// synthetic edits as "revaligned"; and "rev" = revaligned scaled by 1.002 about the centre and shifted
// (+37, −22) px at 200 DPI (scaled with DPI). truth_<dpi>.json holds the B → A transform.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  fixture,
  renderPdfPage,
  warpAffine,
  fillRect,
  strokeRect,
  drawGlyphs,
  drawLine,
  rng,
  savePng,
} from '../../core/vision/compare/test-support';
import { invertAffine, type Affine } from '../../core/vision/compare/register';

export async function preparePair(
  dir: string,
  dpi: number,
): Promise<{ base: string; rev: string; revaligned: string; truth: Affine }> {
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, `base_${dpi}.png`),
    rev = path.join(dir, `rev_${dpi}.png`),
    revaligned = path.join(dir, `revaligned_${dpi}.png`);
  const k = dpi / 200;
  const s = 1.002,
    tx = 37 * k,
    ty = -22 * k;
  const truthFile = path.join(dir, `truth_${dpi}.json`);
  if (!existsSync(base) || !existsSync(rev) || !existsSync(revaligned) || !existsSync(truthFile)) {
    const A = await renderPdfPage(fixture('20190601_beam-proposal_5-sheets.pdf'), 0, dpi);
    await savePng(A, base);
    const B0 = await renderPdfPage(fixture('20190602_beam-proposal_5-sheets.pdf'), 0, dpi);
    const r = rng(42);
    const edits: { x: number; y: number; w: number; h: number; kind: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const x = Math.floor(200 * k + r() * (B0.width - 600 * k)),
        y = Math.floor(200 * k + r() * (B0.height - 400 * k));
      const kind = i % 4;
      if (kind === 0) {
        fillRect(B0, x, y, 120 * k, 80 * k, 255);
        edits.push({ x, y, w: 120 * k, h: 80 * k, kind: 'erase' });
      } else if (kind === 1) {
        strokeRect(B0, x, y, 150 * k, 90 * k, Math.max(2, Math.round(3 * k)));
        edits.push({ x, y, w: 150 * k, h: 90 * k, kind: 'rect' });
      } else if (kind === 2) {
        drawGlyphs(B0, x, y, 220 * k, 28 * k, r, Math.max(2, Math.round(3 * k)));
        edits.push({ x, y, w: 220 * k, h: 28 * k, kind: 'text' });
      } else {
        drawLine(B0, x, y, x + 200 * k, y + 90 * k, Math.max(2, Math.round(3 * k)));
        edits.push({ x, y, w: 200 * k, h: 90 * k, kind: 'line' });
      }
    }
    await savePng(B0, revaligned);
    const cx = A.width / 2,
      cy = A.height / 2;
    const AtoB: Affine = [s, 0, cx - s * cx + tx, 0, s, cy - s * cy + ty];
    const B = warpAffine(B0, AtoB);
    await savePng(B, rev);
    writeFileSync(
      truthFile,
      JSON.stringify({ BtoA: invertAffine(AtoB), AtoB, edits, width: A.width, height: A.height }),
    );
  }
  const { BtoA } = JSON.parse((await import('node:fs')).readFileSync(truthFile, 'utf8')) as {
    BtoA: Affine;
  };
  return { base, rev, revaligned, truth: BtoA };
}
