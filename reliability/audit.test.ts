import { describe, expect, it } from 'vitest';
import { unexplained } from './audit';

const vuln = (name: string, severity: 'low' | 'moderate' | 'high' | 'critical') => ({
  name,
  severity,
  via: [],
  fixAvailable: false,
});

describe('npm audit gate', () => {
  it('fails on high and critical advisories unless explained; lower severities pass', () => {
    const report = {
      vulnerabilities: {
        a: vuln('a', 'critical'),
        b: vuln('b', 'high'),
        c: vuln('c', 'moderate'),
        d: vuln('d', 'low'),
      },
    };
    expect(unexplained(report, {}).map((v) => v.name)).toEqual(['a', 'b']);
    expect(
      unexplained(report, { b: 'only reachable from the dev server' }).map((v) => v.name),
    ).toEqual(['a']);
    expect(unexplained({}, {})).toEqual([]);
  });
});
