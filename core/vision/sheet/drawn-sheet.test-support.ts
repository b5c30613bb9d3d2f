// Test-only: a tiny vector drawing API that writes one-page PDFs (text in the standard Helvetica
// fonts, lines, rectangles, circles), so the title-block tests can run the production text path
// (PDFium) on sheets of formats the fixture drawings do not cover. Coordinates are in inches from the
// sheet's top-left corner, y down, as one reads a drawing; text is placed by its baseline's left end.
// The output is deterministic (no dates, ids or random numbers), so generated files can be compared
// byte for byte with committed copies.

import { assemblePdf, streamObject } from '../input/pdf-writer';

const PT = 72;

/** Escapes a string for a PDF literal; the text is WinAnsi (Latin-1 range), as Helvetica uses it. */
function pdfString(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0) as number;
    if (c > 0xff) throw new RangeError(`Character ${JSON.stringify(ch)} is outside WinAnsi`);
    if (ch === '(' || ch === ')' || ch === '\\') out += '\\' + ch;
    else if (c < 0x20 || c > 0x7e) out += '\\' + c.toString(8).padStart(3, '0');
    else out += ch;
  }
  return `(${out})`;
}

const num = (v: number) => (Math.round(v * 100) / 100).toString();

export interface TextOptions {
  bold?: boolean;
  /** Reading direction: 90 = bottom to top (text along a vertical strip). */
  rotate?: 0 | 90;
}

export class DrawnSheet {
  private readonly ops: string[] = [];

  /** A sheet of `widthIn` x `heightIn` inches (landscape when wider). */
  constructor(
    readonly widthIn: number,
    readonly heightIn: number,
  ) {}

  private px(x: number): number {
    return x * PT;
  }

  private py(y: number): number {
    return (this.heightIn - y) * PT;
  }

  /** Text of `size` points with its baseline starting at (x, y). */
  text(x: number, y: number, size: number, s: string, opts: TextOptions = {}): this {
    const font = opts.bold ? '/F2' : '/F1';
    const m = opts.rotate === 90 ? '0 1 -1 0' : '1 0 0 1';
    this.ops.push(
      `BT ${font} ${num(size)} Tf ${m} ${num(this.px(x))} ${num(this.py(y))} Tm ${pdfString(s)} Tj ET`,
    );
    return this;
  }

  /** Stacked lines of text, `leading` inches apart. */
  lines(x: number, y: number, size: number, leading: number, ss: string[], opts?: TextOptions) {
    ss.forEach((s, i) => this.text(x, y + i * leading, size, s, opts));
    return this;
  }

  line(x0: number, y0: number, x1: number, y1: number, weightPt = 0.5): this {
    this.ops.push(
      `${num(weightPt)} w ${num(this.px(x0))} ${num(this.py(y0))} m ${num(this.px(x1))} ${num(this.py(y1))} l S`,
    );
    return this;
  }

  rect(x: number, y: number, w: number, h: number, weightPt = 0.5): this {
    this.ops.push(
      `${num(weightPt)} w ${num(this.px(x))} ${num(this.py(y + h))} ${num(w * PT)} ${num(h * PT)} re S`,
    );
    return this;
  }

  /** A circle (Bézier approximation), e.g. a grid bubble. */
  circle(cx: number, cy: number, r: number, weightPt = 0.5): this {
    const k = 0.5523 * r;
    const X = (v: number) => num(this.px(v));
    const Y = (v: number) => num(this.py(v));
    this.ops.push(
      `${num(weightPt)} w ${X(cx + r)} ${Y(cy)} m ` +
        `${X(cx + r)} ${Y(cy + k)} ${X(cx + k)} ${Y(cy + r)} ${X(cx)} ${Y(cy + r)} c ` +
        `${X(cx - k)} ${Y(cy + r)} ${X(cx - r)} ${Y(cy + k)} ${X(cx - r)} ${Y(cy)} c ` +
        `${X(cx - r)} ${Y(cy - k)} ${X(cx - k)} ${Y(cy - r)} ${X(cx)} ${Y(cy - r)} c ` +
        `${X(cx + k)} ${Y(cy - r)} ${X(cx + r)} ${Y(cy - k)} ${X(cx + r)} ${Y(cy)} c S`,
    );
    return this;
  }

  /**
   * A table: column widths and row heights in inches from (x, y). Returns the cells' top-left corners
   * (`cell(row, col)`) so labels and values can be placed inside.
   */
  table(x: number, y: number, cols: number[], rows: number[], weightPt = 0.5) {
    const xs = [x];
    for (const w of cols) xs.push((xs[xs.length - 1] as number) + w);
    const ys = [y];
    for (const h of rows) ys.push((ys[ys.length - 1] as number) + h);
    const x1 = xs[xs.length - 1] as number;
    const y1 = ys[ys.length - 1] as number;
    for (const yy of ys) this.line(x, yy, x1, yy, weightPt);
    for (const xx of xs) this.line(xx, y, xx, y1, weightPt);
    return {
      cell: (r: number, c: number) => ({ x: xs[c] as number, y: ys[r] as number }),
      right: x1,
      bottom: y1,
    };
  }

  /**
   * A title-block cell: its frame, a small label in the top-left corner and the value below it (one
   * or more lines of `size` points), as CAD title blocks print their fields.
   */
  field(
    x: number,
    y: number,
    w: number,
    h: number,
    label: string,
    value: string | string[],
    size = 10,
    opts: TextOptions = {},
  ): this {
    this.rect(x, y, w, h);
    if (label) this.text(x + 0.05, y + 0.11, 5.5, label);
    const values = typeof value === 'string' ? [value] : value;
    const first = label ? y + 0.16 + (size / PT) * 1.05 : y + 0.08 + size / PT;
    this.lines(x + 0.1, first, size, (size / PT) * 1.3, values, opts);
    return this;
  }

  /**
   * A table of text: one row of `header` and `rows` below, columns `widths` inches wide, each row
   * `rowH` tall, framed.
   */
  grid(
    x: number,
    y: number,
    widths: number[],
    rowH: number,
    header: string[],
    rows: string[][],
    size = 6.5,
  ): this {
    const t = this.table(
      x,
      y,
      widths,
      Array.from({ length: rows.length + 1 }, () => rowH),
    );
    [header, ...rows].forEach((row, r) =>
      row.forEach((s, c) => {
        const at = t.cell(r, c);
        this.text(at.x + 0.05, at.y + rowH - 0.06, size, s, { bold: r === 0 });
      }),
    );
    return this;
  }

  /** The PDF file: one page, Helvetica and Helvetica-Bold (WinAnsiEncoding), uncompressed content. */
  toPdf(): Uint8Array {
    const content = new TextEncoder().encode(this.ops.join('\n'));
    const font = (base: string) =>
      `<< /Type /Font /Subtype /Type1 /BaseFont /${base} /Encoding /WinAnsiEncoding >>`;
    return assemblePdf([
      '',
      '<< /Type /Catalog /Pages 2 0 R >>',
      '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${num(this.widthIn * PT)} ${num(this.heightIn * PT)}] ` +
        `/Resources << /Font << /F1 4 0 R /F2 5 0 R >> >> /Contents 6 0 R >>`,
      font('Helvetica'),
      font('Helvetica-Bold'),
      streamObject('', content),
    ]);
  }
}
