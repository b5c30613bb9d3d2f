import { sheetLabel, type ExportModel } from './model';

// The CSV export (contract §6): one row per exported change of the whole-sheet overlays, noise
// included (a data export: the reader filters; the category column says which rows are noise).
// RFC 4180: CRLF between records, every field quoted when it holds a quote, comma, CR or LF, quotes
// doubled. UTF-8 with a byte-order mark, which is what makes Excel read it as UTF-8 instead of the
// system code page (sheet titles and notes carry °, ±, ½, accented names).

export const CSV_HEADER = [
  'sheet_number',
  'sheet_title',
  'old_set',
  'new_set',
  'change_number',
  'kind',
  'category',
  'description',
  'text_before',
  'text_after',
  'review_status',
  'note',
  'box',
  'link',
] as const;

/** One field, quoted when RFC 4180 requires it. */
export function csvField(v: string | number | null | undefined): string {
  if (v === null || v === undefined) return '';
  const s = String(v);
  // A leading =, + or @ (or - before a name, "-SUM(…)") makes spreadsheets evaluate the cell as a
  // formula (CSV injection): a note typed as "=HYPERLINK(…)" must stay text. A leading apostrophe
  // is how spreadsheets mark text. "-12" and "- see detail" are left alone.
  const safe = /^([=+@\t\r]|-[^\d\s])/.test(s) ? `'${s}` : s;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** A set's label: name, revision and issue date where known. */
export function setLabel(d: ExportModel['older']): string {
  return [d.name, d.revision, d.issued_at].filter(Boolean).join(' · ');
}

/**
 * The link that opens a change in the web UI, which the service serves at its origin: the
 * renderer's overlay route with the change selected (renderer/src/app/route.ts).
 */
export function changeLink(
  origin: string,
  projectId: string,
  overlayId: string,
  jobId: string,
  changeId: string,
): string {
  const e = encodeURIComponent;
  return `${origin}/#/projects/${e(projectId)}/overlays/${e(overlayId)}?job=${e(jobId)}&change=${e(changeId)}`;
}

export function buildCsv(model: ExportModel, origin: string, onPair?: () => void): Buffer {
  const lines: string[] = [CSV_HEADER.join(',')];
  const oldSet = setLabel(model.older);
  const newSet = setLabel(model.newer);
  for (const p of model.pairs) {
    const sheet = p.sheet_b ?? p.sheet_a;
    for (const c of p.changes) {
      const b = c.bbox;
      lines.push(
        [
          sheetLabel(sheet),
          sheet?.title ?? '',
          oldSet,
          newSet,
          c.number ?? '',
          c.kind,
          c.category,
          c.description,
          c.text_before,
          c.text_after,
          c.review_status,
          c.note,
          // Overlay pixels of the older sheet's frame, as the API's Change.bbox.
          `${Math.round(b.x)} ${Math.round(b.y)} ${Math.round(b.width)} ${Math.round(b.height)}`,
          changeLink(origin, model.project.id, c.overlay_id, model.comparison.id, c.id),
        ]
          .map(csvField)
          .join(','),
      );
    }
    onPair?.();
  }
  return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(lines.join('\r\n') + '\r\n')]);
}
