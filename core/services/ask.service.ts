import { notFound } from '../domain/errors';
import { compareIssues } from '../domain/issue-date';
import type { Db } from '../store/db';
import { getRow } from '../store/list-query';
import { settleReservation } from '../store/repositories/credits.repository';
import {
  changesOfOverlays,
  overlaysBetweenDrawings,
  overlaysOfSheets,
  projectDrawings,
  projectSheets,
  projectSymbolLabels,
  symbolCounts,
  type DrawingRow,
  type OverlayPairRow,
  type SheetRow,
} from '../store/repositories/search.repository';
import { reserveCredits } from './credits.service';
import { fold, normalizeNumber, searchProject, tokens, type SearchHit } from './search.service';

// POST /projects/{id}/ask (contract §7): answers from the project's own records, every claim cited.
//
// Extractive by default: the question is matched to one of a few forms, the records that answer it
// are read, and the answer is assembled from them with a numbered citation ([n] = sources[n-1])
// after every claim. Forms: "which sheets changed between X and Y" (X, Y name drawings by name or
// revision; overlays and change regions), "what changed on A-101", "how many <label> on <sheet>"
// (detected symbols), "where is <term>" (search). Anything else is searched by its content words;
// when nothing in the records matches, the answer says so plainly.
//
// With an OpenAI-compatible provider configured, the records retrieved the same way are sent as
// numbered context and the provider writes the answer; an answer citing no given record, or any
// provider failure, falls back to the extractive answer and `method` says so.
//
// Credits: 1 per answer (contract §7). One credit is reserved before any work (402 when the
// balance cannot cover it) and charged only if the records answered; otherwise it is released.

export type SourceType = 'drawing' | 'sheet' | 'block' | 'text' | 'change' | 'symbol' | 'overlay';

export interface AskSource {
  type: SourceType;
  id: string;
  label: string;
  snippet: string;
}

export type AskMethod = 'extractive' | 'llm' | 'extractive_fallback';

export interface AskResult {
  answer: string;
  sources: AskSource[];
  method: AskMethod;
  /** False when the project's records do not answer the question (nothing is charged then). */
  answered: boolean;
  /** Set when method is extractive_fallback: why the provider's answer was not used. */
  fallback_reason?: string;
}

export interface LlmConfig {
  /** Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1 (POST {url}/chat/completions). */
  url: string;
  key?: string;
  model: string;
  timeoutMs?: number;
}

/** BLUELINE_LLM_URL / BLUELINE_LLM_KEY / BLUELINE_LLM_MODEL; no URL means extractive only. */
export function llmConfigFromEnv(env: NodeJS.ProcessEnv): LlmConfig | undefined {
  const url = env.BLUELINE_LLM_URL?.trim();
  if (!url) return undefined;
  const timeout = Number(env.BLUELINE_LLM_TIMEOUT_MS);
  return {
    url,
    ...(env.BLUELINE_LLM_KEY ? { key: env.BLUELINE_LLM_KEY } : {}),
    model: env.BLUELINE_LLM_MODEL?.trim() || 'default',
    ...(Number.isFinite(timeout) && timeout > 0 ? { timeoutMs: timeout } : {}),
  };
}

export const ASK_COST = 1;

// ── Citations ────────────────────────────────────────────────────────────────────────────────────

class Sources {
  readonly list: AskSource[] = [];
  private readonly index = new Map<string, number>();

  /** Adds (or finds) a source and returns its citation marker, e.g. "[3]". */
  cite(s: AskSource): string {
    const key = `${s.type}:${s.id}:${s.snippet}`;
    let n = this.index.get(key);
    if (n === undefined) {
      this.list.push(s);
      n = this.list.length;
      this.index.set(key, n);
    }
    return `[${n}]`;
  }
}

interface Draft {
  answer: string;
  answered: boolean;
  sources: AskSource[];
}

const notAnswered = (reason: string, sources: AskSource[] = []): Draft => ({
  answer: `The project's records do not answer this question: ${reason}`,
  answered: false,
  sources,
});

// ── Record labels ────────────────────────────────────────────────────────────────────────────────

interface Catalog {
  drawings: Map<string, DrawingRow>;
  sheets: Map<string, SheetRow>;
}

