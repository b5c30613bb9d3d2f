import {
  PDFArray,
  type PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFRef,
  PDFString,
} from 'pdf-lib';
import {
  cloudArcs,
  sheetBoxToUserRect,
  sheetPixelToUserSpace,
  type Box,
  type PageGeometry,
} from './geometry';
import type { ChangeKind, ReviewStatus } from './model';
import { KIND_LABEL, KIND_RGB, type PaletteName } from './palette';

// The clouded PDF (contract §6): the newer revision's own PDF with every non-noise change as a
// revision-cloud markup. The pages are not touched: pdf-lib parses the file and writes every
// object back, page content streams as the raw (still compressed) bytes it read, so the drawing is
// the architect's vectors byte for byte; only annotations are added to each page's /Annots.
//
// Each cloud is a Polygon annotation with the cloudy border effect (/BE << /S /C /I 1 >>, /IT
// /PolygonCloud: what Acrobat's and Bluebeam's cloud tools write), so those tools list it as an
// editable markup and redraw it from /Vertices when it is moved. Viewers that do not synthesise
// appearances (pdf.js, poppler, most browsers) draw the /AP stream written here: the scallops
// themselves. The optional delta tag beside it is a FreeText annotation with its number, drawn
// upright on rotated pages and grouped with its cloud (one markup per change in a comments list).

export interface CloudSpec {
  change_id: string;
  /** Its group's number (model.ts): pieces of one change share it. */
  number: number;
  /** The first piece of its group: its cloud gets the group's delta tag (one tag per number). */
  tagged: boolean;
  /** Where its tag goes beside: its group's box on the newer sheet (sheet pixels). */
  tag_box: Box;
  /** The change's box on the newer sheet (sheet pixels). */
  box: Box;
  kind: ChangeKind;
  category: string;
  description: string | null;
  review_status: ReviewStatus;
  note: string | null;
}

export interface CloudedSheet {
  page_index: number;
  /** The stored sheet raster's size (pixels): what the change boxes are measured in. */
  width: number;
  height: number;
  sheet_number: string | null;
  clouds: CloudSpec[];
}

export interface CloudedOptions {
  palette: PaletteName;
  /** Numbered delta tags beside the clouds. */
  tags: boolean;
  /** For /M and /CreationDate (PDF date). */
  now: Date;
}

/** Breathing room between the changed ink and the cloud's inner edge, points. */
const CLOUD_PAD_PT = 4;
const CLOUD_LINE_PT = 1.5;
/** Delta tag side, points. */
const TAG_PT = 22;

const fmt = (v: number) => (Math.round(v * 100) / 100).toString();

/** D:YYYYMMDDHHmmSSZ (ISO 32000 §7.9.4). */
function pdfDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `D:${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}Z`;
}

/** /Contents of a cloud: what changed and where the review stands. */
export function cloudContents(c: CloudSpec): string {
  const what = c.description ?? `${KIND_LABEL[c.kind]} ${c.category}`;
  const status = c.review_status.charAt(0).toUpperCase() + c.review_status.slice(1);
  return `${c.number}. ${what}\nReview: ${status}${c.note ? `\nNote: ${c.note}` : ''}`;
}

function geometryOf(page: ReturnType<PDFDocument['getPage']>, sheet: CloudedSheet): PageGeometry {
  const cb = page.getCropBox();
  const rotate = (((page.getRotation().angle % 360) + 360) % 360) as number;
  return {
    cropBox: [
      Math.min(cb.x, cb.x + cb.width),
      Math.min(cb.y, cb.y + cb.height),
      Math.max(cb.x, cb.x + cb.width),
      Math.max(cb.y, cb.y + cb.height),
    ],
    rotate,
    rasterWidth: sheet.width,
    rasterHeight: sheet.height,
  };
}

/**
 * The scallop path of a cloud around `rect` as PDF path operators (user space). A large cloud is a
 * few hundred curves: appearance streams are deflated (flateStream), else they would add ~10 KB a
 * cloud to the file.
 */
