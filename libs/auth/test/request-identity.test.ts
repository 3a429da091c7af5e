import { describe, expect, it } from 'vitest';
import { resolveRequestIdentity } from '../src/index.ts';
import type { TokenClaims } from '../src/index.ts';

const claims: TokenClaims = { tenant: 'acme', user: 'alice', session: 'from-token', scopes: ['console:fleet'] };
const sessionless: TokenClaims = { tenant: 'acme', user: 'alice', scopes: [] };

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('resolveRequestIdentity (two-part model)', () => {
  it('rule 1: a non-empty X-Service-Session header replaces the token session claim', () => {
    expect(resolveRequestIdentity({ claims, sessionHeader: 'from-header' })).toEqual({
      tenant: 'acme',
      user: 'alice',
      session: 'from-header',
      scopes: ['console:fleet'],
    });
  });

  it('rule 1: the header also supplies the session when the token has no session claim', () => {
    expect(resolveRequestIdentity({ claims: sessionless, sessionHeader: 'h' }).session).toBe('h');
  });

  it('rule 2: without the header the token session claim is the default', () => {
    expect(resolveRequestIdentity({ claims, sessionHeader: undefined }).session).toBe('from-token');
  });

  it('rule 2: an empty or blank header counts as absent', () => {
    expect(resolveRequestIdentity({ claims, sessionHeader: '' }).session).toBe('from-token');
    expect(resolveRequestIdentity({ claims, sessionHeader: '   ' }).session).toBe('from-token');
  });

  it('rule 3: neither header nor session claim gives 401 identity_required', () => {
    expect(errorOf(() => resolveRequestIdentity({ claims: sessionless, sessionHeader: undefined }))).toMatchObject({
      code: 'identity_required',
      status: 401,
    });
  });

  it('rule 3: an empty header and no session claim give 401 identity_required', () => {
    expect(errorOf(() => resolveRequestIdentity({ claims: sessionless, sessionHeader: '' }))).toMatchObject({
      code: 'identity_required',
    });
  });

  it('a request without a bearer token gives 401 identity_required', () => {
    expect(errorOf(() => resolveRequestIdentity({ claims: undefined, sessionHeader: 's' }))).toMatchObject({
      code: 'identity_required',
      status: 401,
    });
  });

  it('rule 4: the header sets only the session; tenant and user stay token-verified', () => {
    const resolved = resolveRequestIdentity({ claims, sessionHeader: 'tenant=evil;user=mallory' });
    expect(resolved).toMatchObject({ tenant: 'acme', user: 'alice', session: 'tenant=evil;user=mallory' });
  });

  it('rule 5: many sessions coexist under one token as distinct triples', () => {
    const triples = ['s-a', 's-b', 's-c'].map((sessionHeader) => resolveRequestIdentity({ claims, sessionHeader }));
    expect(triples.map((t) => [t.tenant, t.user, t.session])).toEqual([
      ['acme', 'alice', 's-a'],
      ['acme', 'alice', 's-b'],
      ['acme', 'alice', 's-c'],
    ]);
  });

  it('carries the token scopes unchanged', () => {
    expect(resolveRequestIdentity({ claims, sessionHeader: undefined }).scopes).toEqual(['console:fleet']);
  });
});