function drawingLabel(d: DrawingRow | undefined): string {
  if (!d) return 'a deleted drawing';
  const about = [d.revision, d.issued_at && `issued ${d.issued_at}`].filter(Boolean);
  return about.length ? `${d.name} (${about.join(', ')})` : d.name;
}

function sheetLabel(cat: Catalog, sheetId: string, withDrawing = true): string {
  const s = cat.sheets.get(sheetId);
  if (!s) return sheetId;
  const name = [s.sheet_number ?? `page ${s.page_index + 1}`, s.title].filter(Boolean).join(' — ');
  return withDrawing ? `${name}, ${drawingLabel(cat.drawings.get(s.drawing_id))}` : name;
}

const quoteText = (s: string) => `“${s.replace(/\s+/g, ' ').trim()}”`;

interface OverlayStats {
  added_px?: number;
  removed_px?: number;
  changed_fraction?: number;
}

function stats(o: OverlayPairRow): OverlayStats {
  try {
    return (o.stats ? JSON.parse(o.stats) : {}) as OverlayStats;
  } catch {
    return {};
  }
}

/**
 * Whether an overlay shows a change. After change detection: a region that is not noise. Before
 * it: any ink that differs after alignment (a pixel-identical sheet pair has none).
 */
/**
 * Whether an overlay's alignment is not trusted: it reports no change, which proves nothing, so it is
 * neither "changed" nor "unchanged".
 */
function untrusted(o: OverlayPairRow): boolean {
  try {
    const a = (o.alignment ? JSON.parse(o.alignment) : {}) as { low_confidence?: boolean };
    return a.low_confidence === true;
  } catch {
    return false;
  }
}

function overlayChanged(o: OverlayPairRow): boolean {
  if (o.has_changes) return o.real_changes > 0;
  const s = stats(o);
  return (s.added_px ?? 0) + (s.removed_px ?? 0) > 0;
}

function overlaySnippet(o: OverlayPairRow): string {
  const s = stats(o);
  const parts = [`similarity ${o.score === null ? 'n/a' : o.score.toFixed(3)}`];
  if (s.added_px !== undefined || s.removed_px !== undefined)
    parts.push(`${s.added_px ?? 0} px added, ${s.removed_px ?? 0} px removed`);
  parts.push(
    o.has_changes
      ? `${o.real_changes} change region${o.real_changes === 1 ? '' : 's'} (not noise)`
      : 'change detection not run',
  );
  return parts.join('; ');
}

function overlaySource(cat: Catalog, o: OverlayPairRow): AskSource {
  return {
    type: 'overlay',
    id: o.id,
    label: `${sheetLabel(cat, o.sheet_a_id)} ↔ ${sheetLabel(cat, o.sheet_b_id)}`,
    snippet: overlaySnippet(o),
  };
}

/**
 * The overlays of the comparison that speaks for `overlays` (oldest first): the one whose newer
 * side is the latest issue — by issue date, same-day issues by upload order (contract §4) — and of
 * those the one run last. So a comparison run later between two older issues, or one run the wrong
 * way round (the later issue as the older side), does not hide the one that reaches the newest
 * revision.
 */
export function latestComparison(
  overlays: OverlayPairRow[],
  drawings: ReadonlyMap<string, DrawingRow>,
): OverlayPairRow[] {
  const runs = new Map<string | null, { newer: DrawingRow | undefined; last: number }>();
  overlays.forEach((o, i) => {
    runs.set(o.job_id, { newer: drawings.get(o.drawing_b_id), last: i });
  });
  let best: [string | null, { newer: DrawingRow | undefined; last: number }] | undefined;
  for (const run of runs) {
    if (!best) best = run;
    else {
      const [a, b] = [run[1].newer, best[1].newer];
      const byIssue = a && b ? compareIssues(a, b) : 0;
      if (byIssue > 0 || (byIssue === 0 && run[1].last > best[1].last)) best = run;
    }
  }
  return best ? reportingOverlays(overlays.filter((o) => o.job_id === best[0])) : [];
}

