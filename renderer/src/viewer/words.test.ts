import { describe, expect, it } from 'vitest';
import { alignmentWords, changeLabel, plural, scoreWords, viewTitle } from './words';

describe('plain words', () => {
  it('plurals', () => {
    expect(plural(1, 'sheet')).toBe('1 sheet');
    expect(plural(2, 'sheet')).toBe('2 sheets');
    expect(plural(0, 'change')).toBe('0 changes');
  });
  it('labels a change by its description when good, else kind and category', () => {
    expect(
      changeLabel({ kind: 'added', category: 'geometry', description: 'Column added at C/4' }),
    ).toBe('Column added at C/4');
    expect(changeLabel({ kind: 'modified', category: 'title_block', description: '' })).toBe(
      'Changed title block',
    );
    expect(
      changeLabel({
        kind: 'modified',
        category: 'annotation',
        description: "Modified annotation (11481 changed px) near “8' - 11 3/4”.",
      }),
    ).toBe("Modified annotation near “8' - 11 3/4”.");
    expect(changeLabel({ kind: 'removed', category: 'text', description: '123 x 45' })).toBe(
      'Removed text',
    );
  });
  it('bands the score with its number and never calls a changed sheet nearly identical', () => {
    expect(scoreWords(0.99, 0)).toMatchObject({ label: 'Nearly identical', value: '0.99' });
    expect(scoreWords(0.99, 3).label).toBe('Minor changes');
    expect(scoreWords(0.9).label).toBe('Moderate changes');
    expect(scoreWords(0.7).label).toBe('Significant changes');
    expect(scoreWords(0.5).label).toBe('Major changes');
  });
  it('says aligned or check alignment', () => {
    const a = { method: 'x', confidence: 0.9, residual_px: 1.2, low_confidence: false };
    expect(alignmentWords(a as never).label).toBe('Aligned');
    expect(alignmentWords({ ...a, low_confidence: true } as never).label).toBe('Check alignment');
  });
  it('titles views sensibly', () => {
    expect(viewTitle({ type: 'Sheet' })).toBe('Whole sheet');
    expect(viewTitle({ type: 'Detail', identifier: 'F.', title: null }, 2)).toBe('Detail 2');
    expect(viewTitle({ type: 'Plan', identifier: '1', title: 'FIRST FLOOR' })).toBe(
      '1 FIRST FLOOR',
    );
    expect(viewTitle({ type: 'KeyPlan', identifier: null, title: '' })).toBe('Key plan');
    expect(viewTitle({ type: 'TitleBlock', title: 'FRAMING - 1ST FLOOR' })).toBe('Title block');
  });
});
