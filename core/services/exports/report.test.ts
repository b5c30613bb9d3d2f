import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDict, PDFDocument, PDFName, PDFStream, type PDFRawStream } from 'pdf-lib';
import sharp from 'sharp';
import { afterAll, describe, expect, it } from 'vitest';
import { FONT_FILES, findFontsDir, plainFontkit, reportFontBytes } from './fonts';
import { groupTouching } from './geometry';
import { numberGroups, type ExportChange, type ExportModel, type ExportPair } from './model';
import { pngToPdfImage, type PdfImage } from './report-image';
import { DETAIL_AFTER, buildReportPdf, compactRanges, detailViews } from './report-pdf';

// The review report's pieces on synthetic sheets: Unicode text through the embedded font, pieces of
// one change grouped under one number, dense sheets given detail views, poor alignment said plainly.
// Documents are read back with poppler (pdftotext, pdftoppm), not with the library that wrote them.

const tmp = mkdtempSync(join(tmpdir(), 'blueline-report-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
const box = (x: number, y: number, width: number, height: number) => ({ x, y, width, height });

let ids = 0;
function change(p: Partial<ExportChange> & Pick<ExportChange, 'bbox'>): ExportChange {
  return {
    id: `chg_${++ids}`,
    overlay_id: 'ovl_1',
    number: null,
    group_size: 0,
    tagged: false,
    box_on_newer: p.bbox,
    kind: 'modified',
    category: 'dimension',
    description: `Change ${ids}`,
    text_before: null,
    text_after: null,
    review_status: 'open',
    note: null,
    ...p,
  };
}

function pdftotext(bytes: Uint8Array, name: string): string {
  const path = join(tmp, name);
  writeFileSync(path, bytes);
  return execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' });
}

describe('groups', () => {
  it('chains touching pieces of the same change, and nothing else', () => {
    const items = [
      { bbox: box(0, 0, 10, 10), k: 'fill' },
      { bbox: box(12, 0, 10, 10), k: 'fill' }, // 2 px from the first
      { bbox: box(24, 0, 10, 10), k: 'fill' }, // chained through the second
      { bbox: box(60, 0, 10, 10), k: 'fill' }, // too far
      { bbox: box(0, 12, 10, 10), k: 'dim' }, // touching, but another change
    ];
    const groups = groupTouching(items, (i) => i.k, 4);
    expect(groups.map((g) => g.map((i) => items.indexOf(i)))).toEqual([[0, 1, 2], [3], [4]]);
  });

  it('numbers groups in reading order, the pieces sharing the number, noise left unnumbered', () => {
    const fillPieces = [0, 1, 2].map((i) =>
      change({
        bbox: box(100 + i * 50, 500, 50, 50),
        kind: 'removed',
        category: 'fill',
        description: 'Fill removed',
      }),
    );
    const top = change({ bbox: box(400, 10, 20, 20) });
    const noise = change({ bbox: box(5, 5, 3, 3), category: 'noise' });
    const { changes, groups } = numberGroups([noise, top, ...fillPieces], 50, 4);
    expect(groups.map((g) => g.number)).toEqual([1, 2]);
    expect(groups[0]!.change_ids).toEqual([top.id]);
    expect(groups[1]!.change_ids).toEqual(fillPieces.map((c) => c.id));
    expect(groups[1]!.bbox).toEqual(box(100, 500, 150, 50));
    expect(fillPieces.map((c) => [c.number, c.group_size, c.tagged])).toEqual([
      [2, 3, true],
      [2, 3, false],
      [2, 3, false],
    ]);
    expect(noise.number).toBeNull();
    expect(changes.at(-1)).toBe(noise);
  });

  it('compacts number ranges', () => {
    expect(compactRanges([1, 2, 3, 5, 7, 8])).toBe('1–3, 5, 7–8');
    expect(compactRanges([4])).toBe('4');
  });
});

describe('detail views', () => {
  it('none for a sheet with few changes; views of at most 20 numbers covering every group once otherwise', () => {
    const overlay = { width: 3000, height: 2000 };
    const few = Array.from({ length: DETAIL_AFTER }, (_, i) => ({
      bbox: box(i * 100, 50, 20, 20),
    }));
    expect(detailViews(few, overlay, 1.6)).toEqual([]);
    const many = Array.from({ length: 130 }, (_, i) => ({
      bbox: box(100 + (i % 13) * 200, 100 + Math.floor(i / 13) * 170, 30, 25),
    }));
    const views = detailViews(many, overlay, 1.6);
    expect(views.length).toBeGreaterThan(1);
    const seen = views.flatMap((v) => v.members).sort((a, b) => a - b);
    expect(seen).toEqual(many.map((_, i) => i));
    for (const v of views) {
      expect(v.members.length).toBeLessThanOrEqual(20);
      expect(v.view.x).toBeGreaterThanOrEqual(0);
      expect(v.view.y).toBeGreaterThanOrEqual(0);
      expect(v.view.x + v.view.w).toBeLessThanOrEqual(overlay.width);
      expect(v.view.y + v.view.h).toBeLessThanOrEqual(overlay.height);
      // Each member whole inside its view.
      for (const m of v.members) {
        const b = many[m]!.bbox;
        expect(b.x).toBeGreaterThanOrEqual(v.view.x);
        expect(b.x + b.width).toBeLessThanOrEqual(v.view.x + v.view.w);
      }
    }
  });
});

describe('fonts', () => {
  it('are found in resources/fonts with their licence', () => {
    const dir = findFontsDir();
    for (const f of Object.values(FONT_FILES))
      expect(readFileSync(join(dir, f)).length).toBeGreaterThan(100_000);
    expect(readFileSync(join(dir, 'LICENSE-DejaVu.txt'), 'utf8')).toMatch(/Bitstream Vera/);
  });

  it('subset, draw the same glyphs as the whole font (pdftoppm), so subsetting loses nothing', async () => {
    // @pdf-lib/fontkit's TrueType subsetter has been known to shift glyphs in some fonts: render the
    // report's kind of text with the subset and with the whole font, and compare the pixels. The
    // layout is the report's (plainFontkit: a glyph per code point), so text extracts as written.
    const sample = `10'-8 1/4" → 7'-3 1/2"  ⌀12 @ 45°  ½ ¼ ⅛ ± × “quoted” ‘x’ — … · ≥ ≤ Ω μ Ж Ä é ñ ß 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz !@#$%&*()[]{}<>/?|`;
    const faces = reportFontBytes();
    for (const face of ['regular', 'bold', 'italic'] as const) {
      const renders: Buffer[] = [];
      for (const subset of [true, false]) {
        const doc = await PDFDocument.create();
        doc.registerFontkit(plainFontkit);
        const font = await doc.embedFont(faces[face], { subset });
        doc.addPage([1500, 60]).drawText(sample, { x: 10, y: 25, size: 13, font });
        const path = join(tmp, `${face}-${subset}.pdf`);
        writeFileSync(path, await doc.save());
        execFileSync('pdftoppm', ['-r', '100', '-png', '-singlefile', path, path]);
        renders.push(readFileSync(`${path}.png`));
        if (subset)
          expect(norm(pdftotext(readFileSync(path), `${face}-text.pdf`))).toBe(norm(sample));
      }
      expect(renders[0]!.equals(renders[1]!), face).toBe(true);
    }
  });
});

/** A white overlay image with a grey frame, as a report image. */
async function overlayImage(width: number, height: number): Promise<PdfImage> {
  const png = await sharp({ create: { width, height, channels: 3, background: '#ffffff' } })
    .composite([
      {
        input: Buffer.from(
          `<svg width="${width}" height="${height}"><rect x="20" y="20" width="${width - 40}" height="${height - 40}" fill="none" stroke="#555" stroke-width="6"/></svg>`,
        ),
      },
    ])
    .png({ palette: true, colours: 4 })
    .toBuffer();
  return pngToPdfImage(png);
}

function pairOf(
  n: number,
  changes: ExportChange[],
  overlay: Partial<NonNullable<ExportPair['overlay']>> = {},
): ExportPair {
  const { changes: numbered, groups } = numberGroups(changes, 100, 10);
  const sheet = (drawing: string) => ({
    id: `sht_${drawing}${n}`,
    drawing_id: drawing,
    page_index: n,
    sheet_number: `A${100 + n}`,
    title: `Plan ${n}`,
    width: 3000,
    height: 2000,
    dpi: 150,
  });
  const counts = { open: 0, accepted: 0, rejected: 0, flagged: 0 };
  for (const c of changes) if (c.category !== 'noise') counts[c.review_status]++;
  const real = changes.filter((c) => c.category !== 'noise').length;
  const lowConfidence = overlay.low_confidence ?? false;
  return {
    status: real ? 'changed' : lowConfidence ? 'not_aligned' : 'unchanged',
    sheet_a: sheet('drw_a'),
    sheet_b: sheet('drw_b'),
    overlay: {
      id: `ovl_${n}`,
      width: 3000,
      height: 2000,
      score: 0.8,
      analyzed: true,
      low_confidence: false,
      alignment_confidence: 0.9,
      alignment_warning: null,
      image_key: 'k',
      image_key_colorblind: 'k',
      ...overlay,
    },
    changes: numbered,
    groups,
    counts,
    noise: changes.length - real,
  };
}

function modelOf(pairs: ExportPair[]): ExportModel {
  const drawing = (id: string, name: string, revision: string) => ({
    id,
    name,
    revision,
    issued_at: '2026-11-01',
    file_id: `fil_${id}`,
    file_object_key: 'k',
    file_content_type: 'application/pdf',
    filename: `${name}.pdf`,
  });
  return {
    project: { id: 'prj_1', name: 'Report test' },
    comparison: {
      id: 'job_1',
      mode: 'drawing',
      created_at: '2026-11-27T08:00:00.000Z',
      finished_at: '2026-11-27T08:01:00.000Z',
    },
    older: drawing('drw_a', 'Older set', 'Rev A'),
    newer: drawing('drw_b', 'Newer set', 'Rev B'),
    pairs,
    review_status: null,
  };
}

const opts = {
  page_size: 'letter' as const,
  palette: 'standard' as const,
  exported_at: new Date('2026-11-27T09:00:00Z'),
  exported_by: 'test key',
};

describe('report', () => {
  it('prints descriptions and notes in Unicode as the API holds them, in a subset font', async () => {
    const unicode = [
      `Dimension 10'-8 1/4" → 7'-3 1/2"`,
      'Pipe ⌀150 at 45°, ½" gap ± ⅛"',
      'Text changed: ‘W3’ → ‘W5’',
    ];
    const notes = ['Vérifier «côté» — Ωμέγα, Жук', 'Ask the engineer: “is 2×4 ok?”'];
    const changes = unicode.map((d, i) =>
      change({ bbox: box(200 + i * 600, 300, 80, 60), description: d, note: notes[i] ?? null }),
    );
    const img = await overlayImage(750, 500);
    const bytes = await buildReportPdf(
      modelOf([pairOf(1, changes)]),
      new Map([['ovl_1', img]]),
      opts,
    );
    const text = pdftotext(bytes, 'unicode.pdf').replace(/\s+/g, ' ');
    for (const s of [...unicode, ...notes]) expect(text).toContain(s);
    expect(text).not.toContain('->');
    // The fonts are embedded as subsets: small.
    const doc = await PDFDocument.load(bytes);
    let fontBytes = 0;
    let fontFiles = 0;
    for (const [, obj] of doc.context.enumerateIndirectObjects()) {
      if (!(obj instanceof PDFDict) || obj.get(PDFName.of('Type')) !== PDFName.of('FontDescriptor'))
        continue;
      const file = doc.context.lookup(obj.get(PDFName.of('FontFile2')));
      expect(file).toBeInstanceOf(PDFStream);
      fontBytes += (file as PDFRawStream).getContentsSize();
      fontFiles++;
    }
    expect(fontFiles).toBeGreaterThanOrEqual(2);
    expect(fontBytes).toBeGreaterThan(0);
    expect(fontBytes).toBeLessThan(150_000);
  });

  it('keeps a sheet of 130 changes legible: pieces under one number, detail views each with its list, no noise', async () => {
    // 40 pieces of one removed fill over a plan (a 8x5 grid of touching boxes) and 90 dimension
    // changes of their own, spread over the sheet, plus noise that must not appear.
    const fill = Array.from({ length: 40 }, (_, i) =>
      change({
        bbox: box(300 + (i % 8) * 100, 300 + Math.floor(i / 8) * 100, 100, 100),
        kind: 'removed',
        category: 'fill',
        description: 'Fill removed',
      }),
    );
    const dims = Array.from({ length: 90 }, (_, i) =>
      change({
        bbox: box(150 + (i % 15) * 180, 150 + Math.floor(i / 15) * 300, 60, 30),
        description: `Dimension ${i + 1}'-0" → ${i + 1}'-6"`,
      }),
    );
    const noise = Array.from({ length: 5 }, (_, i) =>
      change({
        bbox: box(50 + i * 10, 1900, 4, 4),
        category: 'noise',
        description: `Small pixel difference (${i + 3} px), likely noise`,
      }),
    );
    const pair = pairOf(2, [...fill, ...dims, ...noise]);
    expect(pair.groups).toHaveLength(91);
    const img = await overlayImage(1500, 1000);
    const bytes = await buildReportPdf(modelOf([pair]), new Map([['ovl_2', img]]), opts);
    const path = join(tmp, 'dense.pdf');
    writeFileSync(path, bytes);
    const pages = Number(
      /Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [path], { encoding: 'utf8' }))![1],
    );
    const text = execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' });
    const flat = text.replace(/\s+/g, ' ');
    expect(flat).toContain('130 changes in 91 numbered groups');
    expect(flat).toContain('(5 noise regions not shown)');
    expect(flat).toMatch(/detail A of \d+/);
    for (const d of dims) expect(flat).toContain(d.description!);
    expect(flat).toContain('Fill removed');
    expect(flat).toContain('40 regions');
    for (const n of noise) expect(flat).not.toContain(n.description!);
    // Each group listed once, on the page of the detail view holding it (or its continuation).
    const count = (hay: string, needle: string) => hay.split(needle).length - 1;
    for (const d of dims) expect(count(flat, `${d.description!} `), d.description!).toBe(1);
    expect(count(flat, 'Fill removed')).toBe(1);
    const pageTexts = text.split('\f');
    const details = Number(/detail A of (\d+)/.exec(flat)![1]);
    expect(pageTexts.filter((p) => /^A102 — Plan 2 — detail [A-Z] of \d+$/m.test(p))).toHaveLength(
      details,
    );
    const continued = pageTexts.filter((p) => /— changes \(continued\)/.test(p));
    // Cover, summary, overview, the detail pages and their continuations: nothing else.
    expect(pages).toBe(3 + details + continued.length);
    // A detail page names the numbers it shows, and lists each of them (there or on its
    // continuation pages, before the next detail).
    const isDetail = (p: string) => /^A102 — Plan 2 — detail [A-Z] of \d+$/m.test(p);
    pageTexts.forEach((p, i) => {
      if (!isDetail(p)) return;
      let section = p;
      for (let j = i + 1; j < pageTexts.length && !isDetail(pageTexts[j]!); j++)
        section += pageTexts[j];
      const head = /Changes ([\d–, ]+)/.exec(p)![1]!;
      const nums = head.split(', ').flatMap((r) => {
        const [a, b] = r.split('–').map(Number);
        return Array.from({ length: (b ?? a!) - a! + 1 }, (_, i) => a! + i);
      });
      expect(nums.length).toBeGreaterThan(0);
      expect(nums.length).toBeLessThanOrEqual(20);
      for (const n of nums) {
        const g = pair.groups.find((x) => x.number === n)!;
        const c = [...fill, ...dims].find((x) => x.id === g.change_ids[0])!;
        if (c.category === 'dimension')
          expect(section.replace(/\s+/g, ' ')).toContain(c.description!);
      }
    });
  });

  it('says plainly when a sheet could not be aligned: on the cover, in the summary and on its page', async () => {
    const img = await overlayImage(750, 500);
    const warning = 'Poor alignment (confidence 0.21, residual 14.0 px): check by eye.';
    const bytes = await buildReportPdf(
      modelOf([
        pairOf(1, [change({ bbox: box(300, 300, 80, 60) })]),
        pairOf(3, [], {
          id: 'ovl_3',
          low_confidence: true,
          alignment_confidence: 0.21,
          alignment_warning: warning,
        }),
      ]),
      new Map([
        ['ovl_1', img],
        ['ovl_3', img],
      ]),
      opts,
    );
    const pagesText = pdftotext(bytes, 'poor.pdf').split('\f');
    const flat = (s: string) => s.replace(/\s+/g, ' ');
    expect(flat(pagesText[0]!)).toContain('Poor alignment on 1 sheet: A103.');
    expect(flat(pagesText[0]!)).toContain('1 not aligned (not known)');
    expect(flat(pagesText[1]!)).toMatch(/A103 Plan 3 Poor alignment/);
    const sheetPage = pagesText.findIndex((p) => /^A103 — Plan 3/m.test(p));
    expect(sheetPage).toBeGreaterThan(1);
    expect(flat(pagesText[sheetPage]!)).toContain('POOR ALIGNMENT (confidence 0.21)');
    expect(flat(pagesText[sheetPage]!)).toContain('Compare this sheet by eye.');
    expect(flat(pagesText[sheetPage]!)).toContain(warning);
    // The well aligned sheet says nothing of the kind.
    const other = pagesText.findIndex((p) => /^A101 — Plan 1/m.test(p));
    expect(flat(pagesText[other]!)).not.toMatch(/alignment/i);
  });
});