/**
 * The scallops around `rect`, leaving out those whose middle lies inside one of `inside` (the
 * other pieces of the same change: their clouds together outline the whole change, not a mesh).
 */
function cloudPath(
  rect: [number, number, number, number],
  inside: [number, number, number, number][] = [],
): string {
  const w = rect[2] - rect[0];
  const h = rect[3] - rect[1];
  // Scallops scale with the cloud, within what reads as a cloud on a printed sheet.
  const arc = Math.min(14, Math.max(5, Math.min(w, h) / 3));
  const arcs = cloudArcs(rect, arc);
  const interior = (a: (typeof arcs)[number]) => {
    const mx = (a.from[0] + a.to[0]) / 2;
    const my = (a.from[1] + a.to[1]) / 2;
    return inside.some((r) => mx > r[0] && mx < r[2] && my > r[1] && my < r[3]);
  };
  const keep = arcs.map((a) => !interior(a));
  if (keep.every(Boolean)) {
    const ops = [`${fmt(arcs[0]!.from[0])} ${fmt(arcs[0]!.from[1])} m`];
    for (const a of arcs)
      ops.push(
        `${fmt(a.c1[0])} ${fmt(a.c1[1])} ${fmt(a.c2[0])} ${fmt(a.c2[1])} ${fmt(a.to[0])} ${fmt(a.to[1])} c`,
      );
    ops.push('h S');
    return ops.join('\n');
  }
  const ops: string[] = [];
  arcs.forEach((a, i) => {
    if (!keep[i]) return;
    if (i === 0 || !keep[i - 1]) ops.push(`${fmt(a.from[0])} ${fmt(a.from[1])} m`);
    ops.push(
      `${fmt(a.c1[0])} ${fmt(a.c1[1])} ${fmt(a.c2[0])} ${fmt(a.c2[1])} ${fmt(a.to[0])} ${fmt(a.to[1])} c`,
    );
  });
  // A piece surrounded by the others draws nothing of its own: the outline is theirs. It stays an
  // annotation (its description and review status in the comments list).
  return ops.length ? `${ops.join('\n')}\nS` : '';
}

/** How far the scallops reach beyond the rectangle they are drawn on (bulge + half the line). */
function cloudReach(rect: [number, number, number, number]): number {
  const arc = Math.min(14, Math.max(5, Math.min(rect[2] - rect[0], rect[3] - rect[1]) / 3));
  // A scallop of chord s bulges about 0.75 · (4/3 · s/2) = s/2 from its chord.
  return arc / 2 + CLOUD_LINE_PT;
}

