import { ApiError, notFound } from '../domain/errors';
import type { Db } from '../store/db';
import { getRow } from '../store/list-query';
import {
  projectDrawings,
  searchBlocks,
  searchChanges,
  searchSheets,
  searchSymbols,
  searchText,
  type SearchMatch,
  type SearchScope,
} from '../store/repositories/search.repository';

// Project search (contract §7): one ranked list over sheet numbers and titles, block titles, sheet
// text runs, change descriptions and symbol labels.
//
// Safety: user text never reaches FTS5 or tsquery syntax. It is cut into tokens the way the index's
// tokenizer (unicode61, remove_diacritics 2; on PostgreSQL the same cut, migration 14) cuts text —
// runs of letters and digits — and each token is written back quoted (FTS5 "…", tsquery '…'), so
// operators, column filters, quotes and parentheses in the query are just characters that separate
// tokens. The same terms are written once per engine: an FTS5 phrase `"a b"*` is the tsquery
// `'a' <-> 'b':*`, OR is `|`, AND is `&`.
//
// Ranking: a fixed band per kind, bm25 inside the band — exact sheet number 6, sheet number prefix
// 5, sheet title 4, block title 3, change 2.5, symbol 2, text run 1, plus bm25 squashed into [0, 1).
// So a sheet whose number or title matches always ranks above body text that mentions it.

export const HIT_TYPES = ['sheet', 'block', 'text', 'change', 'symbol'] as const;
export type HitType = (typeof HIT_TYPES)[number];

export interface BBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface SearchHit {
  type: HitType;
  /** The record: sheet, block, change or symbol id; for a text run, the sheet it is printed on. */
  id: string;
  sheet_id: string;
  sheet_number: string | null;
  drawing_id: string;
  /** Plain text (no markup) around the match; `highlights` are [start, end) offsets into it. */
  snippet: string;
  highlights: { start: number; end: number }[];
  /** Sheet pixels, origin top-left; null for a whole-sheet hit. */
  bbox: BBox | null;
  score: number;
  /** Change hits: the overlay the change region belongs to. */
  overlay_id?: string;
  /** Text hits: 'markup' when the text is a PDF markup annotation's (a callout, a comment). */
  source?: 'markup';
  /** The issue the hit is in: its drawing's name, revision and issue date. */
  drawing_name: string;
  revision: string | null;
  issued_at: string | null;
}

export interface SearchRequest {
  query: string;
  discipline?: string | null;
  drawing_id?: string | null;
  types?: HitType[] | null;
  limit?: number | null;
}

export const DEFAULT_SEARCH_LIMIT = 20;
export const MAX_SEARCH_LIMIT = 100;
const MAX_TERMS = 12;

// ── Query parsing ────────────────────────────────────────────────────────────────────────────────

/** Folds like unicode61 remove_diacritics 2: decompose, drop combining marks, lower-case. */
export function fold(s: string): string {
  return s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();
}

const TOKEN_RE = /[\p{L}\p{N}]+/gu;

export function tokens(s: string): string[] {
  return fold(s).match(TOKEN_RE) ?? [];
}

/** One query term: any of its alternatives must match; an alternative is a token phrase. */
export interface Term {
  alternatives: { tokens: string[]; prefix: boolean }[];
}

export interface ParsedQuery {
  terms: Term[];
  /** Every term must match. */
  all: SearchMatch;
  /** Any term may match (the fallback when nothing matches them all). */
  any: SearchMatch;
  /** The same for the large indexes (text runs, blocks, changes, symbols): no 1-character prefixes. */
  allNarrow: SearchMatch;
  anyNarrow: SearchMatch;
  /** Sheet-number candidates, upper-case letters and digits only (e.g. "A101" for "A-101"). */
  numberKeys: string[];
}

/** "A-101", "S101", "ASK-02", "M2.01", "E-601A": a short letter prefix and digits. */
const SHEET_NUMBER_RE = /^[A-Za-z]{1,4}[-_. ]?\d{1,4}(?:[-_.]?\d{1,3})*[A-Za-z]?$/;

const quote = (toks: string[]) => `"${toks.join(' ')}"`;

/** A token phrase as FTS5 and as tsquery text (tokens are letters and digits only: no escaping). */
function alternative(toks: string[], prefix: boolean): SearchMatch {
  return {
    fts5: quote(toks) + (prefix ? '*' : ''),
    tsquery: toks.map((t) => `'${t}'`).join(' <-> ') + (prefix ? ':*' : ''),
  };
}

/**
 * `minPrefix`: a prefix on a shorter last token is dropped. In the large indexes a one-character
 * prefix ("S-1" → "s" then any token starting with 1) merges the doclists of hundreds of terms and
 * costs tens of milliseconds; sheet numbers and titles (small) keep every prefix.
 */
