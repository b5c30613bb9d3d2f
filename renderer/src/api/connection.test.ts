import { describe, expect, it } from 'vitest';
import { takeKeyFromHash } from './connection';

describe('takeKeyFromHash', () => {
  it('takes the key and leaves nothing behind', () => {
    expect(takeKeyFromHash('#key=sk_abc')).toEqual({ key: 'sk_abc', rest: '' });
  });
  it('keeps other fragment parameters', () => {
    expect(takeKeyFromHash('#key=sk_abc&x=1')).toEqual({ key: 'sk_abc', rest: '#x=1' });
  });
  it('leaves route fragments alone', () => {
    expect(takeKeyFromHash('#/projects/prj_1')).toEqual({ key: null, rest: '#/projects/prj_1' });
  });
  it('treats an empty key as none', () => {
    expect(takeKeyFromHash('#key=')).toEqual({ key: null, rest: '' });
  });
});
