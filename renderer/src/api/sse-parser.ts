// A Server-Sent Events parser for `fetch` bodies. EventSource cannot send the Authorization
// header the service requires, so job progress is read with fetch + ReadableStream and fed
// through this parser. Follows the WHATWG event-stream rules that matter here: lines end in
// LF, CRLF or CR; a blank line dispatches; `data:` lines join with '\n'; one optional space
// after the colon is dropped; lines starting with ':' are comments (keep-alives).

export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private eventType = '';
  private lastId: string | null = null;
  private pendingCr = false;

  /** Feeds a decoded text chunk; returns the events completed by it. */
  push(chunk: string): SseEvent[] {
    let text = chunk;
    // A CR at the end of the previous chunk may be the first half of CRLF.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      if (!m) break;
      if (m[0] === '\r' && m.index === this.buffer.length - 1) {
        this.pendingCr = true;
      }
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === '') {
      if (this.data.length === 0) {
        this.eventType = '';
        return null;
      }
      const ev: SseEvent = {
        event: this.eventType || 'message',
        data: this.data.join('\n'),
        id: this.lastId,
      };
      this.data = [];
      this.eventType = '';
      return ev;
    }
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.eventType = value;
    else if (field === 'id' && !value.includes('\0')) this.lastId = value;
    return null;
  }
}