function termExpr(t: Term, minPrefix: number): SearchMatch {
  const alts = t.alternatives.map((a) =>
    alternative(a.tokens, a.prefix && a.tokens[a.tokens.length - 1]!.length >= minPrefix),
  );
  const join = (forms: string[], op: string) => {
    const unique = [...new Set(forms)];
    return unique.length === 1 ? unique[0]! : `(${unique.join(op)})`;
  };
  return {
    fts5: join(
      alts.map((a) => a.fts5),
      ' OR ',
    ),
    tsquery: join(
      alts.map((a) => a.tsquery),
      ' | ',
    ),
  };
}

const joinTerms = (terms: SearchMatch[], fts5: string, tsquery: string): SearchMatch => ({
  fts5: terms.map((t) => t.fts5).join(fts5),
  tsquery: terms.map((t) => t.tsquery).join(tsquery),
});

/**
 * Parses user text into terms. "Quoted words" stay one phrase; a word that the tokenizer splits
 * ("A-101", 1/2") becomes a phrase; a sheet-number-like word also matches its joined and split
 * forms ("S-101" finds "S101" and the reverse) and is a prefix ("A-10" finds A-101…A-109); the last
 * word is a prefix too (search as you type) when it has at least two characters.
 */
export function parseQuery(raw: string): ParsedQuery | null {
  const words: { text: string; quoted: boolean }[] = [];
  // Only in-word punctuation (- / . ' , as in "A-101", 1/2", TGI'S) keeps a word together;
  // brackets, colons, operators and the like separate words.
  const text = raw.replace(/[()[\]{}:;!?*^+=<>|\\~&@#$%]/g, ' ');
  const re = /"([^"]*)"?|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[1] !== undefined) words.push({ text: m[1], quoted: true });
    else words.push({ text: m[2]!, quoted: false });
  }
  const terms: Term[] = [];
  const numberKeys: string[] = [];
  const trailingSpace = /\s$/.test(raw);
  words.forEach((w, i) => {
    const toks = tokens(w.text);
    if (toks.length === 0) return;
    const isLast = i === words.length - 1 && !trailingSpace;
    const cleaned = w.text.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (!w.quoted && SHEET_NUMBER_RE.test(cleaned) && /\d/.test(cleaned)) {
      const joined = toks.join('');
      const split = fold(cleaned).match(/\p{L}+|\p{N}+/gu) ?? toks;
      terms.push({
        alternatives: [
          { tokens: toks, prefix: true },
          { tokens: [joined], prefix: true },
          { tokens: split, prefix: true },
        ],
      });
      numberKeys.push(cleaned.toUpperCase().replace(/[^A-Z0-9]/g, ''));
      return;
    }
    const prefix = !w.quoted && isLast && toks[toks.length - 1]!.length >= 2;
    terms.push({ alternatives: [{ tokens: toks, prefix }] });
  });
  if (terms.length === 0) return null;
  const kept = terms.slice(0, MAX_TERMS);
  const exprs = kept.map((t) => termExpr(t, 1));
  const narrow = kept.map((t) => termExpr(t, 2));
  return {
    terms: kept,
    all: joinTerms(exprs, ' AND ', ' & '),
    any: joinTerms(exprs, ' OR ', ' | '),
    allNarrow: joinTerms(narrow, ' AND ', ' & '),
    anyNarrow: joinTerms(narrow, ' OR ', ' | '),
    numberKeys,
  };
}

// ── Snippets ─────────────────────────────────────────────────────────────────────────────────────

interface Span {
  start: number;
  end: number;
}

