// Text runs from PDFium's glyphs. PDFium's text page (FPDFText_*) gives one record per glyph: its
// Unicode value, baseline origin, advance and the text object's matrix and font. The sheet readers
// (core/vision/sheet/), the search index and change text were built on pdf.js's `getTextContent`
// runs, so glyphs are grouped here by the same rules pdf.js applies (pdfjs-dist 5.6,
// PartialEvaluator.getTextContent, compareWithLastPosition / addFakeSpaces), in the same order
// (content-stream order):
//  - a glyph continues the current run when it sits on the run's baseline at most 0.6 em after the end
//    of the previous glyph's advance; a gap of 0.102-0.6 em puts one space into the run;
//  - a gap over 0.6 em, a step back of more than 0.2 em, a baseline shift of more than 0.25 em, a new
//    line, a change of font, font size or writing direction starts a new run;
//  - whitespace glyphs of the content only advance the pen (the gap they leave decides, as above); a
//    whitespace glyph that leaves a gap of only 0.03-0.102 em ends the run, as in pdf.js;
//  - glyphs PDFium generates itself (its own spaces and line breaks) are ignored;
//  - ligatures and other compatibility characters are NFKC-normalised, as pdf.js does.
// Geometry is in sheet pixels (origin top-left, y down): the caller maps PDFium's page space through
// the same page-to-device matrix the raster uses. Each run's box spans from 0.2 em below the baseline
// to 0.8 em above it along its whole advance, as the pdf.js path did (pdf.adapter.ts before issue #3).

import type { TextItem } from '../types';

/** pdf.js getTextContent thresholds, in em of the run's font size. */
const TRACKING_SPACE = 0.102;
const NOT_A_SPACE = 0.03;
const NEGATIVE_SPACE = -0.2;
const SPACE_IN_FLOW_MAX = 0.6;
const VERTICAL_SHIFT = 0.25;

/** Same characters pdf.js's normalizeUnicode sends through NFKC (ligatures, odd spaces, a few forms). */
const NORMALIZE_RE =
  /[\u00a0\u00b5\u037e\u0eb3\u2000-\u200a\u202f\u2126\ufb00-\ufb06\ufb20-\ufb36\ufb38-\ufb3c\ufb3e\ufb40-\ufb41\ufb43-\ufb44\ufb46-\ufba1\ufba4-\ufba9\ufbae-\ufbb1\ufbd3-\ufbdc\ufbde-\ufbe7\ufbea-\ufbf8\ufbfc-\ufbfd\ufc00-\ufc5d\ufc64-\ufcf1\ufcf5-\ufd3d\ufd88\ufdf4\ufdfa-\ufdfb\ufe71\ufe77\ufe79\ufe7b\ufe7d]+/gu;

/** Whitespace as pdf.js's glyph categories count it (space, tab, no-break space, Unicode spaces). */
export function isWhitespaceCode(code: number): boolean {
  return (
    code === 0x20 ||
    code === 0x09 ||
    code === 0x0a ||
    code === 0x0d ||
    code === 0xa0 ||
    code === 0x3000 ||
    code === 0x202f ||
    code === 0x205f ||
    (code >= 0x2000 && code <= 0x200a)
  );
}

/** A glyph in sheet pixels. */
export interface Glyph {
  /** Its text (one character, or a surrogate pair). */
  text: string;
  /** Baseline origin. */
  x: number;
  y: number;
  /** Unit writing direction. */
  ux: number;
  uy: number;
  /** Unit "up" direction (baseline towards the glyph tops; (0, -1) for upright text). */
  vx: number;
  vy: number;
  /** Font size (em) in sheet pixels. */
  size: number;
  /** Advance along (ux, uy), in sheet pixels. */
  advance: number;
  /** Identity of the font and its size as set by Tf: runs break where either changes. */
  font: number;
  fontSize: number;
}

/**
 * Groups glyphs (in content order) into runs. `add` a glyph, `space()` for a whitespace glyph of the
 * content, `runs()` at the end.
 */
export class RunBuilder {
  private readonly out: TextItem[] = [];
  private text: string[] = [];
  private open = false;
  // The open run: origin of its first glyph, direction, up, size, font.
  private ox = 0;
  private oy = 0;
  private ux = 1;
  private uy = 0;
  private vx = 0;
  private vy = -1;
  private size = 0;
  private font = 0;
  private fontSize = 0;
  /** Pen position after the last glyph's advance (pdf.js's prevTransform). */
  private endX = 0;
  private endY = 0;
  /** pdf.js's "two last chars": whether the last and the one before were whitespace. */
  private lastSpace = true;
  private beforeLastSpace = true;

