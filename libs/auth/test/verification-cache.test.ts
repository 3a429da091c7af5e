import { describe, expect, it, vi } from 'vitest';
import { ServiceError } from '@ars/contracts';
import { cacheVerifications } from '../src/index.ts';
import type { TokenClaims } from '../src/index.ts';

const NOW_MS = 1_700_000_000_000;

function fakeVerifier(claims: TokenClaims | Error) {
  return {
    verify: vi.fn(async () => {
      if (claims instanceof Error) throw claims;
      return claims;
    }),
  };
}

const claims = (expSeconds: number): TokenClaims => ({ tenant: 't', user: 'u', scopes: [], exp: expSeconds });

describe('cacheVerifications', () => {
  it('verifies a token once and reuses the claims while it is valid', async () => {
    const inner = fakeVerifier(claims(NOW_MS / 1000 + 3600));
    const cached = cacheVerifications(inner, { now: () => NOW_MS });
    await cached.verify('token-a');
    const second = await cached.verify('token-a');
    expect(second.tenant).toBe('t');
    expect(inner.verify).toHaveBeenCalledTimes(1);
  });

  it('verifies again once maxAgeSeconds has passed', async () => {
    let now = NOW_MS;
    const inner = fakeVerifier(claims(NOW_MS / 1000 + 3600));
    const cached = cacheVerifications(inner, { now: () => now, maxAgeSeconds: 60 });
    await cached.verify('token-a');
    now += 61_000;
    await cached.verify('token-a');
    expect(inner.verify).toHaveBeenCalledTimes(2);
  });

  it('never reuses a verification past the token expiry', async () => {
    let now = NOW_MS;
    const inner = fakeVerifier(claims(NOW_MS / 1000 + 5));
    const cached = cacheVerifications(inner, { now: () => now, maxAgeSeconds: 60 });
    await cached.verify('token-a');
    now += 6_000;
    await cached.verify('token-a');
    expect(inner.verify).toHaveBeenCalledTimes(2);
  });

  it('never remembers a refusal', async () => {
    const inner = fakeVerifier(new ServiceError('auth_rejected', 'signature: bad'));
    const cached = cacheVerifications(inner, { now: () => NOW_MS });
    await expect(cached.verify('bad')).rejects.toMatchObject({ code: 'auth_rejected' });
    await expect(cached.verify('bad')).rejects.toMatchObject({ code: 'auth_rejected' });
    expect(inner.verify).toHaveBeenCalledTimes(2);
  });

  it('evicts the least recently used token beyond maxEntries', async () => {
    const inner = fakeVerifier(claims(NOW_MS / 1000 + 3600));
    const cached = cacheVerifications(inner, { now: () => NOW_MS, maxEntries: 2 });
    await cached.verify('a');
    await cached.verify('b');
    await cached.verify('a');
    await cached.verify('c'); // evicts b, the least recently used
    await cached.verify('a');
    expect(inner.verify).toHaveBeenCalledTimes(3);
    await cached.verify('b');
    expect(inner.verify).toHaveBeenCalledTimes(4);
  });
});
