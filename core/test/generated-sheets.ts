import { buildPdf } from '../vision/input/synthetic-inputs';

// Drawing sheets written by the tests themselves (PDF operators, Helvetica), for comparisons whose
// answer is known exactly: two views with numbered titles and scales, a title block with a sheet
// number, and whatever a test adds or moves. 17 x 11 in landscape; positions in PDF points (1/72 in,
// origin bottom-left). Test-only.

export const PAGE = { widthPt: 1224, heightPt: 792 };

/** A PDF string literal's escapes. */
const esc = (s: string) => s.replace(/[\\()]/g, (c) => `\\${c}`);

export function text(x: number, y: number, size: number, s: string): string {
  return `BT /F1 ${size} Tf ${x} ${y} Td (${esc(s)}) Tj ET\n`;
}

export function rect(x: number, y: number, w: number, h: number, lineWidth = 1.5): string {
  return `q ${lineWidth} w ${x} ${y} ${w} ${h} re S Q\n`;
}

export function line(x0: number, y0: number, x1: number, y1: number, lineWidth = 1): string {
  return `q ${lineWidth} w ${x0} ${y0} m ${x1} ${y1} l S Q\n`;
}

/** The sheet's frame and title block (sheet number A101), the same in every issue. */
function frame(): string {
  return (
    rect(18, 18, PAGE.widthPt - 36, PAGE.heightPt - 36, 2) +
    rect(1100, 18, 106, 756, 1.5) +
    text(1108, 120, 8, 'BLUELINE TEST OFFICE') +
    text(1108, 100, 8, 'FLOOR PLAN AND DETAIL') +
    text(1108, 60, 8, 'SHEET NO') +
    text(1108, 36, 18, 'A101')
  );
}

/** View 1, a floor plan: rooms drawn as rectangles, its title and scale below it (x 72–460). */
function planView(): string {
  let s = rect(72, 220, 388, 360, 2.5);
  for (const [x, y, w, h] of [
    [72, 220, 150, 180],
    [222, 220, 238, 180],
    [72, 400, 200, 180],
    [272, 400, 188, 180],
  ] as const)
    s += rect(x, y, w, h, 1.2);
  for (let k = 0; k < 6; k++) s += line(90 + 30 * k, 240, 90 + 30 * k, 380, 0.6);
  s += text(300, 300, 7, '14\'-2"') + text(110, 480, 7, 'LIVING') + text(300, 480, 7, 'KITCHEN');
  return s + text(72, 190, 14, '1 FLOOR PLAN') + text(72, 174, 9, 'SCALE: 1/4" = 1\'-0"');
}

/**
 * View 2, a wall detail (x 620–900 plus `dx`), with two dimension strings whose values a test may
 * change; its title and scale below it.
 */
function detailView(dx: number, dims: [string, string]): string {
  const x = 620 + dx;
  let s = rect(x, 300, 280, 260, 2);
  s += rect(x + 40, 340, 60, 180, 1.2) + rect(x + 100, 340, 20, 180, 0.8);
  for (let k = 0; k < 9; k++) s += line(x + 40, 340 + 20 * k, x + 100, 360 + 20 * k, 0.5);
  s += line(x + 150, 340, x + 150, 520, 0.6) + line(x + 145, 340, x + 155, 340, 0.6);
  s += line(x + 145, 520, x + 155, 520, 0.6) + line(x + 40, 320, x + 120, 320, 0.6);
  s += text(x + 160, 425, 8, dims[0]) + text(x + 60, 308, 8, dims[1]);
  s += text(x + 180, 500, 7, 'GYP BD') + text(x + 180, 480, 7, 'STUDS @ 16" O.C.');
  return s + text(x, 270, 14, '2 WALL DETAIL') + text(x, 254, 9, 'SCALE: 1" = 1\'-0"');
}

export interface SheetOptions {
  /** Extra content (PDF operators) drawn on top. */
  extra?: string;
  /** How far view 2 sits right of its first place, points. */
  detailDx?: number;
  /** View 2's two dimension strings. */
  dims?: [string, string];
}

/** One issue of the sheet as PDF bytes. */
export function buildSheet(opts: SheetOptions = {}): Buffer {
  const content =
    frame() +
    planView() +
    detailView(opts.detailDx ?? 0, opts.dims ?? ['7\'-6"', '1\'-4"']) +
    (opts.extra ?? '');
  return Buffer.from(buildPdf({ ...PAGE, content }));
}