/**
 * The overlays whose changes tell what changed: of a sheet pair with a whole-sheet overlay, that one
 * alone (contract §6: it reports every change on the page; a view overlay's changes are the same
 * changes seen through a view, and would be counted twice); otherwise all of them (comparisons made
 * before sheets had a Sheet block).
 */
function reportingOverlays(overlays: OverlayPairRow[]): OverlayPairRow[] {
  const whole = new Set(
    overlays
      .filter((o) => o.block_a_type === 'Sheet')
      .map((o) => `${o.job_id}|${o.sheet_a_id}|${o.sheet_b_id}`),
  );
  return overlays.filter(
    (o) => o.block_a_type === 'Sheet' || !whole.has(`${o.job_id}|${o.sheet_a_id}|${o.sheet_b_id}`),
  );
}

// ── Resolving what a question names ──────────────────────────────────────────────────────────────

const STOP = new Set(
  `a an the of on in at to for from by with and or is are was were be been do does did has have had what which who whom whose where when why how
   many much there here this that these those it its me my we our you your i can could would should show find tell list please any all some sheet sheets
   drawing drawings set revision rev page pages about`.split(/\s+/),
);

export function contentWords(text: string): string[] {
  return tokens(text).filter((t) => !STOP.has(t) && (t.length > 1 || /\d/.test(t)));
}

/** A drawing named by its name or revision label ("Rev B", "06-01", "Beam proposal 06-02"). */
function resolveDrawing(
  drawings: DrawingRow[],
  text: string,
): { drawing?: DrawingRow; ambiguous?: DrawingRow[] } {
  const want = fold(text.replace(/^(the|drawing|revision|set)\s+/i, '')).trim();
  const exact = drawings.filter(
    (d) => fold(d.name) === want || (d.revision && fold(d.revision) === want),
  );
  if (exact.length === 1) return { drawing: exact[0]! };
  if (exact.length > 1) return { ambiguous: exact };
  const wantTokens = tokens(want).filter((t) => !STOP.has(t) || /\d/.test(t));
  if (wantTokens.length === 0) return {};
  const matching = drawings.filter((d) => {
    const have = new Set(tokens(`${d.name} ${d.revision ?? ''}`));
    return wantTokens.every((t) => have.has(t));
  });
  if (matching.length === 1) return { drawing: matching[0]! };
  if (matching.length > 1) return { ambiguous: matching };
  return {};
}

/** Sheets whose number is `text` ("A-101" also finds "A101"), newest drawing last. */
function resolveSheets(sheets: SheetRow[], text: string): SheetRow[] {
  const key = normalizeNumber(text.replace(/^sheet\s+/i, ''));
  if (!key) return [];
  return sheets.filter((s) => normalizeNumber(s.sheet_number) === key);
}

// ── The question forms ───────────────────────────────────────────────────────────────────────────

interface Ctx {
  db: Db;
  organizationId: string;
  projectId: string;
  cat: Catalog;
  drawings: DrawingRow[];
  sheets: SheetRow[];
}

const BETWEEN_RE =
  /\b(?:chang\w*|differ\w*|compar\w*|revis\w*|new|updated?)\b.*?\bbetween\s+(.+?)\s+(?:and|&|vs\.?|versus)\s+(.+?)\s*[?.!]*$/i;
const BETWEEN_RE2 =
  /\bbetween\s+(.+?)\s+(?:and|&|vs\.?|versus)\s+(.+?)\s*,?\s*(?:what|which)\b.*\b(?:chang\w*|differ\w*)/i;
const FROM_TO_RE = /\b(?:chang\w*|differ\w*)\b.*?\bfrom\s+(.+?)\s+to\s+(.+?)\s*[?.!]*$/i;
const CHANGED_ON_RE =
  /\b(?:what|which|any|list|show)\b.*?\b(?:chang\w*|differ\w*|revis\w*)\b.*?\b(?:on|to|in|of)\s+(?:sheet\s+)?([A-Za-z]{0,4}[-_. ]?\d[\w.-]*)\s*[?.!]*$/i;
const HOW_MANY_RE =
  /\bhow\s+many\s+(.+?)(?:\s+(?:are|is)(?:\s+there)?|\s+(?:were|have\s+been)\s+(?:found|detected))?(?:\s+(?:on|in)\s+(?:sheet\s+)?(.+?))?\s*[?.!]*$/i;
