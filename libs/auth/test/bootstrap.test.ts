import { describe, expect, it } from 'vitest';
import { isLoopbackRequest, parseBootstrapBody } from '../src/index.ts';

function errorOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error('expected a throw');
}

const DEFAULT = { tenant: 'dev', user: 'dev', session: 'dev', scopes: ['admin', 'console:fleet'] };

describe('parseBootstrapBody', () => {
  it('keeps the default admin identity for an empty object', () => {
    expect(parseBootstrapBody({})).toEqual(DEFAULT);
  });

  it('keeps the default admin identity for an absent body', () => {
    expect(parseBootstrapBody(undefined)).toEqual(DEFAULT);
  });

  it('overrides the identity with a full triple and keeps the default scopes', () => {
    expect(parseBootstrapBody({ tenant: 't', user: 'u', session: 's' })).toEqual({
      tenant: 't',
      user: 'u',
      session: 's',
      scopes: ['admin', 'console:fleet'],
    });
  });

  it('overrides only the members a partial triple gives', () => {
    expect(parseBootstrapBody({ user: 'u' })).toEqual({ ...DEFAULT, user: 'u' });
  });

  it('mints a scopeless identity for an explicit empty scopes array', () => {
    expect(parseBootstrapBody({ scopes: [] }).scopes).toEqual([]);
  });

  it('uses the given scopes', () => {
    expect(parseBootstrapBody({ scopes: ['console:fleet'] }).scopes).toEqual(['console:fleet']);
  });

  it.each(['tenant_id', 'user_id', 'session_id', 'run', 'admin'])(
    'refuses the member %s with 400 naming it',
    (member) => {
      const error = errorOf(() => parseBootstrapBody({ tenant: 't', [member]: 'x' }));
      expect(error).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(error.message).toContain(member);
    },
  );

  it.each([
    ['null', null],
    ['an array', []],
    ['a string', 'tenant'],
    ['a number', 7],
  ])('refuses %s as the body with 400 invalid_request', (_name, body) => {
    expect(errorOf(() => parseBootstrapBody(body)).code).toBe('invalid_request');
  });

  it.each([
    ['an empty tenant', { tenant: '' }, 'tenant'],
    ['a numeric user', { user: 1 }, 'user'],
    ['a null session', { session: null }, 'session'],
    ['a string scopes', { scopes: 'admin' }, 'scopes'],
    ['scopes holding a non-string', { scopes: ['admin', 2] }, 'scopes'],
  ])('refuses %s with 400 naming the member', (_name, body, member) => {
    const error = errorOf(() => parseBootstrapBody(body));
    expect(error.code).toBe('invalid_request');
    expect(error.message).toContain(member);
  });
});

describe('isLoopbackRequest', () => {
  it.each(['127.0.0.1', '127.10.20.30', '127.255.255.254', '::1', '::ffff:127.0.0.1', '::ffff:127.1.2.3'])(
    'accepts the loopback peer %s',
    (remoteAddress) => {
      expect(isLoopbackRequest({ remoteAddress, host: 'localhost:8080' })).toBe(true);
    },
  );

  it.each([
    '10.0.0.1',
    '192.168.1.20',
    '128.0.0.1',
    '0.0.0.0',
    '::',
    'fe80::1',
    '::ffff:10.0.0.1',
    '',
    'localhost',
    undefined,
  ])('refuses the peer %s', (remoteAddress) => {
    expect(isLoopbackRequest({ remoteAddress, host: 'localhost' })).toBe(false);
  });

  it.each([
    'localhost',
    'localhost:8080',
    'LOCALHOST:1',
    'LocalHost',
    '127.0.0.1',
    '127.0.0.1:3000',
    '[::1]',
    '[::1]:8080',
  ])('accepts the Host %s', (host) => {
    expect(isLoopbackRequest({ remoteAddress: '127.0.0.1', host })).toBe(true);
  });

  it.each([
    'example.com',
    'localhost.example.com',
    'evil.localhost',
    'localhost.',
    'localhost:',
    'localhost:99999',
    'localhost:80a',
    '127.0.0.2',
    '0.0.0.0:8080',
    '::1',
    '[::2]',
    '',
    ' localhost',
    undefined,
  ])('refuses the Host %j', (host) => {
    expect(isLoopbackRequest({ remoteAddress: '127.0.0.1', host })).toBe(false);
  });

  it('refuses a loopback Host from a remote peer', () => {
    expect(isLoopbackRequest({ remoteAddress: '203.0.113.9', host: '127.0.0.1:8080' })).toBe(false);
  });
});
