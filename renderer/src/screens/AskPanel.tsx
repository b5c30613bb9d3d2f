// Ask about the project (contract §7): the answer with its numbered citations; a citation opens
// the cited sheet at the cited place (or the overlay of a cited change). Shows the credit used
// and the balance (GET /credits).
import { useState, type FormEvent } from 'react';
import { navigate } from '../app/use-route';
import { ErrorNote, Spinner } from '../components/common';
import { useApi } from '../api/hooks';
import { placeOf, useAsk, useCredits, type AskSource } from '../api/vision';
import { ui } from '../state/ui-store';
import './search-ask.css';
import { plural } from '../viewer/words';

/** The answer with its [n] markers as links to sources[n-1]. */
function AnswerText({ text, onCite }: { text: string; onCite: (n: number) => void }) {
  const parts = text.split(/(\[\d+\])/g);
  return (
    <p className="sa-answer" data-testid="ask-answer">
      {parts.map((p, i) => {
        const m = /^\[(\d+)\]$/.exec(p);
        return m ? (
          <button key={i} type="button" className="sa-cite-ref" onClick={() => onCite(+m[1]!)}>
            {p}
          </button>
        ) : (
          <span key={i}>{p}</span>
        );
      })}
    </p>
  );
}

export function AskPanel({ projectId }: { projectId: string }) {
  const api = useApi();
  const ask = useAsk(projectId);
  const credits = useCredits();
  const [question, setQuestion] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (question.trim()) ask.mutate(question.trim());
  };
  const open = async (src: AskSource) => {
    try {
      const place = await placeOf(api, projectId, src);
      if (place.kind === 'sheet')
        navigate({
          name: 'sheet',
          projectId,
          sheetId: place.sheetId,
          // The mark says what was cited (the words), short enough to leave the drawing readable.
          ...(place.at
            ? {
                at: place.at,
                label:
                  src.snippet.length > 40
                    ? `${src.snippet.slice(0, 40)}…`
                    : src.snippet || src.type,
              }
            : {}),
        });
      else if (place.kind === 'overlay')
        navigate({ name: 'overlay', projectId, overlayId: place.overlayId, jobId: null });
      else navigate({ name: 'project', projectId, tab: 'drawings' });
    } catch (err) {
      ui.toast(err instanceof Error ? err.message : String(err), 'error');
    }
  };
  const sources = ask.data?.sources ?? [];
  return (
    <section className="card sa-panel" aria-label="Ask">
      <div className="sa-title-row">
        <h2 className="card-title">Ask about this project</h2>
        <span className="muted small" data-testid="credit-balance">
          {credits.data ? `${plural(credits.data.balance, 'credit')} left` : ''}
        </span>
      </div>
      <form className="search-bar" onSubmit={submit}>
        <input
          value={question}
          onChange={(e) => setQuestion(e.target.value)}
          placeholder="e.g. What changed on S101?"
          aria-label="Question"
          data-testid="ask-input"
        />
        <button
          type="submit"
          className="btn btn-primary"
          disabled={!question.trim() || ask.isPending}
        >
          Ask
        </button>
      </form>
      <p className="muted small">An answer costs 1 credit; none when the records cannot answer.</p>
      {ask.isPending && <Spinner label="Reading the project's records…" />}
      {ask.isError && <ErrorNote error={ask.error} title="Could not answer" />}
      {ask.data && (
        <div data-testid="ask-result">
          <AnswerText
            text={ask.data.answer}
            onCite={(n) => sources[n - 1] && void open(sources[n - 1]!)}
          />
          <p className="muted small" data-testid="ask-credits">
            {ask.data.answered ? '1 credit used' : 'No credit used'} ·{' '}
            {ask.data.method === 'extractive' ? 'drawn from the records' : ask.data.method}
          </p>
          {sources.length > 0 && (
            <ol className="sa-sources">
              {sources.map((s, i) => (
                <li key={`${s.type}:${s.id}:${i}`}>
                  <button
                    type="button"
                    className="sa-hit"
                    data-testid="ask-citation"
                    onClick={() => void open(s)}
                  >
                    <span className="sa-kind">
                      [{i + 1}] {s.type}
                    </span>
                    <span className="hit-snippet">
                      <strong>{s.label}</strong>
                      {s.snippet ? ` — ${s.snippet}` : ''}
                    </span>
                  </button>
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </section>
  );
}