const COUNT_RE =
  /\b(?:count|number\s+of)\s+(?:the\s+)?(.+?)(?:\s+(?:on|in)\s+(?:sheet\s+)?(.+?))?\s*[?.!]*$/i;
const WHERE_RE =
  /^\s*(?:where(?:'s|\s+is|\s+are|\s+can\s+i\s+find|\s+do\s+i\s+find)?|find|locate|search(?:\s+for)?|which\s+sheets?\s+(?:shows?|has|have|mentions?|contains?))\s+(.+?)\s*[?.!]*$/i;

async function answerBetween(c: Ctx, xText: string, yText: string): Promise<Draft> {
  const src = new Sources();
  const x = resolveDrawing(c.drawings, xText);
  const y = resolveDrawing(c.drawings, yText);
  for (const [r, t] of [
    [x, xText],
    [y, yText],
  ] as const) {
    if (r.ambiguous) {
      const names = r.ambiguous.map(
        (d) =>
          `${drawingLabel(d)} ${src.cite({ type: 'drawing', id: d.id, label: drawingLabel(d), snippet: `drawing ${d.id}, ${d.status}` })}`,
      );
      return notAnswered(
        `“${t}” names more than one drawing (${names.join(', ')}); name the drawing or its revision exactly.`,
        src.list,
      );
    }
    if (!r.drawing) return notAnswered(`no drawing in this project is named or revisioned “${t}”.`);
  }
  const dx = x.drawing!;
  const dy = y.drawing!;
  const cx = src.cite({
    type: 'drawing',
    id: dx.id,
    label: drawingLabel(dx),
    snippet: `drawing ${dx.id}, ${dx.status}`,
  });
  const cy = src.cite({
    type: 'drawing',
    id: dy.id,
    label: drawingLabel(dy),
    snippet: `drawing ${dy.id}, ${dy.status}`,
  });
  if (dx.id === dy.id)
    return notAnswered(
      `both names refer to the same drawing, ${drawingLabel(dx)} ${cx}.`,
      src.list,
    );
  const overlays = latestComparison(
    await overlaysBetweenDrawings(c.db, c.organizationId, dx.id, dy.id),
    c.cat.drawings,
  );
  if (overlays.length === 0) {
    return notAnswered(
      `no comparison between ${drawingLabel(dx)} ${cx} and ${drawingLabel(dy)} ${cy} is recorded. Compare them first (POST /drawings/{id}/compare).`,
      src.list,
    );
  }
  // A sheet pair compared before Sheet blocks may have several block overlays; the pair changed when
  // any of them did.
  const pairs = new Map<string, OverlayPairRow[]>();
  for (const o of overlays) {
    const k = `${o.sheet_a_id}|${o.sheet_b_id}`;
    pairs.set(k, [...(pairs.get(k) ?? []), o]);
  }
  const changed: string[] = [];
  const unchanged: string[] = [];
  const unaligned: string[] = [];
  for (const list of pairs.values()) {
    const first = list[0]!;
    const name = sheetLabel(c.cat, first.sheet_b_id, false);
    const changedOnes = list.filter(overlayChanged);
    if (!changedOnes.length && list.some(untrusted)) {
      unaligned.push(`${name} ${list.map((o) => src.cite(overlaySource(c.cat, o))).join('')}`);
      continue;
    }
    const cites = (changedOnes.length ? changedOnes : list)
      .map((o) => src.cite(overlaySource(c.cat, o)))
      .join('');
    const regions = changedOnes.reduce((n, o) => n + (o.has_changes ? o.real_changes : 0), 0);
    if (changedOnes.length)
      changed.push(
        `${name}${regions ? ` (${regions} change region${regions === 1 ? '' : 's'})` : ''} ${cites}`,
      );
    else unchanged.push(`${name} ${cites}`);
  }
  const head = `Between ${drawingLabel(dx)} ${cx} and ${drawingLabel(dy)} ${cy}, ${changed.length} of ${pairs.size} compared sheet${pairs.size === 1 ? '' : 's'} changed`;
  const parts = [changed.length ? `${head}: ${changed.join('; ')}.` : `${head}.`];
  if (unchanged.length) parts.push(`Unchanged: ${unchanged.join('; ')}.`);
  if (unaligned.length)
    parts.push(
      `Not aligned with confidence, so not known whether they changed: ${unaligned.join('; ')}.`,
    );
  return { answer: parts.join(' '), answered: true, sources: src.list };
}

async function answerChangedOn(c: Ctx, sheetText: string): Promise<Draft> {
  const src = new Sources();
  const sheets = resolveSheets(c.sheets, sheetText);
  if (sheets.length === 0)
    return notAnswered(`no sheet numbered “${sheetText}” exists in this project.`);
  const overlays = await overlaysOfSheets(
    c.db,
    c.organizationId,
    sheets.map((s) => s.id),
  );
  if (overlays.length === 0) {
    const cites = sheets.map((s) =>
      src.cite({
        type: 'sheet',
        id: s.id,
        label: sheetLabel(c.cat, s.id),
        snippet: `sheet ${s.sheet_number ?? ''}`,
      }),
    );
    return notAnswered(
      `sheet ${sheetText} ${cites.join('')} has not been compared with another revision yet, so no changes are recorded.`,
      src.list,
    );
  }
  const latest = latestComparison(overlays, c.cat.drawings);
  const changedOverlays = latest.filter(overlayChanged);
  const first = latest[0]!;
  const pair = `${sheetLabel(c.cat, first.sheet_a_id)} → ${sheetLabel(c.cat, first.sheet_b_id)}`;
  if (changedOverlays.length === 0 && latest.some(untrusted)) {
    const cites = latest.map((o) => src.cite(overlaySource(c.cat, o))).join('');
    return {
      answer: `The latest comparison of ${sheetText} (${pair}) ${cites} could not align the two revisions with confidence, so no changes were sought: whether it changed is not known. Check the overlay by eye.`,
      answered: true,
      sources: src.list,
    };
  }
  if (changedOverlays.length === 0) {
    const cites = latest.map((o) => src.cite(overlaySource(c.cat, o))).join('');
    return {
      answer: `Nothing changed on ${sheetText} in the latest comparison (${pair}) ${cites}: no ink differs after alignment.`,
      answered: true,
      sources: src.list,
    };
  }
  const lines: string[] = [];
  const changes = (
    await changesOfOverlays(
      c.db,
      c.organizationId,
      changedOverlays.map((o) => o.id),
    )
  ).filter((ch) => ch.category !== 'noise');
  const SHOWN = 10;
  for (const ch of changes.slice(0, SHOWN)) {
    const text =
      ch.description ||
      [
        ch.text_before && `was ${quoteText(ch.text_before)}`,
        ch.text_after && `now ${quoteText(ch.text_after)}`,
      ]
        .filter(Boolean)
        .join(', ') ||
      `${ch.kind} ${ch.category}`;
    const cite = src.cite({
      type: 'change',
      id: ch.id,
      label: `${ch.kind} ${ch.category} on ${sheetText}`,
      snippet: text,
    });
    lines.push(`${text} ${cite}`);
  }
  const overlayCites = changedOverlays.map((o) => src.cite(overlaySource(c.cat, o))).join('');
  let answer: string;
  if (changes.length > 0) {
    answer = `In the latest comparison of ${sheetText} (${pair}) ${overlayCites}, ${changes.length} change region${changes.length === 1 ? ' was' : 's were'} found: ${lines.join('; ')}`;
    answer +=
      changes.length > SHOWN
        ? `; and ${changes.length - SHOWN} more (GET /changes?overlay_id=…).`
        : '.';
  } else {
    answer = `Sheet ${sheetText} changed in the latest comparison (${pair}) ${overlayCites}: ink differs after alignment, but change detection has not been run, so the changes are not yet described (POST /overlays/{id}/analyze).`;
  }
  return { answer, answered: true, sources: src.list };
}

/** Matches a spoken label to detected labels: case-insensitive, singular or plural. */
function matchLabels(known: string[], text: string): string[] {
  const want = fold(text.replace(/^(the|a|an)\s+/i, ''))
    .trim()
    .replace(/\s+symbols?$/, '');
  const forms = new Set([want, want.replace(/es$/, ''), want.replace(/s$/, ''), `${want}s`]);
  return known.filter((l) => forms.has(fold(l).trim()));
}

async function answerHowMany(
  c: Ctx,
  labelText: string,
  sheetText: string | undefined,
): Promise<Draft> {
  const src = new Sources();
  const labels = matchLabels(
    await projectSymbolLabels(c.db, c.organizationId, c.projectId),
    labelText,
  );
  if (labels.length === 0) {
    return notAnswered(
      `no symbols labelled “${labelText}” have been detected in this project (symbol detection runs with POST /parse and a template for the symbol).`,
    );
  }
  const counts = await symbolCounts(c.db, c.organizationId, c.projectId, labels);
  const describe = (sheetId: string, n: number, ids: string, label: string) => {
    const few = ids.split(',').slice(0, 5).join(', ');
    return src.cite({
      type: 'sheet',
      id: sheetId,
      label: sheetLabel(c.cat, sheetId),
      snippet: `${n} × ${label} (symbols ${few}${n > 5 ? ', …' : ''})`,
    });
  };
  const labelName = labels.join(' / ');
  if (sheetText) {
    const sheets = resolveSheets(c.sheets, sheetText);
    if (sheets.length === 0)
      return notAnswered(`no sheet numbered “${sheetText}” exists in this project.`);
    const ids = new Set(sheets.map((s) => s.id));
    const on = counts.filter((r) => ids.has(r.sheet_id));
    if (on.length === 0) {
      const cites = sheets
        .map((s) =>
          src.cite({
            type: 'sheet',
            id: s.id,
            label: sheetLabel(c.cat, s.id),
            snippet: `no ${labelName} symbols detected`,
          }),
        )
        .join('');
      const elsewhere = counts
        .slice(0, 5)
        .map(
          (r) =>
            `${sheetLabel(c.cat, r.sheet_id, false)}: ${r.n} ${describe(r.sheet_id, r.n, r.ids, r.label)}`,
        );
      return {
        answer: `No ${labelName} symbols were detected on ${sheetText} ${cites}.${elsewhere.length ? ` They were detected on ${elsewhere.join('; ')}.` : ''}`,
        answered: true,
        sources: src.list,
      };
    }
    const perSheet = on.map(
      (r) =>
        `${r.n} on ${sheetLabel(c.cat, r.sheet_id)} ${describe(r.sheet_id, r.n, r.ids, r.label)}`,
    );
    const total = on.reduce((n, r) => n + r.n, 0);
    return {
      answer:
        on.length === 1
          ? `${total} ${labelName} symbol${total === 1 ? ' was' : 's were'} detected: ${perSheet[0]}.`
          : `${total} ${labelName} symbols were detected on ${sheetText} across its revisions: ${perSheet.join('; ')}.`,
      answered: true,
      sources: src.list,
    };
  }
  const total = counts.reduce((n, r) => n + r.n, 0);
  const perSheet = counts
    .slice(0, 10)
    .map(
      (r) =>
        `${r.n} on ${sheetLabel(c.cat, r.sheet_id)} ${describe(r.sheet_id, r.n, r.ids, r.label)}`,
    );
  return {
    answer: `${total} ${labelName} symbol${total === 1 ? ' was' : 's were'} detected in this project: ${perSheet.join('; ')}${counts.length > 10 ? `; and on ${counts.length - 10} more sheets` : ''}.`,
    answered: true,
    sources: src.list,
  };
}

function hitSource(c: Ctx, h: SearchHit): AskSource {
  const where = sheetLabel(c.cat, h.sheet_id);
  const what = {
    sheet: 'sheet title',
    block: 'view title',
    text: 'text',
    change: 'change',
    symbol: 'symbol',
  }[h.type];
  return { type: h.type, id: h.id, label: `${what} on ${where}`, snippet: h.snippet };
}

/** Search-backed answer: where the term appears, grouped by sheet. */
async function answerWhere(c: Ctx, term: string, phrasing: 'where' | 'mention'): Promise<Draft> {
  const words = contentWords(term);
  if (words.length === 0) return notAnswered('the question names nothing to look for.');
  const { hits } = await searchProject(c.db, c.organizationId, c.projectId, {
    query: words.join(' '),
    limit: 30,
  });
  // Only records holding every content word answer the question (the search falls back to any).
  const strict = hits.filter((h) =>
    words.every((w) => tokens(h.snippet).some((t) => t.startsWith(w))),
  );
  if (strict.length === 0)
    return notAnswered(
      `nothing in this project's sheets, views, changes or symbols mentions ${quoteText(words.join(' '))}.`,
    );
  const src = new Sources();
  const bySheet = new Map<string, SearchHit[]>();
  for (const h of strict) bySheet.set(h.sheet_id, [...(bySheet.get(h.sheet_id) ?? []), h]);
  const SHEETS = 5;
  const parts: string[] = [];
  for (const [sheetId, list] of [...bySheet].slice(0, SHEETS)) {
    const mentions = list.slice(0, 2).map((h) => {
      const kind =
        h.type === 'sheet'
          ? 'its title'
          : h.type === 'block'
            ? 'the view'
            : h.type === 'text'
              ? 'the text'
              : h.type === 'change'
                ? 'the change'
                : 'the symbol';
      return `${kind} ${quoteText(h.snippet)} ${src.cite(hitSource(c, h))}`;
    });
    const more =
      list.length > 2
        ? ` and ${list.length - 2} more place${list.length - 2 === 1 ? '' : 's'}`
        : '';
    parts.push(`on ${sheetLabel(c.cat, sheetId)}: ${mentions.join(', ')}${more}`);
  }
  const subject = quoteText(term.replace(/^(the|a|an)\s+/i, ''));
  const lead = phrasing === 'where' ? `${subject} appears` : `The records mention ${subject}`;
  const rest =
    bySheet.size > SHEETS
      ? ` It also appears on ${bySheet.size - SHEETS} more sheet${bySheet.size - SHEETS === 1 ? '' : 's'} (search for the full list).`
      : '';
  return { answer: `${lead} ${parts.join('; ')}.${rest}`, answered: true, sources: src.list };
}

/** The extractive answer: the question's form decides which records answer it. */
export async function extractiveAnswer(c: Ctx, question: string): Promise<Draft> {
  const q = question.trim();
  let m = BETWEEN_RE.exec(q) ?? BETWEEN_RE2.exec(q) ?? FROM_TO_RE.exec(q);
  if (m) return await answerBetween(c, m[1]!, m[2]!);
  m = HOW_MANY_RE.exec(q) ?? COUNT_RE.exec(q);
  if (m) return await answerHowMany(c, m[1]!, m[2]);
  m = CHANGED_ON_RE.exec(q);
  if (m) return await answerChangedOn(c, m[1]!);
  m = WHERE_RE.exec(q);
  if (m) return await answerWhere(c, m[1]!, 'where');
  return await answerWhere(c, q, 'mention');
}

// ── Provider (OpenAI-compatible chat completions) ────────────────────────────────────────────────

export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<{
  ok: boolean;
  status: number;
  json(): Promise<unknown>;
}>;

const SYSTEM_PROMPT = [
  'You answer questions about one construction drawing project using ONLY the numbered records given.',
  'Cite every claim with the record number in square brackets, e.g. [2]. Do not use outside knowledge.',
  'If the records do not answer the question, reply exactly: NO_ANSWER',
  'Be brief: at most a few sentences.',
].join(' ');

function recordsContext(sources: AskSource[]): string {
  return sources
    .map((s, i) => `[${i + 1}] ${s.type} ${s.id} — ${s.label}: ${s.snippet}`)
    .join('\n');
}

/** Asks the provider; returns its answer with citations renumbered to the sources it cited. */
async function providerAnswer(
  llm: LlmConfig,
  fetchImpl: FetchLike,
  question: string,
  context: Draft,
): Promise<Draft> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(new Error('timeout')), llm.timeoutMs ?? 20_000);
  let content: string;
  try {
    const res = await fetchImpl(`${llm.url.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(llm.key ? { authorization: `Bearer ${llm.key}` } : {}),
      },
      body: JSON.stringify({
        model: llm.model,
        temperature: 0,
        messages: [
          { role: 'system', content: SYSTEM_PROMPT },
          {
            role: 'user',
            content: `Records:\n${recordsContext(context.sources)}\n\nWhat the records say when read directly (for reference):\n${context.answer}\n\nQuestion: ${question}`,
          },
        ],
      }),
      signal: ctl.signal,
    });
    if (!res.ok) throw new Error(`the provider answered HTTP ${res.status}`);
    const body = (await res.json()) as { choices?: { message?: { content?: unknown } }[] };
    const c = body?.choices?.[0]?.message?.content;
    if (typeof c !== 'string' || !c.trim()) throw new Error('the provider returned no answer text');
    content = c.trim();
  } catch (e) {
    const msg = ctl.signal.aborted
      ? `the provider did not answer within ${llm.timeoutMs ?? 20_000} ms`
      : e instanceof Error
        ? e.message
        : String(e);
    throw new Error(
      msg.startsWith('the provider') ? msg : `the provider could not be reached (${msg})`,
    );
  } finally {
    clearTimeout(timer);
  }
  if (/^NO_ANSWER\b/.test(content))
    return notAnswered('the records retrieved for it do not contain the answer.');
  // Keep only the sources the answer cites, renumbered in order of first citation.
  const used = new Map<number, number>();
  const out: AskSource[] = [];
  const renumbered = content.replace(/\[(\d+(?:\s*,\s*\d+)*)\]/g, (whole, list: string) => {
    const nums = list.split(',').map((n) => Number(n.trim()));
    if (!nums.every((n) => Number.isInteger(n) && n >= 1 && n <= context.sources.length))
      throw new Error(`the provider cited a record that was not given (${whole})`);
    return nums
      .map((n) => {
        let k = used.get(n);
        if (k === undefined) {
          out.push(context.sources[n - 1]!);
          k = out.length;
          used.set(n, k);
        }
        return `[${k}]`;
      })
      .join('');
  });
  if (out.length === 0) throw new Error('the provider’s answer cites none of the records');
  return { answer: renumbered, answered: true, sources: out };
}

// ── Entry point ──────────────────────────────────────────────────────────────────────────────────

export interface AskOptions {
  llm?: LlmConfig;
  fetch?: FetchLike;
  log?: { warn(o: unknown, m?: string): void };
}

export async function askProject(
  db: Db,
  organizationId: string,
  projectId: string,
  question: string,
  opts: AskOptions = {},
): Promise<AskResult> {
  if (!(await getRow(db, 'projects', organizationId, projectId)))
    throw notFound('project', projectId);
  // Reserve first: a refused request (402) does no work; the charge settles below.
  await db.transaction(
    async (tx) => await reserveCredits(tx, organizationId, ASK_COST, 'Asking a question'),
  );
  let settled = false;
  const settle = async (answered: boolean) => {
    if (settled) return;
    settled = true;
    // jobId: ask runs no job; the ledger row's job_id is NULL (the column is nullable).
    await db.transaction(
      async (tx) =>
        await settleReservation(tx, {
          organizationId,
          jobId: null,
          reserved: ASK_COST,
          charged: answered ? ASK_COST : 0,
          reason: 'ask',
        }),
    );
  };
  try {
    const drawings = await projectDrawings(db, organizationId, projectId);
    const sheets = await projectSheets(db, organizationId, projectId);
    const ctx: Ctx = {
      db,
      organizationId,
      projectId,
      drawings,
      sheets,
      cat: {
        drawings: new Map(drawings.map((d) => [d.id, d])),
        sheets: new Map(sheets.map((s) => [s.id, s])),
      },
    };
    const draft = await extractiveAnswer(ctx, question);
    let result: AskResult = { ...draft, method: 'extractive' };
    // The provider writes the answer only from retrieved records; with none there is nothing to give it.
    if (opts.llm && draft.sources.length > 0) {
      try {
        const written = await providerAnswer(
          opts.llm,
          opts.fetch ?? (globalThis.fetch as unknown as FetchLike),
          question,
          draft,
        );
        result = { ...written, method: 'llm' };
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        opts.log?.warn({ reason }, 'ask: LLM provider failed; answering extractively');
        result = { ...draft, method: 'extractive_fallback', fallback_reason: reason };
      }
    }
    await settle(result.answered);
    return result;
  } catch (e) {
    await settle(false);
    throw e;
  }
}
