import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inflateSync } from 'node:zlib';
import { parse as parseCsv } from 'csv-parse/sync';
import { PDFArray, PDFDocument, PDFName, PDFRawStream, type PDFObject } from 'pdf-lib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPdfjsText } from '../vision/input/pdfjs-text';
import { invertAffine } from '../vision/compare/register';
import { FIXTURES, uploadDrawing, waitForJob } from './flows';
import { download, startTestService, type TestService } from './harness';
import { ensureOrganization, grantCredits } from '../store/repositories/organizations.repository';

// Exports of a finished comparison (contract §6) end to end over HTTPS, on the barber house set
// (9 sheets; the newer set is 22x34 with /Rotate 90 against an 11x17 older set) and the beam
// proposal (5 sheets, only S101 changes). Every document is checked with a reader that is not the
// one that wrote it: pdf.js, poppler (pdfinfo, pdftotext, pdftoppm) and csv-parse.

const LONG = 900_000;
const BARBER_OLD = '20130718_barber-house_set_9-sheets.pdf';
const BARBER_NEW = '20130724_barber-house_set_9-sheets.pdf';
const BEAM_OLD = '20190601_beam-proposal_5-sheets.pdf';
const BEAM_NEW = '20190602_beam-proposal_5-sheets.pdf';

let t: TestService;
let projectId: string;
let tmp: string;
const cmp: Record<'barber' | 'beam', string> = { barber: '', beam: '' };
const drawings: Record<string, { id: string; job_id: string }> = {};

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Whole-sheet overlays of a comparison through the API: a Sheet block pair, else the largest. */
async function wholeSheetOverlays(jobId: string) {
  const r = await t.request(
    'GET',
    `/v1/overlays?job_id=${jobId}&limit=100&expand=block_a,block_b.sheet`,
  );
  expect(r.status).toBe(200);
  expect(r.body._meta.next).toBeNull();
  const best = new Map<string, any>();
  for (const o of r.body.data) {
    const key = `${o.block_a.sheet_id}:${o.block_b.sheet_id}`;
    const cur = best.get(key);
    const area = (x: any) => x.block_a.bbox.width * x.block_a.bbox.height;
    const sheet = (x: any) => x.block_a.type === 'Sheet';
    if (!cur || (sheet(o) && !sheet(cur)) || (sheet(o) === sheet(cur) && area(o) > area(cur)))
      best.set(key, o);
  }
  return [...best.values()];
}

/** Every change of an overlay, all pages (a whole sheet of a real set can have over 100). */
async function changesOf(overlayId: string): Promise<any[]> {
  const out: any[] = [];
  let url: string | null = `/v1/changes?overlay_id=${overlayId}&limit=100`;
  while (url) {
    const r: { status: number; body: any } = await t.request('GET', url);
    expect(r.status).toBe(200);
    out.push(...r.body.data);
    url = r.body._meta.next ? `/v1/changes?cursor=${encodeURIComponent(r.body._meta.next)}` : null;
  }
  return out;
}

/** Runs an export to its end and returns the job and the downloaded bytes. */
async function runExport(body: Record<string, unknown>) {
  const started = Date.now();
  const res = await t.request('POST', '/v1/exports', { body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.headers.location).toBe(`/v1/jobs/${res.body.job_id}`);
  const job = await waitForJob(t, res.body.job_id, LONG, 100);
  expect(job.status, JSON.stringify(job.error)).toBe('Completed');
  expect(job.type).toBe('export');
  expect(job.credits_charged).toBe(0);
  expect(job.progress.total).toBeGreaterThan(0);
  expect(job.progress.completed).toBe(job.progress.total);
  const file = await t.request('GET', `/v1/files/${job.result.file_id}`);
  expect(file.status).toBe(200);
  const bytes = await download(t, file.body.uri);
  expect(file.body.size_bytes).toBe(bytes.length);
  const ms = Date.now() - started;
  console.log(`export ${String(body.format)}: ${ms} ms, ${bytes.length} bytes`);
  return { job, file: file.body, bytes, ms };
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'blueline-exports-'));
  t = await startTestService({ workers: 2 });
  await grantCredits(
    t.svc.db,
    (await ensureOrganization(t.svc.db, 'Test Org')).id,
    10_000,
    'grant',
  );
  projectId = (await t.request('POST', '/v1/projects', { body: { name: 'Barber & Aalseth' } })).body
    .id;
  for (const [k, f, rev] of [
    ['barberOld', BARBER_OLD, 'Issue 07-18'],
    ['barberNew', BARBER_NEW, 'Issue 07-24'],
    ['beamOld', BEAM_OLD, 'Beam 06-01'],
    ['beamNew', BEAM_NEW, 'Beam 06-02'],
  ] as const)
    drawings[k] = await uploadDrawing(t, projectId, f, k, { revision: rev });
  for (const d of Object.values(drawings))
    expect((await waitForJob(t, d.job_id, LONG)).status).toBe('Completed');
  for (const [k, newer, older] of [
    ['barber', 'barberNew', 'barberOld'],
    ['beam', 'beamNew', 'beamOld'],
  ] as const) {
    const r = await t.request('POST', `/v1/drawings/${drawings[newer]!.id}/compare`, {
      body: { compare_to: drawings[older]!.id, analyze: true },
    });
    expect(r.status).toBe(202);
    cmp[k] = r.body.job_id;
  }
  for (const id of Object.values(cmp))
    expect((await waitForJob(t, id, LONG)).status).toBe('Completed');
}, LONG);

