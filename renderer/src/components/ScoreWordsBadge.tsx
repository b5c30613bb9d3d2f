import { scoreWords } from '../viewer/words';

/** The score as a band in words with its number: "Moderate changes 0.87". */
export function ScoreWordsBadge({
  score,
  changeCount,
}: {
  score: number;
  changeCount: number | null;
}) {
  const w = scoreWords(score, changeCount);
  return (
    <span
      className={`score score-words ${w.cls}`}
      data-testid="score-words"
      title="Similarity of the two drawings after alignment, from 0 (nothing alike) to 1 (identical)"
    >
      {w.label} <span className="score-num">{w.value}</span>
    </span>
  );
}