export async function buildCloudedPdf(
  source: Uint8Array,
  sheets: CloudedSheet[],
  opts: CloudedOptions,
  onSheet?: () => void,
): Promise<Uint8Array> {
  // updateMetadata: false keeps the source's Info dictionary (producer, dates) as issued.
  const doc = await PDFDocument.load(source, { updateMetadata: false });
  const ctx = doc.context;
  const date = PDFString.of(pdfDate(opts.now));
  const helv = ctx.register(
    ctx.obj({
      Type: 'Font',
      Subtype: 'Type1',
      BaseFont: 'Helvetica-Bold',
      Encoding: 'WinAnsiEncoding',
    }),
  );
  const pages = doc.getPages();

  for (const sheet of sheets) {
    const page = pages[sheet.page_index];
    if (!page) throw new Error(`The newer revision's PDF has no page ${sheet.page_index + 1}`);
    const g = geometryOf(page, sheet);
    const annots: PDFRef[] = [];
    // The padded rectangle of each cloud, and the pieces of each number (model.ts groups).
    const innerOf = new Map<CloudSpec, [number, number, number, number]>();
    // Pad in points, whatever the sheet's dpi: the cloud sits just outside the changed ink.
    const padPx =
      (CLOUD_PAD_PT * sheet.width) /
      (g.rotate % 180 ? g.cropBox[3] - g.cropBox[1] : g.cropBox[2] - g.cropBox[0]);
    for (const c of sheet.clouds)
      innerOf.set(
        c,
        sheetBoxToUserRect(g, {
          x: c.box.x - padPx,
          y: c.box.y - padPx,
          width: c.box.width + 2 * padPx,
          height: c.box.height + 2 * padPx,
        }),
      );
    const piecesOf = new Map<number, CloudSpec[]>();
    for (const c of sheet.clouds) piecesOf.set(c.number, [...(piecesOf.get(c.number) ?? []), c]);
    for (const c of sheet.clouds) {
      const [r, gr, b] = KIND_RGB[opts.palette][c.kind];
      const colour = `${fmt(r)} ${fmt(gr)} ${fmt(b)}`;
      // Padded in points, whatever the sheet's dpi: the cloud sits just outside the changed ink.
      const inner = innerOf.get(c)!;
      // Scallops inside the other pieces of its change are left out: the pieces' clouds together
      // outline the change (a fill removed over a plan, split in 59 pieces, is one outline).
      const others = (piecesOf.get(c.number) ?? [])
        .filter((o) => o !== c)
        .map((o) => innerOf.get(o)!);
      const reach = cloudReach(inner);
      const rect: [number, number, number, number] = [
        inner[0] - reach,
        inner[1] - reach,
        inner[2] + reach,
        inner[3] + reach,
      ];
      const ap = ctx.register(
        ctx.flateStream(
          `q ${colour} RG ${fmt(CLOUD_LINE_PT)} w 1 J 1 j\n${cloudPath(inner, others)}\nQ`,
          {
            Type: 'XObject',
            Subtype: 'Form',
            FormType: 1,
            BBox: rect,
            Matrix: [1, 0, 0, 1, 0, 0],
          },
        ),
      );
      const vertices = [
        inner[0],
        inner[1],
        inner[2],
        inner[1],
        inner[2],
        inner[3],
        inner[0],
        inner[3],
      ];
      const cloud = ctx.obj({
        Type: 'Annot',
        Subtype: 'Polygon',
        IT: 'PolygonCloud',
        Rect: rect,
        Vertices: vertices,
        BE: { S: 'C', I: 1 },
        BS: { Type: 'Border', W: CLOUD_LINE_PT, S: 'S' },
        C: [r, gr, b],
        CA: 1,
        F: 4, // Print: the clouds go on paper too.
        P: page.ref,
        M: date,
        CreationDate: date,
        AP: { N: ap },
      }) as PDFDict;
      // Text strings as UTF-16 (PDFHexString.fromText): notes and descriptions are any Unicode.
      cloud.set(PDFName.of('Contents'), PDFHexString.fromText(cloudContents(c)));
      cloud.set(PDFName.of('T'), PDFHexString.fromText('Blueline'));
      cloud.set(
        PDFName.of('Subj'),
        PDFHexString.fromText(`Revision cloud ${c.number}: ${KIND_LABEL[c.kind]} ${c.category}`),
      );
      // A unique name per change: a re-export replaces rather than duplicates in tools that merge.
      cloud.set(PDFName.of('NM'), PDFHexString.fromText(c.change_id));
      const cloudRef = ctx.register(cloud);
      annots.push(cloudRef);
      if (opts.tags && c.tagged)
        annots.push(tagAnnotation(doc, page.ref, cloudRef, g, c, sheet, helv, colour, date));
    }
    if (annots.length) {
      const existing = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
      if (existing) for (const a of annots) existing.push(a);
      else page.node.set(PDFName.of('Annots'), ctx.obj(annots));
    }
    onSheet?.();
  }
  // No object streams: the output stays readable by older tools, and the page objects keep their
  // plain form.
  return doc.save({ useObjectStreams: false });
}