/** Where the query's terms occur in `text` (UTF-16 offsets), phrases matched token by token. */
export function matchSpans(text: string, terms: Term[]): Span[] {
  const toks: { t: string; start: number; end: number }[] = [];
  for (const m of text.matchAll(TOKEN_RE)) {
    const folded = fold(m[0]);
    // Folding can change length (e.g. decomposed ligatures); offsets stay those of the original.
    toks.push({ t: folded, start: m.index, end: m.index + m[0].length });
  }
  const spans: Span[] = [];
  for (const term of terms) {
    for (const alt of term.alternatives) {
      const n = alt.tokens.length;
      for (let i = 0; i + n <= toks.length; i++) {
        let ok = true;
        for (let k = 0; k < n && ok; k++) {
          const want = alt.tokens[k]!;
          const got = toks[i + k]!.t;
          ok = k === n - 1 && alt.prefix ? got.startsWith(want) : got === want;
        }
        if (ok) spans.push({ start: toks[i]!.start, end: toks[i + n - 1]!.end });
      }
    }
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Span[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged;
}

const SNIPPET_CHARS = 160;

/** A window of at most ~160 characters around the first match, with highlight offsets into it. */
export function makeSnippet(text: string, terms: Term[]): { snippet: string; highlights: Span[] } {
  const clean = text.replace(/\s+/g, ' ').trim();
  const spans = matchSpans(clean, terms);
  if (clean.length <= SNIPPET_CHARS) return { snippet: clean, highlights: spans };
  const first = spans[0] ?? { start: 0, end: 0 };
  let from = Math.max(0, first.start - 40);
  // Start at a word boundary so the snippet does not open mid-word.
  if (from > 0) {
    const sp = clean.lastIndexOf(' ', from);
    from = sp >= 0 && first.start - sp < 60 ? sp + 1 : from;
  }
  let to = Math.min(clean.length, from + SNIPPET_CHARS);
  if (to < clean.length) {
    const sp = clean.indexOf(' ', to);
    to = sp >= 0 && sp - to < 20 ? sp : to;
  }
  const pre = from > 0 ? '…' : '';
  const post = to < clean.length ? '…' : '';
  const snippet = pre + clean.slice(from, to) + post;
  const highlights = spans
    .filter((s) => s.start >= from && s.end <= to)
    .map((s) => ({ start: s.start - from + pre.length, end: s.end - from + pre.length }));
  return { snippet, highlights };
}

// ── Search ───────────────────────────────────────────────────────────────────────────────────────

const BAND: Record<HitType, number> = { sheet: 4, block: 3, change: 2.5, symbol: 2, text: 1 };

/** bm25 (negative, lower is better) squashed into [0, 1), higher is better. */
const squash = (r: number) => {
  const x = Math.max(0, -r);
  return x / (1 + x);
};

const round = (x: number) => Math.round(x * 10000) / 10000;

function parseBox(s: string | null): BBox | null {
  if (!s) return null;
  try {
    const b = JSON.parse(s) as BBox;
    return typeof b.x === 'number' ? { x: b.x, y: b.y, width: b.width, height: b.height } : null;
  } catch {
    return null;
  }
}

export const normalizeNumber = (s: string | null) =>
  (s ?? '').toUpperCase().replace(/[^A-Z0-9]/g, '');

export interface SearchOutcome {
  hits: SearchHit[];
  parsed: ParsedQuery;
}

/** Runs the parsed query over every requested source: every term, or any term (`mode`). */
async function runSources(
  db: Db,
  scope: SearchScope,
  parsed: ParsedQuery,
  mode: 'all' | 'any',
  types: ReadonlySet<HitType>,
  limit: number,
): Promise<RawHit[]> {
  const hits: RawHit[] = [];
  const sheetExpr = mode === 'all' ? parsed.all : parsed.any;
  const expr = mode === 'all' ? parsed.allNarrow : parsed.anyNarrow;
  const snip = (text: string) => makeSnippet(text, parsed.terms);
  if (types.has('sheet')) {
    for (const r of await searchSheets(db, scope, sheetExpr, limit)) {
      const num = normalizeNumber(r.sheet_number);
      const band =
        num && parsed.numberKeys.includes(num)
          ? 6
          : num && parsed.numberKeys.some((k) => num.startsWith(k))
            ? 5
            : BAND.sheet;
      hits.push({
        type: 'sheet',
        id: r.id,
        sheet_id: r.id,
        sheet_number: r.sheet_number,
        drawing_id: r.drawing_id,
        ...snip([r.sheet_number, r.title].filter(Boolean).join(' — ')),
        bbox: null,
        score: round(band + squash(r.r)),
      });
    }
  }
  if (types.has('block')) {
    for (const r of await searchBlocks(db, scope, expr, limit)) {
      hits.push({
        type: 'block',
        id: r.id,
        sheet_id: r.sheet_id,
        sheet_number: r.sheet_number,
        drawing_id: r.drawing_id,
        ...snip(r.title ?? r.type),
        bbox: parseBox(r.bbox),
        score: round(BAND.block + squash(r.r)),
      });
    }
  }
  if (types.has('change')) {
    for (const r of await searchChanges(db, scope, expr, limit)) {
      const box = parseBox(r.bbox);
      const at = parseBox(r.block_bbox);
      const parts = [
        r.description,
        r.text_before && `before: ${r.text_before}`,
        r.text_after && `after: ${r.text_after}`,
        r.note && `note: ${r.note}`,
      ];
      hits.push({
        type: 'change',
        id: r.id,
        sheet_id: r.sheet_id,
        sheet_number: r.sheet_number,
        drawing_id: r.drawing_id,
        ...snip(parts.filter(Boolean).join(' · ')),
        // Overlay pixels are block A's crop; shifting by the block's origin gives sheet pixels.
        bbox:
          box && at
            ? { x: box.x + at.x, y: box.y + at.y, width: box.width, height: box.height }
            : null,
        score: round(BAND.change + squash(r.r)),
        overlay_id: r.overlay_id,
      });
    }
  }
  if (types.has('symbol')) {
    for (const r of await searchSymbols(db, scope, expr, limit)) {
      hits.push({
        type: 'symbol',
        id: r.id,
        sheet_id: r.sheet_id,
        sheet_number: r.sheet_number,
        drawing_id: r.drawing_id,
        ...snip(r.label),
        bbox: parseBox(r.bbox),
        score: round(BAND.symbol + squash(r.r)),
      });
    }
  }
  if (types.has('text')) {
    for (const r of await searchText(db, scope, expr, limit)) {
      hits.push({
        type: 'text',
        id: r.sheet_id,
        sheet_id: r.sheet_id,
        sheet_number: r.sheet_number,
        drawing_id: r.drawing_id,
        ...snip(r.text),
        bbox: parseBox(r.bbox),
        score: round(BAND.text + squash(r.r)),
        ...(r.kind === 'markup' ? { source: 'markup' as const } : {}),
      });
    }
  }
  hits.sort(
    (a, b) => b.score - a.score || a.sheet_id.localeCompare(b.sheet_id) || a.id.localeCompare(b.id),
  );
  return dedupeHits(hits).slice(0, limit);
}

type RawHit = Omit<SearchHit, 'drawing_name' | 'revision' | 'issued_at'>;

/** Two boxes are one place when their overlap is at least half their union (or both are null). */
function samePlace(a: BBox | null, b: BBox | null): boolean {
  if (!a || !b) return a === b;
  const ix = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const iy = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  if (ix <= 0 || iy <= 0) return false;
  const inter = ix * iy;
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 && inter / union >= 0.5;
}

const textKey = (h: RawHit) => fold(h.snippet).replace(/\s+/g, ' ');

/**
 * One hit per distinct place and text: PDFs often print the same run several times over itself
 * (bold by overstriking, a label drawn once per layer), and a sheet's text index can hold a run
 * more than once. Hits are in rank order, so the first of each group (the best) is kept.
 */
export function dedupeHits<T extends RawHit>(hits: T[]): T[] {
  const kept: T[] = [];
  const bySheet = new Map<string, T[]>();
  for (const h of hits) {
    const key = textKey(h);
    const same = bySheet.get(h.sheet_id) ?? [];
    const dup = same.some(
      (k) => k.type === h.type && textKey(k) === key && samePlace(k.bbox, h.bbox),
    );
    if (dup) continue;
    same.push(h);
    bySheet.set(h.sheet_id, same);
    kept.push(h);
  }
  return kept;
}

/** Checks the project and filters, then searches. Throws 404/400 as Problem Details. */
export async function searchProject(
  db: Db,
  organizationId: string,
  projectId: string,
  req: SearchRequest,
): Promise<SearchOutcome> {
  if (!(await getRow(db, 'projects', organizationId, projectId)))
    throw notFound('project', projectId);
  const parsed = parseQuery(req.query);
  if (!parsed) {
    throw new ApiError(
      'validation_error',
      'query has no letters or digits to search for; give at least one word or sheet number.',
      {
        errors: [
          { field: '/query', code: 'empty', message: 'must contain at least one letter or digit' },
        ],
      },
    );
  }
  const drawingId = req.drawing_id ?? null;
  if (drawingId) {
    const d = await getRow<{ project_id: string }>(db, 'drawings', organizationId, drawingId);
    if (!d || d.project_id !== projectId) throw notFound('drawing', drawingId);
  }
  const scope: SearchScope = {
    organizationId,
    projectId,
    drawingId,
    discipline: req.discipline ?? null,
  };
  const types = new Set<HitType>(req.types && req.types.length ? req.types : HIT_TYPES);
  const limit = Math.min(MAX_SEARCH_LIMIT, Math.max(1, req.limit ?? DEFAULT_SEARCH_LIMIT));
  // Each source is asked for more than `limit`: duplicates are dropped after ranking.
  const want = Math.min(MAX_SEARCH_LIMIT * 2, limit * 3);
  let raw = await runSources(db, scope, parsed, 'all', types, want);
  // Nothing holds every word: rank what holds some of them (bm25 favours records holding more).
  if (raw.length === 0 && parsed.terms.length > 1)
    raw = await runSources(db, scope, parsed, 'any', types, want);
  const issues = new Map(
    (await projectDrawings(db, organizationId, projectId)).map((d) => [d.id, d]),
  );
  const hits: SearchHit[] = raw.slice(0, limit).map((h) => {
    const d = issues.get(h.drawing_id);
    return {
      ...h,
      drawing_name: d?.name ?? '',
      revision: d?.revision ?? null,
      issued_at: d?.issued_at ?? null,
    };
  });
  return { hits, parsed };
}
