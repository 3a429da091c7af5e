import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SESSION_KEY_CACHE_SIZE, sessionKey } from '../src/domain/session.ts';

const digest = (tenant: string, user: string, session: string): string =>
  createHash('sha256')
    .update(JSON.stringify([tenant, user, session]))
    .digest('hex');

describe('sessionKey', () => {
  it('is the SHA-256 of the JSON triple, the same when asked again', () => {
    const triple = { tenant: 't', user: 'u', session: 's' };
    expect(sessionKey(triple)).toBe(digest('t', 'u', 's'));
    expect(sessionKey({ ...triple })).toBe(digest('t', 'u', 's'));
  });

  it('tells apart triples whose joined strings are alike', () => {
    expect(sessionKey({ tenant: 'a', user: 'b.c', session: 'd' })).not.toBe(
      sessionKey({ tenant: 'a.b', user: 'c', session: 'd' }),
    );
  });

  it('stays right for every triple when more triples come than it remembers', () => {
    const count = SESSION_KEY_CACHE_SIZE + 100;
    for (let round = 0; round < 2; round += 1) {
      for (let i = 0; i < count; i += 97) {
        expect(sessionKey({ tenant: 't', user: `u${i}`, session: 's' })).toBe(digest('t', `u${i}`, 's'));
      }
      for (let i = 0; i < count; i += 1) sessionKey({ tenant: 't', user: `u${i}`, session: 's' });
    }
  });
});
