import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser';

describe('SseParser', () => {
  it('dispatches on a blank line and joins data lines', () => {
    const p = new SseParser();
    expect(p.push('data: {"a":1}\n')).toEqual([]);
    expect(p.push('data: second\n\n')).toEqual([
      { event: 'message', data: '{"a":1}\nsecond', id: null },
    ]);
  });

  it('handles events split across chunks, CRLF line ends, comments, event and id fields', () => {
    const p = new SseParser();
    const events = [
      ...p.push(': keep-alive\r\nevent: job\r\nid: 7\r'),
      ...p.push('\ndata:{"status":"Started"}\r\n\r\nda'),
      ...p.push('ta: x\n\n'),
    ];
    expect(events).toEqual([
      { event: 'job', data: '{"status":"Started"}', id: '7' },
      { event: 'message', data: 'x', id: '7' },
    ]);
  });

  it('ignores a blank line with no data and keeps only one leading space', () => {
    const p = new SseParser();
    expect(p.push('event: ping\n\ndata:  two\n\n')).toEqual([
      { event: 'message', data: ' two', id: null },
    ]);
  });
});
