// Project search (issue 18 part 5): hits grouped by issue (drawing set, revision, issue date) and
// by sheet within it; a hit opens its sheet zoomed to the hit, highlighted (route `at`).
import { useMemo, useState, type FormEvent } from 'react';
import { navigate } from '../app/use-route';
import { Empty, ErrorNote, Spinner } from '../components/common';
import { useProjectSearch, type Hit } from '../api/vision';
import { plural } from '../viewer/words';
import './search-ask.css';

const KIND: Record<Hit['type'], string> = {
  sheet: 'Sheet',
  block: 'View',
  text: 'Text',
  change: 'Change',
  symbol: 'Symbol',
};

interface Group {
  drawingId: string;
  name: string;
  revision: string | null;
  issuedAt: string | null;
  sheets: { sheetId: string; number: string | null; hits: Hit[] }[];
}

/** Hits in rank order grouped by issue, then sheet; groups ordered by their best hit. */
export function groupHits(hits: Hit[]): Group[] {
  const groups: Group[] = [];
  for (const h of hits) {
    let g = groups.find((x) => x.drawingId === h.drawing_id);
    if (!g) {
      g = {
        drawingId: h.drawing_id,
        name: h.drawing_name,
        revision: h.revision,
        issuedAt: h.issued_at,
        sheets: [],
      };
      groups.push(g);
    }
    let s = g.sheets.find((x) => x.sheetId === h.sheet_id);
    if (!s) {
      s = { sheetId: h.sheet_id, number: h.sheet_number, hits: [] };
      g.sheets.push(s);
    }
    s.hits.push(h);
  }
  return groups;
}

function Snippet({ hit }: { hit: Hit }) {
  const parts: { text: string; mark: boolean }[] = [];
  let at = 0;
  for (const r of hit.highlights) {
    if (r.start > at) parts.push({ text: hit.snippet.slice(at, r.start), mark: false });
    parts.push({ text: hit.snippet.slice(r.start, r.end), mark: true });
    at = r.end;
  }
  if (at < hit.snippet.length) parts.push({ text: hit.snippet.slice(at), mark: false });
  return (
    <span className="hit-snippet">
      {parts.map((p, i) =>
        p.mark ? <mark key={i}>{p.text}</mark> : <span key={i}>{p.text}</span>,
      )}
    </span>
  );
}

export function SearchPanel({ projectId }: { projectId: string }) {
  const search = useProjectSearch(projectId);
  const [query, setQuery] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (query.trim()) search.mutate({ query: query.trim(), limit: 60 });
  };
  const groups = useMemo(() => groupHits(search.data?.data ?? []), [search.data]);
  const open = (h: Hit) => {
    if (h.type === 'change' && h.overlay_id) {
      navigate({ name: 'overlay', projectId, overlayId: h.overlay_id, jobId: null });
      return;
    }
    const label = h.snippet.length > 40 ? `${h.snippet.slice(0, 40)}…` : h.snippet;
    navigate({
      name: 'sheet',
      projectId,
      sheetId: h.sheet_id,
      ...(h.bbox ? { at: h.bbox, label } : {}),
    });
  };
  const count = search.data?.data.length ?? 0;
  return (
    <section className="card sa-panel" aria-label="Search">
      <h2 className="card-title">Search</h2>
      <form className="search-bar" onSubmit={submit} role="search">
        <input
          type="search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder="Sheet text, markups, view titles, changes, symbols…"
          aria-label="Search the project"
          data-testid="search-input"
          autoFocus
        />
        <button
          type="submit"
          className="btn btn-primary"
          disabled={!query.trim() || search.isPending}
        >
          Search
        </button>
      </form>
      {search.isPending && <Spinner label="Searching…" />}
      {search.isError && <ErrorNote error={search.error} title="Search failed" />}
      {search.isSuccess && count === 0 && (
        <Empty title="No matches">
          Try fewer or different words. Markup text is searchable in sets processed since markups
          were indexed; process an older set again to include its markups.
        </Empty>
      )}
      {search.isSuccess && count > 0 && (
        <div data-testid="search-results">
          <p className="muted small">
            {count} {count === 1 ? 'place' : 'places'} in {groups.length}{' '}
            {groups.length === 1 ? 'issue' : 'issues'}
          </p>
          {groups.map((g) => (
            <div key={g.drawingId} className="sa-issue" data-testid="search-issue">
              <h3 className="sa-issue-head">
                <span className="sa-issue-name">{g.name}</span>
                {g.revision && <span className="sa-chip">Rev {g.revision}</span>}
                <span className="muted small">issued {g.issuedAt ?? 'date unknown'}</span>
              </h3>
              {g.sheets.map((s) => (
                <div key={s.sheetId} className="sa-sheet" data-testid="search-sheet">
                  <div className="sa-sheet-head">
                    <span className="sheet-number">{s.number ?? 'Unnumbered sheet'}</span>
                    <span className="muted small">{plural(s.hits.length, 'place')}</span>
                  </div>
                  <ul className="sa-hits">
                    {s.hits.map((h, i) => (
                      <li key={`${h.type}:${h.id}:${i}`}>
                        <button
                          type="button"
                          className="sa-hit"
                          data-testid="search-hit"
                          onClick={() => open(h)}
                          title={h.bbox ? 'Open the sheet at this place' : 'Open the sheet'}
                        >
                          <span className="sa-kind">
                            {h.source === 'markup' ? 'Markup' : KIND[h.type]}
                          </span>
                          <Snippet hit={h} />
                        </button>
                      </li>
                    ))}
                  </ul>
                </div>
              ))}
            </div>
          ))}
        </div>
      )}
    </section>
  );
}
