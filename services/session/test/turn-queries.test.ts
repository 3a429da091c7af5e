import { describe, expect, it } from 'vitest';
import { createTurnQueries } from '../src/catalog/turn-queries.ts';

describe('createTurnQueries', () => {
  it('hands a remembered query out once', () => {
    const turns = createTurnQueries();
    turns.remember('t1', 'first query');
    expect(turns.take('t1')).toBe('first query');
    expect(turns.take('t1')).toBeUndefined();
    expect(turns.take('never')).toBeUndefined();
  });

  it('keeps at most its capacity, dropping the oldest first', () => {
    const turns = createTurnQueries({ capacity: 3 });
    for (const id of ['a', 'b', 'c', 'd']) turns.remember(id, `q-${id}`);
    expect(turns.size).toBe(3);
    expect(turns.take('a')).toBeUndefined();
    expect(turns.take('d')).toBe('q-d');
  });

  it('forgets entries older than the maximum age', () => {
    let now = 1_000;
    const turns = createTurnQueries({ maxAgeMs: 100, now: () => now });
    turns.remember('old', 'stale');
    now += 50;
    turns.remember('young', 'fresh');
    now += 60;
    expect(turns.take('old')).toBeUndefined();
    turns.remember('newest', 'newest');
    expect(turns.size).toBe(2);
    expect(turns.take('young')).toBe('fresh');
  });

  it('keeps at most its character budget, dropping the oldest first, and never holds a query above it', () => {
    const turns = createTurnQueries({ maxChars: 10 });
    turns.remember('a', 'aaaa');
    turns.remember('b', 'bbbb');
    turns.remember('c', 'cccc'); // 12 characters: a goes
    expect(turns.take('a')).toBeUndefined();
    expect(turns.size).toBe(2);
    turns.remember('huge', 'x'.repeat(11));
    expect(turns.take('huge')).toBeUndefined();
    expect(turns.take('b')).toBe('bbbb');
    expect(turns.take('c')).toBe('cccc');
    expect(turns.size).toBe(0);
  });
});
