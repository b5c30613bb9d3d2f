// Plain words for what the service reports: change labels, score bands, alignment, plurals and
// view names, so the main UI never shows ids or method names. Pure.

import type { Change, Overlay } from '../api/types';

/** "1 sheet", "2 sheets"; `many` when the plural is not just an added "s". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

const KIND_WORDS: Record<string, string> = {
  added: 'Added',
  removed: 'Removed',
  modified: 'Changed',
  moved: 'Moved',
};
const CATEGORY_WORDS: Record<string, string> = {
  geometry: 'linework',
  text: 'text',
  dimension: 'dimension',
  annotation: 'annotation',
  title_block: 'title block',
  noise: 'minor marks',
};

/** "Added linework", "Changed dimension", … (kind · category in words). */
export function kindWords(c: Pick<Change, 'kind' | 'category'>): string {
  const k = KIND_WORDS[c.kind] ?? c.kind;
  const cat = CATEGORY_WORDS[c.category] ?? c.category.replace(/_/g, ' ');
  return `${k} ${cat}`;
}

/**
 * A description is good when it reads as words: not empty, not an id, not just numbers or a
 * bounding box, and not too long to be a label.
 */
export function goodDescription(d: string | null | undefined): d is string {
  if (!d) return false;
  const t = d.trim();
  if (t.length < 4 || t.length > 160) return false;
  if (!/[a-z]{3}/i.test(t)) return false;
  if (/\b[0-9a-f]{8}-[0-9a-f]{4}-/i.test(t) || /\b(chg|ovl|job)_[0-9a-z]{6,}/i.test(t))
    return false;
  return true;
}

/** A description without pixel counts ("(11481 changed px)"), which mean nothing on paper. */
export function cleanDescription(d: string): string {
  return d
    .replace(/\s*\(\s*[\d,.]+\s*(changed\s+)?px\s*\)/gi, '')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The label a reviewer reads: the service's description when it is good, else kind and category. */
export function changeLabel(c: Pick<Change, 'kind' | 'category' | 'description'>): string {
  const d = c.description ? cleanDescription(c.description) : null;
  return goodDescription(d) ? d : kindWords(c);
}

export interface ScoreWords {
  label: string;
  cls: string;
  /** The number shown with the band, e.g. "0.87". */
  value: string;
}

/**
 * The score as a band with its number (≥0.95 nearly identical, 0.80–0.95 moderate, 0.60–0.80
 * significant, <0.60 major). A sheet with changes is never "Nearly identical": it reads
 * "Minor changes" instead.
 */
export function scoreWords(score: number, changeCount: number | null = null): ScoreWords {
  const value = score.toFixed(2);
  if (score >= 0.95)
    return (changeCount ?? 0) > 0
      ? { label: 'Minor changes', cls: 'band-minor', value }
      : { label: 'Nearly identical', cls: 'band-same', value };
  if (score >= 0.8) return { label: 'Moderate changes', cls: 'band-moderate', value };
  if (score >= 0.6) return { label: 'Significant changes', cls: 'band-significant', value };
  return { label: 'Major changes', cls: 'band-major', value };
}

/** "Aligned" or "Check alignment", with the details for the disclosure. */
export function alignmentWords(a: Overlay['alignment'] | null | undefined): {
  ok: boolean;
  label: string;
  details: string | null;
} {
  if (!a) return { ok: true, label: 'Aligned', details: null };
  const ok = !a.low_confidence;
  return {
    ok,
    label: ok ? 'Aligned' : 'Check alignment',
    details: `${a.method} · ${Math.round(a.confidence * 100)}% confidence · ${a.residual_px.toFixed(1)} px residual`,
  };
}

const TYPE_WORDS: Record<string, string> = {
  KeyPlan: 'Key plan',
  TitleBlock: 'Title block',
};

/** A block type in words: "Plan", "Key plan", "Title block". */
export function blockTypeWords(type: string | null | undefined): string {
  if (!type) return 'View';
  return TYPE_WORDS[type] ?? type;
}

/** Whether a view identifier or title is worth showing ("F.", "-", "1" alone are not). */
function meaningful(s: string | null | undefined): s is string {
  if (!s) return false;
  const t = s.trim();
  return t.replace(/[^a-z0-9]/gi, '').length >= 2 || /^[0-9]+$/.test(t);
}

/**
 * A view's title: its identifier and title when they read as words, else its block type and
 * its number among the sheet's views of that type ("Detail 2"); never a stray "F.".
 */
export function viewTitle(
  block: { type?: string | null; identifier?: string | null; title?: string | null } | undefined,
  ordinal?: number,
): string {
  if (!block) return 'View';
  if (block.type === 'Sheet') return 'Whole sheet';
  // A title block's "title" is the sheet's own: call it what it is.
  if (block.type === 'TitleBlock') return 'Title block';
  const id = meaningful(block.identifier) ? block.identifier.trim() : '';
  const title = meaningful(block.title) ? block.title.trim() : '';
  if (title) return id ? `${id} ${title}` : title;
  const type = blockTypeWords(block.type);
  if (id) return `${type} ${id}`;
  return ordinal != null ? `${type} ${ordinal}` : type;
}
