import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CHUNK_HOLD_MS, createChunkStream } from '../../src/engine/chunk-stream.ts';

describe('chunk stream', () => {
  let sent: [string, string, boolean][];
  const emit = (delta: string, kind: string, done: boolean): void => void sent.push([delta, kind, done]);

  beforeEach(() => {
    sent = [];
    vi.useFakeTimers();
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it('sends the last chunk of a completed call with Done, and no empty closing chunk', () => {
    const stream = createChunkStream(emit);
    stream.push('think ', 'reasoning');
    stream.push('echo {}', 'tool_call');
    expect(sent).toEqual([['think ', 'reasoning', false]]);
    stream.end();
    expect(sent).toEqual([
      ['think ', 'reasoning', false],
      ['echo {}', 'tool_call', true],
    ]);
    vi.advanceTimersByTime(CHUNK_HOLD_MS * 2);
    expect(sent).toHaveLength(2);
  });

  it('ends a call that streamed nothing with an empty Done chunk', () => {
    const stream = createChunkStream(emit);
    stream.end();
    expect(sent).toEqual([['', 'text', true]]);
  });

  it('sends a held chunk on its own once nothing followed it for the hold time', () => {
    const stream = createChunkStream(emit);
    stream.push('slow', 'text');
    vi.advanceTimersByTime(CHUNK_HOLD_MS - 1);
    expect(sent).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(sent).toEqual([['slow', 'text', false]]);
    // The call then ends with nothing held: the closing chunk is empty, of the last kind.
    stream.end();
    expect(sent).toEqual([
      ['slow', 'text', false],
      ['', 'text', true],
    ]);
  });

  it('sends the held chunk of a call that failed unfinished, and nothing of one that was aborted', () => {
    const failed = createChunkStream(emit);
    failed.push('partial', 'text');
    failed.abandon(false);
    expect(sent).toEqual([['partial', 'text', false]]);

    sent = [];
    const aborted = createChunkStream(emit);
    aborted.push('a', 'text');
    aborted.push('b', 'text');
    aborted.abandon(true);
    vi.advanceTimersByTime(CHUNK_HOLD_MS * 2);
    expect(sent).toEqual([['a', 'text', false]]);
  });

  it('keeps the order of chunks whatever the timer does', () => {
    const stream = createChunkStream(emit);
    stream.push('1', 'text');
    vi.advanceTimersByTime(CHUNK_HOLD_MS - 5);
    stream.push('2', 'text');
    vi.advanceTimersByTime(5);
    stream.push('3', 'text');
    stream.end();
    expect(sent.map(([delta, , done]) => `${delta}${done ? '!' : ''}`)).toEqual(['1', '2', '3!']);
  });
});