  space(): void {
    this.beforeLastSpace = this.lastSpace;
    this.lastSpace = true;
  }

  add(g: Glyph): void {
    if (this.open) {
      if (
        g.font !== this.font ||
        g.fontSize !== this.fontSize ||
        g.ux * this.ux + g.uy * this.uy < 0.999
      ) {
        this.flush();
      } else {
        const dx = g.x - this.endX;
        const dy = g.y - this.endY;
        const em = this.size;
        // Along the writing direction, and across it (positive = towards the glyph tops).
        const along = (dx * this.ux + dy * this.uy) / em;
        const across = (dx * this.vx + dy * this.vy) / em;
        const spaceBefore = this.lastSpace && !this.beforeLastSpace;
        if (along < NEGATIVE_SPACE || Math.abs(across) > 1) {
          this.flush();
        } else {
          if (along <= NOT_A_SPACE) {
            this.lastSpace = this.beforeLastSpace = true;
          }
          if (along <= TRACKING_SPACE) {
            if (spaceBefore && along > NOT_A_SPACE) this.flush();
          } else if (along <= SPACE_IN_FLOW_MAX) {
            this.text.push(' ');
            this.lastSpace = this.beforeLastSpace = true;
          } else {
            this.flush();
          }
          if (this.open && Math.abs(across) > VERTICAL_SHIFT) this.flush();
        }
      }
    }
    if (!this.open) {
      this.open = true;
      this.text = [];
      this.ox = g.x;
      this.oy = g.y;
      this.ux = g.ux;
      this.uy = g.uy;
      this.vx = g.vx;
      this.vy = g.vy;
      this.size = g.size;
      this.font = g.font;
      this.fontSize = g.fontSize;
      this.lastSpace = this.beforeLastSpace = true;
    } else if (this.lastSpace && !this.beforeLastSpace) {
      // A whitespace glyph of the content between two glyphs that no gap rule turned into a space.
      this.text.push(' ');
    }
    this.text.push(g.text);
    this.beforeLastSpace = this.lastSpace;
    this.lastSpace = false;
    this.endX = g.x + g.ux * g.advance;
    this.endY = g.y + g.uy * g.advance;
  }

  private flush(): void {
    if (!this.open) return;
    this.open = false;
    this.lastSpace = this.beforeLastSpace = true;
    const text = this.text.join('').replace(NORMALIZE_RE, (s) => s.normalize('NFKC'));
    if (text.trim() === '') return;
    const width = (this.endX - this.ox) * this.ux + (this.endY - this.oy) * this.uy;
    this.out.push({
      text,
      ...runBox(this.ox, this.oy, this.ux, this.uy, this.vx, this.vy, width, this.size),
    });
  }

  runs(): TextItem[] {
    this.flush();
    return this.out;
  }
}

/**
 * Box of a run in sheet pixels: from its baseline origin (ox, oy) along unit direction (ux, uy) for
 * `width`, and from 0.2 em below the baseline to 0.8 em above it along the unit up vector (vx, vy).
 * angle = writing direction counter-clockwise on the sheet (0 = left to right, 90 = bottom to top).
 */
export function runBox(
  ox: number,
  oy: number,
  ux: number,
  uy: number,
  vx: number,
  vy: number,
  width: number,
  size: number,
): Omit<TextItem, 'text'> {
  const lo = -0.2 * size;
  const hi = 0.8 * size;
  const w = Math.max(0, width);
  const xs = [ox + vx * lo, ox + ux * w + vx * lo, ox + vx * hi, ox + ux * w + vx * hi];
  const ys = [oy + vy * lo, oy + uy * w + vy * lo, oy + vy * hi, oy + uy * w + vy * hi];
  const x0 = Math.min(...xs);
  const y0 = Math.min(...ys);
  let angle = (Math.atan2(-uy, ux) * 180) / Math.PI;
  angle = Math.round((((angle % 360) + 360) % 360) * 100) / 100;
  if (angle === 360) angle = 0;
  return {
    x: x0,
    y: y0,
    width: Math.max(...xs) - x0,
    height: Math.max(...ys) - y0,
    fontSize: size,
    angle,
  };
}