/**
 * The numbered delta tag (a triangle with the change's number) just above and right of the cloud
 * as the page is displayed, drawn upright whatever the page's /Rotate: its appearance is turned by
 * the page's rotation in user space, which the viewer's rotation then undoes.
 */
function tagAnnotation(
  doc: PDFDocument,
  pageRef: PDFRef,
  cloudRef: PDFRef,
  g: PageGeometry,
  c: CloudSpec,
  sheet: CloudedSheet,
  font: PDFRef,
  colour: string,
  date: PDFString,
): PDFRef {
  const ctx = doc.context;
  const displayW = g.rotate % 180 ? g.cropBox[3] - g.cropBox[1] : g.cropBox[2] - g.cropBox[0];
  const pxPerPt = sheet.width / displayW;
  // Centre of the tag in sheet pixels (display orientation): above the cloud's top-right corner.
  const off = (CLOUD_PAD_PT + 16) * pxPerPt;
  const b = c.tag_box;
  const cxPx = Math.min(sheet.width - (TAG_PT / 2) * pxPerPt, b.x + b.width + off);
  const cyPx = Math.max((TAG_PT / 2) * pxPerPt, b.y - off);
  const [cx, cy] = sheetPixelToUserSpace(g, cxPx, cyPx);
  const half = TAG_PT / 2;
  const rect = [cx - half, cy - half, cx + half, cy + half];
  const label = String(c.number);
  const size = label.length > 2 ? 7.5 : 9.5;
  // Helvetica-Bold digits are 0.556 em wide.
  const textW = label.length * 0.556 * size;
  const rad = (g.rotate * Math.PI) / 180;
  const cos = Math.cos(rad),
    sin = Math.sin(rad);
  const m = [cos, sin, -sin, cos, cx, cy].map((v) => fmt(Math.abs(v) < 1e-9 ? 0 : v)).join(' ');
  const content = [
    'q',
    `${m} cm`,
    // The triangle, centred on the tag, apex up; white fill so the number reads over linework.
    `1 1 1 rg ${colour} RG 1.2 w 1 j`,
    `${fmt(-half + 0.8)} ${fmt(-half + 1.5)} m ${fmt(half - 0.8)} ${fmt(-half + 1.5)} l 0 ${fmt(half - 0.8)} l h B`,
    `BT /Helv ${fmt(size)} Tf ${colour} rg ${fmt(-textW / 2)} ${fmt(-half + 3)} Td (${label}) Tj ET`,
    'Q',
  ].join('\n');
  const ap = ctx.register(
    ctx.flateStream(content, {
      Type: 'XObject',
      Subtype: 'Form',
      FormType: 1,
      BBox: rect,
      Matrix: [1, 0, 0, 1, 0, 0],
      Resources: { Font: { Helv: font } },
    }),
  );
  const tag = ctx.obj({
    Type: 'Annot',
    Subtype: 'FreeText',
    Rect: rect,
    // What a tool regenerating the appearance uses: font, size and colour of the number.
    DA: PDFString.of(`/Helv ${fmt(size)} Tf ${colour} rg`),
    Q: 1,
    Rotate: g.rotate,
    C: [1, 1, 1],
    BS: { W: 0 },
    F: 4,
    P: pageRef,
    // Grouped with its cloud (ISO 32000 §12.5.6.2, /RT /Group): markup tools list and move the two
    // as one markup, whose text is the cloud's.
    IRT: cloudRef,
    RT: 'Group',
    M: date,
    CreationDate: date,
    AP: { N: ap },
  }) as PDFDict;
  tag.set(PDFName.of('Contents'), PDFHexString.fromText(label));
  tag.set(PDFName.of('T'), PDFHexString.fromText('Blueline'));
  tag.set(PDFName.of('Subj'), PDFHexString.fromText(`Delta tag ${label}`));
  tag.set(PDFName.of('NM'), PDFHexString.fromText(`${c.change_id}-tag`));
  tag.set(PDFName.of('Rotate'), PDFNumber.of(g.rotate));
  return ctx.register(tag);
}
