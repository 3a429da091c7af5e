import { describe, expect, it } from 'vitest';
import { createSseParser } from '../src/sse-parser.ts';
import type { SseMessage } from '../src/sse-parser.ts';

function parseAll(chunks: readonly string[], initialId?: string): SseMessage[] {
  const parser = createSseParser(initialId);
  return chunks.flatMap((chunk) => parser.push(chunk));
}

const STREAM =
  ': connected\r\n\r\n' +
  'id: 1\r\nevent: task.started\r\ndata: {"type":"task.started",\r\ndata: "sequence":1}\r\n\r\n' +
  ':heartbeat\n\n' +
  'id:2\rdata:second\r\r' +
  'event: replay.complete\ndata: {}\n\n';

const EXPECTED: SseMessage[] = [
  { event: 'task.started', data: '{"type":"task.started",\n"sequence":1}', lastEventId: '1', hasId: true },
  { event: '', data: 'second', lastEventId: '2', hasId: true },
  { event: 'replay.complete', data: '{}', lastEventId: '2', hasId: false },
];

describe('createSseParser', () => {
  it('parses id, event and data fields into messages', () => {
    expect(parseAll(['id: 7\nevent: ping\ndata: hello\n\n'])).toEqual([
      { event: 'ping', data: 'hello', lastEventId: '7', hasId: true },
    ]);
  });

  it('joins multi-line data with newlines', () => {
    expect(parseAll(['data: a\ndata:b\ndata\ndata:  c\n\n'])[0]?.data).toBe('a\nb\n\n c');
  });

  it('ignores comments and heartbeats', () => {
    expect(parseAll([': heartbeat\n\n:\n\n: keep-alive\ndata: x\n\n'])).toEqual([
      { event: '', data: 'x', lastEventId: '', hasId: false },
    ]);
  });

  it('accepts CRLF, CR and LF line endings alike', () => {
    expect(parseAll([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same messages for a split at every position', () => {
    for (let at = 0; at <= STREAM.length; at++) {
      expect(parseAll([STREAM.slice(0, at), STREAM.slice(at)]), `split at ${at}`).toEqual(EXPECTED);
    }
  });

  it('gives the same messages when fed one character at a time', () => {
    expect(parseAll([...STREAM])).toEqual(EXPECTED);
  });

  it('does not count a CRLF split across chunks as two line endings', () => {
    expect(parseAll(['data: a\r', '\ndata: b\r', '\n\r', '\n'])).toEqual([
      { event: '', data: 'a\nb', lastEventId: '', hasId: false },
    ]);
  });

  it('keeps an incomplete message until its blank line arrives', () => {
    const parser = createSseParser();
    expect(parser.push('data: partial\n')).toEqual([]);
    expect(parser.push('\n')).toHaveLength(1);
  });

  it('updates the cursor on an id without data but dispatches nothing', () => {
    const parser = createSseParser('4');
    expect(parser.push('id: 5\n\n')).toEqual([]);
    expect(parser.lastEventId).toBe('5');
  });

  it('keeps the seeded cursor until the server sends an id', () => {
    expect(parseAll(['data: x\n\n'], '41')[0]?.lastEventId).toBe('41');
  });

  it('strips a leading byte order mark', () => {
    expect(parseAll(['\uFEFFdata: x\n\n'])[0]?.data).toBe('x');
  });

  it('records a numeric retry and ignores a malformed one', () => {
    const parser = createSseParser();
    parser.push('retry: 1500\n\nretry: soon\n\n');
    expect(parser.retryMs).toBe(1500);
  });

  it('ignores an id containing NUL', () => {
    expect(parseAll(['id: a\0b\ndata: x\n\n'])[0]).toMatchObject({ lastEventId: '', hasId: false });
  });
});
