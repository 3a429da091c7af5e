import { describe, expect, it } from 'vitest';
import { collectEvents, waitFor } from '../src/wait.ts';

/** An async iterable fed by hand, recording whether it was closed. */
function feed<T>() {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const state = { closed: false };
  const iterable: AsyncIterable<T> = {
    [Symbol.asyncIterator]: () => ({
      async next() {
        while (queue.length === 0 && !ended && !state.closed) await new Promise<void>((resolve) => (wake = resolve));
        const value = queue.shift();
        return value === undefined ? { done: true, value: undefined } : { done: false, value };
      },
      async return() {
        state.closed = true;
        wake?.();
        return { done: true, value: undefined };
      },
    }),
  };
  return {
    iterable,
    state,
    push: (...items: T[]) => {
      queue.push(...items);
      wake?.();
    },
    end: () => {
      ended = true;
      wake?.();
    },
  };
}

describe('collectEvents', () => {
  it('resolves with every item up to the matching one and closes the stream', async () => {
    const source = feed<{ type: string }>();
    source.push({ type: 'a' }, { type: 'b' }, { type: 'c' });
    const items = await collectEvents(source.iterable, (item) => item.type === 'b');
    expect(items.map((item) => item.type)).toEqual(['a', 'b']);
    expect(source.state.closed).toBe(true);
  });

  it('waits for items that arrive later', async () => {
    const source = feed<{ type: string }>();
    const pending = collectEvents(source.iterable, (_item, all) => all.length === 2);
    source.push({ type: 'a' });
    queueMicrotask(() => source.push({ type: 'b' }));
    expect(await pending).toHaveLength(2);
  });

  it('rejects at the timeout listing what arrived', async () => {
    const source = feed<{ type: string }>();
    source.push({ type: 'task.started' });
    await expect(collectEvents(source.iterable, () => false, { timeoutMs: 50 })).rejects.toThrow(
      /within 50 ms; received 1: task.started/,
    );
    expect(source.state.closed).toBe(true);
  });

  it('rejects when the stream ends first', async () => {
    const source = feed<{ type: string }>();
    source.end();
    await expect(collectEvents(source.iterable, () => true)).rejects.toThrow(/stream ended/);
  });
});

describe('waitFor', () => {
  it('resolves with the first truthy value', async () => {
    let calls = 0;
    expect(await waitFor(() => (++calls >= 3 ? calls : 0), { intervalMs: 1 })).toBe(3);
  });

  it('treats a throw as not yet and reports the last error at the timeout', async () => {
    await expect(
      waitFor(
        () => {
          throw new Error('not ready');
        },
        { timeoutMs: 30, intervalMs: 5, message: 'the gateway' },
      ),
    ).rejects.toThrow(/the gateway did not hold within 30 ms; last error: not ready/);
  });
});
