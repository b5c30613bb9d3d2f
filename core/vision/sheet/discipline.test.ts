import { describe, expect, it } from 'vitest';
import { disciplineFromSheetNumber, normalizeSheetNumber, sameSheetNumber } from './discipline';

describe('disciplineFromSheetNumber', () => {
  it.each([
    ['G-001', 'general'],
    ['H101', 'hazardous_materials'],
    ['V-100', 'survey'],
    ['B-001', 'geotechnical'],
    ['C-101', 'civil'],
    ['L1.01', 'landscape'],
    ['S101', 'structural'],
    ['S-102', 'structural'],
    ['A-101', 'architectural'],
    ['A600', 'architectural'],
    ['I-201', 'interiors'],
    ['Q-101', 'equipment'],
    ['F-101', 'fire_protection'],
    ['P-301', 'plumbing'],
    ['D-101', 'process'],
    ['M-401', 'mechanical'],
    ['E-101', 'electrical'],
    ['W-101', 'distributed_energy'],
    ['T-001', 'telecommunications'],
    ['R-101', 'resource'],
    ['X-101', 'other'],
    ['Z-101', 'contractor'],
    ['O-101', 'operations'],
  ] as const)('%s → %s', (n, d) => {
    expect(disciplineFromSheetNumber(n)).toBe(d);
  });

  it.each([
    ['AD-101', 'architectural'],
    ['AS101', 'architectural'],
    ['FP-201', 'fire_protection'],
    ['EP-101', 'electrical'],
    ['ID-301', 'interiors'],
    ['ASK-02', 'architectural'],
    ['ask-003', 'architectural'],
    [' s1.01 ', 'structural'],
  ] as const)('modifier / office prefix %s → %s', (n, d) => {
    expect(disciplineFromSheetNumber(n)).toBe(d);
  });

  it.each(['', '101', 'SK-1', 'SECTION', 'NORTH', 'K-101', 'N-101', 'U-101', 'J-1', 'ABCDE-1'])(
    '%s → unknown',
    (n) => {
      expect(disciplineFromSheetNumber(n)).toBe('unknown');
    },
  );

  it('handles null and undefined', () => {
    expect(disciplineFromSheetNumber(null)).toBe('unknown');
    expect(disciplineFromSheetNumber(undefined)).toBe('unknown');
  });
});

describe('normalizeSheetNumber', () => {
  it('removes separators and case', () => {
    for (const s of ['A-101', 'A101', 'A.101', 'a 101', 'A_101', 'a-101']) {
      expect(normalizeSheetNumber(s)).toBe('A101');
    }
    expect(normalizeSheetNumber('S1.01')).toBe('S101');
  });

  it('folds O/0 and I/1 confusions in the numeric part', () => {
    expect(normalizeSheetNumber('A-1O1')).toBe('A101');
    expect(normalizeSheetNumber('A-IOI')).toBe('A101');
    expect(normalizeSheetNumber('S-l02')).toBe('S102');
    expect(normalizeSheetNumber('AIO1')).toBe('A101');
  });

  it('keeps distinct sheets distinct', () => {
    expect(normalizeSheetNumber('A-101')).not.toBe(normalizeSheetNumber('A-102'));
    expect(normalizeSheetNumber('I-101')).toBe('I101');
    expect(normalizeSheetNumber('O-101')).toBe('O101');
    expect(normalizeSheetNumber('ASK-02')).toBe('ASK02');
    expect(normalizeSheetNumber('A-101A')).toBe('A101A');
    expect(normalizeSheetNumber('AD-101')).not.toBe(normalizeSheetNumber('A-101'));
  });

  it('sameSheetNumber compares canonical forms', () => {
    expect(sameSheetNumber('A-101', 'A.101')).toBe(true);
    expect(sameSheetNumber('S-101', 'A-101')).toBe(false);
  });
});