afterAll(async () => {
  await t?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('csv', () => {
  it(
    'has one row per change of the whole-sheet overlays, and round-trips quotes, commas and newlines in notes',
    async () => {
      const overlays = await wholeSheetOverlays(cmp.barber);
      const changes = (await Promise.all(overlays.map((o) => changesOf(o.id)))).flat();
      expect(changes.length).toBeGreaterThan(3);
      const tricky = [
        'Column moved 2", see "detail 4", grid B/3',
        'Two lines,\r\nthen a third\nwith “curly quotes” and ½" — ok',
        '=HYPERLINK("http://example.invalid")',
      ];
      for (const [i, note] of tricky.entries()) {
        const r = await t.request('PATCH', `/v1/changes/${changes[i]!.id}`, {
          body: { note, review_status: i === 0 ? 'flagged' : 'accepted' },
        });
        expect(r.status).toBe(200);
      }

      const { bytes, file } = await runExport({ job_id: cmp.barber, format: 'csv' });
      expect(file.content_type).toBe('text/csv');
      expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
      const rows: Record<string, string>[] = parseCsv(bytes, { bom: true, columns: true });
      expect(rows).toHaveLength(changes.length);
      const byLink = new Map(rows.map((r) => [new URL(r.link!).hash, r]));
      for (const c of changes) {
        const hash = [...byLink.keys()].find((h) => h.endsWith(`change=${c.id}`));
        expect(hash, c.id).toBeDefined();
        const row = byLink.get(hash!)!;
        expect(row.kind).toBe(c.kind);
        expect(row.category).toBe(c.category);
        expect(row.description).toBe(c.description ?? '');
        expect(row.text_before).toBe(c.text_before ?? '');
        expect(row.text_after).toBe(c.text_after ?? '');
        // The web UI's overlay route with the change selected (renderer/src/app/route.test.ts parses
        // this very form), at the origin that served the request.
        expect(row.link).toBe(
          `${t.origin}/#/projects/${projectId}/overlays/${c.overlay_id}?job=${cmp.barber}&change=${c.id}`,
        );
      }
      const noteOf = (id: string) => [...byLink.entries()].find(([h]) => h.endsWith(id))![1].note;
      expect(noteOf(changes[0]!.id)).toBe(tricky[0]);
      expect(noteOf(changes[1]!.id)).toBe(tricky[1]);
      // A formula typed as a note stays text in a spreadsheet.
      expect(noteOf(changes[2]!.id)).toBe(`'${tricky[2]}`);
      expect(
        rows.every((r) =>
          ['A102', 'A103', 'A201', 'A202', 'A301', 'A302', 'A303', 'A304', 'A305'].includes(
            r.sheet_number!,
          ),
        ),
      ).toBe(true);
      // change_number is the number of the change's cloud in the report and the clouded PDF:
      // pieces of one change (same kind, category, description) share it, noise has none.
      const byNumber = new Map<string, Record<string, string>[]>();
      for (const r of rows) {
        if (r.category === 'noise') {
          expect(r.change_number).toBe('');
          continue;
        }
        expect(r.change_number).toMatch(/^\d+$/);
        const k = `${r.sheet_number}#${r.change_number}`;
        byNumber.set(k, [...(byNumber.get(k) ?? []), r]);
      }
      for (const group of byNumber.values())
        for (const r of group)
          expect([r.kind, r.category, r.description]).toEqual([
            group[0]!.kind,
            group[0]!.category,
            group[0]!.description,
          ]);
      expect(byNumber.size).toBeLessThan(rows.filter((r) => r.category !== 'noise').length);
      expect(rows[0]!.old_set).toContain('Issue 07-18');
      expect(rows[0]!.new_set).toContain('Issue 07-24');

      // review_status limits the rows.
      const flagged = await runExport({
        job_id: cmp.barber,
        format: 'csv',
        review_status: ['flagged'],
      });
      const frows: Record<string, string>[] = parseCsv(flagged.bytes, { bom: true, columns: true });
      expect(frows).toHaveLength(1);
      expect(frows[0]!.note).toBe(tricky[0]);
    },
    LONG,
  );
});

describe('pdf_report', () => {
  it(
    'opens in pdf.js and poppler, with every sheet number and every change description as text',
    async () => {
      const overlays = await wholeSheetOverlays(cmp.barber);
      const changes = (await Promise.all(overlays.map((o) => changesOf(o.id)))).flat();
      const listed = changes.filter((c) => c.category !== 'noise');
      // A note in the words a reviewer types: the report prints it as typed (embedded Unicode font).
      const unicodeNote = `Check 10'-8 1/4" → 7'-3 1/2" (⌀ 45°, ½" gap) with Ωμέγα`;
      const noted = listed.find((c) => !c.note)!;
      expect(
        (await t.request('PATCH', `/v1/changes/${noted.id}`, { body: { note: unicodeNote } }))
          .status,
      ).toBe(200);

      const { bytes, file } = await runExport({ job_id: cmp.barber, format: 'pdf_report' });
      expect(file.content_type).toBe('application/pdf');
      const path = join(tmp, 'report.pdf');
      writeFileSync(path, bytes);
      const pdfjsDoc = await openPdfjsText(new Uint8Array(bytes));
      const info = execFileSync('pdfinfo', [path], { encoding: 'utf8' });
      const pages = Number(/Pages:\s+(\d+)/.exec(info)![1]);
      expect(pages).toBe(pdfjsDoc.numPages);
      expect(info).toMatch(/Page size:\s+792 x 612 pts \(letter\)/);

      const changedSheets = new Set(listed.map((c) => c.overlay_id)).size;
      // Cover, one summary page, then at least a page per changed sheet.
      expect(pages).toBeGreaterThanOrEqual(2 + changedSheets);

      const text = norm(execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' }));
      for (const n of ['A102', 'A103', 'A201', 'A202', 'A301', 'A302', 'A303', 'A304', 'A305'])
        expect(text).toContain(n);
      // Descriptions as the API holds them, → and all (the report embeds a Unicode font).
      for (const c of listed) expect(text, c.id).toContain(norm(c.description));
      expect(listed.some((c) => c.description.includes('→'))).toBe(true);
      expect(text).not.toContain('->');
      expect(text).toContain(unicodeNote);
      // Noise regions are counted, not listed.
      for (const c of changes.filter((c) => c.category === 'noise' && c.description))
        expect(text).not.toContain(norm(c.description));
      // The barber plans have over 100 changes on a sheet: pieces of one change share a number,
      // and the densest sheets get detail views.
      expect(
        Math.max(...overlays.map((o) => listed.filter((c) => c.overlay_id === o.id).length)),
      ).toBeGreaterThan(100);
      expect(text).toMatch(/in \d+ numbered groups/);
      expect(text).toMatch(/detail A of \d+/);
      expect(text).toContain('Issue 07-18');
      expect(text).toContain('Issue 07-24');
      // pdf.js reads the same text.
      const page2 = await pdfjsDoc.getPage(2);
      const items = (await page2.getTextContent()).items.map((i: any) => i.str).join(' ');
      expect(items).toContain('A305');
      await pdfjsDoc.destroy();

      // A4 and the colour-blind palette: another page size, the same content.
      const a4 = await runExport({
        job_id: cmp.barber,
        format: 'pdf_report',
        page_size: 'a4',
        palette: 'colorblind',
      });
      const a4Path = join(tmp, 'report-a4.pdf');
      writeFileSync(a4Path, a4.bytes);
      expect(execFileSync('pdfinfo', [a4Path], { encoding: 'utf8' })).toMatch(
        /Page size:\s+841\.89 x 595\.28 pts \(A4\)/,
      );
    },
    LONG,
  );
});

describe('pdf_report, poor alignment', () => {
  it(
    'marks a sheet whose alignment is not trusted on the cover, in the summary and on its own page',
    async () => {
      // Beam S300 compares with a trusted alignment and no change; its overlay is marked as change
      // detection marks an untrusted one (compare-tasks.ts: low_confidence, a warning, no regions)
      // for this test, then restored.
      const s300 = (await wholeSheetOverlays(cmp.beam)).find(
        (o) => o.block_b.sheet.sheet_number === 'S300',
      )!;
      const warning =
        'Poor alignment (confidence 0.21, residual 14.0 px): these may not show the same drawing.';
      const db = t.svc.db;
      const before = (await db
        .prepare('SELECT alignment FROM overlays WHERE id = ?')
        .get(s300.id)) as {
        alignment: string;
      };
      // The alignment JSON edited in JS and written back: the same on SQLite and PostgreSQL.
      const poor = {
        ...JSON.parse(before.alignment),
        low_confidence: true,
        confidence: 0.21,
        warning,
      };
      await db
        .prepare('UPDATE overlays SET alignment = ? WHERE id = ?')
        .run(JSON.stringify(poor), s300.id);
      try {
        const { bytes } = await runExport({ job_id: cmp.beam, format: 'pdf_report' });
        const path = join(tmp, 'beam-poor.pdf');
        writeFileSync(path, bytes);
        const pages = execFileSync('pdftotext', [path, '-'], { encoding: 'utf8' })
          .split('\f')
          .map(norm);
        expect(pages[0]).toContain('Poor alignment on 1 sheet: S300.');
        expect(pages[0]).toContain('1 not aligned (not known)');
        expect(pages[1]).toMatch(/S300 .*Poor alignment/);
        const own = pages.findIndex((p) => p.startsWith('S300 —'));
        expect(own).toBeGreaterThan(1);
        expect(pages[own]).toContain('POOR ALIGNMENT (confidence 0.21)');
        expect(pages[own]).toContain('Compare this sheet by eye.');
        expect(pages[own]).toContain(warning);
        // S101 (the added column) is the only other sheet with pages, and says nothing of it.
        const s101 = pages.findIndex((p) => p.startsWith('S101 —'));
        expect(pages[s101]).not.toMatch(/alignment/i);
      } finally {
        await db
          .prepare('UPDATE overlays SET alignment = ? WHERE id = ?')
          .run(before.alignment, s300.id);
      }
    },
    LONG,
  );
});

/** Raw and decoded bytes of each content stream of each page. */
async function contentStreams(bytes: Uint8Array) {
  const doc = await PDFDocument.load(bytes, { updateMetadata: false });
  return doc.getPages().map((p) => {
    const c = p.node.get(PDFName.of('Contents'));
    const refs: PDFObject[] = c instanceof PDFArray ? c.asArray() : c ? [c] : [];
    return refs.map((r) => {
      const s = doc.context.lookup(r);
      expect(s).toBeInstanceOf(PDFRawStream);
      const raw = (s as PDFRawStream).contents;
      const filter = (s as PDFRawStream).dict.get(PDFName.of('Filter'))?.toString();
      return {
        raw: Buffer.from(raw),
        decoded: filter === '/FlateDecode' ? inflateSync(raw) : Buffer.from(raw),
      };
    });
  });
}

/** pdfinfo -box per page: size, rotation and boxes. */
function pageBoxes(path: string): string[] {
  const info = execFileSync('pdfinfo', ['-f', '1', '-l', '99', '-box', path], { encoding: 'utf8' });
  return info.split('\n').filter((l) => /^Page\s+\d+\s+(size|rot|MediaBox|CropBox)/.test(l));
}

/** A greyscale-free RGB raster of page `page` (1-based) at `dpi`. */
async function render(path: string, page: number, dpi: number) {
  const prefix = join(tmp, `r${Date.now()}${Math.random().toString(36).slice(2)}`);
  execFileSync('pdftoppm', [
    '-r',
    String(dpi),
    '-f',
    String(page),
    '-l',
    String(page),
    '-png',
    '-singlefile',
    path,
    prefix,
  ]);
  const { data, info } = await sharp(`${prefix}.png`)
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

describe('clouded_pdf', () => {
  for (const which of ['beam', 'barber'] as const) {
    it(
      `${which}: the newer PDF untouched (pages, sizes, rotation, content streams) with a cloud per non-noise change, drawn around it`,
      async () => {
        const { bytes, file } = await runExport({ job_id: cmp[which], format: 'clouded_pdf' });
        expect(file.content_type).toBe('application/pdf');
        const srcPath = resolve(FIXTURES, which === 'beam' ? BEAM_NEW : BARBER_NEW);
        const outPath = join(tmp, `${which}-clouded.pdf`);
        writeFileSync(outPath, bytes);
        const source = readFileSync(srcPath);

        expect(pageBoxes(outPath)).toEqual(pageBoxes(srcPath));
        if (which === 'barber') expect(pageBoxes(outPath)).toContain('Page    1 rot:   90');
        const [a, b] = [await contentStreams(source), await contentStreams(bytes)];
        expect(b.length).toBe(a.length);
        a.forEach((streams, i) => {
          expect(b[i]!.length).toBe(streams.length);
          streams.forEach((s, j) => {
            expect(b[i]![j]!.raw.equals(s.raw), `page ${i + 1} stream ${j}`).toBe(true);
            expect(b[i]![j]!.decoded.equals(s.decoded)).toBe(true);
          });
        });

        const overlays = await wholeSheetOverlays(cmp[which]);
        const doc = await openPdfjsText(new Uint8Array(bytes));
        const sourceDoc = await openPdfjsText(new Uint8Array(source));
        let checkedRotated = false;
        for (const o of overlays) {
          const sheetB = o.block_b.sheet;
          const real = (await changesOf(o.id)).filter((c) => c.category !== 'noise');
          const page = await doc.getPage(sheetB.index + 1);
          const annots = await page.getAnnotations();
          const ours = annots.filter((x: any) => x.titleObj?.str === 'Blueline');
          const clouds = ours.filter((x: any) => x.subtype === 'Polygon');
          // One delta tag per number (pieces of one change share theirs, model.ts), grouped with
          // the cloud of the group's first piece (pdf.js: inReplyTo, replyType Group); a cloud's
          // Contents starts with its number.
          const tags = ours.filter((x: any) => x.subtype === 'FreeText');
          const numberOf = (cloud: any) => Number(/^(\d+)\. /.exec(cloud.contentsObj.str)![1]);
          const tagged = tags.map((tag: any) => {
            expect(tag.replyType).toBe('Group');
            return numberOf(clouds.find((c: any) => c.id === tag.inReplyTo));
          });
          const numbers = [...new Set(clouds.map(numberOf))].sort((p, q) => p - q);
          expect(tagged.sort((p: number, q: number) => p - q)).toEqual(numbers);
          // The set's own markups (the beam proposal carries the architect's clouds) stay.
          const before = await sourceDoc.getPage(sheetB.index + 1).then((p) => p.getAnnotations());
          expect(annots.length - ours.length).toBe(before.length);
          expect(clouds, `sheet ${sheetB.sheet_number}`).toHaveLength(real.length);
          // Every change has a cloud saying what changed and its review status. Several changes
          // may share a description (two "Fill removed" pieces with different review states), so
          // the clouds of one description carry exactly the statuses of that description's changes.
          const what = (x: any) =>
            String(x.contentsObj?.str ?? '')
              .split('\n')[0]!
              .replace(/^\d+\. /, '');
          const statusOf = (x: any) =>
            /\nReview: (\w+)/.exec(String(x.contentsObj?.str ?? ''))?.[1];
          const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
          for (const c of real) {
            const same = clouds.filter((x: any) => what(x) === c.description);
            expect(same.length, `${c.id}: a cloud reading "${c.description}"`).toBeGreaterThan(0);
            for (const a of same) expect(a.titleObj.str).toBe('Blueline');
            expect(same.map(statusOf).sort(), c.id).toEqual(
              real
                .filter((r) => r.description === c.description)
                .map((r) => cap(r.review_status))
                .sort(),
            );
          }
          if (real.length === 0) continue;

          // Pixels: what the clouds added to the page (output against source, rendered by poppler)
          // surrounds each change's box, mapped here without any PDF geometry: overlay px → block B
          // crop (inverse transform) → B sheet px → the displayed page at the render dpi.
          const dpi = 36;
          const [ro, rs] = [
            await render(outPath, sheetB.index + 1, dpi),
            await render(srcPath, sheetB.index + 1, dpi),
          ];
          expect([ro.width, ro.height]).toEqual([rs.width, rs.height]);
          const k = dpi / sheetB.dpi;
          expect(Math.abs(ro.width - sheetB.width * k)).toBeLessThan(2);
          const diff = (x: number, y: number) => {
            const i = (y * ro.width + x) * 3;
            return (
              Math.abs(ro.data[i]! - rs.data[i]!) +
                Math.abs(ro.data[i + 1]! - rs.data[i + 1]!) +
                Math.abs(ro.data[i + 2]! - rs.data[i + 2]!) >
              60
            );
          };
          const inv = invertAffine(o.transform);
          // A change's box on the newer page, in render pixels.
          const pageBox = (c: any): Box => {
            const pts = [
              [c.bbox.x, c.bbox.y],
              [c.bbox.x + c.bbox.width, c.bbox.y + c.bbox.height],
              [c.bbox.x + c.bbox.width, c.bbox.y],
              [c.bbox.x, c.bbox.y + c.bbox.height],
            ].map(([x, y]) => [
              (inv[0] * x! + inv[1] * y! + inv[2] + o.block_b.bbox.x) * k,
              (inv[3] * x! + inv[4] * y! + inv[5] + o.block_b.bbox.y) * k,
            ]);
            const box: Box = {
              x: Math.min(...pts.map((p) => p[0]!)),
              y: Math.min(...pts.map((p) => p[1]!)),
              width: 0,
              height: 0,
            };
            box.width = Math.max(...pts.map((p) => p[0]!)) - box.x;
            box.height = Math.max(...pts.map((p) => p[1]!)) - box.y;
            return box;
          };
          const boxes = real.map(pageBox);
          /** Over a third of the side's outside (3 px out) lies on another piece of its change. */
          const alongPiece = (i: number, side: 'left' | 'right' | 'top' | 'bottom') => {
            const c = real[i]!;
            const b = boxes[i]!;
            const pieces = boxes.filter(
              (_, j) =>
                j !== i &&
                real[j]!.kind === c.kind &&
                real[j]!.category === c.category &&
                real[j]!.description === c.description,
            );
            if (!pieces.length) return false;
            let on = 0;
            let all = 0;
            for (let s = 0.2; s <= 0.8; s += 0.05) {
              const x =
                side === 'left'
                  ? b.x - 3
                  : side === 'right'
                    ? b.x + b.width + 3
                    : b.x + s * b.width;
              const y =
                side === 'top'
                  ? b.y - 3
                  : side === 'bottom'
                    ? b.y + b.height + 3
                    : b.y + s * b.height;
              all++;
              const m = 6;
              if (
                pieces.some(
                  (p) =>
                    x > p.x - m && x < p.x + p.width + m && y > p.y - m && y < p.y + p.height + m,
                )
              )
                on++;
            }
            return on > all / 3;
          };
          for (const [idx, c] of real.entries()) {
            const box = boxes[idx]!;
            // Cloud ink lies in a band just outside each side of the box (4 pt of padding plus the
            // scallops: 2–16 px at 36 dpi), wherever that side is on the page.
            const band = (side: 'left' | 'right' | 'top' | 'bottom') => {
              let hits = 0;
              for (let d = 1; d <= 16; d++) {
                for (let s = 0.2; s <= 0.8; s += 0.05) {
                  const x = Math.round(
                    side === 'left'
                      ? box.x - d
                      : side === 'right'
                        ? box.x + box.width + d
                        : box.x + s * box.width,
                  );
                  const y = Math.round(
                    side === 'top'
                      ? box.y - d
                      : side === 'bottom'
                        ? box.y + box.height + d
                        : box.y + s * box.height,
                  );
                  if (x < 0 || y < 0 || x >= ro.width || y >= ro.height) continue;
                  if (diff(x, y)) hits++;
                }
              }
              return hits;
            };
            for (const side of ['left', 'right', 'top', 'bottom'] as const) {
              const edge = {
                left: box.x,
                right: box.x + box.width,
                top: box.y,
                bottom: box.y + box.height,
              }[side];
              const limit = side === 'left' || side === 'right' ? ro.width : ro.height;
              // A side on the page's edge is clipped there: nothing to see beyond it.
              if (edge < 3 || edge > limit - 3) continue;
              // A side along another piece of the same change (same kind, category and
              // description, touching: one number) has no scallops there: the pieces' clouds
              // outline the change together (clouded-pdf.ts).
              if (alongPiece(idx, side)) continue;
              expect(band(side), `${c.id} ${side} of ${JSON.stringify(box)}`).toBeGreaterThan(2);
            }
            // And the inside of a large change is not crossed by a cloud line through its middle,
            // unless another change's cloud passes there (fill and line-work changes overlap).
            if (box.width > 40 && box.height > 40) {
              const cx = Math.round(box.x + box.width / 2);
              const cy = Math.round(box.y + box.height / 2);
              const m = 20; // the cloud's padding and scallops, render px
              const crowded = boxes.some(
                (o2, j) =>
                  j !== idx &&
                  cx > o2.x - m &&
                  cx < o2.x + o2.width + m &&
                  cy > o2.y - m &&
                  cy < o2.y + o2.height + m,
              );
              if (!crowded) expect(diff(cx, cy), `${c.id} centre`).toBe(false);
            }
          }
          // The render is the page as displayed, in the sheet's orientation (rotation applied).
          expect(ro.height > ro.width).toBe(sheetB.height > sheetB.width);
          if (which === 'barber') checkedRotated = true;
        }
        if (which === 'barber') expect(checkedRotated).toBe(true);
        await doc.destroy();
        await sourceDoc.destroy();
      },
      LONG,
    );
  }
});

describe('bad input', () => {
  it(
    'answers the contract Problem Details',
    async () => {
      const problem = (r: any, status: number, code: string) => {
        expect(r.status, JSON.stringify(r.body)).toBe(status);
        expect(r.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(r.body.code).toBe(code);
        expect(r.body.type).toBe(`/problems/${code}`);
        expect(r.body.detail).toBeTruthy();
      };
      problem(
        await t.request('POST', '/v1/exports', { body: { job_id: cmp.beam, format: 'docx' } }),
        400,
        'validation_error',
      );
      problem(
        await t.request('POST', '/v1/exports', {
          body: { job_id: cmp.beam, format: 'csv', review_status: ['maybe'] },
        }),
        400,
        'validation_error',
      );
      problem(
        await t.request('POST', '/v1/exports', {
          body: { job_id: drawings.beamNew!.id, format: 'csv' },
        }),
        400,
        'validation_error',
      );
      // A job that is not a comparison: the drawing's processing job.
      const notCmp = await t.request('POST', '/v1/exports', {
        body: { job_id: drawings.beamNew!.job_id, format: 'csv' },
      });
      problem(notCmp, 400, 'validation_error');
      expect(notCmp.body.errors[0].field).toBe('/job_id');
      // Another organization's comparison does not exist for this caller.
      const other = await t.newOrgKey('Other Org');
      problem(
        await t.request('POST', '/v1/exports', {
          body: { job_id: cmp.beam, format: 'csv' },
          key: other,
        }),
        404,
        'not_found',
      );
      problem(await t.request('GET', `/v1/jobs/${cmp.beam}`, { key: other }), 404, 'not_found');

      // A comparison not yet Completed, then one that never will (canceled).
      const again = await t.request('POST', `/v1/drawings/${drawings.beamNew!.id}/compare`, {
        body: { compare_to: drawings.beamOld!.id },
      });
      expect(again.status).toBe(202);
      const early = await t.request('POST', '/v1/exports', {
        body: { job_id: again.body.job_id, format: 'pdf_report' },
      });
      problem(early, 409, 'conflict');
      expect(early.body.detail).toMatch(/still (Queued|Started)/);
      expect((await t.request('POST', `/v1/jobs/${again.body.job_id}/cancel`)).status).toBe(202);
      problem(
        await t.request('POST', '/v1/exports', {
          body: { job_id: again.body.job_id, format: 'csv' },
        }),
        409,
        'conflict',
      );

      // A comparison that Failed: stored as the job runner stores one (status, error, no result).
      const failed = await t.request('POST', `/v1/drawings/${drawings.beamNew!.id}/compare`, {
        body: { compare_to: drawings.beamOld!.id },
      });
      expect((await waitForJob(t, failed.body.job_id, LONG)).status).toBe('Completed');
      await t.svc.db
        .prepare(`UPDATE jobs SET status = 'Failed', result = NULL, error = ? WHERE id = ?`)
        .run(
          JSON.stringify({ code: 'internal_error', status: 500, detail: 'The worker died.' }),
          failed.body.job_id,
        );
      expect((await t.request('GET', `/v1/jobs/${failed.body.job_id}`)).body.status).toBe('Failed');
      const onFailed = await t.request('POST', '/v1/exports', {
        body: { job_id: failed.body.job_id, format: 'clouded_pdf' },
      });
      problem(onFailed, 409, 'conflict');
      expect(onFailed.body.detail).toBe(
        `Comparison ${failed.body.job_id} ended Failed and has no complete result to export; run the comparison again.`,
      );
    },
    LONG,
  );

  it('is idempotent with an Idempotency-Key', async () => {
    const headers = { 'idempotency-key': `export-${Date.now()}` };
    const body = { job_id: cmp.beam, format: 'csv' };
    const first = await t.request('POST', '/v1/exports', { body, headers });
    const second = await t.request('POST', '/v1/exports', { body, headers });
    expect(first.status).toBe(202);
    expect(second.status).toBe(202);
    expect(second.body.job_id).toBe(first.body.job_id);
    expect(second.headers['idempotency-status']).toBe('hit');
    expect((await waitForJob(t, first.body.job_id)).status).toBe('Completed');
  });

  it(
    'fails cleanly when the comparison is deleted while the export runs',
    async () => {
      const again = await t.request('POST', `/v1/drawings/${drawings.beamNew!.id}/compare`, {
        body: { compare_to: drawings.beamOld!.id, analyze: true },
      });
      expect((await waitForJob(t, again.body.job_id, LONG)).status).toBe('Completed');
      // Mid-export without a race: the export's first worker task (the first overlay image of the
      // report) deletes the comparison's overlays, through the API, before it runs. The export has
      // read its model by then and is building the document.
      const pool = t.svc.pool;
      const run = pool.run.bind(pool);
      let deletedAt = '';
      pool.run = (async (task: string, ...rest: unknown[]) => {
        if (task === 'export.reportImage' && !deletedAt) {
          deletedAt = task;
          const all = await t.request('GET', `/v1/overlays?job_id=${again.body.job_id}&limit=100`);
          for (const o of all.body.data as { id: string }[])
            expect((await t.request('DELETE', `/v1/overlays/${o.id}`)).status).toBe(204);
        }
        return (run as (...a: unknown[]) => unknown)(task, ...rest);
      }) as typeof pool.run;
      try {
        const exp = await t.request('POST', '/v1/exports', {
          body: { job_id: again.body.job_id, format: 'pdf_report' },
        });
        expect(exp.status).toBe(202);
        const job = await waitForJob(t, exp.body.job_id, LONG, 50);
        expect(deletedAt).toBe('export.reportImage');
        expect(job.status).toBe('Failed');
        expect(job.error).toMatchObject({ code: 'conflict', status: 409 });
        expect(job.error.detail).toMatch(/deleted while it was being exported/);
        expect(job.result).toBeNull();
        const stored = (await t.svc.db
          .prepare('SELECT count(*) AS n FROM files WHERE job_id = ?')
          .get(exp.body.job_id)) as { n: number };
        expect(stored.n).toBe(0);
      } finally {
        pool.run = run;
      }
    },
    LONG,
  );

  it(
    'fails cleanly when the comparison was deleted before the export ran',
    async () => {
      const again = await t.request('POST', `/v1/drawings/${drawings.beamNew!.id}/compare`, {
        body: { compare_to: drawings.beamOld!.id },
      });
      expect((await waitForJob(t, again.body.job_id, LONG)).status).toBe('Completed');
      // Deleting a comparison is deleting all its overlays (the UI's delete does just that). An
      // export of the beam set takes ~70 ms once a worker is warm, less than the DELETEs, so a race
      // between them decides nothing reliably: the overlays go first, then the export of the
      // comparison whose overlays are gone is posted. It is accepted (the comparison job is still
      // Completed) and must end Failed with conflict, storing nothing.
      const all = await t.request('GET', `/v1/overlays?job_id=${again.body.job_id}&limit=100`);
      expect(all.body._meta.next).toBeNull();
      const dels = await Promise.all(
        all.body.data.map((o: { id: string }) => t.request('DELETE', `/v1/overlays/${o.id}`)),
      );
      expect(dels.every((d) => d.status === 204)).toBe(true);
      const exp = await t.request('POST', '/v1/exports', {
        body: { job_id: again.body.job_id, format: 'pdf_report' },
      });
      expect(exp.status).toBe(202);
      const job = await waitForJob(t, exp.body.job_id, LONG, 50);
      expect(job.status).toBe('Failed');
      expect(job.error).toMatchObject({ code: 'conflict', status: 409 });
      expect(job.error.detail).toMatch(/deleted while it was being exported/);
      expect(job.result).toBeNull();
      const stored = (await t.svc.db
        .prepare('SELECT count(*) AS n FROM files WHERE job_id = ?')
        .get(exp.body.job_id)) as { n: number };
      expect(stored.n).toBe(0);
    },
    LONG,
  );
});
